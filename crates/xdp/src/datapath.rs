//! Loading the two XDP programs, pinning them with their maps under one bpffs directory (so
//! the datapath outlives the command that loaded it), and working on a pinned datapath later:
//! rule updates by generation switch, counters, orders, unloading.
//!
//! Pin directory layout: one file per map (named as in the C source), `dispatch_prog` and
//! `worker_prog`, and `link`, the XDP link of the dispatcher on the interface. Removing `link`
//! detaches the datapath; the maps and programs go with their last pin.

use crate::layout::*;
use crate::tables::{hash_tables, reta_mask, GenerationTables};
use aya::maps::{Array, CpuMap, Map, MapData, PerCpuArray, PerCpuValues};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::{ProgramInfo, Xdp, XdpFlags};
use aya::util::nr_cpus;
use aya::{Ebpf, EbpfLoader};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use superlinear_classify::dispatch::rss::FieldMask;
use superlinear_classify::snapshot::Snapshot;
use superlinear_core::Error;

/// Bytes aligned for the ELF reader, which reads headers in place and refuses misaligned data.
#[repr(C, align(8))]
pub(crate) struct Aligned<B: ?Sized>(pub(crate) B);

static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/classifier.bpf.o")));
/// The BPF object, compiled by build.rs (empty when clang was missing).
static OBJECT: &[u8] = &ALIGNED.0;

/// Maps pinned by name.
const MAPS: [&str; 16] = [
    "settings",
    "generation",
    "generations",
    "hash_tables",
    "worker_cpu",
    "cpu_map",
    "rules",
    "same_start",
    "same_ids",
    "dep_start",
    "dep_ids",
    "orders",
    "worker_stats",
    "cpu_stats",
    "rule_hits",
    "dispatch_stats",
];

/// Why the datapath cannot be built here, when it cannot (clang missing at build time).
pub fn build_error() -> Option<&'static str> {
    let why = env!("SUPERLINEAR_XDP_BUILD_ERROR");
    (OBJECT.is_empty() || !why.is_empty()).then_some(if why.is_empty() { "empty BPF object" } else { why })
}

/// The classifier the workers run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelAlgo {
    /// Static first-match list in priority order.
    Static = 0,
    /// MRF with precomputed dependencies, one order per logical worker.
    Mrf = 1,
}

impl KernelAlgo {
    /// By name (`static`, `mrf`).
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "static" => Ok(KernelAlgo::Static),
            "mrf" | "mrf-swap" => Ok(KernelAlgo::Mrf),
            other => Err(Error::config(format!("unknown XDP classifier '{other}' (known: static, mrf)"))),
        }
    }

    fn from_code(c: u32) -> Self {
        if c == 1 {
            KernelAlgo::Mrf
        } else {
            KernelAlgo::Static
        }
    }
}

/// Where and how to load.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    /// Interface index (in the calling thread's network namespace).
    pub ifindex: u32,
    pub algo: KernelAlgo,
    /// Header fields the dispatcher hashes.
    pub fields: FieldMask,
    /// Logical workers.
    pub k: usize,
    /// Worker CPUs; logical worker w runs on `cpus[w % cpus.len()]`.
    pub cpus: Vec<u32>,
    /// Frames a cpumap entry queues.
    pub queue_size: u32,
    /// Generic (skb) XDP instead of native.
    pub generic: bool,
}

pub(crate) fn kernel_err(what: &str, e: impl std::fmt::Display) -> Error {
    let text = e.to_string();
    let hint = if text.contains("Operation not permitted") || text.contains("Permission denied") {
        " (needs CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN: run as root)"
    } else {
        ""
    };
    Error::config(format!("{what}: {text}{hint}"))
}

fn array<V: aya::Pod>(dir: &Path, name: &str) -> Result<Array<MapData, V>, Error> {
    let data = MapData::from_pin(dir.join(name)).map_err(|e| kernel_err(&format!("open pinned map {name}"), e))?;
    Array::try_from(Map::Array(data)).map_err(|e| kernel_err(&format!("map {name}"), e))
}

fn per_cpu<V: aya::Pod>(dir: &Path, name: &str) -> Result<PerCpuArray<MapData, V>, Error> {
    let data = MapData::from_pin(dir.join(name)).map_err(|e| kernel_err(&format!("open pinned map {name}"), e))?;
    PerCpuArray::try_from(Map::PerCpuArray(data)).map_err(|e| kernel_err(&format!("map {name}"), e))
}

fn set<V: aya::Pod>(map: &mut Array<MapData, V>, name: &str, i: usize, v: &V) -> Result<(), Error> {
    map.set(i as u32, v, 0).map_err(|e| kernel_err(&format!("write map {name}[{i}]"), e))
}

fn get<V: aya::Pod>(map: &Array<MapData, V>, name: &str, i: usize) -> Result<V, Error> {
    map.get(&(i as u32), 0).map_err(|e| kernel_err(&format!("read map {name}[{i}]"), e))
}

fn cpu_count() -> Result<usize, Error> {
    nr_cpus().map_err(|(_, e)| kernel_err("count possible CPUs", e))
}

/// The XDP program `name` of a loaded object, through the verifier (`what` names it in errors).
pub(crate) fn load_xdp<'a>(ebpf: &'a mut Ebpf, name: &str, what: &str) -> Result<&'a mut Xdp, Error> {
    let prog: &mut Xdp = ebpf
        .program_mut(name)
        .ok_or_else(|| Error::config(format!("BPF object has no program {name}")))?
        .try_into()
        .map_err(|e| kernel_err(name, e))?;
    prog.load().map_err(|e| kernel_err(&format!("verify {what}"), e))?;
    Ok(prog)
}

/// Loads, configures, attaches and pins the datapath with `snap` as generation 0.
pub fn load(spec: &LoadSpec, snap: &Snapshot, dir: &Path) -> Result<(), Error> {
    if let Some(why) = build_error() {
        return Err(Error::config(format!("this build has no XDP datapath: {why}")));
    }
    if spec.k == 0 || spec.k > MAX_WORKERS {
        return Err(Error::config(format!("{} logical workers: the XDP datapath takes 1 to {MAX_WORKERS}", spec.k)));
    }
    if spec.cpus.is_empty() {
        return Err(Error::config("no worker CPUs".to_string()));
    }
    if let Some(c) = spec.cpus.iter().find(|&&c| c as usize >= MAX_CPUS) {
        return Err(Error::config(format!("CPU {c}: the cpumap holds CPUs 0 to {}", MAX_CPUS - 1)));
    }
    let tables = GenerationTables::build(snap)?;
    // Room for the same-action lists of this rule set and of updates up to twice as large.
    let same_cap = (tables.same_ids.len() * 2).max(1 << 16);
    let dep_cap = (tables.dep_ids.len() * 2).max(1 << 16);
    let mut ebpf = EbpfLoader::new()
        .set_max_entries("orders", (GENERATIONS * spec.k) as u32)
        .set_max_entries("same_ids", (GENERATIONS * same_cap) as u32)
        .set_max_entries("dep_ids", (GENERATIONS * dep_cap) as u32)
        .load(OBJECT)
        .map_err(|e| kernel_err("load the BPF object", e))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::config(format!("{}: {e}", dir.display())))?;
    for name in MAPS {
        let map = ebpf.map(name).ok_or_else(|| Error::config(format!("BPF object has no map {name}")))?;
        map.pin(dir.join(name)).map_err(|e| kernel_err(&format!("pin map {name}"), e))?;
    }
    let mut pinned = Pinned::open(dir)?;
    set(
        &mut pinned.settings,
        "settings",
        0,
        &KernelSettings {
            k: spec.k as u32,
            reta_mask: reta_mask(spec.k),
            algo: spec.algo as u32,
            same_cap: same_cap as u32,
            dep_cap: dep_cap as u32,
        },
    )?;
    let mut hash = array::<u32>(dir, "hash_tables")?;
    for (i, v) in hash_tables(spec.fields).iter().enumerate() {
        set(&mut hash, "hash_tables", i, v)?;
    }
    let mut worker_cpu = array::<u32>(dir, "worker_cpu")?;
    for w in 0..spec.k {
        set(&mut worker_cpu, "worker_cpu", w, &spec.cpus[w % spec.cpus.len()])?;
    }
    pinned.write_generation(0, snap, &tables)?;
    set(&mut pinned.generation, "generation", 0, &0)?;

    let worker = load_xdp(&mut ebpf, "sl_worker", "the worker program")?;
    worker.pin(dir.join("worker_prog")).map_err(|e| kernel_err("pin the worker program", e))?;
    let worker_fd = worker
        .fd()
        .map_err(|e| kernel_err("worker program", e))?
        .try_clone()
        .map_err(|e| kernel_err("worker program", e))?;
    let mut cpu_map =
        CpuMap::try_from(ebpf.map_mut("cpu_map").expect("pinned above")).map_err(|e| kernel_err("cpu_map", e))?;
    let mut seen = std::collections::BTreeSet::new();
    for &c in &spec.cpus {
        if seen.insert(c) {
            cpu_map
                .set(c, spec.queue_size, Some(&worker_fd), 0)
                .map_err(|e| kernel_err(&format!("start the worker on CPU {c}"), e))?;
        }
    }

    let dispatch = load_xdp(&mut ebpf, "sl_dispatch", "the dispatcher program")?;
    dispatch.pin(dir.join("dispatch_prog")).map_err(|e| kernel_err("pin the dispatcher program", e))?;
    let flags = if spec.generic { XdpFlags::SKB_MODE } else { XdpFlags::DRV_MODE };
    let id = dispatch.attach_to_if_index(spec.ifindex, flags).map_err(|e| {
        kernel_err(
            if spec.generic { "attach (generic XDP)" } else { "attach (native XDP; --mode generic for skb mode)" },
            e,
        )
    })?;
    let link = dispatch.take_link(id).map_err(|e| kernel_err("XDP link", e))?;
    let link = FdLink::try_from(link).map_err(|e| kernel_err("XDP link", e))?;
    link.pin(dir.join("link")).map_err(|e| kernel_err("pin the XDP link", e))?;
    Ok(())
}

/// Detaches the datapath pinned at `dir` and removes its pins; true when there was one.
pub fn unload(dir: &Path) -> Result<bool, Error> {
    if !dir.exists() {
        return Ok(false);
    }
    if dir.join("link").exists() {
        let link = PinnedLink::from_pin(dir.join("link")).map_err(|e| kernel_err("open the pinned XDP link", e))?;
        // Unpinning hands back the last reference; dropping it detaches the program.
        drop(link.unpin().map_err(|e| kernel_err("unpin the XDP link", e))?);
    }
    for entry in std::fs::read_dir(dir).map_err(|e| Error::config(format!("{}: {e}", dir.display())))? {
        let path = entry.map_err(|e| Error::config(format!("{}: {e}", dir.display())))?.path();
        std::fs::remove_file(&path).map_err(|e| Error::config(format!("{}: {e}", path.display())))?;
    }
    std::fs::remove_dir(dir).map_err(|e| Error::config(format!("{}: {e}", dir.display())))?;
    Ok(true)
}

/// A program's run statistics (bpf_stats; zero unless kernel.bpf_stats_enabled is 1).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ProgramRunStats {
    pub run_count: u64,
    pub run_time_ns: u64,
}

/// One logical worker's counters.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerCounters {
    pub worker: usize,
    pub cpu: u32,
    pub packets: u64,
    pub compared: u64,
    pub same_checks: u64,
    /// Order entries the MRF moves shifted.
    pub moved: u64,
    /// Times its order was relabelled (MRF; see the C side's order labels).
    pub relabels: u64,
    pub position_histogram: Vec<u64>,
}

/// One CPU's counters.
#[derive(Clone, Debug, Serialize)]
pub struct CpuCounters {
    pub cpu: usize,
    pub packets: u64,
    pub compared: u64,
}

/// Everything the kernel counted.
#[derive(Clone, Debug, Serialize)]
pub struct KernelCounters {
    pub algo: KernelAlgo,
    pub k: usize,
    pub generation: u32,
    pub rules: usize,
    /// Hits per rule of the generation in force (priority order), summed over CPUs.
    pub rule_hits: Vec<u64>,
    /// Packets no rule matched (the default policy).
    pub default_hits: u64,
    /// Packets counted against the other generation slot (the rules before the last update),
    /// rules and default together.
    pub other_generation_hits: u64,
    pub workers: Vec<WorkerCounters>,
    pub cpus: Vec<CpuCounters>,
    /// Dispatcher frames by reason.
    pub dispatch: Vec<(&'static str, u64)>,
    pub dispatch_program: ProgramRunStats,
    pub worker_program: ProgramRunStats,
}

/// A loaded datapath, opened from its pins.
pub struct Pinned {
    dir: PathBuf,
    settings: Array<MapData, KernelSettings>,
    generation: Array<MapData, u32>,
    generations: Array<MapData, KernelGeneration>,
}

impl Pinned {
    /// Opens the datapath pinned at `dir`.
    pub fn open(dir: &Path) -> Result<Self, Error> {
        Ok(Self {
            dir: dir.to_path_buf(),
            settings: array(dir, "settings")?,
            generation: array(dir, "generation")?,
            generations: array(dir, "generations")?,
        })
    }

    /// Its fixed settings.
    pub fn settings(&self) -> Result<KernelSettings, Error> {
        get(&self.settings, "settings", 0)
    }

    /// The generation slot in force.
    pub fn generation(&self) -> Result<u32, Error> {
        Ok(get(&self.generation, "generation", 0)? & 1)
    }

    /// Writes `snap` into generation slot `slot` with fresh orders and zero rule counters.
    fn write_generation(&mut self, slot: usize, snap: &Snapshot, t: &GenerationTables) -> Result<(), Error> {
        let s = self.settings()?;
        for (what, have, room) in
            [("same-action overlaps", t.same_ids.len(), s.same_cap), ("dependencies", t.dep_ids.len(), s.dep_cap)]
        {
            if have > room as usize {
                return Err(Error::config(format!(
                    "the new rules have {have} {what}; this datapath was loaded with room for {room} (unload and load again)"
                )));
            }
        }
        let dir = self.dir.clone();
        let mut rules = array::<KernelRuleTable>(&dir, "rules")?;
        set(&mut rules, "rules", slot, &*KernelRuleTable::of(&t.rules))?;
        let mut starts = array::<u32>(&dir, "same_start")?;
        for (i, v) in t.same_start.iter().enumerate() {
            set(&mut starts, "same_start", slot * (MAX_RULES + 1) + i, v)?;
        }
        let mut ids = array::<u16>(&dir, "same_ids")?;
        for (i, v) in t.same_ids.iter().enumerate() {
            set(&mut ids, "same_ids", slot * s.same_cap as usize + i, v)?;
        }
        let mut starts = array::<u32>(&dir, "dep_start")?;
        for (i, v) in t.dep_start.iter().enumerate() {
            set(&mut starts, "dep_start", slot * (MAX_RULES + 1) + i, v)?;
        }
        let mut ids = array::<u16>(&dir, "dep_ids")?;
        for (i, v) in t.dep_ids.iter().enumerate() {
            set(&mut ids, "dep_ids", slot * s.dep_cap as usize + i, v)?;
        }
        let mut orders = array::<KernelOrder>(&dir, "orders")?;
        let identity = KernelOrder::identity();
        for w in 0..s.k as usize {
            set(&mut orders, "orders", slot * s.k as usize + w, &*identity)?;
        }
        let mut hits = per_cpu::<u64>(&dir, "rule_hits")?;
        let ncpu = cpu_count()?;
        for i in (0..snap.len()).chain([DEFAULT_SLOT]) {
            let z = PerCpuValues::try_from(vec![0u64; ncpu]).map_err(|e| kernel_err("per-CPU values", e))?;
            hits.set((slot * (MAX_RULES + 1) + i) as u32, z, 0).map_err(|e| kernel_err("zero rule_hits", e))?;
        }
        let g = KernelGeneration { n_rules: t.rules.len() as u32, default_verdict: t.default_verdict };
        set(&mut self.generations, "generations", slot, &g)
    }

    /// Puts `snap` in force: written beside the rules in force, then switched to with one
    /// store, so every packet is classified against one whole rule set. Returns the new slot.
    pub fn update(&mut self, snap: &Snapshot) -> Result<u32, Error> {
        let t = GenerationTables::build(snap)?;
        let next = 1 - self.generation()?;
        self.write_generation(next as usize, snap, &t)?;
        set(&mut self.generation, "generation", 0, &next)?;
        // A packet that read the old generation finishes within one NAPI poll; the old slot is
        // written again only by the next update, which this pause keeps that far away.
        std::thread::sleep(Duration::from_millis(50));
        Ok(next)
    }

    /// Zeroes every counter (rule hits of the slot in force, workers, CPUs, dispatcher).
    pub fn reset_counters(&mut self) -> Result<(), Error> {
        let s = self.settings()?;
        let slot = self.generation()? as usize;
        let n = get(&self.generations, "generations", slot)?.n_rules as usize;
        let ncpu = cpu_count()?;
        let zeros = || PerCpuValues::try_from(vec![0u64; ncpu]).map_err(|e| kernel_err("per-CPU values", e));
        let mut hits = per_cpu::<u64>(&self.dir, "rule_hits")?;
        for i in (0..n).chain([DEFAULT_SLOT]) {
            hits.set((slot * (MAX_RULES + 1) + i) as u32, zeros()?, 0).map_err(|e| kernel_err("zero rule_hits", e))?;
        }
        let mut ws = array::<KernelWorkerStats>(&self.dir, "worker_stats")?;
        for w in 0..s.k as usize {
            set(&mut ws, "worker_stats", w, &KernelWorkerStats::default())?;
        }
        let mut cs = per_cpu::<KernelCpuStats>(&self.dir, "cpu_stats")?;
        let z = PerCpuValues::try_from(vec![KernelCpuStats::default(); ncpu])
            .map_err(|e| kernel_err("per-CPU values", e))?;
        cs.set(0, z, 0).map_err(|e| kernel_err("zero cpu_stats", e))?;
        let mut ds = per_cpu::<u64>(&self.dir, "dispatch_stats")?;
        for i in 0..REASON_SLOTS {
            ds.set(i as u32, zeros()?, 0).map_err(|e| kernel_err("zero dispatch_stats", e))?;
        }
        Ok(())
    }

    /// Every counter.
    pub fn counters(&self) -> Result<KernelCounters, Error> {
        let s = self.settings()?;
        let slot = self.generation()? as usize;
        let n = get(&self.generations, "generations", slot)?.n_rules as usize;
        let hits = per_cpu::<u64>(&self.dir, "rule_hits")?;
        let sum_in = |slot: usize, i: usize| -> Result<u64, Error> {
            let v = hits.get(&((slot * (MAX_RULES + 1) + i) as u32), 0).map_err(|e| kernel_err("read rule_hits", e))?;
            Ok(v.iter().sum())
        };
        let rule_hits = (0..n).map(|i| sum_in(slot, i)).collect::<Result<Vec<_>, _>>()?;
        let default_hits = sum_in(slot, DEFAULT_SLOT)?;
        let other = 1 - slot;
        let n_other = get(&self.generations, "generations", other)?.n_rules as usize;
        let mut other_generation_hits = 0;
        for i in (0..n_other).chain([DEFAULT_SLOT]) {
            other_generation_hits += sum_in(other, i)?;
        }
        let ws = array::<KernelWorkerStats>(&self.dir, "worker_stats")?;
        let cpus_of = array::<u32>(&self.dir, "worker_cpu")?;
        let mut workers = Vec::with_capacity(s.k as usize);
        for w in 0..s.k as usize {
            let v = get(&ws, "worker_stats", w)?;
            workers.push(WorkerCounters {
                worker: w,
                cpu: get(&cpus_of, "worker_cpu", w)?,
                packets: v.packets,
                compared: v.compared,
                same_checks: v.same_checks,
                moved: v.moved,
                relabels: v.relabels,
                position_histogram: v.hist.to_vec(),
            });
        }
        let cs = per_cpu::<KernelCpuStats>(&self.dir, "cpu_stats")?;
        let per = cs.get(&0, 0).map_err(|e| kernel_err("read cpu_stats", e))?;
        let cpus = per
            .iter()
            .enumerate()
            .filter(|(_, c)| c.packets > 0)
            .map(|(cpu, c)| CpuCounters { cpu, packets: c.packets, compared: c.compared })
            .collect();
        let ds = per_cpu::<u64>(&self.dir, "dispatch_stats")?;
        let mut dispatch = Vec::new();
        for (i, name) in REASONS.iter().enumerate() {
            let v = ds.get(&(i as u32), 0).map_err(|e| kernel_err("read dispatch_stats", e))?;
            dispatch.push((*name, v.iter().sum()));
        }
        Ok(KernelCounters {
            algo: KernelAlgo::from_code(s.algo),
            k: s.k as usize,
            generation: slot as u32,
            rules: n,
            rule_hits,
            default_hits,
            other_generation_hits,
            workers,
            cpus,
            dispatch,
            dispatch_program: self.program_stats("dispatch_prog")?,
            worker_program: self.program_stats("worker_prog")?,
        })
    }

    fn program_stats(&self, name: &str) -> Result<ProgramRunStats, Error> {
        let info = ProgramInfo::from_pin(self.dir.join(name)).map_err(|e| kernel_err(&format!("open {name}"), e))?;
        Ok(ProgramRunStats { run_count: info.run_count(), run_time_ns: info.run_time().as_nanos() as u64 })
    }

    /// Each logical worker's current order (rule ids, front first) in the slot in force.
    pub fn orders(&self) -> Result<Vec<Vec<u16>>, Error> {
        let s = self.settings()?;
        let slot = self.generation()? as usize;
        let n = get(&self.generations, "generations", slot)?.n_rules as usize;
        let orders = array::<KernelOrder>(&self.dir, "orders")?;
        (0..s.k as usize)
            .map(|w| get(&orders, "orders", slot * s.k as usize + w).map(|o| o.order[..n].to_vec()))
            .collect()
    }
}

/// Whether `order` keeps every rule behind all of its dependencies (the MRF invariant that
/// keeps every verdict equal to the static list's); the first violation otherwise.
pub fn check_order(snap: &Snapshot, order: &[u16]) -> Result<(), String> {
    let n = snap.len();
    if order.len() != n {
        return Err(format!("order holds {} rules, the rule set {n}", order.len()));
    }
    let mut pos = vec![usize::MAX; n];
    for (i, &r) in order.iter().enumerate() {
        let r = r as usize;
        if r >= n || pos[r] != usize::MAX {
            return Err(format!("position {i}: rule {r} is out of range or repeated"));
        }
        pos[r] = i;
    }
    for u in 0..n {
        for &v in snap.deps.deps(u as u32) {
            if pos[v as usize] > pos[u] {
                return Err(format!(
                    "rule {u} (position {}) is ahead of rule {v} (position {}), which it depends on",
                    pos[u], pos[v as usize]
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::rules::{native, ReadOptions};

    #[test]
    fn the_order_check_finds_a_rule_ahead_of_its_dependency() {
        // Rule 2 (accept) depends on rule 0 (drop): they overlap; rule 1 overlaps neither.
        let text = "drop dport 80\naccept dport 9\naccept dport 1-100\n";
        let snap = Snapshot::new(native::parse(text, "t", &ReadOptions::default()).unwrap());
        assert_eq!(check_order(&snap, &[0, 1, 2]), Ok(()));
        assert_eq!(check_order(&snap, &[1, 0, 2]), Ok(()));
        assert!(check_order(&snap, &[2, 0, 1]).unwrap_err().starts_with("rule 2 (position 0) is ahead of rule 0"));
        assert!(check_order(&snap, &[0, 0, 2]).unwrap_err().contains("repeated"));
        assert!(check_order(&snap, &[0, 1]).unwrap_err().contains("holds 2 rules"));
    }

    #[test]
    fn algorithm_names() {
        assert_eq!(KernelAlgo::parse("mrf").unwrap(), KernelAlgo::Mrf);
        assert_eq!(KernelAlgo::parse("static").unwrap(), KernelAlgo::Static);
        assert!(KernelAlgo::parse("tuple").unwrap_err().to_string().contains("known: static, mrf"));
    }
}
