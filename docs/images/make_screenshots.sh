#!/usr/bin/env bash
# Remakes the screenshots in docs/images: the real tdfx window under Xvfb, captured with
# ImageMagick. Needs xvfb and imagemagick (TDFX_WITH_GUI_TOOLS=1 packaging/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
Xvfb :97 -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb $app 2>/dev/null || true' EXIT
sleep 1
DISPLAY=:97 build/app/tdfx build/tests/fixtures/seed_sequential.pt &
app=$!
sleep 8
DISPLAY=:97 import -window root -crop 1400x900+0+0 /tmp/tdfx-shot.png
convert /tmp/tdfx-shot.png -resize 1000x -colors 128 docs/images/tdfx-seed-sequential.png
echo "wrote docs/images/tdfx-seed-sequential.png"
