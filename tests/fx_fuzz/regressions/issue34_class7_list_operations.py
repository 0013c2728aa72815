# Regression (issue 34, class 7): [x] + [a, b], [a, b] + [], outs[::-1] and insert are Python
# list operations FX evaluates; only the list that reaches torch.cat is recorded.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        a = x + 1
        b = x * 2
        children: List[torch.Tensor] = []
        outs = [x] + [a, b]
        more = [a, b] + children
        rev = outs[::-1]
        rev.insert(0, b)
        return torch.cat(rev + more, dim=0)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
