"""How large a rise of DirErr(y) the baseline gate can see: the exact power of its one-sided McNemar test.

For a label y, a case pairs the items whose gold is not y and that both runs answered (``pairs``); the
base answered y on ``base_hits`` of them, so ``free = pairs - base_hits`` items can newly be answered y.
The gate breaches when the items newly answered y (``rose``), against those no longer answered y
(``fell``), make the one-sided exact McNemar test significant at ``level``
(``intervals.mcnemar_rise(rose, fell) < level``) and the rise ``(rose - fell) / pairs`` is above
``max_increase``. Both conditions only get easier as ``rose`` grows, so with ``fell`` fixed at ``away`` a
breach needs exactly ``rose >= needed``: the fewest newly-y items that make one.

Model of a true rise d: each of the ``free`` items is newly answered y independently with probability
``q = (d * pairs + away) / free`` (capped at 1), while ``away`` items leave y, so the expected rise is d.
The test then breaches exactly when Binomial(free, q) >= needed, and the power is that binomial tail,
computed to double precision (the regularized incomplete beta function; its inverse gives the q, hence
the d, at which the power reaches 80%). The MDE, the minimum detectable effect, is the smallest d, to a
tenth of a point, whose power is at least POWER. A label whose base already answers y on so many items
that even all of the free ones would not make a breach "cannot rise": no rise there can fail the case.

Why one-sided: the gate asks one question, "did DirErr(y) rise?", and acts on nothing else. A two-sided
test spends half of its level on falls it never acts on, so it needs more items for the same rise.
Planning (``away = 0``) is optimistic: in a real run some items also move off y, and each one both
lowers the rise and dilutes the test, so a rise is harder to see than the plan says.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from . import intervals

POWER = 0.80
"""The probability of detection the MDE is quoted at."""
STEP = 0.001
"""The MDE's resolution: a tenth of a point."""
_CLOSE = 1e-9
"""A p-value this close to the level (relatively) is decided by the exact integer tail instead."""


@dataclass(frozen=True)
class RisePower:
    """What one gated test (one case, one label) can see."""

    pairs: int
    """Items paired for label y: gold is not y and both runs answered."""
    base_hits: int
    """Of those, the items the base answered y."""
    away: int
    """Items assumed to leave y (in a run: the observed ``fell``; 0 when planning)."""
    level: float
    """The one-sided level the test runs at (alpha, or alpha/m under --holm)."""
    max_increase: float
    needed: int | None
    """The fewest newly-y items that make a breach; None when more than ``free`` would be needed."""
    mde: float | None
    """The smallest true rise detected with probability >= ``power``; None when it cannot rise."""
    power: float = POWER

    @property
    def free(self) -> int:
        """Items that can newly be answered y."""
        return self.pairs - self.base_hits

    def text(self, label: str) -> str:
        """One phrase: ``sees a rise of +12.5 points (80% power)`` or why it cannot rise."""
        if self.mde is not None:
            return sees(self.mde, self.power)
        if self.pairs == 0:
            return "cannot rise: no items to compare"
        unbounded = _needed(self.pairs, self.pairs, self.away, self.level, self.max_increase)
        if unbounded is None and _needed(self.pairs, self.pairs, 0, self.level, self.max_increase) is not None:
            return (
                f"cannot rise: {self.away} of its {self.pairs} items left {label} (the base answered {label}, "
                "this run does not): no significant rise can outweigh them"
            )
        if unbounded is None:
            return f"cannot rise: {self.pairs} items are too few for a significant rise at level {self.level:.3g}"
        return f"cannot rise: the base already answers {label} on {self.base_hits} of {self.pairs}"

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON: the counts, the level, ``needed``, ``mde`` and ``free``."""
        return {**asdict(self), "free": self.free}


def sees(mde: float, power: float = POWER) -> str:
    """``sees a rise of +12.5 points (80% power)``: how every test against the baseline states its MDE."""
    return f"sees a rise of +{100 * mde:.1f} points ({100 * power:g}% power)"


def rise_power(
    pairs: int, base_hits: int, max_increase: float, level: float, away: int = 0, power: float = POWER
) -> RisePower:
    """The power of one gated test: ``needed`` and the MDE at ``power``."""
    _check(pairs, base_hits, away, level, max_increase)
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1, got {power}")
    free = pairs - base_hits
    needed = _needed(pairs, free, away, level, max_increase)
    mde = None if needed is None else _mde(pairs, free, away, needed, power)
    return RisePower(pairs, base_hits, away, level, max_increase, needed, mde, power)


def detection_probability(
    pairs: int, base_hits: int, rise: float, max_increase: float, level: float, away: int = 0
) -> float:
    """P(the test breaches) when DirErr(y) truly rises by ``rise`` (the model in the module docstring)."""
    _check(pairs, base_hits, away, level, max_increase)
    free = pairs - base_hits
    needed = _needed(pairs, free, away, level, max_increase)
    return 0.0 if needed is None else _tail(free, needed, _q(rise, pairs, free, away))


def _check(pairs: int, base_hits: int, away: int, level: float, max_increase: float) -> None:
    if pairs < 0 or not 0 <= base_hits <= pairs:
        raise ValueError(f"base_hits must be between 0 and pairs={pairs}, got {base_hits}")
    if not 0 <= away <= base_hits:
        raise ValueError(f"away must be between 0 and base_hits={base_hits}, got {away}")
    if not 0 < level <= 1:
        raise ValueError(f"level must be above 0 and at most 1, got {level}")
    if not 0 <= max_increase <= 1:
        raise ValueError(f"max_increase must be between 0 and 1, got {max_increase}")


def _significant(rose: int, fell: int, level: float) -> bool:
    """mcnemar_rise(rose, fell) < level: in floating point, exactly where it is close."""
    from scipy.special import bdtrc  # here, not at module level: importing the plugin stays cheap

    p = float(bdtrc(rose - 1, rose + fell, 0.5))  # P(Binomial(rose + fell, 1/2) > rose - 1)
    if abs(p - level) <= _CLOSE * level:
        return intervals.mcnemar_rise(rose, fell) < level
    return p < level


def _needed(pairs: int, free: int, away: int, level: float, max_increase: float) -> int | None:
    """The smallest rose in 1..free with (rose - away) / pairs > max_increase and a significant test."""
    if pairs == 0:
        return None
    low = max(1, away + math.floor(max_increase * pairs))
    while (low - away) / pairs <= max_increase:  # the rise must be above max_increase, as the gate has it
        low += 1
    if low > free or not _significant(free, away, level):
        return None
    high = free  # significant: the smallest significant rose lies in low..high (p falls as rose grows)
    while low < high:
        middle = (low + high) // 2
        if _significant(middle, away, level):
            high = middle
        else:
            low = middle + 1
    return low


def _q(rise: float, pairs: int, free: int, away: int) -> float:
    """The chance each free item is newly answered y under a true rise ``rise``."""
    if free == 0:
        return 0.0
    return min(1.0, max(0.0, (rise * pairs + away) / free))


def _tail(free: int, needed: int, q: float) -> float:
    """P(Binomial(free, q) >= needed)."""
    from scipy.special import bdtrc

    if q >= 1:
        return 1.0
    return float(bdtrc(needed - 1, free, q))


def _mde(pairs: int, free: int, away: int, needed: int, power: float) -> float:
    """The smallest rise, on a grid of STEP, whose detection probability is at least ``power``."""
    from scipy.special import betaincinv

    q = float(betaincinv(needed, free - needed + 1, power))  # P(Binomial(free, q) >= needed) = power
    steps = max(0, math.ceil(round((q * free - away) / pairs / STEP, 6)))
    while _tail(free, needed, _q(steps * STEP, pairs, free, away)) < power:
        steps += 1
    while steps > 0 and _tail(free, needed, _q((steps - 1) * STEP, pairs, free, away)) >= power:
        steps -= 1
    return round(steps * STEP, 3)


MOST_SCENARIOS = 1_000_000
"""The most scenarios ``scenarios_for`` looks at."""


def at_scale(share: float, rate: float, churn: float, scenarios: int) -> tuple[int, int, int]:
    """(pairs, base_hits, away) of one label's test on ``scenarios`` scenarios, ``share`` of which pair
    for it (their gold is another label), the base answering y on ``rate`` of those and ``churn`` of its
    y answers leaving y."""
    pairs = round(share * scenarios)
    hits = round(rate * pairs)
    return pairs, hits, round(churn * hits)


def largest_rise(rate: float, churn: float = 0.0) -> float:
    """The largest rise of DirErr(y) possible when the base answers y on ``rate`` of the pairs and ``churn``
    of those answers leave y: every other item newly answered y."""
    return (1 - rate) - churn * rate


def scenarios_for(
    share: float,
    rate: float,
    rise: float,
    max_increase: float,
    level: float,
    churn: float = 0.0,
    power: float = POWER,
) -> int | None:
    """The fewest scenarios (to within the jitter of whole items) at which a true ``rise`` is detected with
    probability ``power`` (see ``at_scale``); None when no number up to MOST_SCENARIOS does, or when the
    rise is more than the items the base leaves free allow (``largest_rise``)."""

    def enough(scenarios: int) -> bool:
        pairs, hits, away = at_scale(share, rate, churn, scenarios)
        return detection_probability(pairs, hits, rise, max_increase, level, away) >= power

    if rise <= max_increase or rise > largest_rise(rate, churn):
        return None  # a breach needs more than max_increase; the free items cannot make more than largest_rise
    high = 8
    while not enough(high):
        if high >= MOST_SCENARIOS:
            return None
        high = min(2 * high, MOST_SCENARIOS)
    low = high // 2  # not enough at low (or low is below the first size tried)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
