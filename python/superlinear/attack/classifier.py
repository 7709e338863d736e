"""The attack on our packet classifier (``superlinear attack classifier``): an MRF classifier worker
classifies innocent packets for real while an adversary sends minimum-size packets for rules the
MRF list cannot bring forward (deep rules with long dependency chains, rotations over them, the
catch-all rule; paper §4.3); unprotected (FCFS) and behind SurgeProtector (WSJF on the HFFS queue,
drop-max, job sizes predicted from the flow's rule and its current position; thesis §3.5).

Kinds: the goodput and the displacement factor are **work-clocked** (the worker's exact work units
times a per-unit cost calibrated on this machine); the probe's work per packet is **work** (exact
counts); the run's CPU time is **measured**. The displacement factor is the innocent goodput lost
per attack bit (Eq. 3.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from superlinear import _native
from superlinear.attack.studies import COLORS, UNRESOLVED, log_space
from superlinear.common.defaults import config_defaults
from superlinear.common.errors import note
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row
from superlinear.output.figures import save_figure

Progress = Callable[[str], None]
#: The classifier attack's config defaults (crates/sched), asked of Rust.
_CLASSIFIER = config_defaults("attack_classifier")


@dataclass(frozen=True)
class ClassifierStudy:
    """The attack on one classifier worker, with and without SurgeProtector. Without ``rules``
    the paper's synthetic dependency chains (§4.3) with a catch-all rule are generated.
    ``adversaries`` and ``attack_fractions`` are the study's grid; the other fields default as the
    config does."""

    rules: str | None = _CLASSIFIER["rules"]
    trace: str | None = _CLASSIFIER["trace"]
    rule_format: str = _CLASSIFIER["rule_format"]
    actions: str = _CLASSIFIER["actions"]
    default_action: str = _CLASSIFIER["default_action"]
    trace_format: str = _CLASSIFIER["trace_format"]
    chains: int = _CLASSIFIER["chains"]
    depth: int = _CLASSIFIER["depth"]
    flows_per_chain: int = _CLASSIFIER["flows_per_chain"]
    alpha: float = _CLASSIFIER["alpha"]
    catch_all: float = _CLASSIFIER["catch_all"]
    packets: int | None = _CLASSIFIER["packets"]
    algo: str = _CLASSIFIER["algo"]
    estimator: str = _CLASSIFIER["estimator"]
    learn: str = _CLASSIFIER["learn"]
    adversaries: tuple[str, ...] = ("rotate", "catch-all")
    packet: str = _CLASSIFIER["packet"]
    attack_bytes: int = _CLASSIFIER["attack_bytes"]
    load: float = _CLASSIFIER["load"]
    attack_fractions: tuple[float, ...] = tuple(log_space(1e-4, 1.0, 9))
    policies: tuple[str, ...] = tuple(_CLASSIFIER["policies"])
    buffer: int = _CLASSIFIER["buffer"]
    us_per_work: float | None = _CLASSIFIER["us_per_work"]
    seed: int = _CLASSIFIER["seed"]
    threads: int = _CLASSIFIER["threads"]

    def native(self) -> dict[str, Any]:
        return {
            "rules": self.rules, "trace": self.trace, "rule_format": self.rule_format, "actions": self.actions,
            "default_action": self.default_action, "trace_format": self.trace_format, "chains": self.chains,
            "depth": self.depth, "flows_per_chain": self.flows_per_chain, "alpha": self.alpha,
            "catch_all": self.catch_all, "packets": self.packets, "algo": self.algo, "estimator": self.estimator,
            "learn": self.learn, "adversaries": list(self.adversaries), "packet": self.packet,
            "attack_bytes": self.attack_bytes, "load": self.load, "attack_fractions": list(self.attack_fractions),
            "policies": list(self.policies), "buffer": self.buffer, "us_per_work": self.us_per_work,
            "seed": self.seed, "threads": self.threads,
        }


def run_classifier_study(study: ClassifierStudy, progress: Progress | None = None) -> tuple[list[Row], dict[str, Any]]:
    """Runs every adversary; returns one row per (adversary, policy, attack rate) and a summary."""
    say = progress or (lambda _msg: None)
    say(f"{study.algo} vs {', '.join(study.adversaries)}")
    res = interruptible(partial(_native.sched_classifier_attack, study.native()))
    workload = res["workload"]
    rows: list[Row] = []
    summary: dict[str, Any] = {"workload": workload, "adversaries": {}}
    for adv in res["adversaries"]:
        name = adv["adversary"]
        base = {r["policy"]: r["outcome"]["goodput"] for r in adv["rows"] if r["attack_fraction"] == 0.0}
        for r in adv["rows"]:
            o = r["outcome"]
            rows.append({
                "panel": name, "kind": "work-clocked", "algo": study.algo, "estimator": study.estimator,
                "adversary": name, "policy": r["policy"], "rules": workload["rules"],
                "attack_fraction": r["attack_fraction"], "innocent_rate_gbps": adv["innocent_rate"] / 1e3,
                "attack_rate_gbps": r["attack_rate"] / 1e3, "goodput_gbps": o["goodput"] / 1e3,
                "goodput_no_attack_gbps": base[r["policy"]] / 1e3, "displaced_gbps": r["displaced"] / 1e3,
                "goodput_loss_fraction": r["displaced"] / base[r["policy"]] if base[r["policy"]] else 0.0,
                "displacement_factor": r["df"], "resolved": r["resolved"],
                "innocent_work_per_packet": o["innocent_work"] / max(o["innocent_served"], 1),
                "attack_work_per_packet": o["attack_work"] / max(o["attack_served"], 1),
                "innocent_dropped": o["innocent_dropped"], "attack_dropped": o["attack_dropped"],
                "attack_served": o["attack_served"], "estimate_error": o["estimate_error"],
                "utilisation": o["utilisation"], "cpu_ms_measured": o["cpu_ns"] / 1e6,
                "us_per_work": adv["us_per_work"],
            })
        summary["adversaries"][name] = {
            "targets": adv["targets"], "target_rules": adv["target_rules"],
            "target_depth_mean": adv["target_depth_mean"],
            "mean_work_innocent_alone": adv["mean_work"], "max_work": adv["max_work"],
            "probe_innocent_work": adv["probe_innocent_work"], "probe_attack_work": adv["probe_attack_work"],
            "probe_attack_packets": adv["probe_attack_packets"], "probe_kind": "work",
            "us_per_work": adv["us_per_work"], "calibrated": adv["calibrated"],
            "r_max_gbps": adv["r_max"] / 1e3, "innocent_rate_gbps": adv["innocent_rate"] / 1e3,
            "displacement_factor": {p: max((r["df"] for r in adv["rows"] if r["policy"] == p and r["resolved"]),
                                           default=0.0) for p in study.policies},
            "displacement_factor_kind": "work-clocked",
        }
    return rows, summary


def plot_classifier(out: Path, rows: list[Row], algo: str) -> list[Path]:
    """``attack-classifier-ALGO.png``: innocent goodput (top) and displacement factor (bottom)
    against the attack rate, one column per adversary."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    adversaries = list(dict.fromkeys(r["adversary"] for r in rows))
    fig, axes = plt.subplots(2, len(adversaries), figsize=(5.4 * len(adversaries), 7.6), squeeze=False)
    empty = []
    for col, adv in enumerate(adversaries):
        ax_g, ax_d = axes[0][col], axes[1][col]
        attacked = [r for r in rows if r["adversary"] == adv and r["attack_fraction"] > 0]
        for policy in dict.fromkeys(r["policy"] for r in attacked):
            rs = sorted((r for r in attacked if r["policy"] == policy), key=lambda r: r["attack_rate_gbps"])
            label = policy + (" (SurgeProtector)" if policy == "wsjf" else " (unprotected)" if policy == "fcfs"
                              else "")
            ax_g.plot([r["attack_rate_gbps"] for r in rs], [r["goodput_gbps"] for r in rs], "-o", ms=3,
                      color=COLORS.get(policy), label=label)
            resolved = [r for r in rs if r["resolved"]]
            ax_d.plot([r["attack_rate_gbps"] for r in resolved],
                      [max(r["displacement_factor"], 1e-3) for r in resolved], "-o", ms=3,
                      color=COLORS.get(policy), label=label)
        ax_g.axhline(attacked[0]["innocent_rate_gbps"], color="k", ls=":", lw=1, label="innocent offered")
        ax_g.set_title(f"{algo} classifier, {attacked[0]['rules']:,} rules, vs '{adv}'", fontsize=9)
        ax_g.set_ylabel("innocent goodput (Gbit/s, work-clocked)")
        ax_d.set_ylabel("displacement factor (innocent bits lost per attack bit; 0 drawn at 1e-3)", fontsize=8)
        drawn = [ax_g]
        if any(r["resolved"] for r in attacked):
            ax_d.axhline(1.0, color="k", ls="--", lw=1, label="DF = 1")
            ax_d.set_yscale("log")
            drawn.append(ax_d)
        else:
            # Only resolved rates are drawn here: with none the panel says so (a log axis over
            # nothing fails).
            empty.append(adv)
            ax_d.text(0.5, 0.5, "no attack rate resolved\n(fewer than 100 attack packets\nin the measured window)",
                      transform=ax_d.transAxes, ha="center", va="center", fontsize=9)
            ax_d.set_xticks([])
            ax_d.set_yticks([])
        for ax in drawn:
            ax.set_xscale("log")
            ax.grid(True, which="both", alpha=0.2)
            ax.legend(fontsize=7)
        for ax in (ax_g, ax_d):
            ax.set_xlabel("attack rate r_A (Gbit/s, work-clocked)")
    if empty:
        quoted = [f"'{a}'" for a in empty]
        which = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
        panels = "panels" if len(empty) > 1 else "panel"
        note(f"attack-classifier-{algo}.png: the displacement factor {panels} of {which} "
             f"{'are' if len(empty) > 1 else 'is'} empty: {UNRESOLVED}; give more --packets or higher --attack-rates")
    fig.tight_layout()
    return [save_figure(fig, out / f"attack-classifier-{algo}")]
