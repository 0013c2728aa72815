# Regression (issue 21): a one-statement program of the fuzz grammar's `list_loop` idiom, which tdfx printed
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
        self.blocks1 = nn.ModuleList([nn.Linear(8, 8) for _ in range(1)])

    def forward(self, x):
        outsv1 = []
        for layer in self.blocks1:
            outsv1.append(layer(x))
        v1 = torch.stack(outsv1, 0).sum(0)
        return v1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
