# Regression (issue 34, class 2): an f-string with a traced value as torch._assert's message. FX
# formats the Proxy into the text while tracing ('... (got Proxy(getattr_2)D input)') and keeps the
# getattr node with no user; tdfx recorded torch.ops.aten.format and lost the message.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        torch._assert(x.ndim == 3, f"expected 3D input (got {x.ndim}D input)")
        return x + 1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
