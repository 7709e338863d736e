"""The engine side and the shared machinery, given mistakes (a sweep of `run`, `sweep`,
`report`, `usl` and `predict`): each is one line naming what is wrong, exit 2, and nothing is
made. Each case here was taken before, silently changed or reported as success."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Mistake = Callable[..., None]

SWEEP = 'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 1000\n[workload]\nkind = "uniform"\nm = 100\n'


def test_a_timed_window_that_rounds_to_none_is_refused(cli: Callable[..., Any], tmp_path: Path) -> None:
    # Windows are whole milliseconds: 0.0001 s became 0, "no window", and the run said nothing.
    sweep = tmp_path / "s.toml"
    sweep.write_text('name = "s"\n' + SWEEP)
    r = cli("sweep", str(sweep), "--timed-window", "0.0001", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "argument --timed-window: windows are whole milliseconds: 0.0001 s rounds to none" in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["a\\u001b[31mred", "two\\nlines"])
def test_a_sweep_name_with_control_characters_is_refused(name: str, one_line_mistake: Mistake,
                                                         tmp_path: Path) -> None:
    # It reached the terminal raw in the table's title, and became a folder's name.
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'name = "{name}"\n' + SWEEP)
    one_line_mistake(["sweep", str(sweep), "--no-measure", "--out", str(tmp_path / "o")],
                     "'name' must be printable (no control characters)")


def test_report_refuses_rows_that_are_not_objects_and_a_dash_or_empty_out(one_line_mistake: Mistake,
                                                                          tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "result.json").write_text(json.dumps({"experiment": "x", "rows": [{"k": 1}, 2, "a"]}))
    one_line_mistake(["report", str(folder)], "result.json: not a result file (row 2 is not an object)")
    (folder / "result.json").write_text(json.dumps({"experiment": "x", "rows": [{"k": 1}]}))
    one_line_mistake(["report", str(folder), "--out", "-"], "--out -: this command writes a file, not standard")
    one_line_mistake(["report", str(folder), "--out", ""], "--out: empty (give FILE, or leave --out out)")
    assert not (Path.cwd() / "-").exists()


def test_usl_refuses_underscored_numbers_and_p_beyond_node_counts(one_line_mistake: Mistake,
                                                                  tmp_path: Path) -> None:
    # Python's float took "2_0" as 20 (a different fit, exit 0); --at 1e300 printed numpy's
    # overflow warnings with source lines.
    data = tmp_path / "u.csv"
    data.write_text("p,speedup\n1,1\n2,2_0\n4,4.5\n8,9.5\n")
    one_line_mistake(["usl", "fit", str(data), "--no-plot"], "u.csv:3: column 'speedup' is not a number: '2_0'")
    data.write_text("p,speedup\n1,1\n2,2.1\n4,4.5\n8,9.5\n")
    one_line_mistake(["usl", "predict", str(data), "--at", "1e300", "--no-plot"],
                     "--at: at most 1e+09 (a number of nodes), got 1e+300")


@pytest.mark.parametrize(("body", "message"), [
    # Three spellings of one cache ran three identical series, counted as independent.
    (SWEEP.replace('["mtf"]', '["lru:10", "lru:+10", "lru:010"]'), "'algos' lists lru:10 more than once"),
    # Two equal [[workload]] tables ran as panels a and b.
    (SWEEP.replace("[workload]", "[[workload]]") + '[[workload]]\nkind = "uniform"\nm = 100\n',
     "two [[workload]] tables are the same"),
])
def test_a_sweep_names_one_series_or_panel_once(body: str, message: str, one_line_mistake: Mistake,
                                                tmp_path: Path) -> None:
    sweep = tmp_path / "s.toml"
    sweep.write_text('name = "s"\n' + body)
    one_line_mistake(["sweep", str(sweep), "--no-measure", "--out", str(tmp_path / "o")], message)


def test_a_path_that_is_not_utf8_is_named_as_such(cli: Callable[..., Any], tmp_path: Path) -> None:
    # The core's config check wrapped Python's UnicodeEncodeError in its field's name.
    name = str(tmp_path / "tr\udcff.txt")  # the byte 0xff, as the shell hands it over
    for command in ("run", "predict"):
        r = cli(command, "--trace", name)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "tr\ufffd.txt: not valid UTF-8 (rename it" in r.stderr and "field" not in r.stderr, r.stderr
