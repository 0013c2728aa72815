# Regression (issue 34, class 13; review of stop 41): a dict returned by a submodule, then written by key in
# the caller (d['k'] = d['k'] + 1) and read again: the read sees the new value (it read the old
# node before, and torch.ops.aten._set_item was recorded).
# Run by fuzz.py --regressions.
import math
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class Backbone(nn.Module):
    def forward(self, x) -> Dict[str, torch.Tensor]:
        out = OrderedDict()
        out["k"] = x * 2
        return out

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
    def forward(self, x):
        d = self.backbone(x)
        d["k"] = d["k"] + 1
        d["j"] = x.relu()
        return d["k"] * d["j"]

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
