# Regression (issue 34, class 5): subscripts after method calls with attribute bounds, -self.k,
# loop variables over an int-list attribute, and a bound computed from the shape.
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
        self.k = 1
        self.idx = [0, 2]
    def forward(self, x):
        y = x.reshape(2, 1, 4, 8)
        a = y.squeeze(1)[:, :, self.k : -self.k]
        outs = []
        for i in self.idx:
            outs.append(x.relu()[:, i])
        n = x.shape[1] // 2
        b = x.relu()[:, n:]
        c = x.abs().neg()[self.k]
        return a, outs[0], outs[1], b, c
WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
