# Regression (issue 34, class 7; review of stop 41): items unpacked from a tuple and written into a list
# (l = [a, b], then l.append(x); torch.cat([c, d, x], 1)) are lists, not the tuple passed on.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def pair(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        return x + 1, x * 2
    def forward(self, x):
        a, b = self.pair(x)
        l = [a, b]
        l.append(x)
        c, d = self.pair(x)
        return torch.cat(l, 1) + torch.cat([c, d, x], 1)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
