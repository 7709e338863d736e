"""One protocol for a study and one runner for all of them.

A study turns command-line arguments into a config (:meth:`Study.config_from`), runs it into
result rows (:meth:`Study.run`), draws its plots (:meth:`Study.plot`) and prints its tables
(:meth:`Study.table`). :func:`run_study` does the rest the same way for every study: the output
folder, ``result.json``/``result.csv`` (with the study's summary, if any), JSON or tables, the
closing lines naming the files, and the exit status. Errors propagate to the CLI's ``main``, which
prints them as one line. A study stopped by Ctrl-C part way hands over what it had finished
(:func:`keeping`), and the runner writes that before the command ends with exit 130.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from rich.console import Console

from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import before_forced_exit
from superlinear.common.progress import line_progress, restart_lines
from superlinear.common.rows import Row
from superlinear.output.paths import inputs_of, output_dir
from superlinear.output.results import record_plots, write_progress, write_results

console = Console(width=max(120, Console().width))

#: Prints one progress line on stderr; a study receives None when nobody is watching.
Progress = Callable[[str], None]

C = TypeVar("C")


@dataclass
class Outcome:
    """What a study's run produced: its rows, the config recorded in ``result.json`` and an
    optional summary stored beside the rows."""

    rows: list[Row]
    config: dict[str, Any]
    summary: dict[str, Any] | None = None
    extra: Any = None  # whatever the study's table needs beyond rows and summary


class Stopped(KeyboardInterrupt):
    """A Ctrl-C that stopped a study part way, with what it had finished (``finished``)."""

    def __init__(self, finished: Outcome) -> None:
        super().__init__()
        self.finished = finished


#: The ``finished`` of the :func:`keeping` blocks running now, innermost last.
_keeping: list[Callable[[], Outcome]] = []


@contextmanager
def keeping(finished: Callable[[], Outcome]) -> Iterator[None]:
    """Inside the block, a Ctrl-C becomes :class:`Stopped` with ``finished()``, what the study had
    finished when it came: :func:`run_study` writes its rows, as a reproduction keeps every point
    it finished (also when the process must end under a native call that did not stop)."""
    _keeping.append(finished)
    try:
        yield
    except Stopped:
        raise
    except KeyboardInterrupt:
        raise Stopped(finished()) from None
    finally:
        _keeping.pop()


class Study(ABC, Generic[C]):
    """A study: from arguments to rows, plots and tables. ``experiment`` names it in ``result.json``."""

    experiment: str

    def config_from(self, args: argparse.Namespace) -> C:
        """The study's config from the parsed arguments (validating them); by default the
        arguments themselves."""
        return cast(C, args)

    @abstractmethod
    def run(self, config: C, progress: Progress | None) -> Outcome:
        """Runs the study; ``progress``, when given, takes one line per step."""

    def plot(self, out: Path, config: C, outcome: Outcome) -> list[Path]:
        """Draws the plots into ``out``; returns the PNG paths (each with an SVG beside it)."""
        return []

    @abstractmethod
    def table(self, config: C, outcome: Outcome) -> None:
        """Prints the study's tables."""

    def json_text(self, path: Path, outcome: Outcome) -> str:
        """What ``--json`` prints: ``result.json`` unless the study says otherwise."""
        return path.read_text(encoding="utf-8")

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        """The lines after the tables that name the files written."""
        return [f"results: {path} and {out / 'result.csv'}", *(f"plot:    {p} (and .svg)" for p in plots)]

    def exit_code(self, outcome: Outcome) -> int:
        """The exit status once the study has run (0 unless a check it makes failed)."""
        return 0


def run_study(study: Study[Any], args: argparse.Namespace) -> int:
    """Runs ``study`` for the parsed ``args`` (which carry ``out`` and ``json``)."""
    config = study.config_from(args)
    out = output_dir(args.out, inputs=inputs_of(args))  # checked before the run: a bad --out costs no work
    # Progress unless --json: a bar or every step on a terminal, a line now and then elsewhere.
    restart_lines()

    def keep(finished: Outcome) -> None:
        if finished.rows:
            write_progress(out, study.experiment, finished.config, finished.rows)  # and no plot, not an earlier one

    try:
        with before_forced_exit(lambda: keep(_keeping[-1]()) if _keeping else None):
            outcome = study.run(config, None if args.json else line_progress)
    except Stopped as stop:
        keep(stop.finished)
        raise
    path = write_results(out, study.experiment, outcome.config, outcome.rows)
    try:
        plots, failed = study.plot(out, config, outcome), None
    except (SuperlinearError, OSError) as e:
        # The run is done and its rows are written: show them, then say what failed (a full disk).
        plots, failed = [], e
    record_plots(path, plots, **({"summary": outcome.summary} if outcome.summary is not None else {}))
    if args.json:
        print(study.json_text(path, outcome))
    else:
        study.table(config, outcome)
        for line in study.footer(out, path, plots, outcome) if failed is None else []:
            console.print(line)
    if failed is not None:
        why = f"{failed.filename}: {failed.strerror}" if isinstance(failed, OSError) and failed.strerror else failed
        raise SuperlinearError(f"the plots were not written: {why} (the results are in {path})")
    return study.exit_code(outcome)


def add_study_options(parser: argparse.ArgumentParser, study: Study[Any], default_out: str,
                      json_help: str = "print result.json instead of the tables") -> None:
    """Adds ``--out`` and ``--json`` to a study's subcommand and makes the runner run it."""
    parser.add_argument("--out", default=default_out, help=f"output folder (default {default_out})")
    parser.add_argument("--json", action="store_true", help=json_help)
    parser.set_defaults(func=lambda args: run_study(study, args))
