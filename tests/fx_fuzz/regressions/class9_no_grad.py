# Regression (issue 21): a one-statement program of the fuzz grammar's `no_grad` idiom, which tdfx printed
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

    def forward(self, x):
        with torch.no_grad():
            v1 = x * 2 + 1
        return v1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
