# Regression (issue 34, class 13): dicts filled in forward, OrderedDict() then d[key] = v (torchvision's
# IntermediateLayerGetter and segmentation models), returned by a submodule and read by key in the
# caller, and returned; tdfx recorded torch.ops.aten.dict() and torch.ops.aten._set_item nodes.
# Run by fuzz.py --regressions.
import math
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class Backbone(nn.Module):
    # torchvision's IntermediateLayerGetter: a dict filled in forward and returned.
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
    def forward(self, x) -> Dict[str, torch.Tensor]:
        out = OrderedDict()
        out["aux"] = self.a(x)
        out["out"] = self.b(out["aux"])
        return out

class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
    def forward(self, x) -> Dict[str, torch.Tensor]:
        features = self.backbone(x)
        result = OrderedDict()
        result["out"] = features["out"].relu()
        result["aux"] = features["aux"] * 2
        return result

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
