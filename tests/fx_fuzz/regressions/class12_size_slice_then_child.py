# Regression (issue 21): `n = x.size(1); x[:, :n]` in a first child, then a second.
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

    def forward(self, x):
        n1 = x.size(1)
        v1 = x[:, :n1]
        return v1

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self.g1 = nn.Linear(8, 8)
        self.l1 = nn.Linear(8, 8)

    def forward(self, x):
        v1 = x + torch.sigmoid(self.g1(x)) * self.l1(x)
        return v1

WRAP = 'seq'
KEYS = [{"in": [["x"]], "out": [["h"]]}, {"in": [["h"]], "out": [["y"]]}]
NESTED = False
