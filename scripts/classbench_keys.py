"""A ClassBench header trace as a key trace for ``superlinear predict --trace`` (one flow key per
line: the 5-tuple folded with FNV-1a). Kept for old commands; the converter is
``python -m superlinear.classify.flow_keys TRACE OUT``.

    python scripts/classbench_keys.py ../shared/data/classbench/fw1_5k_trace > fw1_keys.txt
"""

from __future__ import annotations

import sys

from superlinear.classify.flow_keys import FlowKeyError, flow_keys


def main() -> int:
    try:
        with open(sys.argv[1], encoding="ascii", errors="replace") as f:
            for key in flow_keys(f, sys.argv[1]):
                print(key)
    except (OSError, FlowKeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
