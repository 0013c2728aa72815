#!/usr/bin/env bash
# Installs what is missing, builds tdfx with its tests, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTDFX_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest -j"$(nproc)" --output-on-failure
