"""The cache tier's **work** kind: a run's exact operation counts × unit CPU costs, turned into a
completion time on ideal cores (one per participant, no contention) by the two asymptotic bounds
of a closed queueing system (Denning and Buzen, "The operational analysis of queueing network
models", 1978; X(N) ≤ min(N / D, 1 / D_max)):

* **the busiest participant**: a memcached replica's gets and fills, a PostgreSQL connection's
  share of the queries. No server finishes its share faster than it computes it.
* **the client path**: the paper's client threads are closed loops (App. B: "first it tries to
  read from Memcached and, on a cache miss, makes a read from PostgreSQL and writes the result
  back into the cache"). A thread waits for its own get, query and fill, so per request it spends
  its own CPU plus the servers' CPU for that request; all of it over the client threads.

A hit's path is a client read and a get; a miss adds the client's query and fill, the query and
the fill. So the miss penalty ρ of Eq. 3 is the miss's path over the hit's, and where the client
path is the longer bound at both ends, key hashing's speedup over linear is δ + (1 − δ)·ρ at full
hit rate, as Eq. 3 says. Where a single-threaded replica is the longer bound, its work per request
falls only from a get and 1 − δ fills to a get: the paper's "replicas must be CPU-bounded".

A get and a fill are costed apart: a fill (a set that evicts, after a get that found nothing)
costs memcached about 1.4 to 1.5 times what a get of a held key does, so one cost per operation,
averaged where most reads miss, overcharges the hits that dominate once the hot set fits. One run
cannot tell the two apart (memcached reports CPU, not CPU per command), so the driver calibrates
them from two runs at k = 1 (:meth:`UnitCosts.from_calibration`).

Used by the Fig. 11 driver (counts of real runs) and the advisor (counts of simulated LRUs), so
the two compute the work kind the same way.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from superlinear.common.rows import Row


@dataclass(frozen=True)
class UnitCosts:
    """CPU nanoseconds (or any one unit) per operation."""

    #: A memcached get.
    memcached: float
    #: A PostgreSQL query (its backend's CPU).
    postgresql: float
    #: The client's CPU that every read pays (route, get, check the value).
    client_hit: float
    #: The client CPU a read past the cache adds (the query's protocol, the fill).
    client_miss: float
    #: A memcached fill, with what a get of a missing key costs beyond a get of a held one.
    memcached_fill: float

    @classmethod
    def from_row(cls, row: Row) -> UnitCosts:
        """Calibrated on one run: CPU totals over the run's operation counts. One run cannot tell a
        get's memcached CPU from a fill's, so both get the mean per operation (the estimator before
        :meth:`from_calibration`; the driver keeps it as ``speedup_work_one_memcached_cost``)."""
        ops = sum(row["replica_requests"]) + sum(row["replica_fills"])
        miss_cpu = row["client_miss_cpu_ns"]
        per_op = row["replica_cpu_sum_ns"] / max(ops, 1)
        return cls(memcached=per_op,
                   postgresql=row["db_backend_cpu_sum_ns"] / max(row["db_reads"], 1),
                   client_hit=(row["client_cpu_ns"] - miss_cpu) / max(row["requests"], 1),
                   client_miss=miss_cpu / max(row["reads_past_cache"], 1),
                   memcached_fill=per_op)

    @classmethod
    def from_calibration(cls, hits: Row, mixed: Row) -> UnitCosts | None:
        """Calibrated on two runs of one replica: ``hits``, where (nearly) every read hits (a hot set
        the replica holds), and ``mixed``, the panel's own reads, mostly misses. Their memcached CPU
        over their gets and fills is two equations in a get's and a fill's cost; the rest is
        :meth:`from_row` of ``mixed``. None where the two runs do not tell gets from fills (the hit
        run fills as often as the mixed one, or the solution has a cost below zero)."""
        gh, fh = sum(hits["replica_requests"]), sum(hits["replica_fills"])
        gm, fm = sum(mixed["replica_requests"]), sum(mixed["replica_fills"])
        ch, cm = hits["replica_cpu_sum_ns"], mixed["replica_cpu_sum_ns"]
        det = gh * fm - gm * fh
        if det <= 0:
            return None
        get = (ch * fm - cm * fh) / det
        fill = (gh * cm - gm * ch) / det
        if get < 0 or fill < 0:
            return None
        return dataclasses.replace(cls.from_row(mixed), memcached=get, memcached_fill=fill)

    @classmethod
    def median_of(cls, runs: Sequence[UnitCosts]) -> UnitCosts:
        """Each unit's median over several calibration runs (the interleaved rounds' k = 1 runs)."""
        return cls(**{f.name: statistics.median(getattr(u, f.name) for u in runs) for f in dataclasses.fields(cls)})

    @property
    def least_rho(self) -> float:
        """ρ with a free database: a miss still costs the client's read, the get and the fill."""
        return (self.client_hit + self.memcached + self.memcached_fill) / max(self.hit_path, 1e-12)

    def with_rho(self, rho: float) -> UnitCosts | None:
        """These costs with the database side of a miss (the query and the client's part past the
        cache) scaled so that ρ is ``rho``; None below :attr:`least_rho`."""
        if rho < self.least_rho:
            return None
        scale = (rho - self.least_rho) * self.hit_path / max(self.client_miss + self.postgresql, 1e-12)
        return dataclasses.replace(self, postgresql=self.postgresql * scale, client_miss=self.client_miss * scale)

    @property
    def hit_path(self) -> float:
        return self.client_hit + self.memcached

    @property
    def miss_path(self) -> float:
        return self.client_hit + self.client_miss + self.memcached + self.memcached_fill + self.postgresql

    @property
    def rho(self) -> float:
        """ρ of Eq. 3: a miss's request path over a hit's."""
        return self.miss_path / max(self.hit_path, 1e-12)


@dataclass(frozen=True)
class Counts:
    """What one run (or one simulated run) did."""

    #: Gets each replica served.
    replica_gets: Sequence[int]
    #: Fills each replica served.
    replica_fills: Sequence[int]
    requests: int
    #: Reads that went past the cache (misses, delayed hits, bypasses).
    past_cache: int
    db_reads: int
    threads: int
    db_connections: int

    @classmethod
    def from_row(cls, row: Row) -> Counts:
        return cls(replica_gets=list(row["replica_requests"]), replica_fills=list(row["replica_fills"]),
                   requests=row["requests"], past_cache=row["reads_past_cache"],
                   db_reads=row["db_reads"], threads=row["threads"], db_connections=row["db_connections"])


def spans(counts: Counts, unit: UnitCosts) -> dict[str, float]:
    """Each participant's time on an ideal core (a replica's, a connection's, a client thread's own
    CPU) and the client threads' request path."""
    own = counts.requests * unit.client_hit + counts.past_cache * unit.client_miss
    replicas = [g * unit.memcached + f * unit.memcached_fill
                for g, f in zip(counts.replica_gets, counts.replica_fills, strict=True)]
    return {
        "memcached": max(replicas or [0.0]),
        "postgresql": counts.db_reads * unit.postgresql / max(counts.db_connections, 1),
        "client": own / max(counts.threads, 1),
        "client path": (own + sum(replicas) + counts.db_reads * unit.postgresql) / max(counts.threads, 1),
    }


def work_span(counts: Counts, unit: UnitCosts) -> tuple[float, str]:
    """The completion time the counts allow on ideal cores, and which bound sets it
    (``memcached``, ``postgresql`` or ``client path``)."""
    s = spans(counts, unit)
    who = max(s, key=lambda w: s[w])
    return s[who], who


def busiest_participant_span(counts: Counts, unit: UnitCosts) -> float:
    """The estimator before the client path was a bound (kept as ``speedup_work_busiest``, so the
    change is visible): the busiest participant alone, as if the client threads never waited."""
    s = spans(counts, unit)
    return max(s["memcached"], s["postgresql"], s["client"])
