//! Packet schedulers behind one interface, each in its own file (thesis §3.4): FCFS, fair
//! queueing (deficit round robin over service time), SJF, WSJF (SurgeProtector) and
//! WSJF-Inorder (§3.5.3). Adding a policy means one new file and one line in [`REGISTRY`].
//!
//! A scheduler owns a buffer of at most `capacity` packets (the K of G/G/1/K). When a packet
//! arrives at a full buffer the policy decides which packet is lost: FCFS drops the arrival,
//! FQ the tail of the longest flow, SJF and WSJF the largest job (per bit), using the HFFS
//! queue's DEQUEUE-MAX (§3.5.4), WSJF-Inorder the tail of the flow of highest rank.

mod drop_max;
mod fair_queue;
mod fcfs;
mod sjf;
mod wsjf;
mod wsjf_inorder;

pub use fair_queue::FairQueue;
pub use fcfs::Fcfs;
pub use sjf::Sjf;
pub use wsjf::Wsjf;
pub use wsjf_inorder::WsjfInorder;

use crate::job::Job;
use superlinear_core::error::number_text;
use superlinear_core::Error;

/// A scheduling policy with a bounded buffer.
pub trait Scheduler: Send {
    /// Offers an arriving packet. Returns the packet lost to make room when the buffer is full
    /// (the arrival itself when it is not admitted), `None` when nothing was lost.
    fn enqueue(&mut self, job: Job) -> Option<Job>;
    /// The next packet to serve.
    fn dequeue(&mut self) -> Option<Job>;
    /// Packets buffered.
    fn len(&self) -> usize;
    /// Whether nothing is buffered.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the constructors need: the buffer size, the range of job sizes and packet sizes (to
/// place the integer priorities of the HFFS queue) and the shape of that queue.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerConfig {
    /// Buffer capacity K in packets.
    pub capacity: usize,
    /// Smallest job size expected (positive; smaller sizes share the first bucket).
    pub job_min: f64,
    /// Largest job size expected.
    pub job_max: f64,
    /// Smallest packet in bits.
    pub bits_min: u32,
    /// Largest packet in bits.
    pub bits_max: u32,
    /// HFFS bitmap width (default 64).
    pub width: u32,
    /// HFFS levels (default 2: 4096 priorities).
    pub levels: u32,
    /// Fair queueing quantum in job-size units per round (default: `job_max`, so every
    /// backlogged flow is served at least one packet per round).
    pub quantum: Option<f64>,
}

impl SchedulerConfig {
    /// A configuration with the default 64² = 4096-priority queue.
    pub fn new(capacity: usize, job_min: f64, job_max: f64, bits_min: u32, bits_max: u32) -> Self {
        Self { capacity, job_min, job_max, bits_min, bits_max, width: 64, levels: 2, quantum: None }
    }

    /// Checks the configuration, naming the problem.
    pub fn validate(&self) -> Result<(), Error> {
        if self.capacity == 0 {
            return Err(Error::config("the scheduler buffer needs room for at least one packet"));
        }
        if !(self.job_max.is_finite() && self.job_max > 0.0) {
            return Err(Error::config(format!("largest job size must be positive, got {}", number_text(self.job_max))));
        }
        if self.bits_min == 0 || self.bits_max < self.bits_min {
            return Err(Error::config(format!(
                "packet sizes must satisfy 0 < min <= max, got {}..{} bits",
                self.bits_min, self.bits_max
            )));
        }
        crate::queue::HffsQueue::<Job>::check(self.width, self.levels, self.capacity).map_err(Error::config)?;
        Ok(())
    }

    /// The lower end of the job-size scale (a positive floor when `job_min` is 0).
    pub fn job_floor(&self) -> f64 {
        if self.job_min > 0.0 {
            self.job_min.min(self.job_max / 2.0)
        } else {
            self.job_max * 1e-6
        }
    }
}

/// Builds a scheduler.
pub type SchedulerConstructor = fn(&SchedulerConfig) -> Box<dyn Scheduler>;

/// What a policy serves first, which decides the optimal attack against it and the analytic
/// bound on its displacement factor (thesis §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServesFirst {
    /// The oldest packet (FCFS): blind to job sizes.
    Oldest,
    /// The flow with the least service so far (FQ): blind to job sizes.
    FairShare,
    /// The smallest job (SJF).
    SmallestJob,
    /// The smallest job per packet bit (WSJF and its in-order variant).
    SmallestJobPerBit,
}

/// One registry entry.
pub struct SchedulerEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// One line for `--help`.
    pub summary: &'static str,
    /// What it serves first (its attack and bound follow).
    pub serves_first: ServesFirst,
    /// The constructor.
    pub build: SchedulerConstructor,
}

/// Every scheduling policy.
pub const REGISTRY: &[SchedulerEntry] = &[
    SchedulerEntry {
        name: "fcfs",
        summary: "first come, first served; tail drop",
        serves_first: ServesFirst::Oldest,
        build: |c| Box::new(Fcfs::new(c)),
    },
    SchedulerEntry {
        name: "fq",
        summary: "fair queueing: deficit round robin over service time per flow; drop from the longest flow",
        serves_first: ServesFirst::FairShare,
        build: |c| Box::new(FairQueue::new(c)),
    },
    SchedulerEntry {
        name: "sjf",
        summary: "shortest job first on the HFFS queue; drop the largest job",
        serves_first: ServesFirst::SmallestJob,
        build: |c| Box::new(Sjf::new(c)),
    },
    SchedulerEntry {
        name: "wsjf",
        summary: "SurgeProtector: smallest job per packet bit first on the HFFS queue; drop the largest ratio",
        serves_first: ServesFirst::SmallestJobPerBit,
        build: |c| Box::new(Wsjf::new(c)),
    },
    SchedulerEntry {
        name: "wsjf-inorder",
        summary: "WSJF keeping flows in order: flow rank = queued job / queued bits; drop from the worst flow",
        serves_first: ServesFirst::SmallestJobPerBit,
        build: |c| Box::new(WsjfInorder::new(c)),
    },
];

/// Looks up a policy by name.
pub fn lookup(name: &str) -> Result<&'static SchedulerEntry, Error> {
    let name = name.trim();
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown scheduling policy '{name}' (known: {})", known.join(", ")))
    })
}

/// Validates `config` and builds the named policy.
pub fn build(name: &str, config: &SchedulerConfig) -> Result<Box<dyn Scheduler>, Error> {
    let entry = lookup(name)?;
    config.validate()?;
    Ok((entry.build)(config))
}
