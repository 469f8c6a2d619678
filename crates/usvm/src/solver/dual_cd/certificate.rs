//! The duality-gap certificate of [`super`]: the primal at the exactly optimal bias (a weighted median of
//! the breakpoints for the hinge, a piecewise-linear root for the squared hinge), the dual at the
//! multipliers made feasible by scaling the larger class, the gradient norms, and the λ-form values used
//! outside the solver.

use rayon::prelude::*;

use super::{DualLoss, Setup};
use crate::data::{Features, dot};

/// Rows per block of the certificate's margins (a block is one task of the thread pool).
const MARGIN_BLOCK: usize = 1024;

/// The factors `(s₊, s₋) ≤ 1` on each class' multipliers that make `Σ_+ α = Σ_- α` (`yᵀα = 0`) by scaling
/// the larger class down, from the classes' sums `Σ_+ α` and `Σ_- α`; `(1, 1)` without an intercept (no
/// equality constraint) or when they are equal.
pub(crate) fn class_scales(sum_pos: f64, sum_neg: f64, fit_intercept: bool) -> (f64, f64) {
    if !fit_intercept || sum_pos == sum_neg {
        (1.0, 1.0)
    } else if sum_pos > sum_neg {
        (sum_neg / sum_pos, 1.0)
    } else {
        (1.0, sum_pos / sum_neg)
    }
}

/// A C-form primal value, dual lower bound, and the bias of the primal point: added to every `f_i = x_iᵀw`
/// (without intercept, the shift of the rows' constant column's part `B w_j`, if any, else 0).
pub(super) struct Certificate {
    pub(super) primal: f64,
    pub(super) dual: f64,
    pub(super) bias: f64,
}

/// Recomputes `w = Σ α_i y_i x_i` (in place) and the margins `f_i = x_iᵀw` (into `margins`; 0 for an example
/// left out), evaluates `P(w, b*)` with the exactly optimal bias `b*` for this `w` (ties broken towards
/// `hint`), and `D` at `α` made feasible for `yᵀα = 0`. Without intercept, a constant column `B` of the
/// rows ([`Setup::constant`]) is a regularised bias: the primal point is the better of `w` and `w` with
/// `w_j` moved to put that bias, `B w_j`, at `hint` (coordinate descent's estimate of it, which `B w_j =
/// B² yᵀα` meets only at the optimum: text `-B 1` at λ = 1e-7 certified a gap of 0.99 for 180 passes at
/// `w_j`).
pub(super) fn certify(
    setup: &Setup<'_>,
    alpha: &[f64],
    w: &mut [f64],
    scratch: &mut Vec<f64>,
    margins: &mut Vec<f64>,
    hint: f64,
) -> Certificate {
    let y = setup.y;
    let dual = feasible_dual(setup, |i| alpha[i], w, scratch);
    // `x_iᵀw` in blocks of rows on the pool's threads: each margin is one row's dot product, so the values
    // do not depend on the thread count.
    margins.clear();
    margins.resize(y.len(), 0.0);
    let w = &*w;
    margins.par_chunks_mut(MARGIN_BLOCK).enumerate().for_each(|(k, block)| {
        for (i, m) in (k * MARGIN_BLOCK..).zip(block) {
            *m = if setup.cost(i) > 0.0 { setup.rows.dot(i, w) } else { 0.0 };
        }
    });
    let bias = if setup.fit_intercept { optimal_bias(setup, |i| margins[i], hint) } else { 0.0 };
    let risk = |bias: f64| -> f64 {
        (0..y.len())
            .filter(|&i| setup.cost(i) > 0.0)
            .map(|i| setup.cost(i) * setup.loss_at(1.0 - y[i] * (margins[i] + bias)))
            .sum()
    };
    let norm2 = dot(w, w);
    let primal = 0.5 * norm2 + risk(bias);
    if let Some((j, b)) = setup.constant.filter(|_| !setup.fit_intercept) {
        let shift = hint - b * w[j];
        let moved = 0.5 * (norm2 - w[j] * w[j] + (hint / b) * (hint / b)) + risk(shift);
        if moved < primal {
            return Certificate { primal: moved, dual, bias: shift };
        }
    }
    Certificate { primal, dual, bias }
}

/// `argmin_b Σ C c_i ξ(1 - y_i(f_i + b))` over the examples with `c_i > 0`; on a flat stretch the point of it
/// nearest to `hint`.
fn optimal_bias(setup: &Setup<'_>, f: impl Fn(usize) -> f64, hint: f64) -> f64 {
    if setup.loss == DualLoss::Hinge && setup.weights.is_none() {
        hinge_order_statistic(setup, f, hint)
    } else {
        best_bias(setup, &Breakpoints::new(setup, f), hint)
    }
}

/// The hinge's optimal bias with equal weights, by selection instead of a sort (a certificate over 24,177
/// documents spent a fifth of its time sorting). With the breakpoints `t_i = y_i - f_i` (`d_i = y_i(t_i - b)`),
/// `P'(b) = C(#{t_i < b} - k)` for `k` positive examples: `P` is smallest on `[t_(k), t_(k+1)]`, the `k`-th
/// and `k+1`-th smallest breakpoints (below `t_(1)` if `k = 0`, above `t_(ℓ)` if `k = ℓ`).
fn hinge_order_statistic(setup: &Setup<'_>, f: impl Fn(usize) -> f64, hint: f64) -> f64 {
    let y = setup.y;
    let mut t: Vec<f64> = (0..y.len()).map(|i| y[i] - f(i)).collect();
    let k = y.iter().filter(|&&v| v > 0.0).count();
    let order = |a: &f64, b: &f64| a.total_cmp(b);
    let smallest = |t: &[f64]| t.iter().copied().min_by(order);
    let (low, high) = if k == 0 {
        (None, smallest(&t))
    } else {
        let (_, &mut kth, above) = t.select_nth_unstable_by(k - 1, order);
        (Some(kth), smallest(above))
    };
    match (low, high) {
        (Some(low), high) => hint.max(low).min(high.unwrap_or(f64::INFINITY)),
        (None, Some(high)) => hint.min(high),
        (None, None) => hint,
    }
}

/// Calls `take(j)` for every column `j` that the rows `rows` may store: all `n` of dense rows, the stored
/// columns of sparse rows, a column once per row storing it. `take` reads and zeroes a scratch entry, so a
/// later visit adds nothing: the support of a sum of rows without a list of their columns.
fn drain_columns(x: &Features, rows: impl Iterator<Item = usize>, mut take: impl FnMut(usize)) {
    match x {
        Features::Dense(_) => (0..x.n_features()).for_each(take),
        Features::Sparse(m) => rows.for_each(|i| m.row(i).0.iter().for_each(|&j| take(j as usize))),
    }
}

/// The C-form gradient norm `‖w - Σ C c_i ξ'(d_i) y_i [x_i; 1]‖` at `w = Σ α_i y_i x_i`, the margins `f_i`
/// of [`certify`] and the bias `b` (`d_i = 1 - y_i(f_i + b)`; without intercept the bias part is left out,
/// and a constant column's coefficient `w_j` is moved by `b/B` as in [`certify`]).
/// As `w - Σ C c_i ξ'(d_i) y_i x_i = Σ κ_i y_i x_i` with `κ_i = α_i - C c_i ξ'(d_i)`, only the rows where the
/// multiplier and the loss' slope disagree are read (near the optimum, the margin set). `scratch` is a
/// zero vector of `n` floats, or empty (then it is allocated), and is left zero.
pub(super) fn gradient_norm(
    setup: &Setup<'_>,
    alpha: &[f64],
    margins: &[f64],
    bias: f64,
    scratch: &mut Vec<f64>,
) -> f64 {
    let (x, y) = (setup.x, setup.y);
    let n = x.n_features();
    scratch.resize(n, 0.0);
    let slope = |i: usize| setup.cost(i) * setup.slope(1.0 - y[i] * (margins[i] + bias));
    let kappa = |i: usize| if setup.cost(i) > 0.0 { alpha[i] - slope(i) } else { 0.0 };
    let mismatched = || (0..y.len()).filter(|&i| kappa(i) != 0.0);
    for i in mismatched() {
        x.row_axpy(i, kappa(i) * y[i], scratch);
    }
    let moved = setup.constant.filter(|_| !setup.fit_intercept).map(|(j, b)| (j, bias / b));
    if let Some((j, step)) = moved {
        scratch[j] += step;
    }
    let mut squares = 0.0;
    let take = |j: usize| {
        squares += scratch[j] * scratch[j];
        scratch[j] = 0.0;
    };
    drain_columns(x, mismatched(), take);
    if let Some((j, _)) = moved {
        // (Not drained without a mismatched row.)
        squares += scratch[j] * scratch[j];
        scratch[j] = 0.0;
    }
    if setup.fit_intercept {
        let bias_part: f64 = (0..y.len()).filter(|&i| setup.cost(i) > 0.0).map(|i| slope(i) * y[i]).sum();
        squares += bias_part * bias_part;
    }
    squares.sqrt()
}

/// The C-form dual `D(α')` at `α' = α` with the larger class' multipliers scaled down so that `yᵀα' = 0`
/// (without intercept `α' = α`); writes `w = Σ α_i y_i x_i` (unscaled) into `w`. `scratch` is a zero vector
/// of `n` floats (or empty, then it is allocated) and is left zero: with `v` the scaled class' part of `w`,
/// `‖w - (1 - t)v‖² = ‖w‖² - 2(1 - t)wᵀv + (1 - t)²‖v‖²` needs `v` only on its support.
pub(super) fn feasible_dual(
    setup: &Setup<'_>,
    alpha: impl Fn(usize) -> f64,
    w: &mut [f64],
    scratch: &mut Vec<f64>,
) -> f64 {
    let (x, y) = (setup.x, setup.y);
    let n = x.n_features();
    // (i, α_i) of the positive multipliers, read from `alpha` (no vector of ℓ).
    let positive = || (0..y.len()).map(|i| (i, alpha(i))).filter(|(_, a)| *a > 0.0);
    let (mut sum_pos, mut sum_neg) = (0.0, 0.0);
    for (i, a) in positive() {
        if y[i] > 0.0 {
            sum_pos += a;
        } else {
            sum_neg += a;
        }
    }
    let (t_pos, t_neg) = class_scales(sum_pos, sum_neg, setup.fit_intercept);
    let (t, class) = if t_pos < 1.0 { (t_pos, 1.0) } else { (t_neg, -1.0) };
    w.fill(0.0);
    let quad = if t < 1.0 {
        // One pass over the rows: the scaled class' part `v` into `scratch`, the rest `u` into `w`; then
        // `‖u + t v‖²` column by column, and `w = u + v`. (Not `‖u‖² + 2t uᵀv + t²‖v‖²`: with raw features
        // `u` and `v` are 10⁴ times larger than `u + t v`, and that expansion cancelled to a dual off by 10⁻⁸.)
        scratch.resize(n, 0.0);
        for (i, a) in positive() {
            setup.rows.axpy(i, a * y[i], if y[i] == class { &mut *scratch } else { &mut *w });
        }
        let mut quad = 0.0;
        for (u, v) in w.iter_mut().zip(scratch.iter_mut()) {
            let feasible = *u + t * *v;
            quad += feasible * feasible;
            *u += *v;
            *v = 0.0;
        }
        quad
    } else {
        for (i, a) in positive() {
            setup.rows.axpy(i, a * y[i], w);
        }
        dot(w, w)
    };
    let mut dual = t_pos * sum_pos + t_neg * sum_neg - 0.5 * quad;
    if setup.loss == DualLoss::SquaredHinge {
        for (i, a) in positive() {
            let t = if y[i] > 0.0 { t_pos } else { t_neg };
            dual -= 0.5 * setup.diag(i) * (t * a) * (t * a);
        }
    }
    dual
}

/// The breakpoints `t_i = y_i - f_i` of the examples with `c_i > 0`, sorted: with per-example weights as
/// `(t_i, i)` pairs; without, one sorted array per class (8 bytes per example instead of 16).
enum Breakpoints {
    Weighted(Vec<(f64, u32)>),
    ByClass { positive: Vec<f64>, negative: Vec<f64> },
}

impl Breakpoints {
    fn new(setup: &Setup<'_>, f: impl Fn(usize) -> f64) -> Self {
        let y = setup.y;
        let sort = |v: &mut Vec<f64>| v.sort_unstable_by(f64::total_cmp);
        match setup.weights {
            Some(_) => {
                let mut points: Vec<(f64, u32)> =
                    (0..y.len()).filter(|&i| setup.cost(i) > 0.0).map(|i| (y[i] - f(i), i as u32)).collect();
                points.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
                Breakpoints::Weighted(points)
            }
            None => {
                let n_positive = y.iter().filter(|&&v| v > 0.0).count();
                let mut positive = Vec::with_capacity(n_positive);
                let mut negative = Vec::with_capacity(y.len() - n_positive);
                for (i, &v) in y.iter().enumerate() {
                    if v > 0.0 { positive.push(v - f(i)) } else { negative.push(v - f(i)) }
                }
                sort(&mut positive);
                sort(&mut negative);
                Breakpoints::ByClass { positive, negative }
            }
        }
    }

    /// `(t_i, C c_i, y_i)` in increasing `t_i`.
    fn iter<'s>(&'s self, setup: &'s Setup<'_>) -> impl Iterator<Item = (f64, f64, f64)> + 's {
        let (weighted, positive, negative): (&[(f64, u32)], &[f64], &[f64]) = match self {
            Breakpoints::Weighted(p) => (p, &[], &[]),
            Breakpoints::ByClass { positive, negative } => (&[], positive, negative),
        };
        let mut weighted = weighted.iter();
        let (mut p, mut q) = (0, 0);
        std::iter::from_fn(move || {
            if let Some(&(t, i)) = weighted.next() {
                return Some((t, setup.cost(i as usize), setup.y[i as usize]));
            }
            // Merge the two sorted classes (ties: the positive first).
            match (positive.get(p), negative.get(q)) {
                (Some(&a), Some(&b)) if a <= b => {
                    p += 1;
                    Some((a, setup.big_c, 1.0))
                }
                (_, Some(&b)) => {
                    q += 1;
                    Some((b, setup.big_c, -1.0))
                }
                (Some(&a), None) => {
                    p += 1;
                    Some((a, setup.big_c, 1.0))
                }
                (None, None) => None,
            }
        })
    }
}

/// `argmin_b Σ C c_i ξ(y_i(t_i - b))` over the sorted [`Breakpoints`] `t_i` (so that `d_i = y_i(t_i - b)`);
/// on a flat stretch the point of it nearest to `hint`.
fn best_bias(setup: &Setup<'_>, points: &Breakpoints, hint: f64) -> f64 {
    let mut it = points.iter(setup).peekable();
    let Some(&(first, _, _)) = it.peek() else { return hint };
    match setup.loss {
        DualLoss::Hinge => {
            // P'(b) = -Σ_{y=+1} u_i + Σ_{t_i < b} u_i: a weighted median.
            let (mut target, mut scale) = (0.0, 0.0);
            for (_, u, yi) in points.iter(setup) {
                scale += u;
                if yi > 0.0 {
                    target += u;
                }
            }
            if target <= 1e-12 * scale {
                return hint.min(first);
            }
            let (mut cumulative, mut last) = (0.0, first);
            while let Some((t, u, _)) = it.next() {
                cumulative += u;
                if (cumulative - target).abs() <= 1e-12 * scale {
                    // P is flat on [t_k, t_{k+1}] (no panic on NaN).
                    return hint.max(t).min(it.peek().map_or(f64::INFINITY, |p| p.0));
                }
                if cumulative > target {
                    return t;
                }
                last = t;
            }
            hint.max(last)
        }
        DualLoss::SquaredHinge => {
            // P'(b)/2 = Σ_active u_i (b - t_i), active: y = +1 with b < t_i, y = -1 with b > t_i.
            let (mut a, mut s) = (0.0, 0.0);
            for (t, u, _) in points.iter(setup).filter(|p| p.2 > 0.0) {
                a += u;
                s += u * t;
            }
            let mut lo = f64::NEG_INFINITY;
            loop {
                let next = it.next();
                let hi = next.map_or(f64::INFINITY, |p| p.0);
                if a > 0.0 {
                    let root = s / a;
                    if root <= hi {
                        return root.max(lo);
                    }
                } else if s == 0.0 {
                    return hint.max(lo).min(hi);
                }
                let Some((t, u, yi)) = next else { return hint };
                let sign = if yi > 0.0 { -1.0 } else { 1.0 };
                a += sign * u;
                s += sign * u * t;
                if a.abs() <= 1e-14 * u {
                    a = 0.0;
                    s = 0.0;
                }
                lo = hi;
            }
        }
    }
}

/// `J(θ) = λ/2‖w‖² + (1/ℓ) Σ c_i ξ(d_i)` (`= λ P`).
pub(super) fn primal_value(setup: &Setup<'_>, lambda: f64, theta: &[f64]) -> f64 {
    let (x, y) = (setup.x, setup.y);
    let n = x.n_features();
    let b = if setup.fit_intercept { theta[n] } else { 0.0 };
    let w = &theta[..n];
    let mut risk = 0.0;
    for i in (0..y.len()).filter(|&i| setup.cost(i) > 0.0) {
        let d = (1.0 - y[i] * (x.row_dot(i, w) + b)).max(0.0);
        risk += setup.cost(i) * if setup.loss == DualLoss::Hinge { d } else { d * d };
    }
    lambda * (0.5 * dot(w, w) + risk)
}

/// `J(θ) = λ/2‖w‖² + (1/ℓ) Σ c_i ξ(1 - y_i(x_iᵀw + b))` at `θ = [w; b]` (`w` without intercept), `ξ` per
/// `loss`: the primal whose lower bound [`dual_value`] is.
pub fn objective_value(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    loss: DualLoss,
    fit_intercept: bool,
    theta: &[f64],
) -> f64 {
    let setup = Setup::new(x, y, weights, lambda, loss, fit_intercept);
    primal_value(&setup, lambda, theta)
}

/// The λ-form dual `Σ β'_i - ‖Σ β'_i y_i x_i‖²/(2λ) [- Σ ℓ β'_i²/(4 c_i) for L2]` at any multipliers
/// `β_i ≥ 0` (`β_i ≤ c_i/ℓ` for L1), made feasible for `yᵀβ = 0` (with an intercept) by scaling down the
/// larger class: a lower bound on `min J` whatever `β` is.
pub fn dual_value(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    loss: DualLoss,
    fit_intercept: bool,
    beta: &[f64],
) -> f64 {
    let setup = Setup::new(x, y, weights, lambda, loss, fit_intercept);
    let alpha = |i: usize| if setup.cost(i) > 0.0 { beta[i] / lambda } else { 0.0 };
    lambda * feasible_dual(&setup, alpha, &mut vec![0.0; x.n_features()], &mut Vec::new())
}

/// The norm of the hinge sub-gradient `λw - (1/ℓ) Σ_{d_i > 0} c_i y_i x_i` (and its bias part
/// `-(1/ℓ) Σ_{d_i > 0} c_i y_i` with an intercept) at `θ`, in one pass over the rows; at `θ = 0` it is
/// `‖∇J(0)‖`.
pub fn hinge_subgradient_norm(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    fit_intercept: bool,
    theta: &[f64],
) -> f64 {
    let (l, n) = (y.len(), x.n_features());
    let (w, b) = (&theta[..n], if fit_intercept { theta[n] } else { 0.0 });
    let mut g: Vec<f64> = w.iter().map(|v| lambda * v).collect();
    let mut g_bias = 0.0;
    let zero = w.iter().all(|&v| v == 0.0);
    for i in 0..l {
        let c = weights.map_or(1.0, |c| c[i]);
        let f = if zero { 0.0 } else { x.row_dot(i, w) };
        if c > 0.0 && 1.0 - y[i] * (f + b) > 0.0 {
            x.row_axpy(i, -c * y[i] / l as f64, &mut g);
            g_bias -= c * y[i] / l as f64;
        }
    }
    (dot(&g, &g) + if fit_intercept { g_bias * g_bias } else { 0.0 }).sqrt()
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;
    use crate::features::RowProducts;

    fn setup<'a>(x: &'a Features, y: &'a [f64], cost: &'a [f64], loss: DualLoss) -> Setup<'a> {
        Setup {
            x,
            rows: RowProducts::new(x),
            y,
            weights: Some(cost),
            big_c: 1.0,
            loss,
            fit_intercept: true,
            constant: None,
        }
    }

    /// Brute force: the best of a fine grid plus every breakpoint.
    fn brute(setup: &Setup<'_>, f: &[f64]) -> f64 {
        let value = |b: f64| -> f64 {
            (0..f.len())
                .map(|i| {
                    let d = (1.0 - setup.y[i] * (f[i] + b)).max(0.0);
                    setup.cost(i) * if setup.loss == DualLoss::Hinge { d } else { d * d }
                })
                .sum()
        };
        let mut candidates: Vec<f64> = (0..f.len()).map(|i| setup.y[i] - f[i]).collect();
        candidates.extend((0..4001).map(|k| -4.0 + k as f64 * 0.002));
        candidates.into_iter().map(value).fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn best_bias_minimises_the_one_dimensional_risk() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for loss in [DualLoss::Hinge, DualLoss::SquaredHinge] {
            for trial in 0..50 {
                let l = 1 + trial % 9;
                let y: Vec<f64> = (0..l).map(|i| if (i + trial) % 3 == 0 { 1.0 } else { -1.0 }).collect();
                let f: Vec<f64> = (0..l).map(|_| rng.random_range(-2.0..2.0)).collect();
                let cost: Vec<f64> =
                    (0..l).map(|i| if i % 4 == 3 { 0.0 } else { rng.random_range(0.1..1.0) }).collect();
                let x = Features::dense(ndarray::Array2::zeros((l, 1)));
                // Weighted, and unweighted (then the breakpoints are kept by class).
                let s = setup(&x, &y, &cost, loss);
                let unweighted = Setup { weights: None, ..setup(&x, &y, &cost, loss) };
                for s in [s, unweighted] {
                    let b = optimal_bias(&s, |i| f[i], 0.3);
                    let value: f64 = (0..l)
                        .map(|i| {
                            let d = (1.0 - y[i] * (f[i] + b)).max(0.0);
                            s.cost(i) * if loss == DualLoss::Hinge { d } else { d * d }
                        })
                        .sum();
                    let best = brute(&s, &f);
                    assert!(
                        value <= best + 1e-12 * (1.0 + best.abs()),
                        "{loss:?} trial {trial}: {value} > {best} at b = {b}"
                    );
                }
            }
        }
    }
}
