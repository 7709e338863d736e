"""``advise --rules`` and ``predict --rules``: every packet dispatcher scored by simulating the
classifier that will run (MRF with its dependencies), checked against real classify runs on the
project's own generated rule sets; ``--verify`` output; one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli as _cli
from test_cli import Cli, assert_clean_error

CANDIDATES = "rss:sip;rss:dip;rss:sip,dip;rss:dport;rss:sip,dip,sport,dport,proto;rule"


@pytest.fixture(scope="module", params=[(300, 2, 30), (500, 0, 10)], ids=["depth2", "independent"])
def rule_set(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A generated rule set and trace (dependency chains of depth 2, or independent rules)."""
    rules_count, depth, flows = request.param
    d = tmp_path_factory.mktemp(f"rules{depth}")
    rules, trace = d / "r.txt", d / "t.bin"
    assert _cli("classify", "gen-rules", "--rules-count", str(rules_count), "--depth", str(depth),
                   "--out", str(rules)).returncode == 0
    assert _cli("classify", "gen-trace", "--rules-count", str(rules_count), "--depth", str(depth),
                "--flows-per-rule", str(flows), "--packets", "16000", "--format", "binary",
                "--out", str(trace)).returncode == 0
    return rules, trace


@pytest.mark.parametrize("sample", [16_000, 8_000])
def test_every_candidate_within_ten_percent_of_the_classifier(cli: Cli, rule_set: tuple[Path, Path],
                                                             tmp_path: Path, sample: int) -> None:
    rules, trace = rule_set
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "8", "--candidates", CANDIDATES,
            "--sample", str(sample), "--verify", "6", "--json", "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = doc["rows"]
    assert len(rows) == 6 and all(row["speedup_work"] is not None for row in rows)
    for row in rows:
        assert row["predicted_low"] <= row["speedup_work_predicted"] <= row["predicted_high"]
        assert abs(row["prediction_error"]) < 0.10, row
        if sample == 16_000:  # the whole trace simulated: the same algorithm and dispatch, so exact
            assert row["model"] == "mrf exact simulation on 16,000 packets"
            assert row["speedup_work_predicted"] == pytest.approx(row["speedup_work"], rel=1e-12)
            assert row["predicted_low"] == row["predicted_high"] and not row["band_exceeds_limit"]
        else:
            assert row["model"] == "mrf simulation on 8,000 of 16,000 packets, extrapolated"
    best_real = max(row["speedup_work"] for row in rows)
    recommended = next(row for row in rows if row["recommended"])
    assert recommended["speedup_work"] >= 0.95 * best_real
    assert doc["config"]["recommended"] == recommended["dispatch"]


def test_verify_prints_predicted_against_obtained(cli: Cli, rule_set: tuple[Path, Path], tmp_path: Path) -> None:
    rules, trace = rule_set
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "2,8", "--candidates",
            "rss:sip;rss:dport;rule", "--verify", "2", "--out", str(tmp_path / "v"))
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    for fragment in ("model: mrf exact simulation on 16,000 packets", "verify: the real classifier", "obtained ×",
                     "error", "largest prediction error", "recommended:", "busiest worker", "ns/packet serial"):
        assert fragment in out, fragment
    assert "projected-time ranking" in out or "by projected time" in out
    for name in ("result.json", "result.csv", "advise.png", "advise.svg"):
        assert (tmp_path / "v" / name).stat().st_size > 100
    doc = json.loads((tmp_path / "v" / "result.json").read_text())
    verified = doc["config"]["verified"]
    assert len(verified) == 4 and {v["k"] for v in verified} == {2, 8}


def test_predict_rules_compare(cli: Cli, rule_set: tuple[Path, Path], tmp_path: Path) -> None:
    rules, trace = rule_set
    r = cli("predict", "--rules", str(rules), "--trace", str(trace), "--dispatch", "rss:sip,dip", "--k", "1,4,8",
            "--algo", "mrf-swap", "--compare", "--json", "--out", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [row["k"] for row in rows] == [1, 4, 8]
    assert rows[0]["speedup_work_predicted"] == pytest.approx(1.0)
    for row in rows:
        assert row["algo"] == "mrf-swap" and row["model"].startswith("mrf-swap exact simulation")
        assert row["speedup_work_predicted"] == pytest.approx(row["speedup_work"], rel=1e-12)
    static = cli("predict", "--rules", str(rules), "--trace", str(trace), "--dispatch", "rss:dport", "--k", "4",
                 "--algo", "static", "--compare", "--json", "--out", str(tmp_path / "s"))
    assert static.returncode == 0, static.stderr
    # The static list does the same work on every packet wherever it runs: speedup = the balance.
    row = json.loads(static.stdout)["rows"][0]
    assert row["speedup_work_predicted"] == pytest.approx(row["speedup_work"], rel=1e-12)
    assert row["speedup_work_predicted"] <= 4.0 + 1e-9


def test_bad_input_is_one_line(cli: Cli, rule_set: tuple[Path, Path], tmp_path: Path) -> None:
    rules, trace = rule_set
    out = str(tmp_path / "e")
    assert_clean_error(cli("advise", "--rules", str(rules), "--k", "8", "--out", out), "--trace")
    assert_clean_error(cli("advise", "--rules", str(rules), "--trace", str(trace), "--algo", "mtf", "--out", out),
                       "--algo", "mrf")
    assert_clean_error(cli("advise", "--rules", str(rules), "--trace", str(trace), "--candidates", "rss:bogus",
                           "--out", out), "bogus")
    assert_clean_error(cli("advise", "--workload", "zipf", "--requests", "100", "--verify", "--out", out),
                       "--verify")
    assert_clean_error(cli("predict", "--requests", "100", "--sample", "10", "--out", out), "--sample")
    assert_clean_error(cli("predict", "--rules", str(rules), "--trace", str(trace), "--dispatch", "nope", "--out",
                           out), "nope")
    assert_clean_error(cli("predict", "--rules", str(tmp_path / "missing.txt"), "--trace", str(trace), "--out", out),
                       "missing.txt")
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--sample", "0", "--out", out)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--sample" in r.stderr


def test_extrapolation_band_follows_the_sample_size() -> None:
    from math import exp, log

    from superlinear.analysis.classifier_model import extrapolation_band

    # Halves 9 and 11 around 10: d = ln(10/9); a quarter of the trace is two doublings away.
    lo, hi = extrapolation_band(10.0, [9.0, 11.0], 0.25)
    d = log(10 / 9)
    assert (lo, hi) == pytest.approx((10 * exp(-2 * d), 10 * exp(2 * d)))
    # Half the trace or more: one doubling's reach; agreeing halves: no band.
    assert extrapolation_band(10.0, [9.0, 11.0], 0.5) == pytest.approx((10 * exp(-d), 10 * exp(d)))
    assert extrapolation_band(10.0, [9.0, 11.0], 0.9) == pytest.approx((10 * exp(-d), 10 * exp(d)))
    assert extrapolation_band(5.0, [5.0, 5.0], 0.01) == (5.0, 5.0)


def test_short_samples_are_flagged_when_they_mislead(cli: Cli, tmp_path: Path) -> None:
    """A trace whose traffic changes halfway (first packets inside a fifth of the rules only, then
    all of them): a short prefix sample mispredicts, and its band must say so (every prediction
    off by more than 10 % reaches beyond ±10 %; the advisor prints the warning)."""
    rules = tmp_path / "r.txt"
    assert _cli("classify", "gen-rules", "--rules-count", "300", "--depth", "1", "--out", str(rules)).returncode == 0
    lines = rules.read_text().splitlines()
    head = [line for line in lines if not line.startswith("accept")]
    body = [line for line in lines if line.startswith("accept")]
    few = tmp_path / "few.txt"
    few.write_text("\n".join(head + body[: len(body) // 5]) + "\n")
    parts = []
    for name, r, n in (("a", few, 6000), ("b", rules, 10000)):
        t = tmp_path / f"{name}.txt"
        assert _cli("classify", "gen-trace", "--rules", str(r), "--packets", str(n), "--format", "classbench",
                    "--out", str(t)).returncode == 0
        parts.append(t.read_text())
    trace = tmp_path / "t.txt"
    trace.write_text("".join(parts))
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "8", "--candidates",
            "rss:sip,dip,sport,dport,proto;rss:dport;rule", "--sample", "4000", "--verify", "3", "--json",
            "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = doc["rows"]
    assert all(row["model"] == "mrf simulation on 4,000 of 16,000 packets, extrapolated" for row in rows)
    for row in rows:
        if abs(row["prediction_error"]) > 0.10:
            assert row["band_exceeds_limit"], row
    assert any(row["band_exceeds_limit"] for row in rows)
    assert doc["config"]["band_warning"].startswith("warning:")
    table = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "8", "--candidates", "rss:dport",
                "--sample", "4000", "--out", str(tmp_path / "b"))
    assert table.returncode == 0 and "raise --sample" in " ".join(table.stdout.split())
