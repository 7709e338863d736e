"""``superlinear report``: one HTML page with every experiment's plots and rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from superlinear.output.figures import save_figure
from superlinear.output.results import record_plots, write_progress, write_results

Cli = Callable[..., CompletedProcess[str]]


def _experiment(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = write_results(folder, name, {"quick": True}, rows)
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 4])
    save_figure(fig, folder / name)
    record_plots(path, [folder / f"{name}.png"])


def test_report_collects_every_experiment(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "results"
    _experiment(root / "fig5-quick", "fig5", [{"k": 1, "speedup_projected": 1.0, "algo": "mtf<b>"}])
    _experiment(root / "attack" / "sim", "attack-sim", [{"policy": "wsjf", "df": 0.4}] * 3)
    r = cli("report", str(root))
    assert r.returncode == 0, r.stderr
    page = (root / "index.html").read_text(encoding="utf-8")
    assert page.count("<section ") == 2
    assert page.count("data:image/png;base64,") == 2
    assert "speedup_projected" in page and "attack-sim" in page
    assert "mtf&lt;b&gt;" in page and "mtf<b>" not in page  # values are escaped
    out = tmp_path / "one.html"
    assert cli("report", str(root / "fig5-quick"), "--out", str(out)).returncode == 0
    assert out.read_text(encoding="utf-8").count("<section ") == 1


def test_a_result_a_run_did_not_finish_says_so_and_shows_no_plot(cli: Cli, tmp_path: Path) -> None:
    # A sweep stopped (or killed) part way leaves the rows it had finished, written as each
    # finished, in a folder that held a finished earlier run: that one waits in previous-result/.
    folder = tmp_path / "reused"
    _experiment(folder, "sweep-a", [{"k": 1, "speedup_projected": 1.0}, {"k": 2, "speedup_projected": 1.9}])
    write_progress(folder, "sweep-b", {"quick": True}, [{"k": 1, "speedup_projected": 1.0}])
    doc = json.loads((folder / "result.json").read_text())
    assert doc["config"]["interrupted"] is True and doc["plots"] == []
    assert doc["config"]["previous_result"] == "previous-result/result.json"
    assert sorted(p.name for p in folder.iterdir()) == ["previous-result", "result.csv", "result.json"]
    earlier = folder / "previous-result"
    assert sorted(p.name for p in earlier.iterdir()) == ["result.csv", "result.json", "sweep-a.png", "sweep-a.svg"]
    assert len(json.loads((earlier / "result.json").read_text())["rows"]) == 2
    assert cli("report", str(folder)).returncode == 0
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert page.count("<section ") == 2 and page.count("data:image/png;base64,") == 1  # the earlier run's own
    assert ("interrupted: this run did not finish; 1 rows are what it had finished; the earlier finished "
            "result is in previous-result/result.json") in page


def test_a_finished_run_replaces_the_result_it_set_aside(tmp_path: Path) -> None:
    folder = tmp_path / "reused"
    _experiment(folder, "sweep-a", [{"k": 1, "speedup_projected": 1.0}])
    for rows in ([{"k": 1}], [{"k": 1}, {"k": 2}]):  # two progress writes: the first sets aside
        write_progress(folder, "sweep-b", {"quick": True}, rows)
        assert len(json.loads((folder / "previous-result" / "result.json").read_text())["rows"]) == 1
    path = write_results(folder, "sweep-b", {"quick": True}, [{"k": 1}, {"k": 2}, {"k": 3}])
    # Until its plots are drawn and recorded (a Ctrl-C meanwhile must not cost the earlier result).
    assert (folder / "previous-result" / "result.json").is_file()
    record_plots(path, [])
    assert sorted(p.name for p in folder.iterdir()) == ["result.csv", "result.json"]
    # An interrupted result is only ever replaced, never set aside over a finished one.
    write_progress(tmp_path / "fresh", "sweep-c", {}, [{"k": 1}])
    assert not (tmp_path / "fresh" / "previous-result").exists()


def test_report_leaves_out_an_earlier_runs_plots_in_a_reused_folder(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "reused"
    r = cli("latency-sim", "run", "--requests", "5000", "--out", str(out))
    assert r.returncode == 0, r.stderr
    before = sorted(p.name for p in out.glob("*.png"))
    r = cli("reproduce", "fig5", "--quick", "--panel", "a", "--repeats", "1", "--no-measure", "--timed-window", "0",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    named = json.loads((out / "result.json").read_text())["plots"]
    assert named and not set(named) & set(before), (named, before)
    # The earlier result went aside with its plots at the first progress write, and the finished run replaced it.
    assert not set(before) & {p.name for p in out.glob("*.png")} and not (out / "previous-result").exists()
    assert cli("report", str(out)).returncode == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == len(named)
    assert all(f"alt='{n}'" in page for n in named) and not any(f"alt='{n}'" in page for n in before)


def test_report_errors_are_one_line(cli: Cli, tmp_path: Path) -> None:
    for args, fragment in (((str(tmp_path / "missing"),), "not a folder"), ((str(tmp_path),), "no result.json")):
        r = cli("report", *args)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert fragment in r.stderr and len(r.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "result.json").write_text("{not json", encoding="utf-8")
    r = cli("report", str(bad))
    assert r.returncode == 2 and "not a result file" in r.stderr


def test_report_shows_projected_against_measured(cli: Cli, tmp_path: Path) -> None:
    from test_repeats import NOISE

    from superlinear.experiments.agreement import agreement

    rows: list[dict[str, object]] = [{"panel": "a", "algo": "mtf", "dispatch": "hash", "k": 2,
                                      "speedup_projected": 2.0, "speedup_measured": 1.5}]
    _experiment(tmp_path / "fig5", "fig5", rows)
    doc = json.loads((tmp_path / "fig5" / "result.json").read_text())
    doc["summary"] = {"agreement": agreement(rows), "machine_noise": NOISE}
    (tmp_path / "fig5" / "result.json").write_text(json.dumps(doc))
    assert cli("report", str(tmp_path)).returncode == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "0 of 1 within 15%" in page and "largest gap -25% at panel a, mtf + hash, k = 2" in page
    assert "machine noise (40 probes of 10 ms" in page


def test_report_refuses_to_overwrite_a_result_it_reads(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "results"
    _experiment(root / "one", "one", [{"k": 1, "speedup": 1.0}])
    for name in ("result.json", "result.csv", "one.png"):
        before = (root / "one" / name).read_bytes()
        r = cli("report", str(root), "--out", str(root / "one" / name))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "would overwrite it" in r.stderr and name in r.stderr
        assert (root / "one" / name).read_bytes() == before
    assert cli("report", str(root), "--out", str(root / "one" / "page.html")).returncode == 0


def test_report_names_the_plots_a_result_lists_but_its_folder_lacks(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "results"
    _experiment(root / "one", "one", [{"k": 1, "speedup": 1.0}])
    (root / "one" / "one.png").unlink()
    r = cli("report", str(root))
    assert r.returncode == 0, r.stderr
    assert "note:" in r.stderr and "one.png" in r.stderr and "left out" in r.stderr
