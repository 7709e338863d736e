"""USL fitting: the seed's TeraSort data, recovery of known coefficients, and the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import numpy as np
import pytest

from superlinear.analysis.usl import USLError, fit, usl

Cli = Callable[..., CompletedProcess[str]]

# Seed Table 2: TeraSort on BigMem, mean runtime ± standard error per node count.
TABLE2 = {1: (13057, 606), 2: (6347, 541), 3: (4444, 396), 5: (2065, 147), 10: (893, 27)}


def test_terasort_table2_is_superlinear_with_negative_sigma() -> None:
    p = list(TABLE2)
    speedup = [TABLE2[1][0] / TABLE2[q][0] for q in p]
    assert all(s > q for s, q in zip(speedup[1:], p[1:], strict=True) if q in (2, 5, 10))
    result = fit(p, speedup, fixed_gamma=1.0)
    sigma, kappa, _ = result.coefficients()
    assert sigma < 0 < kappa
    assert result.derived["superlinear"]
    assert result.derived["crossover_p"] == int(np.ceil(abs(sigma) / kappa))
    assert "then payback" in result.derived["summary"]
    free = fit(p, speedup)
    assert free.sigma.value < 0


@pytest.mark.parametrize("ps", [[1, 2, 4, 8], list(range(1, 33))])
def test_exactly_linear_data_is_called_linear_whatever_the_rounding(ps: list[int]) -> None:
    # The fit lands at σ, κ ≈ ±1e-18: their signs once read as "superlinear up to p ≈ 3, then
    # payback; peak 4.07e+08" or "sublinear; retrograde ... Amdahl ceiling 9.2e17".
    for gamma in (None, 1.0):
        result = fit(ps, [float(p) for p in ps], fixed_gamma=gamma)
        assert result.derived["summary"] == "linear" and not result.derived["superlinear"]
        assert "peak_p" not in result.derived and "amdahl_ceiling" not in result.derived
    # A small but real coefficient is still seen.
    near = fit(ps, [float(usl(p, -1e-4, 0.0, 1.0)) for p in ps], fixed_gamma=1.0)
    assert near.derived["superlinear"]


@pytest.mark.parametrize(("sigma", "kappa", "gamma"), [(0.05, 0.002, 100.0), (-0.03, 0.0006, 1.0)])
def test_known_coefficients_are_recovered_within_their_intervals(sigma: float, kappa: float, gamma: float) -> None:
    rng = np.random.default_rng(7)
    ps = [p for p in (1, 2, 4, 8, 12, 16, 24, 32, 48) for _ in range(4)]
    ys = [float(usl(p, sigma, kappa, gamma)) * (1 + 0.02 * rng.standard_normal()) for p in ps]
    result = fit(ps, ys)
    assert result.weighted and result.dof == 9 - 3
    for est, true in ((result.sigma, sigma), (result.kappa, kappa), (result.gamma, gamma)):
        assert est.ci95 is not None
        assert est.ci95[0] <= true <= est.ci95[1], (est, true)
    pred = result.predict([64.0])[0]
    assert pred["pi_low"] is not None and pred["pi_high"] is not None and pred["ci_low"] is not None
    assert pred["pi_low"] <= pred["ci_low"] <= pred["x"] <= pred["ci_high"] <= pred["pi_high"]


@pytest.mark.parametrize(
    ("p", "y", "message"),
    [
        ([1, 2, 2], [1.0, 2.0, 2.1], "3 or more distinct p"),
        ([1, 2, 3], [1.0, 0.0, 3.0], "must be positive"),
        ([0, 2, 3], [1.0, 2.0, 3.0], "must be positive"),
        ([1, 2, 3], [2.0, 2.0, 2.0], "all y values are equal"),
        ([1, 2, 1e308], [1.0, 2.0, 1e308], "at most 1e\\+100"),
    ],
)
def test_undetermined_data_is_rejected(p: list[float], y: list[float], message: str) -> None:
    with pytest.raises(USLError, match=message):
        fit(p, y)


def test_cli_fit_predict_and_errors(cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "table2.csv"
    data.write_text("p,T,se\n" + "".join(f"{p},{t},{e}\n" for p, (t, e) in TABLE2.items()))
    r = cli("usl", "predict", str(data), "--y", "T", "--yerr", "se", "--runtime", "--at", "12,20", "--json",
            "--out", str(tmp_path / "plot"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["sigma"]["value"] < 0 and doc["weighted"]
    assert [row["p"] for row in doc["predictions"]] == [12.0, 20.0]
    assert (tmp_path / "plot.png").exists() and (tmp_path / "plot.svg").exists()

    bad = tmp_path / "bad.csv"
    bad.write_text("p,speedup\n1,1\n2,two\n3,3\n")
    r = cli("usl", "fit", str(bad))
    assert r.returncode == 2 and "bad.csv:3" in r.stderr and "Traceback" not in r.stderr
    few = tmp_path / "few.csv"
    few.write_text("p,speedup\n1,1\n2,2\n")
    r = cli("usl", "fit", str(few))
    assert r.returncode == 2 and "3 or more distinct p" in r.stderr
    r = cli("usl", "fit", str(tmp_path / "missing.csv"))
    assert r.returncode == 2 and "missing.csv" in r.stderr and "Traceback" not in r.stderr
    zero_se = tmp_path / "zero_se.csv"
    zero_se.write_text("p,T,se\n1,1,0.1\n2,1.9,0\n4,3.5,0.1\n")
    r = cli("usl", "fit", str(zero_se), "--y", "T", "--yerr", "se")
    assert r.returncode == 2 and "zero_se.csv:3: column 'se'" in r.stderr and "> 0" in r.stderr, r.stderr


def test_cli_fits_the_projects_own_results(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text('algos = ["mtf"]\ndispatch = ["hash", "rr"]\nk = [1, 2, 4, 8, 16]\nrequests = 20000\n'
                   'measure = false\n[workload]\nkind = "uniform"\nm = 2000\n')
    out = tmp_path / "sweep"
    assert cli("sweep", str(cfg), "--out", str(out), "--json").returncode == 0
    r = cli("usl", "fit", str(out / "result.csv"), "--x", "k", "--y", "speedup_work", "--where",
            "algo=mtf,dispatch=hash", "--json", "--no-plot")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sigma"]["value"] < 0  # MTF + hash scales superlinearly
    # Without --where the two series (hash and rr) were averaged into one curve.
    r = cli("usl", "fit", str(out / "result.csv"), "--x", "k", "--y", "speedup_work", "--no-plot")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "hold several series (column 'dispatch': hash, rr): pick one with --where dispatch=hash" in r.stderr


@pytest.mark.parametrize(("text", "extra", "fragment"), [
    ("p,T\n1,100\n2,0\n4,30\n8,20\n", ("--y", "T", "--runtime"), "m.csv: runtimes must be positive"),
    ("p,throughput,Throughput\n1,100,1\n2,190,2\n4,350,3\n", (), "m.csv:1: column 'Throughput' named twice"),
    ("1,100\n2,190\n4,350\n8,600\n", (), "m.csv:1: the first line holds numbers, not column names"),
    ("p,throughput\n1,100\n2,-5\n4,350\n", (), "m.csv: throughput / speedup values must be positive"),
    ("p,speedup\n1,1\n2,\xff\n", (), "m.csv:3: not UTF-8 text"),
])
def test_cli_refuses_measurements_it_would_misread(cli: Cli, tmp_path: Path, text: str, extra: tuple[str, ...],
                                                   fragment: str) -> None:
    data = tmp_path / "m.csv"
    data.write_bytes(text.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    r = cli("usl", "fit", str(data), "--no-plot", *extra)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], r.stderr


def test_cli_reads_a_file_with_a_byte_order_mark(cli: Cli, tmp_path: Path) -> None:
    # ... and with columns it does not use named twice, or not at all (a spreadsheet's export).
    data = tmp_path / "bom.csv"
    data.write_bytes(b"\xef\xbb\xbfp,throughput,note,note,,\n1,100,a,b,,\n2,190,,,,\n4,350,,,,\n8,600,,,,\n")
    r = cli("usl", "fit", str(data), "--x", "p", "--no-plot", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["x"] == "p"


def test_a_peak_below_p_1_is_reported_as_throughput_falling_from_p_1(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Runtimes that grow with p fit σ ≈ 1, κ > 0, whose p* = √((1−σ)/κ) is ≈ 1e-8: the report
    once said "peak at p*: 1.147e-08", "peak X(p*): 6.394" (no measured X was above 1) and
    "retrograde past the peak 6.394 at p ≈ 0.0"."""
    from superlinear.cli import main

    data = tmp_path / "u.csv"
    data.write_text("p,t\n1,100\n2,190\n4,350\n8,600\n")
    assert main(["usl", "fit", str(data), "--no-plot", "--runtime"]) == 0
    text = capsys.readouterr().out
    assert "peak at p*" not in text and "peak X(p*)" not in text and "p ≈ 0.0" not in text
    assert "peak: none at p > 1 (throughput falls from p = 1 on; X(1) = " in text
    assert "sublinear; throughput falls from p = 1 on (no peak at p > 1; X(1) = " in text
    assert main(["usl", "fit", str(data), "--no-plot", "--runtime", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["derived"]
    assert d["falls_from_p1"] and d["peak_p"] == 1.0 and d["peak_x"] <= 1.01 and not d["superlinear"]


def test_negative_sigma_outweighed_by_kappa_is_not_called_superlinear() -> None:
    """σ < 0 lifts the curve above linear only where σ + κ·p < 0: with κ ≥ |σ| nowhere at p > 1
    (the summary once said "superlinear up to p ≈ 1, then payback")."""
    ps = [1, 2, 4, 8, 16]
    result = fit(ps, [float(usl(p, -0.01, 0.02, 1.0)) for p in ps], fixed_gamma=1.0)
    assert result.sigma.value < 0 and result.kappa.value >= -result.sigma.value
    d = result.derived
    assert not d["superlinear"] and "crossover_p" not in d
    assert d["summary"].startswith("sublinear (σ < 0, but κ ≥ |σ|: never above linear at p > 1); retrograde past")
    assert d["peak_p"] > 1


def test_out_dash_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out -`` once wrote plots named ``-.png`` and ``-.svg``."""
    from superlinear.cli import main

    data = tmp_path / "u.csv"
    data.write_text("p,x\n1,1\n2,1.9\n4,3.5\n8,6\n")
    assert main(["usl", "fit", str(data), "--out", "-"]) == 2
    assert capsys.readouterr().err.startswith("superlinear: error: --out -: it names the plot files")
    assert not list(Path.cwd().glob("-.*"))


def test_usl_fit_reads_measurements_from_a_pipe(tmp_path: Path) -> None:
    """It reads its CSV once, so a pipe will do (`cat x.csv | superlinear usl fit /dev/stdin`);
    the plots then need --out, having no file to go beside."""
    import subprocess
    import sys

    csv_text = "p,speedup\n1,1\n2,1.9\n4,3.5\n8,6\n"
    run = [sys.executable, "-m", "superlinear", "usl", "fit", "/dev/stdin"]
    done = subprocess.run([*run, "--json", "--no-plot"], input=csv_text, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["sigma"] is not None, done.stderr
    done = subprocess.run(run, input=csv_text, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "give --out STEM (or --no-plot)" in done.stderr, done.stderr
    done = subprocess.run([*run, "--out", str(tmp_path / "fit")], input=csv_text, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and (tmp_path / "fit.png").exists(), done.stderr
