"""Packet classification: packet workloads (rules and traces) run by the Rust classifiers behind a
dispatcher (:mod:`.workload`), and the ``classify`` command (:mod:`.cli`)."""
