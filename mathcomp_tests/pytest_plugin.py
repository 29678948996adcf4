"""The module pytest loads from the `pytest11` entry point: it decides, from the command line and before
any conftest loads, whether the session selects the suite, and only then registers the plugin
(mathcomp_tests.plugin) with its options.

A project that installs the suite but does not run it gets nothing else: no options (its own conftest
may well define --model or --device), no settings read, no tests, no files, and no import beyond this
module and suite_selection.
"""

from __future__ import annotations

import pytest

from .suite_selection import collection_args, selects_suite

PLUGIN = "mathcomp_tests.plugin"


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    if not selects_suite(collection_args(early_config), early_config.invocation_params.dir):
        return
    from . import plugin

    manager = early_config.pluginmanager
    if manager.get_plugin(PLUGIN) is None and not manager.is_registered(plugin):
        manager.register(plugin, PLUGIN)
