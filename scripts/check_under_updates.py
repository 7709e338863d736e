"""Brute-force check of every new classifier over ≥ 10⁷ packets each, rule updates included
(issue 17; results in docs/results/classification.md, "Zero mismatches ...").

    python scripts/check_under_updates.py --data ../shared/data/classbench --work /tmp/check17 [--json OUT]

For every registered classifier but ``static`` (the first-match list the check stands for) it
runs ``superlinear classify ... --check --json`` on five workloads, one process at a time:

* acl1 5k, its trace replayed to 3,000,000 packets, k = 32, 5-tuple RSS, 60 rule updates;
* fw1 5k, 3,000,000 packets, k = 8, two-choice, no updates (the plain ``--check``);
* ipc1 5k, 3,000,000 packets, k = 16, the rule-aware dispatcher, 60 rule updates;
* a generated set (2,000 base rules, dependency depth 4, 20 % catch-all traffic), 1,000,000
  generated packets, k = 4, 5-tuple RSS, 40 rule updates;
* fw1 5k again, 1,000,000 packets, k = 32, heavy flows sprayed (``spray``: the trace's largest
  flow classified on every worker), 30 rule updates,

so 11,000,000 packets per worker. The update schedules (``FILE``s of ``classify --updates``) are
written into ``--work``, seeded, and change first matches: a copy of a rule of the set with the
other action inserted ahead of it, the deletion of a high-priority rule, a replacement of the
whole set by another one and back. It prints one row per run (packets checked, updates,
mismatches, wall time) and exits 1 if any run reports a mismatch.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from superlinear import _native

#: Every registered classifier but the static list, in registry order (mrf, mrf-swap,
#: tuple-merge, rule-cache, flow-cache, rule-cache-flow today).
WORKERS = tuple(a["name"] for a in _native.classify_algorithms() if a["name"] != "static")
CLI = [sys.executable, "-m", "superlinear"]


@dataclass
class Run:
    workload: str
    algo: str
    dispatch: str
    k: int
    packets: int
    updates: int
    checked: int
    changed_by_updates: int
    mismatches: int
    wall_s: float
    command: str


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False)


def _native_rules(rules: Path, out: Path) -> list[str]:
    """The rules of ``rules`` as native lines (``ACTION src ... proto ...``), via ``classify convert``."""
    r = _cli("classify", "convert", "--rules", str(rules), "--out", str(out), "--format", "native")
    if r.returncode:
        raise SystemExit(f"convert {rules}: {r.stderr.strip()}")
    return [line for line in out.read_text().splitlines()
            if line and not line.startswith("#") and not line.startswith("default")]


def schedule(native: list[str], other: Path, original: Path, packets: int, count: int, seed: int) -> str:
    """``count`` updates evenly over ``packets``: inserts of a rule copied with the other action
    at or ahead of its position, deletions of high-priority rules, and at a third and two thirds
    a replacement by ``other`` and back by ``original`` (their own rule counts in between)."""
    rng = random.Random(seed)
    n = len(native)
    lines = [f"# {count} updates over {packets:,} packets (scripts/check_under_updates.py, seed {seed})"]
    for i in range(1, count + 1):
        at = i * packets // (count + 1)
        if i == count // 3:
            lines.append(f"{at} replace {other.name}")
            n = -1  # unknown size: only deletions of rule 1 until the original is back
        elif i == 2 * count // 3:
            lines.append(f"{at} replace {original.name}")
            n = len(native)
        elif n < 0:
            lines.append(f"{at} delete 1")
        elif i % 3 == 0:
            lines.append(f"{at} delete {rng.randint(1, min(50, n - 1))}")
            n -= 1
        else:
            j = rng.randrange(min(n, len(native)))
            words = native[j].split(" ", 1)
            flipped = ("drop" if words[0] == "accept" else "accept") + " " + words[1]
            lines.append(f"{at} insert {rng.randint(1, j + 1)} {flipped}")
            n += 1
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--data", type=Path, required=True, help="ClassBench folder (acl1_5k, acl1_5k_trace, ...)")
    ap.add_argument("--work", type=Path, required=True, help="folder for the schedules and the generated set")
    ap.add_argument("--scale", type=float, default=1.0, help="packets × this (default 1: 10⁷ per worker)")
    ap.add_argument("--workers", default=",".join(WORKERS), help="comma-separated classifiers")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    big = max(1000, int(3_000_000 * args.scale))
    small = max(1000, int(1_000_000 * args.scale))

    gen, gen2, gen_trace = work / "gen.txt", work / "gen2.txt", work / "gen_trace.bin"
    for path, seed, depth in ((gen, "5", "4"), (gen2, "6", "2")):
        r = _cli("classify", "gen-rules", "--rules-count", "2000", "--depth", depth, "--catch-all", "0.2",
                 "--seed", seed, "--out", str(path))
        if r.returncode:
            raise SystemExit(r.stderr.strip())
    r = _cli("classify", "gen-trace", "--rules", str(gen), "--packets", str(small), "--out", str(gen_trace))
    if r.returncode:
        raise SystemExit(r.stderr.strip())

    # (label, rules, trace, packets, k, dispatch, updates, other set for the replacements)
    plans: list[tuple[str, Path, Path, int, int, str, int, Path | None]] = [
        ("acl1 5k", args.data / "acl1_5k", args.data / "acl1_5k_trace", big, 32, "rss", 60, args.data / "ipc1_5k"),
        ("fw1 5k", args.data / "fw1_5k", args.data / "fw1_5k_trace", big, 8, "two-choice", 0, None),
        ("ipc1 5k", args.data / "ipc1_5k", args.data / "ipc1_5k_trace", big, 16, "rule", 60, args.data / "fw1_5k"),
        ("generated 2k d=4", gen, gen_trace, small, 4, "rss", 40, gen2),
        ("fw1 5k, sprayed", args.data / "fw1_5k", args.data / "fw1_5k_trace", small, 32, "spray", 30,
         args.data / "acl1_5k"),
    ]
    rows: list[Run] = []
    for label, rules, trace, packets, k, dispatch, count, other in plans:
        base = ["--rules", str(rules), "--trace", str(trace), "--packets", str(packets), "--k", str(k),
                "--dispatch", dispatch, "--check", "--json"]
        if count:
            assert other is not None
            # The schedule names its replacement files relative to its own folder.
            for f in (rules, other):
                link = work / f.name
                if not link.exists():
                    link.symlink_to(f.resolve())
            sched = work / f"updates-{rules.name}.txt"
            native = _native_rules(rules, work / f"{rules.name}.native")
            sched.write_text(schedule(native, work / other.name, work / rules.name, packets, count, seed=17))
            base += ["--updates", str(sched)]
        else:
            base += ["--no-measure"]
        for algo in args.workers.split(","):
            cmd = ["classify", *base, "--algo", algo]
            t0 = time.monotonic()
            r = _cli(*cmd)
            wall = time.monotonic() - t0
            if r.returncode not in (0, 1) or not r.stdout.startswith("{"):
                raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
            doc = json.loads(r.stdout)
            if count:
                checked, mismatches, updates = doc["packets"], doc["mismatches"], doc["updates_applied"]
                changed = doc["changed_by_updates"]
            else:
                checked, mismatches, updates, changed = doc["check"]["checked"], doc["check"]["mismatches"], 0, 0
            row = Run(label, algo, dispatch, k, packets, updates, checked, changed, mismatches, round(wall, 1),
                      "superlinear " + " ".join(cmd))
            rows.append(row)
            print(f"{label:18} {algo:16} k={k:<3} {dispatch:11} updates {updates:3}  checked {checked:>10,}  "
                  f"changed by updates {changed:>9,}  mismatches {mismatches}  {wall:7.1f} s", flush=True)
    print("per worker: " + ", ".join(
        f"{a} {sum(r.checked for r in rows if r.algo == a):,} checked / "
        f"{sum(r.mismatches for r in rows if r.algo == a)} mismatches" for a in args.workers.split(",")))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if any(r.mismatches for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
