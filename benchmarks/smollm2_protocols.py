"""Every mitigation protocol on SmolLM2-135M-Instruct, a model that writes: ``python -m benchmarks.smollm2_protocols``.

Two runs of the real suite on the same selection (``--limit`` scenarios; neutral, direct-more and
direct-less; question at the end; one-word), each with a fresh cache: every protocol but cot in one
(``--protocol=plain,evidence-lock,...``, as a user runs them: symbolic's totals turn is evidence-lock's
request, answered from the cache), and cot alone (its budget is ``--max-new-tokens``, which would set
every other protocol's turns too). For each protocol: DirErr of each framing's cue
label (neutral: the largest of the three) as k/n and against plain on the same items, the unread share and
why answers were unread, model calls and tokens per item (summary.json ``protocols``), seconds per item
(pytest's set-up and call time of the protocol's cases: the model at work; the first case of each run
also loads the model) and the run's wall time, and
examples of the real text. Prints a table and writes reports/benchmarks/smollm2_protocols.{json,md}.
cot runs at ``--cot-tokens`` new tokens (default 160: 25 cot answers at the full 512 took over 25 minutes
on 2 busy cores, docs/models.md); ``--cot-tokens=0`` gives it its format's full budget.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import OUT_DIR, checked, load, pytest_command, run_tracked, suite_env, write_json
from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from mathcomp_tests.protocols import PROTOCOLS

FRAMINGS = ("neutral", "direct-more", "direct-less")
CUE = {"direct-more": "more", "direct-less": "less"}
_DURATION = re.compile(r"^([\d.]+)s (?:setup|call)\s+\S+::test_framing\[([^\]]+)\]", re.MULTILINE)


def dir_err(records: list[dict[str, Any]], framing: str) -> dict[str, Any]:
    """DirErr of the framing's cue label (neutral: the largest label) as k of n, and the unread share."""
    rows = [r for r in records if r["framing"] == framing]
    shares = {}
    for label in ("less", "more", "equal"):
        others = [r for r in rows if r["gold"] != label]
        shares[label] = (sum(r["label"] == label for r in others), len(others))
    label = CUE.get(framing) or max(shares, key=lambda y: shares[y][0] / max(shares[y][1], 1))
    k, n = shares[label]
    unread = sum(r["status"] != "ok" for r in rows)
    return {"label": label, "k": k, "n": n, "dir_err": k / n if n else None, "unread": unread / len(rows)}


def examples(records: list[dict[str, Any]], count: int = 3) -> list[dict[str, str]]:
    """A few distinct real answers (the last turn's text, or the protocol's raw), read or not."""
    seen: dict[str, dict[str, str]] = {}
    for r in records:
        raw = " ".join(str(r["raw"]).split())[:160]
        if raw not in seen:
            seen[raw] = {"scenario": r["scenario"], "framing": r["framing"], "status": r["status"], "raw": raw}
    ok = [e for e in seen.values() if e["status"] == "ok"][: count - 1]
    bad = [e for e in seen.values() if e["status"] != "ok"][: count - len(ok)]
    return ok + bad


def protocol_of(case: str) -> str:
    return case.rpartition("-protocol-")[2] if "-protocol-" in case else "plain"


def run_group(protocols: list[str], limit: int, extra: tuple[str, ...], tmp: Path) -> list[dict[str, Any]]:
    """One suite run of ``protocols`` (one process, one fresh cache, as ``--protocol=a,b`` runs them)."""
    name = "+".join(protocols)
    args = [
        "--model=smollm2-135m",
        f"--limit={limit}",
        "--positions=end",
        f"--framings={','.join(FRAMINGS)}",
        f"--protocol={','.join(protocols)}",
        f"--reports-dir={tmp / name / 'reports'}",
        f"--cache-dir={tmp / name / 'cache'}",
        "--deselect=mathcomp_tests/suite/test_generated.py",
        "--durations=0",
        *extra,
    ]
    before = load()
    result = checked(run_tracked(pytest_command(*args), env=suite_env()), f"--protocol={name}", ok=(0, 1))
    after = load()
    run_dir = (tmp / name / "reports" / "latest").resolve()
    summary = json.loads((run_dir / "summary.json").read_text())
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    seconds: dict[str, float] = {}
    for took, case in _DURATION.findall(result.stdout):
        seconds[protocol_of(case)] = seconds.get(protocol_of(case), 0.0) + float(took)
    out = []
    for protocol in protocols:
        mine = [r for r in records if (r.get("protocol") or "plain") == protocol]
        cost = summary["protocols"][protocol]
        why = Counter(str(r["decided_by"]) for r in mine if r["status"] != "ok")
        cached = sum(
            c["usage"]["cached_requests"] for c in summary["cases"] if (c.get("protocol") or "plain") == protocol
        )
        out.append(
            {
                "protocol": protocol,
                "run": f"--protocol={','.join(protocols)} {' '.join(extra)}".strip(),
                "framings": {f: dir_err(mine, f) for f in FRAMINGS},
                "items": cost["items"],
                "requests_per_item": cost["requests_per_item"],
                "cached_requests": cached,
                "input_tokens_per_item": round(cost["input_tokens_per_item"], 1),
                "output_tokens_per_item": round(cost["output_tokens_per_item"], 1),
                "notes": cost["notes"],
                "unread_why": dict(why.most_common(4)),
                "model_seconds": round(seconds.get(protocol, 0.0), 1),
                "seconds_per_item": round(seconds.get(protocol, 0.0) / cost["items"], 2) if cost["items"] else None,
                "run_wall_seconds": result.seconds,
                "examples": examples(mine),
                "load_before": before,
                "load_after": after,
            }
        )
    return out


def markdown(runs: list[dict[str, Any]]) -> str:
    names = [r["protocol"] for r in runs]
    plain = next((r for r in runs if r["protocol"] == "plain"), None)
    lines = ["| framing (label) | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for f in FRAMINGS:
        cells = []
        for r in runs:
            c = r["framings"][f]
            text = f"{c['k']}/{c['n']} = {100 * (c['dir_err'] or 0):.0f}%"
            if plain is not None and r is not plain:
                base = plain["framings"][f]
                text += f" ({100 * ((c['dir_err'] or 0) - (base['dir_err'] or 0)):+.0f})"
            cells.append(f"{text}, {100 * c['unread']:.0f}% unread")
        lines.append(f"| {f} ({'largest' if f == 'neutral' else CUE[f]}) | " + " | ".join(cells) + " |")
    rows = (
        ("requests / item", "requests_per_item"),
        ("tokens in / item", "input_tokens_per_item"),
        ("tokens out / item", "output_tokens_per_item"),
        ("model s / item", "seconds_per_item"),
        ("cached requests", "cached_requests"),
    )
    for title, key in rows:
        lines.append(f"| {title} | " + " | ".join(str(r[key]) for r in runs) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=30, help="scenarios (default 30)")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="comma-separated (default: all)")
    parser.add_argument("--cot-tokens", type=int, default=160, help="cot's new-token budget (0: the format's)")
    args = parser.parse_args()
    if not complete(directory(SMOLLM2)):
        raise SystemExit(f"SmolLM2 is not prepared at {directory(SMOLLM2)}: run `make smollm2`")
    started, before = time.perf_counter(), load()
    chosen = args.protocols.split(",")
    groups: list[tuple[list[str], tuple[str, ...]]] = [([p for p in chosen if p != "cot"], ())]
    if "cot" in chosen:  # its own run: --max-new-tokens would set every other protocol's turns too
        groups.append((["cot"], (f"--max-new-tokens={args.cot_tokens}",) if args.cot_tokens else ()))
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mathcomp-bench-") as tmp:
        for protocols, extra in groups:
            if protocols:
                runs += run_group(protocols, args.limit, extra, Path(tmp))
                r = runs[-1]
                print(f"{r['run']}: {r['run_wall_seconds']:.0f} s, load {r['load_before']} -> {r['load_after']}")
    result = {
        "what": f"SmolLM2-135M-Instruct, --limit={args.limit}, end, one-word, {', '.join(FRAMINGS)}; greedy, CPU",
        "runs": runs,
        "date": time.strftime("%Y-%m-%d"),
        "total_s": round(time.perf_counter() - started, 1),
        "load_before": before,
        "load_after": load(),
    }
    table = markdown(runs)
    print(table)
    for r in runs:
        print(f"{r['protocol']}: unread because {r['unread_why']}; notes {r['notes']}")
        for e in r["examples"]:
            print(f"   [{e['status']}] {e['framing']} #{e['scenario']}: {e['raw']!r}")
    path = write_json("smollm2_protocols", result)
    (OUT_DIR / "smollm2_protocols.md").write_text(table)
    print(f"load {before} -> {result['load_after']}; {result['total_s']:.0f} s; wrote {path}")


if __name__ == "__main__":
    main()
