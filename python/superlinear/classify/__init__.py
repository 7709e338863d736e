"""Packet classification: packet workloads (rules and traces) run by the Rust classifiers behind a
dispatcher (:mod:`.workload`, also importable from here), and the ``classify`` command (:mod:`.cli`)."""

from superlinear.classify.workload import PacketWorkloadSpec, load

__all__ = ["PacketWorkloadSpec", "load"]
