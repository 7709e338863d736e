"""The engine: one run of worker algorithm × dispatcher × workload × k (:mod:`.runs`), the
micro-benchmarks (:mod:`.bench`) and TOML sweeps (:mod:`.sweep`); ``run``, ``sweep`` and ``bench``
on the command line (:mod:`.cli`)."""

from superlinear.engine.runs import RunResult, RunSpec, Workload, run

__all__ = ["RunResult", "RunSpec", "Workload", "run"]
