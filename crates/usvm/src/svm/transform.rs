//! How each linear method turns the training data into the inputs of the one objective.

use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::covariance::Covariances;
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};

/// Sampling: `samples` draws from every `N(x_i, Σ_i)`, as plain vectors (LSVM-sampling, thesis 3.3).
/// Row `r` of the result comes from example `r / samples`. Seeded: same seed, same samples. Full
/// covariances are factored first (an error if an eigen-decomposition does not fit in memory).
pub fn sample_gaussians(data: &Dataset, samples: usize, seed: u64) -> Result<Features<'static>> {
    let (l, n) = (data.n_samples(), data.n_features());
    let factors = data.covariances.to_low_rank(l, n)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = ndarray::Array2::zeros((l * samples, n));
    for i in 0..l {
        let mean = data.features.row_dense(i);
        let f = &factors.factors[i];
        let diag = factors.diagonal_row(i);
        for s in 0..samples {
            let mut row = out.row_mut(i * samples + s);
            let row = row.as_slice_mut().expect("standard layout");
            row.copy_from_slice(&mean);
            for k in 0..f.ncols() {
                let z: f64 = StandardNormal.sample(&mut rng);
                for (o, &u) in row.iter_mut().zip(f.column(k).iter()) {
                    *o += z * u;
                }
            }
            if let Some(d) = diag {
                for (o, &v) in row.iter_mut().zip(d) {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    *o += z * v.sqrt();
                }
            }
        }
    }
    Ok(Features::dense(out))
}

/// Power SVM radii: `r_i² = scale² · tr Σ_i / n`, the variance of the Frobenius-nearest isotropic
/// Gaussian, as isotropic "covariances" so that `σ_i = r_i ‖w‖`. Errors when a radius overflows.
pub fn power_radii(data: &Dataset, scale: f64) -> Result<Covariances> {
    match data.covariances.to_isotropic(data.n_samples(), data.n_features()) {
        Covariances::Isotropic(mut c) => {
            c.variances.iter_mut().for_each(|v| *v *= scale * scale);
            if let Some((index, &value)) = c.variances.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinite { what: "Power SVM radius² (scale² · tr Σ / n)", index, value });
            }
            Ok(Covariances::Isotropic(c))
        }
        _ => Ok(Covariances::isotropic(vec![0.0; data.n_samples()])),
    }
}
