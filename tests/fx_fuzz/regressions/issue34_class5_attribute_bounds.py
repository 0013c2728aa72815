# Regression (issue 34, class 5): an int module attribute as a slice bound is a constant to FX:
# one getitem with slice(None, 1, None). After a method call tdfx printed relu_1 = relu.relu() for
# the slices and computed wrong values.
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
    def forward(self, x):
        return x[:, : self.k] + 1, x.relu()[:, self.k:]

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
