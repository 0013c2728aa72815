# Regression (issue 34, class 10): a buffer is a plain tensor to FX (a parameter is a Proxy):
# self.b * x is b.mul(x), self.b != x b.ne(x), x - self.b operator.sub, and each use reads the buffer
# anew (b, b_1, ...).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.ones(8))
        self.w = nn.Parameter(torch.ones(8))
    def forward(self, x):
        return self.b * x, self.w * x, self.b != x, self.b + x, x - self.b

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
