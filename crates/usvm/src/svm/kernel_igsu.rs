//! KSVM-iGSU and RD-KSVM-iGSU (thesis ch. 4, DESIGN 2.3): the kernel SVM for examples `N(x_i, σ_i² I)`.
//!
//! With `f(x) = Σ_j α_j k(x, x_j) + b`, Gram matrix `K` and relevance degrees `c_i` ([`Dataset::weights`]):
//!
//! `J(α, b) = λ/2 αᵀKα + (1/ℓ) Σ c_i L(d_i, s_i)`, `d_i = 1 - y_i(K_iᵀα + b)`, `s_i² = σ_i² αᵀKα`,
//!
//! `L` the expected hinge ([`ExpectedHinge`]; the hinge where `s_i = 0`). With `t_i = d_i/s_i`,
//!
//! `∇_α J = λKα + (1/ℓ) Σ c_i [-Φ(t_i) y_i K_i + φ(t_i) σ_i² Kα / s_i]`, `∂_b J = -(1/ℓ) Σ c_i Φ(t_i) y_i`
//!
//! (thesis eqs. 4.8-4.9 drop `y_i`). The variances `σ_i²` are the data's isotropic covariances, or
//! `tr Σ_i / n` of any other form (the Frobenius-nearest isotropic matrix, thesis 4.3.1); none means the
//! kernel SVM.
//!
//! **Exact solution.** Any factor `K = ΦΦᵀ` (`Φ` of shape `ℓ × r`) turns the problem into LSVM-iGSU on the
//! rows of `Φ` with covariances `σ_i² I`: with `Kα = Φw`, `αᵀKα = ‖w‖²`, so `d_i = 1 - y_i(φ_iᵀw + b)` and
//! `s_i² = σ_i²‖w‖²`. The exact route takes `Φ = L` from a pivoted Cholesky factorisation to relative residual
//! [`FACTOR_TOL`] ([`KernelFactor`]), solves that linear problem with the library's exact solver (Newton with
//! continuation; the hinge's active-set polish when every `σ_i = 0`) and maps back to `α` on the pivots.
//! **SGD** is the thesis' Algorithm 2 with the gradient taken in the RKHS — `α ← (1 - η_t a_t) α + (η_t/k)
//! Σ_batch c_i Φ(t_i) y_i e_i`, `a_t = λ + (1/k) Σ_batch c_i φ(t_i) σ_i²/s_i`, `η_t = 1/(λt)` — and the projection
//! onto `‖f‖_H ≤ √(2 J(0)/λ)`. (The literal `∂J/∂α` step of Algorithm 2 is `K` times this one: its curvature
//! is `λK²`, so `η_t = 1/(λt)` diverges whenever `‖K‖ > 2`.) It is the linear Algorithm 1 run on any feature
//! map of `k`, without forming one.
//!
//! **Large ℓ** ([`Approximation`]): Nyström or random Fourier features give an explicit `φ` with
//! `φ(x)ᵀφ(z) ≈ k(x, z)`, and the same model is LSVM-iGSU on `φ(x_i)` with `σ_i² I`, at `O(ℓ m)` cost per pass
//! instead of the exact route's `O(ℓ r²)`–`O(ℓ³)` factorisation and `ℓ r` dense features. See [`crate::kernel::feature_map`] for which to use.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Covariances, Dataset, Kernel};
//! use usvm::svm::KernelIgsuParams;
//! let x = array![[0.0, 0.0], [0.2, 0.1], [2.0, 2.0], [2.1, 1.8], [0.1, 2.0], [2.0, 0.1]];
//! let data = Dataset::dense(x.clone(), vec![0, 0, 0, 0, 1, 1])
//!     .with_covariances(Covariances::isotropic(vec![0.05; 6]));
//! let params = KernelIgsuParams { kernel: Kernel::Rbf { gamma: 1.0 }, lambda: 0.01, ..Default::default() };
//! let fit = params.fit(&data).unwrap();
//! assert!(fit.reports[0].converged());
//! assert_eq!(fit.model.predict(&data.features).unwrap(), vec![0, 0, 0, 0, 1, 1]);
//! ```

use std::borrow::Cow;

use ndarray::{Array2, ArrayView1};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::linear::{LinearMethod, LinearSvmParams, Solver};
use crate::covariance::Covariances;
use crate::data::{Dataset, Features, dot};
use crate::error::{Result, invalid};
use crate::kernel::Kernel;
use crate::kernel::feature_map::{FeatureMap, KernelFactor, Nystroem, RandomFourier, solve_pivot_block};
use crate::loss::{ExpectedHinge, MarginLoss};
use crate::model::{KernelModel, LinearModel, MappedModel, Model};
use crate::ovr;
use crate::progress::{Monitor, Quantity};
use crate::report::{FitReport, Termination};
use crate::solver::exact::ExactSettings;
use crate::solver::pegasos::SgdSettings;

/// Relative residual `max_i (K - LLᵀ)_ii / max_i K_ii` at which the exact route's factorisation stops.
pub const FACTOR_TOL: f64 = 1e-12;

/// Above this many examples the SGD computes the Gram rows of each mini-batch on the fly instead of
/// caching the whole Gram matrix (8192² doubles = 512 MiB).
pub const GRAM_CACHE_MAX: usize = 8192;

/// Entries of `K` (32 MiB) per row block of [`GramOperator::Implicit`].
pub const IMPLICIT_BLOCK: usize = 1 << 22;

/// How the kernel enters the problem.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum Approximation {
    /// The exact Gram matrix (factored by pivoted Cholesky for the exact solver, cached for the SGD).
    Exact,
    /// Nyström features on `components` landmarks drawn with `seed`; the model is a kernel expansion on them.
    Nystroem {
        /// Number of landmarks.
        components: usize,
        /// The seed of the landmark draw.
        seed: u64,
    },
    /// Random Fourier features (RBF kernel only), `components` frequencies drawn with `seed`.
    Fourier {
        /// Number of frequencies.
        components: usize,
        /// The seed of the frequency draw.
        seed: u64,
    },
}

/// Settings of KSVM-iGSU: plain data, validated in [`KernelIgsuParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelIgsuParams {
    /// The kernel.
    pub kernel: Kernel,
    /// `λ > 0` in `λ/2 αᵀKα` (`C = 1/(λℓ)`).
    pub lambda: f64,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: Solver,
    /// How the kernel enters.
    pub approximation: Approximation,
}

impl Default for KernelIgsuParams {
    fn default() -> Self {
        KernelIgsuParams {
            kernel: Kernel::Rbf { gamma: 1.0 },
            lambda: 1e-2,
            fit_intercept: true,
            solver: Solver::Exact(ExactSettings::default()),
            approximation: Approximation::Exact,
        }
    }
}

/// A fitted KSVM-iGSU model (a [`KernelModel`], or a [`MappedModel`] for random Fourier features) and one
/// report per binary problem. The reported objective is `J(α, b)` of the kernel the solver saw (the exact
/// Gram matrix, to the factor's residual, or the approximation's).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelIgsuFit {
    /// The fitted model (a kernel expansion, or a linear model on a feature map).
    pub model: Model,
    /// One report per binary problem.
    pub reports: Vec<FitReport>,
}

/// The per-example isotropic variances `σ_i²` KSVM-iGSU uses: isotropic covariances as given, any other
/// form by `tr Σ_i / n`, zeros without covariances.
pub fn isotropic_variances(data: &Dataset) -> Vec<f64> {
    let (l, n) = (data.n_samples(), data.n_features());
    match data.covariances.to_isotropic(l, n) {
        Covariances::Isotropic(c) => c.variances,
        _ => vec![0.0; l],
    }
}

/// The training Gram matrix `K`, stored or computed by blocks when applied.
#[derive(Clone, Copy)]
pub enum GramOperator<'a> {
    /// A stored Gram matrix.
    Matrix(&'a Array2<f64>),
    /// `K v` by row blocks of `k(x_block, x_S)`, `S` the nonzeros of `v` (blocks of at most 512 rows and
    /// [`IMPLICIT_BLOCK`] entries).
    Implicit {
        /// The kernel.
        kernel: Kernel,
        /// The training features.
        x: &'a Features<'a>,
    },
}

impl GramOperator<'_> {
    /// `K v`.
    pub fn apply(&self, v: &[f64]) -> Result<Vec<f64>> {
        Ok(match *self {
            GramOperator::Matrix(g) => g.dot(&ArrayView1::from(v)).to_vec(),
            GramOperator::Implicit { kernel, x } => {
                let support: Vec<usize> = (0..v.len()).filter(|&j| v[j] != 0.0).collect();
                let vs = ndarray::Array1::from_iter(support.iter().map(|&j| v[j]));
                let xs = x.select_rows(&support);
                let l = x.n_samples();
                let block = (IMPLICIT_BLOCK / support.len().max(1)).clamp(1, 512);
                let mut out = Vec::with_capacity(l);
                for start in (0..l).step_by(block) {
                    let rows: Vec<usize> = (start..(start + block).min(l)).collect();
                    out.extend(kernel.cross_gram(&x.select_rows(&rows), &xs)?.dot(&vs));
                }
                out
            }
        })
    }
}

/// `J(α, b)` of KSVM-iGSU, with its gradient.
#[derive(Clone, Copy)]
pub struct KernelObjective<'a> {
    /// `K`, `ℓ × ℓ`.
    pub gram: GramOperator<'a>,
    /// Labels in `{-1, +1}`.
    pub y: &'a [f64],
    /// `σ_i²`.
    pub variances: &'a [f64],
    /// `c_i`; `None` means 1.
    pub weights: Option<&'a [f64]>,
    /// `λ > 0`.
    pub lambda: f64,
}

impl KernelObjective<'_> {
    /// `J(α, b)`.
    pub fn value(&self, alpha: &[f64], b: f64) -> Result<f64> {
        Ok(self.value_grad(alpha, b)?.0)
    }

    /// `(J, ∇_α J, ∂_b J)` at `(α, b)`.
    pub fn value_grad(&self, alpha: &[f64], b: f64) -> Result<(f64, Vec<f64>, f64)> {
        let l = self.y.len();
        let ka = self.gram.apply(alpha)?;
        let norm2 = dot(alpha, &ka).max(0.0);
        let inv_l = 1.0 / l as f64;
        // ∇_α J = K g with g = λα + (1/ℓ) Σ c_i [-Φ y_i e_i + φ σ_i²/s_i α].
        let mut g: Vec<f64> = alpha.to_vec();
        let mut scale = self.lambda;
        let mut direct = vec![0.0; l];
        let (mut loss, mut db) = (0.0, 0.0);
        for i in 0..l {
            let c = self.weights.map_or(1.0, |w| w[i]);
            let d = 1.0 - self.y[i] * (ka[i] + b);
            let s = (self.variances[i] * norm2).sqrt();
            let ld = ExpectedHinge.derivatives(d, s);
            loss += c * ld.value;
            direct[i] -= inv_l * c * ld.d * self.y[i];
            db -= inv_l * c * ld.d * self.y[i];
            if s > 0.0 {
                scale += inv_l * c * ld.s * self.variances[i] / s;
            }
        }
        g.iter_mut().zip(&direct).for_each(|(gi, di)| *gi = scale * *gi + di);
        let grad = self.gram.apply(&g)?;
        Ok((0.5 * self.lambda * norm2 + loss * inv_l, grad, db))
    }
}

impl KernelIgsuParams {
    fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(invalid("lambda", self.lambda, "must be positive and finite"));
        }
        self.kernel.validate()?;
        if self.kernel == Kernel::Precomputed {
            return Err(invalid(
                "kernel",
                "precomputed",
                "KSVM-iGSU needs the examples themselves (Gram rows are not features)",
            ));
        }
        match self.approximation {
            Approximation::Exact => {}
            Approximation::Nystroem { components: 0, .. } | Approximation::Fourier { components: 0, .. } => {
                return Err(invalid("components", 0, "must be at least 1"));
            }
            Approximation::Fourier { .. } if !matches!(self.kernel, Kernel::Rbf { .. }) => {
                return Err(invalid(
                    "approximation",
                    "fourier",
                    "random Fourier features approximate the RBF kernel only",
                ));
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
    pub fn fit(&self, data: &Dataset) -> Result<KernelIgsuFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting the solvers' iterations to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<KernelIgsuFit> {
        self.validate()?;
        data.validate()?;
        let variances = isotropic_variances(data);
        match (self.approximation, self.solver) {
            (Approximation::Exact, Solver::Sgd(settings)) => self.fit_sgd(data, &variances, &settings, monitor),
            (Approximation::Exact, Solver::Exact(_)) => {
                let factor = KernelFactor::new(self.kernel, &data.features, FACTOR_TOL, data.n_samples())?;
                let lp = factor.pivot_block();
                let KernelFactor { pivots, l, .. } = factor;
                let (linear, reports) = self.fit_linear(data, l, &variances, monitor)?;
                let mut coef = Array2::zeros((linear.coef.n_outputs(), data.n_samples()));
                for (k, w) in linear.coef.dense().rows().into_iter().enumerate() {
                    let a = solve_pivot_block(&lp, w.as_slice().expect("standard layout"));
                    for (&p, v) in pivots.iter().zip(a) {
                        coef[[k, p]] = v;
                    }
                }
                let model =
                    KernelModel::from_training(self.kernel, linear.classes, &data.features, coef, linear.intercept);
                Ok(KernelIgsuFit { model: Model::Kernel(model), reports })
            }
            (Approximation::Nystroem { components, seed }, _) => {
                let map = Nystroem::fit(self.kernel, &data.features, components, seed)?;
                let (linear, reports) = self.fit_linear(data, map.transform(&data.features)?, &variances, monitor)?;
                let mut coef = Array2::zeros((linear.coef.n_outputs(), map.indices.len()));
                for (k, w) in linear.coef.dense().rows().into_iter().enumerate() {
                    let a = map.landmark_coefficients(w.as_slice().expect("standard layout"));
                    coef.row_mut(k).assign(&ArrayView1::from(&a[..]));
                }
                let model =
                    KernelModel::from_training(self.kernel, linear.classes, &map.landmarks, coef, linear.intercept);
                Ok(KernelIgsuFit { model: Model::Kernel(model), reports })
            }
            (Approximation::Fourier { components, seed }, _) => {
                let map = RandomFourier::new(self.kernel, data.n_features(), components, seed)?;
                let (linear, reports) = self.fit_linear(data, map.transform(&data.features)?, &variances, monitor)?;
                let model = MappedModel { map: FeatureMap::Fourier(map), linear };
                Ok(KernelIgsuFit { model: Model::Mapped(model), reports })
            }
        }
    }

    /// LSVM-iGSU on the rows of `phi` (`K ≈ φφᵀ`) with covariances `σ_i² I` and the data's weights.
    fn fit_linear(
        &self,
        data: &Dataset,
        phi: Array2<f64>,
        variances: &[f64],
        monitor: Monitor<'_>,
    ) -> Result<(LinearModel, Vec<FitReport>)> {
        let covariances = if variances.iter().all(|&v| v == 0.0) {
            Covariances::None
        } else {
            Covariances::isotropic(variances.to_vec())
        };
        let mapped = Dataset {
            features: Features::dense(phi),
            labels: Cow::Borrowed(&data.labels),
            weights: data.weights.clone(),
            covariances,
            privileged: None,
        };
        let params = LinearSvmParams {
            method: LinearMethod::Gsu,
            lambda: self.lambda,
            fit_intercept: self.fit_intercept,
            solver: self.solver,
            ..LinearSvmParams::default()
        };
        let fit = params.fit_monitored(&mapped, None, monitor)?;
        Ok((fit.model, fit.reports))
    }

    /// Algorithm 2 (in the RKHS, see the module docs) per binary problem on the exact kernel.
    fn fit_sgd(
        &self,
        data: &Dataset,
        variances: &[f64],
        settings: &SgdSettings,
        monitor: Monitor<'_>,
    ) -> Result<KernelIgsuFit> {
        let l = data.n_samples();
        let gram = (l <= GRAM_CACHE_MAX).then(|| self.kernel.gram(&data.features)).transpose()?;
        let rows = |batch: &[usize]| -> Result<Array2<f64>> {
            match &gram {
                Some(g) => Ok(g.select(ndarray::Axis(0), batch)),
                None => self.kernel.cross_gram(&data.features.select_rows(batch), &data.features),
            }
        };
        let s = ovr::one_vs_rest(data.classes(), l, false, monitor, |_, positive, monitor| {
            let y = ovr::signs(data.labels.iter(), positive);
            let (alpha, b, n_iter) =
                self.sgd_binary(&y, variances, data.weights.as_deref(), settings, &rows, monitor)?;
            // The report: J, ‖∇J‖ (α and b) and ‖∇J(0)‖, from the Gram matrix (by blocks if not cached).
            let objective = KernelObjective {
                gram: match &gram {
                    Some(g) => GramOperator::Matrix(g),
                    None => GramOperator::Implicit { kernel: self.kernel, x: &data.features },
                },
                y: &y,
                variances,
                weights: data.weights.as_deref(),
                lambda: self.lambda,
            };
            let grad_norm = |g: &[f64], gb: f64| (dot(g, g) + if self.fit_intercept { gb * gb } else { 0.0 }).sqrt();
            let (value, g, gb) = objective.value_grad(&alpha, b)?;
            let (_, g0, gb0) = objective.value_grad(&vec![0.0; l], 0.0)?;
            let (gradient_norm, initial) = (grad_norm(&g, gb), grad_norm(&g0, gb0));
            let report = FitReport {
                objective: value,
                n_iter,
                termination: Termination::from_converged(gradient_norm <= ExactSettings::default().tol * initial),
                gradient_norm,
                initial_gradient_norm: Some(initial),
                sigma_floor: None,
                objective_trace: Vec::new(),
                duality_gap: None,
                rounds: 0,
                norm_bound: None,
                fallback: None,
                routes: Vec::new(),
                degenerate: false,
            };
            Ok(ovr::Binary { coef: alpha, intercept: b, report })
        })?;
        let model = KernelModel::from_training(self.kernel, s.classes, &data.features, s.coef, s.intercept);
        Ok(KernelIgsuFit { model: Model::Kernel(model), reports: s.reports })
    }

    /// One binary problem of the kernel SGD: returns `(α, b, iterations)`, or the error of a Gram block.
    fn sgd_binary(
        &self,
        y: &[f64],
        variances: &[f64],
        weights: Option<&[f64]>,
        settings: &SgdSettings,
        rows: &dyn Fn(&[usize]) -> Result<Array2<f64>>,
        monitor: Monitor<'_>,
    ) -> Result<(Vec<f64>, f64, usize)> {
        let l = y.len();
        let lambda = self.lambda;
        let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
        // J(0) = mean(c_i) (every d_i = 1, s_i = 0), so ‖f*‖_H ≤ √(2 J(0)/λ).
        let j0 = (0..l).map(weight).sum::<f64>() / l as f64;
        let radius = (2.0 * j0 / lambda).sqrt();
        let k = settings.batch.clamp(1, l);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
        let mut alpha = vec![0.0; l];
        let mut b = 0.0;
        // ‖f‖²_H = αᵀKα, updated exactly from the step's pieces.
        let mut norm2 = 0.0f64;
        let every = (settings.iterations / crate::solver::pegasos::EVENTS).max(1);
        for t in 1..=settings.iterations {
            let batch = rand::seq::index::sample(&mut rng, l, k).into_vec();
            let block = rows(&batch)?;
            let f_norm = norm2.max(0.0).sqrt();
            let mut a = lambda;
            let mut beta = vec![0.0; k];
            let mut m = vec![0.0; k];
            let mut gb = 0.0;
            let mut batch_loss = 0.0;
            for (r, &i) in batch.iter().enumerate() {
                let row = block.row(r);
                m[r] = dot(row.as_slice().expect("standard layout"), &alpha);
                let d = 1.0 - y[i] * (m[r] + b);
                let s = variances[i].sqrt() * f_norm;
                let ld = ExpectedHinge.derivatives(d, s);
                let c = weight(i) / k as f64;
                batch_loss += c * ld.value;
                beta[r] = c * ld.d * y[i];
                gb -= c * ld.d * y[i];
                if s > 0.0 {
                    a += c * ld.s * variances[i] / s;
                }
            }
            let eta = 1.0 / (lambda * t as f64);
            let shrink = 1.0 - eta * a;
            // ‖shrink·f + η Σ β_r k(·, x_r)‖² = shrink²‖f‖² + 2 shrink η βᵀm + η² βᵀK_BB β.
            let mut quad = 0.0;
            for (r, &br) in beta.iter().enumerate() {
                if br != 0.0 {
                    for (q, &i) in batch.iter().enumerate() {
                        quad += br * beta[q] * block[[r, i]];
                    }
                }
            }
            // Every `every`-th iteration: the mini-batch objective and the RKHS norm of its sub-gradient
            // `a f - Σ β_r k(·, x_r)` (with the intercept's part) at the current iterate.
            if (t % every == 0 || t == settings.iterations)
                && monitor.iteration(t, Quantity::GradientNorm, || {
                    let g2 = a * a * norm2 - 2.0 * a * dot(&beta, &m) + quad;
                    (0.5 * lambda * norm2 + batch_loss, (g2.max(0.0) + gb * gb).sqrt())
                })
            {
                return Ok((alpha, b, t));
            }
            norm2 = shrink * shrink * norm2 + 2.0 * shrink * eta * dot(&beta, &m) + eta * eta * quad;
            alpha.iter_mut().for_each(|v| *v *= shrink);
            for (r, &i) in batch.iter().enumerate() {
                alpha[i] += eta * beta[r];
            }
            if self.fit_intercept {
                b -= eta * gb;
            }
            let norm = norm2.max(0.0).sqrt();
            if norm > radius {
                let scale = radius / norm;
                alpha.iter_mut().for_each(|v| *v *= scale);
                norm2 = radius * radius;
            }
        }
        Ok((alpha, b, settings.iterations))
    }
}
