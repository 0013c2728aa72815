#!/usr/bin/env bash
# Screenshot smoke test: runs the real tdfx under Xvfb on each model, waits for its window title
# to name the file (the model loaded), takes a screenshot and checks that the graph canvas drew
# nodes: at least 3 blobs of a node's fill colour (view_graph.cpp's tdfxColor, the key colours, a
# collapsed scope's) at reading size, at least 24x20 pixels each, which neither the legend's
# 14x14 swatches nor the overview's small boxes are; a blank canvas has none. The process must
# still be alive. Screenshots stay in WORK for people to look at.
# Usage: gui_smoke_test.sh TDFX WORK MODEL...
#        gui_smoke_test.sh --count-nodes PNG   (prints the number of drawn nodes found in PNG)
set -euo pipefail

# The node fill colours of the default (tdfx) style.
node_fills=('#FFE9A8' '#CFE3F7' '#D4F0DC' '#E3E5E8' '#9CCBF0' '#F4B6AE' '#F7D9B5')
# Drawn nodes in a screenshot: the 8-connected regions of node fill colour (a node's text does not
# split its fill) of at least 24x20 pixels.
count_nodes() {
  local opaque=() c
  for c in "${node_fills[@]}"; do opaque+=(-opaque "$c"); done
  # White (the canvas) to black first, then the node fills to white, everything else to black.
  convert "$1" -fill black -opaque white -fill white "${opaque[@]}" -fill black +opaque white \
          -define connected-components:verbose=true -connected-components 8 null: |
    awk '$NF == "srgb(255,255,255)" { split($2, g, /[x+]/); if (g[1] >= 24 && g[2] >= 20) n++ } END { print n + 0 }'
}
if [ "${1:-}" = --count-nodes ]; then count_nodes "$2"; exit; fi

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
  local model=$1 name title pid shot nodes
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
  shot=$work/${name%.pt}.png
  # The title is set as the graph is shown; the canvas paints in a later turn of the event loop, so
  # a loaded machine gets up to 10 s (a blank canvas fails after them).
  for _ in $(seq 1 20); do
    sleep 0.5
    import -window root "$shot"
    nodes=$(count_nodes "$shot") || { echo "FAIL: could not read $shot"; kill "$pid"; return 1; }
    [ "$nodes" -lt 3 ] || break
  done
  kill -0 "$pid" || { echo "FAIL: tdfx died after showing $name"; return 1; }
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$name: window shown, screenshot $shot ($nodes nodes drawn on the canvas)"
  [ "$nodes" -ge 3 ] || { echo "FAIL: the graph canvas of $name is blank: $nodes nodes drawn (at least 3 expected)"; return 1; }
}
for model in "$@"; do shoot "$model"; done
echo "gui smoke: OK"
