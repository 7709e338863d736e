"""Result files in the DESIGN.md schema: ``result.json`` and ``result.csv`` per experiment."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from superlinear import _native
from superlinear.common.rows import Machine, ResultDoc, Row
from superlinear.output.paths import output_dir, write_text_atomic


def machine_info() -> Machine:
    """Cores available to this process, CPU model and the git revision of the code."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    git = "unknown"
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=5, check=False,
        )
        if out.returncode == 0:
            git = out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return {"cores": _native.available_cores(), "cpu": cpu, "git": git, "python": platform.python_version()}


def record_plots(json_path: Path, plots: list[Path], **more: Any) -> None:
    """Adds to ``json_path`` the names of the plots drawn from its rows (``plots``, the files
    beside it), so that a reader (``superlinear report``) never takes an earlier run's plot, left
    in a reused output folder, for one of this result; and ``more`` top-level fields (a study's
    summary), in the same one rewrite."""
    doc: dict[str, Any] = json.loads(json_path.read_text(encoding="utf-8"))
    doc["plots"] = sorted({p.name for p in plots if p.parent.resolve() == json_path.parent.resolve()})
    doc.update(more)
    write_text_atomic(json_path, json.dumps(doc, indent=1, default=str) + "\n")
    if not (isinstance(doc.get("config"), dict) and doc["config"].get("interrupted")):
        # The run's last write: the finished result it replaces goes now, not before its plots
        # are drawn (a Ctrl-C while they are drawn must not cost it).
        _remove_result(json_path.parent / PREVIOUS_RESULT)


#: The folder inside an output folder where a finished earlier result waits while a new run
#: writes its progress there: a run stopped part way must not cost the result it would replace.
PREVIOUS_RESULT = "previous-result"

def write_progress(out_dir: Path, experiment: str, config: dict[str, Any], rows: list[Row],
                   summary: dict[str, Any] | None = None) -> Path:
    """The rows a long run has finished so far, written as each finishes: flagged ``interrupted``
    until the run's own last write, so that a run stopped or killed part way leaves a result that
    says it did not finish (``report`` says so too). A finished result of an earlier run in the
    same folder (its JSON, CSV and plots) is moved to ``previous-result/`` at the first write, and
    removed by the run's own last write: until then it is what the folder's last finished run
    made, and the interrupted result names it (``config.previous_result``). It is removed by the
    run's last write (:func:`record_plots`, after the plots are drawn). ``summary``, where given,
    is the study's summary of the rows so far."""
    out_dir = Path(out_dir)
    extra = {"previous_result": f"{PREVIOUS_RESULT}/result.json"} if _set_aside_earlier(out_dir) else {}
    return write_results(out_dir, experiment, {**config, "interrupted": True, **extra}, rows, summary)


def _set_aside_earlier(out_dir: Path) -> bool:
    """Moves a finished result in ``out_dir`` to ``previous-result/`` (at a run's first progress
    write: from then on the folder's result is an interrupted one, which is only ever replaced);
    says whether an earlier finished result waits there."""
    aside = out_dir / PREVIOUS_RESULT
    files = _result_files(out_dir)
    if files:
        _remove_result(aside)
        aside.mkdir(exist_ok=True)
        for f in files:
            os.replace(f, aside / f.name)
    return (aside / "result.json").is_file()


def _result_files(folder: Path) -> list[Path]:
    """The files of the finished result in ``folder`` (result.json, result.csv and the plots it
    names), or none if it holds no result or only an interrupted one."""
    try:
        doc = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict) or doc["config"].get("interrupted"):
        return []
    plots = [n for n in doc.get("plots") or [] if isinstance(n, str) and n == Path(n).name]
    plots += [str(Path(n).with_suffix(".svg")) for n in plots if n.endswith(".png")]
    names = ["result.json", "result.csv", *plots]
    return [folder / n for n in dict.fromkeys(names) if (folder / n).is_file()]


def _remove_result(folder: Path) -> None:
    """Removes the result files this module moved into ``folder``, and the folder once empty."""
    for f in _result_files(folder):
        f.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        folder.rmdir()


def write_results(out_dir: Path, experiment: str, config: dict[str, Any], rows: list[Row],
                  summary: dict[str, Any] | None = None) -> Path:
    """Writes result.json (with the study's ``summary``, where given) and result.csv into
    ``out_dir`` (created if missing); returns the JSON path. (The earlier result that progress
    writes set aside goes with :func:`record_plots`, the last write of a finished run.)"""
    output_dir(out_dir)
    doc: ResultDoc = {"experiment": experiment, "config": config, "machine": machine_info(), "rows": rows,
                      "plots": []}
    if summary is not None:
        doc["summary"] = summary
    json_path = out_dir / "result.json"
    write_text_atomic(json_path, json.dumps(doc, indent=1, default=str) + "\n")
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
    write_text_atomic(out_dir / "result.csv", text.getvalue())
    return json_path
