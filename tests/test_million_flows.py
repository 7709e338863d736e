"""``reproduce million-flows`` at tiny sizes: the declared experiment run by the shared driver
gives every series its memory per worker as exact counts (own, shared and hot bytes, distinct
rules and flows per worker), the working-set law's prediction where the law applies, the cache
level that holds the hot state, and findings in words; cache sizes are read from a sysfs-shaped
folder. Workloads are generated here; nothing reads ../shared."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from subprocess import CompletedProcess

from superlinear.classify.footprint import cache_levels, fits, level_size
from superlinear.experiments import REGISTRY, million_flows
from superlinear.experiments.driver import Driver, with_timed_window
from superlinear.experiments.packets import synthetic
from superlinear.experiments.spec import Experiment

Cli = Callable[..., CompletedProcess[str]]

RULES, PER_RULE, PACKETS = 20, 5, 3000


def _tiny() -> Experiment:
    exp = million_flows.experiment(quick=True)
    panel = replace(exp.panels[0], name="tiny", workload=synthetic(RULES, True, flows=PER_RULE, packets=PACKETS),
                    ks=(1, 2, 4), warmup=PACKETS // 4)
    return with_timed_window(replace(exp, panels=(panel,)), 0)


def test_declared_shape() -> None:
    assert REGISTRY["million-flows"] is million_flows.experiment
    full, quick = million_flows.experiment(), million_flows.experiment(quick=True)
    assert [p.name for p in full.panels] == ["f1e5", "f1e6"] and [p.name for p in quick.panels] == ["f1e4", "f1e5"]
    for p, flows in zip(full.panels, (100_000, 1_000_000), strict=True):
        assert p.footprint and p.ks == (1, 2, 4, 8, 16, 32)
        assert p.workload.synthetic_rules * p.workload.flows_per_rule == flows
    assert {s.algo for s in full.panels[0].series} == {"static", "mrf", "tuple-merge", "rule-cache",
                                                       "rule-cache-flow"}


def test_tiny_run_counts_memory_exactly() -> None:
    exp = _tiny()
    rows = Driver(measure=False, show_progress=False, repeats=1).run(exp)
    assert len(rows) == 5 * 3
    by = {(r["algo"], r["k"]): r for r in rows}
    for k in (1, 2, 4):
        static, mrf, flow = by[("static", k)], by[("mrf", k)], by[("rule-cache-flow", k)]
        # Static: nothing of its own, reads the whole compact table (every rule is hit).
        assert static["own_bytes"] == 0 and static["shared_bytes"] == RULES * static["hot_item_bytes"]
        assert static["hot_bytes_max"] == static["shared_bytes"]
        # MRF: an order entry (4 bytes), a prefilter key (8) and a label (8) per rule; hot = its
        # active rules.
        assert mrf["own_bytes"] == RULES * 20
        assert mrf["hot_bytes_max"] == mrf["rules_per_worker_max"] * mrf["hot_item_bytes"]
        # The flow cache: hot = its flows' entries; every flow on exactly one worker.
        assert flow["hot_bytes_max"] == flow["flows_per_worker_max"] * flow["hot_item_bytes"]
        assert flow["flow_cache_entries"] == 4096 and flow["law_items"] == "flows"
        assert 0.0 <= flow["law_hit_rate"] <= 1.0
        # Tuple-space workers: the whole index, the same at every k.
        for algo in ("tuple-merge", "rule-cache"):
            r = by[(algo, k)]
            assert r["hot_bytes_max"] == r["own_bytes"] == by[(algo, 1)]["own_bytes"] > 0
            assert r["law_items"] is None and r["law_working_set_max"] is None
    assert by[("rule-cache-flow", 1)]["flows_per_worker_max"] == RULES * PER_RULE
    assert by[("mrf", 1)]["rules_per_worker_max"] == RULES
    assert by[("mrf", 1)]["law_speedup_work"] == 1.0
    # The rule-aware dispatcher keeps each rule's flows on one worker: the active rules split.
    assert by[("mrf", 4)]["rules_per_worker_max"] < RULES
    assert by[("rule-cache-flow", 4)]["flows_per_worker_max"] < RULES * PER_RULE
    lines = million_flows.findings(rows)
    assert len(lines) == 5 and all("exact count" in line and "superlinear from" in line for line in lines)


def test_first_k_needs_every_larger_k() -> None:
    rows = [{"k": 1, "speedup_projected": 1.0}, {"k": 2, "speedup_projected": 3.0},
            {"k": 4, "speedup_projected": 3.5}, {"k": 8, "speedup_projected": 9.0}]
    assert million_flows.first_k(rows, "projected") == 8
    rows[2]["speedup_projected"] = 5.0
    assert million_flows.first_k(rows, "projected") == 2
    rows[3]["speedup_projected"] = 7.0
    assert million_flows.first_k(rows, "projected") is None


def test_cache_levels_from_sysfs(tmp_path: Path) -> None:
    for i, (level, kind, size) in enumerate(((1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "512K"),
                                             (3, "Unified", "32768K"))):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    levels = cache_levels(tmp_path)
    assert levels == {"L1d": 32 << 10, "L2": 512 << 10, "L3": 32 << 20}
    assert [fits(b, levels) for b in (100, 32 << 10, (32 << 10) + 1, 40 << 20, None)] == \
        ["L1d", "L1d", "L2", "DRAM", None]
    assert fits(1, {}) is None and level_size("1M") == 1 << 20
    assert cache_levels(tmp_path / "absent") == {}


def test_cli_refuses_an_unknown_panel(cli: Cli, tmp_path: Path) -> None:
    r = cli("reproduce", "million-flows", "--quick", "--panel", "f1e9", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown panel(s) f1e9 for million-flows" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
