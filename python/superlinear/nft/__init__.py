"""The nftables benchmark: rule sets loaded into the kernel inside network namespaces
(:mod:`.netns`), read back and compared (:mod:`.ruleset_json`), timed by CPU accounting
(:mod:`.cpuacct`) and reported (:mod:`.report`); the ``nft-bench`` command (:mod:`.cli`)."""
