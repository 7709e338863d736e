"""Where a command may write: the one check of every ``--out`` (and ``--emit``), made before any
work starts, so a wrong path costs one line and no lost run.

* an output **folder** (``reproduce``, ``sweep``, ``law``, ``bench``, ...) is created with its
  parents where missing; an existing file of that name is refused;
* an output **file** (``report``, ``usl fit``, ``classify gen-rules``, ...) must not be a folder,
  and its folder must exist already: a typo in a path is reported, not turned into new folders;
* a name taken from a config file (a sweep's ``name``) must be one plain folder name, so it stays
  inside ``results/``;
* files are written through a temporary file beside them, removed again if the write fails;
  a symbolic link keeps its place (its target is written), and a device, a FIFO or a socket
  (``/dev/stdout``, a pipe) is written in place, never replaced by a file.

Every problem is a :class:`SuperlinearError` naming the path and the option.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from superlinear.common.errors import SuperlinearError

if TYPE_CHECKING:
    import argparse

#: The output folders the running command created: if it then fails on its input, it removes
#: those it left empty (:func:`remove_empty_created`).
_created: list[Path] = []


def forget_created() -> None:
    """Starts a command: the folders earlier commands of this process made are theirs to keep."""
    _created.clear()


def remove_empty_created() -> None:
    """Removes the output folders this command created and left empty, deepest first: a command
    refused for a bad input leaves no trace, while one that wrote anything keeps it all."""
    for folder in sorted(_created, key=lambda f: len(f.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only an empty folder goes
    _created.clear()


def refuse_stdout(path: str | Path | None, option: str, why: str) -> None:
    """Refuses ``-`` (standard output where a command says so, ``classify convert --out -``) for
    an option that names a file or a folder here; ``why`` says what it names instead."""
    if path is not None and str(path) == "-":
        raise SuperlinearError(f"{option} -: {why}")


#: Names a result folder's writer replaces, or moves to ``previous-result/`` at a run's start.
RESULT_FILE_NAMES = ("result.json", "result.csv")
RESULT_FILE_SUFFIXES = (".png", ".svg")


def inputs_of(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The ``(name, path)`` of each argument in ``args`` that names an existing file (a trace, a
    rule set, a sweep file; ``name`` as ``the trace file`` words it): what an output folder must
    not swallow. Any value is looked at, since a command's file options differ; one that is no
    path (a list of k, a long one) is not a file."""
    found = []
    for name, value in vars(args).items():
        if name in ("out", "emit", "func") or callable(value):
            continue
        for v in value if isinstance(value, list) else [value]:
            # os.path.isfile answers False for what stat refuses (a name too long, no permission).
            if isinstance(v, str | Path) and str(v) not in ("", "-") and os.path.isfile(v):
                found.append((name.replace("_", " "), str(v)))
    return found


def _written_by_results(folder: Path, source: Path) -> bool:
    """Whether a result written to ``folder`` would replace or move ``source`` (a link: the file
    it points to, which is what would be replaced)."""
    try:
        real = Path(os.path.realpath(source))
        inside = real.parent == Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return inside and (real.name in RESULT_FILE_NAMES or real.suffix.lower() in RESULT_FILE_SUFFIXES)


def output_dir(path: str | Path, option: str = "--out", inputs: Sequence[tuple[str, str | Path]] = ()) -> Path:
    """The output folder ``path``, created (with missing parents) if it does not exist; refused
    when the result written there would replace one of the command's ``inputs`` (``(name, path)``,
    as :func:`inputs_of` gives them)."""
    if not str(path).strip():
        raise SuperlinearError(f"{option}: empty (name a folder)")
    refuse_stdout(path, option, "this command writes a folder of results, not standard output (name a folder)")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SuperlinearError(f"{p}: exists and is not a folder ({option} takes a folder here)")
    for name, source in inputs:
        if p.is_dir() and _written_by_results(p, Path(source)):
            raise SuperlinearError(f"{source}: is the {name} file, and the result written to {p} would replace it "
                                   f"({option}: name another folder)")
    missing = [f for f in (p, *p.parents) if not f.exists()]
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SuperlinearError(f"{p}: cannot create the output folder ({option}): {e.strerror or e}") from None
    _created.extend(missing)
    if not os.access(p, os.W_OK | os.X_OK) or not _can_create_in(p):
        raise SuperlinearError(f"{p}: the output folder ({option}) is not writable")
    return p


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``, tried for real: ``os.access`` answers yes to
    root for any folder, including ones no file can be made in (``/proc``, ``/sys``)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def output_file(path: str | Path, option: str = "--out",
                inputs: Sequence[tuple[str, str | Path | None]] = ()) -> Path:
    """The output file ``path``, checked: not a folder, in a folder that exists and is writable,
    and not one of the command's ``inputs`` (``(flag, path)``; writing it would destroy it)."""
    if not str(path).strip():
        raise SuperlinearError(f"{option}: empty (name a file)")
    refuse_stdout(path, option, "this command writes a file, not standard output (name a file)")
    p = Path(path)
    for flag, source in inputs:
        with contextlib.suppress(OSError):
            if source is not None and p.exists() and os.path.samefile(p, source):
                raise SuperlinearError(f"{p}: is the {flag} file; {option} would overwrite it (name another file)")
    if p.is_dir():
        raise SuperlinearError(f"{p}: is a folder ({option} takes a file name here, e.g. {p / 'out'})")
    parent = p.parent
    if not parent.exists():
        raise SuperlinearError(f"{p}: folder {parent} does not exist ({option}; create it first)")
    if not parent.is_dir():
        raise SuperlinearError(f"{p}: {parent} is not a folder ({option})")
    if (not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK))
            or not _can_create_in(parent)):
        raise SuperlinearError(f"{p}: not writable ({option})")
    return p


def plain_name(name: str, where: str) -> str:
    """``name`` if it is one folder name (no ``/``, not ``.`` or ``..``, not empty), so that
    ``results/NAME`` stays inside ``results/``; ``where`` names its source in the error."""
    if not name.strip() or name in (".", "..") or any(c in name for c in ("/", "\\", "\0")):
        raise SuperlinearError(f"{where} must be one folder name (no '/', not '.' or '..'), got {name!r}")
    if any(not c.isprintable() for c in name):
        # A terminal would run an escape in a title, and a newline splits a folder's name in listings.
        raise SuperlinearError(f"{where} must be printable (no control characters), got {name!r}")
    size = len(name.encode(errors="surrogateescape"))
    if size > MAX_NAME_BYTES:
        # Its files are named after it too (NAME-a.png): past this, one is longer than a file
        # system takes, and the run would fail at its end.
        raise SuperlinearError(f"{where} is {size} bytes long: at most {MAX_NAME_BYTES}")
    return name


#: Longest name ``plain_name`` takes, in bytes (file systems take 255 for a file name).
MAX_NAME_BYTES = 200


def _written_in_place(path: Path) -> bool:
    """Whether ``path`` (its links followed) is a device, a FIFO or a socket: there is no file to
    replace (renaming one onto it would put a plain file where ``/dev/null`` was)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def written_atomically(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for the block to write (a native writer takes it as its
    output); renamed onto ``path`` when the block ends, removed when it fails: a reader never sees
    half a file, and a failed write (a full disk, Ctrl-C) leaves the old file as it was. A link is
    followed, so the file it points to is written and the link stays; a device, a FIFO or a
    socket is written in place (``path`` itself is yielded)."""
    if _written_in_place(path):
        try:
            yield path
        except OSError as e:
            raise SuperlinearError(f"{path}: cannot write: {e.strerror or e}") from None
        return
    shown, path = path, Path(os.path.realpath(path))
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
        tmp.replace(path)
    except OSError as e:
        # The user named ``path``, not the temporary file beside it.
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if not path.parent.is_dir():
            raise SuperlinearError(f"{shown}: cannot write: folder {path.parent} does not exist") from None
        raise SuperlinearError(f"{shown}: cannot write: {e.strerror or e}") from None
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(e, SuperlinearError) and str(tmp) in str(e):
            raise SuperlinearError(str(e).replace(str(tmp), str(shown))) from None
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file beside it (:func:`written_atomically`)."""
    with written_atomically(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
