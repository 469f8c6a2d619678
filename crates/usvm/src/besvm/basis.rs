//! The basis-expanding feature map of BE-SVM (paper eq. 3, 4).
//!
//! For a basis `B = {b_1..b_B}` chosen from the training set and a similarity `s`, the empirical map is
//! `φ̃(x) = [s(b_1, x), …, s(b_B, x)]` and BE-SVM's normalisation is
//!
//! `φ(x) = (φ̃(x) - μ) / m`, `μ = E_train[φ̃]`, `m = E_train‖φ̃ - μ‖`,
//!
//! with both statistics taken over the training examples only (the map is fitted once and then applied
//! unchanged to any input). Several measures share the basis and concatenate their normalised maps, so the
//! `1/m` scaling balances their regularisation. The comparison normalisation is Nyström's
//! `φ(x) = K_BB^{-1/2} φ̃(x)` (eq. 2), made real for an indefinite `K_BB` by spectrum clipping: with the
//! eigendecomposition of the symmetric part `½(K_BB + K_BBᵀ) = V Λ Vᵀ`, `φ(x) = Λ₊^{-1/2} V₊ᵀ φ̃(x)` over the
//! eigenvalues above `10⁻¹⁰·max λ` (the others, negative ones included, are set to zero).
//!
//! Basis selection: random (seeded, without replacement), by index (`⌊k ℓ / B⌋`, `k = 0..B-1`: evenly
//! spaced, the first `B` only when `B = ℓ`), or kernel k-medoids on the kernel distance
//! `d(x, y) = s(x, x) + s(y, y) - s(x, y) - s(y, x)` (clipped at 0; summed over the measures after dividing
//! each by its mean) — `O(ℓ²)` similarity evaluations.

use ndarray::{Array2, Axis};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::kmedoids::kmedoids;
use crate::data::Features;
use crate::error::{Error, Result, invalid};
use crate::kernel::similarity::{Measure, Similarity};
use crate::model::basis_expansion::{REMEDY, apply};
pub use crate::model::{BasisExpansion, Block};

/// How many basis vectors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BasisSize {
    /// Every training example.
    All,
    /// This many (at most the number of training examples).
    Count(usize),
    /// This fraction of the training examples, in `(0, 1]` (rounded, at least one).
    Fraction(f64),
}

/// How the basis is chosen from the training set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum BasisSelection {
    /// Uniformly at random without replacement.
    Random {
        /// The seed of the draw.
        seed: u64,
    },
    /// Evenly spaced indices `⌊k ℓ / B⌋`.
    Index,
    /// Kernel k-medoids (k-medoids++ start, alternating iterations).
    KMedoids {
        /// The seed of the k-medoids++ start.
        seed: u64,
        /// Maximum alternating iterations.
        max_iter: usize,
    },
}

/// How the empirical map is normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalisation {
    /// BE-SVM's eq. 4: centre, then divide by the mean norm of the centred training maps.
    BeSvm,
    /// Nyström's `K_BB^{-1/2}` with spectrum clipping.
    Nystroem,
}

/// Settings of the feature map: plain data, validated in [`BasisExpansionParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BasisExpansionParams {
    /// One or more similarity measures, sharing the basis; their maps are concatenated in this order.
    pub measures: Vec<Measure>,
    /// How many basis vectors.
    pub basis_size: BasisSize,
    /// How the basis is chosen.
    pub selection: BasisSelection,
    /// How the map is normalised.
    pub normalisation: Normalisation,
}

impl Default for BasisExpansionParams {
    fn default() -> Self {
        BasisExpansionParams {
            measures: vec![Measure::Kernel(crate::Kernel::Rbf { gamma: 1.0 })],
            basis_size: BasisSize::All,
            selection: BasisSelection::Random { seed: 0 },
            normalisation: Normalisation::BeSvm,
        }
    }
}

impl BasisExpansionParams {
    /// Checks the settings for a training set of `n_samples × n_features`.
    pub fn validate(&self, n_samples: usize, n_features: usize) -> Result<()> {
        if self.measures.is_empty() {
            return Err(invalid("similarity", "[]", "at least one similarity measure is needed"));
        }
        for m in &self.measures {
            m.check(n_features)?;
        }
        match self.basis_size {
            BasisSize::Count(0) => return Err(invalid("basis_size", 0, "must be at least 1")),
            BasisSize::Count(b) if b > n_samples => {
                return Err(invalid("basis_size", b, "exceeds the number of training examples"));
            }
            BasisSize::Fraction(f) if !(f > 0.0 && f <= 1.0) => {
                return Err(invalid("basis_size", f, "a fraction must be in (0, 1]"));
            }
            _ => {}
        }
        if let BasisSelection::KMedoids { max_iter: 0, .. } = self.selection {
            return Err(invalid("max_iter", 0, "k-medoids needs at least 1 iteration"));
        }
        Ok(())
    }

    /// The number of basis vectors for `n` training examples.
    pub fn resolved_size(&self, n: usize) -> usize {
        match self.basis_size {
            BasisSize::All => n,
            BasisSize::Count(b) => b.min(n),
            BasisSize::Fraction(f) => ((f * n as f64).round() as usize).clamp(1, n),
        }
    }

    /// Fits the map on the training features `x` and returns it with the mapped training set.
    pub fn fit_transform(&self, x: &Features) -> Result<(BasisExpansion, Array2<f64>)> {
        let n = x.n_samples();
        if n == 0 {
            return Err(Error::Empty("no training examples"));
        }
        if x.n_features() == 0 {
            return Err(Error::Empty("no features"));
        }
        x.validate()?;
        self.validate(n, x.n_features())?;
        let size = self.resolved_size(n);
        let indices = self.select(x, size)?;
        let basis = x.select_rows(&indices);
        let mut blocks = Vec::with_capacity(self.measures.len());
        let mut mapped = Vec::with_capacity(self.measures.len());
        for m in &self.measures {
            // φ̃ of every training example, one row each.
            let raw = m.cross_similarity(&basis, x)?.reversed_axes().as_standard_layout().into_owned();
            let block = match self.normalisation {
                Normalisation::BeSvm => centred(&raw, m)?,
                Normalisation::Nystroem => nystroem(&raw.select(Axis(0), &indices), m)?,
            };
            mapped.push(apply(&block, raw));
            blocks.push(block);
        }
        let views: Vec<_> = mapped.iter().map(|a| a.view()).collect();
        let width = views.iter().map(|v| v.ncols()).sum();
        crate::memory::reserve("the basis-expansion features", REMEDY, &[n, width])?;
        let features = ndarray::concatenate(Axis(1), &views)
            .expect("blocks have one row per example")
            .as_standard_layout()
            .into_owned();
        Ok((BasisExpansion { measures: self.measures.clone(), basis, basis_indices: indices, blocks }, features))
    }

    /// [`Self::fit_transform`] without the mapped training set.
    pub fn fit(&self, x: &Features) -> Result<BasisExpansion> {
        self.fit_transform(x).map(|(map, _)| map)
    }

    fn select(&self, x: &Features, size: usize) -> Result<Vec<usize>> {
        let n = x.n_samples();
        Ok(match self.selection {
            BasisSelection::Index => (0..size).map(|k| k * n / size).collect(),
            BasisSelection::Random { seed } => {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut all: Vec<usize> = (0..n).collect();
                all.shuffle(&mut rng);
                all.truncate(size);
                all.sort_unstable();
                all
            }
            BasisSelection::KMedoids { seed, max_iter } => {
                let d = kernel_distance(&self.measures, x)?;
                let mut medoids = kmedoids(d.view(), size, seed, max_iter).medoids;
                medoids.sort_unstable();
                medoids
            }
        })
    }
}

/// `Σ_m d_m / mean(d_m)` with `d_m(i, j) = max(0, s(i, i) + s(j, j) - s(i, j) - s(j, i))`; three `n × n`
/// matrices at a time.
fn kernel_distance(measures: &[Measure], x: &Features) -> Result<Array2<f64>> {
    let n = x.n_samples();
    crate::memory::reserve("the k-medoids distance matrices", REMEDY, &[3, n, n])?;
    let mut total = Array2::zeros((n, n));
    for m in measures {
        let s = m.cross_similarity(x, x)?;
        let d = Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j { 0.0 } else { (s[[i, i]] + s[[j, j]] - s[[i, j]] - s[[j, i]]).max(0.0) }
        });
        let mean = d.sum() / (n * n) as f64;
        if mean > 0.0 {
            total.scaled_add(1.0 / mean, &d);
        }
    }
    Ok(total)
}

/// BE-SVM's statistics of the training maps `raw` (one row per training example).
fn centred(raw: &Array2<f64>, m: &Measure) -> Result<Block> {
    let mean = raw.mean_axis(Axis(0)).expect("at least one training example").to_vec();
    let scale = raw
        .rows()
        .into_iter()
        .map(|r| r.iter().zip(&mean).map(|(v, mu)| (v - mu) * (v - mu)).sum::<f64>().sqrt())
        .sum::<f64>()
        / raw.nrows() as f64;
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(Error::Degenerate {
            what: "similarity map",
            detail: format!("the {} map is constant (or not finite) on the training set: mean norm {scale}", m.name()),
        });
    }
    Ok(Block::Centred { mean, scale })
}

/// Nyström's `Λ₊^{-1/2} V₊ᵀ` from `K_BB` (rows of the training maps at the basis indices).
fn nystroem(k_bb: &Array2<f64>, m: &Measure) -> Result<Block> {
    let (values, vectors) = crate::covariance::full_eigen(k_bb.view())?;
    let top = values.first().copied().unwrap_or(0.0);
    if !(top > 0.0 && top.is_finite()) {
        return Err(Error::Degenerate {
            what: "basis similarity",
            detail: format!("the {} similarity of the basis has no positive eigenvalue (largest {top})", m.name()),
        });
    }
    let keep: Vec<usize> = (0..values.len()).filter(|&k| values[k] > 1e-10 * top).collect();
    let projection =
        Array2::from_shape_fn((keep.len(), k_bb.nrows()), |(r, c)| vectors[[c, keep[r]]] / values[keep[r]].sqrt());
    Ok(Block::Nystroem { projection })
}
