from typing import Any, Literal, TypedDict

class SuperlinearError(Exception): ...

MAX_WINDOW_PASSES: int

# Result records (crates' serde records; crates/py/src/convert.rs turns them into dicts), declared
# once here: Python has no other copy of them.

class Accounting(TypedDict):
    """One run's cost (superlinear_core::accounting::AccountingRecord)."""

    k: int
    requests: int
    wall_ns: int | None
    dispatcher_cpu_ns: int
    dispatchers: int
    dispatcher_cpu_total_ns: int
    worker_cpu_ns: list[int]
    worker_estimate_ns: list[int]
    worker_runs: list[int]
    worker_work: list[int]
    worker_requests: list[int]
    cost_per_work_ns: float | None
    projected_ns: int
    projected_max_cpu_ns: int
    workers_rerun: int
    work_span: int
    work_total: int
    hit_rate: float | None
    load_imbalance: float
    work_imbalance: float
    worker_entries_moved: list[int | None]
    entries_moved_total: int | None
    work_with_moves_span: int | None
    worker_serve_wall_ns: list[int]
    dispatcher_blocked_ns: int | None
    dispatcher_shares_core: bool | None

class RunRecord(TypedDict):
    items: int
    cores: int
    projected: Accounting | None
    measured: Accounting | None
    single_core: Accounting | None

class LawWorkerStats(TypedDict):
    requests: int
    work: int
    first_accesses: int
    absent: int
    mean_working_set: float | None
    hits: int | None

class LawPoint(TypedDict):
    k: int
    baseline_work: int
    work_total: int
    work_span: int
    ell: float
    q: float
    work_speedup: float
    s: float
    law_speedup: float
    load_imbalance: float
    hit_rate: float | None
    workers: list[LawWorkerStats]

class SimOutcome(TypedDict):
    duration_us: float
    window_us: float
    goodput: float
    attack_goodput: float
    innocent_offered: int
    innocent_served: int
    innocent_dropped: int
    attack_offered: int
    attack_served: int
    attack_dropped: int
    utilisation: float

class AttackParams(TypedDict):
    bits: int
    job_us: float

class SweepPoint(TypedDict):
    attack_rate: float
    optimal: AttackParams
    used: AttackParams
    outcome: SimOutcome
    displaced: float
    df: float
    resolved: bool

class SweepRecord(TypedDict):
    policy: str
    innocent_rate: float
    r_max: float
    mean_bits: float
    mean_job_us: float
    bits_min: int
    job_max_us: float
    baseline: SimOutcome
    displacement_factor: float
    bound: float | None
    bound_kind: Literal["lower", "upper"] | None
    points: list[SweepPoint]

class TrafficRecord(TypedDict):
    mean_bits: float
    mean_job_us: float
    r_max: float
    bits_min: int
    bits_max: int
    job_max_us: float
    flows: int

class QueueBenchRecord(TypedDict):
    pairs: int
    cpu_ns: int
    pairs_per_s: float
    checksum: int

class StageOutcome(TypedDict):
    duration_us: float
    window_us: float
    goodput: float
    attack_goodput: float
    innocent_offered: int
    innocent_served: int
    innocent_dropped: int
    attack_offered: int
    attack_served: int
    attack_dropped: int
    innocent_work: int
    attack_work: int
    utilisation: float
    estimate_error: float
    cpu_ns: int

class AttackRow(TypedDict):
    policy: str
    attack_fraction: float
    attack_rate: float
    outcome: StageOutcome
    displaced: float
    df: float
    resolved: bool

class AttackSummary(TypedDict):
    rows: list[AttackRow]
    mean_work: float
    max_work: int
    us_per_work: float
    calibrated: bool
    mean_bits: float
    r_max: float
    innocent_rate: float

class KeyAttackRecord(AttackSummary):
    items: int

class AdversaryRecord(AttackSummary):
    adversary: str
    targets: int
    target_rules: list[int]
    target_depth_mean: float
    probe_innocent_work: float
    probe_attack_work: float
    probe_attack_packets: int

class ClassifierWorkloadRecord(TypedDict):
    rules: int
    packets: int
    dependency_edges: int
    dependent_rules: int
    max_dependency_depth: int

class ClassifierAttacksRecord(TypedDict):
    workload: ClassifierWorkloadRecord
    adversaries: list[AdversaryRecord]

class CacheStats(TypedDict):
    reads: int
    hits: int
    misses: int
    delayed_hits: int
    bypass: int
    db_reads: int
    fills: int
    replica_errors: int
    writes: int
    invalidations: int
    updates: int
    miss_cpu_ns: int

class ClientStats(CacheStats):
    replica_requests: list[int]
    db_retries: int

class CacheBenchRecord(TypedDict):
    requests: int
    wall_ns: int
    timed_out: bool
    gave_up: bool
    thread_cpu_ns: list[int]
    replica_cpu_ns: list[int | None]
    db_backend_cpu_ns: list[int]
    replica_requests: list[int]
    replica_fills: list[int]
    stats: CacheStats
    db_retries: int
    errors: int
    first_error: str | None
    wrong_values: int
    stale_values: int
    missing: int
    latency_p50_ns: int
    latency_p99_ns: int
    projected_ns: int | None
    projected_busiest_ns: int | None
    projected_client_path_ns: int | None
    hit_rate: float

class CacheLoadRecord(TypedDict):
    rows: int
    loaded: bool
    table: str

class LatencyReport(TypedDict):
    requests: int
    hits: int
    delayed_hits: int
    misses: int
    latency: int

class LatencySimRecord(LatencyReport):
    mean_z: float

class LatencySpeedRecord(LatencyReport):
    cpu_ns: int
    requests_per_s: float

class LatencyRoundedRecord(LatencyReport):
    rounding: str

class LpArrays(TypedDict):
    cost: list[float]
    lower: list[float]
    upper: list[float]
    rhs: list[float]
    indptr: list[int]
    indices: list[int]
    values: list[float]
    constant: int

class LpSize(TypedDict):
    variables: int
    rows: int
    nonzeros: int
    intervals: int

class ClassifyWorkerStats(TypedDict):
    packets: int
    work: int
    default_hits: int
    distinct_rules: int
    mean_active_rules: float
    max_active_rules: int
    window: int
    windows: int
    mean_position: float
    position_hist_log2: list[int]
    mean_chain: float
    chain_hist: list[int]

class ClassifyRunRecord(TypedDict):
    dispatch: str
    cores: int
    items: int
    projected: Accounting | None
    measured: Accounting | None
    stats: list[ClassifyWorkerStats]
    rule_matches: list[int]

class CheckRecord(TypedDict):
    checked: int
    mismatches: int
    first_mismatch: str | None
    matches: list[int]
    default_hits: int

class NftProjected(Accounting):
    dispatch: str

class SendRecord(TypedDict):
    sent: int
    next: int
    elapsed_ns: int
    cpu_ns: int
    calls: int
    refused: int

# Configs: every config the bindings take, by name; its defaults come from Rust.
ConfigName = Literal[
    "run",
    "workload",
    "classify_load",
    "classify_synthetic",
    "classify_run",
    "nft_load",
    "nft_send",
    "cache_client",
    "cache_bench",
    "latency_trace",
    "attack_traffic",
    "attack_sweep",
    "attack_key",
    "attack_classifier",
]

def config_names() -> list[ConfigName]: ...
def config_defaults(name: ConfigName) -> dict[str, Any]: ...
def config_check(name: ConfigName, config: dict[str, Any]) -> dict[str, Any]: ...
def run(config: dict[str, Any]) -> RunRecord: ...
def classify_rule_format(path: str) -> str | None: ...
def cancel_request() -> None: ...
def cancel_clear() -> None: ...
def algorithms() -> list[dict[str, Any]]: ...
def dispatchers() -> list[dict[str, Any]]: ...
def check_algo(name: str) -> str: ...
def generate_keys(workload: dict[str, Any], n: int, seed: int) -> list[int]: ...
def write_trace(path: str, keys: list[int], binary: bool = True) -> None: ...
def read_trace(path: str) -> list[int]: ...
def trace_length(path: str) -> int: ...
def iterations_per_cycle() -> float: ...
def available_cores() -> int: ...
def bench_structure(
    algo: str, m: int, lookups: int, compare_cycles: int = 0, miss_cycles: int = 0, seed: int = 1
) -> float: ...
def bench_dispatcher(dispatch: str, k: int, requests: int, seed: int = 1) -> float: ...

class MemoryProbe:
    """A random walk over three quarters of one core's L2 (or ``bytes``), and a multiply chain."""
    def __init__(self, bytes: int | None = None, seed: int = 1) -> None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def sized_by_l2(self) -> bool: ...
    @staticmethod
    def l2_bytes() -> int | None: ...
    def sample(self, window_ms: float) -> tuple[float, float, float]: ...

class LawModel:
    @staticmethod
    def from_workload(workload: dict[str, Any], requests: int, seed: int, algo: str, rho: int = 0) -> LawModel: ...
    @staticmethod
    def from_items(items: list[int], m: int, algo: str, rho: int = 0) -> LawModel: ...
    @property
    def requests(self) -> int: ...
    @property
    def m(self) -> int: ...
    @property
    def algo(self) -> str: ...
    @property
    def model(self) -> str: ...
    def baseline(self) -> LawWorkerStats: ...
    def point(self, dispatch: str, k: int, s: float = 0.0) -> LawPoint: ...
    def point_assigned(self, workers: list[int], k: int, s: float = 0.0) -> LawPoint: ...
    def working_sets(self, workers: list[int] | None = None, k: int = 1) -> list[int]: ...
# superlinear-sched (crates/py/src/sched.rs)
def sched_policies() -> list[dict[str, Any]]: ...
def sched_catalogue() -> dict[str, Any]: ...
def sched_bench_queue(
    queue: str, pattern: str, n: int, pairs: int, width: int = 64, levels: int = 2, seed: int = 1
) -> QueueBenchRecord | None: ...
def sched_innocent_stats(traffic: dict[str, Any], samples: int = 200_000, seed: int = 7) -> TrafficRecord: ...
def sched_sweep(config: dict[str, Any]) -> SweepRecord: ...
def sched_optimal_attack(
    config: dict[str, Any], policy: str, innocent_rate: float, attack_rate: float
) -> AttackParams: ...
def sched_key_attack(config: dict[str, Any]) -> KeyAttackRecord: ...
def sched_classifier_attack(config: dict[str, Any]) -> ClassifierAttacksRecord: ...
# cache tier (crates/cachetier, bindings crates/py/src/cachetier.rs)
class CacheClient:
    def __init__(self, config: dict[str, Any]) -> None: ...
    def get(self, key: str, seed: int = 0) -> tuple[str, int, str] | None: ...
    def put(self, key: str, value: str) -> int: ...
    def stats(self) -> ClientStats: ...
    def reset_stats(self) -> None: ...
    def replicas(self) -> list[dict[str, Any]]: ...
    def copies(self, key: str) -> list[int]: ...
    def other_tables(self) -> list[str | None]: ...
    def flush_all(self) -> None: ...
    def prefill(self, rows: int, seed: int = 1, dist: str = "uniform") -> int: ...
    def bench(self, config: dict[str, Any]) -> CacheBenchRecord: ...

def cache_load(
    dsn: str, rows: int, table: str = "superlinear_kv", force: bool = False, timeout_s: float = 600.0
) -> CacheLoadRecord: ...
def cache_sql(dsn: str, sql: str) -> list[list[str | None]]: ...
def cache_memcached_stats(address: str) -> dict[str, str]: ...
def cache_table_mark(address: str) -> str | None: ...
def cache_routers() -> list[dict[str, Any]]: ...
def cache_lru_sim(
    router: str, n: int, dist: str, rows: int, capacity: int, requests: int, warmup: int, seed: int = 1
) -> list[tuple[int, int]]: ...
def cache_lru_sim_trace(
    routers: list[str], ks: list[int], path: str, capacity: int, seed: int = 1
) -> tuple[int, list[list[list[tuple[int, int]]]]]: ...
def cache_route_sim(router: str, n: int, dist: str, rows: int, requests: int, seed: int = 1) -> list[int]: ...
# delayed hits (crates/cache, bindings crates/py/src/latency.rs)
class LatencyTrace:
    @staticmethod
    def read(path: str) -> LatencyTrace: ...
    @staticmethod
    def from_keys(keys: list[int]) -> LatencyTrace: ...
    @staticmethod
    def generate(spec: dict[str, Any]) -> tuple[LatencyTrace, list[bool]]: ...
    def __len__(self) -> int: ...
    @property
    def objects(self) -> int: ...
    @property
    def requested_objects(self) -> int: ...
    @property
    def mean_interval(self) -> float | None: ...
    @property
    def has_latencies(self) -> bool: ...
    def requests(self) -> list[int]: ...
    def miss_latencies(self, z: int | None = None) -> list[int]: ...
    def write(self, path: str, binary: bool = False, latencies: list[int] | None = None) -> None: ...

class LatencyLp:
    def __init__(self, trace: LatencyTrace, z: int | None, capacity: int) -> None: ...
    def arrays(self) -> LpArrays: ...
    def size(self) -> LpSize: ...
    def latency(self, x: list[float]) -> float: ...
    def round(self, x: list[float], random: int = 4, seed: int = 1) -> list[LatencyRoundedRecord]: ...

def latency_policies() -> list[dict[str, Any]]: ...
def latency_simulate(
    trace: LatencyTrace, policy: str, z: int | None, capacity: int, classical: bool = False
) -> LatencySimRecord: ...
def latency_bench(trace: LatencyTrace, policy: str, z: int | None, capacity: int) -> LatencySpeedRecord: ...
def latency_optimal(trace: LatencyTrace, z: int | None, capacity: int, any_time: bool = False) -> int: ...
# packet classifier (crates/classify, bindings crates/py/src/classify.rs)
class GenerationRecord(TypedDict):
    generation: int
    from_packet: int
    rules: int
    change: str | None
    packets: int
    work: int

class UpdateRecord(TypedDict):
    packets: int
    updates_applied: int
    mismatches: int
    checked: bool
    changed_by_updates: int
    first_mismatch: str | None
    generations: list[GenerationRecord]

class WorkerFootprintRecord(TypedDict):
    packets: int
    rules: int
    flows: int
    hot_bytes: int

class FootprintRecord(TypedDict):
    algo: str
    k: int
    own_bytes: int
    shared_bytes: int
    hot: str
    item_bytes: int
    flow_entries: int
    law_items: str | None
    workers: list[WorkerFootprintRecord]

class PacketWorkload:
    @staticmethod
    def load(rules_path: str, trace_path: str | None, config: dict[str, Any]) -> PacketWorkload: ...
    @staticmethod
    def synthetic(spec: dict[str, Any], packets: int, seed: int = 1) -> PacketWorkload: ...
    def replay(self, n: int) -> None: ...
    def calibrate(self, n: int) -> None: ...
    @property
    def rules(self) -> int: ...
    @property
    def packets(self) -> int: ...
    def info(self) -> dict[str, Any]: ...
    def run(self, config: dict[str, Any]) -> ClassifyRunRecord: ...
    def check(self, algo: str, dispatch: str, k: int, seed: int = 1, front: int = 0) -> CheckRecord: ...
    def run_updates(self, schedule: str, config: dict[str, Any], algo: str, dispatch: str, k: int, seed: int = 1,
                    check: bool = True, front: int = 0) -> UpdateRecord: ...
    def items(self) -> list[int]: ...
    def flow_ids(self) -> list[int]: ...
    def footprint(self, algo: str, dispatch: str, k: int, seed: int = 1, front: int = 0) -> FootprintRecord: ...
    def worker_bytes(self, algo: str, front: int = 0, stats: bool = True) -> int: ...
    def assign(self, dispatch: str, k: int, seed: int = 1) -> list[int]: ...
    def describe_dispatch(self, dispatch: str, k: int) -> str: ...
    def bench(self, algo: str, repeats: int = 3) -> tuple[float, float]: ...
    def write_rules(self, path: str, format: str) -> None: ...
    def write_trace(self, path: str, format: str) -> int: ...

def classify_algorithms() -> list[dict[str, Any]]: ...
def classify_dispatchers() -> list[dict[str, Any]]: ...

# nft-bench (crates/py/src/nftbench.rs)
NftRuleRow = tuple[int, int, int, int, int, int, int, int, int, int, str, str]

class NftWorkload:
    @staticmethod
    def load(rules_path: str, trace_path: str | None, options: dict[str, Any]) -> NftWorkload: ...
    @staticmethod
    def synthetic(spec: dict[str, Any], packets: int, seed: int = 1) -> NftWorkload: ...
    def write(self, rules_path: str, trace_path: str | None = None) -> None: ...
    def rules(self) -> int: ...
    def packets(self) -> int: ...
    def default_action(self) -> tuple[str, str]: ...
    def default_from_file(self) -> bool: ...
    def rule_rows(self) -> list[NftRuleRow]: ...
    def nft_table(self, table: str, device: str, empty: bool = False) -> str: ...
    def counts(self, algo: str) -> tuple[list[int], int]: ...
    def single_core(self, algo: str, repeats: int) -> tuple[float, float]: ...
    def projected(self, algo: str, dispatch: str, k: int, repeats: int = 1, seed: int = 1) -> NftProjected: ...
    def describe_dispatch(self, dispatch: str, k: int) -> str: ...
    def build_frames(self, dst_mac: str, src_mac: str) -> None: ...
    def send(self, config: dict[str, Any]) -> SendRecord: ...
    def calibrate(self, n: int) -> None: ...
    def reshaped(self, locality: str, seed: int = 1, train: int = 16) -> NftWorkload: ...

# XDP datapath (crates/py/src/xdp.rs)
class XdpLoaded(TypedDict):
    fields: str
    k: int
    cpus: list[int]
    rules: int
    algo: str

class XdpProgramStats(TypedDict):
    run_count: int
    run_time_ns: int

class XdpWorkerCounters(TypedDict):
    worker: int
    cpu: int
    packets: int
    compared: int
    same_checks: int
    moved: int
    relabels: int
    position_histogram: list[int]

class XdpCpuCounters(TypedDict):
    cpu: int
    packets: int
    compared: int

class XdpCounters(TypedDict):
    algo: str
    k: int
    generation: int
    rules: int
    rule_hits: list[int]
    default_hits: int
    other_generation_hits: int
    workers: list[XdpWorkerCounters]
    cpus: list[XdpCpuCounters]
    dispatch: list[tuple[str, int]]
    dispatch_program: XdpProgramStats
    worker_program: XdpProgramStats

def xdp_build_error() -> str | None: ...
def xdp_check_dispatch(spec: str) -> None: ...
def xdp_load(workload: NftWorkload, config: dict[str, Any]) -> XdpLoaded: ...
def xdp_update(workload: NftWorkload, pin_dir: str) -> int: ...
def xdp_reset(pin_dir: str) -> None: ...
def xdp_counters(pin_dir: str) -> XdpCounters: ...
def xdp_check_orders(workload: NftWorkload, pin_dir: str) -> list[str]: ...
def xdp_unload(pin_dir: str) -> bool: ...

class XdpReplayer:
    """The in-kernel trace replayer of ``xdp-bench --generator xdp-live``."""

    def __init__(self, workload: NftWorkload) -> None: ...
    def send(self, config: dict[str, Any]) -> dict[str, int]: ...
