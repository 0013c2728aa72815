# Regression (issue 21): class7 default parameter; tensordict 0.1.2's naming and order.
# Written by make_regressions.py; run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale: float = 2.0):
        v1 = x * scale
        return v1

WRAP = 'td'
KEYS = [{"in": [["input", "x"]], "out": [["out"]]}]
NESTED = False
