"""Text files a user names (a sweep's TOML, a ``usl`` CSV, an ``--updates`` file, a
``result.json``), read the one way that answers every mistake in one line before any work:
a folder, a device or a pipe that never ends, a file larger than the memory that would hold it,
bytes that are not UTF-8 text (with the line they are on), and a byte-order mark, which
editors on some systems write and which is stripped rather than read as part of the first
field. The Rust readers of rules and traces make the same checks, in the same words, on their
own side (``crates/core/src/input.rs``).
"""

from __future__ import annotations

import stat
from pathlib import Path

from superlinear.common.bounds import USABLE, mem_available_bytes, size_text
from superlinear.common.errors import SuperlinearError

#: Bytes of memory a parsed text file takes per byte of the file, at most: the decoded string
#: and the parser's structures (TOML tables, CSV rows, JSON objects) beside it.
PARSED_BYTES_PER_FILE_BYTE = 8


def read_input_text(path: str | Path, what: str) -> str:
    """The text of the input file ``path``; ``what`` names it in errors (``--updates``, ``the
    sweep file``). Raises :class:`SuperlinearError` naming the file (and line) and the problem."""
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise SuperlinearError(f"{p}: no such file ({what})") from None
    except OSError as e:
        raise SuperlinearError(f"{p}: cannot read ({what}): {e.strerror or e}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SuperlinearError(f"{p}: a folder, not a file ({what})")
    if not stat.S_ISREG(info.st_mode):
        raise SuperlinearError(f"{p}: not a regular file ({what}; a device, pipe or socket may never end; "
                               f"give a file)")
    avail = mem_available_bytes()
    needed = info.st_size * PARSED_BYTES_PER_FILE_BYTE
    if avail is not None and needed > USABLE * avail:
        raise SuperlinearError(f"{p}: too large to read ({what}): {size_text(info.st_size)} (reading it needs "
                               f"about {size_text(needed)} of memory, but only {size_text(avail)} are available)")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SuperlinearError(f"{p}: cannot read ({what}): {e.strerror or e}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SuperlinearError(f"{p}:{line}: not UTF-8 text ({what})") from None
