# Regression (issue 34, class 7): a list passed to a submodule that appends to it is the same
# Python list in the caller (the tracer copied it, and torch.cat lost the item: wrong values); the
# submodule's `if outs is None:` on a list is False, so it is traced through, not kept as a leaf
# (timm's DlaTree passes its children list on this way).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class Helper(nn.Module):
    def forward(self, x, outs: Optional[List[torch.Tensor]] = None):
        if outs is None:
            outs = []
        outs.append(x * 2)
        return x + 1

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = Helper()
    def forward(self, x):
        outs = [x]
        y = self.h(x, outs)
        outs.append(y)
        return torch.cat(outs, dim=0)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
