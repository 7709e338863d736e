"""A ClassBench header trace as a key trace for ``superlinear predict --trace``: one flow key per
line, the 5-tuple (source, destination, ports, protocol) folded into 63 bits with FNV-1a.

    python scripts/classbench_keys.py ../shared/data/classbench/fw1_5k_trace > fw1_keys.txt
"""

from __future__ import annotations

import sys

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def flow_key(fields: list[str]) -> int:
    h = FNV_OFFSET
    for v in map(int, fields[:5]):
        h = ((h ^ v) * FNV_PRIME) & MASK
    return h >> 1


def main() -> None:
    with open(sys.argv[1], encoding="ascii") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5:
                print(flow_key(fields))


if __name__ == "__main__":
    main()
