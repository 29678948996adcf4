"""The slow tiers of the project's own tests: the modules that run a pretrained model (SmolLM2, vLLM, a LoRA
fine-tune), a browser, or the release build. `make check` leaves them out (``-m "not tier"``), for the inner
loop; `make test`, which CI and the README run, runs everything. The model tier's modules start first, so that
the longest tests are not the tail of the run."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

TIERS: dict[str, tuple[str, ...]] = {
    "model": (
        "test_smollm2.py",
        "test_smollm2_lora.py",
        "test_smollm2_protocols.py",
        "test_smollm2_vllm.py",
        "test_vllm.py",
    ),
    "browser": ("test_report_browser.py", "test_site_browser.py", "test_site_packed_pages.py"),
    "packaging": ("test_package.py", "test_release.py"),
}
FIRST = TIERS["model"]
"""Modules scheduled before the others (their xdist groups take minutes)."""


def mark_and_order(items: list[pytest.Item]) -> None:
    """Mark each item of a tier's module ``tier(<name>)``; move the FIRST modules' items to the front,
    keeping every other order (a module's items stay together)."""
    tier_of = {module: tier for tier, modules in TIERS.items() for module in modules}
    for item in items:
        tier = tier_of.get(item.path.name)
        if tier is not None:
            item.add_marker(pytest.mark.tier(tier))
    items.sort(key=lambda item: item.path.name not in FIRST)


def modules(tier_names: Sequence[str] = tuple(TIERS)) -> list[str]:
    """Every module of the named tiers."""
    return [m for name in tier_names for m in TIERS[name]]
