//! SMO for the SVM-type dual (LIBSVM's `Solver`, Fan, Chen & Lin 2005; Chang & Lin 2011):
//!
//! ```text
//!     min_α  ½ αᵀQα + pᵀα    s.t.  yᵀα = Δ,  0 ≤ α_i ≤ C_i,     y_i ∈ {-1, +1}
//! ```
//!
//! with `Q` symmetric positive semi-definite, seen only through [`QMatrix`] (its columns and diagonal), so
//! that the C-SVM (`Q_ij = y_i y_j k(x_i, x_j)`, `p = -1`, `Δ = 0`), SVM on shifted points (kernel TSVC)
//! and other duals of this form share one solver. `Δ` is fixed by the starting point, which must be
//! feasible.
//!
//! Each iteration updates two variables analytically:
//! - **working set** (WSS3, second order): `i ∈ argmax_{t ∈ I_up} -y_t ∇_t f`, then
//!   `j ∈ argmin_{t ∈ I_low, -y_t∇_t f < m} -b_it² / a_it` with `b_it = m + y_t ∇_t f`,
//!   `a_it = Q_ii + Q_tt - 2 y_i y_t Q_it` (τ = 1e-12 when not positive); stop when
//!   `m(α) - M(α) = max_{I_up} -y∇f - min_{I_low} -y∇f < ε`;
//! - **shrinking**: every `min(ℓ, 1000)` iterations, variables at a bound whose gradient says they will stay
//!   there are removed from the active set; the gradient of the others is rebuilt from `Ḡ_i = Σ_{α_j = C_j}
//!   C_j Q_ij` and the free variables before the final optimality check (and once when the violation first
//!   falls below 10ε);
//! - **kernel cache**: `Q` columns restricted to the active set are kept in a [`ColumnCache`] of a given
//!   size, permuted along with the variables, in `f64` or (as LIBSVM's `Qfloat`) `f32` entries
//!   ([`Precision`]); `α`, the gradients and `Q_ii` stay in `f64`. With `f32` entries the solver solves the
//!   problem with `Q_ij` rounded to `f32` (a relative perturbation of at most 3e-8 per entry).
//!
//! The bias follows the KKT conditions: `ρ` is the mean of `y_i ∇_i f` over the free variables, or the
//! midpoint of the interval the bounded variables allow when none is free; for the SVM the decision
//! function is `f(x) = Σ α_i y_i k(x_i, x) - ρ`.
//!
//! ```
//! use usvm::solver::smo::{DenseQ, SmoSettings, solve};
//! // Two points x = ±1 with labels ±1, linear kernel: Q = [[1, 1], [1, 1]] (y_i y_j x_i x_j).
//! let q = DenseQ::new(vec![1.0, 1.0, 1.0, 1.0], 2);
//! let s = solve(&q, &[-1.0, -1.0], &[1.0, -1.0], &[10.0, 10.0], None, &SmoSettings::default()).unwrap();
//! assert!((s.alpha[0] - 0.5).abs() < 1e-12 && (s.alpha[1] - 0.5).abs() < 1e-12);
//! assert!(s.converged && s.rho.abs() < 1e-12 && (s.objective + 0.5).abs() < 1e-12);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, invalid};
use crate::kernel::cache::{ColumnCache, Entry, Precision};
use crate::progress::{Monitor, Quantity, STEP_EVENTS_EVERY};

/// The matrix `Q` of the dual, by columns. Implementations may compute columns in parallel.
pub trait QMatrix: Sync {
    /// The dimension `ℓ`.
    fn len(&self) -> usize;
    /// Whether `ℓ = 0`.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `Q_ii`.
    fn diagonal(&self, i: usize) -> f64;
    /// `out[k] = Q[rows[k], i]` for every `k`.
    fn column(&self, i: usize, rows: &[usize], out: &mut [f64]);
    /// Several columns at once: `out[c·n + k] = Q[rows[k], cols[c]]` with `n = rows.len()`. Implementations
    /// may read each row once for all the columns (a blocked product); by default one column at a time.
    fn columns(&self, cols: &[usize], rows: &[usize], out: &mut [f64]) {
        for (&i, out) in cols.iter().zip(out.chunks_mut(rows.len().max(1))) {
            self.column(i, rows, out);
        }
    }
}

/// A `Q` held as a dense row-major `ℓ × ℓ` matrix (for small problems and tests).
#[derive(Debug, Clone)]
pub struct DenseQ {
    data: Vec<f64>,
    n: usize,
}

impl DenseQ {
    /// `data` holds `Q` row-major, `n × n`.
    ///
    /// # Panics
    /// If `data.len() != n²`.
    pub fn new(data: Vec<f64>, n: usize) -> Self {
        assert_eq!(data.len(), n * n, "DenseQ: data must hold n² entries");
        DenseQ { data, n }
    }
}

impl QMatrix for DenseQ {
    fn len(&self) -> usize {
        self.n
    }
    fn diagonal(&self, i: usize) -> f64 {
        self.data[i * self.n + i]
    }
    fn column(&self, i: usize, rows: &[usize], out: &mut [f64]) {
        for (v, &r) in out.iter_mut().zip(rows) {
            *v = self.data[r * self.n + i];
        }
    }
}

/// Settings of the SMO solver: plain data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SmoSettings {
    /// Stop when the maximal violation `m(α) - M(α)` is below this (LIBSVM's `-e`, default 1e-3).
    pub tol: f64,
    /// Size of the column cache in megabytes (LIBSVM's `-m`, default 100).
    pub cache_mb: f64,
    /// Shrink the active set (LIBSVM's `-h`, default on).
    pub shrinking: bool,
    /// Maximum iterations; 0 means LIBSVM's `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
    /// The cache's entries (default [`Precision::Double`]).
    #[serde(default)]
    pub precision: Precision,
}

impl Default for SmoSettings {
    fn default() -> Self {
        SmoSettings { tol: 1e-3, cache_mb: 100.0, shrinking: true, max_iter: 0, precision: Precision::Double }
    }
}

impl SmoSettings {
    /// Checks `tol > 0` and `cache_mb > 0`.
    pub fn validate(&self) -> Result<()> {
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(invalid("tol", self.tol, "must be positive and finite"));
        }
        if !(self.cache_mb > 0.0 && self.cache_mb.is_finite()) {
            return Err(invalid("cache_mb", self.cache_mb, "must be positive and finite"));
        }
        Ok(())
    }
}

/// The solution and what the solver reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmoSolution {
    /// The dual variables.
    pub alpha: Vec<f64>,
    /// `∇f(α) = Qα + p`.
    pub gradient: Vec<f64>,
    /// `½αᵀQα + pᵀα`.
    pub objective: f64,
    /// The multiplier `ρ` of the equality constraint (for the SVM, the bias is `b = -ρ`).
    pub rho: f64,
    /// SMO iterations.
    pub n_iter: usize,
    /// Whether the maximal violation fell below `tol` (false: the iteration limit was reached).
    pub converged: bool,
    /// The final maximal violation `m(α) - M(α)` (0 when one of the index sets is empty).
    pub max_violation: f64,
    /// Variables strictly between their bounds.
    pub n_free: usize,
    /// Variables at their upper bound.
    pub n_upper: usize,
}

const TAU: f64 = 1e-12;

/// Columns computed together when the gradient is rebuilt (each row read once per batch).
const BATCH: usize = 32;

/// Bits of `Smo::sets`.
const IN_UP: u8 = 1;
const IN_LOW: u8 = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Lower,
    Upper,
    Free,
}

/// Minimises `½αᵀQα + pᵀα` subject to `yᵀα = yᵀα₀`, `0 ≤ α ≤ c`, from `alpha0` (default 0).
pub fn solve<Q: QMatrix>(
    q: &Q,
    p: &[f64],
    y: &[f64],
    c: &[f64],
    alpha0: Option<&[f64]>,
    settings: &SmoSettings,
) -> Result<SmoSolution> {
    solve_monitored(q, p, y, c, alpha0, settings, Monitor::default())
}

/// [`solve`], reporting to `monitor` every [`STEP_EVENTS_EVERY`] iterations and at the end: the objective
/// (kept up to date by the change of each two-variable step, only when observed) and the maximal violation.
pub fn solve_monitored<Q: QMatrix>(
    q: &Q,
    p: &[f64],
    y: &[f64],
    c: &[f64],
    alpha0: Option<&[f64]>,
    settings: &SmoSettings,
    monitor: Monitor<'_>,
) -> Result<SmoSolution> {
    settings.validate()?;
    let l = q.len();
    if l == 0 {
        return Err(Error::Empty("no variables"));
    }
    for (what, len) in [("p", p.len()), ("y", y.len()), ("C", c.len())] {
        if len != l {
            return Err(Error::DimensionMismatch { what, expected: l, found: len });
        }
    }
    if let Some((i, &v)) = p.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite { what: "p", index: i, value: v });
    }
    if let Some(&v) = y.iter().find(|&&v| v != 1.0 && v != -1.0) {
        return Err(invalid("y", v, "labels must be +1 or -1"));
    }
    if let Some(&v) = c.iter().find(|v| !(**v > 0.0 && v.is_finite())) {
        return Err(invalid("C", v, "every upper bound must be positive and finite"));
    }
    let alpha = match alpha0 {
        Some(a) if a.len() != l => {
            return Err(Error::DimensionMismatch { what: "alpha0", expected: l, found: a.len() });
        }
        Some(a) => {
            if let Some((&v, _)) = a.iter().zip(c).find(|(a, c)| !(**a >= 0.0 && **a <= **c)) {
                return Err(invalid("alpha0", v, "every start value must lie in [0, C_i]"));
            }
            a.to_vec()
        }
        None => vec![0.0; l],
    };
    let diag: Vec<f64> = (0..l).map(|i| q.diagonal(i)).collect();
    if let Some((i, &v)) = diag.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite { what: "diagonal of Q", index: i, value: v });
    }
    // The column cache grows to `cache_mb` or to all of `Q`, whichever is smaller.
    let bytes = (settings.cache_mb * (1u64 << 20) as f64).min(l as f64 * l as f64 * 8.0) as usize;
    crate::memory::reserve("the kernel column cache", "lower cache_mb", &[bytes / 8])?;
    Ok(match settings.precision {
        Precision::Single => Smo::<Q, f32>::new(q, p, y, c, alpha, diag, settings, monitor).run(),
        Precision::Double => Smo::<Q, f64>::new(q, p, y, c, alpha, diag, settings, monitor).run(),
    })
}

/// The solver state, in the permuted order of the active set (`perm[k]` is the original index of
/// position `k`).
struct Smo<'a, Q: QMatrix, T: Entry> {
    q: &'a Q,
    l: usize,
    perm: Vec<usize>,
    y: Vec<f64>,
    p: Vec<f64>,
    c: Vec<f64>,
    diag: Vec<f64>,
    alpha: Vec<f64>,
    status: Vec<Status>,
    /// Per position: `IN_UP` when `α_t` can move to increase `y_tα_t`, `IN_LOW` when it can decrease it.
    sets: Vec<u8>,
    g: Vec<f64>,
    g_bar: Vec<f64>,
    active: usize,
    unshrink: bool,
    cache: ColumnCache<T>,
    settings: SmoSettings,
    monitor: Monitor<'a>,
    /// `½αᵀQα + pᵀα`, updated by each step when `monitor` is active (else 0).
    objective: f64,
    /// `m(α) - M(α)` at the last working-set selection.
    violation: f64,
}

impl<'a, Q: QMatrix, T: Entry> Smo<'a, Q, T> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        q: &'a Q,
        p: &[f64],
        y: &[f64],
        c: &[f64],
        alpha: Vec<f64>,
        diag: Vec<f64>,
        settings: &SmoSettings,
        monitor: Monitor<'a>,
    ) -> Self {
        let l = q.len();
        let mut s: Self = Smo {
            q,
            l,
            perm: (0..l).collect(),
            y: y.to_vec(),
            p: p.to_vec(),
            c: c.to_vec(),
            diag,
            status: vec![Status::Lower; l],
            sets: vec![0; l],
            alpha,
            g: p.to_vec(),
            g_bar: vec![0.0; l],
            active: l,
            unshrink: false,
            cache: ColumnCache::new(l, settings.cache_mb),
            settings: *settings,
            monitor,
            objective: 0.0,
            violation: f64::INFINITY,
        };
        for i in 0..l {
            s.update_status(i);
        }
        for i in 0..l {
            if s.status[i] != Status::Lower {
                s.fetch(i, l);
                let (a, ci, upper) = (s.alpha[i], s.c[i], s.status[i] == Status::Upper);
                let col = s.cache.column(i);
                for ((g, g_bar), &q) in s.g.iter_mut().zip(s.g_bar.iter_mut()).zip(col) {
                    let q: f64 = q.into();
                    *g += a * q;
                    if upper {
                        *g_bar += ci * q;
                    }
                }
            }
        }
        if s.monitor.is_active() {
            s.objective = s.value();
        }
        s
    }

    /// `½αᵀQα + pᵀα = ½ Σ α_i (G_i + p_i)` from the gradient (complete when no variable is shrunk).
    fn value(&self) -> f64 {
        (0..self.l).map(|i| self.alpha[i] * (self.g[i] + self.p[i])).sum::<f64>() / 2.0
    }

    fn update_status(&mut self, i: usize) {
        self.status[i] = if self.alpha[i] >= self.c[i] {
            Status::Upper
        } else if self.alpha[i] <= 0.0 {
            Status::Lower
        } else {
            Status::Free
        };
        // I_up = {y = +1, α < C} ∪ {y = -1, α > 0}; I_low = {y = +1, α > 0} ∪ {y = -1, α < C}.
        let (below_c, above_0) = (self.status[i] != Status::Upper, self.status[i] != Status::Lower);
        let (up, low) = if self.y[i] > 0.0 { (below_c, above_0) } else { (above_0, below_c) };
        self.sets[i] = if up { IN_UP } else { 0 } | if low { IN_LOW } else { 0 };
    }

    fn is_upper(&self, i: usize) -> bool {
        self.status[i] == Status::Upper
    }

    fn is_lower(&self, i: usize) -> bool {
        self.status[i] == Status::Lower
    }

    /// Makes column `i` (position) cached over positions `0..len`.
    fn fetch(&mut self, i: usize, len: usize) {
        let (q, perm) = (self.q, &self.perm);
        self.cache.fill(i, len, |start, out| q.column(perm[i], &perm[start..len], out));
    }

    /// Makes the columns `cols` (positions) cached over `0..len`, computing what is missing of up to
    /// [`BATCH`] of them at a time by [`QMatrix::columns`] over the rows from the shortest cached prefix.
    fn fetch_many(&mut self, cols: &[usize], len: usize) {
        for batch in cols.chunks(BATCH) {
            let missing: Vec<(usize, usize)> =
                batch.iter().map(|&i| (i, self.cache.column(i).len())).filter(|&(_, have)| have < len).collect();
            let Some(start) = missing.iter().map(|&(_, have)| have).min() else { continue };
            if missing.len() == 1 {
                self.fetch(missing[0].0, len);
                continue;
            }
            let (q, perm) = (self.q, &self.perm);
            let rows = &perm[start..len];
            let originals: Vec<usize> = missing.iter().map(|&(i, _)| perm[i]).collect();
            let mut block = vec![0.0; originals.len() * rows.len()];
            q.columns(&originals, rows, &mut block);
            for (&(i, _), col) in missing.iter().zip(block.chunks(rows.len())) {
                // An earlier column of the batch may have evicted this one: its head is computed again.
                self.cache.fill(i, len, |have, out| {
                    let head = start.saturating_sub(have);
                    if head > 0 {
                        q.column(perm[i], &perm[have..start], &mut out[..head]);
                    }
                    out[head..].copy_from_slice(&col[have.max(start) - start..]);
                });
            }
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.cache.swap_index(i, j);
        self.perm.swap(i, j);
        self.y.swap(i, j);
        self.p.swap(i, j);
        self.c.swap(i, j);
        self.diag.swap(i, j);
        self.alpha.swap(i, j);
        self.status.swap(i, j);
        self.sets.swap(i, j);
        self.g.swap(i, j);
        self.g_bar.swap(i, j);
    }

    fn max_iter(&self) -> usize {
        match self.settings.max_iter {
            0 => 10_000_000usize.max(self.l.saturating_mul(100)),
            m => m,
        }
    }

    fn run(&mut self) -> SmoSolution {
        let l = self.l;
        let max_iter = self.max_iter();
        let mut counter = l.min(1000) + 1;
        let mut iter = 0;
        let mut converged = false;
        while iter < max_iter {
            counter -= 1;
            if counter == 0 {
                counter = l.min(1000);
                if self.settings.shrinking {
                    self.shrink();
                }
            }
            let (i, j) = match self.select_working_set() {
                Some(pair) => pair,
                None => {
                    self.reconstruct_gradient();
                    self.active = l;
                    match self.select_working_set() {
                        Some(pair) => {
                            counter = 1; // shrink at the next iteration
                            pair
                        }
                        None => {
                            converged = true;
                            break;
                        }
                    }
                }
            };
            iter += 1;
            self.step(i, j);
            if iter % STEP_EVENTS_EVERY == 0
                && self.monitor.iteration(iter, Quantity::KktViolation, || (self.objective, self.violation))
            {
                break;
            }
        }
        if !converged && self.active < l {
            self.reconstruct_gradient();
            self.active = l;
        }
        self.finish(iter, converged)
    }

    /// WSS3; `None` when the maximal violation is below the tolerance. With `w_t = -y_t ∇_t f`:
    /// `i` is the last maximiser of `w` over `I_up`, `m = w_i`; over `I_low`, `M = min w` and
    /// `j` the last minimiser of `-(m - w_t)² / a_it`, `a_it = Q_ii + Q_tt - 2 y_i y_t Q_it`.
    fn select_working_set(&mut self) -> Option<(usize, usize)> {
        let n = self.active;
        let (y, g, sets) = (&self.y[..n], &self.g[..n], &self.sets[..n]);
        let mut gmax = f64::NEG_INFINITY;
        let mut gmax_idx = usize::MAX;
        for (t, ((&yt, &gt), &set)) in y.iter().zip(g).zip(sets).enumerate() {
            let w = -yt * gt;
            if set & IN_UP != 0 && w >= gmax {
                gmax = w;
                gmax_idx = t;
            }
        }
        if gmax_idx == usize::MAX {
            let gmax2 = y.iter().zip(g).zip(sets).filter(|(_, s)| **s & IN_LOW != 0).map(|((y, g), _)| y * g);
            self.violation = gmax + gmax2.fold(f64::NEG_INFINITY, f64::max);
            return None;
        }
        let i = gmax_idx;
        self.fetch(i, n);
        let (y, g, sets, diag) = (&self.y[..n], &self.g[..n], &self.sets[..n], &self.diag[..n]);
        let col = &self.cache.column(i)[..n];
        let (yi, qd_i) = (y[i], diag[i]);
        let mut gmax2 = f64::NEG_INFINITY;
        let mut best = usize::MAX;
        let mut obj_diff_min = f64::INFINITY;
        for (t, ((((&yt, &gt), &set), &qd_t), &q_it)) in y.iter().zip(g).zip(sets).zip(diag).zip(col).enumerate() {
            if set & IN_LOW == 0 {
                continue;
            }
            let w = -yt * gt;
            gmax2 = gmax2.max(-w);
            let grad_diff = gmax - w;
            if grad_diff > 0.0 {
                let quad = qd_i + qd_t - 2.0 * yi * yt * q_it.into();
                let obj_diff = -(grad_diff * grad_diff) / if quad > 0.0 { quad } else { TAU };
                if obj_diff <= obj_diff_min {
                    best = t;
                    obj_diff_min = obj_diff;
                }
            }
        }
        self.violation = gmax + gmax2;
        if gmax + gmax2 < self.settings.tol || best == usize::MAX {
            return None;
        }
        Some((i, best))
    }

    /// The analytic two-variable update of `α_i, α_j` and of the gradients.
    fn step(&mut self, i: usize, j: usize) {
        let n = self.active;
        self.fetch(i, n);
        self.fetch(j, n);
        let (ci, cj) = (self.c[i], self.c[j]);
        let (old_i, old_j) = (self.alpha[i], self.alpha[j]);
        let q_ij: f64 = self.cache.column(i)[j].into();
        let (g_i, g_j) = (self.g[i], self.g[j]);
        let (mut ai, mut aj) = (old_i, old_j);
        if self.y[i] != self.y[j] {
            let quad = self.diag[i] + self.diag[j] + 2.0 * q_ij;
            let delta = (-self.g[i] - self.g[j]) / if quad > 0.0 { quad } else { TAU };
            let diff = ai - aj;
            ai += delta;
            aj += delta;
            if diff > 0.0 {
                if aj < 0.0 {
                    aj = 0.0;
                    ai = diff;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = -diff;
            }
            if diff > ci - cj {
                if ai > ci {
                    ai = ci;
                    aj = ci - diff;
                }
            } else if aj > cj {
                aj = cj;
                ai = cj + diff;
            }
        } else {
            let quad = self.diag[i] + self.diag[j] - 2.0 * q_ij;
            let delta = (self.g[i] - self.g[j]) / if quad > 0.0 { quad } else { TAU };
            let sum = ai + aj;
            ai -= delta;
            aj += delta;
            if sum > ci {
                if ai > ci {
                    ai = ci;
                    aj = sum - ci;
                }
            } else if aj < 0.0 {
                aj = 0.0;
                ai = sum;
            }
            if sum > cj {
                if aj > cj {
                    aj = cj;
                    ai = sum - cj;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = sum;
            }
        }
        self.alpha[i] = ai;
        self.alpha[j] = aj;
        let (di, dj) = (ai - old_i, aj - old_j);
        if self.monitor.is_active() {
            // f(α + d) - f(α) = gᵀd + ½dᵀQd over the two moved variables.
            self.objective +=
                g_i * di + g_j * dj + 0.5 * (self.diag[i] * di * di + self.diag[j] * dj * dj) + q_ij * di * dj;
        }
        {
            let (col_i, col_j) = (&self.cache.column(i)[..n], &self.cache.column(j)[..n]);
            for ((g, &a), &b) in self.g[..n].iter_mut().zip(col_i).zip(col_j) {
                *g += a.into() * di + b.into() * dj;
            }
        }
        for k in [i, j] {
            let was_upper = self.is_upper(k);
            self.update_status(k);
            if was_upper != self.is_upper(k) {
                let l = self.l;
                self.fetch(k, l);
                let ck = if was_upper { -self.c[k] } else { self.c[k] };
                for (g, &v) in self.g_bar.iter_mut().zip(self.cache.column(k)) {
                    *g += ck * v.into();
                }
            }
        }
    }

    /// `G_i = Ḡ_i + p_i + Σ_{free j} α_j Q_ij` for the inactive `i`.
    fn reconstruct_gradient(&mut self) {
        let (n, l) = (self.active, self.l);
        if n == l {
            return;
        }
        for k in n..l {
            self.g[k] = self.g_bar[k] + self.p[k];
        }
        let free: Vec<usize> = (0..n).filter(|&k| self.status[k] == Status::Free).collect();
        // Columns in batches, each used as soon as it is computed (a cache smaller than the batch stays right).
        if free.len() * l > 2 * n * (l - n) {
            let inactive: Vec<usize> = (n..l).collect();
            for batch in inactive.chunks(BATCH) {
                self.fetch_many(batch, n);
                for &i in batch {
                    self.fetch(i, n);
                    let col = self.cache.column(i);
                    let acc: f64 = free.iter().map(|&k| self.alpha[k] * col[k].into()).sum();
                    self.g[i] += acc;
                }
            }
        } else {
            for batch in free.chunks(BATCH) {
                self.fetch_many(batch, l);
                for &i in batch {
                    self.fetch(i, l);
                    let a = self.alpha[i];
                    let col = &self.cache.column(i)[n..l];
                    for (g, &q) in self.g[n..l].iter_mut().zip(col) {
                        *g += a * q.into();
                    }
                }
            }
        }
    }

    fn be_shrunk(&self, i: usize, gmax1: f64, gmax2: f64) -> bool {
        match self.status[i] {
            Status::Upper => -self.g[i] > if self.y[i] > 0.0 { gmax1 } else { gmax2 },
            Status::Lower => self.g[i] > if self.y[i] > 0.0 { gmax2 } else { gmax1 },
            Status::Free => false,
        }
    }

    fn shrink(&mut self) {
        // gmax1 = max_{I_up} -y∇f, gmax2 = max_{I_low} y∇f
        let (mut gmax1, mut gmax2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for i in 0..self.active {
            let g = self.g[i];
            if self.y[i] > 0.0 {
                if !self.is_upper(i) {
                    gmax1 = gmax1.max(-g);
                }
                if !self.is_lower(i) {
                    gmax2 = gmax2.max(g);
                }
            } else {
                if !self.is_upper(i) {
                    gmax2 = gmax2.max(-g);
                }
                if !self.is_lower(i) {
                    gmax1 = gmax1.max(g);
                }
            }
        }
        if !self.unshrink && gmax1 + gmax2 <= 10.0 * self.settings.tol {
            self.unshrink = true;
            self.reconstruct_gradient();
            self.active = self.l;
        }
        let mut i = 0;
        while i < self.active {
            if self.be_shrunk(i, gmax1, gmax2) {
                self.active -= 1;
                while self.active > i {
                    if !self.be_shrunk(self.active, gmax1, gmax2) {
                        self.swap(i, self.active);
                        break;
                    }
                    self.active -= 1;
                }
            }
            i += 1;
        }
    }

    fn rho(&self) -> f64 {
        let (mut ub, mut lb, mut sum, mut n_free) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
        for i in 0..self.active {
            let yg = self.y[i] * self.g[i];
            match (self.status[i], self.y[i] > 0.0) {
                (Status::Upper, false) | (Status::Lower, true) => ub = ub.min(yg),
                (Status::Upper, true) | (Status::Lower, false) => lb = lb.max(yg),
                (Status::Free, _) => {
                    n_free += 1;
                    sum += yg;
                }
            }
        }
        if n_free > 0 { sum / n_free as f64 } else { (ub + lb) / 2.0 }
    }

    fn max_violation(&self) -> f64 {
        let (mut m, mut big_m) = (f64::NEG_INFINITY, f64::INFINITY);
        for i in 0..self.l {
            let v = -self.y[i] * self.g[i];
            let up = if self.y[i] > 0.0 { !self.is_upper(i) } else { !self.is_lower(i) };
            let low = if self.y[i] > 0.0 { !self.is_lower(i) } else { !self.is_upper(i) };
            if up {
                m = m.max(v);
            }
            if low {
                big_m = big_m.min(v);
            }
        }
        if m.is_finite() && big_m.is_finite() { (m - big_m).max(0.0) } else { 0.0 }
    }

    fn finish(&self, n_iter: usize, converged: bool) -> SmoSolution {
        let l = self.l;
        let rho = self.rho();
        let objective = self.value();
        let max_violation = self.max_violation();
        self.monitor.iteration(n_iter, Quantity::KktViolation, || (objective, max_violation));
        let mut alpha = vec![0.0; l];
        let mut gradient = vec![0.0; l];
        for k in 0..l {
            alpha[self.perm[k]] = self.alpha[k];
            gradient[self.perm[k]] = self.g[k];
        }
        SmoSolution {
            alpha,
            gradient,
            objective,
            rho,
            n_iter,
            converged,
            max_violation,
            n_free: self.status.iter().filter(|&&s| s == Status::Free).count(),
            n_upper: self.status.iter().filter(|&&s| s == Status::Upper).count(),
        }
    }
}
