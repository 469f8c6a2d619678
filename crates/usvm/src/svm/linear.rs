//! Linear maximum-margin classifiers on uncertain data: LSVM-GSU (in the original space or in linear
//! subspaces) and the papers' baselines LSVM, LSVM-iso, LSVM-sampling and Power SVM.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Covariances, Dataset, LinearSvmParams};
//! let x = array![[1.0, 2.0], [2.0, 3.0], [-1.0, -1.5], [-2.0, -2.0]];
//! let var = array![[0.1, 0.1], [0.2, 0.1], [0.1, 0.3], [0.1, 0.1]];
//! let data = Dataset::dense(x, vec![1, 1, 0, 0]).with_covariances(Covariances::diagonal(var));
//! let fit = LinearSvmParams { lambda: 0.1, ..Default::default() }.fit(&data).unwrap();
//! assert!(fit.reports[0].converged());
//! assert_eq!(fit.model.predict(&data.features).unwrap(), vec![1, 1, 0, 0]);
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::alternating;
use super::transform::{power_radii, sample_gaussians};
use crate::covariance::{Covariances, NoCovariance};
use crate::data::{Dataset, Features};
use crate::error::{Result, invalid};
use crate::loss::{BallHinge, ExpectedHinge, MarginLoss};
use crate::model::{Coefficients, LinearModel};
use crate::objective::{Objective, Problem};
use crate::ovr;
use crate::progress::Monitor;
use crate::report::{FitReport, Route, Termination};
use crate::solver::columns::UsedColumns;
use crate::solver::dual_cd::{self, DualCdSettings, DualLoss};
use crate::solver::exact::{self, ExactSettings};
use crate::solver::pegasos::{self, SgdSettings};
use crate::solver::{hinge_newton, hinge_polish, hinge_qp};

/// Which linear method to fit. Every method minimises `λ/2‖w‖² + (1/ℓ) Σ c_i L_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum LinearMethod {
    /// LSVM-GSU: the expected hinge loss under each example's Gaussian.
    Gsu,
    /// LSVM-GSU learnt in per-example linear subspaces keeping a fraction `p` of the variance.
    GsuSubspace {
        /// The fraction `p ∈ (0, 1]` of each `Σ_i`'s variance kept.
        variance_fraction: f64,
    },
    /// LSVM: the hinge loss on the means; covariances are ignored.
    Hinge,
    /// LSVM-iso: GSU with every `Σ_i` replaced by `(tr Σ_i / n) I`.
    Iso,
    /// LSVM-sampling: the hinge loss on `samples` draws from each Gaussian (weight `c_i / samples` each).
    Sampling {
        /// Draws per example.
        samples: usize,
        /// The seed of the draws.
        seed: u64,
    },
    /// Power SVM: the hinge at the best point of a ball of radius `r_i = scale · √(tr Σ_i / n)`.
    Power {
        /// The radius scale `R ≥ 0`.
        radius_scale: f64,
    },
}

/// Which solver to use.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum Solver {
    /// Newton-CG with an exact line search and a vanishing floor on `σ_i` (see `solver::exact`).
    Exact(ExactSettings),
    /// The thesis' mini-batch SGD (Algorithm 1).
    Sgd(SgdSettings),
}

/// Settings of a linear classifier: plain data, validated in [`LinearSvmParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearSvmParams {
    /// The method.
    pub method: LinearMethod,
    /// `λ > 0` in `λ/2‖w‖²` (`C = 1/(λℓ)`).
    pub lambda: f64,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: Solver,
    /// Power SVM only: maximum alternating rounds.
    pub max_rounds: usize,
}

impl Default for LinearSvmParams {
    fn default() -> Self {
        LinearSvmParams {
            method: LinearMethod::Gsu,
            lambda: 1e-2,
            fit_intercept: true,
            solver: Solver::Exact(ExactSettings::default()),
            max_rounds: 100,
        }
    }
}

/// Power SVM's alternating rounds stop when a round lowers the objective by less than this, relatively.
pub(crate) const POWER_TOL: f64 = 1e-6;

/// A plain-hinge fit that chose its route from the data hands over to another route at most this often.
const MAX_HANDOVERS: usize = 3;
/// The QP route ([`Route::Qp`]) is taken automatically only where its matrix of rows, `ℓ × (n + 1)` floats,
/// or the non-zeros with more features than examples, holds at most this many entries (128 MB).
const QP_MAX_ENTRIES: usize = 1 << 24;
/// ... and, with more features than examples, at most this many examples.
const QP_MAX_WIDE_EXAMPLES: usize = 2000;

/// Whether the QP route fits the problem's size ([`QP_MAX_ENTRIES`], [`QP_MAX_WIDE_EXAMPLES`]).
fn qp_applies(x: &Features) -> bool {
    let (l, p) = (x.n_samples(), x.n_features() + 1);
    if l >= p {
        l.saturating_mul(p) <= QP_MAX_ENTRIES
    } else {
        let nnz = match x {
            Features::Dense(a) => a.len(),
            Features::Sparse(m) => m.values.len(),
        };
        l <= QP_MAX_WIDE_EXAMPLES && nnz <= QP_MAX_ENTRIES
    }
}
/// The working set of the QP route after another route, where `n ≪ ℓ`: the `50 (n + 1)` examples nearest
/// the margin of the best point so far (at least 5,000), if that is at most half the examples and their
/// rows fit [`QP_MAX_ENTRIES`]. Where 10⁶ overlapping rows crowd the margin, dual CD's exact finish on
/// `4(n + 1)` rows and the primal route's stages both stall short of `10⁻¹⁰` (10⁶ × 100, λ = 10⁻⁵: a gap
/// of 4·10⁻¹⁰ after 46 s), and the whole QP is too large; where it is not, the working set is still the
/// cheaper (20,000 × 100 at λ = 10⁻⁷: 0.14 s, 1.07 s over every example).
fn qp_working_set(x: &Features) -> Option<usize> {
    let (l, p) = (x.n_samples(), x.n_features() + 1);
    let working = hinge_polish::working_set_size(p);
    (2 * working <= l && working.saturating_mul(p) <= QP_MAX_ENTRIES).then_some(working)
}

/// Whether the primal routes (Newton on the smoothed hinge: [`Route::Primal`], and the smoothing
/// continuation that ends a fit no route certified) suit the problem's shape: `n + 1 ≤ ℓ`. With more
/// coordinates than examples the dual's system is the smaller one, and Newton over `n` coordinates crawls
/// at a small λ (hashed text, 24,177 × 2²⁰ at λ = 10⁻⁶: minutes where dual coordinate descent with its
/// exact finish on the free rows takes a second).
fn primal_applies(x: &Features) -> bool {
    x.n_features() < x.n_samples()
}

/// The last smoothing floor of a first primal pass chosen from the data (see [`LinearSvmParams::plain_hinge`]).
const FIRST_PRIMAL_FLOOR: f64 = 1e-2;

/// The plain hinge starts on the QP route (or, where it does not fit, the primal one) when a dual multiplier
/// needs at least this many coordinate steps (`C Q_ii`, on average) to cross its box, and there are at least
/// this many times more examples than features.
const PRIMAL_ROUTE_STEPS: f64 = 10.0;

/// ... and, with fewer examples than that but more than features, to the QP route when a multiplier needs
/// at least this many steps: MNIST images (5,000 × 784) need 3,500 at λ = 1e-5, where dual CD's gap
/// stays above 0.99 until its first progress check hands over (20 passes), and 350 at λ = 1e-4, where it
/// meets a loose gap alone (0.45 in 0.11 s, against 0.24 s by the QP).
const QP_ROUTE_STEPS: f64 = 1000.0;

/// The steps a dual multiplier needs on average to cross its box, `C Q_ii`: `C = 1/(λℓ)` times the mean
/// weight, `Q_ii = ‖x_i‖² + ρ` with `ρ` at most the mean of `‖x_i‖²` ([`dual_cd`]).
fn crossing_steps(x: &Features, weights: Option<&[f64]>, lambda: f64) -> f64 {
    let l = x.n_samples();
    let mean_norm = (0..l).map(|i| x.row_norm2(i)).sum::<f64>() / l as f64;
    let mean_weight = weights.map_or(1.0, |c| c.iter().sum::<f64>() / l as f64);
    mean_weight / (lambda * l as f64) * 2.0 * mean_norm
}

/// The route a fit without a named one starts on, for `n + 1 ≤ ℓ` (else dual coordinate descent): where
/// `ℓ ≥ 10 (n + 1)` (the free multipliers' Gram matrix is rank-deficient, where coordinate descent crawls)
/// and a multiplier needs at least [`PRIMAL_ROUTE_STEPS`] steps to cross its box, the QP over every example
/// if it fits ([`qp_applies`]) and no working set of it would be at most half the examples
/// ([`qp_working_set`]), else the primal ([`hinge_newton`]), which hands over to that working set; with
/// fewer examples, the QP where it applies and a multiplier needs at least [`QP_ROUTE_STEPS`]; else dual
/// coordinate descent.
///
/// The QP before the primal where the whole QP is what would follow it: its 10–30 factorisations cost the
/// same whatever the data, where the primal's smoothing stages multiply on ill-conditioned rows (default
/// fits at gaps of 1e-3 / 1e-10, primal → QP: 15,000 MNIST images (5,000 and two one-pixel shifts) at
/// λ = 1e-7 24 / 25 s → 1.0 / 1.3 s, at λ = 1e-4 3.2 / 4.4 s → 0.8 / 1.1 s; the raw 8×8 digits 4–8×
/// faster). Where a working set applies, the whole QP's passes over every row cost more than the primal's
/// stages and that working set (500,000 × 20 at λ = 1e-6: 5.6 s and 355 MB against 2.2 s and 179 MB;
/// 50,000 × 100 at λ = 1e-5: 0.38 / 0.71 s against 0.14 / 0.23 s).
fn first_route(x: &Features, weights: Option<&[f64]>, lambda: f64) -> Route {
    let (l, n) = (x.n_samples() as f64, x.n_features() as f64);
    if l < n + 1.0 {
        return Route::Dual;
    }
    let steps = crossing_steps(x, weights, lambda);
    if l >= PRIMAL_ROUTE_STEPS * (n + 1.0) && steps >= PRIMAL_ROUTE_STEPS {
        if qp_applies(x) && qp_working_set(x).is_none() { Route::Qp } else { Route::Primal }
    } else if qp_applies(x) && steps >= QP_ROUTE_STEPS {
        Route::Qp
    } else {
        Route::Dual
    }
}

/// A plain-hinge solution with its certificate: `J(θ)`, the best dual lower bound found and its
/// multipliers `β` (λ-form; empty if none was found), the iterations (Newton steps and passes), the residual
/// at `θ` if the solver has it (dual coordinate descent: the sub-gradient norm, or the KKT residual of an
/// exact active-set solve) and `‖∇J(0)‖`.
struct Certified {
    theta: Vec<f64>,
    value: f64,
    dual: f64,
    beta: Vec<f64>,
    n_iter: usize,
    residual: Option<f64>,
    initial: f64,
}

impl Certified {
    /// The lower objective's point, the higher dual bound with its multipliers, the iterations of both.
    fn or_better(mut self, mut other: Certified) -> Certified {
        let n_iter = self.n_iter + other.n_iter;
        let (dual, beta) = if other.dual > self.dual {
            (other.dual, std::mem::take(&mut other.beta))
        } else {
            (self.dual, std::mem::take(&mut self.beta))
        };
        let best = if other.value < self.value { other } else { self };
        Certified { dual, beta, n_iter, ..best }
    }

    fn gap(&self) -> f64 {
        dual_cd::relative_gap(self.value, self.dual)
    }
}

/// A fitted model and one report per binary problem (one, or one per class for one-vs-rest).
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    /// The fitted hyperplanes.
    pub model: LinearModel,
    /// One report per binary problem.
    pub reports: Vec<FitReport>,
}

/// The method's inputs to the objective, borrowed from the dataset where the method keeps them.
struct Prepared<'d> {
    features: Cow<'d, Features<'d>>,
    covariances: Cow<'d, Covariances>,
    weights: Option<Cow<'d, [f64]>>,
    /// The example each row comes from (`None`: row `i` is example `i`).
    source: Option<Vec<usize>>,
}

impl LinearSvmParams {
    fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(invalid("lambda", self.lambda, "must be positive and finite"));
        }
        match self.method {
            LinearMethod::GsuSubspace { variance_fraction: p } if !(p > 0.0 && p <= 1.0) => {
                return Err(invalid("subspace_variance", p, "must be in (0, 1]"));
            }
            LinearMethod::Sampling { samples: 0, .. } => {
                return Err(invalid("samples", 0, "must be at least 1"));
            }
            LinearMethod::Power { radius_scale: r } if !(r >= 0.0 && r.is_finite()) => {
                return Err(invalid("radius_scale", r, "must be finite and non-negative"));
            }
            _ => {}
        }
        match self.solver {
            Solver::Exact(s) => {
                if !(s.tol > 0.0 && s.tol.is_finite()) {
                    return Err(invalid("tol", s.tol, "must be positive and finite"));
                }
                if !(s.sigma_floor >= 0.0 && s.sigma_floor.is_finite()) {
                    return Err(invalid("sigma_floor", s.sigma_floor, "must be finite and non-negative"));
                }
                if !(s.gap_tol > 0.0 && s.gap_tol < 1.0) {
                    return Err(invalid("gap_tol", s.gap_tol, "must be in (0, 1)"));
                }
            }
            Solver::Sgd(s) => {
                if s.iterations == 0 {
                    return Err(invalid("iterations", 0, "must be at least 1"));
                }
                if s.batch == 0 {
                    return Err(invalid("batch", 0, "must be at least 1"));
                }
            }
        }
        Ok(())
    }

    /// Fits the classifier: binary for two classes (`classes[1]` positive), one-vs-rest otherwise.
    pub fn fit(&self, data: &Dataset) -> Result<LinearFit> {
        self.fit_from(data, None)
    }

    /// [`Self::fit`] warm-started from a model of the same classes and features (e.g. the solution for a
    /// nearby λ on a regularisation path); a model that does not match is ignored. The exact solver then
    /// skips its coarsest smoothing stages, and Power SVM starts its rounds from the given hyperplane; the
    /// SGD always starts from zero, as Algorithm 1 does.
    pub fn fit_from(&self, data: &Dataset, start: Option<&LinearModel>) -> Result<LinearFit> {
        self.fit_monitored(data, start, Monitor::default())
    }

    /// [`Self::fit_from`], reporting the solvers' iterations to `monitor`.
    pub fn fit_monitored(
        &self,
        data: &Dataset,
        start: Option<&LinearModel>,
        monitor: Monitor<'_>,
    ) -> Result<LinearFit> {
        data.validate_checking(!Self::checks_values(&self.method, matches!(self.solver, Solver::Exact(_)), data))?;
        self.fit_validated(data, start, monitor)
    }

    /// Whether the fit of `method` (by the exact solver if `exact`) checks the values of `data`'s own dense
    /// features itself: the plain hinge (every `Σ_i = 0`) reads them as their compressed copy, whose values are
    /// checked, at most a third of them (the zeros need no check); rows too dense to compress are checked as
    /// they are. 5,000 MNIST images as a numpy array: 2.3 ms for the whole array, 0.3 ms for the copy.
    pub(crate) fn checks_values(method: &LinearMethod, exact: bool, data: &Dataset) -> bool {
        exact
            && matches!(data.features, Features::Dense(_))
            && match method {
                LinearMethod::Hinge => true,
                LinearMethod::Gsu | LinearMethod::Iso => matches!(data.covariances, Covariances::None),
                _ => false,
            }
    }

    /// [`Self::fit_monitored`] on data that [`Dataset::validate`] accepted, the values of dense features
    /// unchecked where [`Self::checks_values`] ([`crate::fit()`] checks the data before it calls a method: a
    /// second pass over them cost 1 ms of a 0.045 s fit on 24,177 documents).
    pub(crate) fn fit_validated(
        &self,
        data: &Dataset,
        start: Option<&LinearModel>,
        monitor: Monitor<'_>,
    ) -> Result<LinearFit> {
        self.validate()?;
        let mut prepared = self.prepare(data)?;
        let (classes, n) = (data.classes(), data.n_features());
        let start = start.filter(|m| m.classes == classes && m.n_features() == n);
        // Dense rows at most a third non-zero reach the plain hinge (the exact solver, every Σ_i = 0) as their
        // compressed copy, made once for every binary problem (at most half their bytes): every route's
        // passes then read only the non-zeros (5,000 MNIST images as a numpy array, 19 % non-zero, to
        // LIBLINEAR's objective at λ = 1e-3 and 1e-7: 0.12 → 0.05 s and 0.48 → 0.19 s, as from CSR).
        let exact = matches!(self.solver, Solver::Exact(_));
        let plain_hinge = exact && prepared.covariances.as_dyn().is_zero();
        let copy = match &*prepared.features {
            Features::Dense(rows) if plain_hinge => rows.compressed(),
            _ => None,
        };
        let compressed = copy.is_some();
        if let Some(sparse) = copy {
            prepared.features = Cow::Owned(Features::Sparse(sparse));
        }
        // The values left unchecked: the copy's, or where it fails or there is none, the rows' (naming the first
        // value out of range, which is the copy's first too).
        if Self::checks_values(&self.method, exact, data) && !(compressed && prepared.features.values_in_range()) {
            data.features.validate()?;
        }
        // On wide sparse data the exact solvers see only the used columns, once for every binary problem,
        // and the model stores only those: every other coefficient is 0 at the optimum (`solver::columns`).
        // (Not on a compressed copy of dense rows: its model keeps every column, as the data did.)
        let used = match (self.solver, &self.method) {
            _ if compressed => None,
            (Solver::Exact(_), LinearMethod::Power { .. }) | (Solver::Sgd(_), _) => None,
            (Solver::Exact(_), _) => UsedColumns::of_parts(&prepared.features, prepared.covariances.as_dyn()),
        };
        let width = used.as_ref().map_or(n, |u| u.columns().len());
        let s = ovr::one_vs_rest(classes, width, false, monitor, |k, positive, monitor| {
            let y = match &prepared.source {
                Some(source) => ovr::signs(source.iter().map(|&i| &data.labels[i]), positive),
                None => ovr::signs(data.labels.iter(), positive),
            };
            let theta0 = start.map(|m| m.theta_on(k, self.fit_intercept, used.as_ref()));
            let (mut theta, report) = self.fit_binary(&prepared, used.as_ref(), &y, theta0, monitor)?;
            let intercept = if self.fit_intercept { theta[width] } else { 0.0 };
            theta.truncate(width);
            Ok(ovr::Binary { coef: theta, intercept, report })
        })?;
        let coef = match used {
            Some(used) => Coefficients::on_columns(s.coef, used.into_columns(), n),
            None => s.coef.into(),
        };
        Ok(LinearFit { model: LinearModel { classes: s.classes, coef, intercept: s.intercept }, reports: s.reports })
    }

    fn prepare<'d>(&self, data: &'d Dataset) -> Result<Prepared<'d>> {
        let l = data.n_samples();
        let same = |covariances: Cow<'d, Covariances>| Prepared {
            features: Cow::Borrowed(&data.features),
            covariances,
            weights: data.weights.as_deref().map(Cow::Borrowed),
            source: None,
        };
        Ok(match &self.method {
            LinearMethod::Gsu => same(Cow::Borrowed(&data.covariances)),
            LinearMethod::Hinge => same(Cow::Owned(Covariances::None)),
            LinearMethod::Iso => same(Cow::Owned(data.covariances.to_isotropic(l, data.n_features()))),
            LinearMethod::Power { radius_scale } => same(Cow::Owned(power_radii(data, *radius_scale)?)),
            LinearMethod::GsuSubspace { variance_fraction } => {
                let (features, covariances) = super::project_to_subspaces(data, *variance_fraction)?;
                Prepared { features: Cow::Owned(features), ..same(Cow::Owned(covariances)) }
            }
            LinearMethod::Sampling { samples, seed } => {
                // (1/ℓ) Σ_i c_i · (1/N) Σ_s L_is is the mean over the ℓN rows of c_i L_is: same λ, same weights.
                let source: Vec<usize> = (0..l).flat_map(|i| std::iter::repeat_n(i, *samples)).collect();
                let weights = data.weights.as_ref().map(|w| Cow::Owned(source.iter().map(|&i| w[i]).collect()));
                Prepared {
                    features: Cow::Owned(sample_gaussians(data, *samples, *seed)?),
                    covariances: Cow::Owned(Covariances::None),
                    weights,
                    source: Some(source),
                }
            }
        })
    }

    /// One binary problem, on the `used` columns if given (then `start` and the solution are on those).
    fn fit_binary(
        &self,
        prepared: &Prepared<'_>,
        used: Option<&UsedColumns<'_>>,
        y: &[f64],
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> Result<(Vec<f64>, FitReport)> {
        let problem = Problem {
            features: &prepared.features,
            y,
            weights: prepared.weights.as_deref(),
            covariances: prepared.covariances.as_dyn(),
        };
        let problem = match used {
            Some(used) => used.problem(&problem),
            None => problem,
        };
        let lambda = self.lambda;
        match self.method {
            LinearMethod::Power { .. } => self.fit_power(problem, lambda, &prepared.covariances, start, monitor),
            _ => Ok(self.run_expected_hinge(problem, lambda, start, monitor)),
        }
    }

    fn objective<'a, L: MarginLoss>(&self, problem: Problem<'a>, loss: L, lambda: f64) -> Objective<'a, L> {
        Objective { fit_intercept: self.fit_intercept, ..Objective::new(problem, loss, lambda) }
    }

    fn run_solver<L: MarginLoss>(
        &self,
        problem: Problem<'_>,
        loss: L,
        lambda: f64,
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, FitReport) {
        let objective = self.objective(problem, loss, lambda);
        match self.solver {
            Solver::Exact(settings) => {
                exact::solve(&objective, start.unwrap_or_else(|| vec![0.0; objective.dim()]), &settings, monitor)
            }
            Solver::Sgd(settings) => pegasos::solve(&objective, &settings, ExactSettings::default().tol, monitor),
        }
    }

    /// The expected hinge loss. With zero covariances this is the hinge SVM, solved by
    /// [`Self::plain_hinge`]; otherwise by the configured solver.
    pub(crate) fn run_expected_hinge(
        &self,
        problem: Problem<'_>,
        lambda: f64,
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, FitReport) {
        match self.solver {
            Solver::Exact(settings) if problem.covariances.is_zero() => {
                self.plain_hinge(problem, lambda, &settings, monitor)
            }
            _ => self.run_solver(problem, ExpectedHinge, lambda, start, monitor),
        }
    }

    /// The hinge SVM (every `Σ_i = 0`), a piecewise linear-quadratic problem, solved to the relative duality
    /// gap `settings.gap_tol` (default `10⁻¹⁰`: the optimum to round-off). On wide sparse data the problem
    /// is already on its used columns ([`Self::fit_monitored`], [`UsedColumns`]; the other callers perturb
    /// the features into dense rows). Two routes ([`Route`]):
    ///
    /// - **dual** coordinate descent ([`dual_cd`], LIBLINEAR's `-s 3` with the bias kept unregularised by an
    ///   augmented Lagrangian, and exact finishes by active-set solves on the margin set,
    ///   [`crate::solver::hinge_polish`]) — fast when its steps can cross the box: a multiplier needs about
    ///   `C Q_ii` steps (`C = 1/(λℓ)`, `Q_ii = ‖x_i‖² + ρ`) to go from 0 to its bound, or when `n` is not
    ///   much smaller than `ℓ` (then the free multipliers have a Gram matrix of full rank);
    /// - **primal**: Newton on the smoothed hinge, certified stage by stage, with exact finishes
    ///   ([`hinge_newton`]) — for `n ≪ ℓ` and `C Q_ii` large, where coordinate descent crawls on a
    ///   rank-deficient free set, and for ill-scaled columns, which cost Newton's method nothing.
    ///
    /// - **qp**: the primal QP over every example by an interior-point method, made exact by an active-set
    ///   solve ([`hinge_polish::reduced_solve`] with every example in the working set) — 10–30
    ///   factorisations of an `(n + 1)`-square normal matrix (`O(ℓ n²)` each), whatever λ and the scaling;
    ///   after another route on `ℓ ≫ n` ([`qp_working_set`]), the QP on the examples nearest the margin of
    ///   the best point so far, certified at the first interior-point iterate that meets the gap.
    ///
    /// `settings.route` names one route to take alone. Otherwise the data choose the first, and a route
    /// that stalls (dual: the gap's progress projects too much work, [`DualCdSettings::detect_stall`];
    /// primal: its last stage did not certify) hands over to the QP route if the problem's size allows it
    /// ([`qp_applies`], [`qp_working_set`]) and it has not run yet, else to the other iterative route,
    /// warm-started (after the QP: dual CD from its multipliers), at most [`MAX_HANDOVERS`] times, each
    /// route chosen from the data leaving the QP route's iterations of `max_iter` to its successor; if none certifies, the smoothing
    /// continuation of [`exact`] finishes from the best point. The primal route and the smoothing are
    /// for `n + 1 ≤ ℓ` only ([`primal_applies`]); a route with no successor runs without a stall check.
    /// The report names every route taken (`routes`), and its termination is `Converged` only if the
    /// duality gap `(J - D)/J` (its `duality_gap`) meets `gap_tol`: `MaxIterations` when
    /// `max_iter` iterations (Newton iterations, interior-point iterations and dual CD's passes' worth of
    /// row visits — an epoch over a shrunk set counts its share —, counted together) ran out first, else
    /// `Stalled`. Its `gradient_norm` is the active-set solve's KKT residual, or else the norm of the hinge
    /// sub-gradient `λw - (1/ℓ) Σ_{d_i > 0} c_i y_i x_i` (with its bias part), which need not be small at a
    /// point that is optimal only to within the gap. A warm start is not used.
    pub(crate) fn plain_hinge(
        &self,
        problem: Problem<'_>,
        lambda: f64,
        settings: &ExactSettings,
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, FitReport) {
        let objective = self.objective(problem, ExpectedHinge, lambda);
        let (x, y, c) = (problem.features, problem.y, problem.weights);
        let (l, n) = (x.n_samples(), x.n_features());
        let tol = settings.gap_tol;
        let chosen = settings.route;
        let mut route = chosen.unwrap_or_else(|| first_route(x, c, lambda));
        let mut routes = Vec::new();
        let mut best: Option<Certified> = None;
        // The route that takes over from `route` if it stalls, given the routes taken so far.
        let successor = |route: Route, routes: &[Route]| match route {
            _ if chosen.is_some() || routes.len() > MAX_HANDOVERS => None,
            Route::Qp => Some(Route::Dual),
            _ if !routes.contains(&Route::Qp) && (qp_applies(x) || qp_working_set(x).is_some()) => Some(Route::Qp),
            Route::Primal => Some(Route::Dual),
            _ if primal_applies(x) => Some(Route::Primal),
            _ => None,
        };
        loop {
            let used = best.as_ref().map_or(0, |b| b.n_iter);
            let left = settings.max_iter.saturating_sub(used);
            if left == 0 || monitor.stopped() {
                break;
            }
            routes.push(route);
            let next = successor(route, &routes);
            // A route chosen from the data leaves, while another may follow, the QP route's iterations (or
            // half of what is left, if less): a slow but steady run (too steady for its stall check) must
            // not take the whole budget from the route that would finish it.
            let budget =
                if next.is_some() { left.saturating_sub(hinge_qp::MAX_ITERATIONS).max(left.div_ceil(2)) } else { left };
            let run = match route {
                Route::Qp => {
                    // Every example from the origin, whatever the other routes found: the interior-point
                    // method takes only its slacks from a start, and an iterate with a large `w` (a stalled
                    // route at a tiny λ) gives a badly centred one, from which round-off ended the iteration
                    // early. After another route on `ℓ ≫ n`: a working set nearest the best point's margin;
                    // should that fail, every example from the origin where it fits (20,000 × 20, columns
                    // scaled 1e-3…1e3 and offset by 100: the fixed examples' linear term ended the working
                    // set's iteration, where the whole QP certifies in 17 iterations).
                    //
                    // Certified at the first interior-point iterate that meets the gap (two passes each, against
                    // a factorisation's `O(ℓ n²)`), else by the exact finish on the last iterate's sides. That
                    // finish alone failed on columns far from 0 (200,000 × 10, every value + 10⁴: the route
                    // named alone stalled, at every λ) where the iterates certify.
                    let accept = Some(tol);
                    let initial = best.as_ref().map_or_else(|| exact::initial_gradient_norm(&objective), |b| b.initial);
                    let qp_budget = budget.min(hinge_qp::MAX_ITERATIONS);
                    let origin = vec![0.0; objective.dim()];
                    // (`done`: interior-point iterations already spent, so that progress events keep rising.)
                    let solve = |start: &[f64], working: usize, budget: usize, done: usize| {
                        hinge_polish::reduced_solve(
                            x,
                            y,
                            c,
                            lambda,
                            self.fit_intercept,
                            start,
                            working,
                            budget,
                            accept,
                            monitor.after(used + done),
                        )
                    };
                    let solved = match best.as_ref().and_then(|b| Some((b, qp_working_set(x)?))) {
                        Some((b, working)) => solve(&b.theta, working, qp_budget, 0).or_else(|spent| {
                            let left = budget.saturating_sub(spent).min(hinge_qp::MAX_ITERATIONS);
                            if qp_applies(x) && left > 0 {
                                solve(&origin, l, left, spent)
                                    .map(|p| hinge_polish::Polished { qp_iterations: spent + p.qp_iterations, ..p })
                                    .map_err(|more| spent + more)
                            } else {
                                Err(spent)
                            }
                        }),
                        None => solve(&origin, l, qp_budget, 0),
                    };
                    match solved {
                        Ok(p) => Certified {
                            value: objective.value(&p.theta),
                            dual: dual_cd::dual_value(x, y, c, lambda, DualLoss::Hinge, self.fit_intercept, &p.beta),
                            n_iter: p.qp_iterations.max(1),
                            residual: Some(p.residual),
                            initial,
                            theta: p.theta,
                            beta: p.beta,
                        },
                        // Failed (round-off ended the iteration before it converged, or the margin set did
                        // not settle): its iterations are counted, and the next route goes on from the best
                        // point so far (the origin, if none).
                        Err(spent) => Certified {
                            value: objective.value(&origin),
                            dual: f64::NEG_INFINITY,
                            beta: Vec::new(),
                            n_iter: spent.max(1),
                            residual: None,
                            initial,
                            theta: origin,
                        },
                    }
                }
                Route::Primal => {
                    // Chosen from the data, its first pass stops at σ = 10⁻² and hands over to dual CD,
                    // warm-started, which then finishes fast on well-conditioned data; a later pass (dual CD
                    // stalled) or a named route goes down to the last floor.
                    let quick = chosen.is_none() && routes.len() == 1;
                    let last_floor = if quick { FIRST_PRIMAL_FLOOR } else { hinge_newton::LAST_FLOOR };
                    let start = best.as_ref().map(|b| b.theta.clone());
                    let r = hinge_newton::solve_to(&objective, tol, budget, start, last_floor, monitor.after(used));
                    Certified {
                        value: r.primal,
                        dual: r.dual,
                        beta: r.beta,
                        n_iter: r.n_iter,
                        residual: r.residual,
                        initial: r.initial_gradient_norm,
                        theta: r.theta,
                    }
                }
                _ => {
                    let cd_settings = DualCdSettings {
                        tol,
                        max_passes: budget,
                        detect_stall: next.is_some(),
                        ..DualCdSettings::default()
                    };
                    // Another route's multipliers and bias, if it found a dual point.
                    let start = best.as_ref().filter(|b| b.beta.len() == l).map(|b| dual_cd::Start {
                        beta: &b.beta,
                        bias: if self.fit_intercept { b.theta[n] } else { 0.0 },
                    });
                    let fit = dual_cd::solve_monitored(
                        x,
                        y,
                        c,
                        lambda,
                        DualLoss::Hinge,
                        self.fit_intercept,
                        &cd_settings,
                        start,
                        monitor.after(used),
                    );
                    Certified {
                        value: fit.primal,
                        dual: fit.dual,
                        beta: fit.beta,
                        n_iter: fit.passes,
                        residual: Some(fit.gradient_norm),
                        initial: fit.initial_gradient_norm,
                        theta: fit.theta,
                    }
                }
            };
            let run = match best.take() {
                Some(earlier) => earlier.or_better(run),
                None => run,
            };
            let certified = run.gap() <= tol;
            best = Some(run);
            match next {
                Some(next) if !certified => route = next,
                _ => break,
            }
        }
        let mut run = best.unwrap_or_else(|| {
            // No iteration allowed at all: the origin, certified by nothing.
            let theta = vec![0.0; objective.dim()];
            let initial = exact::initial_gradient_norm(&objective);
            Certified {
                value: objective.value(&theta),
                dual: f64::NEG_INFINITY,
                beta: Vec::new(),
                n_iter: 0,
                residual: None,
                initial,
                theta,
            }
        });
        if run.gap() > tol
            && chosen.is_none()
            && primal_applies(x)
            && run.n_iter < settings.max_iter
            && !monitor.stopped()
        {
            // Neither route certified: the smoothing continuation finishes from the best point.
            routes.push(Route::Smoothing);
            let rest = ExactSettings { max_iter: settings.max_iter - run.n_iter, ..*settings };
            let (t, report) = exact::solve(&objective, run.theta.clone(), &rest, monitor.after(run.n_iter));
            run.n_iter += report.n_iter;
            if report.objective < run.value {
                (run.theta, run.value, run.residual) = (t, report.objective, None);
            }
        }
        let gap = run.gap();
        let termination = if gap <= tol {
            Termination::Converged
        } else if run.n_iter >= settings.max_iter {
            Termination::MaxIterations
        } else {
            Termination::Stalled
        };
        let gradient_norm = run
            .residual
            .unwrap_or_else(|| dual_cd::hinge_subgradient_norm(x, y, c, lambda, self.fit_intercept, &run.theta));
        let report = FitReport {
            objective: run.value,
            n_iter: run.n_iter,
            termination,
            gradient_norm,
            initial_gradient_norm: Some(run.initial),
            sigma_floor: Some(0.0),
            objective_trace: vec![run.value],
            duality_gap: Some(gap),
            rounds: 0,
            norm_bound: None,
            fallback: None,
            routes,
            degenerate: false,
        };
        (run.theta, report)
    }

    /// Power SVM is TSVC eq. 7 with `δ_i = r_i`, solved by the same alternating rounds
    /// ([`super::alternating`], Bi & Zhang Algorithm 1): fix the perturbations `Δx_i = y_i r_i w/‖w‖` and solve
    /// a hinge SVM on `x_i + Δx_i`; repeat while the objective decreases. With the SGD solver the
    /// non-convex objective is run through the thesis' Algorithm 1 directly.
    fn fit_power(
        &self,
        problem: Problem<'_>,
        lambda: f64,
        radii: &Covariances,
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> Result<(Vec<f64>, FitReport)> {
        if let Solver::Sgd(_) = self.solver {
            return Ok(self.run_solver(problem, BallHinge, lambda, start, monitor));
        }
        let radii: Vec<f64> = match radii {
            Covariances::Isotropic(c) => c.variances.iter().map(|v| v.sqrt()).collect(),
            _ => unreachable!("power_radii returns isotropic radii"),
        };
        let power = self.objective(problem, BallHinge, lambda);
        let hinge = |features: &Features, start: Option<Vec<f64>>, monitor: Monitor<'_>| {
            let p = Problem { features, covariances: &NoCovariance, ..problem };
            self.run_expected_hinge(p, lambda, start, monitor)
        };
        let mut run = alternating::alternate(&power, &radii, start, self.max_rounds, POWER_TOL, monitor, hinge);
        if !run.settled {
            // The rounds ran out before a round stopped lowering the objective.
            run.report.termination = run.report.termination.and(Termination::MaxIterations);
        }
        Ok((run.theta, run.report))
    }
}
