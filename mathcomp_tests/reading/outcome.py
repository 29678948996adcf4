"""What a reader decides: a label and the rule that gave it, or no label and why."""

from __future__ import annotations

from dataclasses import dataclass

from ..types import Label


@dataclass(frozen=True)
class Reading:
    label: Label | None
    rule: str
    """The rule that decided the label, or why none was read (`invalid: ...`)."""

    @classmethod
    def invalid(cls, why: str) -> Reading:
        return cls(None, f"invalid: {why}")

    @property
    def refused(self) -> bool:
        """No label, for a reason found in the text (negated, hedged, conflicting), not for lack of one."""
        return self.label is None and not self.rule.startswith("invalid: no ")
