"""Loads the MathComp plugin for any pytest run from this directory (the suite and the project's tests)."""

pytest_plugins = ["mathcomp_tests.plugin"]
