"""Text files a user names (a sweep's TOML, a ``usl`` CSV, an ``--updates`` file, a
``result.json``), read the one way that answers every mistake in one line before any work:
a folder, a device or a pipe that never ends, a file larger than the memory that would hold it,
bytes that are not UTF-8 text (with the line they are on), and a byte-order mark, which
editors on some systems write and which is stripped rather than read as part of the first
field. The Rust readers of rules and traces make the same checks, in the same words, on their
own side (``crates/core/src/input.rs``).
"""

from __future__ import annotations

import errno
import re
import stat
from pathlib import Path

from superlinear.common.bounds import USABLE, mem_available_bytes, size_text
from superlinear.common.errors import SuperlinearError

#: Bytes of memory a parsed text file takes per byte of the file, at most: the decoded string
#: and the parser's structures (TOML tables, CSV rows, JSON objects) beside it. The Rust
#: readers' text factor is the same (``TEXT_BYTES_PER_FILE_BYTE``).
PARSED_BYTES_PER_FILE_BYTE = 8


def io_words(e: OSError) -> str:
    """An io error in words, as the Rust readers put it (``input::io_words``)."""
    if isinstance(e, FileNotFoundError):
        return "no such file"
    if isinstance(e, PermissionError):
        return "permission denied"
    if isinstance(e, IsADirectoryError):
        return "a folder, not a file"
    if e.errno == errno.ENOTDIR:
        return "no such file (a part of the path is a file, not a folder)"
    words = e.strerror or str(e)
    return words[:1].lower() + words[1:]


def _too_large(size: int, avail: int, over: bool) -> str:
    return (f"too large to read: {'over ' if over else ''}{size_text(size)} (reading it needs about "
            f"{size_text(size * PARSED_BYTES_PER_FILE_BYTE)} of memory, but only {size_text(USABLE * avail)} of "
            f"the {size_text(avail)} available may be used)")


def require_input_file(path: str | Path, option: str) -> None:
    """Refuses, in one line naming ``option``, an input path that is missing or a folder; what
    else is no file (a device, a pipe) the reader refuses in its own words."""
    p = Path(path)
    if p.is_dir():
        raise SuperlinearError(f"{p}: a folder, not a file ({option})")
    if not p.exists():
        raise SuperlinearError(f"{p}: no such file ({option})")


#: A control byte no text file holds (as the Rust readers': ``input::first_control_byte``): NUL
#: and the other C0 controls but tab, line feed, vertical tab, form feed and carriage return.
_CONTROL_BYTE = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def read_input_text(path: str | Path, what: str, pipe_ok: bool = False) -> str:
    """The text of the input file ``path``; ``what`` names it in errors (``--updates``, ``the
    sweep file``). Raises :class:`SuperlinearError` naming the file (and line) and the problem.
    ``pipe_ok``: the command reads it once, so a pipe (``cat x.csv | ... /dev/stdin``) will do."""
    p = Path(path)

    def fail(problem: str) -> SuperlinearError:
        return SuperlinearError(f"{p}: {problem} ({what})")

    try:
        info = p.stat()
    except OSError as e:
        raise fail(f"cannot read: {io_words(e)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise fail("a folder, not a file")
    if stat.S_ISFIFO(info.st_mode) and not pipe_ok:
        raise fail("a pipe, which can be read only once, while a run may read its input again; write it to a file "
                   "first")
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISFIFO(info.st_mode):
        raise fail("not a regular file: a device or socket, which may never end; give a file")
    avail = mem_available_bytes()
    limit = None if avail is None else int(USABLE * avail) // PARSED_BYTES_PER_FILE_BYTE
    if limit is not None and avail is not None and info.st_size > limit:
        raise fail(_too_large(info.st_size, avail, over=False))
    try:
        with p.open("rb") as f:
            # A file that grows while it is read (a /proc file) is read up to the limit, not
            # until memory runs out.
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as e:
        raise fail(f"cannot read: {io_words(e)}") from None
    if limit is not None and avail is not None and len(data) > limit:
        raise fail(_too_large(len(data), avail, over=True))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SuperlinearError(f"{p}:{line}: not UTF-8 text ({what})") from None
    control = _CONTROL_BYTE.search(data)
    if control is not None:
        line = data.count(b"\n", 0, control.start()) + 1
        byte = data[control.start()]
        guess = "terminal colour codes?" if byte == 0x1B else "a binary file?"  # as input::control_byte_words
        raise SuperlinearError(f"{p}:{line}: not text: control byte 0x{byte:02x} ({guess}) ({what})")
    return text


def has_kind(value: object, kind: type | tuple[type, ...]) -> bool:
    """Whether a value read from a hand-written file (TOML, JSON) is of ``kind``: ``isinstance``,
    except that true and false are not numbers unless ``bool`` is asked for."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def kind_words(kind: type | tuple[type, ...]) -> str:
    """A value kind as an error names it: ``an integer or null``."""
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
             dict: "a table", type(None): "null"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)
