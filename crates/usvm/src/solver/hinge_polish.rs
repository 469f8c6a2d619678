//! Exact solution of the hinge SVM (every `Σ_i = 0`) from an approximate one, by an active-set solve of
//! its optimality conditions — the nonsmooth counterpart of a Newton step, with a certificate.
//!
//! At the optimum of `λ/2‖w‖² + (1/ℓ) Σ c_i max(0, d_i)`, `d_i = 1 - y_i(wᵀx_i + b)`, the examples split into
//! the active set `A` (`d_i > 0`, weight `c_i/ℓ`), the margin set `M` (`d_i = 0`, weight `β_i ∈ [0, c_i/ℓ]`)
//! and the rest (`d_i < 0`, weight 0), and
//!
//! `λw = Σ_A (c_i/ℓ) y_i x_i + Σ_M β_i y_i x_i`, `Σ_A (c_i/ℓ) y_i + Σ_M β_i y_i = 0`, `y_i(wᵀx_i + b) = 1` on `M`.
//!
//! Given the sets, eliminating `w` leaves a linear system in `(β, b)` of size `|M| + 1` with the Gram matrix
//! of `M`. The sets are guessed from a smoothed solution and corrected until every condition holds to
//! round-off; then `(w, b)` is optimal and the minimum-norm subgradient is zero (up to round-off).

use faer::linalg::solvers::Solve;

use crate::data::{Features, axpy, dot, norm2};

/// Where each example stands at the optimum.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Inactive,
    Margin,
    Active,
}

/// Active-set corrections tried before giving up.
const MAX_PASSES: usize = 20;
/// Largest margin set solved (its dense Gram matrix holds |M|² floats; at a generic optimum |M| ≤ n + 1,
/// but the initial band can catch a large share of a big sample, e.g. LSVM-sampling's ℓN draws).
const MAX_MARGIN: usize = 2000;

/// The exact hinge-SVM solution near `theta` (`[w; b]`, or `w` without intercept), with the norm of its
/// KKT residual, or `None` if the active-set iteration does not settle (degenerate margin sets) or the margin
/// set grows beyond `MAX_MARGIN` examples (the caller then keeps smoothing instead). Examples
/// with `|d_i| ≤ band` at `theta` start in the margin set.
pub fn polish(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    fit_intercept: bool,
    theta: &[f64],
    band: f64,
) -> Option<(Vec<f64>, f64)> {
    let (l, n) = (x.n_samples(), x.n_features());
    let upper = |i: usize| weights.map_or(1.0, |c| c[i]) / l as f64;
    let margins = |t: &[f64]| -> Vec<f64> {
        let b = if fit_intercept { t[n] } else { 0.0 };
        (0..l).map(|i| 1.0 - y[i] * (x.row_dot(i, &t[..n]) + b)).collect()
    };
    let mut side: Vec<Side> = margins(theta)
        .iter()
        .map(|&d| {
            if d > band {
                Side::Active
            } else if d < -band {
                Side::Inactive
            } else {
                Side::Margin
            }
        })
        .collect();
    for _ in 0..MAX_PASSES {
        let margin: Vec<usize> = (0..l).filter(|&i| side[i] == Side::Margin).collect();
        let m = margin.len();
        if m > MAX_MARGIN {
            return None;
        }
        // g = Σ_A (c_i/ℓ) y_i x_i and its bias part.
        let mut g = vec![0.0; n];
        let mut g_bias = 0.0;
        for i in (0..l).filter(|&i| side[i] == Side::Active) {
            x.row_axpy(i, upper(i) * y[i], &mut g);
            g_bias += upper(i) * y[i];
        }
        let rows: Vec<Vec<f64>> = margin.iter().map(|&i| x.row_dense(i)).collect();
        // Equations: for i ∈ M, Σ_j y_i y_j x_iᵀx_j β_j /λ + y_i b = 1 - y_i x_iᵀg/λ; and Σ_j y_j β_j = -g_bias.
        let size = m + usize::from(fit_intercept);
        // A ridge of 1e-13 · (largest Gram diagonal) keeps the system regular when margin examples repeat
        // (then only the sum of their β is determined, and w is unaffected to ~1e-13).
        let ridge = 1e-13 * rows.iter().map(|r| dot(r, r) / lambda).fold(0.0, f64::max);
        let a = faer::Mat::<f64>::from_fn(size, size, |r, c| match (r < m, c < m) {
            (true, true) => {
                y[margin[r]] * y[margin[c]] * dot(&rows[r], &rows[c]) / lambda + if r == c { ridge } else { 0.0 }
            }
            (true, false) => y[margin[r]],
            (false, true) => y[margin[c]],
            (false, false) => 0.0,
        });
        let rhs = faer::Mat::<f64>::from_fn(size, 1, |r, _| {
            if r < m { 1.0 - y[margin[r]] * dot(&rows[r], &g) / lambda } else { -g_bias }
        });
        if m == 0 && fit_intercept {
            return None; // no example on the margin: the bias is not pinned down by these conditions
        }
        let solution = if size > 0 { a.full_piv_lu().solve(&rhs) } else { rhs };
        if (0..size).any(|r| !solution[(r, 0)].is_finite()) {
            return None;
        }
        let beta: Vec<f64> = (0..m).map(|r| solution[(r, 0)]).collect();
        let mut w = g;
        for (r, &i) in margin.iter().enumerate() {
            axpy(beta[r] * y[i], &rows[r], &mut w);
        }
        w.iter_mut().for_each(|v| *v /= lambda);
        if fit_intercept {
            w.push(solution[(m, 0)]);
        }
        // Check every condition; move the violators.
        let d = margins(&w);
        let tol = 1e-9 * (1.0 + norm2(&w));
        let mut changed = false;
        for (r, &i) in margin.iter().enumerate() {
            if beta[r] < -1e-12 * upper(i) {
                side[i] = Side::Inactive;
                changed = true;
            } else if beta[r] > upper(i) * (1.0 + 1e-12) {
                side[i] = Side::Active;
                changed = true;
            }
        }
        // An example on the wrong side of the margin joins the margin set.
        for i in 0..l {
            let wrong = match side[i] {
                Side::Active => d[i] < -tol,
                Side::Inactive => d[i] > tol,
                Side::Margin => false,
            };
            if wrong {
                side[i] = Side::Margin;
                changed = true;
            }
        }
        if !changed {
            let residual = kkt_residual(x, y, &w, &side, &margin, &beta, lambda, fit_intercept, &upper);
            return Some((w, residual));
        }
    }
    None
}

/// `‖λw - Σ_A (c_i/ℓ) y_i x_i - Σ_M β_i y_i x_i‖` plus the bias equation's residual.
#[allow(clippy::too_many_arguments)]
fn kkt_residual(
    x: &Features,
    y: &[f64],
    theta: &[f64],
    side: &[Side],
    margin: &[usize],
    beta: &[f64],
    lambda: f64,
    fit_intercept: bool,
    upper: &dyn Fn(usize) -> f64,
) -> f64 {
    let n = x.n_features();
    let mut r: Vec<f64> = theta[..n].iter().map(|v| lambda * v).collect();
    let mut bias = 0.0;
    for i in (0..side.len()).filter(|&i| side[i] == Side::Active) {
        x.row_axpy(i, -upper(i) * y[i], &mut r);
        bias -= upper(i) * y[i];
    }
    for (k, &i) in margin.iter().enumerate() {
        let b = beta[k].clamp(0.0, upper(i));
        x.row_axpy(i, -b * y[i], &mut r);
        bias -= b * y[i];
    }
    if fit_intercept { (dot(&r, &r) + bias * bias).sqrt() } else { norm2(&r) }
}
