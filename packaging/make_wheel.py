#!/usr/bin/env python3
"""Builds the wheel of tdfx's Python modules (pure Python, no build backend needed), so that a
virtual environment without system site packages can use them offline:

    pip install --no-deps /usr/share/tdfx/python/tdfx-VERSION-py3-none-any.whl

Usage: make_wheel.py OUT_DIR VERSION MODULE.py...
The modules go at the top level (`import tdfx`, `import tdfx_export`), with the dist-info PEP 427
asks for. Every entry is dated 1980-01-01, so the same sources give the same bytes.
"""
import base64
import hashlib
import os
import sys
import zipfile


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main() -> None:
    out_dir, version, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    info = f"tdfx-{version}.dist-info"
    files = []
    for path in modules:
        with open(path, "rb") as f:
            files.append((os.path.basename(path), f.read()))
    files.append((f"{info}/METADATA", (
        "Metadata-Version: 2.1\n"
        "Name: tdfx\n"
        f"Version: {version}\n"
        "Summary: Trace TensorDict modules into FX graphs with tdfx-cli: draw, trace, verify, diff, show\n"
        "Requires-Python: >=3.9\n"
        "Description-Content-Type: text/plain\n\n"
        "import tdfx calls the installed tdfx-cli (and tdfx for show); saving a module needs torch.\n"
        "See docs/python.md.\n").encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: tdfx make_wheel.py\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n"))
    record = "".join(f"{name},{digest(data)},{len(data)}\n" for name, data in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    target = os.path.join(out_dir, f"tdfx-{version}-py3-none-any.whl")
    tmp = target + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    os.replace(tmp, target)


if __name__ == "__main__":
    main()
