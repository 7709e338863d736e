//! What a scheduler schedules: a packet and the job it causes (thesis §3.3.1: every packet has
//! a size in bits and a job size, the time its processing takes).

/// Innocent or adversarial traffic. Only the analysis reads it (goodput counts innocent bits);
/// a scheduler never does (thesis §3.3.1: the tag is "not visible to the underlying system").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Class {
    /// Class I: the traffic the system exists to serve.
    #[default]
    Innocent,
    /// Class A: the adversary's traffic.
    Attack,
}

/// One packet waiting for service.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Job {
    /// Caller's identifier (an index into its request store).
    pub id: u32,
    /// Flow the packet belongs to (what fair queueing and WSJF-Inorder group by).
    pub flow: u32,
    /// Packet size in bits.
    pub bits: u32,
    /// The job size the scheduler sees: the true size in simulation, a prediction in front of a
    /// real worker (SurgeProtector's heuristic, §3.5.2). Same unit as the service time.
    pub size: f64,
    /// Innocent or attack (for accounting only).
    pub class: Class,
}

impl Job {
    /// Job size per packet bit, the quantity WSJF orders by (§3.4.4).
    #[inline]
    pub fn ratio(&self) -> f64 {
        self.size / self.bits.max(1) as f64
    }
}
