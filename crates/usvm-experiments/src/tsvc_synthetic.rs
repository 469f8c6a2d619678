//! The synthetic study of Bi & Zhang (paper 003, section 6, Table 1; DESIGN section 8).
//!
//! Per trial (seeded): `ℓ` clean points uniform on `[-5, 5]²`, labelled by the target `x₁ - x₂ = 0`
//! (linear; TSVC and SVC with the linear kernel) or `x₁² + x₂² = 9` (quadratic; the kernel `(xᵀz)²`).
//! Every point gets Gaussian noise `N(0, σ_i² I)` with `σ_i ~ U[0.1, 0.8]`, except `0.1ℓ` points drawn at
//! random from the `0.2ℓ` closest to the target boundary, whose `σ_i ~ U[0.5, 2]` (outliers). TSVC uses
//! the known noise levels as bounds, `δ_i = σ_i`; SVC is TSVC with `δ = 0` (the same solver, one round).
//! Both are scored on `10⁴` clean points from the same distribution.
//!
//! The paper calls `σ_i` the standard deviation of the noise in section 3 ("the bound δ_i has a similar
//! effect of the standard deviation σ_i") but writes the covariance as `σ_i I` in section 6;
//! [`NoiseScale`] selects either reading. It gives neither `C` nor how it was chosen: here `C` is a
//! setting of the protocol, the same for both methods.

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use usvm::data::Dataset;
use usvm::error::Result;
use usvm::kernel::Kernel;
use usvm::svm::{Delta, TsvcParams};

/// The two target functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `x₁ - x₂ = 0`, linear TSVC.
    Linear,
    /// `x₁² + x₂² = 9`, kernel TSVC with `(xᵀz)²`.
    Quadratic,
}

impl Target {
    /// The label (`1` on the positive side) and the distance to the target boundary.
    fn label_distance(&self, x: [f64; 2]) -> (i64, f64) {
        match self {
            Target::Linear => {
                let v = x[0] - x[1];
                (i64::from(v > 0.0), v.abs() / std::f64::consts::SQRT_2)
            }
            Target::Quadratic => {
                let r = (x[0] * x[0] + x[1] * x[1]).sqrt();
                (i64::from(r > 3.0), (r - 3.0).abs())
            }
        }
    }

    pub fn kernel(&self) -> Kernel {
        match self {
            Target::Linear => Kernel::Linear,
            Target::Quadratic => Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 },
        }
    }

    /// Table 1's average test errors (%) for ℓ = 20, 30, 50, 100, 150: (SVC, TSVC).
    pub fn paper(&self) -> [(f64, f64); 5] {
        match self {
            Target::Linear => [(8.9, 6.1), (7.8, 5.2), (5.5, 3.8), (2.9, 2.1), (2.1, 1.6)],
            Target::Quadratic => [(9.9, 7.9), (7.5, 6.1), (6.7, 4.4), (3.2, 2.8), (2.8, 2.4)],
        }
    }
}

/// How the drawn `σ_i` scales the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseScale {
    /// `σ_i` is the standard deviation (section 3's reading, DESIGN section 8): noise `N(0, σ_i² I)`.
    StandardDeviation,
    /// `σ_i` is the variance (section 6's `Σ = σ_i I`): noise `N(0, σ_i I)`, bound `δ_i = √σ_i`.
    Variance,
}

/// The protocol's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TsvcSynthetic {
    pub sizes: Vec<usize>,
    pub trials: u64,
    pub test_size: usize,
    /// `C` of both SVC and TSVC.
    pub c: f64,
    pub noise: NoiseScale,
    /// TSVC's bounds are `δ_i = delta_scale · (noise scale of example i)` (1 in the paper's setting).
    pub delta_scale: f64,
    /// TSVC's maximum alternating rounds.
    pub max_rounds: usize,
    /// Trial `t` of size `ℓ` uses the seed `seed + 1000ℓ + t`.
    pub seed: u64,
}

impl Default for TsvcSynthetic {
    fn default() -> Self {
        TsvcSynthetic {
            sizes: vec![20, 30, 50, 100, 150],
            trials: 50,
            test_size: 10_000,
            c: 1.0,
            noise: NoiseScale::StandardDeviation,
            delta_scale: 1.0,
            max_rounds: TsvcParams::default().max_rounds,
            seed: 0,
        }
    }
}

/// One column of Table 1: mean test errors (fractions) over the trials, and their standard errors.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub size: usize,
    pub svc: f64,
    pub tsvc: f64,
    pub svc_se: f64,
    pub tsvc_se: f64,
    /// Trials in which TSVC's error was lower / higher than SVC's.
    pub tsvc_wins: usize,
    pub tsvc_losses: usize,
    /// Mean alternating rounds of TSVC (SVM solves).
    pub rounds: f64,
    /// Quadratic target: the mean over trials of SVC's and TSVC's [`boundary_radius`] (the target's is 3).
    pub svc_radius: Option<f64>,
    pub tsvc_radius: Option<f64>,
    /// Quadratic target, diagnostic: mean test errors of SVC and TSVC moved to the target radius
    /// ([`with_target_radius`]; over the trials where both have a radius).
    pub at_target_radius: Option<(f64, f64)>,
}

/// A trial's noisy training set (with its bounds) and clean test set.
pub struct Trial {
    pub train: Dataset<'static>,
    pub delta: Vec<f64>,
    pub test: Dataset<'static>,
}

fn uniform_points(rng: &mut Xoshiro256PlusPlus, l: usize, target: Target) -> (Vec<[f64; 2]>, Vec<i64>, Vec<f64>) {
    let u = Uniform::new(-5.0, 5.0).expect("valid range");
    let points: Vec<[f64; 2]> = (0..l).map(|_| [u.sample(rng), u.sample(rng)]).collect();
    let (labels, dist) = points.iter().map(|&p| target.label_distance(p)).unzip();
    (points, labels, dist)
}

/// Draws trial data for `ℓ` examples from `seed` (redrawing while a training set has one class).
pub fn trial(target: Target, l: usize, test_size: usize, noise: NoiseScale, seed: u64) -> Trial {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (points, labels, dist) = loop {
        let drawn = uniform_points(&mut rng, l, target);
        if drawn.1.contains(&0) && drawn.1.contains(&1) {
            break drawn;
        }
    };
    let normal = Uniform::new(0.1, 0.8).expect("valid range");
    let outlier = Uniform::new(0.5, 2.0).expect("valid range");
    let mut sigma: Vec<f64> = (0..l).map(|_| normal.sample(&mut rng)).collect();
    // 0.1ℓ outliers among the 0.2ℓ examples closest to the boundary (a partial Fisher-Yates shuffle).
    let mut order: Vec<usize> = (0..l).collect();
    order.sort_by(|&a, &b| dist[a].total_cmp(&dist[b]));
    let (n_close, n_out) = ((0.2 * l as f64).round() as usize, (0.1 * l as f64).round() as usize);
    let mut close = order[..n_close].to_vec();
    for k in 0..n_out.min(n_close) {
        let pick = Uniform::new(k, n_close).expect("non-empty range").sample(&mut rng);
        close.swap(k, pick);
        sigma[close[k]] = outlier.sample(&mut rng);
    }
    let scale: Vec<f64> = match noise {
        NoiseScale::StandardDeviation => sigma,
        NoiseScale::Variance => sigma.iter().map(|s| s.sqrt()).collect(),
    };
    let x = Array2::from_shape_fn((l, 2), |(i, j)| {
        let z: f64 = StandardNormal.sample(&mut rng);
        points[i][j] + scale[i] * z
    });
    let (test_points, test_labels, _) = uniform_points(&mut rng, test_size, target);
    let test = Array2::from_shape_fn((test_size, 2), |(i, j)| test_points[i][j]);
    Trial { train: Dataset::dense(x, labels), delta: scale, test: Dataset::dense(test, test_labels) }
}

/// The mean radius of a binary model's decision boundary for the homogeneous quadratic kernel `(xᵀz)²`,
/// where `f(x) = xᵀMx + b`: along the unit direction `u`, `f(ru) = r² uᵀMu + b` with `b = f(0)` and
/// `uᵀMu = f(u) - b`, so the boundary is at `r = √(-b/(f(u) - b))`. Averaged over 360 directions in the
/// plane of the first two features that cross it within the sampling square's circumradius `5√2`;
/// `None` for other kernels or models, or if no direction crosses there.
pub fn boundary_radius(model: &usvm::model::Model) -> Option<f64> {
    let usvm::model::Model::Kernel(m) = model else { return None };
    if m.kernel != (Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 }) || m.coef.nrows() != 1 {
        return None;
    }
    let n = m.n_features().max(2);
    let directions = 360;
    let mut x = Array2::zeros((directions + 1, n));
    for k in 0..directions {
        let angle = 2.0 * std::f64::consts::PI * k as f64 / directions as f64;
        x[[k + 1, 0]] = angle.cos();
        x[[k + 1, 1]] = angle.sin();
    }
    let f = m.decision_function(&usvm::data::Features::dense(x)).ok()?;
    let b = f[[0, 0]];
    let radii: Vec<f64> =
        (1..=directions).map(|k| -b / (f[[k, 0]] - b)).filter(|r2| *r2 > 0.0 && *r2 <= 50.0).map(f64::sqrt).collect();
    (!radii.is_empty()).then(|| radii.iter().sum::<f64>() / radii.len() as f64)
}

/// Diagnostic only (it uses the true target): a homogeneous quadratic model with its intercept rescaled so
/// that its [`boundary_radius`] is the target's 3 (the radius along every direction scales with `√-b`),
/// keeping the boundary's shape. `None` where [`boundary_radius`] is.
pub fn with_target_radius(model: &usvm::model::Model) -> Option<usvm::model::Model> {
    let r = boundary_radius(model)?;
    let usvm::model::Model::Kernel(m) = model else { return None };
    let mut m = m.clone();
    m.intercept[0] *= (3.0 / r).powi(2);
    Some(usvm::model::Model::Kernel(m))
}

fn error_rate(model: &usvm::model::Model, test: &Dataset) -> Result<f64> {
    let predicted = model.predict(&test.features)?;
    let wrong = predicted.iter().zip(test.labels.iter()).filter(|(p, y)| p != y).count();
    Ok(wrong as f64 / test.labels.len() as f64)
}

/// One trial's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialResult {
    pub svc_error: f64,
    pub tsvc_error: f64,
    /// TSVC's alternating rounds (SVM solves).
    pub rounds: usize,
    /// [`boundary_radius`] of SVC's and TSVC's models (quadratic target).
    pub svc_radius: Option<f64>,
    pub tsvc_radius: Option<f64>,
    /// Quadratic target, diagnostic: the test errors of [`with_target_radius`] (SVC, TSVC).
    pub at_target_radius: Option<(f64, f64)>,
}

/// SVC's and TSVC's test errors, TSVC's rounds and the boundary radii on one trial.
pub fn run_trial(protocol: &TsvcSynthetic, target: Target, l: usize, t: u64) -> Result<TrialResult> {
    let data = trial(target, l, protocol.test_size, protocol.noise, protocol.seed + 1000 * l as u64 + t);
    let base =
        TsvcParams { c: protocol.c, kernel: target.kernel(), max_rounds: protocol.max_rounds, ..TsvcParams::default() };
    let svc = TsvcParams { delta: Delta::Uniform(0.0), ..base.clone() }.fit(&data.train)?;
    let delta = data.delta.iter().map(|d| protocol.delta_scale * d).collect();
    let tsvc = TsvcParams { delta: Delta::PerExample(delta), ..base }.fit(&data.train)?;
    let at_target_radius = match (with_target_radius(&svc.model), with_target_radius(&tsvc.model)) {
        (Some(s), Some(t)) => Some((error_rate(&s, &data.test)?, error_rate(&t, &data.test)?)),
        _ => None,
    };
    Ok(TrialResult {
        at_target_radius,
        svc_error: error_rate(&svc.model, &data.test)?,
        tsvc_error: error_rate(&tsvc.model, &data.test)?,
        rounds: tsvc.reports[0].report.rounds,
        svc_radius: boundary_radius(&svc.model),
        tsvc_radius: boundary_radius(&tsvc.model),
    })
}

/// Runs the protocol for one target: one [`Column`] per size (trials in parallel, results in trial order).
pub fn run(protocol: &TsvcSynthetic, target: Target) -> Result<Vec<Column>> {
    protocol
        .sizes
        .iter()
        .map(|&l| {
            let results: Vec<TrialResult> = (0..protocol.trials)
                .into_par_iter()
                .map(|t| run_trial(protocol, target, l, t))
                .collect::<Result<_>>()?;
            let m = results.len() as f64;
            let mean = |f: &dyn Fn(&TrialResult) -> f64| results.iter().map(f).sum::<f64>() / m;
            let (svc, tsvc) = (mean(&|r| r.svc_error), mean(&|r| r.tsvc_error));
            let se = |mu: f64, f: &dyn Fn(&TrialResult) -> f64| {
                (results.iter().map(|r| (f(r) - mu).powi(2)).sum::<f64>() / (m - 1.0).max(1.0) / m).sqrt()
            };
            let mean_radius = |f: &dyn Fn(&TrialResult) -> Option<f64>| {
                let r: Vec<f64> = results.iter().filter_map(f).collect();
                (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64)
            };
            Ok(Column {
                size: l,
                svc,
                tsvc,
                svc_se: se(svc, &|r| r.svc_error),
                tsvc_se: se(tsvc, &|r| r.tsvc_error),
                tsvc_wins: results.iter().filter(|r| r.tsvc_error < r.svc_error).count(),
                tsvc_losses: results.iter().filter(|r| r.tsvc_error > r.svc_error).count(),
                rounds: mean(&|r| r.rounds as f64),
                svc_radius: mean_radius(&|r| r.svc_radius),
                tsvc_radius: mean_radius(&|r| r.tsvc_radius),
                at_target_radius: {
                    let e: Vec<(f64, f64)> = results.iter().filter_map(|r| r.at_target_radius).collect();
                    let n = e.len() as f64;
                    (!e.is_empty())
                        .then(|| (e.iter().map(|p| p.0).sum::<f64>() / n, e.iter().map(|p| p.1).sum::<f64>() / n))
                },
            })
        })
        .collect()
}
