"""The Memcached + PostgreSQL cache tier: its servers (:mod:`.services`), the native client's
config and derived figures (:mod:`.client`), and the ``cache`` command (:mod:`.cli`)."""
