# Regression (issue 54, fuzz seed 153233, shrunk): the unread tuple item dv2 was recorded after
# v3 = 2 * x, whose node carries TorchScript's builtin mul(int, Tensor) range; it is placed at the
# statement assigning v3.
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

    def forward(self, x):
        (x + x)
        -x.abs()
        v2, dv2 = x * 2, x.sum(dim=(0, 1))
        v3 = 2 * x
        return v3 + v2

WRAP = 'td'
KEYS = [{"in": [["hidden"]], "out": [["out", "k0_0"]]}]
NESTED = False
