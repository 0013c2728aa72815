# Regression (issue 21): class8 discard key returned; tensordict 0.1.2's naming and order.
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
        v1 = F.silu(x)
        v2 = torch.mul(v1, x)
        return v2

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x):
        v1 = self.conv1(x.transpose(1, 2)).transpose(1, 2)
        return v1

WRAP = 'seq'
KEYS = [{"in": [["x"]], "out": [["_"]]}, {"in": [["x"]], "out": [["y"]]}]
NESTED = False
