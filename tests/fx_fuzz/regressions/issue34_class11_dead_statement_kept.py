# Regression (issue 34, class 11): a statement TorchScript removed as dead code (timm's Res2Net:
# `sp = spx[0]  # redundant, for torchscript`, then `sp = spx[0]` again). FX records every
# operation on a Proxy, used or not: a getitem with 0 users, then a second one. Indexing a Python
# list (`w = ws[0]`, dead too) records nothing.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        spx = torch.split(x, 1, 1)
        ws = [x, x + 1]
        sp = spx[0]  # redundant
        w = ws[0]
        sp = spx[0]
        sp = sp.relu()
        w = ws[1]
        return sp + w

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
