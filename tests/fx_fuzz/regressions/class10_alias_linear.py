# Regression (issue 21): a one-statement program of the fuzz grammar's `functional` idiom, which tdfx printed
# differently from torch.fx before this change. Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        v1 = fn.linear(x, self.w1)
        return v1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
