//! One-vs-rest, written once for every method: the binary problems of a labelling — one for two classes
//! (the larger label positive), else one per class (that class positive, the others negative) — each
//! solved by the method's binary solver, and the solutions stacked into the `K × p` coefficients and `K`
//! intercepts of one model.

use ndarray::{Array2, ArrayView1};
use rayon::prelude::*;

use crate::error::Result;
use crate::progress::Monitor;

/// One binary problem's solution: its row of coefficients, its intercept and what the method reports.
pub(crate) struct Binary<R> {
    /// The `p` coefficients of this output.
    pub coef: Vec<f64>,
    /// The intercept `b`.
    pub intercept: f64,
    /// The report and anything else the method keeps per problem.
    pub report: R,
}

/// The stacked solutions of every binary problem, in the order of `classes` (one row for two classes).
pub(crate) struct Stacked<R> {
    /// The sorted distinct labels.
    pub classes: Vec<i64>,
    /// `K × p`.
    pub coef: Array2<f64>,
    /// `K` intercepts.
    pub intercept: Vec<f64>,
    /// `K` reports.
    pub reports: Vec<R>,
}

/// The positive class of each binary problem of the sorted distinct labels `classes`.
pub(crate) fn positives(classes: &[i64]) -> Vec<i64> {
    if classes.len() == 2 { vec![classes[1]] } else { classes.to_vec() }
}

/// `y_i = +1` where `label_i == positive`, else `-1`.
pub(crate) fn signs<'a>(labels: impl IntoIterator<Item = &'a i64>, positive: i64) -> Vec<f64> {
    labels.into_iter().map(|&c| if c == positive { 1.0 } else { -1.0 }).collect()
}

/// Solves binary problem `k` of `classes` by `solve(k, positive, monitor)` for every `k` (`monitor` told
/// which problem it is) — in parallel when `parallel` (for solvers that hold no large per-problem memory),
/// else in order, stopping at the first error — and stacks the rows, each of `width` coefficients.
pub(crate) fn one_vs_rest<R: Send>(
    classes: Vec<i64>,
    width: usize,
    parallel: bool,
    monitor: Monitor<'_>,
    solve: impl Fn(usize, i64, Monitor<'_>) -> Result<Binary<R>> + Sync,
) -> Result<Stacked<R>> {
    let targets = positives(&classes);
    let of = targets.len();
    let run = |(k, &p): (usize, &i64)| solve(k, p, monitor.problem(k, of));
    let solved: Vec<Binary<R>> = if parallel {
        targets.par_iter().enumerate().map(run).collect::<Result<_>>()?
    } else {
        targets.iter().enumerate().map(run).collect::<Result<_>>()?
    };
    Ok(stack(classes, width, solved))
}

/// Stacks the solutions of the binary problems of `classes`, in order, into one model's rows.
pub(crate) fn stack<R>(classes: Vec<i64>, width: usize, mut solved: Vec<Binary<R>>) -> Stacked<R> {
    if let [b] = &mut solved[..]
        && b.coef.len() == width
    {
        // One binary problem: its coefficient vector becomes the row as it is (no copy of n values).
        let b = solved.pop().expect("one problem");
        let coef = Array2::from_shape_vec((1, width), b.coef).expect("one row of `width` values");
        return Stacked { classes, coef, intercept: vec![b.intercept], reports: vec![b.report] };
    }
    let mut coef = Array2::zeros((solved.len(), width));
    let (mut intercept, mut reports) = (Vec::with_capacity(solved.len()), Vec::with_capacity(solved.len()));
    for (k, b) in solved.into_iter().enumerate() {
        coef.row_mut(k).assign(&ArrayView1::from(&b.coef[..]));
        intercept.push(b.intercept);
        reports.push(b.report);
    }
    Stacked { classes, coef, intercept, reports }
}
