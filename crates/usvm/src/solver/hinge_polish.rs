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
//! round-off; then `(w, b)` is optimal and the minimum-norm subgradient is zero (up to round-off). Solved
//! by conjugate gradients, the final sets' margins are refined once against the `w` actually formed
//! ([`refine_margins`]).

use std::collections::BinaryHeap;

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus};

use ndarray::{Array2, s};

use crate::data::{Features, dot, norm2};
use crate::progress::{Monitor, Quantity};
use crate::solver::dual_cd::{DualLoss, dual_value, hinge_subgradient_norm, objective_value, relative_gap};
use crate::solver::hinge_qp::{Accept, QpSolution, WorkingQp, passes_over};

/// Where an example stands at the optimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `d_i < 0`: weight 0.
    Inactive,
    /// `d_i = 0`: weight `β_i ∈ [0, c_i/ℓ]`.
    Margin,
    /// `d_i > 0`: weight `c_i/ℓ`.
    Active,
}

/// An exact solution of the optimality conditions.
#[derive(Debug, Clone, PartialEq)]
pub struct Polished {
    /// `[w; b]`, or `w` without intercept.
    pub theta: Vec<f64>,
    /// The norm of the KKT residual (see `kkt_residual`).
    pub residual: f64,
    /// The multipliers `β_i` (`c_i/ℓ` on the active set, the solved weights clipped to `[0, c_i/ℓ]` on the
    /// margin set, 0 elsewhere): a dual point for a duality-gap certificate.
    pub beta: Vec<f64>,
    /// The interior-point iterations of the working-set QPs that found the margin set
    /// ([`reduced_solve`]; 0 for an active-set solve alone).
    pub qp_iterations: usize,
}

/// Active-set corrections tried before giving up.
const MAX_PASSES: usize = 20;
/// Active-set corrections tried in the damped variant (one exchange at a time needs more).
const DAMPED_PASSES: usize = 12;
/// Largest margin set solved directly for dense rows (its dense Gram matrix holds |M|² floats; at a generic
/// optimum |M| ≤ n + 1, but the initial band can catch a large share of a big sample, e.g. LSVM-sampling's
/// ℓN draws); above it, up to `n + 1` rows by conjugate gradients ([`solved_iteratively`]).
pub const MAX_MARGIN: usize = 2000;
/// Above this many margin rows (sparse, or dense and at most `n + 1`) the system is solved by conjugate
/// gradients on products with the rows (O(stored entries) each) instead of a dense factorisation (O(|M|³)):
/// wide data (n ≫ ℓ) puts most examples on the margin at small λ, with a well-conditioned Gram matrix of
/// nearly orthogonal rows (dense 2,600 × 4,000 Gaussian rows at λ = 10⁻³: 1.4 s, 17 s factorised).
const DIRECT_MAX: usize = 500;
/// Steps of iterative refinement of a directly solved margin system at most (see
/// `MarginSystem::solve_directly`; each costs one pass over the margin rows and two triangular solves).
const REFINEMENTS: usize = 30;
/// Margin systems with at most this many unknowns `n + 1 + |M|` are solved in their primal form
/// (`MarginSystem::solve_primal`), whose entries are the features themselves, not their Gram matrix.
const PRIMAL_MAX: usize = 400;
/// Margin systems of up to this many unknowns `n + 1 + |M|` are solved again in their primal form when the
/// Gram route leaves a margin off by more than `10⁻¹²` (see [`polish_sides`]).
const PRIMAL_FALLBACK_MAX: usize = 2000;
/// The working-set QP takes the interior-point method (normal equations the size of `[w; b]`, `p³/3` flops
/// a factorisation) whenever `[w; b]` has at most this many coordinates or the working set as many examples;
/// Clarabel otherwise.
const DENSE_NORMAL_MAX: usize = 2000;
/// Conjugate-gradient iterations allowed for one margin system.
const MAX_CG: usize = 2000;
/// ... and they stop when the residual has not halved in this many.
const CG_STALL: usize = 200;
/// Conjugate-gradient solves of a margin system at most: the first, then refinements on its residual.
const CG_REFINEMENTS: usize = 3;

/// Conjugate-gradient iterations a large sparse margin system takes (text at λ = 10⁻⁵…10⁻⁶, 2,500 margin
/// rows: 400–700 from the origin, fewer from the last pass' multipliers), for [`margin_solve_visits`].
const TYPICAL_CG: f64 = 500.0;

/// The cost of [`polish_sides`] on `m` margin examples, in row visits of a first-order method (`2 r` flops
/// each for `r` stored entries per row), over a few (4) active-set passes: the margin Gram matrix
/// (`m² r` flops) and its factorisation (`m³/3`), or, where [`solved_iteratively`], conjugate gradients
/// (two products with the margin rows, `m` visits, per iteration). `None` for a dense margin set larger
/// than [`MAX_MARGIN`] and than `n + 1`. (Measured on MNIST, 492 free of 5,000: 0.09 s, about 2·10⁵ visits
/// by this count and 10⁶ by the clock.)
pub fn margin_solve_visits(x: &Features, m: usize) -> Option<f64> {
    let r = entries_per_row(x);
    let mf = m as f64;
    match x {
        Features::Dense(_) if m > MAX_MARGIN && m > x.n_features() + 1 => None,
        _ if solved_iteratively(x, m) => Some(4.0 * TYPICAL_CG * mf),
        _ => Some(4.0 * (mf * mf * r + mf.powi(3) / 3.0) / (2.0 * r)),
    }
}

/// The mean number of stored entries of a row (at least 1): a first-order method's row visit costs `2 r`
/// flops.
fn entries_per_row(x: &Features) -> f64 {
    (x.stored_entries() as f64 / x.n_samples().max(1) as f64).max(1.0)
}

/// Interior-point iterations a working-set QP typically takes, for [`reduced_solve_visits`].
const TYPICAL_IPM: f64 = 25.0;

/// The cost of [`reduced_solve`] on a working set of `k` examples, in row visits of a first-order method
/// (`2 r` flops each for `r` stored entries per row): [`TYPICAL_IPM`] interior-point iterations, each forming
/// the normal matrix of the working rows (`k r²` flops) and factorising it (`p³/3` for its
/// `p = min(n, k r) + 1` coordinates). Dense 50,000 × 100 with 404 working rows: 11 passes by this count,
/// about ten epochs by the clock. MNIST's 5,000 images (151 stored pixels a row) with 2,000: 3,400 passes by
/// this count and 160 by the clock, where dual CD at λ = 1e-2 needed 13 more passes.
pub fn reduced_solve_visits(x: &Features, k: usize) -> f64 {
    let r = entries_per_row(x);
    let kf = k as f64;
    let p = (x.n_features() as f64).min(kf * r) + 1.0;
    TYPICAL_IPM * (kf * r * r + p.powi(3) / 3.0) / (2.0 * r)
}

/// Whether a margin system of `m` rows is solved by conjugate gradients: above [`DIRECT_MAX`] rows, dense
/// ones only up to `n + 1` (wide data, whose rows are independent: 3,000 × 5,000 Gaussian rows at
/// λ ≤ 10⁻³ put 2,342 on the margin, more than [`MAX_MARGIN`] allows factorised). Up to `MAX_MARGIN`
/// rows, the dense factorisation is the fallback if they stall.
fn solved_iteratively(x: &Features, m: usize) -> bool {
    match x {
        Features::Sparse(_) => m > DIRECT_MAX,
        Features::Dense(_) => m > DIRECT_MAX && m <= x.n_features() + 1,
    }
}

/// The largest margin set worth a dense solve after a first-order method: its system costs `|M|³/3`
/// flops, kept within a few hundred passes over the data (`nnz` flops each), and at most [`MAX_MARGIN`].
pub fn size_limit(x: &Features) -> usize {
    let nnz = match x {
        Features::Dense(a) => a.len(),
        Features::Sparse(m) => m.values.len(),
    };
    ((300.0 * nnz as f64).cbrt() as usize).clamp(200, MAX_MARGIN)
}

/// The exact hinge-SVM solution near `theta` (`[w; b]`, or `w` without intercept), or `None` if the
/// active-set iteration does not settle (degenerate margin sets) or the margin set grows beyond
/// [`MAX_MARGIN`] examples (the caller then keeps smoothing instead). Examples with `|d_i| ≤ band` at
/// `theta` start in the margin set.
pub fn polish(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    fit_intercept: bool,
    theta: &[f64],
    band: f64,
) -> Option<Polished> {
    polish_sides(x, y, weights, lambda, fit_intercept, sides_at(x, y, fit_intercept, theta, band), false)
}

/// Each example's side at `theta` (`[w; b]`, or `w` without intercept): `|d_i| ≤ band` on the margin.
fn sides_at(x: &Features, y: &[f64], fit_intercept: bool, theta: &[f64], band: f64) -> Vec<Side> {
    let n = x.n_features();
    let b = if fit_intercept { theta[n] } else { 0.0 };
    (0..x.n_samples()).map(|i| side_of(1.0 - y[i] * (x.row_dot(i, &theta[..n]) + b), band)).collect()
}

/// The side of an example with `d_i = d`: `|d| ≤ band` on the margin.
fn side_of(d: f64, band: f64) -> Side {
    if d > band {
        Side::Active
    } else if d < -band {
        Side::Inactive
    } else {
        Side::Margin
    }
}

/// [`polish`] from a guess of every example's side (e.g. from dual multipliers: free ones on the margin).
pub fn polish_sides(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    fit_intercept: bool,
    mut side: Vec<Side>,
    damped: bool,
) -> Option<Polished> {
    let max_passes = if damped { DAMPED_PASSES } else { MAX_PASSES };
    let (l, n) = (x.n_samples(), x.n_features());
    let upper = |i: usize| weights.map_or(1.0, |c| c[i]) / l as f64;
    // d_i = 1 - y_i(x_iᵀw + b), computed when needed (no vector of ℓ margins).
    let margin_of = |t: &[f64], i: usize| 1.0 - y[i] * (x.row_dot(i, &t[..n]) + if fit_intercept { t[n] } else { 0.0 });
    let col_max = x.column_max_abs();
    // Damped: examples that may join the margin set in a pass, per example that left it (at least one);
    // doubled after each pass in which none left (the last ones to join stayed: the sides are settling).
    let mut growth = 1;
    // The last pass' margin multipliers by example, the start of the next iterative solve.
    let mut previous = Vec::new();
    for _ in 0..max_passes {
        let margin: Vec<usize> = (0..l).filter(|&i| side[i] == Side::Margin).collect();
        let m = margin.len();
        // Dense rows: more margin equations than unknowns are generically inconsistent (the sides are not
        // identified yet), unless rows repeat; far more is a guess not worth its factorisation.
        if matches!(x, Features::Dense(_)) && (m > 4 * (n + 1) || (m > MAX_MARGIN && m > n + 1)) {
            return None;
        }
        if m == 0 && fit_intercept {
            return None; // no example on the margin: the bias is not pinned down by these conditions
        }
        // g = Σ_A (c_i/ℓ) y_i x_i and its bias part.
        let mut g = vec![0.0; n];
        let mut g_bias = 0.0;
        for i in (0..l).filter(|&i| side[i] == Side::Active) {
            x.row_axpy(i, upper(i) * y[i], &mut g);
            g_bias += upper(i) * y[i];
        }
        let system = MarginSystem { x, y, margin: &margin, lambda, fit_intercept };
        let from_multipliers = |(beta, bias): (Vec<f64>, f64)| {
            // w = (g + Σ_M β_i y_i x_i)/λ.
            let mut w = g.clone();
            for (r, &i) in margin.iter().enumerate() {
                x.row_axpy(i, beta[r] * y[i], &mut w);
            }
            w.iter_mut().for_each(|v| *v /= lambda);
            (beta, bias, w)
        };
        let (mut beta, bias, mut w) = match x {
            // (Conjugate gradients stall on an ill-conditioned Gram matrix, e.g. images stored sparse at a
            // small λ, short of round-off: a margin set small enough for the dense factorisation takes it
            // unless they reach 1e-13, as their margins' error is the duality gap's.)
            _ if solved_iteratively(x, m) => {
                let direct = m <= MAX_MARGIN;
                let start = (!previous.is_empty()).then_some(previous.as_slice());
                match system.solve_iteratively(&g, g_bias, start, if direct { 1e-13 } else { 1e-10 }) {
                    Some(solved) => from_multipliers(solved),
                    None if direct => from_multipliers(system.solve_directly(&g, g_bias)?),
                    None => return None,
                }
            }
            // (More margin rows than unknowns: repeated rows, whose singular system the Gram route's ridge
            // handles.)
            _ if m <= n + 1 && n + 1 + m <= PRIMAL_MAX => match system.solve_primal(&g, g_bias, &col_max) {
                Some(solved) => solved,
                None => from_multipliers(system.solve_directly(&g, g_bias)?),
            },
            _ => from_multipliers(system.solve_directly(&g, g_bias)?),
        };
        // The Gram route's margins hold to `cond(X_M X_Mᵀ/λ)·ε` only: at a tiny λ on nearly dependent rows
        // (images at λ = 1e-7: 10⁻⁹, a relative duality gap of 10⁻¹⁰) the primal form, whose condition is
        // that of the rows themselves, is worth its larger factorisation.
        if fit_intercept {
            w.push(bias);
        }
        if m <= n + 1 && n + 1 + m > PRIMAL_MAX && n + 1 + m <= PRIMAL_FALLBACK_MAX {
            let worst = |t: &[f64]| margin.iter().map(|&i| margin_of(t, i).abs()).fold(0.0, f64::max);
            let off = worst(&w);
            if off > 1e-12
                && let Some((beta_p, bias_p, mut w_p)) = system.solve_primal(&g, g_bias, &col_max)
            {
                if fit_intercept {
                    w_p.push(bias_p);
                }
                if worst(&w_p) < off {
                    (beta, w) = (beta_p, w_p);
                }
            }
        }
        // Check every condition; move the violators. `d_i` is in margin units, so its tolerance is too: 1e-9,
        // plus a multiple of the round-off of `x_iᵀw` (at most `Σ_j max_i |x_ij| |w_j|`), never of `‖w‖`
        // alone, which grows with ill-scaled columns (raw WDBC: 10³, and examples 10⁻⁶ inside the margin
        // taken as on it left a duality gap of 10⁻⁸).
        let round_off: f64 =
            col_max.iter().zip(&w).map(|(s, v)| s * v.abs()).sum::<f64>() + w.get(n).map_or(0.0, |b| b.abs());
        let tol = 1e-9 + 1e-13 * round_off;
        let mut changed = false;
        let mut removed = 0;
        for (r, &i) in margin.iter().enumerate() {
            if beta[r] < -1e-12 * upper(i) {
                side[i] = Side::Inactive;
                removed += 1;
            } else if beta[r] > upper(i) * (1.0 + 1e-12) {
                side[i] = Side::Active;
                removed += 1;
            }
        }
        changed |= removed > 0;
        // Examples on the wrong side of the margin join the margin set (damped: the most violated ones,
        // as many as left it, at least one).
        let mut wrong: Vec<(f64, usize)> = (0..l)
            .filter(|&i| upper(i) > 0.0)
            .filter_map(|i| match (side[i], margin_of(&w, i)) {
                (Side::Active, d) if d < -tol => Some((-d, i)),
                (Side::Inactive, d) if d > tol => Some((d, i)),
                _ => None,
            })
            .collect();
        // Damped exchanges fix a few misplaced examples; a quarter of the margin set misplaced means the
        // sides are not identified yet, and the passes left would be spent in vain.
        if damped && removed + wrong.len() > m / 4 + 10 {
            return None;
        }
        growth = if removed == 0 { 2 * growth } else { 1 };
        if damped && wrong.len() > growth * removed.max(1) {
            wrong.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            wrong.truncate(growth * removed.max(1));
        }
        if solved_iteratively(x, m) {
            previous.resize(l, 0.0);
            previous.fill(0.0);
            margin.iter().zip(&beta).for_each(|(&i, &b)| previous[i] = b);
        }
        for &(_, i) in &wrong {
            side[i] = Side::Margin;
            changed = true;
        }
        if !changed {
            if solved_iteratively(x, m) {
                refine_margins(&system, &mut w, &mut beta);
            }
            let residual = kkt_residual(x, y, &w, &side, &margin, &beta, lambda, fit_intercept, &upper);
            let mut multipliers: Vec<f64> =
                (0..l).map(|i| if side[i] == Side::Active { upper(i) } else { 0.0 }).collect();
            for (r, &i) in margin.iter().enumerate() {
                multipliers[i] = beta[r].clamp(0.0, upper(i));
            }
            return Some(Polished { theta: w, residual, beta: multipliers, qp_iterations: 0 });
        }
    }
    None
}

/// The margin set's equations `d_i = 0` refined against the `[w; b]` formed from the solve: `w = (g + Σ_M
/// β_i y_i x_i)/λ` cancels large sums (at a small λ the bounded examples' `g/λ` is far larger than `w`), so
/// its margins hold only to `ε‖g‖/λ`, however small the system's own residual (text `-B 1` at λ = 1e-7:
/// 4·10⁻¹⁰, a duality gap of 2.8e-10). The same system solved for those margins `d` (`K δ + y δ_b = d`,
/// `yᵀδ = 0`) corrects `β`, `w` and `b` by a small step, whose round-off is that of `d`; kept where it
/// lowers the largest `|d_i|`.
fn refine_margins(system: &MarginSystem<'_>, theta: &mut Vec<f64>, beta: &mut [f64]) {
    let MarginSystem { x, y, margin, lambda, fit_intercept } = *system;
    let n = x.n_features();
    let offsets = |t: &[f64]| -> Vec<f64> {
        let b = if fit_intercept { t[n] } else { 0.0 };
        margin.iter().map(|&i| 1.0 - y[i] * (x.row_dot(i, &t[..n]) + b)).collect()
    };
    let worst = |d: &[f64]| d.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
    let d = offsets(theta);
    let before = worst(&d);
    if before == 0.0 {
        return;
    }
    // (A relative residual of 1e-6 leaves `d` a millionth of itself.)
    let Some((delta, delta_b)) = system.solve_rhs_iteratively(d, 0.0, None, 1e-4, 1e-6) else {
        return;
    };
    let mut refined = theta.clone();
    for (r, &i) in margin.iter().enumerate() {
        x.row_axpy(i, delta[r] * y[i] / lambda, &mut refined[..n]);
    }
    if fit_intercept {
        refined[n] += delta_b;
    }
    if worst(&offsets(&refined)) < before {
        *theta = refined;
        beta.iter_mut().zip(&delta).for_each(|(b, d)| *b += d);
    }
}

/// `|d|` ordered by `f64::total_cmp`, for the working set's heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedAbs(f64);

impl Eq for OrderedAbs {}

impl PartialOrd for OrderedAbs {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedAbs {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The equations of one active-set pass in `(β, b)`: for `i ∈ M`,
/// `Σ_j y_i y_j x_iᵀx_j β_j /λ + y_i b = 1 - y_i x_iᵀg/λ`, and (with an intercept) `Σ_j y_j β_j = -g_bias`, where
/// `g = Σ_A (c_i/ℓ) y_i x_i`. A ridge of `1e-13 · max_i ‖x_i‖²/λ` keeps the system regular when margin
/// examples repeat (then only the sum of their β is determined, and w is unaffected to ~1e-13); the direct
/// solve then refines its solution against the system without the ridge, so that the margin equations
/// hold to round-off where that system is regular.
struct MarginSystem<'a> {
    x: &'a Features<'a>,
    y: &'a [f64],
    margin: &'a [usize],
    lambda: f64,
    fit_intercept: bool,
}

impl MarginSystem<'_> {
    /// `1 - y_i x_iᵀg/λ` for the margin rows.
    fn rhs(&self, g: &[f64]) -> Vec<f64> {
        self.margin.iter().map(|&i| 1.0 - self.y[i] * self.x.row_dot(i, g) / self.lambda).collect()
    }

    /// By a fully pivoted LU of the optimality conditions in their primal form, in `(w̃, b, β)` with the
    /// columns scaled to `x̃_ij = x_ij/s_j` (`s_j = max_i |x_ij|`, `w̃_j = s_j w_j`):
    ///
    /// `(λ/s_j²) w̃_j - Σ_M β_i y_i x̃_ij = g_j/s_j`, `x̃_iᵀw̃ + b = y_i` on `M`, `Σ_M β_i y_i = -g_bias`.
    ///
    /// Its entries are the scaled features, not their Gram matrix, whose entries sum columns of every
    /// scale: with raw features (WDBC: columns from 10⁻³ to 4·10³) the small columns' part of `x_rᵀx_c` is
    /// near its round-off, and the Gram route's margins held only to 10⁻⁸.
    ///
    /// Returns `(β, b, w)`: `w` from the solve itself, not `(g + Σ_M β_i y_i x_i)/λ`, which at small `λ` and
    /// large columns cancels to a relative error of `ε‖x‖/(λ|w|)`.
    fn solve_primal(&self, g: &[f64], g_bias: f64, col_max: &[f64]) -> Option<(Vec<f64>, f64, Vec<f64>)> {
        let (x, y, margin, lambda) = (self.x, self.y, self.margin, self.lambda);
        let (n, m) = (x.n_features(), margin.len());
        let s: Vec<f64> = col_max.iter().map(|&v| if v > 0.0 { v } else { 1.0 }).collect();
        // The margin rows, scaled, row-major.
        let mut rows = vec![0.0; m * n];
        for (r, &i) in margin.iter().enumerate() {
            let row = &mut rows[r * n..(r + 1) * n];
            x.row_axpy(i, 1.0, row);
            row.iter_mut().zip(&s).for_each(|(v, sj)| *v /= sj);
        }
        let nb = usize::from(self.fit_intercept);
        let size = n + nb + m;
        // Unknowns: w̃ (0..n), b (n, with an intercept), β (n + nb..); equations in the same blocks.
        let entry = |r: usize, c: usize| -> f64 {
            let (margin_row, margin_col) = (r.checked_sub(n + nb), c.checked_sub(n + nb));
            if r < n {
                match margin_col {
                    Some(k) => -y[margin[k]] * rows[k * n + r],
                    None if c == r => lambda / (s[r] * s[r]),
                    None => 0.0,
                }
            } else if let Some(k) = margin_row {
                if c < n {
                    rows[k * n + c]
                } else if c < n + nb {
                    1.0
                } else {
                    0.0
                }
            } else {
                margin_col.map_or(0.0, |k| y[margin[k]]) // the bias row: Σ_M β_i y_i
            }
        };
        let mut rhs: Vec<f64> = (0..n).map(|j| g[j] / s[j]).collect();
        if self.fit_intercept {
            rhs.push(-g_bias);
        }
        rhs.extend(margin.iter().map(|&i| y[i]));
        let residual = |solution: &[f64]| -> Vec<f64> {
            (0..size).map(|k| rhs[k] - (0..size).map(|c| entry(k, c) * solution[c]).sum::<f64>()).collect()
        };
        let lu = crate::linalg::Lu::full(size, entry);
        let mut solution = lu.solve(|r| rhs[r]);
        // Iterative refinement, kept while it lowers the residual.
        let mut r = residual(&solution);
        for _ in 0..REFINEMENTS {
            let step = lu.solve(|k| r[k]);
            let refined: Vec<f64> = solution.iter().zip(&step).map(|(v, d)| v + d).collect();
            let r_refined = residual(&refined);
            if !(norm2(&r_refined) < norm2(&r)) {
                break;
            }
            (solution, r) = (refined, r_refined);
        }
        // A singular system (repeated margin rows) leaves a residual: the Gram route with its ridge then.
        if solution.iter().any(|v| !v.is_finite()) || !(norm2(&r) <= 1e-10 * (1.0 + norm2(&rhs))) {
            return None;
        }
        let bias = if self.fit_intercept { solution[n] } else { 0.0 };
        let beta = solution.split_off(n + nb);
        solution.truncate(n);
        solution.iter_mut().zip(&s).for_each(|(w, sj)| *w /= sj);
        Some((beta, bias, solution))
    }

    /// By a fully pivoted LU of the bordered Gram matrix (built from the rows' stored entries only).
    fn solve_directly(&self, g: &[f64], g_bias: f64) -> Option<(Vec<f64>, f64)> {
        let (y, margin, lambda) = (self.y, self.margin, self.lambda);
        let m = margin.len();
        let gram = self.x.gram(margin);
        let size = m + usize::from(self.fit_intercept);
        let ridge = 1e-13 * (0..m).map(|r| gram[r * m + r] / lambda).fold(0.0, f64::max);
        // The bordered system without the ridge, and with it.
        let plain = |r: usize, c: usize| match (r < m, c < m) {
            (true, true) => y[margin[r]] * y[margin[c]] * gram[r * m + c] / lambda,
            (true, false) => y[margin[r]],
            (false, true) => y[margin[c]],
            (false, false) => 0.0,
        };
        let entry = |r: usize, c: usize| plain(r, c) + if r == c && r < m { ridge } else { 0.0 };
        // Equilibrated: margin row and column r scaled by `1/√(A_rr)`, the bias' by the root mean square of
        // those, so that the border `yᵀβ = -g_bias` keeps its weight when the rows are large (raw, unscaled
        // features: Gram entries of 10¹¹ beside the border's ±1 left that equation wrong by 10⁻⁸).
        let mut scale: Vec<f64> =
            (0..m).map(|r| if plain(r, r) > 0.0 { 1.0 / plain(r, r).sqrt() } else { 1.0 }).collect();
        if self.fit_intercept {
            scale.push(1.0 / (scale.iter().map(|s| s * s).sum::<f64>() / m.max(1) as f64).sqrt());
        }
        let lu = crate::linalg::Lu::full(size, |r, c| scale[r] * scale[c] * entry(r, c));
        let solve = |b: &dyn Fn(usize) -> f64| -> Vec<f64> {
            lu.solve(|r| scale[r] * b(r)).iter().zip(&scale).map(|(z, s)| z * s).collect()
        };
        let mut rhs = self.rhs(g);
        rhs.push(-g_bias);
        let mut solution = solve(&|r| rhs[r]);
        if solution.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // The ridge moves each margin equation by `ridge·β_r`: on a nearly separable problem (tiny J) that is
        // a relative duality gap of 1e-10. Iterative refinement against the system without the ridge removes
        // it (kept only while it lowers the equilibrated residual: with repeated margin rows that system is
        // singular).
        // The residual of the margin rows is `d_r` at `w = (g + Σ_c β_c y_c x_c)/λ`, computed through `w`
        // column by column rather than from the Gram matrix, whose entries sum columns of every scale: with
        // raw features the small columns' part of `x_rᵀx_c` is below its round-off, and so was the residual.
        let (x, n) = (self.x, self.x.n_features());
        let residual = |s: &[f64]| -> Vec<f64> {
            let mut w = g.to_vec();
            margin.iter().zip(s).for_each(|(&i, &b)| x.row_axpy(i, b * y[i], &mut w));
            w.iter_mut().for_each(|v| *v /= lambda);
            let bias = if self.fit_intercept { s[m] } else { 0.0 };
            let mut r: Vec<f64> = margin
                .iter()
                .enumerate()
                .map(|(k, &i)| scale[k] * (1.0 - y[i] * (x.row_dot(i, &w[..n]) + bias)))
                .collect();
            if self.fit_intercept {
                let sum: f64 = margin.iter().zip(s).map(|(&i, b)| y[i] * b).sum();
                r.push(scale[m] * (-g_bias - sum));
            }
            r
        };
        let mut r = residual(&solution);
        for _ in 0..REFINEMENTS {
            let step = solve(&|k| r[k] / scale[k]);
            let refined: Vec<f64> = solution.iter().zip(&step).map(|(s, d)| s + d).collect();
            let r_refined = residual(&refined);
            if !(norm2(&r_refined) < norm2(&r)) {
                break;
            }
            (solution, r) = (refined, r_refined);
        }
        let bias = if self.fit_intercept { solution[m] } else { 0.0 };
        solution.truncate(m);
        Some((solution, bias))
    }

    /// By conjugate gradients on `K β = rhs - y b` with `K = Y X_M X_Mᵀ Y/λ + ridge·I` (SPD), restricted to
    /// `yᵀβ = -g_bias` by projecting onto `yᵀv = 0` (then `b = yᵀ(rhs - Kβ)/|M|`). Each product with `K`
    /// scatters `X_Mᵀ(Yp)` into one `n`-vector and clears it again (sparse rows: the touched entries):
    /// O(stored entries of the margin rows). From `start` (multipliers by example, e.g. the last active-set
    /// pass'), else from the origin, either moved onto the constraint. `None` unless the residual falls
    /// below `accept · ‖rhs‖`.
    fn solve_iteratively(&self, g: &[f64], g_bias: f64, start: Option<&[f64]>, accept: f64) -> Option<(Vec<f64>, f64)> {
        self.solve_rhs_iteratively(self.rhs(g), g_bias, start, accept, 1e-14)
    }

    /// [`Self::solve_iteratively`] for the right-hand side `rhs` in place of `1 - y_i x_iᵀg/λ`, conjugate
    /// gradients aiming at a residual of `target · ‖rhs‖` (there `1e-14`).
    fn solve_rhs_iteratively(
        &self,
        rhs: Vec<f64>,
        g_bias: f64,
        start: Option<&[f64]>,
        accept: f64,
        target: f64,
    ) -> Option<(Vec<f64>, f64)> {
        let (x, y, margin, lambda) = (self.x, self.y, self.margin, self.lambda);
        let m = margin.len();
        let ym: Vec<f64> = margin.iter().map(|&i| y[i]).collect();
        let ridge = 1e-13 * margin.iter().map(|&i| x.row_norm2(i) / lambda).fold(0.0, f64::max);
        let mut scratch = vec![0.0; x.n_features()];
        // `K p`, with the ridge or without.
        let mut product = |p: &[f64], out: &mut [f64], ridge: f64| {
            for (r, &i) in margin.iter().enumerate() {
                x.row_axpy(i, ym[r] * p[r], &mut scratch);
            }
            for (r, &i) in margin.iter().enumerate() {
                out[r] = ym[r] * x.row_dot(i, &scratch) / lambda + ridge * p[r];
            }
            match x {
                Features::Sparse(rows) => {
                    margin.iter().for_each(|&i| rows.row(i).0.iter().for_each(|&j| scratch[j as usize] = 0.0))
                }
                Features::Dense(_) => scratch.fill(0.0),
            }
        };
        // Removes the component along y (the constraint's normal).
        let project = |v: &mut [f64]| {
            if self.fit_intercept {
                let c = dot(&ym, v) / m as f64;
                v.iter_mut().zip(&ym).for_each(|(vi, yi)| *vi -= c * yi);
            }
        };
        // From the start's multipliers (0 for a new margin example), moved onto `Σ_M y_i β_i = -g_bias`, or
        // from the nearest point of that plane to the origin.
        let mut beta: Vec<f64> = start.map_or_else(|| vec![0.0; m], |s| margin.iter().map(|&i| s[i]).collect());
        if self.fit_intercept {
            let shift = (-g_bias - dot(&ym, &beta)) / m as f64;
            beta.iter_mut().zip(&ym).for_each(|(b, yi)| *b += shift * yi);
        }
        let target = target * norm2(&rhs).max(f64::MIN_POSITIVE);
        let mut kv = vec![0.0; m];
        // The residual `rhs - K β` (`K β` of the system without the ridge given), the bias as its
        // least-squares multiplier taken out.
        let residual_of = |kv: &[f64]| {
            let mut r: Vec<f64> = rhs.iter().zip(kv).map(|(a, b)| a - b).collect();
            let bias = if self.fit_intercept { dot(&ym, &r) / m as f64 } else { 0.0 };
            r.iter_mut().zip(&ym).for_each(|(ri, yi)| *ri -= bias * yi);
            (r, bias)
        };
        // Conjugate gradients on the ridged system for the correction `δ` of `(K + ridge·I) δ = r`, then on
        // the new residual of the true one (iterative refinement): the ridge alone would leave every margin
        // off by `ridge·β_i` (3,000 × 5,000 Gaussian rows at λ = 10⁻³: 10⁻¹³ J per row, a relative gap of
        // 4·10⁻¹⁰).
        product(&beta, &mut kv, 0.0);
        let (mut res, mut bias) = residual_of(&kv);
        for _ in 0..CG_REFINEMENTS {
            let mut r = res.clone();
            project(&mut r);
            let mut step = vec![0.0; m];
            let mut d = r.clone();
            let mut rr = dot(&r, &r);
            // The residual's last halving (iteration, `rr`): round-off stalls CG on an ill-conditioned
            // system, and iterating on is then wasted.
            let mut halved = (0, rr);
            for k in 0..MAX_CG {
                if rr.sqrt() <= target || k - halved.0 > CG_STALL {
                    break;
                }
                if rr <= 0.25 * halved.1 {
                    halved = (k, rr);
                }
                product(&d, &mut kv, ridge);
                project(&mut kv);
                let dkd = dot(&d, &kv);
                if !(dkd > 0.0) {
                    break;
                }
                let alpha = rr / dkd;
                step.iter_mut().zip(&d).for_each(|(s, di)| *s += alpha * di);
                r.iter_mut().zip(&kv).for_each(|(ri, ki)| *ri -= alpha * ki);
                project(&mut r);
                let rr_new = dot(&r, &r);
                let ratio = rr_new / rr;
                d.iter_mut().zip(&r).for_each(|(di, ri)| *di = ri + ratio * *di);
                rr = rr_new;
            }
            let refined: Vec<f64> = beta.iter().zip(&step).map(|(b, s)| b + s).collect();
            product(&refined, &mut kv, 0.0);
            let (res_refined, bias_refined) = residual_of(&kv);
            if !(norm2(&res_refined) < norm2(&res)) {
                break;
            }
            (beta, res, bias) = (refined, res_refined, bias_refined);
            // Refined only after a solve that met its target: one that stalled (an ill-conditioned Gram
            // matrix) would stall again, and the dense factorisation is the fallback.
            if norm2(&res) <= target || rr.sqrt() > target {
                break;
            }
        }
        let converged = norm2(&res) <= accept * norm2(&rhs) && beta.iter().all(|b| b.is_finite());
        converged.then_some((beta, bias))
    }
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

/// Rows of a [`reduced_solve`] working set near an approximate solution where `n ≪ ℓ`: this many per
/// coordinate of `[w; b]`, ...
const WORKING_PER_COORDINATE: usize = 50;
/// ... and at least this many.
const MIN_WORKING: usize = 5000;

/// The size of a [`reduced_solve`] working set near an approximate solution of `dim` coordinates `[w; b]`
/// on `ℓ ≫ n` rows (the local QP route's, the sharded finish's): `50 dim`, at least 5,000. At 10⁶
/// overlapping rows × 100, dual CD's finish on `4 dim` rows stalled short of a gap of 10⁻¹⁰.
pub fn working_set_size(dim: usize) -> usize {
    (WORKING_PER_COORDINATE * dim).max(MIN_WORKING)
}

/// From this `accept_gap` on, [`reduced_solve`] also tries the full step of each affine direction: its
/// certificate costs two passes over the rows per iteration, which a tight gap rarely repays (MNIST images
/// at 10⁻¹⁰: 10 % slower, no iteration saved) and a loose one does (at 0.45: two of seven or eight).
pub const FULL_STEP_GAP: f64 = 1e-2;

/// Working-set QPs solved at most (each round adds the fixed examples that crossed the margin).
const REDUCED_ROUNDS: usize = 4;

/// The exact hinge-SVM solution from an approximate `theta` when the margin set is not yet known well
/// enough for [`polish_sides`] (a first-order method converging slowly on a rank-deficient free set):
///
/// 1. a working set `U` of the `working` examples nearest the margin (smallest `|d_i|`); the others are
///    fixed on their side (`d_i > 0`: weight `c_i/ℓ`, a linear term; else weight 0);
/// 2. the primal QP on `U`, `min λ/2‖w‖² - gᵀw - g_b b + (1/ℓ) Σ_U c_i ξ_i`, `ξ_i ≥ d_i`, `ξ_i ≥ 0`, over `b`,
///    `ξ_U` and the coordinates of `w` that rows of `U` touch (the others are `w_j = g_j/λ` in closed form):
///    by the interior-point method `hinge_qp::WorkingQp` (normal equations the size of `[w; b]`) when `U` has at
///    least as many examples as there are such coordinates, else by Clarabel;
/// 3. if fixed examples crossed the margin at that solution, they join `U` and step 2 repeats (for at most
///    four QPs);
/// 4. [`polish_sides`] from the interior-point solution's sides (`|d_i| ≤ 1e-7` on the margin) makes it
///    exact to round-off.
///
/// The interior-point iterations spent if the rounds do not settle, a QP solve fails (or needs more than
/// `max_qp_iterations` iterations in all), or the final active-set solve does not settle. With `working ≥ ℓ` it
/// is the exact solution of the whole problem, whatever `theta` is. Given `accept_gap`, the first
/// interior-point iterate whose relative duality gap `(J - D)/J` meets it is returned as it is (`J` at its
/// `[w; b]`, `D` at its multipliers `β` clipped into `[0, c_i/ℓ]`, the fixed examples' those of their
/// sides, made feasible as in [`crate::solver::dual_cd::dual_value`]; its `residual` is the hinge
/// sub-gradient's norm): a loose tolerance costs a few factorisations, not the whole path, and a tight one
/// certifies a QP solution whose sides the active-set solve would not settle. From a gap of
/// [`FULL_STEP_GAP`] the full step of each affine direction is tried too ([`hinge_qp::Accept`]). Each such
/// certificate is reported to `monitor` (the duality gap, iterations counted from the solve's start); a stop
/// the observer asks for takes that point as it is.
#[allow(clippy::too_many_arguments)]
pub fn reduced_solve(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    fit_intercept: bool,
    theta: &[f64],
    working: usize,
    max_qp_iterations: usize,
    accept_gap: Option<f64>,
    monitor: Monitor<'_>,
) -> Result<Polished, usize> {
    let (l, n) = (x.n_samples(), x.n_features());
    let upper = |i: usize| weights.map_or(1.0, |c| c[i]) / l as f64;
    let margin_of = |t: &[f64], i: usize| 1.0 - y[i] * (x.row_dot(i, &t[..n]) + if fit_intercept { t[n] } else { 0.0 });
    // The working set: the `working` examples (with c_i > 0) nearest the margin, |d_i| smallest, ties to the
    // lower index — kept in a bounded max-heap while the margins are computed once (no vector of ℓ).
    let mut in_u = vec![false; l];
    let mut fixed_active = vec![false; l];
    let mut nearest: BinaryHeap<(OrderedAbs, usize)> = BinaryHeap::with_capacity(working + 1);
    for (i, active) in fixed_active.iter_mut().enumerate() {
        let d = margin_of(theta, i);
        *active = d > 0.0;
        if upper(i) > 0.0 {
            nearest.push((OrderedAbs(d.abs()), i));
            if nearest.len() > working {
                nearest.pop();
            }
        }
    }
    for (_, i) in nearest {
        in_u[i] = true;
    }
    let mut qp_iterations = 0;
    for round in 0..REDUCED_ROUNDS {
        let u: Vec<usize> = (0..l).filter(|&i| in_u[i]).collect();
        let mut g = vec![0.0; n];
        let mut g_bias = 0.0;
        for i in (0..l).filter(|&i| !in_u[i] && fixed_active[i] && upper(i) > 0.0) {
            x.row_axpy(i, upper(i) * y[i], &mut g);
            g_bias += upper(i) * y[i];
        }
        // The coordinates of w the working rows touch, numbered 0..k.
        let (cols, position): (Vec<usize>, Vec<usize>) = match x {
            Features::Dense(_) => ((0..n).collect(), (0..n).collect()),
            Features::Sparse(m) => {
                let mut position = vec![usize::MAX; n];
                let mut cols = Vec::new();
                for &i in &u {
                    for j in m.row(i).0.iter().map(|&j| j as usize) {
                        if position[j] == usize::MAX {
                            position[j] = cols.len();
                            cols.push(j);
                        }
                    }
                }
                (cols, position)
            }
        };
        let k = cols.len();
        let nb = usize::from(fit_intercept);
        // `[w; b]` of a solution on the touched coordinates (the others in closed form, `w_j = g_j/λ`).
        let full_theta = |solution: &[f64]| {
            let mut theta: Vec<f64> = g.iter().map(|v| v / lambda).collect();
            for (j, &c) in cols.iter().enumerate() {
                theta[c] = solution[j];
            }
            if fit_intercept {
                theta.push(solution[k]);
            }
            theta
        };
        // The multipliers of the whole problem from the working set's, clipped into the box, and the fixed
        // examples' of their sides (`c_i/ℓ` on the linear side, else 0).
        let full_beta = |beta: &[f64]| {
            let mut full: Vec<f64> = (0..l).map(|i| if fixed_active[i] { upper(i) } else { 0.0 }).collect();
            for (&i, &b) in u.iter().zip(beta) {
                full[i] = b.clamp(0.0, upper(i));
            }
            full
        };
        // Each certificate is reported to `monitor`; a stop it asks for takes the point as it is (the fit
        // is then interrupted, its result discarded).
        let before = qp_iterations;
        let certifies = |iterations: usize, v: &[f64], beta: &[f64]| {
            let primal = objective_value(x, y, weights, lambda, DualLoss::Hinge, fit_intercept, &full_theta(v));
            let dual = dual_value(x, y, weights, lambda, DualLoss::Hinge, fit_intercept, &full_beta(beta));
            let gap = relative_gap(primal, dual);
            let stop = monitor.iteration(before + iterations, Quantity::DualityGap, || (primal, gap));
            stop || accept_gap.is_some_and(|tol| gap <= tol)
        };
        let accept = accept_gap.map(|tol| Accept { takes: &certifies, full_steps: tol >= FULL_STEP_GAP });
        let set =
            WorkingSet { x, y, lambda, fit_intercept, u: &u, cols: &cols, position: &position, g: &g, g_bias, upper };
        let budget = max_qp_iterations.checked_sub(qp_iterations).ok_or(qp_iterations)?;
        let solution = if k + nb <= u.len().max(DENSE_NORMAL_MAX) {
            set.interior_point(theta, budget, accept).map_err(|spent| qp_iterations + spent)?
        } else {
            let (v, iterations) = set.clarabel(budget).ok_or(qp_iterations + budget)?;
            QpSolution { v, iterations, accepted: None }
        };
        qp_iterations += solution.iterations;
        let theta = full_theta(&solution.v);
        if let Some(beta) = solution.accepted {
            let beta = full_beta(&beta);
            let residual = hinge_subgradient_norm(x, y, weights, lambda, fit_intercept, &theta);
            return Ok(Polished { theta, residual, beta, qp_iterations });
        }
        // Fixed examples that crossed join the working set, and the QP is solved again.
        // The margins are computed when needed, here and for the sides: no vector of ℓ margins (a fit of
        // 10⁶ examples keeps its peak memory within 0.3× its data, python/tests/test_memory.py).
        let tol = 1e-9 * (1.0 + norm2(&theta));
        let mut moved = false;
        for i in 0..l {
            if in_u[i] || upper(i) == 0.0 {
                continue;
            }
            let d = margin_of(&theta, i);
            if (fixed_active[i] && d < -tol) || (!fixed_active[i] && d > tol) {
                in_u[i] = true;
                moved = true;
            }
        }
        if moved && round + 1 < REDUCED_ROUNDS {
            if in_u.iter().filter(|&&b| b).count() > MAX_MARGIN {
                return Err(qp_iterations); // the fixed sides were far off
            }
            continue;
        }
        // The QP solution's sides, made exact by the active-set solve.
        let sides = sides_at(x, y, fit_intercept, &theta, 1e-7 * (1.0 + norm2(&theta)));
        let polished = polish_sides(x, y, weights, lambda, fit_intercept, sides, true).ok_or(qp_iterations)?;
        return Ok(Polished { qp_iterations, ..polished });
    }
    Err(qp_iterations)
}

/// The QP of one round of [`reduced_solve`]: the working rows `u`, the coordinates `cols` of `w` they touch
/// (column `j` is number `position[j]` among them; the identity for dense rows), the fixed examples' share
/// `g`, `g_bias`, and the bounds `upper(i) = c_i/ℓ`.
struct WorkingSet<'a, U> {
    x: &'a Features<'a>,
    y: &'a [f64],
    lambda: f64,
    fit_intercept: bool,
    u: &'a [usize],
    cols: &'a [usize],
    position: &'a [usize],
    g: &'a [f64],
    g_bias: f64,
    upper: U,
}

impl<U: Fn(usize) -> f64> WorkingSet<'_, U> {
    /// `[w_cols; b]` by `hinge_qp::WorkingQp` (normal equations of size `k + 1`, for working sets of at least
    /// as many examples as coordinates), from `theta`, with its iterations (at most `max_iterations`).
    fn interior_point(
        &self,
        theta: &[f64],
        max_iterations: usize,
        accept: Option<Accept<'_>>,
    ) -> Result<QpSolution, usize> {
        let &WorkingSet { x, y, lambda, fit_intercept, u, cols, position, g, g_bias, ref upper } = self;
        let (k, nb) = (cols.len(), usize::from(fit_intercept));
        // ã_i = y_i [x_i; 1] on the touched coordinates.
        let mut rows = Array2::zeros((u.len(), k + nb));
        for (mut row, &i) in rows.rows_mut().into_iter().zip(u) {
            match x {
                Features::Dense(a) => row.slice_mut(s![..k]).assign(&(&a.row(i) * y[i])),
                Features::Sparse(m) => {
                    let (idx, val) = m.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        row[position[j as usize]] = y[i] * v;
                    }
                }
            }
            if fit_intercept {
                row[k] = y[i];
            }
        }
        let upper: Vec<f64> = u.iter().map(|&i| upper(i)).collect();
        let mut q: Vec<f64> = cols.iter().map(|&c| -g[c]).collect();
        let mut ridge = vec![lambda; k];
        let mut start: Vec<f64> = cols.iter().map(|&c| theta[c]).collect();
        if fit_intercept {
            q.push(-g_bias);
            ridge.push(0.0);
            start.push(theta[x.n_features()]);
        }
        let passes = passes_over(rows.view(), matches!(x, Features::Sparse(_)));
        let qp = WorkingQp { rows: rows.view(), passes: &passes, upper: &upper, q: &q, ridge: &ridge, accept };
        qp.solve(&start, max_iterations)
    }

    /// `[w_cols; b]` by Clarabel, over `b`, `ξ_U` and the touched coordinates of `w` (for working sets with
    /// more coordinates than examples), with its iterations (at most `max_iterations`).
    fn clarabel(&self, max_iterations: usize) -> Option<(Vec<f64>, usize)> {
        let &WorkingSet { x, y, lambda, fit_intercept, u, cols, position, g, g_bias, ref upper } = self;
        let (k, nb) = (cols.len(), usize::from(fit_intercept));
        let dim = k + nb + u.len();
        let (pi, pj, pv): (Vec<usize>, Vec<usize>, Vec<f64>) = (0..k).map(|j| (j, j, lambda)).collect();
        let mut q = vec![0.0; dim];
        for (j, &c) in cols.iter().enumerate() {
            q[j] = -g[c];
        }
        if fit_intercept {
            q[k] = -g_bias;
        }
        for (r, &i) in u.iter().enumerate() {
            q[k + nb + r] = upper(i);
        }
        // Rows r: -y_i x_iᵀw - y_i b - ξ_r ≤ -1; rows |U| + r: -ξ_r ≤ 0.
        let (mut ai, mut aj, mut av) = (Vec::new(), Vec::new(), Vec::new());
        for (r, &i) in u.iter().enumerate() {
            match x {
                Features::Dense(a) => {
                    for (j, &v) in a.row(i).iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        ai.push(r);
                        aj.push(j);
                        av.push(-y[i] * v);
                    }
                }
                Features::Sparse(m) => {
                    let (idx, val) = m.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        ai.push(r);
                        aj.push(position[j as usize]);
                        av.push(-y[i] * v);
                    }
                }
            }
            if fit_intercept {
                ai.push(r);
                aj.push(k);
                av.push(-y[i]);
            }
            ai.push(r);
            aj.push(k + nb + r);
            av.push(-1.0);
            ai.push(u.len() + r);
            aj.push(k + nb + r);
            av.push(-1.0);
        }
        let mut rhs = vec![-1.0; u.len()];
        rhs.extend(std::iter::repeat_n(0.0, u.len()));
        let p = CscMatrix::new_from_triplets(dim, dim, pi, pj, pv);
        let a = CscMatrix::new_from_triplets(2 * u.len(), dim, ai, aj, av);
        let cones = [NonnegativeConeT(2 * u.len())];
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(max_iterations.min(200) as u32)
            .tol_gap_abs(1e-12)
            .tol_gap_rel(1e-12)
            .tol_feas(1e-12)
            .build()
            .expect("valid Clarabel settings");
        let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).ok()?;
        {
            // Clarabel's kernels may leave the upper vector state dirty too (see `crate::linalg`).
            let _state = crate::linalg::VectorState;
            solver.solve();
        }
        let sol = &solver.solution;
        matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved)
            .then(|| (sol.x[..k + nb].to_vec(), sol.iterations as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::CsrMatrix;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    impl<U: Fn(usize) -> f64> WorkingSet<'_, U> {
        /// The QP's objective `½λ‖w‖² - gᵀw - g_b b + Σ_U u_i max(0, 1 - ã_iᵀ[w; b])` at `v = [w_cols; b]`.
        fn objective(&self, v: &[f64]) -> f64 {
            let mut w = vec![0.0; self.x.n_features()];
            for (j, &c) in self.cols.iter().enumerate() {
                w[c] = v[j];
            }
            let b = if self.fit_intercept { v[self.cols.len()] } else { 0.0 };
            let linear = dot(self.g, &w) + self.g_bias * b;
            let hinge: f64 = self
                .u
                .iter()
                .map(|&i| (self.upper)(i) * (1.0 - self.y[i] * (self.x.row_dot(i, &w) + b)).max(0.0))
                .sum();
            0.5 * self.lambda * dot(&w, &w) - linear + hinge
        }
    }

    /// A working set of the rows nearest the margin of a point 10 % off (the QP route's on many examples,
    /// [`crate::svm`]) ends at the whole problem's solution.
    #[test]
    fn a_working_set_nearest_a_nearby_points_margin_ends_exact() {
        let (l, n) = (40_000, 5);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let y: Vec<f64> = (0..l).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let a = Array2::from_shape_fn((l, n), |(i, _)| {
            let z: f64 = StandardNormal.sample(&mut rng);
            z + 0.5 * y[i]
        });
        let x = Features::dense(a);
        let lambda = 1e-4;
        let whole = reduced_solve(&x, &y, None, lambda, true, &[0.0; 6], l, 100, None, Monitor::default())
            .expect("the whole QP");
        let start: Vec<f64> = whole.theta.iter().map(|v| 1.1 * v).collect();
        let working = reduced_solve(&x, &y, None, lambda, true, &start, 2500, 100, None, Monitor::default())
            .expect("the working set");
        let value = |t: &[f64]| objective_value(&x, &y, None, lambda, DualLoss::Hinge, true, t);
        let (f, f_whole) = (value(&working.theta), value(&whole.theta));
        assert!((f - f_whole).abs() <= 1e-12 * f_whole, "{f} vs {f_whole}");
    }

    /// The interior-point QP (`WorkingQp`, normal equations) and Clarabel solve the same working-set QP
    /// to the same minimum, with and without intercept, weights and sparse rows, at a large and a small λ.
    #[test]
    fn the_interior_point_working_set_qp_matches_clarabel() {
        let (l, n, m) = (400, 12, 150);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let y: Vec<f64> = (0..l).map(|i| if i % 3 == 0 { 1.0 } else { -1.0 }).collect();
        let mut a = Array2::<f64>::zeros((l, n));
        for ((i, _), v) in a.indexed_iter_mut() {
            let z: f64 = StandardNormal.sample(&mut rng);
            *v = z + 0.3 * y[i];
        }
        // Sparse rows: about a third of the entries kept.
        let sparse_rows: Vec<Vec<(usize, f64)>> =
            (0..l).map(|i| (0..n).filter(|j| (i * 7 + j * 5) % 3 == 0).map(|j| (j, a[[i, j]])).collect()).collect();
        let sparse = Features::Sparse(CsrMatrix::from_rows(n, &sparse_rows).unwrap());
        let dense = Features::dense(a);
        let weights: Vec<f64> = (0..l).map(|i| 0.5 + (i % 4) as f64 * 0.5).collect();
        let u: Vec<usize> = (0..m).collect();
        for x in [&dense, &sparse] {
            for fit_intercept in [true, false] {
                for weighted in [false, true] {
                    for lambda in [1e-1, 1e-4] {
                        let upper = |i: usize| if weighted { weights[i] } else { 1.0 } / l as f64;
                        // The fixed examples: every third one beyond U on the active side.
                        let mut g = vec![0.0; n];
                        let mut g_bias = 0.0;
                        for i in (m..l).filter(|i| i % 3 != 1) {
                            x.row_axpy(i, upper(i) * y[i], &mut g);
                            g_bias += upper(i) * y[i];
                        }
                        let cols: Vec<usize> = (0..n).collect();
                        let start = vec![0.0; n + 1];
                        let set = WorkingSet {
                            x,
                            y: &y,
                            lambda,
                            fit_intercept,
                            u: &u,
                            cols: &cols,
                            position: &cols,
                            g: &g,
                            g_bias,
                            upper,
                        };
                        let ipm = set
                            .interior_point(&start, crate::solver::hinge_qp::MAX_ITERATIONS, None)
                            .expect("the interior-point QP converges")
                            .v;
                        let (reference, _) = set.clarabel(200).expect("Clarabel solves the QP");
                        let value = |v: &[f64]| set.objective(v);
                        let (f, f_ref) = (value(&ipm), value(&reference));
                        let case = format!(
                            "sparse {} intercept {fit_intercept} weighted {weighted} λ {lambda}",
                            matches!(x, Features::Sparse(_))
                        );
                        assert!((f - f_ref).abs() <= 1e-9 * f_ref.abs().max(1e-12), "{case}: {f} vs {f_ref}");
                        // λ > 0 makes w unique.
                        let dw = (0..n).map(|j| (ipm[j] - reference[j]).abs()).fold(0.0, f64::max);
                        assert!(dw <= 1e-5 * (1.0 + norm2(&reference[..n])), "{case}: w differs by {dw}");
                    }
                }
            }
        }
    }
}
