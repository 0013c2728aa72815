# Regression (issue 34, class 10): -self.s[:, None, None] * x, a tensor FX computes while tracing
# on the left of an operator: Tensor.__mul__ hands FX the method, _tensor_constant0.mul(x).
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
        self.s = torch.ones(2)
    def forward(self, x):
        return -self.s[:, None, None] * x

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
