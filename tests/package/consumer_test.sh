#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds tests/package/consumer against it with
# find_package(tdfx CONFIG), runs it on the seed example, and runs the installed tdfx-cli.
# Usage: consumer_test.sh BUILD_DIR WORK_DIR EXPECTED_GRAPH_FILE
set -euo pipefail
# grep that reads all its input: `cmd | grep -q` stops reading at the first match, and under
# pipefail the writer's SIGPIPE then fails the pipeline (seen with ldd).
has() { grep "$@" >/dev/null; }
build=$1 work=$2 expected=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null

# Public headers only under include/tdfx.
extra=$(find "$prefix/include" -mindepth 1 -maxdepth 1 ! -name tdfx)
[ -z "$extra" ] || { echo "FAIL: installed headers outside include/tdfx: $extra"; exit 1; }
[ -f "$prefix/include/tdfx/runtime/graph_module.h" ] || { echo "FAIL: public headers not installed"; exit 1; }
if grep -rl '#include "layout/\|#include "trace/\|#include "[a-z_]*\.h"' "$prefix/include/tdfx" >/dev/null; then
  echo "FAIL: an installed header includes a private header"; exit 1
fi

cmake -S "$here/consumer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

example=$prefix/share/tdfx/examples/seed_sequential.pt
out=$("$work/build/consumer" "$example")
echo "$out"
graph=$(printf '%s\n' "$out" | sed -n '/^graph():/,/^$/p' | sed '$d')
expected_graph=$(sed -n '/^graph():/,/^$/p' "$expected" | sed '$d')
[ "$graph" = "$expected_graph" ] || { echo "FAIL: consumer's graph differs from $expected"; exit 1; }
printf '%s\n' "$out" | has "PASSED: traced outputs match eager outputs" || { echo "FAIL: no PASSED"; exit 1; }

# The installed CLI runs from the install tree (RPATH $ORIGIN/../lib/...), not from the build tree.
env -u LD_LIBRARY_PATH "$prefix/bin/tdfx-cli" trace "$example" >"$work/cli.txt"
diff -u "$expected" "$work/cli.txt"
if ldd "$prefix/bin/tdfx-cli" | has "$build/core/"; then echo "FAIL: installed tdfx-cli loads from the build tree"; exit 1; fi
echo "consumer and installed tdfx-cli: OK"
