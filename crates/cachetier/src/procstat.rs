//! CPU time of server processes, the raw material of projected speedups: memcached reports its
//! own (`stats` rusage, works for remote servers too); a local PostgreSQL backend's comes from
//! /proc (`schedstat`: nanoseconds on CPU; `stat`: clock ticks, as a fallback).

use std::collections::HashMap;

/// CPU nanoseconds of process `pid` so far, if it is visible in /proc.
pub fn process_cpu_ns(pid: i32) -> Option<u64> {
    if pid <= 0 {
        return None;
    }
    if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/schedstat")) {
        if let Some(ns) = s.split_whitespace().next().and_then(|t| t.parse().ok()) {
            return Some(ns);
        }
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(ticks * 1_000_000_000 / hz)
}

/// CPU nanoseconds a memcached server reports in `stats` (rusage_user + rusage_system).
pub fn memcached_cpu_ns(stats: &HashMap<String, String>) -> Option<u64> {
    let secs = |k: &str| stats.get(k).and_then(|v| v.parse::<f64>().ok());
    Some(((secs("rusage_user")? + secs("rusage_system")?) * 1e9) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_cpu_time() {
        let pid = std::process::id() as i32;
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        assert!(process_cpu_ns(pid).is_some());
        assert!(process_cpu_ns(-1).is_none());
        let stats: HashMap<String, String> =
            [("rusage_user".to_string(), "1.5".to_string()), ("rusage_system".to_string(), "0.25".to_string())].into();
        assert_eq!(memcached_cpu_ns(&stats), Some(1_750_000_000));
    }
}
