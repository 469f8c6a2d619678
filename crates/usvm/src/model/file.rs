//! The JSON model file (DESIGN 6): `{"format": "usvm-model", "version": 1, "method", "kernel",
//! "n_features", "classes": [neg, pos], "coef": [...], "intercept": b, "hyperparameters", "platt"}`.
//! One-vs-rest models (more than two classes) store `coef` as a list of rows and `intercept` as a list,
//! one per class in `classes` order. Floats are written in shortest round-trip form and parsed exactly.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::LinearModel;
use crate::error::{Error, Result};

pub const FORMAT: &str = "usvm-model";
pub const VERSION: u32 = 1;

/// Platt scaling `P(y = 1 | f) = 1/(1 + exp(a f + b))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Platt {
    pub a: f64,
    pub b: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Coef {
    Binary(Vec<f64>),
    OneVsRest(Vec<Vec<f64>>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Intercept {
    Binary(f64),
    OneVsRest(Vec<f64>),
}

/// The on-disk form of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    pub format: String,
    pub version: u32,
    pub method: String,
    pub kernel: Option<serde_json::Value>,
    pub n_features: usize,
    pub classes: Vec<i64>,
    pub coef: Coef,
    pub intercept: Intercept,
    pub hyperparameters: serde_json::Value,
    pub platt: Option<Platt>,
}

impl ModelFile {
    /// The file form of a linear model fitted by `method` with `hyperparameters`.
    pub fn from_linear(model: &LinearModel, method: &str, hyperparameters: serde_json::Value) -> Self {
        let rows: Vec<Vec<f64>> = model.coef.rows().into_iter().map(|r| r.to_vec()).collect();
        let (coef, intercept) = if rows.len() == 1 {
            (Coef::Binary(rows[0].clone()), Intercept::Binary(model.intercept[0]))
        } else {
            (Coef::OneVsRest(rows), Intercept::OneVsRest(model.intercept.clone()))
        };
        ModelFile {
            format: FORMAT.into(),
            version: VERSION,
            method: method.into(),
            kernel: None,
            n_features: model.n_features(),
            classes: model.classes.clone(),
            coef,
            intercept,
            hyperparameters,
            platt: None,
        }
    }

    /// The linear model stored in the file, after checking format, version and shapes.
    pub fn to_linear(&self) -> Result<LinearModel> {
        if self.format != FORMAT {
            return Err(Error::Format(format!("format is {:?}, expected {FORMAT:?}", self.format)));
        }
        if self.version != VERSION {
            return Err(Error::Format(format!("version {} is not supported (expected {VERSION})", self.version)));
        }
        let (rows, intercept) = match (&self.coef, &self.intercept) {
            (Coef::Binary(w), Intercept::Binary(b)) => (vec![w.clone()], vec![*b]),
            (Coef::OneVsRest(w), Intercept::OneVsRest(b)) => (w.clone(), b.clone()),
            _ => {
                return Err(Error::Format("coef and intercept disagree on binary vs one-vs-rest".into()));
            }
        };
        let expected_rows = if self.classes.len() == 2 { 1 } else { self.classes.len() };
        if self.classes.len() < 2 || rows.len() != expected_rows || intercept.len() != expected_rows {
            return Err(Error::Format(format!(
                "{} classes need {expected_rows} hyperplane(s), found {} coef row(s) and {} intercept(s)",
                self.classes.len(),
                rows.len(),
                intercept.len()
            )));
        }
        let mut coef = Array2::zeros((rows.len(), self.n_features));
        for (k, row) in rows.iter().enumerate() {
            if row.len() != self.n_features {
                return Err(Error::Format(format!(
                    "coef row {k} has {} entries, n_features is {}",
                    row.len(),
                    self.n_features
                )));
            }
            coef.row_mut(k).assign(&ndarray::ArrayView1::from(row));
        }
        if coef.iter().chain(&intercept).any(|v| !v.is_finite()) {
            return Err(Error::Format("non-finite coefficient".into()));
        }
        Ok(LinearModel { classes: self.classes.clone(), coef, intercept })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a model file serialises")
    }

    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::Format(e.to_string()))
    }
}
