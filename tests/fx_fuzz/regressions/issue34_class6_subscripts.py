# Regression (issue 34, class 6): z[:, li, lj] is one getitem with (slice(None, None, None), 1, 2);
# a plain tensor attribute indexed by a traced tensor is table.__getitem__((idx,)) as FX records it.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.arange(64.0)
    def forward(self, x):
        z = x.reshape(2, 4, 8)
        li = 1
        lj = 2
        idx = x.abs().long().flatten()
        return z[:, li, lj], self.table[idx]

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
