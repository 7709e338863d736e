"""``superlinear attack``: what the studies make of unusual input. Plots of runs in which no
attack rate was resolved, innocent packet sizes outside the range the work-clocked studies
draw, and float flags given ``inf`` or ``nan``: each either runs as asked (with a note where
something is left out) or is refused in one line naming the flag.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from superlinear.attack.classifier import plot_classifier
from superlinear.attack.cli import WORK_CLOCKED_BYTES, _check_packet_size
from superlinear.attack.studies import plot_sim
from superlinear.common.errors import SuperlinearError

Cli = Callable[..., CompletedProcess[str]]


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *fragments: str) -> str:
    """Runs the CLI in-process and checks a refusal: exit 2, one line on stderr holding every
    fragment, no traceback (argparse's refusals exit through SystemExit)."""
    from superlinear.cli import main

    try:
        code = main(args)
    except SystemExit as e:
        code = e.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1, err
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------------------------
# Plots of runs with no resolved attack rate (they failed with matplotlib's "Data cannot be
# log-scaled because all values are <= 0." after the results were written, exit 2).


def _sweep_row(policy: str, rate: float, resolved: bool) -> dict[str, Any]:
    return {"panel": "sweep", "policy": policy, "attack_rate_gbps": rate, "resolved": resolved,
            "goodput_gbps": 7.5, "displacement_factor": 0.0 if not resolved else 2.0, "innocent_rate_gbps": 7.8}


def test_sim_plot_with_no_resolved_rate_is_left_out_with_a_note(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_sweep_row(p, 1e-4, False) for p in ("fcfs", "wsjf")]
    assert plot_sim(tmp_path, rows) == []
    err = capsys.readouterr().err
    assert err.startswith("superlinear: note: attack-sim.png is not drawn: no attack rate was resolved"), err
    assert "--packets" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "attack-sim.png").exists()


def test_sim_plot_draws_the_policies_that_resolved_a_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # fcfs resolved two rates; wsjf none: the figure is drawn, wsjf's legend says so.
    rows = [_sweep_row("fcfs", 0.1, True), _sweep_row("fcfs", 1.0, True), _sweep_row("wsjf", 0.1, False)]
    paths = plot_sim(tmp_path, rows)
    assert [p.name for p in paths] == ["attack-sim.png"] and paths[0].stat().st_size > 1000
    assert capsys.readouterr().err == ""


def _classifier_row(adversary: str, policy: str, fraction: float, resolved: bool) -> dict[str, Any]:
    return {"adversary": adversary, "policy": policy, "attack_fraction": fraction, "attack_rate_gbps": 2 * fraction,
            "goodput_gbps": 0.0, "resolved": resolved, "displacement_factor": 0.0, "innocent_rate_gbps": 2.0,
            "rules": 11}


def test_classifier_plot_with_no_resolved_rate_says_so_in_the_empty_panel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_classifier_row(a, p, f, resolved=a == "deep" and f > 0.01)
            for a in ("rotate", "catch-all", "deep") for p in ("fcfs", "wsjf") for f in (0.0, 0.001, 0.1, 1.0)]
    paths = plot_classifier(tmp_path, rows, "mrf")
    assert [p.name for p in paths] == ["attack-classifier-mrf.png"] and paths[0].stat().st_size > 1000
    err = capsys.readouterr().err.strip()
    assert err == ("superlinear: note: attack-classifier-mrf.png: the displacement factor panels of 'rotate' and "
                   "'catch-all' are empty: no attack rate was resolved (at every rate fewer than 100 attack packets "
                   "reached the measured window); give more --packets or higher --attack-rates"), err


def test_runs_with_no_resolved_rate_exit_0_with_their_results(cli: Cli, tmp_path: Path) -> None:
    for study, args in (("sim", ["--quick", "--attack-rates", "0.0001", "--no-growth", "--policies", "fcfs,wsjf"]),
                        ("classifier", ["--chains", "5", "--depth", "1", "--packets", "200", "--attack-rates",
                                        "0.0001", "--us-per-work", "0.01", "--adversary", "catch-all"])):
        out = tmp_path / study
        r = cli("attack", study, *args, "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert "error" not in r.stderr and "Traceback" not in r.stderr
        assert "superlinear: note:" in r.stderr and "no attack rate was resolved" in r.stderr
        doc = json.loads((out / "result.json").read_text())
        assert doc["rows"] and not any(row["resolved"] for row in doc["rows"] if row.get("attack_fraction", 1) > 0)
        assert "Displacement factor" in r.stdout or "displacement factor" in r.stdout
        assert "below its analytic lower bound" not in r.stdout  # a DF of no resolved rate is no figure


# ---------------------------------------------------------------------------------------------
# --packet-size of worker and classifier: refused outside 64..1500 bytes, as `attack sim`
# refuses it outside --pmin..--pmax (they were cut into the range without a word).


@pytest.mark.parametrize("study", ["worker", "classifier"])
@pytest.mark.parametrize(("spec", "shown"), [("const:70000", "70000"), ("const:1e12", "1000000000000"),
                                             ("const:10", "10"), ("uniform:10:1000", "10"),
                                             ("uniform:0:100", "0"), ("bimodal:64:9000:0.5", "9000"),
                                             ("const:1500.5", "1500.5")])
def test_packet_sizes_outside_the_range_are_refused(study: str, spec: str, shown: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, ["attack", study, "--quick", "--packet-size", spec, "--out", str(tmp_path / "o")],
            f"--packet-size: {shown} bytes is outside the packet sizes 64..1500")
    assert not (tmp_path / "o").exists()


def test_packet_sizes_inside_the_range_and_spreads_pass_the_check() -> None:
    lo, hi = WORK_CLOCKED_BYTES
    for spec in (f"const:{lo}", f"const:{hi}", "uniform:64:1500", "bimodal:64:1500:1", "normal:1250:300",
                 "exp:700", "lognormal:500:2"):
        _check_packet_size(spec)  # tails of a spread are cut, as in the simulator
    # Malformed specs are the engine parser's to name (its message is more precise).
    for spec in ("const:abc", "const:0", "uniform:100:50", "nonsense:5", "const:inf"):
        _check_packet_size(spec)
    with pytest.raises(SuperlinearError, match="--packet-size: 63 bytes"):
        _check_packet_size("const:63")


def test_the_simulators_packet_size_check_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, ["attack", "sim", "--quick", "--packet-size", "const:70000", "--out", str(tmp_path / "o")],
            "--packet-size: 70000 bytes is outside the packet sizes 64..1500 (--pmin, --pmax)")


# ---------------------------------------------------------------------------------------------
# Float flags given inf, -inf or nan: one line naming the flag (the engine's checks named its
# config fields: "attack_key config: field 'load': inf is not a finite number"; `sim --load inf`
# ended in a ZeroDivisionError traceback).

FLOAT_FLAGS = [
    ("sim", "--jmax"), ("sim", "--load"), ("sim", "--attack-rates"), ("sim", "--jmax-sweep"),
    ("worker", "--alpha"), ("worker", "--load"), ("worker", "--us-per-work"), ("worker", "--attack-rates"),
    ("classifier", "--alpha"), ("classifier", "--catch-all"), ("classifier", "--load"),
    ("classifier", "--us-per-work"), ("classifier", "--attack-rates"),
]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize(("study", "flag"), FLOAT_FLAGS)
def test_non_finite_float_flags_are_refused_by_name(study: str, flag: str, value: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, ["attack", study, "--quick", f"{flag}={value}", "--out", str(tmp_path / "o")], flag)
    assert "config" not in line and "field" not in line, line


def test_the_finite_checks_wording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path / "o")]
    refused(capsys, ["attack", "worker", "--load", "inf", *out], "argument --load: must be a finite number, got inf")
    refused(capsys, ["attack", "classifier", "--alpha", "inf", *out],
            "argument --alpha: must be a finite number, got inf")
    refused(capsys, ["attack", "sim", "--load", "inf", *out], "argument --load: must be a finite number, got inf")
    refused(capsys, ["attack", "sim", "--attack-rates", "1,inf", *out],
            "--attack-rates: values must be finite numbers, got inf")


def test_a_sim_load_too_small_to_finish_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --load 1e-300 was taken: the simulated time grows as 1 / load and every attack packet in it
    # is stepped, so the run would have taken years.
    refused(capsys, ["attack", "sim", "--load", "1e-300", "--out", str(tmp_path / "o")],
            "argument --load: at least 0.01 (the simulated time grows as 1 / load")


def test_too_few_packets_for_the_default_rates_are_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # `sim --packets 1` swept a default grid that started above r_max (the table read "at r_A
    # 106 Gbit/s" with r_max 9.47) and exited 0.
    refused(capsys, ["attack", "sim", "--packets", "1", "--out", str(tmp_path / "o")],
            "--packets 1: too few for the default attack rates", "give at least", "or --attack-rates")


def test_a_worker_trace_shorter_than_requests_is_refused_and_its_length_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``attack worker --trace T --requests 10`` on 3 keys served 3 and recorded 10, and a zipf workload."""
    from superlinear.cli import main

    trace = tmp_path / "keys.txt"
    trace.write_text("1\n2\n3\n", encoding="utf-8")
    refused(capsys, ["attack", "worker", "--trace", str(trace), "--requests", "10", "--out", str(tmp_path / "a")],
            "--requests 10", "holds only 3 keys")
    assert not (tmp_path / "a").exists()
    assert main(["attack", "worker", "--trace", str(trace), "--adversary", "absent", "--out", str(tmp_path / "b")]) == 0
    config = json.loads((tmp_path / "b" / "result.json").read_text(encoding="utf-8"))["config"]
    assert (config["workload"], config["requests"]) == ("trace", 3)
