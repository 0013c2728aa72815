# Regression (issue 54, fuzz seed 155692, shrunk): the forward's argument x shares its name with a
# parameter self.x, whose read TorchScript names x; the WaveNet update hv3 = hv3 + layer(ov3), dead
# after the loop, read hv3 = x as the parameter (FX: the argument).
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
        self.x = nn.Parameter(torch.randn(8))
        self.blocks3 = nn.ModuleList([nn.Linear(8, 8) for _ in range(1)])

    def forward(self, x):
        v1 = x * self.x
        hv3 = x
        ov3 = x * 0.5
        for layer in self.blocks3:
            ov3 = ov3 + torch.tanh(hv3)
            hv3 = hv3 + layer(ov3)
        v3 = ov3
        return v3 + v1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out", "k0_0"]]}]
NESTED = False
