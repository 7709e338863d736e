//! A run cancelled while it runs stops within a second and says it was interrupted (its own
//! test binary: the flag is process-wide, and no other test may see it set).

use std::time::{Duration, Instant};
use superlinear_core::cancel;
use superlinear_core::config::RunSettings;

/// Cancels `settings` after `after` and checks it stops within a second, interrupted.
fn cancel_after(settings: &str, after: Duration) {
    let settings: RunSettings = serde_json::from_str(settings).expect("valid settings");
    let config = settings.to_run_config().expect("a valid run");
    cancel::clear();
    let runner = std::thread::spawn(move || superlinear_core::run_config::execute(&config));
    std::thread::sleep(after);
    let t0 = Instant::now();
    cancel::request();
    let result = runner.join().expect("no panic");
    assert!(t0.elapsed() < Duration::from_secs(1), "stopped after {:?}", t0.elapsed());
    assert_eq!(result.err().map(|e| e.to_string()).as_deref(), Some("interrupted"));
    cancel::clear();
}

#[test]
fn a_cancelled_run_stops_within_a_second() {
    // While the workload is generated (400M requests take seconds to draw).
    cancel_after(
        r#"{"algo": "mtf", "dispatch": "hash", "k": 2, "requests": 400000000,
            "workload": {"kind": "zipf", "m": 1000, "alpha": 1.0}, "modes": ["projected"]}"#,
        Duration::from_millis(300),
    );
    // While the workers serve (2M requests drawn fast, then 50 repeats of every worker).
    cancel_after(
        r#"{"algo": "mtf", "dispatch": "hash", "k": 2, "requests": 2000000, "repeats": 50,
            "workload": {"kind": "zipf", "m": 5000, "alpha": 0.8}, "modes": ["projected"]}"#,
        Duration::from_millis(800),
    );
}
