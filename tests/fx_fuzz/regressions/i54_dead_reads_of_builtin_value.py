# Regression (issue 54, fuzz seed 161459, shrunk): dead statements reading v1 = 2 * x (a node with
# the builtin's range, so no position of its own) were dropped: the name's value stands where its
# assignment does.
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
        v1 = 2 * x
        sv2 = v1.reshape(-1).sum(0, keepdim=True)
        nv2 = -v1.mean(dim=-1)
        v2 = v1 + v1
        return v2

WRAP = 'td'
KEYS = [{"in": [["x"]], "out": [["out", "k0_0"]]}]
NESTED = False
