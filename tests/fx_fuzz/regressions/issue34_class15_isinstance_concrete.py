# Regression (issue 34, class 15): torch.jit.isinstance on concrete values (a constant, a bool
# attribute) is evaluated; tdfx refused prim::isinstance.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

def pick(v: Union[str, bool]) -> int:
    if torch.jit.isinstance(v, str):
        return 1
    return 2

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.flag = True
    def forward(self, x):
        return x * pick(self.flag) + pick("a")

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
