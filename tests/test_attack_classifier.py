"""``superlinear attack classifier``: the attack on our MRF packet classifier, with and without
SurgeProtector, through the CLI as a user runs it.

Small generated rule sets only (never ../shared data). Assertions are on work-clocked displacement
factors with wide margins and on exact work counts (deterministic for the seed); never on timings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

Cli = Callable[..., CompletedProcess[str]]


def test_surgeprotector_bounds_the_attacks_on_the_synthetic_chains(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "c"
    r = cli("attack", "classifier", "--chains", "100", "--depth", "4", "--packets", "12000",
            "--adversary", "rotate,catch-all,deep", "--attack-rate", "0.003,0.01,0.05", "--us-per-work", "0.001",
            "--buffer", "256", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    s = doc["summary"]
    assert s["workload"]["rules"] == 501 and s["workload"]["max_dependency_depth"] == 5
    for adversary in ("rotate", "catch-all"):
        a = s["adversaries"][adversary]
        df = a["displacement_factor"]
        # Without the stage the attack displaces many innocent bits per attack bit; with it, almost none.
        assert df["fcfs"] > 5, (adversary, df)
        assert df["wsjf"] < 0.5, (adversary, df)
        assert df["fcfs"] > 20 * max(df["wsjf"], 0.01), (adversary, df)
        # Exact work: every attack packet costs far more than an innocent one.
        assert a["probe_attack_work"] > 10 * a["probe_innocent_work"], (adversary, a)
    assert s["adversaries"]["catch-all"]["target_rules"] == [500]
    assert s["adversaries"]["deep"]["targets"] == 1
    rows = doc["rows"]
    assert all(row["kind"] == "work-clocked" for row in rows)
    hit = [x for x in rows if x["policy"] == "fcfs" and x["attack_fraction"] == 0.05 and x["adversary"] != "deep"]
    assert all(x["attack_work_per_packet"] > 5 * x["innocent_work_per_packet"] for x in hit)
    assert (out / "result.csv").stat().st_size > 0
    for name in ("attack-classifier-mrf.png", "attack-classifier-mrf.svg"):
        assert (out / name).stat().st_size > 1000


def _rule_file(tmp_path: Path) -> Path:
    """80 chains of three rules (specific accept, wider drop, port-wide accept) and a final
    catch-all drop, in the native format."""
    lines = ["default accept"]
    for port in range(1, 81):
        lines += [f"accept src 10.0.0.1 dport {port} proto udp", f"drop src 10.0.0.0/16 dport {port} proto udp",
                  f"accept dport {port} proto udp"]
    lines.append("drop")
    path = tmp_path / "rules.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rule_file_with_generated_headers(cli: Cli, tmp_path: Path) -> None:
    rules = _rule_file(tmp_path)
    r = cli("attack", "classifier", "--rules", str(rules), "--packets", "4000", "--adversary", "catch-all",
            "--estimator", "learned", "--attack-rates", "0.01,0.05", "--us-per-work", "0.001",
            "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["summary"]["workload"]["rules"] == 241
    assert doc["summary"]["adversaries"]["catch-all"]["target_rules"] == [240]
    assert doc["config"]["estimator"] == "learned"


def test_help_and_listing(cli: Cli) -> None:
    r = cli("attack", "classifier", "--help")
    assert r.returncode == 0 and "--attack-rates" in r.stdout and "catch-all" in r.stdout
    doc = json.loads(cli("attack", "policies", "--json").stdout)
    assert {a["name"] for a in doc["classifier_adversaries"]} == {"deep", "rotate", "catch-all"}


def test_user_mistakes_are_one_line_errors(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    check = one_line_mistake

    out = str(tmp_path / "o")
    small = ["--chains", "20", "--packets", "500", "--out", out]
    rules = _rule_file(tmp_path)
    check(["attack", "classifier", "--rules", str(tmp_path / "missing.txt"), "--out", out], "--rules", "no such file")
    check(["attack", "classifier", "--trace", str(rules), "--out", out], "--trace needs --rules")
    check(["attack", "classifier", "--adversary", "syn-flood", *small], "--adversary", "syn-flood")
    check(["attack", "classifier", "--adversary", "rotate:0", *small], "rotate:N")
    check(["attack", "classifier", "--algo", "tcam", *small], "--algo", "tcam")
    check(["attack", "classifier", "--attack-rate", "0.1,x", *small], "--attack-rates", "'x'")
    check(["attack", "classifier", "--depth", "40", *small], "--depth 40: at most 32")
    check(["attack", "classifier", "--flows", "70000", *small], "--flows 70,000: at most 64,511")
    check(["attack", "classifier", "--attack-bytes", "9000", *small], "1 to 1500 bytes")
    bad = tmp_path / "bad.rules"
    bad.write_text("accept dport 80\naccept dport banana\n")
    check(["attack", "classifier", "--rules", str(bad), "--out", out], f"{bad}:2")
    # The catch-all is shadowed by an earlier match-everything rule: nothing reaches it.
    shadow = tmp_path / "shadow.rules"
    shadow.write_text("accept\ndrop\n")
    check(["attack", "classifier", "--rules", str(shadow), "--adversary", "catch-all", "--packets", "100",
           "--out", out], "catch-all", "final rule 1")
