# Regression (issue 34, class 3): `d = x.dtype` is builtins.getattr(x, 'dtype'); TorchScript's
# prim::dtype has no source range, and tdfx printed torch.ops.prim.dtype(x).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        y = x.abs()
        d = x.dtype
        return y.to(d) + 1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
