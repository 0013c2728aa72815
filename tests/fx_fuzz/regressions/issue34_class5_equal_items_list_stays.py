# Regression (issue 34, class 5; review of stop 41): a list passed by name for a List[int] parameter that is no
# BroadcastingList stays the list: shape = [8, 8]; F.layer_norm(y, shape) once printed
# F.layer_norm(y, 8) (other values).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        shape = [8, 8]
        y = x.reshape(-1, 8, 8)
        return F.layer_norm(y, shape)

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
