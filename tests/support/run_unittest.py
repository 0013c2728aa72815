#!/usr/bin/env python3
"""Runs unittest modules as `python3 -m unittest -v MODULE...` does, and fails when a module ran no test.

Python 3.11's unittest exits 0 when it ran nothing (a renamed class, an import guard that skipped
everything), so a CTest case over it would pass without testing. Here every named module must run
at least one test, and the closing line says how many ran per module.
Usage: run_unittest.py MODULE... (from the folder that holds the modules)
"""
import os
import sys
import unittest


def main(names):
    if not names:
        print("run_unittest.py: name the test modules to run", file=sys.stderr)
        return 2
    sys.path.insert(0, os.getcwd())
    loader = unittest.TestLoader()
    suites = [(name, loader.loadTestsFromName(name)) for name in names]
    result = unittest.TextTestRunner(verbosity=2).run(unittest.TestSuite(s for _, s in suites))
    counts = {name: suite.countTestCases() for name, suite in suites}
    empty = [name for name, n in counts.items() if n == 0]
    print("tests per module: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
    if loader.errors:
        print("run_unittest.py: FAIL: a module did not load", file=sys.stderr)
        return 1
    if empty or result.testsRun == 0:
        print(f"run_unittest.py: FAIL: no test ran in {', '.join(empty) or ', '.join(names)}", file=sys.stderr)
        return 1
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
