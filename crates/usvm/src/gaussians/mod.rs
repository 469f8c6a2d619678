//! Uncertainty modelling (DESIGN 2.9): turning raw measurements into the Gaussians `N(x_i, Σ_i)` the
//! classifiers learn from. Mathematics only; the CLI (`usvm uncertainty ...`) and Python wrap it.
//!
//! | source | helper | covariance |
//! |---|---|---|
//! | repeated observations `x_i^1..x_i^N` (thesis eq. 4.12) | [`gaussians_from_repeats`] | full, diagonal, isotropic `tr Σ/n`, or low-rank (centred observations / √(N-1)) |
//! | small random image translations (thesis appendix C) | [`translation_covariances`] | rank 2: `J Σ_t Jᵀ`, stored as the factor `J Σ_t^{1/2}` |
//! | reported standard errors (WDBC protocol, DESIGN 8) | [`standard_errors_to_variances`] | diagonal |
//! | Welch periodogram segments of a time series | [`welch_pool`] | diagonal (per-frequency variance) |
//! | spatial blocks of an `H × W × C` feature map | [`block_pool`] | diagonal (per-block, per-channel variance) |
//!
//! ```
//! use ndarray::array;
//! use usvm::covariance::Covariance;
//! use usvm::gaussians::{CovarianceForm, gaussians_from_repeats};
//! // Two examples, each observed three times in R².
//! let a = array![[0.0, 1.0], [2.0, 1.0], [1.0, 4.0]];
//! let b = array![[5.0, 5.0], [5.0, 6.0], [5.0, 7.0]];
//! let g = gaussians_from_repeats(&[a.view(), b.view()], CovarianceForm::Full).unwrap();
//! assert_eq!(g.means.row(0).to_vec(), vec![1.0, 2.0]);
//! // Unbiased: Σ_1 = [[1, 0], [0, 3]] (divided by N - 1 = 2).
//! assert_eq!(g.covariances.as_dyn().quad_form(0, &[0.0, 1.0]), 3.0);
//! ```

mod pooling;
mod repeated;
mod standard_error;
mod translation;

pub use pooling::{BlockParams, Pooled, WelchParams, Window, block_pool, welch_frequencies, welch_pool};
pub use repeated::{CovarianceForm, Gaussians, gaussians_from_repeats};
pub use standard_error::{StandardErrorRule, standard_errors_to_variances};
pub use translation::{
    TranslationParams, image_gradients, translation_covariances, translation_covariances_in, translation_factor,
    warp_bilinear,
};
