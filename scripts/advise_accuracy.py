"""The accuracy table of docs/results/analysis.md: for each rule set and k, every packet dispatch
candidate predicted by ``superlinear advise --rules`` (the classifier simulated on a sample) against
the work speedup of real ``superlinear classify --no-measure`` runs.

    python scripts/advise_accuracy.py --data ../shared/data/classbench --out results/advise-accuracy

Runs every command as a subprocess (the commands are printed) and writes ``table.md`` and
``rows.json`` into ``--out``. Work speedups are exact counts, so the table is deterministic.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

CANDIDATES = ["rss:sip", "rss:dip", "rss:sip,dip", "rss:dport", "rss:sip,dip,sport,dport,proto", "rule"]


def sl(*args: str) -> str:
    cmd = [sys.executable, "-m", "superlinear", *args]
    print("$ superlinear " + " ".join(shlex.quote(a) for a in args), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return r.stdout


def work_span(rules: Path, trace: Path, dispatch: str, k: int) -> int:
    doc = json.loads(sl("classify", "--rules", str(rules), "--trace", str(trace), "--algo", "mrf", "--k", str(k),
                        "--dispatch", dispatch, "--no-measure", "--json"))
    return int(doc["projected"]["work_span"])


def predicted(rules: Path, trace: Path, k: int, sample: int | None, out: Path) -> dict[str, Any]:
    args = ["advise", "--rules", str(rules), "--trace", str(trace), "--k", str(k), "--candidates",
            ";".join(CANDIDATES), "--json", "--out", str(out)]
    if sample:
        args += ["--sample", str(sample)]
    return json.loads(sl(*args))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("results/advise-accuracy"))
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--small-sample", type=int, default=20_000)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    sets: list[tuple[str, Path, Path]] = [(n, a.data / n, a.data / f"{n}_trace") for n in ("acl1_5k", "fw1_5k",
                                                                                         "ipc1_5k")]
    for name, rc, depth, flows in (("gen-999-d0", 999, 0, 50), ("gen-999-d3", 999, 3, 20)):
        r, t = a.out / f"{name}.txt", a.out / f"{name}.bin"
        sl("classify", "gen-rules", "--rules-count", str(rc), "--depth", str(depth), "--out", str(r))
        sl("classify", "gen-trace", "--rules-count", str(rc), "--depth", str(depth), "--flows-per-rule", str(flows),
           "--packets", "50000", "--format", "binary", "--out", str(t))
        sets.append((name, r, t))
    rows = []
    for name, rules, trace in sets:
        base = work_span(rules, trace, "rr", 1)
        for k in (int(x) for x in a.k.split(",")):
            full = predicted(rules, trace, k, None, a.out / "advise")
            small = predicted(rules, trace, k, a.small_sample, a.out / "advise")
            small_by = {r["dispatch"]: r for r in small["rows"]}
            for row in full["rows"]:
                obtained = base / work_span(rules, trace, row["dispatch"], k)
                s = small_by[row["dispatch"]]
                rows.append({"set": name, "k": k, "candidate": row["dispatch"], "fields": row["dispatch_name"],
                             "predicted": row["speedup_work_predicted"], "band": [row["predicted_low"],
                                                                                  row["predicted_high"]],
                             "model": row["model"], "obtained": obtained,
                             "error": row["speedup_work_predicted"] / obtained - 1,
                             "predicted_small": s["speedup_work_predicted"], "model_small": s["model"],
                             "error_small": s["speedup_work_predicted"] / obtained - 1,
                             "recommended": row["recommended"], "recommended_small": s["recommended"],
                             "busiest_share": row["busiest_share"]})
    (a.out / "rows.json").write_text(json.dumps(rows, indent=1))
    lines = ["| set | k | candidate | predicted (band) | obtained | error | predicted, 20k sample | error |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        mark = " **(rec.)**" if r["recommended"] else ""
        mark_s = " (rec.)" if r["recommended_small"] else ""
        lines.append(f"| {r['set']} | {r['k']} | `{r['fields']}`{mark} | {r['predicted']:.2f} ({r['band'][0]:.2f}–"
                     f"{r['band'][1]:.2f}) | {r['obtained']:.2f} | {r['error']:+.1%} | {r['predicted_small']:.2f}"
                     f"{mark_s} | {r['error_small']:+.1%} |")
    lines.append("")
    for name, _, _ in sets:
        for k in (int(x) for x in a.k.split(",")):
            sub = [r for r in rows if r["set"] == name and r["k"] == k]
            best = max(r["obtained"] for r in sub)
            rec = next(r for r in sub if r["recommended"])
            rec_s = next(r for r in sub if r["recommended_small"])
            lines.append(f"- {name}, k = {k}: best obtained {best:.2f}×; recommended `{rec['fields']}` obtains "
                         f"{rec['obtained']:.2f}× ({rec['obtained'] / best - 1:+.1%}); with the 20k sample "
                         f"`{rec_s['fields']}` {rec_s['obtained']:.2f}× ({rec_s['obtained'] / best - 1:+.1%}); "
                         f"largest |error| {max(abs(r['error']) for r in sub):.1%}, 20k sample "
                         f"{max(abs(r['error_small']) for r in sub):.1%}")
    (a.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
