# Regression (issue 21): dynamically quantized Linear and GRU leaves, call_module as in FX.
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
        self.linear1 = nn.Linear(8, 8)
        self.gru2 = nn.GRU(8, 8, batch_first=True)

    def forward(self, x):
        v1 = self.linear1(x)
        v2 = self.gru2(v1)[0]
        return v2

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
QUANTIZE = True
