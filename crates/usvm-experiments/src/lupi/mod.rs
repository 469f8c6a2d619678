//! Paper 004's LUPI experiments: a synthetic task (here), the 8×8-digits stand-in for MNIST+
//! ([`digits_plus`]), the MNIST+ file layout ([`mnist_plus`]) and the Table 1 protocol ([`table1`]).
//!
//! **Task.** A clean latent signal `z_i ~ N(0, I_d)` decides the label, `y_i = sign(Σ_{j<s} z_ij)` (the
//! first `s = n_signal` coordinates). The regular view is a noisy measurement, `x_i = z_i + σ_i ε_i`,
//! `ε_i ~ N(0, I_d)`, by one of two sensors: a good one (`σ_i = noise`) or, for a fraction
//! `noisy_fraction` of the examples, a bad one (`σ_i = noise_high`). The privileged view is what a
//! teacher knows at training time: the clean signal and which sensor measured the example,
//! `x*_i = (z_i1, …, z_is, [σ_i = noise_high])`. It tells hard examples (the badly measured ones, whose
//! `x_i` may sit on the wrong side) from easy ones — the information the SVM+ correcting function turns
//! into slacks. Test examples come from the same mixture; prediction sees only `x`.
//!
//! **Noise protocol.** Paper 004 adds white Gaussian noise to the validation and test examples at a
//! signal-to-noise ratio of 4, 6, 8, 10 or 15 dB: for each example, noise of variance
//! `P_i / 10^{SNR/10}` per feature, `P_i = ‖x_i‖²/n_x` its measured power (MATLAB's `awgn(x, snr,
//! 'measured')`). Where the noise enters relative to a normalisation of the features is part of the
//! protocol: see [`table1`].
//!
//! ```
//! use usvm_experiments::lupi::{LupiTask, add_white_noise};
//! let task = LupiTask { n: 100, ..Default::default() }.generate(7);
//! assert_eq!(task.dataset.n_samples(), 100);
//! assert_eq!(task.dataset.privileged.as_ref().unwrap().n_features(), 3);
//! let noisy = add_white_noise(task.dataset.features.to_dense().view(), 10.0, 1);
//! assert_eq!(noisy.dim(), (100, 10));
//! ```

use ndarray::{Array2, ArrayView2};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;

use usvm::data::{Dataset, Features};

pub mod digits_plus;
pub mod mnist_plus;
pub mod table1;

/// The SNRs (dB) of paper 004's Table 1.
pub const PAPER_SNRS: [f64; 5] = [4.0, 6.0, 8.0, 10.0, 15.0];

/// Settings of the synthetic task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LupiTask {
    /// Number of examples.
    pub n: usize,
    /// Dimension `d` of the regular view.
    pub n_features: usize,
    /// Number of latent coordinates that carry the label (the privileged view's dimension).
    pub n_signal: usize,
    /// Noise standard deviation of the good sensor.
    pub noise: f64,
    /// Noise standard deviation of the bad sensor.
    pub noise_high: f64,
    /// Fraction of examples measured by the bad sensor.
    pub noisy_fraction: f64,
}

impl Default for LupiTask {
    fn default() -> Self {
        LupiTask { n: 200, n_features: 10, n_signal: 2, noise: 0.3, noise_high: 3.0, noisy_fraction: 0.4 }
    }
}

/// A generated sample: labels in `{0, 1}`, regular features, and the privileged view in
/// `dataset.privileged`.
#[derive(Debug, Clone)]
pub struct LupiSample {
    pub dataset: Dataset<'static>,
}

impl LupiTask {
    /// Draws `n` examples with the given seed (same seed, same bits).
    pub fn generate(&self, seed: u64) -> LupiSample {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (n, d, s) = (self.n, self.n_features, self.n_signal.min(self.n_features).max(1));
        let z = Array2::from_shape_fn((n, d), |_| StandardNormal.sample(&mut rng));
        let unit = Uniform::new(0.0, 1.0).expect("valid range");
        let bad: Vec<bool> = (0..n).map(|_| unit.sample(&mut rng) < self.noisy_fraction).collect();
        let x = Array2::from_shape_fn((n, d), |(i, j)| {
            let e: f64 = StandardNormal.sample(&mut rng);
            z[[i, j]] + if bad[i] { self.noise_high } else { self.noise } * e
        });
        let labels: Vec<i64> = (0..n).map(|i| i64::from((0..s).map(|j| z[[i, j]]).sum::<f64>() > 0.0)).collect();
        let x_star =
            Array2::from_shape_fn((n, s + 1), |(i, j)| if j < s { z[[i, j]] } else { f64::from(u8::from(bad[i])) });
        LupiSample { dataset: Dataset::dense(x, labels).with_privileged(Features::dense(x_star)) }
    }

    /// Trial `t` of the noisy-test protocol ([`table1`]): this task's training set, 1,000 validation and
    /// 2,000 test examples, each drawn with its own seed.
    pub fn split(&self, t: u64) -> table1::Split {
        let eval = |n: usize, seed: u64| {
            let d = LupiTask { n, ..*self }.generate(seed).dataset;
            (d.features.to_dense(), d.labels.into_owned())
        };
        table1::Split {
            train: self.generate(1000 + t).dataset,
            validation: eval(1000, 2000 + t),
            test: eval(2000, 3000 + t),
        }
    }
}

/// `x` plus white Gaussian noise at `snr_db` per example (module docs).
pub fn add_white_noise(x: ArrayView2<f64>, snr_db: f64, seed: u64) -> Array2<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = x.to_owned();
    let ratio = 10f64.powf(snr_db / 10.0);
    for mut row in out.rows_mut() {
        let power = row.iter().map(|v| v * v).sum::<f64>() / row.len().max(1) as f64;
        let sd = (power / ratio).sqrt();
        for v in row.iter_mut() {
            let e: f64 = StandardNormal.sample(&mut rng);
            *v += sd * e;
        }
    }
    out
}
