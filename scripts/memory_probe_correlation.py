"""Does a worker's speed follow the machine's memory noise? The evidence behind the ``machine
noise`` line of every reproduction (docs/results/reproducibility.md, 2026-12-02).

    python scripts/memory_probe_correlation.py --algo mtf --m 20000 --lookups 20000 --seconds 60

Alternates, for ``--seconds``: a 10 ms memory probe (``_native.MemoryProbe``: a random walk over
¾ of one core's L2, then a multiply chain), one single-thread benchmark of the structure
(``_native.bench_structure``: lookups per second on uniform keys), another probe. Prints the
spread of each, the Spearman rank correlation of the probes' mean walk time with the rate, and the
median rate in the quarter of rounds whose walk was fastest against the quarter whose walk was
slowest. Run it with nothing else on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from scipy.stats import spearmanr

from superlinear import _native
from superlinear.common.bounds import check_memory
from superlinear.common.errors import SuperlinearError
from superlinear.experiments.repeats import spread


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--algo", default="mtf")
    p.add_argument("--m", type=int, default=20_000)
    p.add_argument("--lookups", type=int, default=20_000)
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args()
    if not args.seconds > 0 or args.m < 1 or args.lookups < 1:
        p.error("--seconds, --m and --lookups must be positive")
    probe = _native.MemoryProbe()
    walks: list[float] = []
    chains: list[float] = []
    rates: list[float] = []
    end = time.monotonic() + args.seconds
    try:
        check_memory(f"--m {args.m:,}", 8 * args.m)
        while time.monotonic() < end:
            before = probe.sample(10.0)
            rate = _native.bench_structure(args.algo, args.m, args.lookups)
            after = probe.sample(10.0)
            rates.append(rate)
            walks.append((before[0] + after[0]) / 2)
            chains.append((before[1] + after[1]) / 2)
    except SuperlinearError as e:
        p.error(str(e))
    except KeyboardInterrupt:  # report the rounds that finished, then exit as interrupted
        print(f"interrupted after {len(rates)} rounds", file=sys.stderr)
        interrupted = True
    else:
        interrupted = False
    if len(rates) < 3:
        sys.exit(f"{len(rates)} rounds finished: a correlation needs at least 3 (give more --seconds)")

    def thousands(values: list[float]) -> str:
        return spread([v / 1e3 for v in values], ",.1f")

    order = sorted(range(len(walks)), key=walks.__getitem__)
    quarter = max(1, len(order) // 4)
    fast = statistics.median(rates[i] for i in order[:quarter])
    slow = statistics.median(rates[i] for i in order[-quarter:])
    rho, p_value = spearmanr(walks, rates)
    print(f"{len(rates)} rounds of {args.algo}, m = {args.m:,}, {args.lookups:,} lookups each, "
          f"probe walk over {probe.bytes / 1024:,.0f} KiB")
    print(f"walk ns per step: {spread(walks, ',.1f')}; multiply chain ns per step: {spread(chains, ',.1f')}")
    print(f"{args.algo} lookups per second (thousands): {thousands(rates)}")
    print(f"Spearman rank correlation of walk time with rate: {rho:+.2f} (p = {p_value:.1g})")
    print(f"median rate, fastest-walk quarter: {fast / 1e3:,.1f}k/s; slowest-walk quarter: {slow / 1e3:,.1f}k/s "
          f"({fast / slow:.2f}×)")
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
