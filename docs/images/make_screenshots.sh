#!/usr/bin/env bash
# Remakes the user guide's screenshots in docs/images from the real main window, driven by
# build/tests/tdfx_doc_screenshots (offscreen) into the states docs/gui.md describes, then
# shrunk with ImageMagick. Run after building; needs the zoo (tests/zoo/make_zoo.py) for resnet18.
set -euo pipefail
cd "$(dirname "$0")/../.."
zoo=${TDFX_ZOO_DIR:-$HOME/.cache/tdfx/zoo-torch1.13-torchvision0.14}
cmake --build build --target tdfx_doc_screenshots >/dev/null
/usr/bin/python3 tests/app/make_diff_models.py "$zoo/diff"  # the compare shot's models (cached)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/tests/tdfx_doc_screenshots "$tmp" build/tests/fixtures "$zoo"
for shot in "$tmp"/*.png; do
  convert "$shot" -resize 1100x -colors 160 "docs/images/$(basename "$shot")"
  echo "wrote docs/images/$(basename "$shot")"
done
