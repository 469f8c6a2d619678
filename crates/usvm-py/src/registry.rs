//! The registry from Python: one `fit(params_json, X, y, ...)` for every method of
//! [`usvm::MethodParams`], one `Model` class, and typed exceptions for the core's errors.

use ndarray::Array1;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::model::Platt;
use usvm::{FitOptions, MethodParams, ModelFile};

use crate::borrow_data;

create_exception!(_usvm, UsvmError, PyValueError, "An error of the usvm core (a ValueError).");
create_exception!(_usvm, ParamsError, UsvmError, "Parameters that do not parse: an unknown method or field.");
create_exception!(_usvm, InvalidParameterError, UsvmError, "A parameter value out of its range.");
create_exception!(_usvm, DataError, UsvmError, "Data the methods cannot learn from or score.");
create_exception!(_usvm, ModelFileError, UsvmError, "A malformed or unsupported model file.");

/// The Python exception of a core error.
pub(crate) fn to_py_err(e: usvm::Error) -> PyErr {
    let text = e.to_string();
    match e {
        usvm::Error::Params(_) => ParamsError::new_err(text),
        usvm::Error::InvalidParameter { .. } => InvalidParameterError::new_err(text),
        usvm::Error::Format(_) => ModelFileError::new_err(text),
        usvm::Error::SolverFailure { .. } => UsvmError::new_err(text),
        _ => DataError::new_err(text),
    }
}

/// `(coef, intercept)` as numpy arrays.
type Hyperplanes<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

/// A fitted classifier of any method, with the parameters and seed it was fit with.
#[pyclass(name = "Model", module = "usvm._usvm", frozen)]
pub struct PyModel {
    model: usvm::Model,
    method: String,
    params: serde_json::Value,
    seed: Option<u64>,
    platt: Option<Platt>,
}

impl PyModel {
    fn file(&self) -> ModelFile {
        let mut file = ModelFile::from_model(&self.model, &self.method, self.params.clone());
        file.seed = self.seed;
        file.platt = self.platt;
        file
    }

    fn scores(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<ndarray::Array2<f64>> {
        let data = borrow_data(x, None, None)?;
        let views = data.views();
        py.detach(|| views.to_dataset(Vec::new()).and_then(|d| self.model.decision_function(&d.features)))
            .map_err(to_py_err)
    }
}

#[pymethods]
impl PyModel {
    /// `f_k(x)` for every row of `x`: shape `(n,)` for a binary model, `(n, K)` for one-vs-rest.
    fn decision_function<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let f = self.scores(py, x)?;
        Ok(if f.ncols() == 1 {
            f.column(0).to_owned().into_pyarray(py).into_any()
        } else {
            f.into_pyarray(py).into_any()
        })
    }

    /// The predicted class of every row of `x`.
    fn predict<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let data = borrow_data(x, None, None)?;
        let views = data.views();
        let labels = py
            .detach(|| views.to_dataset(Vec::new()).and_then(|d| self.model.predict(&d.features)))
            .map_err(to_py_err)?;
        Ok(Array1::from(labels).into_pyarray(py))
    }

    /// `[P(classes[0]), P(classes[1])]` per row by the model's Platt scaling (binary models with Platt only).
    fn predict_proba<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let Some(platt) = self.platt else {
            return Err(UsvmError::new_err("this model has no Platt scaling (set it with with_platt)"));
        };
        let f = self.scores(py, x)?;
        if f.ncols() != 1 {
            return Err(UsvmError::new_err("Platt scaling applies to binary models only"));
        }
        let p = ndarray::Array2::from_shape_fn((f.nrows(), 2), |(i, k)| {
            let p1 = 1.0 / (1.0 + (platt.a * f[[i, 0]] + platt.b).exp());
            if k == 1 { p1 } else { 1.0 - p1 }
        });
        Ok(p.into_pyarray(py))
    }

    /// This model with Platt scaling `P(y = 1 | f) = 1/(1 + exp(a f + b))`.
    fn with_platt(&self, a: f64, b: f64) -> PyModel {
        PyModel {
            model: self.model.clone(),
            method: self.method.clone(),
            params: self.params.clone(),
            seed: self.seed,
            platt: Some(Platt { a, b }),
        }
    }

    /// The class labels, in the order of the decision function's columns.
    #[getter]
    fn classes(&self) -> Vec<i64> {
        self.model.classes().to_vec()
    }

    /// The number of features the model was fit on.
    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features()
    }

    /// The method name.
    #[getter]
    fn method(&self) -> String {
        self.method.clone()
    }

    /// The parameters the model was fit with, as a JSON object (usable as `--params`).
    #[getter]
    fn params(&self) -> String {
        self.params.to_string()
    }

    /// `(coef (K × d), intercept (K,))` of a linear model; None for other kinds.
    #[getter]
    fn linear<'py>(&self, py: Python<'py>) -> Option<Hyperplanes<'py>> {
        match &self.model {
            usvm::Model::Linear(m) => {
                Some((m.coef.clone().into_pyarray(py), Array1::from(m.intercept.clone()).into_pyarray(py)))
            }
            _ => None,
        }
    }

    /// The model file (version 2), the same text `usvm train` writes.
    fn to_json(&self) -> String {
        self.file().to_json() + "\n"
    }

    /// Reads a model file (version 1 or 2).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyModel> {
        let file = ModelFile::from_json(text).map_err(to_py_err)?;
        let model = file.to_model().map_err(to_py_err)?;
        let params = file.params.clone().or_else(|| file.hyperparameters.clone()).unwrap_or_default();
        Ok(PyModel { model, method: file.method, params, seed: file.seed, platt: file.platt })
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(method={:?}, classes={:?}, n_features={})",
            self.method,
            self.model.classes(),
            self.model.n_features()
        )
    }
}

/// Fits any registry method: `params_json` is a `MethodParams` object (`{"method": ..., field: value}`;
/// unknown methods and fields raise `ParamsError`). `y` holds integer labels; `cov` any covariance form
/// the estimators accept; `x_star` the privileged features of SVM+/R-SVM+. Returns the `Model` and one
/// report dict per binary problem (`objective`, `n_iter`, `termination`, `converged`, `gradient_norm`,
/// `duality_gap`).
#[pyfunction]
#[pyo3(signature = (params_json, x, y, *, cov=None, sample_weight=None, x_star=None, seed=0, threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit<'py>(
    py: Python<'py>,
    params_json: &str,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    cov: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    x_star: Option<&Bound<'py, PyAny>>,
    seed: u64,
    threads: Option<usize>,
) -> PyResult<(PyModel, Vec<Bound<'py, PyDict>>)> {
    let params = MethodParams::from_json(params_json).map_err(to_py_err)?;
    let data = borrow_data(x, cov, sample_weight)?;
    let star = x_star.filter(|s| !s.is_none()).map(|s| borrow_data(s, None, None)).transpose()?;
    let (views, star_views, labels) = (data.views(), star.as_ref().map(|s| s.views()), y.as_array());
    let options = FitOptions { seed, threads, observer: None };
    let fit = py
        .detach(|| -> usvm::Result<_> {
            let mut dataset = views.to_dataset(labels.to_vec())?;
            if let Some(s) = &star_views {
                dataset.privileged = Some(s.to_dataset(Vec::new())?.features);
            }
            usvm::fit(&params, &dataset, &options)
        })
        .map_err(to_py_err)?;
    let reports = fit
        .reports
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("objective", r.objective)?;
            d.set_item("n_iter", r.n_iter)?;
            d.set_item("termination", serde_json::to_value(r.termination).expect("serialises").as_str())?;
            d.set_item("converged", r.converged())?;
            d.set_item("gradient_norm", r.gradient_norm)?;
            d.set_item("duality_gap", r.duality_gap)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let model = PyModel {
        model: fit.model,
        method: params.name().to_string(),
        params: params.to_json(),
        seed: Some(seed),
        platt: None,
    };
    Ok((model, reports))
}

/// The defaults of a method, as a JSON object.
#[pyfunction]
fn default_params(method: &str) -> PyResult<String> {
    Ok(MethodParams::default_for(method).map_err(to_py_err)?.to_json().to_string())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("UsvmError", py.get_type::<UsvmError>())?;
    m.add("ParamsError", py.get_type::<ParamsError>())?;
    m.add("InvalidParameterError", py.get_type::<InvalidParameterError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("ModelFileError", py.get_type::<ModelFileError>())?;
    m.add("METHODS", usvm::params::METHODS.iter().map(|(n, _)| *n).collect::<Vec<_>>())?;
    m.add_class::<PyModel>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(default_params, m)?)?;
    Ok(())
}
