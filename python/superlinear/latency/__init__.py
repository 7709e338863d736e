"""Caching with delayed hits: traces, policies and Belatedly (:mod:`.sim`), their plots
(:mod:`.plots`) and the ``latency-sim`` command (:mod:`.cli`). The Python API is
:mod:`.sim`'s, also importable from here (``superlinear.latency.simulate``)."""

from superlinear.latency.sim import (
    BelatedlyResult,
    SimResult,
    Speed,
    Trace,
    TraceSpec,
    belatedly,
    grid,
    optimal,
    policies,
    policy_names,
    simulate,
    speed,
)

__all__ = ["BelatedlyResult", "SimResult", "Speed", "Trace", "TraceSpec", "belatedly", "grid", "optimal",
           "policies", "policy_names", "simulate", "speed"]
