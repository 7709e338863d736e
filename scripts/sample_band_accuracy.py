"""The short-sample table of docs/results/analysis.md: ``advise --rules --sample N`` (the
classifier simulated on the first N packets, the rest extrapolated, with its band) against the
whole-trace simulation, which equals real ``classify`` runs exactly (``scripts/advise_accuracy.py``).

    python scripts/sample_band_accuracy.py --data ../shared/data/classbench --out results/sample-band

For every set, k, packet dispatcher and sample size: the prediction, its band, the obtained work
speedup, whether the band holds it and whether the advisor flags the band (wider than ±10 %).
Writes ``rows.json`` and ``table.md`` into ``--out``; deterministic (work counts only).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from superlinear import _native
from superlinear.analysis.classifier_model import BAND_LIMIT, predict_point
from superlinear.analysis.predict_cli import CALIBRATION, PACKET_CANDIDATES


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("results/sample-band"))
    ap.add_argument("--sets", default="acl1_5k,fw1_5k,ipc1_5k")
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--samples", default="5000,10000,20000")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in a.sets.split(","):
        w = _native.PacketWorkload.load(str(a.data / name), str(a.data / f"{name}_trace"),
                                        {"actions": "random:0.5:1"})
        w.calibrate(CALIBRATION)
        trace = int(w.info()["trace_packets"])
        for k in (int(x) for x in a.k.split(",")):
            for c in PACKET_CANDIDATES:
                obtained = predict_point(w, "mrf", c, k, sample=trace).predicted
                for n in (int(x) for x in a.samples.split(",")):
                    p = predict_point(w, "mrf", c, k, sample=n)
                    rows.append({"set": name, "k": k, "candidate": c, "sample": n, "trace": trace,
                                 "predicted": p.predicted, "band": list(p.band), "band_relative": p.band_relative,
                                 "obtained": obtained, "error": p.predicted / obtained - 1,
                                 "covered": p.band[0] <= obtained <= p.band[1],
                                 "flagged": p.band_relative > BAND_LIMIT})
            print(name, k, flush=True)
    (a.out / "rows.json").write_text(json.dumps(rows, indent=1))
    lines = ["| set | sample | predictions | largest \\|error\\| | off by > 10 % | of those flagged | flagged "
             "| band holds obtained |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    keys = sorted({(r["set"], r["sample"]) for r in rows}, key=lambda t: (t[0], t[1]))
    for s, n in keys:
        sub = [r for r in rows if r["set"] == s and r["sample"] == n]
        bad = [r for r in sub if abs(r["error"]) > BAND_LIMIT]
        lines.append(f"| {s} | {n:,} of {sub[0]['trace']:,} | {len(sub)} | {max(abs(r['error']) for r in sub):.1%} "
                     f"| {len(bad)} | {sum(r['flagged'] for r in bad)} | {sum(r['flagged'] for r in sub)} "
                     f"| {sum(r['covered'] for r in sub)} |")
    bad = [r for r in rows if abs(r["error"]) > BAND_LIMIT]
    lines += ["", f"all: {len(rows)} predictions, {len(bad)} off by more than 10 %, "
              f"{sum(r['flagged'] for r in bad)} of those flagged; {sum(r['flagged'] for r in rows)} flagged in all; "
              f"the band holds the obtained speedup in {sum(r['covered'] for r in rows)}"]
    (a.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
