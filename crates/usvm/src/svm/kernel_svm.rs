//! The kernel SVM (C-SVC) with per-example costs: LIBSVM's design on this crate's [`smo`] solver.
//!
//! ```text
//!     min_{w,b,ξ}  ½‖w‖² + Σ_i C_i ξ_i   s.t.  y_i(wᵀφ(x_i) + b) ≥ 1 - ξ_i,  ξ_i ≥ 0,    C_i = C·c_i
//!     dual:  min_α  ½ αᵀQα - 1ᵀα   s.t.  yᵀα = 0,  0 ≤ α_i ≤ C_i,   Q_ij = y_i y_j k(x_i, x_j)
//! ```
//!
//! `c_i` are the dataset's weights (relevance degrees; the KSVM and RD-KSVM baselines of the thesis,
//! chapter 4); examples with `c_i = 0` take no part (`α_i = 0`). The decision function is
//! `f(x) = Σ_i α_i y_i k(x_i, x) + b` with `b = -ρ` from the KKT conditions (see [`smo`]). More than two
//! classes: one-vs-one (LIBSVM's: one binary problem per pair of classes on their examples, prediction by
//! votes) or one-vs-rest (one per class), sharing the support set in one [`KernelModel`].
//!
//! Kernel values are cached and, for dense rows, computed in single precision by default (LIBSVM's and
//! scikit-learn's `f32` cache; rows rounded to `f32`, centred first for the RBF kernel, dot products summed
//! in `f64`), or in double precision ([`Precision`]).
//!
//! With [`Kernel::Precomputed`] the features are rows of the Gram matrix in LIBSVM's layout: column 0 holds
//! the example's serial number `s ≥ 1` and column `s'` holds `k(x, x_{s'})` (see [`crate::kernel`]).
//!
//! ```
//! use ndarray::array;
//! use usvm::{Dataset, Kernel};
//! use usvm::svm::KernelSvmParams;
//! let x = array![[0.0, 0.0], [0.2, 0.1], [2.0, 2.0], [2.1, 1.8]];
//! let data = Dataset::dense(x, vec![0, 0, 1, 1]).with_weights(vec![1.0, 0.5, 1.0, 1.0]);
//! let fit = KernelSvmParams { kernel: Kernel::Rbf { gamma: 0.5 }, c: 10.0, ..Default::default() }.fit(&data).unwrap();
//! assert!(fit.reports[0].converged());
//! assert_eq!(fit.model.predict(&data.features).unwrap(), vec![0, 0, 1, 1]);
//! ```

use std::borrow::Cow;

use ndarray::Array2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{CsrMatrix, Dataset, Features, dot};
use crate::error::{Error, Result, invalid};
use crate::kernel::cache::Precision;
use crate::kernel::{Kernel, serial, squared_norms};
use crate::model::{KernelModel, Multiclass, class_pairs};
use crate::ovr;
use crate::progress::Monitor;
use crate::report::Termination;
use crate::solver::smo::{self, QMatrix, SmoSettings};

/// Settings of the kernel SVM: plain data, validated in [`KernelSvmParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSvmParams {
    /// The kernel.
    pub kernel: Kernel,
    /// The cost `C > 0`; example `i` gets `C·c_i`.
    pub c: f64,
    /// Stopping tolerance on the maximal KKT violation (LIBSVM's `-e`).
    pub tol: f64,
    /// Kernel cache size in megabytes, per binary problem (LIBSVM's `-m`).
    pub cache_mb: f64,
    /// Maximum SMO iterations per binary problem; 0 means `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
    /// Shrinking heuristics (LIBSVM's `-h`).
    pub shrinking: bool,
    /// The kernel values' precision: [`Precision::Single`] (LIBSVM's and `SVC`'s `f32` cache) or
    /// [`Precision::Double`] (the problem to the last digit).
    pub precision: Precision,
    /// More than two classes: one-vs-one (LIBSVM's and `SVC`'s scheme, the default) or one-vs-rest.
    pub multiclass: Multiclass,
}

impl Default for KernelSvmParams {
    /// RBF with `γ = 1`, `C = 1`, tolerance 1e-3, 100 MB cache, shrinking, single-precision kernel values,
    /// one-vs-one (LIBSVM's defaults, except that LIBSVM's default `γ = 1/n_features` depends on the data:
    /// set it explicitly).
    fn default() -> Self {
        let s = SmoSettings::default();
        KernelSvmParams {
            kernel: Kernel::Rbf { gamma: 1.0 },
            c: 1.0,
            tol: s.tol,
            cache_mb: s.cache_mb,
            max_iter: s.max_iter,
            shrinking: s.shrinking,
            precision: Precision::Single,
            multiclass: Multiclass::OneVsOne,
        }
    }
}

/// What solving one binary problem reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSvmReport {
    /// The dual objective `½αᵀQα - 1ᵀα` (LIBSVM's `obj`; minus the primal optimum at convergence).
    pub objective: f64,
    /// SMO iterations.
    pub n_iter: usize,
    /// Converged (KKT violation ≤ tol) or at the iteration limit.
    pub termination: Termination,
    /// The final maximal KKT violation `m(α) - M(α)`.
    pub max_violation: f64,
    /// The intercept `b = -ρ`.
    pub intercept: f64,
    /// Support vectors (`α_i > 0`) and those at their bound `α_i = C_i`.
    pub n_support: usize,
    /// Support vectors at their bound `α_i = C_i`.
    pub n_bounded: usize,
}

/// A fitted kernel SVM.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSvmFit {
    /// The fitted model.
    pub model: KernelModel,
    /// One report per binary problem (one, or one per class for one-vs-rest).
    pub reports: Vec<KernelSvmReport>,
    /// The training indices of the model's support vectors, in the model's order.
    pub support: Vec<usize>,
    /// `α_i` of every training example, one row per binary problem.
    pub alpha: Array2<f64>,
}

impl KernelSvmReport {
    /// Whether the KKT rule was met.
    pub fn converged(&self) -> bool {
        self.termination == Termination::Converged
    }
}

impl KernelSvmParams {
    /// The SMO settings of these parameters.
    pub fn settings(&self) -> SmoSettings {
        SmoSettings {
            tol: self.tol,
            cache_mb: self.cache_mb,
            shrinking: self.shrinking,
            max_iter: self.max_iter,
            precision: self.precision,
        }
    }

    fn validate(&self) -> Result<()> {
        self.kernel.validate()?;
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(invalid("C", self.c, "must be positive and finite"));
        }
        self.settings().validate()
    }

    /// Fits the SVM: binary for two classes (`classes[1]` positive), one-vs-rest otherwise.
    pub fn fit(&self, data: &Dataset) -> Result<KernelSvmFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting the SMO's progress to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<KernelSvmFit> {
        self.validate()?;
        data.validate()?;
        if self.kernel == Kernel::Precomputed {
            validate_serials(&data.features)?;
        }
        let l = data.n_samples();
        // Examples with zero weight have α_i = 0: leave them out of the problem.
        let keep: Vec<usize> = match &data.weights {
            Some(w) => (0..l).filter(|&i| w[i] > 0.0).collect(),
            None => (0..l).collect(),
        };
        let x: Cow<'_, Features> =
            if keep.len() == l { Cow::Borrowed(&data.features) } else { Cow::Owned(data.features.select_rows(&keep)) };
        let costs: Vec<f64> = keep.iter().map(|&i| self.c * data.weights.as_ref().map_or(1.0, |w| w[i])).collect();
        let mut gram = Gram::new(self.kernel, &x, self.precision);
        let classes = data.classes();
        // More classes: every binary problem (one-vs-rest or one-vs-one) reads entries of the same K (only the
        // signs and the rows differ), so K is computed once when it fits in one problem's cache budget.
        let n = x.n_samples() as f64;
        if classes.len() > 2 && self.kernel != Kernel::Precomputed && n * n * 8.0 <= self.cache_mb * (1u64 << 20) as f64
        {
            gram.precompute();
        }

        let settings = self.settings();
        // The binary problem over the kept examples `rows` (all when `None`) with signs `y` (`sign` indexed by
        // kept example): its `α` and report.
        let solve = |rows: Option<&[usize]>, sign: &[f64], y: &[f64], monitor: Monitor<'_>| {
            let c: Cow<'_, [f64]> = rows.map_or(Cow::Borrowed(&costs[..]), |r| r.iter().map(|&m| costs[m]).collect());
            let q = SignedGram { gram: &gram, y: sign, rows };
            let s = smo::solve_monitored(&q, &vec![-1.0; y.len()], y, &c, None, &settings, monitor)?;
            let report = KernelSvmReport {
                objective: s.objective,
                n_iter: s.n_iter,
                termination: Termination::from_converged(s.converged),
                max_violation: s.max_violation,
                intercept: -s.rho,
                n_support: s.alpha.iter().filter(|&&a| a > 0.0).count(),
                n_bounded: s.n_upper,
            };
            Ok::<_, Error>((s.alpha, report))
        };
        // Class index of each kept example.
        let class_of: Vec<usize> =
            keep.iter().map(|&i| classes.binary_search(&data.labels[i]).expect("a class of the data")).collect();
        let one_vs_one = classes.len() > 2 && self.multiclass == Multiclass::OneVsOne;
        let problems: Vec<(Option<Vec<usize>>, Vec<f64>)> = if one_vs_one {
            // Pair (a, b): the examples of the two classes, a positive (LIBSVM's convention).
            class_pairs(classes.len())
                .into_iter()
                .map(|(a, b)| {
                    let rows: Vec<usize> = (0..keep.len()).filter(|&m| class_of[m] == a || class_of[m] == b).collect();
                    let sign = class_of.iter().map(|&c| if c == a { 1.0 } else { -1.0 }).collect();
                    (Some(rows), sign)
                })
                .collect()
        } else {
            ovr::positives(&classes)
                .into_iter()
                .map(|positive| (None, ovr::signs(keep.iter().map(|&i| &data.labels[i]), positive)))
                .collect()
        };
        let (n_problems, mut coef) = (problems.len(), Array2::zeros((problems.len(), l)));
        let mut alpha = Array2::zeros((n_problems, l));
        let (mut intercept, mut reports) = (Vec::with_capacity(n_problems), Vec::with_capacity(n_problems));
        for (k, (rows, sign)) in problems.iter().enumerate() {
            let members: Vec<usize> = rows.clone().unwrap_or_else(|| (0..keep.len()).collect());
            let y: Vec<f64> = members.iter().map(|&m| sign[m]).collect();
            if y.iter().all(|&v| v == y[0]) {
                // A class (or, one-vs-rest, its complement) has no example of positive weight.
                return Err(Error::SingleClass { label: classes[class_of[members[0]]] });
            }
            let (a, report) = solve(rows.as_deref(), sign, &y, monitor.problem(k, n_problems))?;
            for ((&m, &a), &y) in members.iter().zip(&a).zip(&y) {
                alpha[[k, keep[m]]] = a;
                coef[[k, keep[m]]] = a * y;
            }
            intercept.push(report.intercept);
            reports.push(report);
        }
        let mut support: Vec<usize> = (0..l).filter(|&j| coef.column(j).iter().any(|&c| c != 0.0)).collect();
        let mut n_support = Vec::new();
        if one_vs_one {
            // Grouped by class (LIBSVM's layout); in training order within a class.
            let class = |j: usize| classes.binary_search(&data.labels[j]).expect("a class of the data");
            support.sort_by_key(|&j| class(j));
            n_support = (0..classes.len()).map(|c| support.iter().filter(|&&j| class(j) == c).count()).collect();
        }
        let coef = coef.select(ndarray::Axis(1), &support);
        let support_rows = match self.kernel {
            // Only the serial numbers are needed to evaluate a precomputed kernel.
            Kernel::Precomputed => {
                let rows: Vec<Vec<(usize, f64)>> =
                    support.iter().map(|&i| vec![(0, serial(&data.features, i))]).collect();
                Features::Sparse(CsrMatrix::from_rows(data.n_features(), &rows)?)
            }
            _ => data.features.select_rows(&support),
        };
        let multiclass = if one_vs_one { Multiclass::OneVsOne } else { Multiclass::OneVsRest };
        let model =
            KernelModel { kernel: self.kernel, classes, support: support_rows, coef, intercept, multiclass, n_support };
        Ok(KernelSvmFit { model, reports, support, alpha })
    }
}

/// Precomputed rows: column 0 must hold a serial number, an integer in `1..n_features`.
fn validate_serials(x: &Features) -> Result<()> {
    let width = x.n_features();
    for i in 0..x.n_samples() {
        let s = serial(x, i);
        if !(s >= 1.0 && s.fract() == 0.0 && (s as usize) < width) {
            return Err(invalid(
                "precomputed kernel serial number (column 0)",
                format!("{s} (example {i})"),
                "must be an integer between 1 and the number of kernel columns",
            ));
        }
    }
    Ok(())
}

/// Kernel columns `k(x_r, x_i)` over the training rows, computed on demand, or read from the whole
/// matrix when it was computed once (see [`Gram::precompute`]).
pub struct Gram<'a> {
    kernel: Kernel,
    /// The rows, row-major (a column-major matrix is copied once: columns read whole rows).
    x: Cow<'a, Features<'a>>,
    norms: Vec<f64>,
    diag: Vec<f64>,
    /// Dense rows in `f32`, when the columns are computed in single precision.
    single: Option<SingleRows>,
    /// `K` (`ℓ × ℓ`, row-major), when precomputed.
    full: Option<Array2<f64>>,
}

/// Dense rows rounded to `f32` (half the memory a column's pass reads), centred first for the RBF kernel
/// (which depends on differences only: centring keeps the rounding relative to the spread of the data,
/// not to its offset), with their squared norms in `f64`.
struct SingleRows {
    data: Vec<f32>,
    d: usize,
    norms: Vec<f64>,
}

impl SingleRows {
    fn new(kernel: Kernel, m: &crate::features::DenseMatrix) -> SingleRows {
        let m = m.view();
        let d = m.ncols();
        let centre = match kernel {
            Kernel::Rbf { .. } => m.mean_axis(ndarray::Axis(0)).unwrap_or_else(|| ndarray::Array1::zeros(d)),
            _ => ndarray::Array1::zeros(d),
        };
        let mut data = Vec::with_capacity(m.len());
        for row in m.rows() {
            data.extend(row.iter().zip(&centre).map(|(v, c)| (v - c) as f32));
        }
        let norms = data.chunks(d.max(1)).map(|r| crate::linalg::dot_f32(r, r)).collect();
        SingleRows { data, d, norms }
    }
}

/// Columns with at least this many entries times features are computed in parallel (with more than one
/// thread in the pool). A smaller column costs about as much as handing it to the pool and waiting for it:
/// from a one-thread pool, SMO on the binary digits problem (1,437 × 64) took 1.8× as long with its columns
/// handed over; on two threads, the 20,000 × 10 problem took 1.05–1.2× as long with parallel columns.
const PARALLEL_WORK: usize = 1 << 18;

impl<'a> Gram<'a> {
    /// The Gram matrix of `x` under `kernel` (its diagonal precomputed). With [`Precision::Single`] and dense
    /// rows, the columns are computed from the rows rounded to `f32` (products and sums in `f64`); the
    /// diagonal stays exact.
    pub fn new(kernel: Kernel, x: &'a Features, precision: Precision) -> Self {
        let l = x.n_samples();
        let norms = if kernel == Kernel::Precomputed { vec![0.0; l] } else { squared_norms(x) };
        let x = x.row_major();
        let single = match (&*x, precision) {
            (Features::Dense(m), Precision::Single) if kernel != Kernel::Precomputed => {
                Some(SingleRows::new(kernel, m))
            }
            _ => None,
        };
        let mut g = Gram { kernel, x, norms, diag: Vec::new(), single, full: None };
        g.diag = (0..l).map(|i| g.entry(i, i)).collect();
        g
    }

    /// `ℓ`.
    pub fn len(&self) -> usize {
        self.x.n_samples()
    }

    /// Whether `ℓ = 0`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `k(x_i, x_i)`.
    pub fn diagonal(&self, i: usize) -> f64 {
        self.diag[i]
    }

    fn entry(&self, r: usize, i: usize) -> f64 {
        match self.kernel {
            Kernel::Precomputed => precomputed_entry(&self.x, r, serial(&self.x, i)),
            k => k.from_dot(self.x.row_dot(r, &self.x.row_dense(i)), self.norms[r], self.norms[i]),
        }
    }

    /// Computes the whole `K` once by blocked matrix products ([`Kernel::gram`]), so that every later
    /// column is a gather: worth it when several binary problems (one-vs-rest) read the same columns.
    /// When the matrix does not fit in memory the columns stay computed on demand.
    pub fn precompute(&mut self) {
        self.full = self.kernel.gram(&self.x).ok();
    }

    /// `out[k] = s_k · k(x_{rows[k]}, x_i)`, with `s_k = sign[rows[k]]` when given.
    pub fn column(&self, i: usize, rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        if let Some(full) = &self.full {
            // K is symmetric: column i is row i, contiguous.
            let row = full.row(i);
            let row = row.as_slice().expect("standard layout");
            match sign {
                Some(s) => out.iter_mut().zip(rows).for_each(|(v, &r)| *v = s[r] * row[r]),
                None => out.iter_mut().zip(rows).for_each(|(v, &r)| *v = row[r]),
            }
            return;
        }
        let work = rows.len() * self.x.n_features().max(1);
        let run = |rows: &[usize], out: &mut [f64]| self.column_block(i, rows, sign, out);
        if work >= PARALLEL_WORK && rows.len() >= 512 && rayon::current_num_threads() > 1 {
            let chunk = rows.len().div_ceil(4 * rayon::current_num_threads()).max(256);
            out.par_chunks_mut(chunk).zip(rows.par_chunks(chunk)).for_each(|(o, r)| run(r, o));
        } else {
            run(rows, out);
        }
    }

    /// Several columns: `out[c·n + k] = s_k · k(x_{rows[k]}, x_{cols[c]})`, `n = rows.len()`. Dense rows are
    /// read once for all the columns (rows split among the threads), with the same values, bit for bit, as
    /// [`Self::column`]'s.
    pub fn columns(&self, cols: &[usize], rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        let n = rows.len();
        match (&self.single, &*self.x) {
            _ if self.full.is_some() || self.kernel == Kernel::Precomputed => {}
            (Some(single), _) => {
                return self.dense_columns(&single.data, single.d, &single.norms, cols, rows, sign, out);
            }
            (None, Features::Dense(m)) => {
                let data = m.as_slice().expect("row-major (Gram::new)");
                return self.dense_columns(data, m.ncols(), &self.norms, cols, rows, sign, out);
            }
            _ => {}
        }
        for (&i, out) in cols.iter().zip(out.chunks_mut(n.max(1))) {
            self.column(i, rows, sign, out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn dense_columns<P: Value>(
        &self,
        data: &[P],
        d: usize,
        norms: &[f64],
        cols: &[usize],
        rows: &[usize],
        sign: Option<&[f64]>,
        out: &mut [f64],
    ) {
        let (n, width) = (rows.len(), cols.len());
        // A tile of rows × columns, row-major: each row read once, dotted with every column.
        let tile = |rows: &[usize]| -> Vec<f64> {
            let mut t = Vec::with_capacity(rows.len() * width);
            for &r in rows {
                let xr = &data[r * d..(r + 1) * d];
                t.extend(cols.iter().map(|&c| P::dot(xr, &data[c * d..(c + 1) * d])));
            }
            t
        };
        let threads = rayon::current_num_threads();
        let tiles: Vec<Vec<f64>> = if n * width * d.max(1) >= PARALLEL_WORK && threads > 1 {
            rows.par_chunks(n.div_ceil(threads).max(1)).map(tile).collect()
        } else {
            vec![tile(rows)]
        };
        for (k, dots) in tiles.iter().flat_map(|t| t.chunks(width.max(1))).enumerate() {
            for (c, &v) in dots.iter().enumerate() {
                out[c * n + k] = v;
            }
        }
        for (&i, column) in cols.iter().zip(out.chunks_mut(n.max(1))) {
            let ni = norms[i];
            match self.kernel {
                Kernel::Rbf { gamma } => {
                    for (v, &r) in column.iter_mut().zip(rows) {
                        *v = -gamma * (norms[r] + ni - 2.0 * *v).max(0.0);
                    }
                    exp_in_place(column);
                }
                k => column.iter_mut().zip(rows).for_each(|(v, &r)| *v = k.from_dot(*v, norms[r], ni)),
            }
            if let Some(sign) = sign {
                column.iter_mut().zip(rows).for_each(|(v, &r)| *v *= sign[r]);
            }
        }
    }

    fn column_block(&self, i: usize, rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        let s = |r: usize| sign.map_or(1.0, |s| s[r]);
        match (self.kernel, &self.single, &*self.x) {
            (Kernel::Precomputed, _, x) => {
                let si = serial(x, i);
                for (v, &r) in out.iter_mut().zip(rows) {
                    *v = s(r) * precomputed_entry(x, r, si);
                }
            }
            (Kernel::Rbf { gamma }, Some(single), _) => {
                let rbf = RbfColumn { data: &single.data[..], d: single.d, norms: &single.norms, gamma };
                rbf.fill(i, rows, sign, out);
            }
            (Kernel::Rbf { gamma }, None, Features::Dense(m)) => {
                let data = m.as_slice().expect("row-major (Gram::new)");
                let rbf = RbfColumn { data, d: m.ncols(), norms: &self.norms, gamma };
                rbf.fill(i, rows, sign, out);
            }
            (k, Some(single), _) => dense_column(k, &single.data, single.d, &single.norms, i, rows, sign, out),
            (k, None, Features::Dense(m)) => {
                let data = m.as_slice().expect("row-major (Gram::new)");
                dense_column(k, data, m.ncols(), &self.norms, i, rows, sign, out);
            }
            (k, None, x) => {
                let xi = x.row_dense(i);
                let ni = self.norms[i];
                for (v, &r) in out.iter_mut().zip(rows) {
                    *v = s(r) * k.from_dot(x.row_dot(r, &xi), self.norms[r], ni);
                }
            }
        }
    }
}

/// An RBF column over dense row-major rows: `-γ‖x_r - x_i‖² = -γ(‖x_r‖² + ‖x_i‖² - 2x_rᵀx_i)` for the
/// block, one pass of [`exp_in_place_with`], then the signs. On x86-64 CPUs with AVX2 and FMA the same code runs
/// compiled for them (4 lanes and fused multiply-adds instead of SSE2's 2 lanes; chosen at run time).
struct RbfColumn<'d, P: Value> {
    data: &'d [P],
    d: usize,
    norms: &'d [f64],
    gamma: f64,
}

/// A stored feature value: `f64`, or `f32` (single-precision rows); dot products are summed in `f64`.
trait Value: Copy + Sync {
    fn dot(a: &[Self], b: &[Self]) -> f64;
}

impl Value for f64 {
    #[inline(always)]
    fn dot(a: &[f64], b: &[f64]) -> f64 {
        dot(a, b)
    }
}

impl Value for f32 {
    #[inline(always)]
    fn dot(a: &[f32], b: &[f32]) -> f64 {
        crate::linalg::dot_f32(a, b)
    }
}

/// `out[k] = s_k · k(x_{rows[k]}, x_i)` for a kernel of dot products over dense row-major rows with squared
/// norms `norms`.
#[allow(clippy::too_many_arguments)]
fn dense_column<P: Value>(
    k: Kernel,
    data: &[P],
    d: usize,
    norms: &[f64],
    i: usize,
    rows: &[usize],
    sign: Option<&[f64]>,
    out: &mut [f64],
) {
    let xi = &data[i * d..(i + 1) * d];
    let ni = norms[i];
    for (v, &r) in out.iter_mut().zip(rows) {
        let kv = k.from_dot(P::dot(&data[r * d..(r + 1) * d], xi), norms[r], ni);
        *v = sign.map_or(kv, |s| s[r] * kv);
    }
}

impl<P: Value> RbfColumn<'_, P> {
    fn fill(&self, i: usize, rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
            return unsafe { self.fill_avx2(i, rows, sign, out) };
        }
        self.fill_generic::<false>(i, rows, sign, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn fill_avx2(&self, i: usize, rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        self.fill_generic::<true>(i, rows, sign, out);
    }

    #[inline(always)]
    fn fill_generic<const FMA: bool>(&self, i: usize, rows: &[usize], sign: Option<&[f64]>, out: &mut [f64]) {
        let (data, d) = (self.data, self.d);
        let xi = &data[i * d..(i + 1) * d];
        let ni = self.norms[i];
        for (v, &r) in out.iter_mut().zip(rows) {
            let d2 = self.norms[r] + ni - 2.0 * P::dot(&data[r * d..(r + 1) * d], xi);
            *v = -self.gamma * d2.max(0.0);
        }
        exp_in_place_with::<FMA>(out);
        if let Some(sign) = sign {
            for (v, &r) in out.iter_mut().zip(rows) {
                *v *= sign[r];
            }
        }
    }
}

/// `v ← exp(v)` for `v ≤ 0` by [`exp_in_place_with`], with fused multiply-adds on CPUs with AVX2 and FMA
/// (the same choice, so the same bits, as [`RbfColumn::fill`]).
fn exp_in_place(values: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        #[target_feature(enable = "avx2,fma")]
        fn fused(values: &mut [f64]) {
            exp_in_place_with::<true>(values);
        }
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { fused(values) };
    }
    exp_in_place_with::<false>(values);
}

/// `a·b + c`, fused when `FMA` (only inside functions compiled with the `fma` target feature, where
/// `mul_add` is one instruction; elsewhere it would be a library call).
#[inline(always)]
fn mul_add<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// `v ← exp(v)` for `v ≤ 0`: Cody–Waite reduction `v = k ln2 + r`, `|r| ≤ ln2/2`, a degree-13 Taylor
/// polynomial (truncation below 2e-16 relative), and `2^k` by exponent bits. Branch-free, so the loop
/// vectorises; within 2 ulp of `f64::exp`. Arguments below -708 give about 3e-308 instead of a subnormal.
/// Fused multiply-adds in the polynomial when `FMA`.
#[inline(always)]
fn exp_in_place_with<const FMA: bool>(values: &mut [f64]) {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const ROUND: f64 = 6_755_399_441_055_744.0; // 1.5 · 2⁵²: adding it rounds to an integer
    for v in values.iter_mut() {
        let x = v.max(-708.0);
        let t = x * LOG2E + ROUND;
        let k = t - ROUND;
        let r = (x - k * LN2_HI) - k * LN2_LO;
        let mut p = 1.0 / 6_227_020_800.0;
        for c in EXP_TAYLOR {
            p = mul_add::<FMA>(p, r, c);
        }
        // k ∈ [-1022, 0]: the low bits of t hold k in two's complement.
        let bits = (t.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
        *v = p * f64::from_bits(((bits + 1023) as u64) << 52);
    }
}

/// `1/12!, …, 1/2!, 1, 1`: the Taylor coefficients of `exp` after `1/13!`, for Horner's rule.
const EXP_TAYLOR: [f64; 13] = [
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `x_r[s]` (0 outside the row's stored entries).
fn precomputed_entry(x: &Features, r: usize, s: f64) -> f64 {
    let s = s as usize;
    match x {
        Features::Dense(m) => m.row(r).get(s).copied().unwrap_or(0.0),
        Features::Sparse(m) => {
            let (idx, val) = m.row(r);
            u32::try_from(s).ok().and_then(|s| idx.binary_search(&s).ok()).map_or(0.0, |k| val[k])
        }
    }
}

/// `Q_ij = y_i y_j k(x_i, x_j)` over the Gram rows `rows` (all when `None`), `y` indexed by Gram row.
pub(crate) struct SignedGram<'g, 'a> {
    pub(crate) gram: &'g Gram<'a>,
    pub(crate) y: &'g [f64],
    pub(crate) rows: Option<&'g [usize]>,
}

impl SignedGram<'_, '_> {
    /// The Gram row of variable `i`.
    fn row(&self, i: usize) -> usize {
        self.rows.map_or(i, |r| r[i])
    }
}

impl QMatrix for SignedGram<'_, '_> {
    fn len(&self) -> usize {
        self.rows.map_or(self.gram.len(), <[usize]>::len)
    }
    fn diagonal(&self, i: usize) -> f64 {
        self.gram.diagonal(self.row(i))
    }
    fn column(&self, i: usize, rows: &[usize], out: &mut [f64]) {
        let i = self.row(i);
        match self.rows {
            None => self.gram.column(i, rows, Some(self.y), out),
            Some(members) => {
                let mapped: Vec<usize> = rows.iter().map(|&k| members[k]).collect();
                self.gram.column(i, &mapped, Some(self.y), out);
            }
        }
        if self.y[i] < 0.0 {
            out.iter_mut().for_each(|v| *v = -*v);
        }
    }
    fn columns(&self, cols: &[usize], rows: &[usize], out: &mut [f64]) {
        let cols: Vec<usize> = cols.iter().map(|&i| self.row(i)).collect();
        let rows: Cow<'_, [usize]> = match self.rows {
            None => Cow::Borrowed(rows),
            Some(members) => rows.iter().map(|&k| members[k]).collect(),
        };
        self.gram.columns(&cols, &rows, Some(self.y), out);
        for (&i, column) in cols.iter().zip(out.chunks_mut(rows.len().max(1))) {
            if self.y[i] < 0.0 {
                column.iter_mut().for_each(|v| *v = -*v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked columns equal the single ones bit for bit (every kernel of dot products, both
    /// precisions, with signs, on any rows), so that the cache's contents do not depend on how they were
    /// computed.
    #[test]
    fn blocked_columns_equal_single_columns_bit_for_bit() {
        let x = Features::dense(ndarray::Array2::from_shape_fn((300, 37), |(i, j)| {
            ((i * 31 + j * 7) % 23) as f64 / 9.0 - 1.2
        }));
        let sign: Vec<f64> = (0..300).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let rows: Vec<usize> = (0..300).rev().step_by(2).collect();
        let cols = [5, 0, 299, 17, 42];
        for kernel in
            [Kernel::Rbf { gamma: 0.3 }, Kernel::Linear, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }]
        {
            for precision in [Precision::Single, Precision::Double] {
                let gram = Gram::new(kernel, &x, precision);
                let mut block = vec![0.0; cols.len() * rows.len()];
                gram.columns(&cols, &rows, Some(&sign), &mut block);
                for (&c, got) in cols.iter().zip(block.chunks(rows.len())) {
                    let mut want = vec![0.0; rows.len()];
                    gram.column(c, &rows, Some(&sign), &mut want);
                    assert!(
                        got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{kernel:?} {precision:?} column {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn fast_exp_is_within_two_ulp() {
        let mut worst: f64 = 0.0;
        let xs: Vec<f64> = (0..200_001).map(|k| -700.0 * (k as f64 / 200_000.0).powi(2)).collect();
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "fma")]
        fn fused(v: &mut [f64]) {
            super::exp_in_place_with::<true>(v);
        }
        let mut variants: Vec<fn(&mut [f64])> = vec![super::exp_in_place_with::<false>];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports FMA (checked at run time).
            variants.push(|v| unsafe { fused(v) });
        }
        for exp in variants {
            let mut ys = xs.clone();
            exp(&mut ys);
            for (x, y) in xs.iter().zip(&ys) {
                let want = x.exp();
                worst = worst.max((y - want).abs() / want);
            }
            assert!(worst <= 2.0 * f64::EPSILON, "{worst:e}");
            let mut edge = [0.0, -0.0, -1e-300, -745.0, -1e6];
            exp(&mut edge);
            assert_eq!(&edge[..3], &[1.0, 1.0, 1.0]);
            assert!(edge[3] < 1e-307 && edge[4] < 1e-307 && edge[4] >= 0.0);
        }
    }
}
