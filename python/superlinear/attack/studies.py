"""Algorithmic complexity attacks and SurgeProtector (thesis ch. 3) and the HFFS queue (ch. 4):
the studies behind ``superlinear attack``, declared as data and run by one small driver.

* :class:`SimStudy`: the event-driven G/G/1/K simulator under the optimal attack of every
  policy; goodput and displacement factor (Eq. 3.1) against the attack rate, and the
  displacement factor against J_max / P_min. Kind of every number: **simulated** (a model with
  the true job sizes known, as in thesis §3.6.2), bounds **analytic**.
* :class:`WorkerStudy`: the attack on a real self-adjusting worker from the core registry,
  unprotected (FCFS) and behind SurgeProtector (WSJF with learned job sizes), with real work:
  service times are exact work units times a per-unit cost calibrated on this machine
  (**work-clocked**).
* :class:`QueueBench`: enqueue+dequeue pairs per second, HFFS against the binary heap, the
  B-tree and the min-max heap (**measured**, thread CPU time, one core).

Rates are kept in Mbit/s (bits per µs) by the engine and shown in Gbit/s.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear import _native
from superlinear.common.defaults import config_defaults
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row, ranged
from superlinear.experiments.repeats import interleaved_rounds
from superlinear.output.figures import save_figure

if TYPE_CHECKING:
    from superlinear._native import SweepRecord

Progress = Callable[[str], None]
#: Every scheduling policy the Rust registry knows, in its order.
ALL_POLICIES = tuple(p["name"] for p in _native.sched_policies())
#: The configs' defaults (crates/sched), asked of Rust: the one source of the fields' defaults below.
_TRAFFIC = config_defaults("attack_traffic")
_SWEEP = config_defaults("attack_sweep")
_KEY = config_defaults("attack_key")
#: Why a figure or panel of resolved attack rates is empty (crates/sched sweep.rs, ``MIN_ATTACK_PACKETS``).
UNRESOLVED = "no attack rate was resolved (at every rate fewer than 100 attack packets reached the measured window)"
COLORS = {"fcfs": "#1f77b4", "fq": "#9467bd", "sjf": "#ff7f0e", "wsjf": "#2ca02c", "wsjf-inorder": "#17becf"}


def log_space(lo: float, hi: float, n: int) -> list[float]:
    """``n`` values from ``lo`` to ``hi``, evenly spaced on a log scale."""
    if n == 1:
        return [hi]
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


@dataclass(frozen=True)
class Traffic:
    """Innocent traffic: size distributions (bytes, µs) or a trace of ``BYTES JOB_US`` lines."""

    packet: str = _TRAFFIC["packet"]
    job: str = _TRAFFIC["job"]
    bytes_min: int = _TRAFFIC["bytes_min"]
    bytes_max: int = _TRAFFIC["bytes_max"]
    job_max: float = _TRAFFIC["job_max"]
    trace: str | None = _TRAFFIC["trace"]
    flows: int = _TRAFFIC["flows"]

    def native(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SimStudy:
    """Displacement sweeps in the simulator: every policy at every attack rate, then the
    growth of the displacement factor with J_max / P_min."""

    traffic: Traffic = field(default_factory=Traffic)
    policies: tuple[str, ...] = ALL_POLICIES
    load: float = _SWEEP["load"]
    attack_rates_gbps: tuple[float, ...] | None = None  # default: 1e-4 .. 1 x r_max
    jmax_sweep: tuple[float, ...] = (5.0, 10.0, 20.0, 50.0)
    buffer: int = _SWEEP["buffer"]
    packets: int = _SWEEP["packets"]
    probe_jobs: int = _SWEEP["probe_jobs"]
    width: int = _SWEEP["width"]
    levels: int = _SWEEP["levels"]
    seed: int = _SWEEP["seed"]
    threads: int = _SWEEP["threads"]


@dataclass(frozen=True)
class WorkerStudy:
    """The attack on one real worker, with and without SurgeProtector. ``adversaries`` and
    ``attack_fractions`` are the study's grid; the other fields default as the config does."""

    algo: str = _KEY["algo"]
    adversaries: tuple[str, ...] = ("rotate", "absent")
    workload: str = _KEY["workload"]
    m: int = _KEY["m"]
    alpha: float = _KEY["alpha"]
    trace: str | None = _KEY["trace"]
    requests: int = _KEY["requests"]
    packet: str = _KEY["packet"]
    load: float = _KEY["load"]
    attack_fractions: tuple[float, ...] = tuple(log_space(1e-4, 1.0, 9))
    policies: tuple[str, ...] = tuple(_KEY["policies"])
    buffer: int = _KEY["buffer"]
    learn: str = _KEY["learn"]
    us_per_work: float | None = _KEY["us_per_work"]
    seed: int = _KEY["seed"]
    threads: int = _KEY["threads"]


@dataclass(frozen=True)
class QueueBench:
    """Hold-model queue benchmark: n queued, pairs of push + pop timed."""

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    pairs: int = 1_000_000
    queues: tuple[str, ...] = tuple(_native.sched_catalogue()["queues"])
    patterns: tuple[str, ...] = tuple(name for name, _ in _native.sched_catalogue()["patterns"])
    width: int = 64
    levels: int = 2
    seed: int = 1
    #: Rounds over every (n, pattern, queue), interleaved: a rate is the rounds' median [range].
    repeats: int = 3


# --------------------------------------------------------------------------------------------
# Simulation


def _sim_config(study: SimStudy, traffic: Traffic, policy: str, rates: list[float]) -> dict[str, Any]:
    return {**traffic.native(), "policy": policy, "load": study.load, "attack_rates": rates, "buffer": study.buffer,
            "packets": study.packets, "probe_jobs": study.probe_jobs, "width": study.width, "levels": study.levels,
            "seed": study.seed, "threads": study.threads}


def _sweep_rows(panel: str, sweep: SweepRecord, jmax: float) -> list[Row]:
    base = sweep["baseline"]["goodput"]
    rows = []
    for p in sweep["points"]:
        o = p["outcome"]
        rows.append({
            "panel": panel, "kind": "simulated", "policy": sweep["policy"], "job_max_us": jmax,
            "jmax_over_pmin_us_per_byte": jmax / (sweep["bits_min"] / 8),
            "innocent_rate_gbps": sweep["innocent_rate"] / 1e3, "r_max_gbps": sweep["r_max"] / 1e3,
            "attack_rate_gbps": p["attack_rate"] / 1e3, "attack_bytes": p["used"]["bits"] // 8,
            "attack_job_us": p["used"]["job_us"], "optimal_attack_job_us": p["optimal"]["job_us"],
            "goodput_gbps": o["goodput"] / 1e3, "goodput_no_attack_gbps": base / 1e3,
            "displaced_gbps": p["displaced"] / 1e3, "displacement_factor": p["df"], "resolved": p["resolved"],
            "innocent_dropped": o["innocent_dropped"], "attack_dropped": o["attack_dropped"],
            "attack_served": o["attack_served"], "utilisation": o["utilisation"],
        })
    return rows


def run_sim_study(study: SimStudy, progress: Progress | None = None) -> tuple[list[Row], dict[str, Any]]:
    """Runs the sweep and the J_max growth panel; returns rows and the per-policy summary."""
    say = progress or (lambda _msg: None)
    stats = interruptible(partial(_native.sched_innocent_stats, study.traffic.native()))
    r_max = stats["r_max"]
    rates = [r * 1e3 for r in study.attack_rates_gbps] if study.attack_rates_gbps else log_space(
        1e-4 * r_max, r_max, 17)
    rows: list[Row] = []
    summary: dict[str, Any] = {"r_max_gbps": r_max / 1e3, "mean_packet_bytes": stats["mean_bits"] / 8,
                               "mean_job_us": stats["mean_job_us"], "policies": {}}
    duration = study.packets * stats["mean_bits"] / (study.load * r_max)
    # Rates at which fewer than 100 attack packets reach the window cannot be resolved (see the
    # engine's sweep): start the default grids just above that.
    floor = 150 * study.traffic.bytes_min * 8 / (0.6 * duration)
    if floor > 0.1 * r_max and (not study.attack_rates_gbps or study.jmax_sweep):
        # The default grids start at the floor: above r_max they swept rates the link cannot
        # carry (`--packets 1`), and a grid needs a decade below r_max to show a maximum.
        least = math.ceil(study.packets * floor / (0.1 * r_max))
        raise SuperlinearError(f"--packets {study.packets:,}: too few for the default attack rates, which start "
                               "where 100 attack packets reach the measured window: above r_max / 10 here (r_max "
                               f"{r_max / 1e3:.3g} Gbit/s); give at least {least:,}, or --attack-rates")
    if not study.attack_rates_gbps:
        rates = log_space(max(1e-4 * r_max, floor), r_max, 17)
    main_sweeps: dict[str, SweepRecord] = {}
    for policy in study.policies:
        say(f"sweep: {policy}")
        config = _sim_config(study, study.traffic, policy, rates)
        sweep = main_sweeps[policy] = interruptible(partial(_native.sched_sweep, config))
        rows += _sweep_rows("sweep", sweep, study.traffic.job_max)
        best = max((p for p in sweep["points"] if p["resolved"]), key=lambda p: p["df"], default=sweep["points"][-1])
        summary["policies"][policy] = {
            "displacement_factor": sweep["displacement_factor"], "kind": "simulated",
            "at_attack_rate_gbps": best["attack_rate"] / 1e3, "attack_job_us": best["used"]["job_us"],
            "bound": sweep["bound"], "bound_kind": sweep["bound_kind"],
            "goodput_no_attack_gbps": sweep["baseline"]["goodput"] / 1e3,
            "resolved": any(p["resolved"] for p in sweep["points"]),
        }
    growth: list[Row] = []
    if study.jmax_sweep:
        # The FCFS/FQ optimum sits near r_A ≈ r_I · P_min / J_max: reach well below it. At the
        # study's own J_max the main sweep is the answer: the DF is a maximum over the rates swept,
        # so a second grid would print a second, different figure for the same J_max.
        for jmax in study.jmax_sweep:
            traffic = Traffic(**{**asdict(study.traffic), "job_max": jmax})
            lo = max(1e-5 * r_max * 10.0 / jmax, floor)
            jrates = log_space(lo, r_max, 16)
            for policy in study.policies:
                if jmax == study.traffic.job_max:
                    sweep = main_sweeps[policy]
                else:
                    say(f"J_max = {jmax:g} µs: {policy}")
                    sweep = interruptible(partial(_native.sched_sweep, _sim_config(study, traffic, policy, jrates)))
                pts = _sweep_rows("growth", sweep, jmax)
                rows += pts
                growth.append({"panel": "growth-summary", "kind": "simulated", "policy": policy, "job_max_us": jmax,
                               "jmax_over_pmin_us_per_byte": jmax / study.traffic.bytes_min,
                               "displacement_factor": sweep["displacement_factor"], "bound": sweep["bound"],
                               "bound_kind": sweep["bound_kind"]})
    rows += growth
    return rows, summary


def plot_sim(out: Path, rows: list[Row]) -> list[Path]:
    """``attack-sim.png``: goodput and DF against the attack rate; ``attack-growth.png``: DF
    against J_max / P_min."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    sweep = [r for r in rows if r["panel"] == "sweep"]
    if sweep and not any(r["resolved"] for r in sweep):
        # Only resolved rates are drawn: with none, both panels would be empty (and a log axis
        # over nothing fails), so the figure is left out and the table stands alone.
        note(f"attack-sim.png is not drawn: {UNRESOLVED}, so the table's displacement factors are 0; "
             "give more --packets or higher --attack-rates")
    elif sweep:
        fig, (ax_g, ax_d) = plt.subplots(1, 2, figsize=(11, 4.2))
        for policy in dict.fromkeys(r["policy"] for r in sweep):
            rs = sorted((r for r in sweep if r["policy"] == policy and r["resolved"]),
                        key=lambda r: r["attack_rate_gbps"])
            x = [r["attack_rate_gbps"] for r in rs]
            label = policy if rs else f"{policy} (no rate resolved)"
            ax_g.plot(x, [r["goodput_gbps"] for r in rs], "-o", ms=3, color=COLORS.get(policy), label=label)
            ax_d.plot(x, [max(r["displacement_factor"], 1e-3) for r in rs], "-o", ms=3, color=COLORS.get(policy),
                      label=label)
        ax_g.axhline(sweep[0]["innocent_rate_gbps"], color="k", ls=":", lw=1, label="innocent offered")
        ax_d.axhline(1.0, color="k", ls="--", lw=1, label="DF = 1 (Theorem 3 bound for WSJF)")
        for ax in (ax_g, ax_d):
            ax.set_xscale("log")
            ax.set_xlabel("attack rate r_A (Gbit/s)")
            ax.grid(True, which="both", alpha=0.2)
            ax.legend(fontsize=7)
        ax_d.set_yscale("log")
        ax_g.set_ylabel("innocent goodput o_I (Gbit/s)")
        ax_d.set_ylabel("displacement factor (displaced / r_A)")
        fig.suptitle("Optimal attack per policy, simulated G/G/1/K (true job sizes known)", fontsize=9)
        fig.tight_layout()
        paths.append(save_figure(fig, out / "attack-sim"))
    growth = [r for r in rows if r["panel"] == "growth-summary"]
    if growth:
        fig, ax = plt.subplots(figsize=(5.6, 4.2))
        for policy in dict.fromkeys(r["policy"] for r in growth):
            rs = sorted((r for r in growth if r["policy"] == policy), key=lambda r: r["job_max_us"])
            ax.plot([r["jmax_over_pmin_us_per_byte"] for r in rs], [max(r["displacement_factor"], 1e-3) for r in rs],
                    "-o", ms=4, color=COLORS.get(policy), label=f"{policy} (simulated)")
            if policy == "fcfs":
                ax.plot([r["jmax_over_pmin_us_per_byte"] for r in rs], [r["bound"] for r in rs], ":",
                        color=COLORS["fcfs"], label="fcfs lower bound, Eq. 3.4 (analytic)")
        ax.axhline(1.0, color="k", ls="--", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("J_max / P_min (µs per byte)")
        ax.set_ylabel("displacement factor")
        ax.grid(True, which="both", alpha=0.2)
        ax.legend(fontsize=7)
        fig.tight_layout()
        paths.append(save_figure(fig, out / "attack-growth"))
    return paths


# --------------------------------------------------------------------------------------------
# Real worker


def run_worker_study(study: WorkerStudy, progress: Progress | None = None) -> tuple[list[Row], dict[str, Any]]:
    say = progress or (lambda _msg: None)
    rows: list[Row] = []
    summary: dict[str, Any] = {"adversaries": {}}
    for adversary in study.adversaries:
        say(f"{study.algo} vs {adversary}")
        res = interruptible(partial(_native.sched_key_attack, {
            "algo": study.algo, "adversary": adversary, "workload": "trace" if study.trace else study.workload,
            "m": study.m, "alpha": study.alpha, "trace": study.trace, "requests": study.requests,
            "packet": study.packet, "load": study.load, "attack_fractions": list(study.attack_fractions),
            "policies": list(study.policies), "buffer": study.buffer, "learn": study.learn,
            "us_per_work": study.us_per_work, "seed": study.seed, "threads": study.threads,
        }))
        base = {r["policy"]: r["outcome"]["goodput"] for r in res["rows"] if r["attack_fraction"] == 0.0}
        for r in res["rows"]:
            o = r["outcome"]
            rows.append({
                "panel": adversary, "kind": "work-clocked", "algo": study.algo, "adversary": adversary,
                "policy": r["policy"], "items": res["items"], "attack_fraction": r["attack_fraction"],
                "innocent_rate_gbps": res["innocent_rate"] / 1e3, "attack_rate_gbps": r["attack_rate"] / 1e3,
                "goodput_gbps": o["goodput"] / 1e3, "goodput_no_attack_gbps": base[r["policy"]] / 1e3,
                "displaced_gbps": r["displaced"] / 1e3, "displacement_factor": r["df"], "resolved": r["resolved"],
                "innocent_work_per_packet": o["innocent_work"] / max(o["innocent_served"], 1),
                "attack_work_per_packet": o["attack_work"] / max(o["attack_served"], 1),
                "innocent_dropped": o["innocent_dropped"], "attack_dropped": o["attack_dropped"],
                "estimate_error": o["estimate_error"], "utilisation": o["utilisation"],
                "cpu_ms_measured": o["cpu_ns"] / 1e6, "us_per_work": res["us_per_work"],
            })
        summary["adversaries"][adversary] = {
            "items": res["items"], "mean_work_innocent_alone": res["mean_work"], "max_work": res["max_work"],
            "us_per_work": res["us_per_work"], "calibrated": res["calibrated"],
            "r_max_gbps": res["r_max"] / 1e3, "innocent_rate_gbps": res["innocent_rate"] / 1e3,
            "displacement_factor": {p: max((r["df"] for r in res["rows"] if r["policy"] == p and r["resolved"]),
                                           default=0.0) for p in study.policies},
        }
    return rows, summary


def plot_worker(out: Path, rows: list[Row], algo: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    adversaries = list(dict.fromkeys(r["adversary"] for r in rows))
    fig, axes = plt.subplots(1, len(adversaries), figsize=(5.4 * len(adversaries), 4.2), squeeze=False)
    for ax, adv in zip(axes[0], adversaries, strict=True):
        rs_adv = [r for r in rows if r["adversary"] == adv and r["attack_fraction"] > 0]
        for policy in dict.fromkeys(r["policy"] for r in rs_adv):
            rs = sorted((r for r in rs_adv if r["policy"] == policy), key=lambda r: r["attack_rate_gbps"])
            label = f"{policy}" + (" (SurgeProtector)" if policy == "wsjf" else " (unprotected)" if policy == "fcfs"
                                   else "")
            ax.plot([r["attack_rate_gbps"] for r in rs], [r["goodput_gbps"] for r in rs], "-o", ms=3,
                    color=COLORS.get(policy), label=label)
        ax.axhline(rs_adv[0]["innocent_rate_gbps"], color="k", ls=":", lw=1, label="innocent offered")
        ax.set_xscale("log")
        ax.set_xlabel("attack rate r_A (Gbit/s, work-clocked)")
        ax.set_ylabel("innocent goodput (Gbit/s)")
        ax.set_title(f"{algo} worker vs '{adv}' adversary", fontsize=9)
        ax.grid(True, which="both", alpha=0.2)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return [save_figure(fig, out / f"attack-worker-{algo}")]


# --------------------------------------------------------------------------------------------
# Queue benchmark


def run_queue_bench(bench: QueueBench, progress: Progress | None = None) -> list[Row]:
    """Every queue on every pattern and size, in ``bench.repeats`` rounds (each round all of them
    once, so a slow stretch of the machine touches every queue alike). A row's rate and its ratio
    to the binary heap are the median of the rounds, with their range (each round's ratio against
    the heap of the same round)."""
    say = progress or (lambda _msg: None)
    points = [(n, pattern, queue) for n in bench.sizes for pattern in bench.patterns for queue in bench.queues]
    measured: dict[tuple[int, str, str], list[Any]] = {}

    def measure(point: tuple[int, str, str]) -> Any:
        n, pattern, queue = point
        say(f"round {len(measured.get(point, [])) + 1}/{bench.repeats}, n = {n:,}: {queue} / {pattern}")
        return interruptible(partial(_native.sched_bench_queue, queue, pattern, n, bench.pairs, bench.width,
                                     bench.levels, bench.seed))

    interleaved_rounds(points, bench.repeats, measure, into=measured)
    # A queue that cannot run a pattern (the binary heap has no pop-max) answers None.
    rounds = {p: runs for p, runs in measured.items() if all(r is not None for r in runs)}
    rows: list[Row] = []
    for (n, pattern, queue), runs in rounds.items():
        heap = rounds.get((n, pattern, "binary-heap"))
        ratios = [r["pairs_per_s"] / h["pairs_per_s"] for r, h in zip(runs, heap, strict=True)] if heap else []
        rows.append({"kind": "measured", "queue": queue, "pattern": pattern, "n": n, "pairs": runs[0]["pairs"],
                     "repeats": len(runs), **ranged("pairs_per_s", [r["pairs_per_s"] for r in runs]),
                     "ns_per_pair": statistics.median(r["cpu_ns"] / max(r["pairs"], 1) for r in runs),
                     "priorities": bench.width ** bench.levels, "checksum": runs[0]["checksum"],
                     # The same seed in every round: the same operations, so the same checksum.
                     "checksum_equal": len({r["checksum"] for r in runs}) == 1,
                     **(ranged("vs_binary_heap", ratios) if ratios else {"vs_binary_heap": None})})
    return rows


def plot_queue_bench(out: Path, rows: list[Row]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    cols = min(3, len(patterns))
    nrows = math.ceil(len(patterns) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.8 * cols, 3.8 * nrows), squeeze=False)
    colors = {"hffs": "#2ca02c", "binary-heap": "#1f77b4", "btree": "#9467bd", "minmax-heap": "#ff7f0e"}
    for ax, pattern in zip(axes.flat, patterns, strict=False):
        for queue in dict.fromkeys(r["queue"] for r in rows):
            rs = sorted((r for r in rows if r["pattern"] == pattern and r["queue"] == queue), key=lambda r: r["n"])
            if rs:
                med = [r["pairs_per_s"] / 1e6 for r in rs]
                ax.errorbar([r["n"] for r in rs], med,
                            yerr=[[m - r["pairs_per_s_lo"] / 1e6 for m, r in zip(med, rs, strict=True)],
                                  [r["pairs_per_s_hi"] / 1e6 - m for m, r in zip(med, rs, strict=True)]],
                            fmt="-o", ms=3, capsize=2, color=colors.get(queue), label=queue)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(pattern, fontsize=9)
        ax.set_xlabel("queued elements n")
        ax.set_ylabel("M enqueue+dequeue pairs/s")
        ax.grid(True, which="both", alpha=0.2)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(patterns):]:
        ax.axis("off")
    fig.suptitle("Priority queues, one core, measured (thread CPU time; median and range of the rounds)", fontsize=9)
    fig.tight_layout()
    return [save_figure(fig, out / "queue-bench")]
