"""Whether this session is a merged run (`mathcomp merge`): the merge hands pytest its plan as a plugin
(merge/session.py). Found by a mark on the plan's class, so that asking costs no import of the merge."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..merge.session import MergePlan


def plan_of(config: pytest.Config) -> MergePlan | None:
    """The merge's plan when this session is a merged run, else None."""
    return next((p for p in config.pluginmanager.get_plugins() if getattr(p, "MERGE_PLAN", False)), None)
