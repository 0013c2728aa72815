# Regression (issue 34, class 9): torch.split is torch.functional.split(x, 2, dim = 1) as FX
# records a handle_torch_function call, not the Tensor method.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        spx = torch.split(x, 2, 1)
        spy = torch.split(x, [1, 3], dim=1)
        return spx[0], spx[1], spy[1]

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
