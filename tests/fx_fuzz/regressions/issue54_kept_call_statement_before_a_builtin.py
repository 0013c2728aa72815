# Regression (issue 54, fuzz seed 151638): a WaveNet-like stack's last update, h = h + layer(o),
# keeps its call and loses its add in TorchScript; FX records the add where the statement stands.
# The next statement, v3 = 2 * x, runs TorchScript's builtin mul(int, Tensor), whose node carries
# the builtin's range: tdfx recorded the add after it. Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn


class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(8, 8)
        self.blocks2 = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
        self.gru4 = nn.GRU(8, 8, batch_first=True)

    def _block1(self, t):
        h = self.lin1(t)
        return h * torch.sigmoid(h)

    def forward(self, x):
        v1 = self._block1(x)
        hv2 = v1
        ov2 = v1 * 0.5
        for layer in self.blocks2:
            ov2 = ov2 + torch.tanh(hv2)
            hv2 = hv2 + layer(ov2)
        v2 = ov2
        v3 = 2 * x
        v4 = self.gru4(v2)[0]
        v5 = v4.reshape(-1, v4.shape[-1]).reshape(v4.size(0), v4.size(1), v4.size(2))
        return v5 + v3

WRAP = 'td'
KEYS = [{"in": [["hidden"]], "out": [["out", "k0_0"]]}]
NESTED = False
