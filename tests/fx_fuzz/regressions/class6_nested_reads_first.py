# Regression (issue 21): class6 nested reads first; tensordict 0.1.2's naming and order.
# Written by make_regressions.py; run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(8)

    def forward(self, x):
        v1 = self.norm1(x)
        return v1

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self.g1 = nn.Linear(8, 8)
        self.l1 = nn.Linear(8, 8)

    def forward(self, x):
        v1 = x + torch.sigmoid(self.g1(x)) * self.l1(x)
        return v1

class P2(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(8))
        self.register_buffer('b1', torch.randn(8))

    def forward(self, x):
        v1 = x * self.w1 + self.b1
        return v1

WRAP = 'seq'
KEYS = [{"in": [["a"]], "out": [["h"]]}, {"in": [["h"]], "out": [["g"]]}, {"in": [["b"]], "out": [["out"]]}]
NESTED = True
