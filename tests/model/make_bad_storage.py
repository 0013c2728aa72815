#!/usr/bin/env python3
"""Writes archives whose first tensor lies about where it is in its storage (issue 22, finding 3):
the tensor rebuild call in data.pkl gets another storage offset, sizes and strides, re-encoded
with pickle's LONG1 so any 64-bit value fits. Every other record is copied unchanged.

    /usr/bin/python3 make_bad_storage.py SOURCE.pt OUT_DIR

Writes, in OUT_DIR:
  negative_offset.pt   storage offset -100000: the first element lies 400 KB before the buffer
  wrapping_stride.pt   strides whose furthest element overflows int64 and wraps below zero
  wrapping_extent.pt   an offset and a stride whose sum overflows int64 and wraps below zero
"""
import os
import pickletools
import struct
import sys
import zipfile


def long1(value):
    """pickle's LONG1 opcode for a signed 64-bit integer."""
    return b"\x8a\x08" + struct.pack("<q", value)


def patch_first_tensor(data, offset, sizes, strides):
    """data.pkl with the first _rebuild_tensor_v2 call's offset, sizes and strides replaced."""
    ops = list(pickletools.genops(data))
    start = next(i for i, (op, arg, _) in enumerate(ops) if op.name == "GLOBAL" and arg == "torch._utils _rebuild_tensor_v2")
    persid = next(i for i in range(start, len(ops)) if ops[i][0].name == "BINPERSID")
    i = persid + 1
    while ops[i][0].name in ("BINPUT", "LONG_BINPUT"):
        i += 1
    offset_op = i  # the storage offset, then (sizes...), then (strides...)
    size_mark = offset_op + 1
    size_end = next(j for j in range(size_mark, len(ops)) if ops[j][0].name == "TUPLE")
    stride_mark = size_end + 1
    while ops[stride_mark][0].name in ("BINPUT", "LONG_BINPUT"):
        stride_mark += 1
    stride_end = next(j for j in range(stride_mark, len(ops)) if ops[j][0].name == "TUPLE")

    def pos(k):
        return ops[k][2] if k < len(ops) else len(data)

    pieces = [data[:pos(offset_op)], long1(offset), b"(", b"".join(long1(s) for s in sizes), b"t",
              data[pos(size_end + 1):pos(stride_mark)], b"(", b"".join(long1(s) for s in strides), b"t",
              data[pos(stride_end + 1):]]
    return b"".join(pieces)


def rewrite(source, target, offset, sizes, strides):
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                data = patch_first_tensor(data, offset, sizes, strides)
            zout.writestr(info.filename, data)


CASES = {
    "negative_offset": (-100000, None, None),
    "wrapping_stride": (0, [3, 2], [2 ** 62 + 2 ** 40, 1]),
    "wrapping_extent": (2 ** 62, [2, 3], [2 ** 62 + 2 ** 40, 1]),
}


def main():
    source, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    with zipfile.ZipFile(source) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    # The first tensor's own sizes and strides, for the case that keeps them.
    ops = list(pickletools.genops(data))
    start = next(i for i, (op, arg, _) in enumerate(ops) if op.name == "GLOBAL" and arg == "torch._utils _rebuild_tensor_v2")
    ints, i = [], start
    marks = 0
    while marks < 4 and i < len(ops):  # (storage tuple) offset (sizes) (strides)
        name = ops[i][0].name
        if name == "TUPLE":
            marks += 1
            ints.append("|")
        elif name in ("BININT1", "BININT2", "BININT", "LONG1") and marks >= 1:
            ints.append(ops[i][1])
        i += 1
    groups, current = [], []
    for v in ints[1:]:
        if v == "|":
            groups.append(current)
            current = []
        else:
            current.append(v)
    sizes, strides = groups[0][1:], groups[1]
    for name, (offset, s, st) in CASES.items():
        rewrite(source, os.path.join(out_dir, name + ".pt"), offset, s or sizes, st or strides)


if __name__ == "__main__":
    main()
