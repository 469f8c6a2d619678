//! The model-file form of a BE-SVM: the usual keys (`"coef"` holds the hyperplanes over the mapped
//! features, `"n_features"` the input width, `"kernel"` is null) plus
//! `"basis_expansion": {"measures": [{"type": "rbf", "gamma": ...} | {"type": "rigid", "grid": {...},
//! "shift": h} | ...], "basis": {"dense": [[...]]} | {"sparse": {...}}, "basis_indices": [...],
//! "normalisation": [{"type": "centred", "mean": [...], "scale": m} | {"type": "nystroem",
//! "projection": [[...]]}, ...]}` (one normalisation per measure).

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::file::{FORMAT, SupportVectors, VERSION, coef_to_file};
use super::{BasisExpansion, Block};
use super::{BeSvmModel, LinearModel, ModelFile};
use crate::data::Features;
use crate::error::{Error, Result};
use crate::kernel::similarity::{Measure, Similarity};

/// One measure's normalisation in file form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum BlockFile {
    /// `(φ̃ - mean) / scale`.
    Centred {
        /// The training maps' mean.
        mean: Vec<f64>,
        /// The mean norm of the centred training maps.
        scale: f64,
    },
    /// `Λ₊^{-1/2} V₊ᵀ`, rows.
    Nystroem {
        /// The projection's rows.
        projection: Vec<Vec<f64>>,
    },
}

/// The feature map of a BE-SVM in file form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BasisExpansionFile {
    /// The similarity measures.
    pub measures: Vec<Measure>,
    /// The basis vectors.
    pub basis: SupportVectors,
    /// The basis vectors' rows in the training set.
    pub basis_indices: Vec<usize>,
    /// One normalisation per measure.
    pub normalisation: Vec<BlockFile>,
}

fn rows(a: &ndarray::ArrayView2<'_, f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

impl ModelFile {
    /// The file form of a BE-SVM fitted by `method` with `params`.
    pub fn from_basis_expansion(model: &BeSvmModel, method: &str, params: serde_json::Value) -> Self {
        let e = &model.expansion;
        let (coef, intercept) = coef_to_file(model.linear.coef.dense().view(), &model.linear.intercept);
        let basis = match &e.basis {
            Features::Dense(a) => SupportVectors::Dense(rows(&a.view())),
            Features::Sparse(m) => SupportVectors::Sparse(m.clone().into_owned()),
        };
        let normalisation = e
            .blocks
            .iter()
            .map(|b| match b {
                Block::Centred { mean, scale } => BlockFile::Centred { mean: mean.clone(), scale: *scale },
                Block::Nystroem { projection } => BlockFile::Nystroem { projection: rows(&projection.view()) },
            })
            .collect();
        ModelFile {
            format: FORMAT.into(),
            version: VERSION,
            method: method.into(),
            kernel: None,
            n_features: e.n_features(),
            classes: model.linear.classes.clone(),
            coef,
            columns: None,
            intercept,
            params: Some(params),
            seed: None,
            hyperparameters: None,
            platt: None,
            platt_per_output: None,
            support_vectors: None,
            feature_map: None,
            basis_expansion: Some(BasisExpansionFile {
                measures: e.measures.clone(),
                basis,
                basis_indices: e.basis_indices.clone(),
                normalisation,
            }),
            multiclass: None,
            n_support: None,
        }
    }

    /// The BE-SVM stored in the file, after checking the measures and every shape.
    pub fn to_basis_expansion(&self) -> Result<BeSvmModel> {
        let f = self
            .basis_expansion
            .as_ref()
            .ok_or_else(|| Error::Format("a BE-SVM model needs \"basis_expansion\"".into()))?;
        let fmt = |what: &str, e: Error| Error::Format(format!("basis_expansion.{what}: {e}"));
        let basis = match &f.basis {
            SupportVectors::Dense(r) => {
                // Shapes first: the stated width is allocated only once the rows have it.
                if let Some((i, row)) = r.iter().enumerate().find(|(_, row)| row.len() != self.n_features) {
                    return Err(Error::Format(format!(
                        "basis vector {i} has {} entries, n_features is {}",
                        row.len(),
                        self.n_features
                    )));
                }
                Features::dense(Array2::from_shape_fn((r.len(), self.n_features), |(i, j)| r[i][j]))
            }
            SupportVectors::Sparse(m) if m.n_cols == self.n_features => Features::Sparse(m.clone()),
            SupportVectors::DenseNonzeros(_) | SupportVectors::Packed(_) => {
                return Err(Error::Format("basis vectors are stored \"dense\" or \"sparse\"".into()));
            }
            SupportVectors::Sparse(m) => {
                return Err(Error::Format(format!(
                    "basis vectors have {} columns, n_features is {}",
                    m.n_cols, self.n_features
                )));
            }
        };
        basis.validate().map_err(|e| fmt("basis", e))?;
        let b = basis.n_samples();
        if b == 0 || f.basis_indices.len() != b {
            return Err(Error::Format(format!(
                "{b} basis vectors and {} basis indices (need as many, at least one)",
                f.basis_indices.len()
            )));
        }
        if f.measures.is_empty() || f.measures.len() != f.normalisation.len() {
            return Err(Error::Format(format!(
                "{} measures and {} normalisations (need as many, at least one)",
                f.measures.len(),
                f.normalisation.len()
            )));
        }
        for m in &f.measures {
            m.check(self.n_features).map_err(|e| fmt("measures", e))?;
        }
        let mut blocks = Vec::with_capacity(f.normalisation.len());
        for (k, n) in f.normalisation.iter().enumerate() {
            blocks.push(match n {
                BlockFile::Centred { mean, scale } => {
                    // A subnormal scale would turn the mapped features into infinities.
                    if mean.len() != b || !(scale.is_normal() && *scale > 0.0) || mean.iter().any(|v| !v.is_finite()) {
                        return Err(Error::Format(format!(
                            "normalisation {k}: need {b} finite means (found {}) and a positive, normal scale \
                             (found {scale:e}; at least {:e})",
                            mean.len(),
                            f64::MIN_POSITIVE
                        )));
                    }
                    Block::Centred { mean: mean.clone(), scale: *scale }
                }
                BlockFile::Nystroem { projection } => {
                    if projection.iter().any(|r| r.len() != b || r.iter().any(|v| !v.is_finite())) {
                        return Err(Error::Format(format!(
                            "normalisation {k}: projection rows need {b} finite entries"
                        )));
                    }
                    let a = Array2::from_shape_fn((projection.len(), b), |(r, c)| projection[r][c]);
                    Block::Nystroem { projection: a }
                }
            });
        }
        let expansion =
            BasisExpansion { measures: f.measures.clone(), basis, basis_indices: f.basis_indices.clone(), blocks };
        let (coef, intercept) = self.checked_coef(expansion.n_outputs(), "the width of the basis expansion")?;
        Ok(BeSvmModel {
            expansion,
            linear: LinearModel { classes: self.classes.clone(), coef: coef.into(), intercept },
        })
    }
}
