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

use crate::data::Dataset;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::svm::{Delta, TsvcParams};

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
}

/// A trial's noisy training set (with its bounds) and clean test set.
pub struct Trial {
    pub train: Dataset,
    pub delta: Vec<f64>,
    pub test: Dataset,
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

fn error_rate(model: &crate::model::Model, test: &Dataset) -> Result<f64> {
    let predicted = model.predict(&test.features)?;
    let wrong = predicted.iter().zip(&test.labels).filter(|(p, y)| p != y).count();
    Ok(wrong as f64 / test.labels.len() as f64)
}

/// SVC's and TSVC's test errors and TSVC's rounds on one trial.
pub fn run_trial(protocol: &TsvcSynthetic, target: Target, l: usize, t: u64) -> Result<(f64, f64, usize)> {
    let data = trial(target, l, protocol.test_size, protocol.noise, protocol.seed + 1000 * l as u64 + t);
    let base =
        TsvcParams { c: protocol.c, kernel: target.kernel(), max_rounds: protocol.max_rounds, ..TsvcParams::default() };
    let svc = TsvcParams { delta: Delta::Uniform(0.0), ..base.clone() }.fit(&data.train)?;
    let delta = data.delta.iter().map(|d| protocol.delta_scale * d).collect();
    let tsvc = TsvcParams { delta: Delta::PerExample(delta), ..base }.fit(&data.train)?;
    Ok((error_rate(&svc.model, &data.test)?, error_rate(&tsvc.model, &data.test)?, tsvc.reports[0].rounds))
}

/// Runs the protocol for one target: one [`Column`] per size (trials in parallel, results in trial order).
pub fn run(protocol: &TsvcSynthetic, target: Target) -> Result<Vec<Column>> {
    protocol
        .sizes
        .iter()
        .map(|&l| {
            let results: Vec<(f64, f64, usize)> = (0..protocol.trials)
                .into_par_iter()
                .map(|t| run_trial(protocol, target, l, t))
                .collect::<Result<_>>()?;
            let m = results.len() as f64;
            let mean = |f: &dyn Fn(&(f64, f64, usize)) -> f64| results.iter().map(f).sum::<f64>() / m;
            let (svc, tsvc) = (mean(&|r| r.0), mean(&|r| r.1));
            let se = |mu: f64, f: &dyn Fn(&(f64, f64, usize)) -> f64| {
                (results.iter().map(|r| (f(r) - mu).powi(2)).sum::<f64>() / (m - 1.0).max(1.0) / m).sqrt()
            };
            Ok(Column {
                size: l,
                svc,
                tsvc,
                svc_se: se(svc, &|r| r.0),
                tsvc_se: se(tsvc, &|r| r.1),
                tsvc_wins: results.iter().filter(|r| r.1 < r.0).count(),
                tsvc_losses: results.iter().filter(|r| r.1 > r.0).count(),
                rounds: mean(&|r| r.2 as f64),
            })
        })
        .collect()
}
