# Regression (issue 34, class 4): a named tuple kept in a variable and read by field name later.
# Every read `top.values` is its own Attribute proxy in FX (a getattr node made where the read is
# first used); a read bound to a name first (`v = s.values`) is one node for all its uses.
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
        top = torch.topk(x, 2, dim=-1)
        m = x.max(dim=-1)
        s = x.sort(-1)
        v = s.values
        y = top.values + top.indices.float() + top.values
        return y.sum(-1) + m.values, v * v + s.indices

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
