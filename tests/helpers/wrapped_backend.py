"""A pytest plugin (``-p helpers.wrapped_backend``) that puts one more layer around the run's model once the
MathComp plugin made it: the real ask-ahead wrapper (backends/ahead.py). Whatever wraps the model, the batch
phase must still send every prompt by batch before the first case."""

from __future__ import annotations

import pytest

from mathcomp_tests.backends.ahead import AskedAhead


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.pluginmanager.get_plugin("mathcomp-state")
    if state is None or config.option.collectonly:
        return
    run = state.run
    run._backend = AskedAhead(run.backend)  # the one place a test reaches into the run: to add the layer
    print("mathcomp: the model's backend wrapped by helpers.wrapped_backend")
