# Regression (issue 21): a quantized child of a TensorDictSequential.
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
        self.g1 = nn.Linear(8, 8)
        self.l1 = nn.Linear(8, 8)

    def forward(self, x):
        v1 = x + torch.sigmoid(self.g1(x)) * self.l1(x)
        return v1

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x):
        v1 = self.conv1(x.transpose(1, 2)).transpose(1, 2)
        v2 = torch.tanh(v1)
        return v2

WRAP = 'seq'
KEYS = [{"in": [["input", "x"]], "out": [["hidden"]]}, {"in": [["hidden"]], "out": [["out"]]}]
NESTED = False
QUANTIZE = True
