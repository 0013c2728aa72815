# Regression (issue 21): a one-statement program of the fuzz grammar's `bracketed_method` idiom, which tdfx printed
# differently from torch.fx before this change. Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F

class P0(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        v1 = (x * x).reshape(x.size(0), -1).reshape(x.shape)
        return v1

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False


def build(td):
    """The object to trace: a plain module, or td.Module / td.Sequential of the programs."""
    torch.manual_seed(0)
    programs = [globals()[f"P{i}"]().eval() for i in range(len(KEYS))]
    if WRAP == "plain":
        return programs[0]
    mods = [td.Module(p, [tuple(k) for k in s["in"]], [tuple(k) for k in s["out"]]) for p, s in zip(programs, KEYS)]
    if WRAP == "td":
        return mods[0]
    if NESTED and len(mods) == 3:
        return td.Sequential(mods[0], td.Sequential(mods[1], mods[2]))
    return td.Sequential(*mods)
