//! Alternating rounds for a hinge at the worst point of a ball (Bi & Zhang's Algorithm 1), shared by linear
//! TSVC and Power SVM: fix the perturbations `Δx_i = y_i r_i w/‖w‖` of the current `w`, solve the hinge SVM
//! on the moved points, repeat while the ball-hinge objective decreases.

use crate::data::{Features, norm2};
use crate::loss::BallHinge;
use crate::objective::Objective;
use crate::progress::{Monitor, Quantity};
use crate::report::FitReport;

/// The points moved by Lemma 1 for the direction of `w`: `x_i + y_i δ_i w/‖w‖` (unmoved for `w = 0`).
pub(crate) fn shift_points(features: &Features, y: &[f64], radii: &[f64], w: &[f64]) -> Features<'static> {
    let norm = norm2(w);
    let mut x = features.to_dense();
    if norm > 0.0 {
        for (i, mut row) in x.rows_mut().into_iter().enumerate() {
            let a = y[i] * radii[i] / norm;
            row.iter_mut().zip(w).for_each(|(xj, wj)| *xj += a * wj);
        }
    }
    Features::dense(x)
}

/// The result of [`alternate`].
pub(crate) struct Alternation {
    pub theta: Vec<f64>,
    /// The last accepted SVM's report with the objective, total iterations and trace of eq. 7.
    /// Its `rounds` counts the SVM solves, the first one included.
    pub report: FitReport,
    /// Whether the rounds stopped by the rule (no or a small decrease) rather than by `max_rounds`.
    pub settled: bool,
}

/// Algorithm 1 for linear TSVC / Power SVM on `objective` (the ball hinge with `σ_i = r_i‖w‖`, in the
/// λ-form `λ/2‖w‖² + (1/ℓ) Σ c_i L_i`, which is eq. 7 divided by `Cℓ`): `hinge(points, start)` solves the
/// hinge SVM on the given points (reporting to the monitor it is given). The first hyperplane is the SVM on
/// the unmoved points, or one round from `start`.
pub(crate) fn alternate(
    objective: &Objective<'_, BallHinge>,
    radii: &[f64],
    start: Option<Vec<f64>>,
    max_rounds: usize,
    tol: f64,
    monitor: Monitor<'_>,
    hinge: impl Fn(&Features, Option<Vec<f64>>, Monitor<'_>) -> (Vec<f64>, FitReport),
) -> Alternation {
    let problem = objective.problem;
    let n = problem.n_features();
    let moved_hinge = |moved_by: Option<&[f64]>, start: Option<Vec<f64>>, m: Monitor<'_>| match moved_by {
        Some(theta) => hinge(&shift_points(problem.features, problem.y, radii, &theta[..n]), start, m),
        None => hinge(problem.features, start, m),
    };
    alternate_with(|theta| objective.value(theta), start, max_rounds, tol, monitor, moved_hinge)
}

/// Algorithm 1 on any representation of the data: `value(θ)` is the ball-hinge objective and
/// `hinge(moved_by, start)` solves the hinge SVM from `start` on the points moved for the direction of
/// `moved_by`'s `w` (unmoved for `None`). [`alternate`] runs it on local data, the fit over row shards
/// (`crate::sharded`) on partial sums. Each accepted round is reported to `monitor` (eq. 7 and its relative
/// decrease), after the iterations of its SVM solve, which `hinge` numbers from the monitor it is given.
pub(crate) fn alternate_with(
    value: impl Fn(&[f64]) -> f64,
    start: Option<Vec<f64>>,
    max_rounds: usize,
    tol: f64,
    monitor: Monitor<'_>,
    hinge: impl Fn(Option<&[f64]>, Option<Vec<f64>>, Monitor<'_>) -> (Vec<f64>, FitReport),
) -> Alternation {
    let (mut theta, mut report) = match start {
        Some(t) => hinge(Some(&t), Some(t.clone()), monitor),
        None => hinge(None, None, monitor),
    };
    let mut value_now = value(&theta);
    let mut trace = vec![value_now];
    let mut n_iter = report.n_iter;
    let (mut rounds, mut settled) = (1, false);
    monitor.iteration(n_iter, Quantity::RelativeDecrease, || (value_now, f64::INFINITY));
    for _ in 0..max_rounds {
        if monitor.stopped() {
            break;
        }
        let (next, next_report) = hinge(Some(&theta), Some(theta.clone()), monitor.after(n_iter));
        rounds += 1;
        n_iter += next_report.n_iter;
        let next_value = value(&next);
        if !(next_value < value_now) {
            settled = true;
            break;
        }
        let decrease = value_now - next_value;
        theta = next;
        report = next_report;
        value_now = next_value;
        trace.push(value_now);
        monitor.iteration(n_iter, Quantity::RelativeDecrease, || (value_now, decrease / value_now.abs()));
        if decrease <= tol * value_now.abs() {
            settled = true;
            break;
        }
    }
    report.objective = value_now;
    report.n_iter = n_iter;
    report.objective_trace = trace;
    report.rounds = rounds;
    Alternation { theta, report, settled }
}
