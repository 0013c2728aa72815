# Regression (issue 34, class 5): a list the user wrote for a BroadcastingList parameter stays a list
# ([b, b]); a scalar passed by keyword is the scalar (output_size = b).
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
        self.bins = [1, 2]
    def forward(self, x):
        outs = []
        for b in self.bins:
            outs.append(F.adaptive_max_pool2d(x, [b, b]).flatten(1))
            outs.append(F.adaptive_max_pool2d(x, output_size=b).flatten(1))
        return torch.cat(outs, dim=1)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
