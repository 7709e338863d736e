//! Request traces for the delayed-hits model: one request per time step, objects numbered densely
//! in order of first appearance, and each object's miss latency Z (global, or per object from a
//! latency column).
//!
//! Text traces hold one request per line, `OBJECT [TIMESTAMP [LATENCY]]`, separated by spaces,
//! tabs or commas; blank lines and `#` comments are skipped. OBJECT is any token. TIMESTAMP is a
//! number in any unit, never decreasing. LATENCY is the miss latency in TIMESTAMP's unit; an
//! object's Z is the mean of its latencies over the mean inter-request time R, rounded to whole
//! request-times, halves up (thesis §2.1, footnote 1: Z = L / R); one under half a request-time
//! (Z = 0) is refused, naming the object's first line. Every line has the same number of columns. The
//! engine's compact binary key trace (`SLKT`) is read as well (objects only).

use std::collections::HashMap;
use superlinear_core::input;
use superlinear_core::workload::{parse_binary_trace, TRACE_MAGIC};
use superlinear_core::Error;

/// The largest miss latency Z, in request-times, and the largest LATENCY a trace may give: the
/// simulator's u64 clock adds Z to a request's time without overflowing (the Python front's
/// `MAX_Z`).
pub const MAX_Z: u64 = 1 << 62;

/// A parsed trace.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyTrace {
    /// The object of every request, dense ids `0..objects`, one request per time step.
    pub requests: Vec<u32>,
    /// Number of distinct objects.
    pub objects: usize,
    /// Mean inter-request time R in TIMESTAMP units, when the trace has timestamps.
    pub mean_interval: Option<f64>,
    /// Each object's mean miss latency in TIMESTAMP units, when the trace has a latency column.
    pub latencies: Option<Vec<f64>>,
    /// The line where each object's latencies start, for messages about its Z.
    pub latency_lines: Vec<u32>,
    /// The file read (empty for a trace made in memory), for those messages.
    pub source: String,
}

/// Miss latency Z in request steps: one for every object, or one per object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissLatency {
    /// The same Z for every object.
    Global(u64),
    /// Z of each object (dense ids).
    PerObject(Vec<u64>),
}

impl MissLatency {
    /// A global Z; Z = 0 is impossible (a fill takes at least one step), Z above [`MAX_Z`] too
    /// large for the simulator's clock.
    pub fn global(z: u64) -> Result<Self, Error> {
        if z == 0 {
            return Err(Error::config("Z must be at least 1 request-time (a fill takes at least one step)"));
        }
        if z > MAX_Z {
            return Err(Error::config(format!("Z = {z} request-times: at most 2^62 = {MAX_Z}")));
        }
        Ok(MissLatency::Global(z))
    }

    /// Z of `object`.
    #[inline]
    pub fn of(&self, object: u32) -> u64 {
        match self {
            MissLatency::Global(z) => *z,
            MissLatency::PerObject(zs) => zs[object as usize],
        }
    }

    /// Whether every object has the same Z (fills then complete in miss order).
    pub fn is_uniform(&self) -> bool {
        match self {
            MissLatency::Global(_) => true,
            MissLatency::PerObject(zs) => zs.windows(2).all(|w| w[0] == w[1]),
        }
    }

    /// The largest Z.
    pub fn max(&self) -> u64 {
        match self {
            MissLatency::Global(z) => *z,
            MissLatency::PerObject(zs) => zs.iter().copied().max().unwrap_or(1),
        }
    }

    /// The request-weighted mean Z of a trace (for labels).
    pub fn mean_over(&self, requests: &[u32]) -> f64 {
        match self {
            MissLatency::Global(z) => *z as f64,
            MissLatency::PerObject(zs) => {
                requests.iter().map(|&o| zs[o as usize] as f64).sum::<f64>() / requests.len().max(1) as f64
            }
        }
    }
}

impl LatencyTrace {
    /// A trace from dense object ids (checked: ids must be `< objects`).
    pub fn from_requests(requests: Vec<u32>, objects: usize) -> Result<Self, Error> {
        if requests.is_empty() {
            return Err(Error::config("a trace needs at least one request"));
        }
        if let Some(bad) = requests.iter().find(|&&o| o as usize >= objects) {
            return Err(Error::config(format!("object id {bad} out of range 0..{objects}")));
        }
        Ok(Self {
            requests,
            objects,
            mean_interval: None,
            latencies: None,
            latency_lines: Vec::new(),
            source: String::new(),
        })
    }

    /// A trace from arbitrary keys, numbered densely in order of first appearance.
    pub fn from_keys(keys: &[u64]) -> Result<Self, Error> {
        let mut ids: HashMap<u64, u32> = HashMap::new();
        let requests = keys
            .iter()
            .map(|k| {
                let next = ids.len() as u32;
                *ids.entry(*k).or_insert(next)
            })
            .collect();
        let objects = ids.len();
        Self::from_requests(requests, objects)
    }

    /// Reads a text or binary (`SLKT`) trace; errors are `FILE:LINE: problem`.
    pub fn read(path: &str) -> Result<Self, Error> {
        let bytes = input::read_bytes(path)?;
        if let Some(kind) = input::packet_trace_kind(&bytes) {
            let hint = input::PACKET_TRACE_HINT;
            return Err(Error::input(path, None, format!("a {kind} packet trace, not a key trace ({hint})")));
        }
        if bytes.starts_with(TRACE_MAGIC) {
            let keys = parse_binary_trace(&bytes, path)?;
            return Self::from_keys(&keys).map_err(|e| Error::input(path, None, e.to_string()));
        }
        Self::parse_text(&input::into_text(bytes, path)?, path)
    }

    fn parse_text(text: &str, path: &str) -> Result<Self, Error> {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut requests = Vec::new();
        let mut columns: Option<(usize, usize)> = None; // (count, line it was set on)
        let mut first_time = None;
        let mut last_time = f64::NEG_INFINITY;
        // As written, for messages: a float would print 18446744073709551615 as ...552000.
        let mut last_time_text = "";
        let mut latency_sum: Vec<f64> = Vec::new();
        let mut latency_count: Vec<u32> = Vec::new();
        let mut latency_lines: Vec<u32> = Vec::new(); // each object's first
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let at = |m: String| Error::input(path, Some(n), m);
            let text = line.split('#').next().unwrap_or("");
            let fields: Vec<&str> =
                text.split(|c: char| c.is_whitespace() || c == ',').filter(|f| !f.is_empty()).collect();
            if fields.is_empty() {
                continue;
            }
            match columns {
                None if fields.len() > 3 => {
                    return Err(at(format!("expected OBJECT [TIMESTAMP [LATENCY]], got {} columns", fields.len())))
                }
                None => columns = Some((fields.len(), n)),
                Some((c, first)) if c != fields.len() => {
                    return Err(at(format!("expected {c} columns like line {first}, got {}", fields.len())))
                }
                _ => {}
            }
            let next = ids.len() as u32;
            let object = *ids.entry(fields[0].to_string()).or_insert(next);
            requests.push(object);
            if let Some(ts) = fields.get(1) {
                let t = number(ts).ok_or_else(|| at(format!("timestamp '{}' is not a number", shown(ts))))?;
                if t < last_time {
                    return Err(at(format!(
                        "timestamp {} is earlier than the previous one ({})",
                        shown(ts),
                        shown(last_time_text)
                    )));
                }
                last_time = t;
                last_time_text = ts;
                first_time.get_or_insert(t);
            }
            if let Some(lat) = fields.get(2) {
                let l = number(lat)
                    .filter(|l| *l >= 0.0)
                    .ok_or_else(|| at(format!("latency '{}' is not a non-negative number", shown(lat))))?;
                if l > MAX_Z as f64 {
                    return Err(at(format!("latency {} is above the largest miss latency, 2^62", shown(lat))));
                }
                let o = object as usize;
                if o == latency_sum.len() {
                    latency_sum.push(0.0);
                    latency_count.push(0);
                    latency_lines.push(u32::try_from(n).unwrap_or(u32::MAX));
                }
                latency_sum[o] += l;
                latency_count[o] += 1;
            }
        }
        if requests.is_empty() {
            return Err(Error::input(path, None, "trace holds no requests"));
        }
        let columns = columns.map_or(1, |c| c.0);
        let span = last_time - first_time.unwrap_or(last_time);
        if columns >= 2 && !span.is_finite() {
            // -1e308 to 1e308: every Z would come out as 1, silently.
            return Err(Error::input(path, None, "the timestamps span more than a number holds"));
        }
        let mean_interval = (columns >= 2).then(|| span / (requests.len().saturating_sub(1).max(1)) as f64);
        let latencies =
            (columns == 3).then(|| latency_sum.iter().zip(&latency_count).map(|(s, c)| s / *c as f64).collect());
        Ok(Self { objects: ids.len(), requests, mean_interval, latencies, latency_lines, source: path.to_string() })
    }

    /// Number of requests (time steps).
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the trace is empty (never, for a parsed trace).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The miss latency to simulate: `z` for every object when given, otherwise each object's
    /// latency column over the mean inter-request time (Z = L / R, at least 1).
    pub fn miss_latency(&self, z: Option<u64>) -> Result<MissLatency, Error> {
        if let Some(z) = z {
            return MissLatency::global(z);
        }
        let (Some(lat), Some(r)) = (&self.latencies, self.mean_interval) else {
            return Err(Error::config("give Z, or a trace with TIMESTAMP and LATENCY columns"));
        };
        if r.is_nan() || r <= 0.0 {
            return Err(Error::config("the trace's timestamps do not advance: the inter-request time is 0"));
        }
        // Checked as a float: the cast to u64 saturates, and would print a made-up Z.
        if let Some(z) = lat.iter().map(|l| (l / r).round()).find(|z| z.is_nan() || *z > MAX_Z as f64) {
            return Err(Error::config(format!(
                "the trace's latencies give Z = {z:.3e} request-times (latency / mean inter-request time {r:.3e}): \
                 at most 2^62"
            )));
        }
        // Z = 0 would be a miss served at once: the engine raised it to 1, which a latency column
        // did not say. Refused as `--z 0` and a `--latency` under half a request-time are.
        if let Some(o) = lat.iter().position(|l| (l / r).round() < 1.0) {
            return Err(Error::config(format!(
                "{}: this object's mean latency {} gives Z = {:.3} request-times (latency / mean inter-request time \
                 {}), which rounds to 0; the shortest miss is Z = 1, a latency of at least {}",
                format_args!("{}:{}", self.source, self.latency_lines[o]),
                short(lat[o]),
                lat[o] / r,
                short(r),
                short(r / 2.0)
            )));
        }
        Ok(MissLatency::PerObject(lat.iter().map(|l| (l / r).round() as u64).collect()))
    }
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A number in at most six decimals, without trailing zeros (a mean of 0.2 and 1.4 is 0.8, not
/// 0.7999999999999999).
fn short(x: f64) -> String {
    let text = format!("{x:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn shown(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, body: &[u8]) -> String {
        superlinear_core::input::scratch_file("latency-trace", name, body)
    }

    #[test]
    fn text_objects_are_numbered_by_first_appearance() {
        let p = tmp("a.txt", b"# header\nb\na\n\nb  # again\nc\n");
        let t = LatencyTrace::read(&p).unwrap();
        assert_eq!(t.requests, vec![0, 1, 0, 2]);
        assert_eq!((t.objects, t.mean_interval, t.latencies.clone()), (3, None, None));
        assert!(t.miss_latency(None).unwrap_err().to_string().contains("give Z"));
        assert_eq!(t.miss_latency(Some(7)).unwrap(), MissLatency::Global(7));
        assert!(t.miss_latency(Some(0)).is_err());
    }

    #[test]
    fn latency_column_gives_per_object_z() {
        // R = 2 time units; x's latencies average 20 -> Z = 10; y's 3 -> 1.5 -> 2.
        let p = tmp("b.csv", b"x,0,20\ny,2,3\nx,4,20\ny,6,3\n");
        let t = LatencyTrace::read(&p).unwrap();
        assert_eq!(t.mean_interval, Some(2.0));
        let z = t.miss_latency(None).unwrap();
        assert_eq!(z, MissLatency::PerObject(vec![10, 2]));
        assert!(!z.is_uniform() && z.max() == 10);
        // z's latency 0.9 over R = 2 is Z = 0.45: it was raised to 1 unsaid.
        let p = tmp(
            "c.csv",
            b"x,0,20
y,2,3
z,4,0.9
x,6,20
",
        );
        let e = LatencyTrace::read(&p).unwrap().miss_latency(None).unwrap_err().to_string();
        assert!(e.contains("c.csv:3: this object's mean latency 0.9 gives Z = 0.450 request-times"), "{e}");
        assert!(e.contains("a latency of at least 1"), "{e}");
        assert_eq!(z.mean_over(&t.requests), 6.0);
    }

    #[test]
    fn malformed_lines_are_named() {
        let err = |body: &[u8]| LatencyTrace::read(&tmp("bad.txt", body)).unwrap_err().to_string();
        assert!(err(b"a 1\nb x\n").ends_with(":2: timestamp 'x' is not a number"), "{}", err(b"a 1\nb x\n"));
        assert!(err(b"a 1 5\nb 2\n").ends_with(":2: expected 3 columns like line 1, got 2"));
        assert!(err(b"a 5\nb 4\n").contains(":2: timestamp 4 is earlier"));
        assert!(err(b"a 1 -3\n").contains(":1: latency '-3' is not a non-negative number"));
        assert!(err(b"a 1 2 3\n").contains(":1: expected OBJECT [TIMESTAMP [LATENCY]], got 4 columns"));
        assert!(err(b"# nothing\n").ends_with("trace holds no requests"));
        assert!(err(b"a 1 inf\n").contains("latency 'inf'"));
        let same = tmp("same.txt", b"a 3 1\nb 3 1\n");
        assert!(LatencyTrace::read(&same)
            .unwrap()
            .miss_latency(None)
            .unwrap_err()
            .to_string()
            .contains("do not advance"));
    }

    #[test]
    fn binary_key_traces_are_read() {
        let p = tmp("k.bin", b"");
        superlinear_core::workload::write_binary_trace(&p, &[9, 4, 9, 9, 1]).unwrap();
        let t = LatencyTrace::read(&p).unwrap();
        assert_eq!((t.requests.clone(), t.objects), (vec![0, 1, 0, 0, 2], 3));
        assert!(LatencyTrace::read("/nonexistent/trace").is_err());
        assert!(LatencyTrace::from_requests(vec![0, 3], 2).is_err());
    }

    #[test]
    fn bom_is_not_part_of_the_first_object() {
        let t = LatencyTrace::read(&tmp("bom.txt", b"\xEF\xBB\xBF1108\n1108\n7\n")).unwrap();
        assert_eq!((t.requests.clone(), t.objects), (vec![0, 0, 1], 2));
        let e = LatencyTrace::read(&tmp("latin1.txt", b"a\n\xe9\n")).unwrap_err().to_string();
        assert!(e.ends_with("latin1.txt:2: not UTF-8 text"), "{e}");
    }

    #[test]
    fn latencies_and_timestamps_beyond_the_clock_are_refused() {
        let err = |body: &[u8]| LatencyTrace::read(&tmp("big.txt", body)).unwrap_err().to_string();
        let e = err(b"a 1 5\nb 2 9223372036854775807\n");
        assert!(e.ends_with(":2: latency 9223372036854775807 is above the largest miss latency, 2^62"), "{e}");
        let ok = LatencyTrace::read(&tmp("edge.txt", b"a 0 4611686018427387904\nb 1 1\n")).unwrap();
        assert_eq!(ok.miss_latency(None).unwrap().max(), MAX_Z);
        let e = err(b"a 18446744073709551615\nb 5\n");
        assert!(e.ends_with(":2: timestamp 5 is earlier than the previous one (18446744073709551615)"), "{e}");
        let fine = LatencyTrace::read(&tmp("fast.txt", b"a 0 4611686018427387904\nb 0.5 0\n")).unwrap();
        assert!(fine.miss_latency(None).unwrap_err().to_string().contains("at most 2^62"));
        assert!(MissLatency::global(MAX_Z + 1).is_err() && MissLatency::global(MAX_Z).is_ok());
    }
}
