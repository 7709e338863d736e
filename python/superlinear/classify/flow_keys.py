"""A ClassBench header trace as a key trace for the engine (``superlinear run|predict|advise
--trace``): one flow key per packet, the 5-tuple (source, destination, source port, destination
port, protocol) folded into 63 bits with FNV-1a, one decimal key per line (the engine's text key
trace format). Packets of one flow get one key, so the key stream keeps the trace's flow locality.

    python -m superlinear.classify.flow_keys ../shared/data/classbench/fw1_5k_trace fw1_keys.txt

Prints one line (packets and distinct flows written); a malformed line is a one-line error naming
the file and line, exit status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from superlinear.common.errors import SuperlinearError
from superlinear.common.input_files import read_input_text

__all__ = ["convert", "flow_key", "flow_keys"]

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1
#: A header's five fields and the bound of each (the classifier's trace reader checks the same).
HEADER_FIELDS = ("source address", "destination address", "source port", "destination port", "protocol")
HEADER_LIMITS = (1 << 32, 1 << 32, 1 << 16, 1 << 16, 1 << 8)


class FlowKeyError(ValueError):
    """A line of the trace is not a ClassBench header."""


def flow_key(fields: Iterable[int]) -> int:
    """FNV-1a over the five header fields, shifted to 63 bits (fits every signed 64-bit reader)."""
    h = FNV_OFFSET
    for v in fields:
        h = ((h ^ v) * FNV_PRIME) & MASK
    return h >> 1


def flow_keys(lines: Iterable[str], name: str = "trace") -> Iterator[int]:
    """The flow key of every header line (blank lines and ``#`` comments skipped). A ClassBench
    header line is: src dst sport dport proto [flags filter ...], integers."""
    for i, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        try:
            if len(fields) < 5:
                raise ValueError
            values = [int(f) for f in fields[:5]]
        except ValueError:
            shown = text[:40]
            raise FlowKeyError(f"{name}:{i}: expected a ClassBench header (src dst sport dport proto ...), "
                               f"got {shown!r}") from None
        for field, value, limit in zip(HEADER_FIELDS, values, HEADER_LIMITS, strict=True):
            if not 0 <= value < limit:
                raise FlowKeyError(f"{name}:{i}: {field} {value} is out of range (0 to {limit - 1:,})")
        yield flow_key(values)


def convert(src: Path, dst: Path) -> tuple[int, int]:
    """Writes the flow keys of the ClassBench trace ``src`` to ``dst``; returns (packets, flows)."""
    keys = list(flow_keys(read_input_text(src, "the ClassBench trace").splitlines(), str(src)))
    if not keys:
        raise FlowKeyError(f"{src}: no packet headers")
    dst.write_text("".join(f"{k}\n" for k in keys), encoding="ascii")
    return len(keys), len(set(keys))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m superlinear.classify.flow_keys CLASSBENCH_TRACE OUT_KEYS", file=sys.stderr)
        return 2
    try:
        packets, flows = convert(Path(args[0]), Path(args[1]))
    except (OSError, FlowKeyError, SuperlinearError) as e:
        print(f"flow_keys: error: {e}", file=sys.stderr)
        return 2
    print(f"{args[1]}: {packets:,} keys over {flows:,} flows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
