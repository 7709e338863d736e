"""``predict --algo splay``: splay trees have no working-set law, so the model is the exact
simulation of the engine's splay worker on each worker's dispatched stream; it must equal the
engine's per-worker work counts. Also the ClassBench flow-key converter (tiny fixture written
here, never ``../shared/data``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import Cli, assert_clean_error

from superlinear.analysis.predict import predict
from superlinear.classify.flow_keys import FlowKeyError, convert, flow_key
from superlinear.engine.runs import Workload


@pytest.mark.parametrize("workload", [Workload("uniform", 400), Workload("zipf", 400, 1.01)], ids=["uniform", "zipf"])
@pytest.mark.parametrize("dispatch", ["rr", "hash"])
def test_splay_prediction_equals_engine_work_exactly(workload: Workload, dispatch: str) -> None:
    pred = predict(workload, algo="splay", dispatch=dispatch, ks=(1, 2, 8, 32), requests=4000, seed=3, compare=True)
    assert pred.model == "exact simulation of the splay worker"
    assert pred.engine is not None
    for p, c in zip(pred.points, pred.engine, strict=True):
        assert c.exact, (p.k, [w["work"] for w in p.workers], c.worker_work)
        assert p.speedup_work_predicted == pytest.approx(c.speedup_work, rel=1e-12)
    rows = pred.rows()
    assert all(r["model"] == pred.model and r["mean_working_set"] is None for r in rows)
    if dispatch == "hash" and workload.kind == "uniform":
        # Key hashing isolates each worker's keys: every worker's tree sees m/k keys, so qℓ > k.
        assert rows[-1]["q_ell"] > 32


def test_splay_cli_names_its_model(cli: Cli, tmp_path: Path) -> None:
    r = cli("predict", "--algo", "splay", "--workload", "zipf", "--m", "300", "--requests", "3000", "--k", "1,4",
            "--compare", "--json", "--out", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["config"]["model"] == "exact simulation of the splay worker"
    assert all(row["engine_exact_match"] and row["model"] == doc["config"]["model"] for row in doc["rows"])
    table = cli("predict", "--algo", "splay", "--m", "300", "--requests", "3000", "--k", "4", "--out",
                str(tmp_path / "t"))
    assert table.returncode == 0, table.stderr
    assert "exact simulation of the splay worker" in " ".join(table.stdout.split())
    law = cli("predict", "--algo", "mtf", "--m", "300", "--requests", "3000", "--k", "4", "--json", "--out",
              str(tmp_path / "l"))
    assert json.loads(law.stdout)["config"]["model"] == "working-set law"
    adv = cli("advise", "--algo", "splay", "--m", "300", "--requests", "3000", "--k", "2,8", "--candidates", "hash,rr",
              "--json", "--out", str(tmp_path / "a"))
    assert adv.returncode == 0, adv.stderr
    adoc = json.loads(adv.stdout)
    assert adoc["config"]["model"] == "exact simulation of the splay worker"
    assert adoc["config"]["recommended"] == "hash"


def _classbench_trace(path: Path) -> list[tuple[int, ...]]:
    """Six ClassBench header lines over three flows (src dst sport dport proto flags filter)."""
    flows = [(167772161, 3232235777, 1024, 80, 6), (167772162, 3232235777, 1025, 53, 17), (1, 2, 3, 4, 6)]
    order = [0, 1, 0, 2, 0, 1]
    path.write_text("".join(f"{' '.join(map(str, flows[i]))}\t0\t{i + 1}\n" for i in order) + "\n# end\n")
    return [flows[i] for i in order]


def test_classbench_trace_becomes_flow_keys(cli: Cli, tmp_path: Path) -> None:
    src, dst = tmp_path / "t_trace", tmp_path / "keys.txt"
    headers = _classbench_trace(src)
    assert convert(src, dst) == (6, 3)
    keys = [int(x) for x in dst.read_text().split()]
    assert keys == [flow_key(h) for h in headers]
    assert keys[0] == keys[2] == keys[4] and len(set(keys)) == 3 and all(0 <= k < 2**63 for k in keys)
    # FNV-1a over the five fields, 63 bits: a fixed value, so converted traces stay comparable.
    assert flow_key((1, 2, 3, 4, 6)) == 554910185478799696
    # The engine reads the result as a key trace: three items, six requests; the prediction is exact.
    r = cli("predict", "--trace", str(dst), "--algo", "splay", "--k", "1,2", "--compare", "--json", "--out",
            str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert rows[0]["m"] == 3 and rows[0]["requests"] == 6 and all(row["engine_exact_match"] for row in rows)


def test_flow_key_errors_are_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "bad_trace"
    bad.write_text("1 2 3 4 6 0 1\n1 2 x 4 6 0 1\n")
    with pytest.raises(FlowKeyError, match=r"bad_trace:2:"):
        convert(bad, tmp_path / "k.txt")
    for args, fragment in (([str(bad), str(tmp_path / "k.txt")], "bad_trace:2:"),
                           ([str(tmp_path / "missing"), str(tmp_path / "k.txt")], "missing")):
        r = subprocess.run([sys.executable, "-m", "superlinear.classify.flow_keys", *args], capture_output=True,
                           text=True, check=False)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        lines = [line for line in r.stderr.splitlines() if line]
        assert len(lines) == 1 and fragment in lines[0], r.stderr


def test_splay_takes_no_parameter(cli: Cli, tmp_path: Path) -> None:
    assert_clean_error(cli("predict", "--algo", "splay:3", "--requests", "10", "--out", str(tmp_path / "e")),
                       "splay")
