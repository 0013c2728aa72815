#!/usr/bin/env python3
"""Writes archives whose damage LibTorch reports in its own terms (issue 22, finding 8), each from
a real fixture with one record changed, every other record copied unchanged:

    /usr/bin/python3 make_unclear_archives.py PLAIN.pt TENSORDICT.pt OUT_DIR

From PLAIN.pt (a scripted plain module):
  version_huge.pt     the `version` record is a number past 64 bits ("stoull")
  version_text.pt     the `version` record is not a number
  memo_range.pt       data.pkl reads memo entry 200 that it never defined ("vector::_M_range_check")
  persid_key.pt       a tensor's persistent id is not ("storage", ...) (an INTERNAL ASSERT)
  module_state.pt     the module's state is built with REDUCE, not NEWOBJ (an INTERNAL ASSERT)
From TENSORDICT.pt (a TensorDict archive):
  nul_in_key.pt       an in key holds a NUL and the file has no example inputs
"""
import json
import os
import sys
import zipfile


def rewrite(source, target, edit):
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info.filename)))


def only(suffix, change):
    return lambda name, data: change(data) if name.endswith(suffix) else data


def last_newtrue_to_memo_get(data):
    i = data.rindex(b"\x88")  # the module's `training = True`
    return data[:i] + b"h\xc8" + data[i + 1:]  # BINGET 200


def nul_key(data):
    meta = json.loads(data)
    meta["module"]["modules"][0]["in_keys"][0] = ["inp\0ut", "x"]
    meta["example_inputs"] = []
    return json.dumps(meta).encode()


def main():
    plain, tensordict, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    cases = {
        "version_huge": only("/version", lambda d: b"99999999999999999999999\n"),
        "version_text": only("/version", lambda d: b"abc\n"),
        "memo_range": only("/data.pkl", last_newtrue_to_memo_get),
        "persid_key": only("/data.pkl", lambda d: d.replace(b"X\x07\x00\x00\x00storage", b"X\x07\x00\x00\x00storagX", 1)),
        "module_state": only("/data.pkl", lambda d: d.replace(b"\x81}", b"R}", 1)),
    }
    for name, edit in cases.items():
        rewrite(plain, os.path.join(out, name + ".pt"), edit)
    rewrite(tensordict, os.path.join(out, "nul_in_key.pt"), only("/extra/tensordict.json", nul_key))


if __name__ == "__main__":
    main()
