"""``superlinear report RESULTS_DIR``: one self-contained HTML page with every experiment's plots
and result table found under a results folder (DESIGN.md's CLI surface).

Every experiment folder holds ``result.json`` (the DESIGN.md schema) and its PNG plots; the page
embeds the plots (base64, so the page can be mailed or archived alone) and the rows, with the
columns that carry a speedup kind (measured, projected, work) named as they are in the files.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from superlinear.common.errors import SuperlinearError, note
from superlinear.common.input_files import read_input_text
from superlinear.output.paths import output_file, write_text_atomic

#: Rows shown per experiment; the CSV next to the JSON always has them all.
MAX_ROWS = 400


@dataclass(frozen=True)
class ExperimentResult:
    """One experiment folder: its result document and its plots."""

    folder: Path
    doc: dict[str, Any]
    plots: tuple[Path, ...]


def find_results(root: Path) -> list[ExperimentResult]:
    """Every folder under ``root`` (itself included) that holds a ``result.json``, sorted by path."""
    if not root.is_dir():
        raise SuperlinearError(f"{root}: not a folder (give the results folder, e.g. results/)")
    found = []
    for path in sorted(root.rglob("result.json")):
        try:
            doc = json.loads(read_input_text(path, "a result file"))
        except json.JSONDecodeError as e:
            raise SuperlinearError(f"{path}:{e.lineno}: not a result file (invalid JSON: {e.msg})") from None
        except RecursionError:
            raise SuperlinearError(f"{path}: not a result file (nested too deeply)") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise SuperlinearError(f"{path}: not a result file (no 'rows' list)")
        bad = next((i for i, r in enumerate(doc["rows"]) if not isinstance(r, dict)), None)
        if bad is not None:  # such rows were left out of its table without a word
            raise SuperlinearError(f"{path}: not a result file (row {bad + 1} is not an object)")
        # A result names its plots (older result files do not): any other PNG in the folder is
        # an earlier run's, left in a reused --out folder, and shows other data.
        named = doc.get("plots")
        plots = sorted(path.parent.glob("*.png"))
        if isinstance(named, list):
            plots = [p for p in plots if p.name in named]
            present = {p.name for p in plots}
            missing = [str(n) for n in named if str(n) not in present]
            if missing:  # deleted or never copied along with the result: say so rather than show less
                note(f"{path}: names plot{'s' if len(missing) > 1 else ''} not in its folder, left out of the "
                     f"report: {', '.join(missing)}")
        found.append(ExperimentResult(path.parent, doc, tuple(plots)))
    if not found:
        raise SuperlinearError(f"{root}: no result.json below this folder (run an experiment first)")
    return found


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    if isinstance(value, (dict, list)):
        return html.escape(json.dumps(value, default=str))
    return html.escape(str(value))


def _table(rows: list[Any]) -> str:
    dict_rows = [r for r in rows if isinstance(r, dict)]
    columns: list[str] = []
    for r in dict_rows:
        columns.extend(k for k in r if k not in columns)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in columns) + "</tr>" for r in dict_rows[:MAX_ROWS]
    )
    more = ""
    if len(dict_rows) > MAX_ROWS:
        more = f"<p class='note'>first {MAX_ROWS} of {len(dict_rows)} rows; all of them are in result.csv</p>"
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table></div>{more}"


def _section(result: ExperimentResult, root: Path) -> str:
    doc = result.doc
    name = str(doc.get("experiment", result.folder.name))
    where = result.folder.relative_to(root) if result.folder != root else Path(".")
    machine = doc.get("machine") or {}
    machine_line = html.escape(", ".join(f"{k} {v}" for k, v in machine.items()) if isinstance(machine, dict) else "")
    if isinstance(doc.get("config"), dict) and doc["config"].get("interrupted"):
        previous = doc["config"].get("previous_result")
        kept = f"; the earlier finished result is in {html.escape(str(previous))}" if previous else ""
        machine_line = (f"<strong>interrupted: this run did not finish; {len(doc['rows'])} rows are what it had "
                        f"finished{kept}</strong><br>{machine_line}")
    plots = "\n".join(
        f"<figure><img alt='{html.escape(p.name)}' src='data:image/png;base64,"
        f"{base64.b64encode(p.read_bytes()).decode('ascii')}'><figcaption>{html.escape(p.name)}</figcaption></figure>"
        for p in result.plots
    )
    config = html.escape(json.dumps(doc.get("config", {}), indent=1, default=str))
    summary = doc.get("summary")
    stable = summary.get("stability") if isinstance(summary, dict) else None
    if isinstance(stable, dict):
        from superlinear.experiments.repeats import stability_lines

        machine_line += "".join(f"<br>{html.escape(line)}" for line in stability_lines(stable))
    agreed = summary.get("agreement") if isinstance(summary, dict) else None
    if isinstance(agreed, dict):
        from superlinear.experiments.agreement import agreement_lines

        machine_line += "".join(f"<br>{html.escape(line)}" for line in agreement_lines(agreed))
    noise = summary.get("machine_noise") if isinstance(summary, dict) else None
    if isinstance(noise, dict):
        from superlinear.experiments.machine_noise import machine_noise_lines

        machine_line += "".join(f"<br>{html.escape(line)}" for line in machine_noise_lines(noise))
    return (
        f"<section id='{html.escape(str(where))}'><h2>{html.escape(name)} "
        f"<span class='where'>{html.escape(str(where))}</span></h2>"
        f"<p class='note'>{machine_line}</p>{plots}"
        f"<details><summary>configuration</summary><pre>{config}</pre></details>"
        f"{_table(doc['rows'])}</section>"
    )


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-top: 1px solid #ccc; padding-top: 1em; }
.where { font-weight: normal; color: #777; font-size: 0.7em; }
.note { color: #555; font-size: 0.9em; }
figure { display: inline-block; margin: 0.5em; } img { max-width: 900px; width: 100%; }
.scroll { overflow-x: auto; max-height: 32em; overflow-y: auto; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; background: #f4f4f4; }
"""

HONESTY = (
    "Every speedup carries its kind in its column name: measured = wall clock with real threads (only k ≤ cores); "
    "projected = serial dispatcher CPU time + the slowest worker's own CPU time, calibrated against the run's cost "
    "per unit of work (ideal cores, no contention); work = exact operation counts. Raw throughput is reported next "
    "to speedup. Timed figures are the median of the row's `repeats` independent runs; FIELD_lo and FIELD_hi give "
    "their range."
)


def render(root: Path, results: list[ExperimentResult] | None = None) -> str:
    """The HTML page for every experiment under ``root`` (``results``, when already found)."""
    results = find_results(root) if results is None else results
    index = "".join(
        f"<li><a href='#{html.escape(str(r.folder.relative_to(root) if r.folder != root else Path('.')))}'>"
        f"{html.escape(str(r.doc.get('experiment', r.folder.name)))}</a> "
        f"<span class='where'>{html.escape(str(r.folder))}</span></li>"
        for r in results
    )
    sections = "\n".join(_section(r, root) for r in results)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>superlinear results</title>"
        f"<style>{STYLE}</style></head><body><h1>superlinear results</h1>"
        f"<p class='note'>{html.escape(HONESTY)}</p><ul>{index}</ul>{sections}</body></html>\n"
    )


def write_report(root: Path, out: str | Path | None = None) -> tuple[Path, int]:
    """Writes the page (default ``ROOT/index.html``); returns its path and the number of experiments."""
    # A given --out is checked before the page is built; the default lies in ``root``, which
    # find_results() checks.
    target = output_file(out) if out is not None else root / "index.html"
    results = find_results(root)
    for result in results:
        for source in result.folder.iterdir():
            # The page would replace a result or a plot it was made from (report R --out R/result.json).
            if source.suffix != ".html" and source.is_file() and target.exists() and os.path.samefile(source, target):
                raise SuperlinearError(f"{target}: is part of the result in {result.folder}; --out would overwrite it "
                                       f"(name an HTML file, e.g. {root / 'index.html'})")
    page = render(root, results)
    write_text_atomic(target, page)
    return target, page.count("<section ")
