"""A test module with no test in it: run_unittest.py must fail on it (support.run_unittest_self_check)."""
import unittest  # noqa: F401
