# Regression (issue 34, class 1): three chained method calls, whose TorchScript source ranges leave
# out each call's brackets, so the third call's range covers only the text of the second; tdfx
# printed `exp_1 = exp.exp()` for `.add(1.0)` and computed the wrong value. Run by fuzz.py --regressions.
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
        v1 = x.abs().exp().add(1.0)
        v2 = x.view(-1).exp().abs().neg()
        v3 = (x - 1).relu().to(torch.float64)
        return v1, v2, v3

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["a"], ["b"], ["c"]]}]
NESTED = False
