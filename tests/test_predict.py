"""The working-set law (``superlinear predict``) and the locality advisor (``superlinear advise``):
exact agreement with the engine's work counts, working sets against their definition, the
separate item/dispatch API, the CLI's files and one-line errors."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from superlinear import _native
from superlinear.analysis.advisor import advise, advise_assigned
from superlinear.analysis.predict import parse_ks, predict, predict_assigned
from superlinear.engine.runs import Workload

Cli = Callable[..., CompletedProcess[str]]


def assert_clean_error(result: CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line]
    assert len(lines) == 1, result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("algo,rho", [("mtf", 0), ("lru:40", 5)])
@pytest.mark.parametrize("workload", [Workload("uniform", 300), Workload("zipf", 300, 1.01)], ids=["uniform", "zipf"])
@pytest.mark.parametrize("dispatch", ["rr", "random", "hash"])
def test_prediction_equals_engine_work_exactly(algo: str, rho: int, workload: Workload, dispatch: str) -> None:
    pred = predict(workload, algo=algo, dispatch=dispatch, ks=(1, 2, 3, 8), requests=3000, seed=7, rho=rho,
                   compare=True)
    assert pred.engine is not None
    for p, c in zip(pred.points, pred.engine, strict=True):
        assert c.exact, (p.k, [w["work"] for w in p.workers], c.worker_work)
        assert c.predicted_over_engine == 1.0
        assert p.speedup_work_predicted == c.speedup_work
        assert p.speedup_work_predicted == pytest.approx(p.q * p.ell)
        assert p.q <= p.k + 1e-9


def working_sets_by_definition(items: list[int]) -> list[int]:
    out = []
    for t, x in enumerate(items):
        prev = [i for i in range(t) if items[i] == x]
        out.append(len(set(items[prev[-1] + 1:t])) if prev else -1)
    return out


def test_working_sets_match_the_definition_per_worker() -> None:
    rng = random.Random(3)
    items = [rng.randrange(25) for _ in range(600)]
    workers = [rng.randrange(3) for _ in range(600)]
    model = _native.LawModel.from_items(items, 25, "lru:5")
    assert model.working_sets() == working_sets_by_definition(items)
    got = model.working_sets(workers, 3)
    for w in range(3):
        idx = [t for t in range(600) if workers[t] == w]
        assert [got[t] for t in idx] == working_sets_by_definition([items[t] for t in idx])


def test_items_and_dispatch_given_separately() -> None:
    # Rules 0..3 in priority order; a dispatcher that keeps rule 0 and rule 3 apart.
    items = [0, 1, 0, 2, 1, 0, 3, 3]
    (one, two) = predict_assigned(items, 4, {1: [0] * 8, 2: [0, 1, 0, 1, 1, 0, 0, 0]})
    assert one.baseline_work == 1 + 2 + 2 + 3 + 3 + 3 + 4 + 1
    assert [w["work"] for w in two.workers] == [1 + 1 + 1 + 4 + 1, 2 + 3 + 2]
    assert two.ell == pytest.approx(19 / 15)
    assert two.q == pytest.approx(15 / 8)
    # A key outside the item set costs a full scan of a list and changes nothing.
    (absent,) = predict_assigned([9, 0], 4, {1: [0, 0]})
    assert absent.work_total == 4 + 1 and absent.workers[0]["absent"] == 1


def test_hash_dispatch_is_superlinear_and_round_robin_is_not() -> None:
    w = Workload("uniform", 2000)
    hash_ = predict(w, dispatch="hash", ks=(8,), requests=40_000, s=0.01)
    rr = predict(w, dispatch="rr", ks=(8,), requests=40_000)
    (h,), (r,) = hash_.points, rr.points
    assert h.ell > 5 and h.q > 5 and h.speedup_work_predicted > 30
    assert r.ell < 1.3 and r.speedup_work_predicted < 10
    # The general law with s = 0.01 sits below the pure work speedup but stays superlinear here.
    assert 8 < h.speedup_law < h.speedup_work_predicted
    row = hash_.rows()[0]
    assert row["speedup_work"] is None and row["speedup_measured"] is None  # no engine run: nothing but predictions


def test_advisor_recommends_key_hash_for_lists() -> None:
    advice = advise(Workload("zipf", 3000, 1.01), ks=(2, 8, 32), requests=30_000)
    assert [c.name for c in advice.candidates] == ["rr", "random", "hash"]
    assert advice.recommended == "hash"
    assert all(advice.best_at(k) == "hash" for k in (2, 8, 32))
    rows = advice.rows()
    assert len(rows) == 9 and sum(r["recommended"] for r in rows) == 3


def test_advisor_with_separate_items_and_candidate_functions() -> None:
    # The packet case in miniature: the item is a rule id, and candidates are "header field
    # hashes" given as functions. Requests of one flow share a rule; a field that identifies the
    # rule (like dst port in Fig. 9d) isolates working sets, one that scatters a rule over every
    # worker (like a per-packet random field) does not.
    rng = random.Random(5)
    m, n = 400, 20_000
    rules = [rng.randrange(m) for _ in range(n)]
    noise = [rng.randrange(1 << 30) for _ in range(n)]
    candidates = {
        "rule-affine": lambda k: [hash((r, 17)) % k for r in rules],
        "scatter": lambda k: [x % k for x in noise],
    }
    advice = advise_assigned(rules, m, candidates, ks=(4, 16))
    assert advice.recommended == "rule-affine"
    assert advice.candidates[0].at(16).ell > 3 * advice.candidates[1].at(16).ell


def test_parse_ks() -> None:
    assert parse_ks("1, 2,4") == [1, 2, 4]
    for bad in ("0", "x", "1,,2", "1,2,4,2"):
        with pytest.raises(ValueError):
            parse_ks(bad)


def test_cli_predict_on_a_trace_writes_results_and_plots(cli: Cli, tmp_path: Path) -> None:
    rng = random.Random(1)
    universe = [rng.randrange(1 << 60) for _ in range(200)]
    keys = [rng.choice(universe) for _ in range(4000)]
    trace = tmp_path / "keys.txt"
    _native.write_trace(str(trace), keys, False)
    out = tmp_path / "p"
    r = cli("predict", "--trace", str(trace), "--algo", "mtf", "--dispatch", "hash", "--k", "1,2,4",
            "--s", "0.05", "--compare", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["experiment"] == "predict" and doc["config"]["requests"] == 4000
    rows = doc["rows"]
    assert [row["k"] for row in rows] == [1, 2, 4]
    for row in rows:
        assert row["engine_exact_match"] is True and row["predicted_over_engine"] == 1.0
        assert row["speedup_work"] == row["speedup_work_predicted"]
        assert row["speedup_measured"] is None
        # The engine's projected speedup: the median of its interleaved rounds, with their range.
        assert row["speedup_projected_lo"] <= row["speedup_projected"] <= row["speedup_projected_hi"]
        assert row["repeats"] == 3
    assert rows[0]["speedup_projected_lo"] == rows[0]["speedup_projected_hi"] == 1.0  # k = 1 against itself
    for name in ("result.json", "result.csv", "predict.png", "predict.svg"):
        assert (out / name).stat().st_size > 100
    table = cli("predict", "--trace", str(trace), "--k", "2", "--out", str(out))
    assert table.returncode == 0 and "ℓ(k)" in table.stdout


def test_cli_advise(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "a"
    r = cli("advise", "--workload", "zipf", "--m", "1000", "--requests", "10000", "--k", "2,8", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "recommended: hash" in r.stdout
    for name in ("result.json", "result.csv", "advise.png", "advise.svg"):
        assert (out / name).stat().st_size > 100
    j = cli("advise", "--workload", "uniform", "--m", "500", "--requests", "5000", "--k", "4", "--algo", "lru:50",
            "--rho", "100", "--candidates", "hash,rr", "--json", "--out", str(out))
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["config"]["candidates"] == ["hash", "rr"] and doc["config"]["recommended"] == "hash"


def test_cli_errors_are_one_line(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n2\nfoo\n")
    out = str(tmp_path / "o")
    assert_clean_error(cli("predict", "--trace", str(bad), "--out", out), f"{bad}:3:")
    assert_clean_error(cli("predict", "--trace", str(tmp_path / "missing.txt"), "--out", out), "missing.txt")
    assert_clean_error(cli("predict", "--k", "0", "--requests", "10", "--out", out), "--k")
    assert_clean_error(cli("predict", "--algo", "bogus", "--requests", "10", "--out", out), "'bogus'")
    assert_clean_error(cli("predict", "--s", "2", "--requests", "10", "--out", out), "serial fraction")
    assert_clean_error(cli("predict", "--dispatch", "nope", "--requests", "10", "--out", out), "unknown dispatcher")
    assert_clean_error(cli("advise", "--candidates", "hash,bogus", "--requests", "10", "--out", out), "bogus")
    for flag in ("--requests", "--rho"):
        r = cli("advise", flag, "-1", "--out", out)
        assert r.returncode == 2 and "Traceback" not in r.stderr and flag in r.stderr


@pytest.mark.parametrize("command", ["predict", "advise"])
def test_more_requests_than_the_trace_holds_are_refused(command: str, tmp_path: Path,
                                                        one_line_mistake: Callable[..., None],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """As run and sweep refuse them: ``advise --requests 20000`` on a 3-key trace once reported
    "m = 3, 3 requests" and exit 0."""
    from superlinear.cli import main

    keys = tmp_path / "keys.txt"
    keys.write_text("1\n2\n3\n")
    out = ["--trace", str(keys), "--out", str(tmp_path / "o")]
    one_line_mistake([command, "--requests", "20000", *out],
                     f"--requests 20,000: {keys} holds only 3 keys (give --requests 3 or fewer, or a longer trace)")
    assert main([command, "--requests", "3", *out]) == 0
    assert "3 requests" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["predict", "--requests", "2000"], ["classify", "gen-rules", "--rules-count", "5",
                                                                      "--out", "-"]])
def test_a_closed_stdout_ends_quietly(args: list[str], tmp_path: Path) -> None:
    """``superlinear predict … | head -1`` once ended with exit 1 and no word (1 is a failed check
    elsewhere), and a plain write to the closed pipe with "superlinear: error: broken pipe", exit
    2: both now end silently with 141 (128 + SIGPIPE, as a shell reports it)."""
    import subprocess
    import sys

    out = [] if "--out" in args else ["--out", str(tmp_path / "o")]
    p = subprocess.Popen([sys.executable, "-m", "superlinear", *args, *out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader leaves before the first line is written
    err = p.stderr.read()
    assert p.wait(timeout=120) == 141 and err == "", err
