#!/usr/bin/env bash
# Runs COMMAND and passes only when it exits with the expected status (0 unless --exit N) AND its
# output (stdout and stderr together) has a line matching each REGEX (grep -E). CTest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status: a "PASSED" printed before the command
# fails would pass.
# Usage: expect_output.sh [--exit N] REGEX COMMAND [ARG]...
#        expect_output.sh [--exit N] -e REGEX [-e REGEX]... COMMAND [ARG]...
set -uo pipefail
want=0 regexes=()
while [ $# -gt 0 ]; do
  case $1 in
    --exit) want=$2; shift 2 ;;
    -e) regexes+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
if [ ${#regexes[@]} -eq 0 ] && [ $# -gt 0 ]; then regexes=("$1"); shift; fi
if [ $# -lt 1 ] || [ ${#regexes[@]} -eq 0 ]; then
  echo "usage: expect_output.sh [--exit N] REGEX COMMAND [ARG]... | [--exit N] -e REGEX [-e REGEX]... COMMAND [ARG]..." >&2
  exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne "$want" ]; then
  why="exit status $rc"
  [ "$rc" -gt 128 ] && why+=" (killed by signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null || echo '?'))"
  echo "FAIL: $1 ended with $why, expected $want"
  exit 1
fi
missing=0
for regex in "${regexes[@]}"; do
  if ! grep -Eq -- "$regex" "$out"; then
    echo "FAIL: no line of the output of $1 matches: $regex"
    missing=1
  fi
done
exit "$missing"
