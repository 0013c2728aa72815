# Regression (issue 21): class5 sequential shared names; tensordict 0.1.2's naming and order.
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
        self.w1 = nn.Parameter(torch.randn(8))
        self.register_buffer('b1', torch.randn(8))
        self.x = nn.Parameter(torch.randn(8))

    def forward(self, x):
        v1 = x * self.w1 + self.b1
        v2 = v1 * self.x
        return v2

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(8))
        self.register_buffer('b1', torch.randn(8))
        self.x = nn.Parameter(torch.randn(8))

    def forward(self, x):
        v1 = x * self.w1 + self.b1
        v2 = v1 * self.x
        return v2

WRAP = 'seq'
KEYS = [{"in": [["input", "x"]], "out": [["hidden"]]}, {"in": [["hidden"]], "out": [["out", "y"]]}]
NESTED = False
