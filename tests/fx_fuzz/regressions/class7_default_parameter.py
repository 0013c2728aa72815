# Regression (issue 21): class7 default parameter; tensordict 0.1.2's naming and order.
# Written by make_regressions.py; run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F

class P0(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale: float = 2.0):
        v1 = x * scale
        return v1

WRAP = 'td'
KEYS = [{"in": [["input", "x"]], "out": [["out"]]}]
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
