"""Writes a copy of a model archive in which one record is replaced by SIZE_MIB MiB of spaces,
deflated: a small file that declares a huge record (what a hostile archive does).

usage: make_zip_bomb.py SOURCE OUT RECORD_SUFFIX SIZE_MIB
"""
import sys
import zipfile


def main(source, out, suffix, size_mib):
    chunk = b" " * (1 << 20)
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename.endswith(suffix):
                bomb = zipfile.ZipInfo(info.filename)
                bomb.compress_type = zipfile.ZIP_DEFLATED
                with dst.open(bomb, "w", force_zip64=True) as f:
                    for _ in range(int(size_mib)):
                        f.write(chunk)
            else:
                dst.writestr(info, src.read(info.filename))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
