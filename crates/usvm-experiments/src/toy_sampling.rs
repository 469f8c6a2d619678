//! The toy sampling experiment (thesis 3.3, 3.5.1, Fig. 3.3 and 3.4; DESIGN section 8): how many samples
//! per Gaussian LSVM-sampling needs to reach the LSVM-GSU hyperplane.
//!
//! LSVM-sampling minimises `λ/2‖w‖² + (1/ℓN) Σ_i Σ_s max(0, 1 − y_i(wᵀx_is + b))` over `N` draws
//! `x_is ~ N(x_i, Σ_i)`; as `N → ∞` its loss tends to the expected hinge loss of LSVM-GSU (same `λ`), so its
//! hyperplane tends to LSVM-GSU's. The distance is measured by the angle between the normals,
//! `θ = 2 atan2(‖â − b̂‖, ‖â + b̂‖)` for unit normals `â, b̂` (accurate at small angles, unlike `acos`).
//!
//! The thesis does not publish its toy sets, so [`toy_dataset`] draws a similar one: `per_class` Gaussians per
//! class with means `N(±m·1/√n, I)` and full covariances `Σ_i = s² A_i A_iᵀ` (`A_i` an `n × n` standard
//! normal matrix: random orientation and anisotropy), from a seed.

use ndarray::{Array2, Array3};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use usvm::covariance::Covariances;
use usvm::data::Dataset;
use usvm::error::{Error, Result};
use usvm::linalg::norm2;

fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> Error {
    Error::InvalidParameter { name, value: value.to_string(), reason }
}
use usvm::model::LinearModel;
use usvm::svm::{LinearMethod, LinearSvmParams};

/// The thesis' reading of Fig. 3.4: `θ ≈ 1.7°` at `N = 10³` in 2-D and at `N = 5·10⁴` in 3-D.
pub const PAPER_ANGLE_DEG: f64 = 1.7;
/// `(dimension, N)` at which the thesis reports [`PAPER_ANGLE_DEG`].
pub const PAPER_POINTS: [(usize, usize); 2] = [(2, 1_000), (3, 50_000)];

/// A toy set: `per_class` Gaussians of each class (labels 0 and 1) in `dim` dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct ToySet {
    pub dim: usize,
    pub per_class: usize,
    /// Distance of each class centre from the origin.
    pub separation: f64,
    /// `s` in `Σ_i = s² A_i A_iᵀ`.
    pub scale: f64,
    pub seed: u64,
}

impl Default for ToySet {
    fn default() -> Self {
        ToySet { dim: 2, per_class: 5, separation: 1.5, scale: 0.5, seed: 1 }
    }
}

/// Draws the toy set (see the module docs).
pub fn toy_dataset(set: &ToySet) -> Result<Dataset<'static>> {
    if set.dim == 0 {
        return Err(invalid("dim", 0, "must be at least 1"));
    }
    if set.per_class == 0 {
        return Err(invalid("per_class", 0, "must be at least 1"));
    }
    for (field, v) in [("separation", set.separation), ("scale", set.scale)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(invalid(field, v, "must be finite and non-negative"));
        }
    }
    let (n, l) = (set.dim, 2 * set.per_class);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(set.seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let centre = set.separation / (n as f64).sqrt();
    let mut x = Array2::zeros((l, n));
    let mut cov = Array3::zeros((l, n, n));
    let mut labels = Vec::with_capacity(l);
    for i in 0..l {
        let positive = i < set.per_class;
        labels.push(i64::from(positive));
        for j in 0..n {
            x[[i, j]] = if positive { centre } else { -centre } + normal();
        }
        let a = Array2::from_shape_fn((n, n), |_| normal());
        let s = set.scale * set.scale * a.dot(&a.t());
        // Symmetrise exactly (the product is symmetric up to round-off).
        for r in 0..n {
            for c in 0..n {
                cov[[i, r, c]] = 0.5 * (s[[r, c]] + s[[c, r]]);
            }
        }
    }
    Ok(Dataset::dense(x, labels).with_covariances(Covariances::full(cov)))
}

/// The angle in degrees between the hyperplanes with normals `a` and `b` (0 for parallel, same side).
pub fn hyperplane_angle(a: &[f64], b: &[f64]) -> f64 {
    let (na, nb) = (norm2(a), norm2(b));
    if na == 0.0 || nb == 0.0 {
        return f64::NAN;
    }
    let (mut diff, mut sum) = (0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (u, v) = (x / na, y / nb);
        diff += (u - v) * (u - v);
        sum += (u + v) * (u + v);
    }
    (2.0 * diff.sqrt().atan2(sum.sqrt())).to_degrees()
}

/// The experiment's settings: one toy set, one `λ`, several sample sizes, `repeats` sampling seeds each.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingExperiment {
    pub set: ToySet,
    pub lambda: f64,
    /// The sample sizes `N` (draws per Gaussian).
    pub samples: Vec<usize>,
    /// Sampling seeds `0..repeats` for every `N`.
    pub repeats: u64,
}

impl Default for SamplingExperiment {
    fn default() -> Self {
        SamplingExperiment {
            set: ToySet::default(),
            lambda: 0.05,
            samples: vec![10, 100, 1_000, 10_000, 100_000],
            repeats: 5,
        }
    }
}

/// The angles at one sample size (one per sampling seed).
#[derive(Debug, Clone, PartialEq)]
pub struct AngleResult {
    pub samples: usize,
    /// Degrees, in seed order.
    pub angles: Vec<f64>,
}

impl AngleResult {
    pub fn mean(&self) -> f64 {
        self.angles.iter().sum::<f64>() / self.angles.len() as f64
    }
    pub fn min(&self) -> f64 {
        self.angles.iter().copied().fold(f64::INFINITY, f64::min)
    }
    pub fn max(&self) -> f64 {
        self.angles.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

/// What [`SamplingExperiment::run`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingOutcome {
    pub data: Dataset<'static>,
    /// LSVM on the means and LSVM-GSU.
    pub hinge: LinearModel,
    pub gsu: LinearModel,
    /// The angle between LSVM and LSVM-GSU (degrees).
    pub hinge_angle: f64,
    pub angles: Vec<AngleResult>,
}

impl SamplingExperiment {
    /// Number of LSVM-sampling fits [`Self::run`] performs.
    pub fn n_fits(&self) -> usize {
        self.samples.len() * self.repeats as usize
    }

    /// Runs the experiment; `on_fit` is called after every sampling fit (from any thread).
    pub fn run(&self, on_fit: &(dyn Fn() + Sync)) -> Result<SamplingOutcome> {
        if self.repeats == 0 {
            return Err(invalid("repeats", 0, "must be at least 1"));
        }
        if let Some(&n) = self.samples.iter().find(|&&n| n == 0) {
            return Err(invalid("samples", n, "must be at least 1"));
        }
        let data = toy_dataset(&self.set)?;
        let params = |method| LinearSvmParams { method, lambda: self.lambda, ..Default::default() };
        let gsu = params(LinearMethod::Gsu).fit(&data)?.model;
        let hinge = params(LinearMethod::Hinge).fit(&data)?.model;
        let w_gsu = gsu.coef.dense().row(0).to_vec();
        let angle_to_gsu = |m: &LinearModel| hyperplane_angle(&w_gsu, &m.coef.dense().row(0).to_vec());
        let jobs: Vec<(usize, u64)> =
            self.samples.iter().flat_map(|&n| (0..self.repeats).map(move |seed| (n, seed))).collect();
        let angles: Vec<f64> = jobs
            .par_iter()
            .map(|&(samples, seed)| {
                let fit = params(LinearMethod::Sampling { samples, seed }).fit(&data)?;
                on_fit();
                Ok(angle_to_gsu(&fit.model))
            })
            .collect::<Result<_>>()?;
        let angles = self
            .samples
            .iter()
            .zip(angles.chunks(self.repeats as usize))
            .map(|(&samples, a)| AngleResult { samples, angles: a.to_vec() })
            .collect();
        Ok(SamplingOutcome { hinge_angle: angle_to_gsu(&hinge), data, hinge, gsu, angles })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_by_hand() {
        assert!((hyperplane_angle(&[1.0, 0.0], &[1.0, 1.0]) - 45.0).abs() < 1e-12);
        assert!((hyperplane_angle(&[2.0, 0.0, 0.0], &[-1.0, 0.0, 0.0]) - 180.0).abs() < 1e-12);
        assert_eq!(hyperplane_angle(&[1.0, 2.0], &[2.0, 4.0]), 0.0);
        let tiny = 1e-9_f64;
        assert!((hyperplane_angle(&[1.0, 0.0], &[1.0, tiny]) - tiny.to_degrees()).abs() < 1e-20);
        assert!(hyperplane_angle(&[0.0, 0.0], &[1.0, 0.0]).is_nan());
    }

    #[test]
    fn toy_set_is_seeded_and_valid() {
        let set = ToySet { dim: 3, ..Default::default() };
        let a = toy_dataset(&set).unwrap();
        a.validate().unwrap();
        assert_eq!((a.n_samples(), a.n_features()), (10, 3));
        assert_eq!(a, toy_dataset(&set).unwrap());
        assert_ne!(a, toy_dataset(&ToySet { seed: 2, ..set }).unwrap());
    }
}
