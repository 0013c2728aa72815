#!/usr/bin/env bash
# Installs what is missing, builds tdfx, and runs it on the bundled seed example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target tdfx_cli tdfx_models
build/app/tdfx-cli trace build/resources/examples/seed_sequential.pt
