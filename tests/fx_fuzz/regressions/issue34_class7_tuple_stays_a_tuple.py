# Regression (issue 34, class 7): a tuple stays a tuple: torch.cat(y, dim=-1) with y a Tuple[Tensor, Tensor]
# parameter records torch.cat((add, mul), dim = -1); TorchScript unpacks the tuple into a new list
# (timm's DPN blocks).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def _join(self, y: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return torch.cat(y, dim=-1)[..., :8]

    def forward(self, x):
        return self._join((x + 1, x * 2)) + torch.cat([x, x], dim=1)[:, :4]

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
