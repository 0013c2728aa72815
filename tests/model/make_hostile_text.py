#!/usr/bin/env python3
"""Writes archives whose tensordict.json carries hostile text into error messages (issue 22,
findings 2 and 4), from a TensorDict archive (the seed sequential): the first module's path is
replaced, every other record is copied unchanged.

    /usr/bin/python3 make_hostile_text.py SOURCE.pt OUT_DIR

Writes, in OUT_DIR:
  markup_error.pt  a module path of HTML (a red heading, a link) and ANSI escapes (red, clear screen)
  long_error.pt    a module path of 15 MB (under the 16 MiB bound of tensordict.json), ending in é
"""
import json
import os
import sys
import zipfile

MARKUP = "<h1 style=color:red>owned</h1><a href=https://example.com>click</a>\x1b[31mred\x1b[0m\x1b[2J"


def rewrite(source, target, path):
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/extra/tensordict.json"):
                meta = json.loads(data)
                meta["module"]["modules"][0]["path"] = path
                data = json.dumps(meta, ensure_ascii=False).encode()
            zout.writestr(info.filename, data)


def main():
    source, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    rewrite(source, os.path.join(out_dir, "markup_error.pt"), MARKUP)
    # é is two bytes in UTF-8: a cut at a byte count must not split it.
    rewrite(source, os.path.join(out_dir, "long_error.pt"), "é" * (15 << 19))


if __name__ == "__main__":
    main()
