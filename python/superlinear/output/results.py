"""Result files in the DESIGN.md schema: ``result.json`` and ``result.csv`` per experiment."""

from __future__ import annotations

import csv
import io
import json
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


def write_progress(out_dir: Path, experiment: str, config: dict[str, Any], rows: list[Row]) -> Path:
    """The rows a long run has finished so far, written as each finishes: flagged ``interrupted``
    until the run's own last write, so that a run stopped or killed part way leaves a result that
    says it did not finish (``report`` says so too)."""
    return write_results(out_dir, experiment, {**config, "interrupted": True}, rows)


def write_results(out_dir: Path, experiment: str, config: dict[str, Any], rows: list[Row]) -> Path:
    """Writes result.json and result.csv into ``out_dir`` (created if missing); returns the JSON path."""
    output_dir(out_dir)
    doc: ResultDoc = {"experiment": experiment, "config": config, "machine": machine_info(), "rows": rows,
                      "plots": []}
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
