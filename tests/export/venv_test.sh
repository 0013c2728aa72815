#!/usr/bin/env bash
# The wheel in a virtual environment without system site packages, installed offline as
# docs/python.md says: `import tdfx` works there, and its calls give tdfx-cli's bytes.
# Usage: venv_test.sh WHEEL TDFX_CLI FIXTURES_DIR WORK_DIR
set -euo pipefail
wheel=$1 cli=$2 fixtures=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv "$work/env"
! "$work/env/bin/python" -c "import torch" 2>/dev/null || fail "the environment sees the system's packages (torch)"
! "$work/env/bin/python" -c "import tdfx" 2>/dev/null || fail "tdfx is importable before the wheel is installed"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/env/bin/pip" install --no-index --no-deps -q "$wheel"
cd "$work"  # not the source tree: the installed modules, not app/'s
TDFX_CLI=$cli FIXTURE=$fixtures/seed_sequential.pt CLI=$cli "$work/env/bin/python" - <<'PY'
import os
import subprocess

import tdfx

fixture, cli = os.environ["FIXTURE"], os.environ["CLI"]
assert tdfx.__file__.startswith(os.path.abspath("env")), tdfx.__file__
version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
assert tdfx.__version__ in version, (tdfx.__version__, version)
expected = subprocess.run([cli, "trace", fixture], capture_output=True).stdout.decode()
assert tdfx.trace(fixture).text == expected, "trace differs from tdfx-cli trace"
assert tdfx.verify(fixture).passed
drawing = tdfx.draw(fixture)
assert "<svg" in drawing.svg and drawing.code in expected
print(f"tdfx {tdfx.__version__} from the wheel, in a venv without torch: trace, verify and draw as tdfx-cli's")
PY
