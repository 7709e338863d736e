"""Issue 17: the two-choice packet dispatcher's spelling, and the second work counter (entries
moved) and the imbalance figures in ``superlinear classify`` output and in experiment rows.
Generated rules and traces only (no ClassBench data in tests)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from superlinear.classify.workload import PacketWorkloadSpec
from superlinear.experiments.driver import Driver
from superlinear.experiments.spec import Experiment, Panel, Series
from superlinear.output.tables import summary_table

Cli = Callable[..., CompletedProcess[str]]


@pytest.fixture
def generated(cli: Cli, tmp_path: Path) -> Path:
    for args in (("gen-rules", "--rules-count", "200", "--depth", "3", "--out", str(tmp_path / "r.txt")),
                 ("gen-trace", "--rules-count", "200", "--depth", "3", "--flows-per-rule", "4", "--packets", "6000",
                  "--out", str(tmp_path / "t.bin"))):
        r = cli("classify", *args)
        assert r.returncode == 0, r.stderr
    return tmp_path


def _run(cli: Cli, d: Path, *extra: str) -> dict[str, object]:
    r = cli("classify", "--rules", str(d / "r.txt"), "--trace", str(d / "t.bin"), "--json", "--no-measure",
            "--repeats", "1", *extra)
    assert r.returncode == 0, r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


def test_two_choice_runs_checks_and_reports_imbalance_and_entries_moved(cli: Cli, generated: Path) -> None:
    doc = _run(cli, generated, "--workers", "8", "--dispatch", "two-choice", "--check")
    assert doc["dispatch"] == "two-choice:sip,dip,sport,dport,proto"
    check = doc["check"]
    assert isinstance(check, dict) and check["checked"] == 6000 and check["mismatches"] == 0
    p = doc["projected"]
    assert isinstance(p, dict)
    for key in ("load_imbalance", "work_imbalance"):
        assert doc[key] == p[key] and isinstance(p[key], float) and p[key] >= 1.0
    # MRF counts its upkeep: entries moved, summed, per worker and with the busiest worker's work.
    assert p["entries_moved_total"] > 0 and len(p["worker_entries_moved"]) == 8
    assert p["entries_moved_total"] == sum(p["worker_entries_moved"])
    assert p["work_with_moves_span"] >= p["work_span"]
    assert isinstance(doc["entries_moved_per_packet"], float) and doc["entries_moved_per_packet"] > 0
    workers = doc["workers"]
    assert isinstance(workers, list) and sum(w["entries_moved"] for w in workers) == p["entries_moved_total"]
    # Fields restrict it as they restrict RSS.
    assert _run(cli, generated, "--workers", "4", "--dispatch", "two-choice:dport")["dispatch"] == "two-choice:dport"


def test_the_static_list_moves_nothing_and_text_output_shows_both_counters(cli: Cli, generated: Path) -> None:
    doc = _run(cli, generated, "--workers", "4", "--algo", "static", "--dispatch", "two-choice")
    p = doc["projected"]
    assert isinstance(p, dict) and p["entries_moved_total"] == 0 and doc["entries_moved_per_packet"] == 0
    r = cli("classify", "--rules", str(generated / "r.txt"), "--trace", str(generated / "t.bin"), "--workers", "4",
            "--dispatch", "two-choice", "--no-measure", "--repeats", "1")
    assert r.returncode == 0, r.stderr
    assert "entries moved per packet" in r.stdout and "imbalance (busiest worker / mean): packets" in r.stdout


@pytest.mark.parametrize("spec", ["two-choice:", "two-choice:mac", "two-choice:dip/40"])
def test_bad_two_choice_spellings_are_one_line(cli: Cli, generated: Path, spec: str) -> None:
    r = cli("classify", "--rules", str(generated / "r.txt"), "--trace", str(generated / "t.bin"), "--workers", "4",
            "--dispatch", spec, "--no-measure")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert len([line for line in r.stderr.strip().splitlines() if line]) == 1, r.stderr


def test_experiment_rows_carry_imbalance_and_entries_moved() -> None:
    spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=99, depth=2, flows_per_rule=5, packets=8_000,
                              calibration=2_000)
    panel = Panel(name="t", title="tiny", workload=spec,
                  series=(Series("mrf", "two-choice"), Series("static", "two-choice")),
                  ks=(1, 4), requests=0, metric="packets")
    rows = Driver(measure=False, show_progress=False, repeats=1).run(
        Experiment(name="tinybal", description="tiny", panels=(panel,)))
    by = {(r["algo"], r["k"]): r for r in rows}
    for row in rows:
        assert row["load_imbalance"] >= 1.0 and row["work_imbalance"] >= 1.0
    mrf, static = by[("mrf", 4)], by[("static", 4)]
    assert mrf["entries_moved"] > 0 and mrf["entries_moved_per_request"] > 0
    assert mrf["work_with_moves_span"] >= mrf["work_span"] and mrf["speedup_work_with_moves"] > 0
    assert static["entries_moved"] == 0
    table = summary_table(rows, "t")
    assert "imbalance pkt / work" in [c.header for c in table.columns]


def test_spray_spreads_a_heavy_flow_and_keeps_every_verdict(cli: Cli, tmp_path: Path) -> None:
    # One flow carries half of the packets: a flow-affine dispatcher puts it on one worker.
    (tmp_path / "r.txt").write_text("drop src 10.0.0.0/8 dport 22\naccept dport 443\naccept src 10.0.0.0/8\n")
    lines = [f"{10 << 24 | i} {192 << 24 | 1} {1024 + i} 443 6" if i % 2 else f"{10 << 24} {192 << 24 | 1} 5 22 6"
             for i in range(20_000)]
    (tmp_path / "t.txt").write_text("\n".join(lines) + "\n")
    args = ("classify", "--rules", str(tmp_path / "r.txt"), "--trace", str(tmp_path / "t.txt"), "--json",
            "--no-measure", "--repeats", "1", "--workers", "8", "--check")
    docs = {}
    for dispatch in ("rss", "spray"):
        r = cli(*args, "--dispatch", dispatch)
        assert r.returncode == 0, r.stderr
        docs[dispatch] = json.loads(r.stdout)
    spray = docs["spray"]
    assert spray["dispatch"] == "spray:sip,dip,sport,dport,proto"
    assert spray["check"]["checked"] == 20_000 and spray["check"]["mismatches"] == 0
    assert docs["rss"]["load_imbalance"] >= 4.0
    assert spray["load_imbalance"] < 2.0, spray["load_imbalance"]
    assert spray["rule_matches"] == docs["rss"]["rule_matches"]


def test_several_dispatchers_route_the_same_streams(cli: Cli, generated: Path) -> None:
    one = _run(cli, generated, "--workers", "4")
    four = _run(cli, generated, "--workers", "4", "--dispatchers", "4")
    assert (one["dispatchers"], four["dispatchers"]) == (1, 4)
    p1, p4 = one["projected"], four["projected"]
    assert isinstance(p1, dict) and isinstance(p4, dict)
    assert (p1["dispatchers"], p4["dispatchers"]) == (1, 4)
    # RSS has no state: four dispatchers over four shares route exactly as one does.
    assert p4["worker_requests"] == p1["worker_requests"] and p4["worker_work"] == p1["worker_work"]
    assert p4["dispatcher_cpu_ns"] <= p4["dispatcher_cpu_total_ns"]
    assert p1["dispatcher_cpu_ns"] == p1["dispatcher_cpu_total_ns"]
    # A measured run with several dispatchers needs a core for each thread; where they do not fit,
    # the text says why.
    r = cli("classify", "--rules", str(generated / "r.txt"), "--trace", str(generated / "t.bin"), "--workers", "2",
            "--dispatchers", "2", "--repeats", "1")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "2 dispatchers, the slowest" in text
    cores = len(os.sched_getaffinity(0))
    assert ("Mpps measured" in text) if cores >= 4 else (f"measured: — (k + D = 4 > {cores} cores)" in text), text


@pytest.mark.parametrize(("extra", "needle"), [(("--dispatchers", "0"), "--dispatchers"),
                                               (("--dispatchers", "257"), "dispatchers must be 1 to 256"),
                                               (("--dispatchers", "2", "--updates", "u.txt"), "--dispatchers")])
def test_bad_dispatcher_counts_are_one_line(cli: Cli, generated: Path, extra: tuple[str, ...], needle: str) -> None:
    (generated / "u.txt").write_text("10 delete 1\n")
    r = cli("classify", "--rules", str(generated / "r.txt"), "--trace", str(generated / "t.bin"), "--workers", "2",
            "--no-measure", *[str(generated / e) if e == "u.txt" else e for e in extra])
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert needle in r.stderr.strip().splitlines()[-1], r.stderr


def test_the_measured_rate_in_json_is_the_median_of_the_measured_runs(cli: Cli, generated: Path) -> None:
    # The median run is chosen by its projected time; its own measured rate can be any run's, so
    # the document's measured rate is the median of the measured runs, as the text prints it.
    r = cli("classify", "--rules", str(generated / "r.txt"), "--trace", str(generated / "t.bin"), "--workers", "1",
            "--repeats", "3", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    runs = doc["mpps_measured_runs"]
    assert len(runs) == 3
    assert doc["mpps_measured"] == sorted(runs)[1]
