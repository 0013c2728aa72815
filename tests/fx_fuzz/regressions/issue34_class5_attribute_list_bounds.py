# Regression (issue 34, class 5): -self.chomps[i] as a slice bound, i from range().
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
        self.chomps = [1, 2]
    def forward(self, x):
        outs = []
        for i in range(2):
            outs.append(x[:, : -self.chomps[i]].sum())
        return torch.stack(outs)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
