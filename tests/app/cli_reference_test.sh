#!/usr/bin/env bash
# The CLI reference (docs/) and the man pages are checked against the programs' own --help:
# every option a program accepts is documented in both.
# Usage: cli_reference_test.sh SOURCE_DIR TDFX_CLI TDFX_GUI TDFX_EXPORT
set -euo pipefail
src=$1 cli=$2 gui=$3 export=$4
status=0
check() {  # check PROGRAM-LABEL HELP-TEXT DOC-FILE MAN-PAGE
  local label=$1 help=$2 doc=$3 man=$4
  # An empty help means the program failed (a command substitution's status is lost in an argument).
  grep -q -- "--help" <<<"$help" || { echo "FAIL: $label --help printed no usage"; status=1; return; }
  for opt in $(grep -oE -- '--[a-z][a-z-]*' <<<"$help" | sort -u); do
    [ "$opt" = "--help-all" ] && continue  # Qt's, documented as such in the man page only
    grep -qF -- "$opt" "$doc" || { echo "FAIL: $label $opt is not in ${doc#$src/}"; status=1; }
    grep -qF -- "${opt//-/\\-}" "$man" || { echo "FAIL: $label $opt is not in ${man#$src/}"; status=1; }
  done
}
check "tdfx-cli" "$("$cli" --help)" "$src/docs/cli.md" "$src/resources/man/tdfx-cli.1"
for sub in trace verify export diff serve; do
  check "tdfx-cli $sub" "$("$cli" "$sub" --help)" "$src/docs/cli.md" "$src/resources/man/tdfx-cli.1"
  grep -qF "tdfx-cli $sub" "$src/docs/cli.md" || { echo "FAIL: docs/cli.md lacks the $sub command"; status=1; }
done
check "tdfx" "$("$gui" --help)" "$src/docs/gui.md" "$src/resources/man/tdfx.1"
check "tdfx-export" "$(/usr/bin/python3 "$export" --help)" "$src/docs/model-format.md" "$src/resources/man/tdfx-export.1"
[ $status = 0 ] && echo "every option of tdfx-cli, tdfx and tdfx-export is in docs/ and the man pages"
exit $status
