# Regression (issue 34, class 13): a dict built in forward and returned inside a tuple,
# return {'a': x + 1}, x (refused before).
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple, Union
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn

class P0(nn.Module):
    def forward(self, x):
        return {"a": x + 1}, x

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
