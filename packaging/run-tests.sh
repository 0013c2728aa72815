#!/usr/bin/env bash
# Installs what is missing, builds tdfx with its tests, and runs every test. Every test must run:
# one that CTest reports as not run (skipped, such as package.deb without root, or disabled) fails
# this command even when no test failed, since ctest itself exits 0 then.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
source packaging/ccache-env.sh
# ccache's counters before the build: this build's hits and misses are the difference.
ccache_counts() { ccache --print-stats 2>/dev/null | awk '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit|cache_miss)$/ { c[$1] = $2 }
  END { printf "%d %d\n", c["direct_cache_hit"] + c["preprocessed_cache_hit"], c["cache_miss"] }'; }
[ -z "$TDFX_CCACHE_ARGS" ] || read -r hits0 misses0 < <(ccache_counts)
start=$SECONDS
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTDFX_BUILD_TESTS=ON $TDFX_CCACHE_ARGS >/dev/null
cmake --build build -j"$(nproc)"
echo "run-tests: built in $((SECONDS - start)) s"
if [ -n "$TDFX_CCACHE_ARGS" ]; then
  read -r hits1 misses1 < <(ccache_counts)
  echo "run-tests: ccache: $((hits1 - hits0)) hits, $((misses1 - misses0)) misses in this build (cache $CCACHE_DIR)"
fi
cd build
log=Testing/run-tests.log
mkdir -p Testing
rc=0
ctest -j"$(nproc)" --output-on-failure 2>&1 | tee "$log" || rc=$?
# A suite that registers fewer tests than tests/test_count_floor.txt pins (a discovery that found
# nothing, a generator that wrote no case) fails, though ctest passes what it did not register.
floor=$(grep -Eo '^[0-9]+' ../tests/test_count_floor.txt)
ran=$(sed -nE 's/.*tests passed, [0-9]+ tests? failed out of ([0-9]+).*/\1/p' "$log" | tail -1)
if [ -z "$ran" ] || [ "$ran" -lt "$floor" ]; then
  echo "run-tests: FAIL: ctest ran ${ran:-no} tests; tests/test_count_floor.txt expects at least $floor"
  rc=1
else
  echo "run-tests: ctest ran $ran tests (the floor is $floor)"
fi
# ctest's summary lists them under "The following tests did not run:", one indented line each
# ("  12 - package.deb (Skipped)"), up to the next line that is not indented.
not_run=$(awk '/^The following tests did not run:/ { on = 1; next } on && /^[ \t]/ { print; next } { on = 0 }' "$log")
if [ -n "$not_run" ]; then
  echo
  echo "run-tests: FAIL: $(grep -c . <<<"$not_run") test(s) did not run; every test must run here:"
  while read -r line; do
    name=$(sed -E 's/^[0-9]+ - //; s/ \([^)]*\)$//' <<<"$line")
    echo "  $line"
    # Why: the end of what it printed (ctest --output-on-failure does not show a skipped test's output).
    awk -v t="$name" '$0 ~ /^[0-9]+\/[0-9]+ Test: / && substr($0, index($0, ": ") + 2) == t { on = 1; next }
                      on && /^Output:/ { getline; out = 1; next }
                      on && out && /^<end of output>/ { exit }
                      on && out { print "      " $0 }' Testing/Temporary/LastTest.log | tail -5
  done <<<"$not_run"
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
