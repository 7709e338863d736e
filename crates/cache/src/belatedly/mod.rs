//! BELATEDLY (thesis §2.4): the offline, latency-optimal cache schedule as a min-cost
//! multi-commodity flow, one commodity per object, solved as a linear program.
//!
//! [`FlowNetwork`] builds the network with both of §2.4.3's reductions: *caching intervals*
//! (an object's caching decision can change only at its fills and right after its requests, so
//! it has a node only there and one variable per interval) and *no backing-store nodes* (an
//! eviction and the next fetch of the object are one edge whose cost is that fetch's aggregate
//! delay, Eq. 2.13). The cache capacity couples the commodities. The result is a sparse LP in
//! equality form that HiGHS solves (from Python: `scipy.optimize.linprog(method="highs")`); its
//! optimum plus the forced first misses is a lower bound on every schedule's latency, exact for
//! integral solutions (Theorem 1).
//!
//! [`FlowBalance`] turns the fractional solution into a schedule the simulator can replay:
//! admit a fill with the probability the flow admits it (randomised rounding), and when the
//! cache is full evict the object whose cached flow is smallest (the most unbalanced one).

mod network;
mod rounding;

pub use network::{FlowNetwork, NetworkSize};
pub use rounding::{round_schedules, FlowBalance, Rounding, RoundingOutcome};
