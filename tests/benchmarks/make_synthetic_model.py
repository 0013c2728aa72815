"""Writes a synthetic TorchScript model of about N graph nodes (default 6,000) for the GUI
open-to-first-frame benchmark: a stack of transformer-like blocks (linear projections, matmuls,
softmax, residual adds, layer norms, gelu) with small widths so the file stays small.

    /usr/bin/python3 tests/benchmarks/make_synthetic_model.py --nodes 6000 --out synthetic_6000.pt
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

NODES_PER_BLOCK = 15  # what tdfx's trace makes of one Block, measured


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.fc2 = nn.Linear(2 * width, width)
        self.norm2 = nn.LayerNorm(width)

    def forward(self, x):
        attention = torch.softmax(torch.matmul(self.q(x), self.k(x).transpose(-2, -1)), dim=-1)
        x = self.norm1(x + self.out(torch.matmul(attention, self.v(x))))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


class Stack(nn.Module):
    def __init__(self, blocks: int, width: int):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(blocks)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=6000)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0, help="the weights' seed (two seeds: the same graph, other values)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = torch.jit.script(Stack(max(1, args.nodes // NODES_PER_BLOCK), args.width).eval())
    directory = os.path.dirname(os.path.abspath(args.out))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".pt")
    os.close(fd)
    model.save(tmp)
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
