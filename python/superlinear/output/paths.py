"""Where results go: every ``--out`` is checked the same way before anything is written (a file
where a folder is wanted, a folder where a file is wanted, a missing parent folder), and files
are written atomically (a temporary file beside, renamed; removed if the write fails), so an
error never leaves a half-written file or a stray temporary one."""

from __future__ import annotations

import contextlib
from pathlib import Path

from superlinear.common.errors import SuperlinearError


def output_file(path: Path, flag: str = "--out") -> Path:
    """A file the command may write: not a folder, in a folder that exists."""
    if path.is_dir():
        raise SuperlinearError(f"{flag} {path}: a folder; give a file name (e.g. {path / 'index.html'})")
    if not path.parent.is_dir():
        raise SuperlinearError(f"{flag} {path}: the folder {path.parent} does not exist")
    return path


def output_folder(path: Path, flag: str = "--out") -> Path:
    """A folder the command may write into (created if missing): not an existing file."""
    if path.exists() and not path.is_dir():
        raise SuperlinearError(f"{flag} {path}: a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SuperlinearError(f"{flag} {path}: cannot create the folder: {e.strerror or e}") from None
    return path


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file that is renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SuperlinearError(f"{path}: cannot write: {e.strerror or e}") from None
