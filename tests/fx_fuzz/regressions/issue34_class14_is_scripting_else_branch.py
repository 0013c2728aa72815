# Regression (issue 34, class 14): a submodule whose forward is `if torch.jit.is_scripting(): ... else: return
# F.linear(input, self.weight, self.bias)` (timm's Linear). The archive holds the scripting branch
# only; FX runs the other, whose text the debug info keeps, and records torch._C._nn.linear(fc, fc_weight, fc_bias).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class ScriptingLinear(nn.Linear):
    # timm's Linear: TorchScript compiles the first branch, FX runs the second.
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_scripting():
            bias = self.bias.to(dtype=input.dtype) if self.bias is not None else None
            return F.linear(input, self.weight.to(dtype=input.dtype), bias=bias)
        else:
            return F.linear(input, self.weight, self.bias)

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ScriptingLinear(8, 8)
    def forward(self, x):
        return self.fc(x).relu()

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
