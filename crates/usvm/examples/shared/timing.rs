//! Timing for the benchmark examples.

use std::time::Instant;

/// The best time of `runs` calls, in seconds.
pub fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}
