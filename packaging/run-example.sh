#!/usr/bin/env bash
# Installs what is missing, builds tdfx, and runs it on the bundled seed example: the desktop
# application when a display is available, otherwise tdfx-cli's trace of the same file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
source packaging/ccache-env.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $TDFX_CCACHE_ARGS >/dev/null
cmake --build build -j"$(nproc)" --target tdfx_installed  # the app, the CLI, the examples, and all `cpack` packages
example=build/resources/examples/seed_sequential.pt
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec build/app/tdfx "$example"
fi
echo "(no display: printing the traced graph and code; run build/app/tdfx $example on a desktop)" >&2
build/app/tdfx-cli trace "$example"
