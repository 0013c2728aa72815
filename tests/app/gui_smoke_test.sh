#!/usr/bin/env bash
# Screenshot smoke test: runs the real tdfx under Xvfb on each model, waits for its window title
# to name the file (the model loaded and was drawn), takes a screenshot and checks that it shows a
# picture (many colours, the process still alive). Screenshots stay in WORK for people to look at.
# Usage: gui_smoke_test.sh TDFX WORK MODEL...
set -euo pipefail
if [ "${1:-}" != --inside-xvfb ]; then
  # Once, under a fresh virtual X server on a free display.
  rm -rf "$2" && mkdir -p "$2"
  exec xvfb-run -a -s "-screen 0 1600x1000x24" bash "$0" --inside-xvfb "$@"
fi
shift
tdfx=$1 work=$2
shift 2
export XDG_CONFIG_HOME=$work/config XDG_RUNTIME_DIR=$work/runtime  # no settings of the user's
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

shoot() {
  local model=$1 name title pid shot colours
  name=$(basename "$model")
  "$tdfx" "$model" >"$work/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 120); do
    title=$(xwininfo -root -tree 2>/dev/null | grep -o "\"$name - tdfx\"" || true)
    [ -n "$title" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log"; echo "FAIL: tdfx exited on $name"; return 1; }
    sleep 0.25
  done
  [ -n "$title" ] || { cat "$work/$name.log"; echo "FAIL: no tdfx window for $name after 30 s"; kill "$pid"; return 1; }
  sleep 1  # let the first frames paint
  shot=$work/${name%.pt}.png
  import -window root "$shot"
  kill -0 "$pid" || { echo "FAIL: tdfx died after showing $name"; return 1; }
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  colours=$(convert "$shot" -format %k info:)
  echo "$name: window shown, screenshot $shot ($colours colours)"
  [ "$colours" -ge 64 ] || { echo "FAIL: the screenshot of $name is nearly blank ($colours colours)"; return 1; }
}
for model in "$@"; do shoot "$model"; done
echo "gui smoke: OK"
