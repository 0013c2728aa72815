# Regression (issue 34, class 5): x.relu()[:, self.t] with a buffer index and
# x.abs()[:, :, : self.w.shape[0] // 2]; tdfx printed abs_2 = abs_1.abs() for the slices when the
# subscript did not fold (wrong values).
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
        self.register_buffer("t", torch.tensor([0, 2]))
        self.w = nn.Parameter(torch.randn(8))
    def forward(self, x):
        a = x.relu()[:, self.t]
        b = x.abs()[:, :, : self.w.shape[0] // 2]
        return a, b
WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
