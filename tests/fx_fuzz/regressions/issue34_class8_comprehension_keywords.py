# Regression (issue 34, class 8): keyword arguments after a list comprehension stay keywords
# (torch.stack([...], dim = 1), torch.cat([...], dim = 0)).
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
        self.fcs = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
    def forward(self, x):
        a = torch.stack([f(x) for f in self.fcs], dim=1)
        b = torch.cat([x * i for i in range(3)], dim=0)
        return a, b

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
