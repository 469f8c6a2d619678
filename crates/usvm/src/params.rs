//! `MethodParams`: every method of the library as one entry of one registry — a serde enum tagged
//! `"method"` whose kebab-case variant names are the CLI's `--method` names, each variant holding only its
//! own fields. The edges (CLI flags, `--params FILE.json`, `cv --grid`, Python) build it from JSON through
//! [`MethodParams::from_json`] and [`MethodParams::set`], which reject unknown methods and fields by name.
//!
//! ```
//! use usvm::params::MethodParams;
//! let mut p = MethodParams::from_json(r#"{"method": "svm", "kernel": {"type": "rbf", "gamma": 0.5}}"#).unwrap();
//! p.set("C", &serde_json::json!(10.0)).unwrap();
//! assert_eq!(p.to_json()["regularization"], serde_json::json!({"C": 10.0}));
//! assert!(p.set("radius_scale", &serde_json::json!(1.0)).is_err()); // a field of power, not of svm
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::methods::Regularization;
use crate::methods::besvm::Besvm;
use crate::methods::kernel::{KsvmIgsu, RsvmRhhq, Svm};
use crate::methods::linear::{Gsu, Linear, Power, Sampling};
use crate::methods::logistic::Logistic;
use crate::methods::lupi::{L2SvmPlus, RsvmPlus, SvmPlus};
use crate::methods::sqhinge::SqhingeGsu;
use crate::methods::tsvc::Tsvc;
use crate::svm::LinearMethod;

/// One method and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum MethodParams {
    /// LSVM-GSU: expected hinge loss under each example's Gaussian.
    Gsu(Gsu),
    /// LSVM: hinge loss on the means (covariances ignored).
    Hinge(Linear),
    /// LSVM-iso: GSU with isotropic covariances `(tr Σ / n) I`.
    Iso(Linear),
    /// LSVM-sampling: hinge loss on samples drawn from each Gaussian.
    Sampling(Sampling),
    /// Power SVM: hinge at the best point of a ball of radius `scale·√(tr Σ / n)`.
    Power(Power),
    /// Kernel SVM (C-SVC by SMO; per-example `C·c_i`; one-vs-rest).
    Svm(Svm),
    /// KSVM-iGSU / RD-KSVM-iGSU: kernel SVM for isotropic Gaussians.
    KsvmIgsu(KsvmIgsu),
    /// The thesis ch. 5 squared-hinge layer under Gaussian inputs, one-vs-rest.
    SqhingeGsu(SqhingeGsu),
    /// BE-SVM: squared-hinge linear SVM on normalised similarities to a basis.
    Besvm(Besvm),
    /// SVM+: learning with privileged features through a correcting space.
    Svmplus(SvmPlus),
    /// R-SVM+: SVM+ with the robust gradient regulariser.
    Rsvmplus(RsvmPlus),
    /// L2-SVM+: squared loss on the correcting function; a one-equality dual.
    L2svmplus(L2SvmPlus),
    /// RSVM-RHHQ: the rescaled hinge loss by half-quadratic rounds of weighted SVMs.
    RsvmRhhq(RsvmRhhq),
    /// TSVC: hinge at the worst point of a ball of radius `δ_i`.
    Tsvc(Tsvc),
    /// Logistic regression on the means.
    Logistic(Logistic),
}

/// Every method name, with a one-line description, in registry order.
pub const METHODS: [(&str, &str); 15] = [
    ("gsu", "LSVM-GSU: expected hinge loss under each example's Gaussian"),
    ("hinge", "LSVM: hinge loss on the means (covariances ignored)"),
    ("iso", "LSVM-iso: GSU with isotropic covariances (tr Σ / n) I"),
    ("sampling", "LSVM-sampling: hinge loss on samples drawn from each Gaussian"),
    ("power", "Power SVM: hinge at the best point of a ball of radius scale·√(tr Σ / n)"),
    ("svm", "Kernel SVM (C-SVC by SMO, LIBSVM's design; per-example C·c_i; one-vs-rest)"),
    ("ksvm-igsu", "KSVM-iGSU / RD-KSVM-iGSU: kernel SVM for isotropic Gaussians σ_i² I (σ_i² = tr Σ_i / n)"),
    ("sqhinge-gsu", "Thesis ch. 5 squared-hinge layer under Gaussian inputs, one-vs-rest"),
    ("besvm", "BE-SVM: squared-hinge linear SVM on normalised similarities to a basis"),
    ("svmplus", "SVM+: kernel SVM with privileged features x* through a correcting space"),
    ("rsvmplus", "R-SVM+: SVM+ with the robust gradient regulariser"),
    ("l2svmplus", "L2-SVM+ (Li et al. 2016): squared loss on the correcting function, a one-equality dual"),
    ("rsvm-rhhq", "RSVM-RHHQ (Xu et al. 2016): rescaled hinge β[1 − exp(−η·hinge)] by half-quadratic rounds"),
    ("tsvc", "TSVC: hinge at the worst point of a ball of radius δ_i (alternating or SOCP)"),
    ("logistic", "Logistic regression on the means (covariances ignored)"),
];

/// The names under which a tagged object's variant is chosen (`"method"`, `"name"`, `"type"`).
const TAGS: [&str; 3] = ["method", "name", "type"];

impl MethodParams {
    /// These parameters for the training examples `rows` of a larger set (a cross-validation fold):
    /// per-example fields, TSVC's per-example bounds, follow the rows; the rest is unchanged.
    pub fn for_examples(&self, rows: &[usize]) -> MethodParams {
        match self {
            MethodParams::Tsvc(t) => match &t.delta {
                crate::svm::Delta::PerExample(d) => {
                    let delta = crate::svm::Delta::PerExample(rows.iter().map(|&i| d[i]).collect());
                    MethodParams::Tsvc(crate::methods::tsvc::Tsvc { delta, ..t.clone() })
                }
                crate::svm::Delta::Uniform(_) => self.clone(),
            },
            _ => self.clone(),
        }
    }

    /// The method's defaults.
    pub fn default_for(method: &str) -> Result<Self> {
        Self::from_json(&format!(r#"{{"method": {}}}"#, Value::String(method.into())))
    }

    /// The method name (the CLI's `--method`).
    pub fn name(&self) -> &'static str {
        match self {
            MethodParams::Gsu(_) => "gsu",
            MethodParams::Hinge(_) => "hinge",
            MethodParams::Iso(_) => "iso",
            MethodParams::Sampling(_) => "sampling",
            MethodParams::Power(_) => "power",
            MethodParams::Svm(_) => "svm",
            MethodParams::KsvmIgsu(_) => "ksvm-igsu",
            MethodParams::SqhingeGsu(_) => "sqhinge-gsu",
            MethodParams::Besvm(_) => "besvm",
            MethodParams::Svmplus(_) => "svmplus",
            MethodParams::Rsvmplus(_) => "rsvmplus",
            MethodParams::L2svmplus(_) => "l2svmplus",
            MethodParams::RsvmRhhq(_) => "rsvm-rhhq",
            MethodParams::Tsvc(_) => "tsvc",
            MethodParams::Logistic(_) => "logistic",
        }
    }

    /// Parses a JSON object; unknown methods and fields (at any depth) are errors that name them.
    pub fn from_json(text: &str) -> Result<Self> {
        let value = crate::json::parse_json(text).map_err(|e| Error::Params(e.to_string()))?;
        Self::from_value(&value)
    }

    /// [`Self::from_json`] on a parsed value.
    pub fn from_value(value: &Value) -> Result<Self> {
        let method = value.get("method").and_then(Value::as_str).ok_or_else(|| {
            Error::Params("the parameters need a \"method\" (one of the names in usvm::params::METHODS)".into())
        })?;
        if !METHODS.iter().any(|(n, _)| *n == method) {
            let names: Vec<&str> = METHODS.iter().map(|(n, _)| *n).collect();
            return Err(Error::Params(format!("unknown method {method:?} (one of {})", names.join(", "))));
        }
        let params: MethodParams =
            serde_json::from_value(value.clone()).map_err(|e| Error::Params(format!("method {method}: {e}")))?;
        check_known(value, &params.to_json(), "")
            .map_err(|field| Error::Params(format!("method {method} has no field {field:?}")))?;
        Ok(params)
    }

    /// The JSON object (every field, defaults included).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("parameters serialise")
    }

    /// Whether the method's fit checks the values of `data`'s dense features itself, so that [`crate::fit()`]
    /// leaves them unchecked (the plain hinge's compressed copy: [`crate::svm::LinearSvmParams`]).
    pub(crate) fn checks_dense_values(&self, data: &Dataset) -> bool {
        match self {
            MethodParams::Gsu(p) => p.checks_values(data),
            MethodParams::Hinge(p) => p.checks_values(LinearMethod::Hinge, data),
            MethodParams::Iso(p) => p.checks_values(LinearMethod::Iso, data),
            _ => false,
        }
    }

    /// The weight of the regulariser, as given (`λ` or `C`).
    pub fn regularization(&self) -> Regularization {
        match self {
            MethodParams::Gsu(p) => p.regularization,
            MethodParams::Hinge(p) | MethodParams::Iso(p) => p.regularization,
            MethodParams::Sampling(p) => p.regularization,
            MethodParams::Power(p) => p.regularization,
            MethodParams::Svm(p) => p.regularization,
            MethodParams::KsvmIgsu(p) => p.regularization,
            MethodParams::SqhingeGsu(p) => p.regularization,
            MethodParams::Besvm(p) => p.regularization,
            MethodParams::Svmplus(p) => p.regularization,
            MethodParams::Rsvmplus(p) => p.regularization,
            MethodParams::L2svmplus(p) => p.regularization,
            MethodParams::RsvmRhhq(p) => p.regularization,
            MethodParams::Tsvc(p) => p.regularization,
            MethodParams::Logistic(p) => p.regularization,
        }
    }

    /// The JSON paths (`solver.tol`) of every field, in order, with their current values.
    pub fn fields(&self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        leaves(&self.to_json(), "", &mut out);
        out.retain(|(path, _)| path != "method");
        out
    }

    /// Sets one field by its serde name (`tol`), or by its path where the name is ambiguous (`solver.tol`).
    ///
    /// `lambda` and `C` set the regularisation; a string on a tagged field chooses its variant with that
    /// variant's defaults (`"solver": "sgd"`, `"kernel": "polynomial"`); `null` unsets an optional field.
    /// A name that is not a field of this method (with its chosen variants) is an error naming it.
    pub fn set(&mut self, name: &str, value: &Value) -> Result<()> {
        let method = self.name();
        let mut json = self.to_json();
        if name == "lambda" || name == "C" {
            json["regularization"] = Value::Object(Map::from_iter([(name.to_string(), value.clone())]));
        } else {
            let paths: Vec<String> = {
                let mut all = Vec::new();
                nodes(&json, "", &mut all);
                all.into_iter().filter(|p| p == name || p.ends_with(&format!(".{name}"))).collect()
            };
            let path = match &paths[..] {
                [p] => p.clone(),
                [] => return Err(Error::Params(format!("method {method} has no field {name:?}"))),
                _ => {
                    return Err(Error::Params(format!(
                        "{name:?} is ambiguous for method {method}: give one of {}",
                        paths.join(", ")
                    )));
                }
            };
            let slot = path.split('.').fold(&mut json, |v, k| &mut v[k]);
            *slot = match (&*slot, value) {
                (Value::Object(old), Value::String(variant)) => {
                    let tag = TAGS.iter().find(|t| old.contains_key(**t)).ok_or_else(|| {
                        Error::Params(format!("field {path:?} of method {method} takes an object, not {value}"))
                    })?;
                    Value::Object(Map::from_iter([(tag.to_string(), Value::String(variant.clone()))]))
                }
                _ => value.clone(),
            };
        }
        *self = Self::from_value(&json)?;
        Ok(())
    }

    /// Checks every field for `n_samples` training examples without fitting (so that a grid of values can be
    /// rejected before a long run).
    pub fn validate(&self, n_samples: usize) -> Result<()> {
        match self {
            MethodParams::Gsu(p) => p.validate(n_samples),
            MethodParams::Hinge(p) | MethodParams::Iso(p) => p.validate(n_samples),
            MethodParams::Sampling(p) => p.validate(n_samples),
            MethodParams::Power(p) => p.validate(n_samples),
            MethodParams::Svm(p) => p.validate(n_samples),
            MethodParams::KsvmIgsu(p) => p.validate(n_samples),
            MethodParams::SqhingeGsu(p) => p.validate(n_samples),
            MethodParams::Besvm(p) => p.validate(n_samples),
            MethodParams::Svmplus(p) => p.validate(n_samples),
            MethodParams::Rsvmplus(p) => p.validate(n_samples),
            MethodParams::L2svmplus(p) => p.validate(n_samples),
            MethodParams::RsvmRhhq(p) => p.validate(n_samples),
            MethodParams::Tsvc(p) => p.validate(n_samples),
            MethodParams::Logistic(p) => p.validate(n_samples),
        }
    }

    /// Whether the method learns from privileged features (`Dataset::privileged`); on a dataset without
    /// them it fits the plain C-SVM (`methods::lupi::without_privileged`).
    pub fn uses_privileged(&self) -> bool {
        matches!(self, MethodParams::Svmplus(_) | MethodParams::Rsvmplus(_) | MethodParams::L2svmplus(_))
    }
}

/// `Err(path)` for the first key of `given` that the parsed-and-reserialised `known` lacks.
fn check_known(given: &Value, known: &Value, path: &str) -> std::result::Result<(), String> {
    let (Value::Object(g), Value::Object(k)) = (given, known) else { return Ok(()) };
    for (key, v) in g {
        let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        match k.get(key) {
            None => return Err(here),
            Some(kv) => check_known(v, kv, &here)?,
        }
    }
    Ok(())
}

/// The paths of every object member (inner objects and leaves).
fn nodes(v: &Value, path: &str, out: &mut Vec<String>) {
    if let Value::Object(m) = v {
        for (key, child) in m {
            let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            if !TAGS.contains(&key.as_str()) || !path.is_empty() && key == "method" {
                out.push(here.clone());
            }
            nodes(child, &here, out);
        }
    }
}

/// The leaves (non-object values, tags included) with their paths.
fn leaves(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (key, child) in m {
                let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                leaves(child, &here, out);
            }
        }
        _ => out.push((path.to_string(), v.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_method_round_trips_with_its_defaults() {
        for (name, _) in METHODS {
            let p = MethodParams::default_for(name).unwrap();
            assert_eq!(p.name(), name);
            assert_eq!(MethodParams::from_value(&p.to_json()).unwrap(), p);
            p.validate(10).unwrap();
        }
    }

    #[test]
    fn unknown_methods_and_fields_are_named() {
        let e = MethodParams::from_json(r#"{"method": "gsv"}"#).unwrap_err().to_string();
        assert!(e.contains("\"gsv\""), "{e}");
        let e = MethodParams::from_json(r#"{"method": "gsu", "radius_scale": 1}"#).unwrap_err().to_string();
        assert!(e.contains("radius_scale"), "{e}");
        let e = MethodParams::from_json(r#"{"method": "gsu", "solver": {"name": "exact", "batch": 3}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("solver.batch"), "{e}");
        let mut p = MethodParams::default_for("gsu").unwrap();
        assert!(p.set("batch", &json!(3)).unwrap_err().to_string().contains("batch"));
        p.set("solver", &json!("sgd")).unwrap();
        p.set("batch", &json!(3)).unwrap();
        assert_eq!(p.to_json()["solver"], json!({"name": "sgd", "iterations": 1000, "batch": 3}));
    }

    #[test]
    fn set_reaches_nested_fields_and_variants() {
        let mut p = MethodParams::default_for("svm").unwrap();
        p.set("kernel", &json!("polynomial")).unwrap();
        p.set("degree", &json!(2)).unwrap();
        p.set("gamma", &json!(0.5)).unwrap();
        assert_eq!(p.to_json()["kernel"], json!({"type": "polynomial", "gamma": 0.5, "coef0": 0.0, "degree": 2}));
        p.set("lambda", &json!(0.1)).unwrap();
        assert_eq!(p.to_json()["regularization"], json!({"lambda": 0.1}));
        let mut t = MethodParams::default_for("tsvc").unwrap();
        assert!(t.set("norm_bound", &json!(1.0)).is_err());
        t.set("form", &json!("socp")).unwrap();
        t.set("norm_bound", &json!(1.0)).unwrap();
        t.set("delta", &json!([0.1, 0.2])).unwrap();
        assert_eq!(t.to_json()["delta"], json!([0.1, 0.2]));
    }
}
