"""The built programs and files the Python tests use, found so that a test never quietly checks less.

CTest names them in the environment (TDFX_CLI, TDFX_APP, TDFX_FIXTURES). Run by hand without them,
a test takes them from the build tree beside the sources (build/, or TDFX_BUILD_DIR), and sets the
variable so that tdfx.py and child processes use the same; found in neither place, the test run
stops at once with a message saying what is missing.
"""
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_IN_BUILD = {"TDFX_CLI": "app/tdfx-cli", "TDFX_APP": "app/tdfx", "TDFX_FIXTURES": "tests/fixtures"}


def locate(var: str) -> str:
    """The path in environment variable `var`, else its place in the build tree; exits when neither exists."""
    value = os.environ.get(var)
    if not value:
        build = os.environ.get("TDFX_BUILD_DIR") or os.path.join(ROOT, "build")
        value = os.path.join(build, _IN_BUILD[var])
        if not os.path.exists(value):
            raise SystemExit(f"{var} is not set and {value} does not exist: build tdfx first "
                             f"(see docs/building.md), or set {var} (or TDFX_BUILD_DIR)")
        os.environ[var] = value
    elif not os.path.exists(value):
        raise SystemExit(f"{var}={value}: no such file")
    return value
