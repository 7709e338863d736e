"""Algorithmic complexity attacks and SurgeProtector: the simulated, worker and queue studies
(:mod:`.studies`), the packet-classifier study (:mod:`.classifier`) and the ``attack`` command
(:mod:`.cli`)."""
