"""Reading time per character of each format's reader: ``python -m benchmarks.reader_speed``.

Each reader (one-word, json, cot, cot-json) reads answers a model can write, at growing lengths: leading
braces then a JSON object (the shape that once took 3.65 s at 32,000 braces), bracket runs, repeated
prose that names both persons, and JSON objects one after another. Reading is linear in the answer's
length when the time per character stays flat as the answer grows; ``growth`` is the time per character
at the longest answer over the time per character at the shortest. The goal: growth under 3 for every
reader and shape. Prints the numbers and writes reports/benchmarks/reader_speed.json.

    .venv/bin/python -m benchmarks.reader_speed [--sizes 2000,32000,512000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import load, machine, write_json
from mathcomp_tests.formats import NAMES as READERS
from mathcomp_tests.formats import read_text

GOAL_GROWTH = 3.0
SHAPES: dict[str, Callable[[int], str]] = {
    "braces then an object": lambda n: "{" * n + '{"answer": "more"}',
    "bracket run": lambda n: "[" * n,
    "prose naming both persons": lambda n: ("Person A spends more time than Person B. " * (n // 41 + 1))[:n],
    "objects one after another": lambda n: ('{"answer": "less"} ' * (n // 19 + 1))[:n],
}


def seconds_to_read(reader: str, text: str, repeat: int) -> float:
    """The median of ``repeat`` reads of ``text`` by ``reader``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read_text(text, reader)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(sizes: list[int], repeat: int) -> dict[str, Any]:
    before = load()
    readers: dict[str, dict[str, Any]] = {}
    for reader in READERS:
        shapes: dict[str, Any] = {}
        for shape, make in SHAPES.items():
            per_char = {n: seconds_to_read(reader, make(n), repeat) / n for n in sizes}
            shapes[shape] = {
                "us_per_1000_chars": {str(n): round(1e9 * v, 2) for n, v in per_char.items()},
                "seconds_longest": round(per_char[sizes[-1]] * sizes[-1], 4),
                "growth": round(per_char[sizes[-1]] / per_char[sizes[0]], 2),
            }
        worst = max(shapes.values(), key=lambda s: s["growth"])
        readers[reader] = {"shapes": shapes, "worst_growth": worst["growth"]}
    return {
        "sizes": sizes,
        "repeat": repeat,
        "readers": readers,
        "goal_growth": GOAL_GROWTH,
        "goal_met": all(r["worst_growth"] < GOAL_GROWTH for r in readers.values()),
        "machine": machine(),
        "load_before": before,
        "load_after": load(),
        "date": time.strftime("%Y-%m-%d"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2000,32000,512000", help="answer lengths in characters")
    parser.add_argument("--repeat", type=int, default=3, help="reads per length; the median is kept")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",") if s})
    if len(sizes) < 2 or sizes[0] < 1:
        parser.error(f"--sizes {args.sizes}: expected at least two positive lengths")
    result = measure(sizes, max(1, args.repeat))
    for reader, entry in result["readers"].items():
        for shape, s in entry["shapes"].items():
            cells = ", ".join(f"{n} chars {v} µs/1000" for n, v in s["us_per_1000_chars"].items())
            print(f"{reader:9} {shape:27} {cells}; growth {s['growth']}x")
    print(f"goal: growth under {GOAL_GROWTH}x for every reader and shape: {'met' if result['goal_met'] else 'not met'}")
    print(f"wrote {write_json('reader_speed', result)}")


if __name__ == "__main__":
    main()
