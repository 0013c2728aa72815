# Regression (issue 21): fault2 nested rewritten key; tensordict 0.1.2's naming and order.
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
        v1 = F.dropout(x, p=0.1, training=self.training)
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
        self.gru2 = nn.GRU(8, 8, batch_first=True)

    def forward(self, x):
        v1 = F.silu(x)
        v2 = self.gru2(v1)[0]
        return v1, v2

WRAP = 'seq'
KEYS = [{"in": [["hidden"]], "out": [["out", "a"]]}, {"in": [["out", "a"]], "out": [["out", "a"]]}, {"in": [["out", "a"]], "out": [["out", "b"], ["out", "a"]]}]
NESTED = True
