//! The pruned flow network of Belatedly as a sparse LP: minimise c·x subject to A x = b and
//! lo ≤ x ≤ hi, A in compressed sparse rows.
//!
//! Per object with requests t_0 < ... < t_last and miss latency Z, the nodes are the times
//! p ∈ {t_j + Z} ∪ {t_j + 1} with t_0 + Z ≤ p ≤ t_last. At node p_k the object's unit of flow
//! either stays cached until the next node (y_k, cost 0, the interval [p_k, p_k+1)) or leaves
//! (e_k): it is then out until its next request t_j ≥ p_k, which is fetched (a miss costing
//! AggregateDelay(t_j), Eq. 2.13, and covering t_j's delayed hits) and arrives at node t_j + Z,
//! or at the sink after t_last. The first request is always a miss: a constant. Node rows:
//! inflow (y_{k-1}, arriving e's, the first fetch) = y_k + e_k. Capacity: the occupancy O_g
//! during [g, next g) changes by the intervals that start and end at g, and 0 ≤ O_g ≤ C.

use crate::future::Future;
use crate::trace::MissLatency;
use superlinear_core::Error;

/// One object's nodes and where its variables are.
#[derive(Clone, Debug)]
pub(crate) struct ObjectNodes {
    /// Node times p_0 < p_1 < ...; empty when no caching decision exists.
    pub times: Vec<u64>,
    /// Index of y_0; y_k is `first_var + 2k`, e_k is `first_var + 2k + 1`.
    pub first_var: usize,
    /// t_last + 1: the end of the last interval.
    pub end: u64,
    /// For each e_k, the node its fetch arrives at (`None`: the sink).
    pub arrival: Vec<Option<usize>>,
}

/// Counts of the LP (for reports and size limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NetworkSize {
    /// Decision variables (intervals y, evictions e, occupancies O).
    pub variables: usize,
    /// Equality rows (flow conservation, occupancy).
    pub rows: usize,
    /// Non-zeros of A.
    pub nonzeros: usize,
    /// Caching intervals (y variables).
    pub intervals: usize,
}

/// Belatedly's flow network for one trace, Z and capacity.
/// Serialised, it is the LP's arrays (the private graph structure left out).
#[derive(Clone, Debug, serde::Serialize)]
pub struct FlowNetwork {
    /// Objective coefficient per variable.
    pub cost: Vec<f64>,
    /// Lower bound per variable.
    pub lower: Vec<f64>,
    /// Upper bound per variable.
    pub upper: Vec<f64>,
    /// Right-hand side per row.
    pub rhs: Vec<f64>,
    /// CSR row pointers (`rows + 1` entries).
    pub indptr: Vec<i64>,
    /// CSR column indices.
    pub indices: Vec<i32>,
    /// CSR values.
    pub values: Vec<f64>,
    /// Latency every schedule pays: the first miss of every object.
    pub constant: u64,
    #[serde(skip)]
    pub(crate) objects: Vec<ObjectNodes>,
    /// The times g of the occupancy variables, ascending; O_g is column `occupancy_column + q`.
    #[serde(skip)]
    occupancy_times: Vec<u64>,
    #[serde(skip)]
    occupancy_column: usize,
    #[serde(skip)]
    capacity: usize,
}

impl FlowNetwork {
    /// Builds the network for `requests` with a cache of `capacity` objects.
    pub fn build(requests: &[u32], objects: usize, z: &MissLatency, capacity: usize) -> Result<Self, Error> {
        if capacity == 0 {
            return Err(Error::config("cache size must be at least 1 object"));
        }
        if requests.is_empty() {
            return Err(Error::config("a trace needs at least one request"));
        }
        let future = Future::new(requests, objects, z);
        let mut times_of: Vec<Vec<u64>> = vec![Vec::new(); objects];
        for (t, &o) in requests.iter().enumerate() {
            times_of[o as usize].push(t as u64);
        }
        let mut cost = Vec::new();
        let mut triplets: Vec<(usize, usize, f64)> = Vec::new(); // (row, column, value)
        let mut rhs = Vec::new();
        let mut nodes_of = Vec::with_capacity(objects);
        let mut constant = 0u64;
        // Interval starts and ends for the occupancy rows: (time, y column, +1 start / -1 end).
        let mut edges: Vec<(u64, usize, f64)> = Vec::new();
        for (o, times) in times_of.iter().enumerate() {
            if times.is_empty() {
                nodes_of.push(ObjectNodes { times: Vec::new(), first_var: cost.len(), end: 0, arrival: Vec::new() });
                continue;
            }
            let zo = z.of(o as u32);
            let (t0, last) = (times[0], *times.last().expect("every object has a request"));
            constant += future.aggregate_delay(t0);
            let mut points: Vec<u64> =
                times.iter().flat_map(|&t| [t + zo, t + 1]).filter(|&p| p >= t0 + zo && p <= last).collect();
            points.sort_unstable();
            points.dedup();
            let first_var = cost.len();
            let first_row = rhs.len();
            let node_of = |p: u64| points.binary_search(&p).ok();
            let mut arrivals = Vec::with_capacity(points.len());
            for (k, &p) in points.iter().enumerate() {
                let (y, e, row) = (first_var + 2 * k, first_var + 2 * k + 1, first_row + k);
                let end = points.get(k + 1).copied().unwrap_or(last + 1);
                // The next request at or after p, fetched when the object leaves here.
                let j = times.partition_point(|&t| t < p);
                let target = times[j];
                cost.push(0.0);
                cost.push(future.aggregate_delay(target) as f64);
                triplets.push((row, y, -1.0));
                triplets.push((row, e, -1.0));
                if k > 0 {
                    triplets.push((row, y - 2, 1.0));
                }
                let arrival = node_of(target + zo);
                if let Some(a) = arrival {
                    triplets.push((first_row + a, e, 1.0));
                }
                arrivals.push(arrival);
                edges.push((p, y, 1.0));
                edges.push((end, y, -1.0));
                rhs.push(if k == 0 { -1.0 } else { 0.0 }); // the first fetch arrives at p_0 = t_0 + Z
            }
            nodes_of.push(ObjectNodes { times: points, first_var, end: last + 1, arrival: arrivals });
        }
        let intervals = cost.len() / 2;
        // Occupancy rows: O_g - O_{g-1} - (intervals starting at g) + (intervals ending at g) = 0.
        edges.sort_unstable_by_key(|&(t, col, _)| (t, col));
        let occupancy_column = cost.len();
        let mut occupancy_times = Vec::new();
        let mut g = 0usize;
        let mut i = 0usize;
        while i < edges.len() {
            let t = edges[i].0;
            occupancy_times.push(t);
            let (row, o_col) = (rhs.len(), cost.len());
            cost.push(0.0);
            rhs.push(0.0);
            triplets.push((row, o_col, 1.0));
            if g > 0 {
                triplets.push((row, o_col - 1, -1.0));
            }
            while i < edges.len() && edges[i].0 == t {
                triplets.push((row, edges[i].1, -edges[i].2));
                i += 1;
            }
            g += 1;
        }
        let n = cost.len();
        let lower = vec![0.0; n];
        let mut upper = vec![1.0; n];
        upper[2 * intervals..].fill(capacity as f64);
        let rows = rhs.len();
        if n > i32::MAX as usize || triplets.len() > i64::MAX as usize {
            return Err(Error::config("trace too large for the flow network"));
        }
        let (indptr, indices, values) = to_csr(rows, triplets);
        Ok(Self {
            cost,
            lower,
            upper,
            rhs,
            indptr,
            indices,
            values,
            constant,
            objects: nodes_of,
            occupancy_times,
            occupancy_column,
            capacity,
        })
    }

    /// Size of the LP.
    pub fn size(&self) -> NetworkSize {
        NetworkSize {
            variables: self.cost.len(),
            rows: self.rhs.len(),
            nonzeros: self.values.len(),
            intervals: self.objects.iter().map(|o| o.times.len()).sum(),
        }
    }

    /// The cache capacity the network was built for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Total latency of a solution `x`: the constant plus c·x (the lower bound at the optimum).
    pub fn latency(&self, x: &[f64]) -> f64 {
        self.constant as f64 + self.cost.iter().zip(x).map(|(c, v)| c * v).sum::<f64>()
    }

    /// The flow of an integral schedule (Lemma 1, schedule to flow): `cached(o, t)` says whether
    /// object `o` is cached during step `t`. An interval's y is whether the object is cached at
    /// its last step (the step of the request that ends it, if any); the flow that reaches a
    /// node and does not stay leaves by its eviction edge. For a schedule the simulator can play,
    /// the point is feasible and [`Self::latency`] is the schedule's latency.
    pub fn schedule_point(&self, cached: impl Fn(u32, u64) -> bool) -> Vec<f64> {
        let mut x = vec![0.0; self.cost.len()];
        let mut starts: Vec<(u64, f64)> = Vec::new(); // (time, +y at a start, -y at an end)
        for (o, nodes) in self.objects.iter().enumerate() {
            let k_max = nodes.times.len();
            let mut inflow = vec![0.0; k_max];
            if let Some(first) = inflow.first_mut() {
                *first = 1.0;
            }
            for k in 0..k_max {
                let end = nodes.times.get(k + 1).copied().unwrap_or(nodes.end);
                let y = if inflow[k] > 0.0 && cached(o as u32, end - 1) { 1.0 } else { 0.0 };
                let e = inflow[k] - y;
                x[nodes.first_var + 2 * k] = y;
                x[nodes.first_var + 2 * k + 1] = e;
                if k + 1 < k_max {
                    inflow[k + 1] += y;
                }
                if let Some(a) = nodes.arrival[k] {
                    inflow[a] += e;
                }
                if y > 0.0 {
                    starts.push((nodes.times[k], 1.0));
                    starts.push((end, -1.0));
                }
            }
        }
        starts.sort_unstable_by_key(|&(t, _)| t);
        let (mut occupancy, mut i) = (0.0, 0);
        for (q, &g) in self.occupancy_times.iter().enumerate() {
            while i < starts.len() && starts[i].0 <= g {
                occupancy += starts[i].1;
                i += 1;
            }
            x[self.occupancy_column + q] = occupancy;
        }
        x
    }

    /// Largest violation of a row or a bound by `x` (0 for a feasible point).
    pub fn violation(&self, x: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        for (r, &b) in self.rhs.iter().enumerate() {
            let (s, e) = (self.indptr[r] as usize, self.indptr[r + 1] as usize);
            let ax: f64 = (s..e).map(|k| self.values[k] * x[self.indices[k] as usize]).sum();
            worst = worst.max((ax - b).abs());
        }
        for (v, &xv) in x.iter().enumerate() {
            worst = worst.max(self.lower[v] - xv).max(xv - self.upper[v]);
        }
        worst
    }
}

fn to_csr(rows: usize, mut triplets: Vec<(usize, usize, f64)>) -> (Vec<i64>, Vec<i32>, Vec<f64>) {
    triplets.sort_unstable_by_key(|&(r, c, _)| (r, c));
    let mut indptr = vec![0i64; rows + 1];
    let mut indices: Vec<i32> = Vec::with_capacity(triplets.len());
    let mut values: Vec<f64> = Vec::with_capacity(triplets.len());
    let mut previous = None;
    for (r, c, v) in triplets {
        if previous == Some((r, c)) {
            *values.last_mut().expect("a previous entry exists") += v;
            continue;
        }
        previous = Some((r, c));
        indptr[r + 1] += 1;
        indices.push(c as i32);
        values.push(v);
    }
    for r in 0..rows {
        indptr[r + 1] += indptr[r];
    }
    (indptr, indices, values)
}
