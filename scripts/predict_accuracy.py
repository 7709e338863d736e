"""The engine-workload accuracy table of docs/results/analysis.md: ``superlinear predict --compare``
(the working-set law for MTF and LRU, the exact simulation of the splay worker) against the
engine's own work speedup, on uniform and Zipf keys and on ClassBench flow keys (each header's
5-tuple as one key, ``python -m superlinear.classify.flow_keys``).

    python scripts/predict_accuracy.py --data ../shared/data/classbench --out results/predict-accuracy

Runs every command as a subprocess (the commands are printed) and writes ``table.md`` and
``rows.json`` into ``--out``. Work speedups are exact counts, so the table is deterministic.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ALGOS = [("mtf", 0), ("lru:1000", 10), ("splay", 0)]


def sl(*args: str) -> str:
    cmd = [sys.executable, "-m", "superlinear", *args]
    print("$ superlinear " + " ".join(shlex.quote(a) for a in args), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("results/predict-accuracy"))
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--m", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=200_000)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, list[str]]] = [
        (f"uniform, m = {a.m:,}", ["--workload", "uniform", "--m", str(a.m), "--requests", str(a.requests)]),
        (f"zipf 1.01, m = {a.m:,}", ["--workload", "zipf", "--m", str(a.m), "--requests", str(a.requests)]),
    ]
    for name in ("acl1_5k", "fw1_5k", "ipc1_5k"):
        keys = a.out / f"{name}_keys.txt"
        cmd = [sys.executable, "-m", "superlinear.classify.flow_keys", str(a.data / f"{name}_trace"), str(keys)]
        print("$ python " + " ".join(shlex.quote(c) for c in cmd[1:]), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, capture_output=True)
        sources.append((f"{name} flow keys", ["--trace", str(keys)]))
    rows: list[dict[str, Any]] = []
    for label, src in sources:
        for algo, rho in ALGOS:
            t0 = time.perf_counter()
            doc = json.loads(sl("predict", *src, "--algo", algo, "--rho", str(rho), "--dispatch", "hash", "--k",
                                a.k, "--compare", "--json", "--out", str(a.out / "predict")))
            wall = time.perf_counter() - t0
            for r in doc["rows"]:
                rows.append({"keys": label, "algo": algo, "rho": rho, "k": r["k"], "requests": r["requests"],
                             "m": r["m"], "model": r["model"], "predicted": r["speedup_work_predicted"],
                             "obtained": r["speedup_work"], "exact": r["engine_exact_match"],
                             "error": r["speedup_work_predicted"] / r["speedup_work"] - 1,
                             "model_seconds": doc["config"]["law_seconds_wall_one_core"], "wall_seconds": wall})
    (a.out / "rows.json").write_text(json.dumps(rows, indent=1))
    lines = ["| keys | algo | model | k | predicted | obtained | error | per-worker work equal | model s |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        algo = r["algo"] + (f", ρ = {r['rho']}" if r["rho"] else "")
        lines.append(f"| {r['keys']} ({r['requests']:,} req., {r['m']:,} items) | {algo} | {r['model']} | {r['k']} "
                     f"| {r['predicted']:.2f} | {r['obtained']:.2f} | {r['error']:+.1%} | "
                     f"{'yes' if r['exact'] else 'NO'} | {r['model_seconds']:.2f} |")
    worst = max(abs(r["error"]) for r in rows)
    lines += ["", f"largest |error| over {len(rows)} rows: {worst:.1%}"]
    (a.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
