//! A fitted BE-SVM feature map (the `besvm` module fits it): the basis, the similarity measures, and each
//! measure's normalisation, `φ(x) = (φ̃(x) - μ) / m` (centred) or `Λ₊^{-1/2} V₊ᵀ φ̃(x)` (Nyström).

use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::data::Features;
use crate::error::{Error, Result};
use crate::kernel::similarity::{Measure, Similarity};

/// What to do when the map does not fit in memory.
pub(crate) const REMEDY: &str = "use fewer rows, a smaller basis (basis_size) or fewer similarity measures";

/// The normalisation of one measure's block of the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Block {
    /// `(φ̃ - mean) / scale`.
    Centred {
        /// The training maps' mean.
        mean: Vec<f64>,
        /// The mean norm of the centred training maps.
        scale: f64,
    },
    /// `projection · φ̃`, `projection = Λ₊^{-1/2} V₊ᵀ` (rank × B).
    Nystroem {
        /// `Λ₊^{-1/2} V₊ᵀ` (rank × B).
        projection: Array2<f64>,
    },
}

impl Block {
    pub(crate) fn width(&self) -> usize {
        match self {
            Block::Centred { mean, .. } => mean.len(),
            Block::Nystroem { projection } => projection.nrows(),
        }
    }
}

/// A fitted feature map: the basis, the measures, and each measure's normalisation statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BasisExpansion {
    /// The similarity measures, in the order their maps are concatenated.
    pub measures: Vec<Measure>,
    /// The basis vectors, one row each.
    pub basis: Features<'static>,
    /// The basis vectors' rows in the training set.
    pub basis_indices: Vec<usize>,
    /// One per measure.
    pub blocks: Vec<Block>,
}

/// The normalised block from the raw map (rows = examples).
pub(crate) fn apply(block: &Block, mut raw: Array2<f64>) -> Array2<f64> {
    match block {
        Block::Centred { mean, scale } => {
            for mut row in raw.rows_mut() {
                row.iter_mut().zip(mean).for_each(|(v, mu)| *v = (*v - mu) / scale);
            }
            raw
        }
        Block::Nystroem { projection } => raw.dot(&projection.t()),
    }
}

impl BasisExpansion {
    /// Width of the map: the sum of the blocks' widths.
    pub fn n_outputs(&self) -> usize {
        self.blocks.iter().map(Block::width).sum()
    }

    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.basis.n_features()
    }

    /// `φ(x)` for every row of `x`, with the statistics fitted on the training set.
    pub fn transform(&self, x: &Features) -> Result<Array2<f64>> {
        if x.n_features() != self.n_features() {
            return Err(Error::DimensionMismatch {
                what: "features of the basis expansion",
                expected: self.n_features(),
                found: x.n_features(),
            });
        }
        x.validate()?;
        let mapped: Vec<Array2<f64>> = self
            .measures
            .iter()
            .zip(&self.blocks)
            .map(|(m, block)| {
                let raw = m.cross_similarity(&self.basis, x)?.reversed_axes().as_standard_layout().into_owned();
                Ok(apply(block, raw))
            })
            .collect::<Result<_>>()?;
        crate::memory::reserve("the basis-expansion features", REMEDY, &[x.n_samples(), self.n_outputs()])?;
        let views: Vec<_> = mapped.iter().map(|a| a.view()).collect();
        Ok(ndarray::concatenate(Axis(1), &views)
            .expect("blocks have one row per example")
            .as_standard_layout()
            .into_owned())
    }
}
