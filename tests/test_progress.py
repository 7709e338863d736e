"""Progress where stderr is not a terminal (a log file, nohup, a pipe): a plain line now and then,
never a bar's control characters, and nothing at all within the first interval (so short runs
and their captured stderr stay as they are)."""

from __future__ import annotations

import pytest

from superlinear.common import progress


def test_lines_come_at_most_once_an_interval(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with progress.progress_bar(True) as bar:  # captured stderr is no terminal
        task = bar.add_task("fig5", total=3)
        bar.update(task, description="[a] mtf + hash k=2")
        bar.advance(task)
    assert capsys.readouterr().err == ""  # within the first interval: nothing
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.0)
    with progress.progress_bar(True) as bar:
        task = bar.add_task("fig5", total=3)
        bar.update(task, description="[a] mtf + hash k=2", advance=2)
    err = capsys.readouterr().err
    assert err.startswith("  … [a] mtf + hash k=2 2/3 (0:00 elapsed)") and "\x1b" not in err, err
    with progress.progress_bar(False) as bar:  # --json: nothing
        bar.advance(bar.add_task("fig5", total=3))
    assert capsys.readouterr().err == ""
