"""``superlinear classify compare``: our classifiers next to the peer TupleMerge/PartitionSort
(drjdaly/tuplemerge, built by ``shared/peers/build-tuplemerge``) on ClassBench sets, one core,
alternated run by run, with the per-rule first-match counts checked to agree before any speed
is compared. Throughput is thread CPU time on one pinned core (measured); every figure is the
median [lo–hi] of ``--repeats`` alternated runs, and the ratio is taken within each round."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

from superlinear.classify.workload import CLASSBENCH_SETS, PacketWorkloadSpec, load
from superlinear.common.args import comma_list
from superlinear.common.errors import SuperlinearError
from superlinear.common.study import console
from superlinear.experiments.repeats import spread

#: The peer's classifiers that `tmbench` runs.
PEER_ALGOS = ("TMOnline", "TMOffline", "PartitionSort")
#: Where the peer's build script may be (``$SUPERLINEAR_PEERS`` first).
PEER_DIRS = (Path("../shared/peers"), Path("shared/peers"), Path("/work/shared/peers"))
KIND = "measured: thread CPU time of the lookup loop, one pinned core; median [lo–hi] of alternated runs"


def resolve_peer(arg: str) -> Path:
    """The `tmbench` binary of ``--peer``: a path to it, or a folder holding it (built there with
    ``build-tuplemerge`` when absent)."""
    p = Path(arg)
    if p.is_file():
        if not os.access(p, os.X_OK):
            raise SuperlinearError(f"--peer {arg}: not executable")
        return p
    if p.name == "tmbench" or (p.exists() and not p.is_dir()):
        raise SuperlinearError(f"--peer {arg}: no such peer binary (give the tmbench binary or a folder to build it "
                               "in)")
    if (p / "tmbench").is_file():
        return p / "tmbench"
    env = os.environ.get("SUPERLINEAR_PEERS")
    dirs = ([Path(env)] if env else []) + list(PEER_DIRS)
    script = next((d / "build-tuplemerge" for d in dirs if (d / "build-tuplemerge").is_file()), None)
    if script is None:
        raise SuperlinearError(f"--peer {arg}: no tmbench there and no build-tuplemerge script found "
                               "(set SUPERLINEAR_PEERS to the peers folder)")
    console.print(f"building the peer into {p} with {script} ...", highlight=False, markup=False)
    r = subprocess.run([str(script), str(p)], capture_output=True, text=True, check=False)
    if r.returncode != 0 or not (p / "tmbench").is_file():
        last = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SuperlinearError(f"--peer {arg}: building the peer failed: {last[0]}")
    return p / "tmbench"


def _core() -> int:
    """The core both sides are pinned to: the last one this process may run on."""
    return max(os.sched_getaffinity(0))


def _run_peer(exe: Path, rules: Path, trace: Path, packets: int, algo: str, core: int,
              counts: Path) -> dict[str, Any]:
    cmd = [str(exe), str(rules), str(trace), str(packets), algo, str(counts)]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", str(core), *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        last = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SuperlinearError(f"peer {algo} on {rules.name} failed: {last[0]}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise SuperlinearError(f"peer {algo} on {rules.name}: no result line")
    doc: dict[str, Any] = json.loads(lines[-1])
    return doc


def _our_counts(w: Any, algo: str) -> tuple[list[int], int]:
    """Per-rule first-match counts as the classifier itself recorded them (one worker)."""
    cfg = {"algo": algo, "dispatch": "rss", "k": 1, "modes": ["projected"], "stats": True, "window": 10_000,
           "seed": 1, "warmup": 0}
    stats = w.run(cfg)["stats"][0]
    return list(stats["matches"]), int(stats["default_hits"])


def cmd_compare(args: argparse.Namespace) -> int:
    from superlinear.experiments.packets import find_data

    root = find_data(Path(args.data) if args.data else None)
    if root is None:
        raise SuperlinearError("classify compare needs --data DIR (ClassBench files)")
    exe = resolve_peer(args.peer) if args.peer else None
    packets = args.packets or 1_000_000
    core = _core()
    rows: list[dict[str, Any]] = []
    agree = True
    with tempfile.TemporaryDirectory() as tmp:
        for size in comma_list("--classbench-size", args.sizes):
            for name in CLASSBENCH_SETS:
                rules = root / f"{name}_{size}"
                trace = Path(str(rules) + "_trace")
                if not rules.exists() or not trace.exists():
                    raise SuperlinearError(f"{rules}: no such ClassBench rule set (or its _trace)")
                label = f"{name}_{size}"
                if args.traffic == "uniform":
                    # No locality: every packet a random rule's random header (generated once and
                    # written for the peer, so that both sides classify the same packets).
                    w = load(PacketWorkloadSpec(kind="files", rules=str(rules), packets=packets,
                                                actions=args.actions))
                    trace = Path(tmp) / f"{label}_uniform_trace"
                    w.write_trace(str(trace), "classbench")
                else:
                    w = load(PacketWorkloadSpec(kind="files", rules=str(rules), trace=str(trace), packets=packets,
                                                actions=args.actions))
                reference = _our_counts(w, "static")
                ours: dict[str, list[float]] = {a: [] for a in args.algos}
                work: dict[str, float] = {}
                peers: dict[str, list[float]] = {a: [] for a in (PEER_ALGOS if exe else ())}
                counts_ok: dict[str, bool] = {a: _our_counts(w, a) == reference for a in args.algos}
                previous = os.sched_getaffinity(0)
                for _ in range(args.repeats):
                    for algo in args.algos:
                        os.sched_setaffinity(0, {core})
                        try:
                            pps, work[algo] = w.bench(algo, 1)
                        finally:
                            os.sched_setaffinity(0, previous)
                        ours[algo].append(pps / 1e6)
                    for algo in peers:
                        assert exe is not None
                        out = Path(tmp) / f"{label}_{algo}.json"
                        doc = _run_peer(exe, rules, trace, packets, algo, core, out)
                        peers[algo].append(float(doc["mpps_cpu"]))
                        if algo not in counts_ok:
                            peer = json.loads(out.read_text())
                            counts_ok[algo] = (list(peer["counts"]), int(peer.get("default", 0))) == reference
                best_peer = max(peers, key=lambda a: statistics.median(peers[a])) if peers else None
                for algo, runs in [*ours.items(), *peers.items()]:
                    ratio = ([o / p for o, p in zip(runs, peers[best_peer], strict=True)]
                             if best_peer and algo in ours else [])
                    rows.append({"rules_set": label, "side": "ours" if algo in ours else "peer", "algo": algo,
                                 "packets": packets, "mpps_runs": runs, "mpps_median": statistics.median(runs),
                                 "work_per_packet": work.get(algo), "counts_agree": counts_ok[algo],
                                 "ratio_to": best_peer if ratio else None, "ratio_runs": ratio})
                    agree &= counts_ok[algo]
    doc = {"kind": KIND, "core": core, "repeats": args.repeats, "traffic": args.traffic,
           "peer": str(exe) if exe else None, "rows": rows}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print(doc)
    if not agree:
        console.print("per-rule counts disagree with the static list's (see 'counts agree'): speeds not comparable",
                      highlight=False, markup=False)
        return 1
    return 0


def _print(doc: dict[str, Any]) -> None:
    caption = doc["kind"].replace("[", "\\[") + ("" if doc["peer"] else "; no --peer: ours only")
    traffic = "the sets' traces" if doc["traffic"] == "trace" else "headers without locality"
    t = Table(title=f"single-core classification, ours and the peer, {traffic} ({doc['repeats']} alternated runs, core "
              f"{doc['core']})", caption=caption, caption_justify="left")
    for c in ("rule set", "side", "classifier", "Mpps", "work / packet", "counts agree", "ours / best peer",
              "best peer"):
        t.add_column(c, justify="right")
    for r in doc["rows"]:
        wp = "—" if r["work_per_packet"] is None else f"{r['work_per_packet']:,.1f}"
        ratio = spread(r["ratio_runs"], ".2f") if r["ratio_runs"] else "—"
        t.add_row(r["rules_set"], r["side"], r["algo"], spread(r["mpps_runs"], ",.3f"), wp,
                  "yes" if r["counts_agree"] else "NO", ratio, r["ratio_to"] or "—")
    console.print(t)
