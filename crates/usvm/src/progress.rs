//! Progress of a fit: the events a long fit tells its observer ([`Progress`]), the [`Observer`] that
//! receives them (an edge draws a bar from them, Python calls back), and the [`Monitor`] a solver holds —
//! a copyable handle that knows the observer, the binary problem and the iterations before this solve.
//!
//! Solvers report iterations through [`Monitor::iteration`]: with no observer this is one branch, no
//! allocation and no computation (a quantity that costs anything is passed as a closure, evaluated only
//! when someone listens), so a fit with an observer equals a fit without, bit for bit. An observer may ask
//! the fit to stop ([`Observer::stop`]); solvers then leave their loops and [`crate::fit()`] returns
//! [`crate::Error::Interrupted`] instead of a result.

use crate::report::FitReport;

/// What a long fit tells its observer.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress<'a> {
    /// A phase begins (`"validating"`, `"fitting"`, ...).
    Phase(&'a str),
    /// A solver's iteration (or a round of an alternating method, or a certificate).
    Iteration(Iteration),
    /// The fit has finished with these reports.
    Done(&'a [FitReport]),
}

/// One iteration of a solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Iteration {
    /// The binary problem `(k, K)`: problem `k` of `K` (`K = 1` for two classes).
    pub problem: (usize, usize),
    /// Iterations so far in this binary problem (Newton, L-BFGS, SGD or SMO steps, dual CD epochs; summed
    /// over the stages and rounds of the problem): non-decreasing within a problem.
    pub iteration: usize,
    /// The objective the solver minimises (or, for dual solvers, the dual objective as the report states
    /// it; for SGD the mini-batch estimate), at this iteration.
    pub objective: f64,
    /// The residual of the stopping rule, of kind [`Self::quantity`].
    pub residual: f64,
    /// What [`Self::residual`] measures.
    pub quantity: Quantity,
}

/// What a solver's stopping rule measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// `‖∇J‖` (Newton, L-BFGS; for SGD the mini-batch sub-gradient).
    GradientNorm,
    /// The maximal KKT violation (SMO, the SVM+ QP).
    KktViolation,
    /// The relative duality gap (dual coordinate descent).
    DualityGap,
    /// The relative decrease of the objective over a round (alternating rounds).
    RelativeDecrease,
    /// The residual the fit's report states for this problem (its `gradient_norm`): the last event of
    /// every binary problem, carrying the report's objective and iteration count.
    Final,
}

impl Quantity {
    /// A short name (`"gradient_norm"`, `"kkt_violation"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Quantity::GradientNorm => "gradient_norm",
            Quantity::KktViolation => "kkt_violation",
            Quantity::DualityGap => "duality_gap",
            Quantity::RelativeDecrease => "relative_decrease",
            Quantity::Final => "final",
        }
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Quantity::GradientNorm => "‖∇J‖",
            Quantity::KktViolation => "KKT violation",
            Quantity::DualityGap => "gap",
            Quantity::RelativeDecrease => "decrease",
            Quantity::Final => "residual",
        })
    }
}

/// Receives [`Progress`] events; must be cheap and thread-safe (one-vs-rest problems may run in parallel).
pub trait Observer: Sync {
    /// Called at each event.
    fn observe(&self, event: Progress<'_>);

    /// Whether the fit should stop as soon as it can (checked after each iteration event); a stopped fit
    /// is [`crate::Error::Interrupted`]. Default: never.
    fn stop(&self) -> bool {
        false
    }
}

/// A solver's handle on the fit's observer: which binary problem it solves and how many iterations came
/// before (earlier stages or rounds), so that iteration numbers keep increasing within a problem.
#[derive(Clone, Copy, Default)]
pub struct Monitor<'a> {
    observer: Option<&'a dyn Observer>,
    problem: (usize, usize),
    offset: usize,
}

impl std::fmt::Debug for Monitor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("observer", &self.observer.is_some())
            .field("problem", &self.problem)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<'a> Monitor<'a> {
    /// A monitor reporting to `observer` (nothing for `None`), for problem 1 of 1.
    pub fn new(observer: Option<&'a dyn Observer>) -> Self {
        Monitor { observer, problem: (0, 1), offset: 0 }
    }

    /// The same observer, for binary problem `k` of `of`.
    pub fn problem(self, k: usize, of: usize) -> Self {
        Monitor { problem: (k, of), offset: 0, ..self }
    }

    /// The same, numbering iterations after `n` more that came before.
    pub fn after(self, n: usize) -> Self {
        Monitor { offset: self.offset + n, ..self }
    }

    /// Whether anyone listens.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.observer.is_some()
    }

    /// Reports iteration `iteration` (counted from this monitor's offset) with `(objective, residual)`
    /// from `values`, evaluated only if someone listens; returns whether the fit should stop.
    #[inline]
    pub fn iteration(&self, iteration: usize, quantity: Quantity, values: impl FnOnce() -> (f64, f64)) -> bool {
        match self.observer {
            None => false,
            Some(o) => {
                let (objective, residual) = values();
                let event = Iteration {
                    problem: self.problem,
                    iteration: self.offset + iteration,
                    objective,
                    residual,
                    quantity,
                };
                o.observe(Progress::Iteration(event));
                o.stop()
            }
        }
    }

    /// Whether the observer asked the fit to stop.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.observer.is_some_and(|o| o.stop())
    }
}

/// Emits an event at most every this many SMO-type steps (each costs `O(ℓ)`; the event `O(1)`).
pub(crate) const STEP_EVENTS_EVERY: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Record(Mutex<Vec<Iteration>>);
    impl Observer for Record {
        fn observe(&self, event: Progress<'_>) {
            if let Progress::Iteration(i) = event {
                self.0.lock().unwrap().push(i);
            }
        }
    }

    #[test]
    fn a_monitor_numbers_iterations_after_its_offset_and_evaluates_only_when_observed() {
        let silent = Monitor::default();
        assert!(!silent.iteration(3, Quantity::GradientNorm, || unreachable!("nobody listens")));
        let record = Record(Mutex::new(Vec::new()));
        let m = Monitor::new(Some(&record)).problem(2, 5).after(10).after(5);
        assert!(!m.iteration(3, Quantity::KktViolation, || (1.5, 0.25)));
        let got = record.0.lock().unwrap()[0];
        assert_eq!(
            got,
            Iteration {
                problem: (2, 5),
                iteration: 18,
                objective: 1.5,
                residual: 0.25,
                quantity: Quantity::KktViolation
            }
        );
    }
}
