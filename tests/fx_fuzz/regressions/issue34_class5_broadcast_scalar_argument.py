# Regression (issue 34, class 5): F.adaptive_max_pool2d(y, b) with b an int from a list attribute:
# FX records b's value, not the [b, b] TorchScript widened it to.
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
        self.bins = [1, 2]
    def forward(self, x):
        y = x.reshape(1, 2, 4, 8)
        outs = []
        for b in self.bins:
            outs.append(F.adaptive_max_pool2d(y, b).flatten(1))
        return torch.cat(outs, dim=1)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
