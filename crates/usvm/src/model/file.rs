//! The JSON model file (DESIGN 6): `{"format": "usvm-model", "version": 2, "method", "kernel",
//! "n_features", "classes": [neg, pos], "coef": [...], "intercept": b, "params", "seed", "platt"}`, where
//! `params` is the [`crate::params::MethodParams`] object the model was fit with and `seed` the fit's seed.
//! Version 1 files (written by usvm 0.1.0, with free-form `"hyperparameters"` instead of `params`/`seed`)
//! are still read.
//! One-vs-rest models (more than two classes) store `coef` as a list of rows and `intercept` as a list,
//! one per class in `classes` order. Floats are written in shortest round-trip form and parsed exactly.
//!
//! A linear model fitted on wide sparse data stores only the columns some training example uses (every
//! other coefficient is exactly 0, see [`super::Coefficients`]): `"columns": [j, ...]` (strictly
//! increasing, below `n_features`), and each `coef` row holds one value per listed column. Such files are
//! version 3; files without `columns` are still written as version 2, so that readers of version 2 read
//! them.
//!
//! Kernel models also carry `"kernel": {"type": "rbf", "gamma": ...}` and
//! `"support_vectors": {"dense": [[...], ...]}` (or `{"sparse": {"n_cols", "indptr", "indices", "values"}}`,
//! or, for dense rows of which at most half the entries are nonzero, the same CSR form under
//! `"dense_nonzeros"`, read back as dense rows); their `coef` holds one expansion coefficient per support
//! vector.
//!
//! One-vs-one kernel models (version 4) store each support vector once, as LIBSVM does: the vectors are
//! grouped by class (`"n_support"`: how many of each, in `classes` order), `"multiclass": "ovo"`, `coef`
//! has `K - 1` rows (LIBSVM's `sv_coef`: a vector of class `c` holds its coefficient in the pair `(c, o)` in
//! row `o` if `o < c`, else `o - 1`) and `intercept` one value per pair `(a, b)`, `a < b`, in the order
//! `(0,1), (0,2), …, (1,2), …`; a pair's output `f > 0` votes for `a`.
//!
//! Kernel models with more than 16,384 stored support-vector values store them packed for size:
//! `{"packed": {"n_cols", "dense", "indptr", "indices", "values"}}` (see [`PackedRows`]: exact, about 10.7
//! characters per value instead of up to 24). Files of more than 256 KiB (compact) are written without
//! indentation.
//!
//! Models on an explicit feature map (random Fourier features) carry `"feature_map": {"type": "fourier",
//! "gamma", "omega": ..., "offset": [...]}`; their `coef` holds one weight per feature-space dimension.

use ndarray::{Array2, ArrayView1, ArrayView2};
use serde::{Deserialize, Serialize};

use super::{Coefficients, KernelModel, LinearModel, MappedModel, Model, Multiclass, PackedRows, class_pairs};
use crate::data::{CsrMatrix, Features};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::kernel::feature_map::FeatureMap;

pub const FORMAT: &str = "usvm-model";
/// The version written for models that store every coefficient.
pub const VERSION: u32 = 2;
/// The version written for linear models that store their used columns only (`columns`).
pub const VERSION_WITH_COLUMNS: u32 = 3;
/// The version written for one-vs-one kernel models.
pub const VERSION_ONE_VS_ONE: u32 = 4;
/// The versions read.
pub const READABLE_VERSIONS: [u32; 4] = [1, 2, 3, 4];
/// Files up to this size (compact) are written indented.
const INDENTED_UP_TO: usize = 256 << 10;
/// Support vectors with more stored values than this are packed.
const PACK_ABOVE: usize = 1 << 14;

/// Platt scaling `P(y = 1 | f) = 1/(1 + exp(a f + b))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Platt {
    /// The slope `a`.
    pub a: f64,
    /// The offset `b`.
    pub b: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "serde_json::Value")]
/// The model file's `coef`.
pub enum Coef {
    /// One hyperplane (two classes).
    Binary(Vec<f64>),
    /// One row per class (one-vs-rest).
    OneVsRest(Vec<Vec<f64>>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "serde_json::Value")]
/// The model file's `intercept`.
pub enum Intercept {
    /// One intercept (two classes).
    Binary(f64),
    /// One per class (one-vs-rest).
    OneVsRest(Vec<f64>),
}

/// The numbers of a JSON list (`what` names it in the message).
fn numbers(value: &serde_json::Value, what: &str) -> std::result::Result<Vec<f64>, String> {
    let list = value.as_array().ok_or_else(|| format!("{what} must be a list of numbers"))?;
    let number =
        |(k, v): (usize, &serde_json::Value)| v.as_f64().ok_or_else(|| format!("{what}[{k}] is {v}, not a number"));
    list.iter().enumerate().map(number).collect()
}

impl TryFrom<serde_json::Value> for Coef {
    type Error = String;

    /// A list of numbers (two classes) or a list of such lists (one per class, one-vs-rest).
    fn try_from(value: serde_json::Value) -> std::result::Result<Self, String> {
        const EXPECTED: &str = "coef must be a list of numbers (two classes) or a list of such lists (one per class)";
        let Some(list) = value.as_array() else { return Err(EXPECTED.into()) };
        if list.first().is_some_and(serde_json::Value::is_array) {
            let row = |(k, r): (usize, &serde_json::Value)| numbers(r, &format!("coef[{k}]"));
            list.iter().enumerate().map(row).collect::<std::result::Result<_, _>>().map(Coef::OneVsRest)
        } else {
            numbers(&value, "coef").map(Coef::Binary).map_err(|e| format!("{e} ({EXPECTED})"))
        }
    }
}

impl TryFrom<serde_json::Value> for Intercept {
    type Error = String;

    /// A number (two classes) or a list of numbers (one per class, one-vs-rest).
    fn try_from(value: serde_json::Value) -> std::result::Result<Self, String> {
        match value.as_f64() {
            Some(b) => Ok(Intercept::Binary(b)),
            None => numbers(&value, "intercept")
                .map(Intercept::OneVsRest)
                .map_err(|e| format!("{e} (intercept must be a number for two classes, or a list with one per class)")),
        }
    }
}

/// The support vectors of a kernel model, stored as dense rows or as a CSR matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SupportVectors {
    /// Dense rows.
    Dense(Vec<Vec<f64>>),
    /// A CSR matrix.
    Sparse(CsrMatrix<'static>),
    /// Dense rows stored as a CSR matrix of their nonzero entries.
    #[serde(rename = "dense_nonzeros")]
    DenseNonzeros(CsrMatrix<'static>),
    /// Rows packed for size.
    Packed(PackedRows),
}

/// The on-disk form of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always `"usvm-model"`.
    pub format: String,
    /// The file version (2 is written; 1 and 2 are read).
    pub version: u32,
    /// The method name (`--method`).
    pub method: String,
    /// The kernel of kernel and feature-map models.
    pub kernel: Option<serde_json::Value>,
    /// The input dimension.
    pub n_features: usize,
    /// The class labels.
    pub classes: Vec<i64>,
    /// The hyperplanes (or expansion coefficients).
    pub coef: Coef,
    /// Linear models on wide sparse data (version 3): the columns whose coefficients `coef` holds, in
    /// increasing order; every other coefficient is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<u32>>,
    /// The intercepts.
    pub intercept: Intercept,
    /// The method's parameters (version 2): a `MethodParams` object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// The seed of the fit's randomised parts (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Version 1 only: the library parameters in free form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyperparameters: Option<serde_json::Value>,
    /// Platt scaling, if fitted (two classes).
    pub platt: Option<Platt>,
    /// Platt scaling of each output, if fitted, for more than two classes (one sigmoid per class, or per
    /// pair of classes for one-vs-one: that pair's first class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platt_per_output: Option<Vec<Platt>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The support vectors of kernel models.
    pub support_vectors: Option<SupportVectors>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The explicit feature map of Fourier/Nyström models.
    pub feature_map: Option<FeatureMap>,
    /// BE-SVM models only: the basis expansion (see `besvm_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis_expansion: Option<super::BasisExpansionFile>,
    /// Kernel models with more than two classes fitted one-vs-one (version 4): `"ovo"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiclass: Option<Multiclass>,
    /// One-vs-one kernel models: the number of support vectors of each class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_support: Option<Vec<usize>>,
}

/// `coef` rows and intercepts in file form.
pub(super) fn coef_to_file(coef: ArrayView2<'_, f64>, intercept: &[f64]) -> (Coef, Intercept) {
    let rows: Vec<Vec<f64>> = coef.rows().into_iter().map(|r| r.to_vec()).collect();
    if rows.len() == 1 {
        (Coef::Binary(rows[0].clone()), Intercept::Binary(intercept[0]))
    } else {
        (Coef::OneVsRest(rows), Intercept::OneVsRest(intercept.to_vec()))
    }
}

impl ModelFile {
    /// The file form of a linear model fitted by `method` with `params`.
    pub fn from_linear(model: &LinearModel, method: &str, params: serde_json::Value) -> Self {
        let (coef, intercept) = coef_to_file(model.coef.stored(), &model.intercept);
        let columns: Option<Vec<u32>> = model.coef.support().map(|c| c.collect());
        ModelFile {
            format: FORMAT.into(),
            version: if columns.is_some() { VERSION_WITH_COLUMNS } else { VERSION },
            method: method.into(),
            kernel: None,
            n_features: model.n_features(),
            classes: model.classes.clone(),
            coef,
            columns,
            intercept,
            params: Some(params),
            seed: None,
            hyperparameters: None,
            platt: None,
            platt_per_output: None,
            support_vectors: None,
            feature_map: None,
            basis_expansion: None,
            multiclass: None,
            n_support: None,
        }
    }

    /// The file form of a kernel model fitted by `method` with `params`.
    pub fn from_kernel(model: &KernelModel, method: &str, params: serde_json::Value) -> Self {
        let one_vs_one = model.is_one_vs_one();
        let (coef, intercept) = if one_vs_one {
            let rows = sv_coef(model);
            (Coef::OneVsRest(rows), Intercept::OneVsRest(model.intercept.clone()))
        } else {
            coef_to_file(model.coef.view(), &model.intercept)
        };
        let stored = match &model.support {
            Features::Dense(a) => a.nrows() * a.ncols(),
            Features::Sparse(m) => m.values.len(),
        };
        let support = match &model.support {
            _ if stored > PACK_ABOVE => SupportVectors::Packed(PackedRows::pack(&model.support)),
            Features::Dense(a) => {
                let nonzeros = (0..a.nrows()).map(|i| a.row(i).iter().filter(|&&v| v != 0.0).count()).sum::<usize>();
                if 2 * nonzeros <= a.nrows() * a.ncols() {
                    let rows: Vec<Vec<(usize, f64)>> = (0..a.nrows())
                        .map(|i| {
                            a.row(i).iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, &v)| (j, v)).collect()
                        })
                        .collect();
                    SupportVectors::DenseNonzeros(CsrMatrix::from_rows(a.ncols(), &rows).expect("valid rows"))
                } else {
                    SupportVectors::Dense((0..a.nrows()).map(|i| a.row(i).to_vec()).collect())
                }
            }
            Features::Sparse(m) => SupportVectors::Sparse(m.clone().into_owned()),
        };
        ModelFile {
            format: FORMAT.into(),
            version: if one_vs_one { VERSION_ONE_VS_ONE } else { VERSION },
            method: method.into(),
            kernel: Some(serde_json::to_value(model.kernel).expect("a kernel serialises")),
            n_features: model.n_features(),
            classes: model.classes.clone(),
            coef,
            columns: None,
            intercept,
            params: Some(params),
            seed: None,
            hyperparameters: None,
            platt: None,
            platt_per_output: None,
            support_vectors: Some(support),
            feature_map: None,
            basis_expansion: None,
            multiclass: one_vs_one.then_some(Multiclass::OneVsOne),
            n_support: one_vs_one.then(|| model.n_support.clone()),
        }
    }

    /// The file form of a linear model on a feature map, fitted by `method` with `params`.
    pub fn from_mapped(model: &MappedModel, method: &str, params: serde_json::Value) -> Self {
        let mut file = Self::from_linear(&model.linear, method, params);
        file.n_features = model.n_features();
        file.feature_map = Some(model.map.clone());
        // The kernel the map approximates, for the reader's information.
        let kernel = match &model.map {
            FeatureMap::Fourier(f) => Kernel::Rbf { gamma: f.gamma },
            FeatureMap::Nystroem(m) => m.kernel,
        };
        file.kernel = Some(serde_json::to_value(kernel).expect("a kernel serialises"));
        file
    }

    /// The file form of any model fitted by `method` with `params`.
    pub fn from_model(model: &Model, method: &str, params: serde_json::Value) -> Self {
        match model {
            Model::Linear(m) => Self::from_linear(m, method, params),
            Model::Kernel(m) => Self::from_kernel(m, method, params),
            Model::Mapped(m) => Self::from_mapped(m, method, params),
            Model::BasisExpansion(m) => Self::from_basis_expansion(m, method, params),
        }
    }

    /// The model stored in the file: a kernel model if it has support vectors, else a linear model.
    pub fn to_model(&self) -> Result<Model> {
        if self.feature_map.is_some() {
            self.to_mapped().map(Model::Mapped)
        } else if self.basis_expansion.is_some() {
            self.to_basis_expansion().map(Model::BasisExpansion)
        } else if self.support_vectors.is_some() {
            self.to_kernel().map(Model::Kernel)
        } else {
            self.to_linear().map(Model::Linear)
        }
    }

    /// Checks format and version, and returns the coefficient rows (each of `width` entries) and intercepts
    /// of a model that stores every coefficient (no `columns`).
    pub(super) fn checked_coef(&self, width: usize, width_name: &str) -> Result<(Array2<f64>, Vec<f64>)> {
        if self.columns.is_some() {
            return Err(Error::Format("only linear models store \"columns\"".into()));
        }
        self.checked_rows(width, width_name)
    }

    /// The coefficients and intercepts of a linear model, on `columns` if the file lists them.
    fn linear_coef(&self) -> Result<(Coefficients, Vec<f64>)> {
        let Some(columns) = &self.columns else {
            let (coef, intercept) = self.checked_rows(self.n_features, "n_features")?;
            return Ok((coef.into(), intercept));
        };
        let (coef, intercept) = self.checked_rows(columns.len(), "the number of columns")?;
        Ok((Coefficients::from_column_list(coef, columns, self.n_features)?, intercept))
    }

    /// [`Self::checked_coef`] without the check that no `columns` are listed.
    fn checked_rows(&self, width: usize, width_name: &str) -> Result<(Array2<f64>, Vec<f64>)> {
        if self.format != FORMAT {
            return Err(Error::Format(format!("format is {:?}, expected {FORMAT:?}", self.format)));
        }
        if !READABLE_VERSIONS.contains(&self.version) {
            return Err(Error::Format(format!(
                "version {} is not supported (this release reads {READABLE_VERSIONS:?})",
                self.version
            )));
        }
        if self.columns.is_some() && self.version < VERSION_WITH_COLUMNS {
            return Err(Error::Format(format!("\"columns\" needs version {VERSION_WITH_COLUMNS}")));
        }
        if self.multiclass == Some(Multiclass::OneVsOne) && self.version < VERSION_ONE_VS_ONE {
            return Err(Error::Format(format!("\"multiclass\": \"ovo\" needs version {VERSION_ONE_VS_ONE}")));
        }
        let rows = match &self.coef {
            Coef::Binary(w) => vec![w.clone()],
            Coef::OneVsRest(w) => w.clone(),
        };
        let intercept = match &self.intercept {
            Intercept::Binary(b) => vec![*b],
            Intercept::OneVsRest(b) => b.clone(),
        };
        let classes = &self.classes;
        if classes.len() < 2 {
            return Err(Error::Format(format!("classes is {classes:?}: a model separates at least 2 classes")));
        }
        if let Some((k, c)) = classes.iter().enumerate().find(|&(k, c)| classes[..k].contains(c)) {
            return Err(Error::Format(format!("classes is {classes:?}: class {c} is listed twice (at {k})")));
        }
        let k = classes.len();
        let (expected_rows, expected_intercepts) = match self.multiclass {
            Some(Multiclass::OneVsOne) if k > 2 => (k - 1, k * (k - 1) / 2),
            _ if k == 2 => (1, 1),
            _ => (k, k),
        };
        if rows.len() != expected_rows || intercept.len() != expected_intercepts {
            let need = if expected_rows == 1 {
                "2 classes need one coef row (a list of numbers) and one intercept (a number)".to_string()
            } else if expected_rows == k {
                format!("{k} classes need {k} coef rows and {k} intercepts (one per class)")
            } else {
                format!("{k} classes one-vs-one need {expected_rows} coef rows and {expected_intercepts} intercepts")
            };
            return Err(Error::Format(format!(
                "{need}; this file has {} coef row(s) and {} intercept(s)",
                rows.len(),
                intercept.len()
            )));
        }
        // Shapes first, allocation after: a stated width is believed only when the rows have it.
        if let Some((k, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != width) {
            return Err(Error::Format(format!("coef row {k} has {} entries, {width_name} is {width}", row.len())));
        }
        let mut coef = Array2::zeros((rows.len(), width));
        for (k, row) in rows.iter().enumerate() {
            coef.row_mut(k).assign(&ArrayView1::from(row));
        }
        if coef.iter().chain(&intercept).any(|v| !v.is_finite()) {
            return Err(Error::Format("non-finite coefficient".into()));
        }
        Ok((coef, intercept))
    }

    /// The kernel model stored in the file, after checking format, version, kernel and shapes.
    pub fn to_kernel(&self) -> Result<KernelModel> {
        let kernel: Kernel = match &self.kernel {
            Some(k) => serde_json::from_value(k.clone()).map_err(|e| Error::Format(format!("kernel: {e}")))?,
            None => return Err(Error::Format("a kernel model needs a \"kernel\"".into())),
        };
        kernel.validate().map_err(|e| Error::Format(format!("kernel: {e}")))?;
        let support = match &self.support_vectors {
            Some(SupportVectors::Dense(rows)) => {
                if let Some((i, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != self.n_features) {
                    return Err(Error::Format(format!(
                        "support vector {i} has {} entries, n_features is {}",
                        row.len(),
                        self.n_features
                    )));
                }
                let mut a = Array2::zeros((rows.len(), self.n_features));
                for (i, row) in rows.iter().enumerate() {
                    a.row_mut(i).assign(&ArrayView1::from(row));
                }
                Features::dense(a)
            }
            Some(SupportVectors::Sparse(m) | SupportVectors::DenseNonzeros(m)) => {
                if m.n_cols != self.n_features {
                    return Err(Error::Format(format!(
                        "support vectors have {} columns, n_features is {}",
                        m.n_cols, self.n_features
                    )));
                }
                let sparse = Features::Sparse(m.clone());
                sparse.validate().map_err(|e| Error::Format(format!("support vectors: {e}")))?;
                match &self.support_vectors {
                    Some(SupportVectors::DenseNonzeros(_)) => {
                        crate::memory::reserve("the support vectors", "", &[m.n_rows(), m.n_cols])?;
                        Features::dense(m.to_dense())
                    }
                    _ => sparse,
                }
            }
            Some(SupportVectors::Packed(p)) => {
                if p.n_cols != self.n_features {
                    return Err(Error::Format(format!(
                        "support vectors have {} columns, n_features is {}",
                        p.n_cols, self.n_features
                    )));
                }
                p.unpack()?
            }
            None => return Err(Error::Format("a kernel model needs \"support_vectors\"".into())),
        };
        support.validate().map_err(|e| Error::Format(format!("support vectors: {e}")))?;
        let (coef, intercept) = self.checked_coef(support.n_samples(), "the number of support vectors")?;
        let classes = self.classes.clone();
        if self.multiclass != Some(Multiclass::OneVsOne) || classes.len() < 3 {
            let multiclass = Multiclass::OneVsRest;
            return Ok(KernelModel { kernel, classes, support, coef, intercept, multiclass, n_support: Vec::new() });
        }
        let n_support = self.n_support.clone().unwrap_or_default();
        if n_support.len() != classes.len() || n_support.iter().sum::<usize>() != support.n_samples() {
            return Err(Error::Format(format!(
                "n_support must list the support vectors of each of the {} classes, {} in all; it is {n_support:?}",
                classes.len(),
                support.n_samples()
            )));
        }
        let coef = pair_coef(&coef, &n_support);
        Ok(KernelModel { kernel, classes, support, coef, intercept, multiclass: Multiclass::OneVsOne, n_support })
    }

    /// The feature-map model stored in the file, after checking format, version, map and shapes.
    pub fn to_mapped(&self) -> Result<MappedModel> {
        let Some(map) = &self.feature_map else {
            return Err(Error::Format("a feature-map model needs a \"feature_map\"".into()));
        };
        let ok = match map {
            FeatureMap::Fourier(f) => {
                f.gamma > 0.0
                    && f.offset.len() == f.omega.nrows()
                    && f.omega.iter().chain(&f.offset).chain([&f.gamma]).all(|v| v.is_finite())
            }
            FeatureMap::Nystroem(m) => {
                m.kernel.validate().is_ok()
                    && m.projection.nrows() == m.landmarks.n_samples()
                    && m.projection.iter().all(|v| v.is_finite())
                    && m.landmarks.validate().is_ok()
            }
        };
        if !ok || map.n_features() != self.n_features {
            return Err(Error::Format("malformed feature_map (shapes or values)".into()));
        }
        let (coef, intercept) = self.checked_coef(map.dim(), "the feature map's dimension")?;
        let linear = LinearModel { classes: self.classes.clone(), coef: coef.into(), intercept };
        Ok(MappedModel { map: map.clone(), linear })
    }

    /// The linear model stored in the file, after checking format, version and shapes.
    pub fn to_linear(&self) -> Result<LinearModel> {
        if self.feature_map.is_some() {
            return Err(Error::Format("this is a feature-map model, not a linear one".into()));
        }
        if self.support_vectors.is_some() {
            return Err(Error::Format("this is a kernel model (it has support vectors), not a linear one".into()));
        }
        if self.basis_expansion.is_some() {
            return Err(Error::Format("this is a BE-SVM model (it has a basis expansion), not a linear one".into()));
        }
        let (coef, intercept) = self.linear_coef()?;
        Ok(LinearModel { classes: self.classes.clone(), coef, intercept })
    }

    /// JSON, indented when at most 256 KiB (compact), else compact.
    pub fn to_json(&self) -> String {
        let compact = serde_json::to_string(self).expect("a model file serialises");
        if compact.len() > INDENTED_UP_TO {
            return compact;
        }
        serde_json::to_string_pretty(self).expect("a model file serialises")
    }

    /// Parses a model file (without checking shapes: see the `to_*` methods).
    pub fn from_json(text: &str) -> Result<Self> {
        let value = crate::json::parse_json(text).map_err(|e| Error::Format(e.to_string()))?;
        serde_json::from_value(value).map_err(|e| Error::Format(e.to_string()))
    }
}

/// The row of LIBSVM's `sv_coef` that holds the coefficient of a support vector of class `c` in its pair
/// with class `o`.
fn sv_coef_row(c: usize, o: usize) -> usize {
    if o < c { o } else { o - 1 }
}

/// The class of each support vector of a model grouped by class with `n_support` vectors per class.
fn sv_classes(n_support: &[usize]) -> Vec<usize> {
    n_support.iter().enumerate().flat_map(|(c, &n)| std::iter::repeat_n(c, n)).collect()
}

/// A one-vs-one model's coefficients (one row per pair) in LIBSVM's `sv_coef` layout (`K - 1` rows).
fn sv_coef(model: &KernelModel) -> Vec<Vec<f64>> {
    let k = model.classes.len();
    let mut rows = vec![vec![0.0; model.n_support()]; k - 1];
    for (p, (a, b)) in class_pairs(k).into_iter().enumerate() {
        for (j, &c) in sv_classes(&model.n_support).iter().enumerate() {
            if c == a || c == b {
                rows[sv_coef_row(c, if c == a { b } else { a })][j] = model.coef[[p, j]];
            }
        }
    }
    rows
}

/// [`sv_coef`]'s inverse: one row per pair from LIBSVM's layout.
fn pair_coef(sv_coef: &Array2<f64>, n_support: &[usize]) -> Array2<f64> {
    let k = n_support.len();
    let classes = sv_classes(n_support);
    let pairs = class_pairs(k);
    let mut coef = Array2::zeros((pairs.len(), classes.len()));
    for (p, &(a, b)) in pairs.iter().enumerate() {
        for (j, &c) in classes.iter().enumerate() {
            if c == a || c == b {
                coef[[p, j]] = sv_coef[[sv_coef_row(c, if c == a { b } else { a }), j]];
            }
        }
    }
    coef
}
