"""Caching with delayed hits: traces, policies and Belatedly (:mod:`.sim`), their plots
(:mod:`.plots`) and the ``latency-sim`` command (:mod:`.cli`)."""
