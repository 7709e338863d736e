"""``superlinear classify compare``: our classifiers next to the peer TupleMerge/PartitionSort
(drjdaly/tuplemerge, built by ``shared/peers/build-tuplemerge``) on ClassBench sets, one core,
alternated run by run, with the per-rule first-match counts checked to agree before any speed
is compared. Throughput is thread CPU time on one pinned core (measured); every figure is the
median [lo–hi] of ``--repeats`` alternated runs, and the ratio is taken within each round."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from rich.table import Table

from superlinear.classify.workload import CLASSBENCH_SETS, PacketWorkloadSpec, load
from superlinear.common.args import comma_list
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import interruptible
from superlinear.common.processes import run_in_own_group
from superlinear.common.study import console
from superlinear.experiments.repeats import interleaved_rounds, spread

#: The peer's classifiers that `tmbench` runs.
PEER_ALGOS = ("TMOnline", "TMOffline", "PartitionSort")
#: Where the peer's build script may be (``$SUPERLINEAR_PEERS`` first).
PEER_DIRS = (Path("../shared/peers"), Path("shared/peers"), Path("/work/shared/peers"))
#: What ``build-tuplemerge`` copies into its folder before compiling (the peer's source tree): a
#: folder holding them but no tmbench is an earlier build that failed or was stopped.
PEER_SOURCE_ENTRIES = ("makefile", "TupleMerge", "PartitionSort")
#: The default time limit of one peer run: a minute to read the files and build its classifier,
#: then the packets at 10,000 a second, a hundredth of its slowest measured rate (1.4 Mpps, on a
#: loaded machine), so that only a peer that hangs reaches it.
PEER_SETUP_S = 60.0
PEER_MIN_PACKETS_PER_S = 10_000
#: The build's time limit: it compiles in minutes; one still running after half an hour is stuck.
BUILD_TIMEOUT_S = 1_800.0
KIND = "measured: thread CPU time of the lookup loop, one pinned core; median [lo–hi] of alternated runs"


def peer_timeout(packets: int) -> float:
    """Seconds one run of the peer on ``packets`` packets may take unless ``--peer-timeout``."""
    return PEER_SETUP_S + packets / PEER_MIN_PACKETS_PER_S


def resolve_peer(arg: str) -> Path:
    """The `tmbench` binary of ``--peer`` as an absolute path (a bare name would have ``taskset``
    search PATH): a path to it, or a folder holding it. An empty or new folder, or one that an
    earlier build left without the binary, gets it built there with ``build-tuplemerge``; any other
    folder is refused, since a typo or ``--peer ~`` would get 70 MB of C++ compiled into it."""
    p = Path(arg).absolute()
    if p.is_file():
        if not os.access(p, os.X_OK):
            raise SuperlinearError(f"--peer {arg}: not executable")
        return p
    if p.name == "tmbench" or (p.exists() and not p.is_dir()):
        raise SuperlinearError(f"--peer {arg}: no such peer binary (give the tmbench binary or a folder to build it "
                               "in)")
    if (p / "tmbench").is_file():
        return p / "tmbench"
    if p.is_dir() and any(p.iterdir()) and not all((p / entry).exists() for entry in PEER_SOURCE_ENTRIES):
        raise SuperlinearError(f"--peer {arg}: a folder with other files and no tmbench in it (expected the tmbench "
                               "binary, a folder holding it, or an empty or new folder to build the peer in)")
    env = os.environ.get("SUPERLINEAR_PEERS")
    dirs = ([Path(env)] if env else []) + list(PEER_DIRS)
    script = next((d / "build-tuplemerge" for d in dirs if (d / "build-tuplemerge").is_file()), None)
    if script is None:
        raise SuperlinearError(f"--peer {arg}: no tmbench there and no build-tuplemerge script found "
                               "(set SUPERLINEAR_PEERS to the peers folder)")
    # On stderr: stdout may be the --json document.
    print(f"superlinear: building the peer into {p} with {script} ...", file=sys.stderr, flush=True)
    _output_of([str(script.absolute()), str(p)], f"--peer {arg}: building the peer with {script}", BUILD_TIMEOUT_S,
               f"see {p / 'build.log'}")
    if not (p / "tmbench").is_file():
        raise SuperlinearError(f"--peer {arg}: building the peer with {script} left no tmbench in {p}")
    return p / "tmbench"


def _output_of(cmd: list[str], who: str, timeout_s: float, limit: str) -> str:
    """The standard output of ``cmd``, which must exit 0 within ``timeout_s`` seconds (``limit``:
    what sets the limit, or where to look). It runs in a process group of its own, which the
    timeout or a Ctrl-C kills whole, a peer script's own children too. Any failure is one error
    naming ``who``."""
    try:
        r = run_in_own_group(cmd, timeout_s)
    except subprocess.TimeoutExpired:
        raise SuperlinearError(f"{who}: still running after {timeout_s:g} s, stopped ({limit})") from None
    except OSError as e:
        raise SuperlinearError(f"{who}: cannot be started ({e.strerror or e})") from None
    if r.returncode != 0:
        status = (f"killed by {signal.Signals(-r.returncode).name}" if r.returncode < 0 else
                  f"exit status {r.returncode}")
        last = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SuperlinearError(f"{who}: failed ({status}): {last[0]}")
    return r.stdout


def _core() -> int:
    """The core both sides are pinned to: the last one this process may run on."""
    return max(os.sched_getaffinity(0))


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _json_object(text: str, what: str) -> dict[str, Any]:
    """``text`` read as a JSON object (``what`` names it in the error)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SuperlinearError(f"{what} is not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise SuperlinearError(f"{what} is not a JSON object")
    return doc


def _run_peer(exe: Path, rules: Path, trace: Path, packets: int, algo: str, core: int, counts: Path,
              timeout_s: float) -> tuple[float, tuple[list[int], int]]:
    """One run of the peer's ``algo``: its Mpps (thread CPU time) and its per-rule first-match
    counts with its default-policy hits, checked to be what `tmbench` prints and writes (its usage
    is at the top of ``build-tuplemerge``)."""
    who = f"peer {exe} ({algo} on {rules.name})"
    cmd = [str(exe), str(rules), str(trace), str(packets), algo, str(counts)]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", str(core), *cmd]
    out = _output_of(cmd, who, timeout_s, "--peer-timeout sets the limit")
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise SuperlinearError(f"{who}: no result line (a JSON object with mpps_cpu) in its output")
    result = _json_object(lines[-1], f"{who}: its result line")
    mpps = result.get("mpps_cpu")
    if not (isinstance(mpps, int | float) and not isinstance(mpps, bool) and 0 < mpps < math.inf):
        got = "no mpps_cpu" if mpps is None else f"mpps_cpu {json.dumps(mpps)}"
        raise SuperlinearError(f"{who}: its result line has {got} (expected a positive number, the Mpps)")
    try:
        text = counts.read_text()
    except FileNotFoundError:
        raise SuperlinearError(f"{who}: wrote no per-rule counts file") from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise SuperlinearError(f"{who}: its per-rule counts file cannot be read ({reason})") from None
    doc = _json_object(text, f"{who}: its per-rule counts file")
    matches, default = doc.get("counts"), doc.get("default", 0)
    if not (isinstance(matches, list) and all(_is_count(c) for c in matches)):
        raise SuperlinearError(f"{who}: its per-rule counts file has no counts (a list of whole numbers, one "
                               "per rule)")
    if not _is_count(default):
        raise SuperlinearError(f"{who}: its per-rule counts file has default {json.dumps(default)} (expected a "
                               "whole number)")
    return float(mpps), (matches, default)


def _our_counts(w: Any, algo: str) -> tuple[list[int], int]:
    """Per-rule first-match counts as the classifier itself recorded them (one worker)."""
    cfg = {"algo": algo, "dispatch": "rss", "k": 1, "modes": ["projected"], "stats": True, "window": 10_000,
           "seed": 1, "warmup": 0}
    run = interruptible(lambda: w.run(cfg))
    stats = run["stats"][0]
    return list(run["rule_matches"]), int(stats["default_hits"])


def cmd_compare(args: argparse.Namespace) -> int:
    from superlinear.experiments.packets import find_data

    root = find_data(Path(args.data) if args.data else None)
    if root is None:
        raise SuperlinearError("classify compare needs --data DIR (ClassBench files)")
    exe = resolve_peer(args.peer) if args.peer else None
    # Every set checked before any is run, so that a missing one is not found after the others.
    sets = [(f"{name}_{size}", root / f"{name}_{size}") for size in comma_list("--classbench-size", args.sizes)
            for name in CLASSBENCH_SETS]
    for _, rules in sets:
        if not rules.exists() or not Path(f"{rules}_trace").exists():
            raise SuperlinearError(f"{rules}: no such ClassBench rule set (or its _trace)")
    packets = args.packets or 1_000_000
    timeout_s = args.peer_timeout or peer_timeout(packets)
    core = _core()
    rows: list[dict[str, Any]] = []
    doc = {"kind": KIND, "core": core, "repeats": args.repeats, "traffic": args.traffic,
           "peer": str(exe) if exe else None, "rows": rows}
    with tempfile.TemporaryDirectory() as tmp:
        for label, rules in sets:
            try:
                rows.extend(_compare_set(args, exe, label, rules, packets, core, timeout_s, Path(tmp)))
            except KeyboardInterrupt as stop:
                # What finished is shown (the sets before, the rounds of this one that did), then
                # the stop goes on.
                rows.extend(stop.rows if isinstance(stop, _SetStopped) else [])
                if rows:
                    doc["stopped"] = f"stopped by Ctrl-C during {label}: the rows hold the rounds that finished"
                    _show(doc, args.json)
                raise KeyboardInterrupt from None
    _show(doc, args.json)
    if not all(r["counts_agree"] for r in rows):
        console.print("per-rule counts disagree with the static list's (see 'counts agree'): speeds not comparable",
                      highlight=False, markup=False)
        return 1
    return 0


class _SetStopped(KeyboardInterrupt):
    """A Ctrl-C during one rule set's runs, with the rows of the rounds that had finished."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows


def _compare_set(args: argparse.Namespace, exe: Path | None, label: str, rules: Path, packets: int, core: int,
                 timeout_s: float, tmp: Path) -> list[dict[str, Any]]:
    """The rows of one rule set: our classifiers and the peer's, ``--repeats`` interleaved rounds
    (every classifier once a round, so that a slow spell of the machine lands on all alike)."""
    trace = Path(f"{rules}_trace")
    if args.traffic == "uniform":
        # No locality: every packet a random rule's random header (generated once and written for
        # the peer, so that both sides classify the same packets).
        w = load(PacketWorkloadSpec(kind="files", rules=str(rules), packets=packets, actions=args.actions))
        trace = tmp / f"{label}_uniform_trace"
        w.write_trace(str(trace), "classbench")
    else:
        w = load(PacketWorkloadSpec(kind="files", rules=str(rules), trace=str(trace), packets=packets,
                                    actions=args.actions))
    reference = _our_counts(w, "static")
    work: dict[str, float] = {}
    counts_ok: dict[str, bool] = {a: _our_counts(w, a) == reference for a in args.algos}
    points = [("ours", a) for a in args.algos] + [("peer", a) for a in (PEER_ALGOS if exe else ())]
    previous = os.sched_getaffinity(0)

    def measure(point: tuple[str, str]) -> float:
        side, algo = point
        if side == "ours":
            os.sched_setaffinity(0, {core})
            try:
                pps, work[algo] = interruptible(partial(w.bench, algo, 1))
            finally:
                os.sched_setaffinity(0, previous)
            return float(pps) / 1e6
        assert exe is not None
        mpps, counts = _run_peer(exe, rules, trace, packets, algo, core, tmp / f"{label}_{algo}.json", timeout_s)
        counts_ok.setdefault(algo, counts == reference)
        return mpps

    runs: dict[tuple[str, str], list[float]] = {}
    try:
        interleaved_rounds(points, args.repeats, measure, into=runs)
    except KeyboardInterrupt:
        raise _SetStopped(_set_rows(label, packets, runs, work, counts_ok)) from None
    return _set_rows(label, packets, runs, work, counts_ok)


def _set_rows(label: str, packets: int, runs: dict[tuple[str, str], list[float]], work: dict[str, float],
              counts_ok: dict[str, bool]) -> list[dict[str, Any]]:
    """One row per classifier measured at least once; ours carry their ratio to the peer whose
    median is highest, taken within each round both finished."""
    peers = {algo: values for (side, algo), values in runs.items() if side == "peer"}
    best_peer = max(peers, key=lambda a: statistics.median(peers[a])) if peers else None
    rows = []
    for (side, algo), values in runs.items():
        ratio = ([o / p for o, p in zip(values, peers[best_peer], strict=False)]
                 if best_peer and side == "ours" else [])
        rows.append({"rules_set": label, "side": side, "algo": algo, "packets": packets, "mpps_runs": values,
                     "mpps_median": statistics.median(values), "work_per_packet": work.get(algo),
                     "counts_agree": counts_ok[algo], "ratio_to": best_peer if ratio else None,
                     "ratio_runs": ratio})
    return rows


def _show(doc: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(doc, indent=1))
    else:
        _print(doc)


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
    if doc.get("stopped"):
        console.print(doc["stopped"], highlight=False, markup=False)
