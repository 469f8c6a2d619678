//! Learning in linear subspaces (thesis 3.2, eqs. 3.9-3.12).
//!
//! For each example, `Σ_i = U_i Λ_i U_iᵀ` (eigenvalues descending); keep the first `d_i` eigenvectors,
//! `d_i` the smallest count whose eigenvalues hold more than a fraction `p` of the trace (all `n` when
//! `p = 1`). With `P_i = U'_iᵀ`, the loss uses `z_i = P_i x_i`, `Σ^z_i = Λ'_i`, `w_z = P_i w`:
//! `d = 1 - y(w_zᵀ z_i + b)`, `σ² = w_zᵀ Λ'_i w_z`. Since `w_zᵀz_i = wᵀ(U'U'ᵀx_i)` and
//! `w_zᵀΛ'w_z = wᵀ(U'Λ'U'ᵀ)w`, this is the GSU objective on the projected means `U'U'ᵀx_i` with the
//! low-rank covariances `U'Λ'U'ᵀ` — which is how it is solved. As in the paper, the mean is projected too.
//! For diagonal covariances the eigenvectors are coordinate axes: the axes of LARGEST variance are kept
//! (the reference C++ code keeps the smallest). An example with zero covariance keeps its mean.

use ndarray::{Array2, ArrayView2};

use crate::covariance::Covariances;
use crate::covariance::full_eigen;
use crate::data::{Dataset, Features};
use crate::error::{Error, Result, invalid};

/// Number of leading eigenvalues (given in descending order) holding more than `p` of their sum.
fn kept(values: &[f64], p: f64) -> usize {
    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
    if total <= 0.0 {
        return 0;
    }
    let mut acc = 0.0;
    for (k, v) in values.iter().enumerate() {
        acc += v.max(0.0);
        if acc / total > p {
            return k + 1;
        }
    }
    values.len()
}

/// The projected means and covariances of thesis 3.2 for variance fraction `p ∈ (0, 1]`.
pub fn project_to_subspaces(data: &Dataset, p: f64) -> Result<(Features<'static>, Covariances)> {
    if !(p > 0.0 && p <= 1.0) {
        return Err(invalid("subspace_variance", p, "must be in (0, 1]"));
    }
    let (l, n) = (data.n_samples(), data.n_features());
    let mut means = data.features.to_dense();
    match &data.covariances {
        Covariances::Diagonal(_) | Covariances::SparseDiagonal(_) => {
            let dense = match &data.covariances {
                Covariances::Diagonal(c) => c.variances.clone(),
                Covariances::SparseDiagonal(c) => c.variances.to_dense(),
                _ => unreachable!(),
            };
            let mut variances = Array2::zeros((l, n));
            for i in 0..l {
                let row = dense.row(i);
                let mut order: Vec<usize> = (0..n).collect();
                // Largest variance first; ties by index (stable).
                order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
                let sorted: Vec<f64> = order.iter().map(|&j| row[j]).collect();
                let d = kept(&sorted, p);
                if d == 0 {
                    continue; // zero covariance: keep the mean, no uncertainty
                }
                let mut keep = vec![false; n];
                order[..d].iter().for_each(|&j| keep[j] = true);
                for j in 0..n {
                    if keep[j] {
                        variances[[i, j]] = row[j];
                    } else {
                        means[[i, j]] = 0.0;
                    }
                }
            }
            Ok((Features::dense(means), Covariances::diagonal(variances)))
        }
        Covariances::Full(_) | Covariances::LowRank(_) => {
            let cov = data.covariances.as_dyn();
            let mut factors = Vec::with_capacity(l);
            let mut e = vec![0.0; n];
            crate::memory::reserve("a dense covariance", "use fewer features", &[n, n])?;
            for i in 0..l {
                // Σ_i row by row (Σ_i e_j, symmetric) through the trait: works for full and low-rank storage.
                let mut sigma = Array2::zeros((n, n));
                for j in 0..n {
                    e[j] = 1.0;
                    cov.apply_add(i, 1.0, &e, sigma.row_mut(j).as_slice_mut().expect("standard layout"));
                    e[j] = 0.0;
                }
                let (values, vectors) = full_eigen(ArrayView2::from(&sigma))?;
                let d = kept(&values, p);
                if d == 0 {
                    factors.push(Array2::zeros((n, 0)));
                    continue;
                }
                let u = vectors.slice(ndarray::s![.., ..d]).to_owned();
                // x ← U'U'ᵀx
                let x = means.row(i).to_owned();
                let z = u.t().dot(&x);
                means.row_mut(i).assign(&u.dot(&z));
                let mut f = u;
                for (mut column, value) in f.columns_mut().into_iter().zip(&values) {
                    column.iter_mut().for_each(|v| *v *= value.max(0.0).sqrt());
                }
                factors.push(f);
            }
            Ok((Features::dense(means), Covariances::low_rank(factors, None)))
        }
        Covariances::None | Covariances::Isotropic(_) => Err(Error::InvalidParameter {
            name: "subspace_variance",
            value: format!("{p} with {} covariances", data.covariances.kind()),
            reason: "subspace learning needs diagonal, low-rank or full covariances (an isotropic Gaussian has no preferred directions)",
        }),
    }
}
