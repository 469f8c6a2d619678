//! The registry from Python: one `fit(params_json, X, y, ...)` for every method of
//! [`usvm::MethodParams`], one `Model` class, and typed exceptions for the core's errors.

use std::borrow::Cow;
use std::sync::OnceLock;

use ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::model::Platt;
use usvm::{FitOptions, MethodParams, ModelFile};

use crate::progress::PyObserver;
use crate::{borrow_data, labels_of};

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

/// Runs `f`, turning a panic of the core (a bug: the core panics only on broken invariants) into a
/// `UsvmError` that `except Exception` catches, instead of PyO3's `PanicException`, which it does not.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_string());
        UsvmError::new_err(format!("internal error in the usvm core (please report it): {what}"))
    })
}

/// What `fit` returns: the model, one report per binary problem, the support vectors' training indices.
type FitResult<'py> = (PyModel, Vec<Bound<'py, PyDict>>, Option<Bound<'py, PyArray1<i64>>>);

/// A fitted classifier of any method, with the parameters and seed it was fit with.
#[pyclass(name = "Model", module = "usvm._usvm", frozen)]
pub struct PyModel {
    model: usvm::Model,
    method: String,
    params: serde_json::Value,
    seed: Option<u64>,
    platt: Option<Platt>,
    /// The full coefficient matrix of a linear model that stores only its used columns, made on the first
    /// read of `coef`.
    dense_coef: OnceLock<Array2<f64>>,
}

impl PyModel {
    /// A model just fitted with `params`.
    pub(crate) fn fitted(model: usvm::Model, params: &MethodParams, seed: Option<u64>) -> PyModel {
        PyModel::new(model, params.name().to_string(), params.to_json(), seed, None)
    }

    fn new(
        model: usvm::Model,
        method: String,
        params: serde_json::Value,
        seed: Option<u64>,
        platt: Option<Platt>,
    ) -> PyModel {
        PyModel { model, method, params, seed, platt, dense_coef: OnceLock::new() }
    }

    /// The fitted model itself.
    pub(crate) fn model(&self) -> &usvm::Model {
        &self.model
    }

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

/// The `(A, B)` arrays of Platt sigmoids, one entry per output.
type Sigmoids<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

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
        PyModel::new(self.model.clone(), self.method.clone(), self.params.clone(), self.seed, Some(Platt { a, b }))
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

    /// The kind of model: `"linear"` (hyperplanes on the inputs), `"kernel"` (an expansion over support
    /// vectors), `"mapped"` (hyperplanes on random features) or `"basis_expansion"` (BE-SVM).
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.model {
            usvm::Model::Linear(_) => "linear",
            usvm::Model::Kernel(_) => "kernel",
            usvm::Model::Mapped(_) => "mapped",
            usvm::Model::BasisExpansion(_) => "basis_expansion",
        }
    }

    /// The class labels that decision values `scores` (`n × outputs`) predict (`Model::predict_from`: the
    /// sign, the largest output, or a one-vs-one model's votes with LIBSVM's tie rule).
    fn predict_from<'py>(&self, py: Python<'py>, scores: PyReadonlyArray2<'py, f64>) -> Bound<'py, PyArray1<i64>> {
        Array1::from(self.model.predict_from(&scores.as_array().to_owned())).into_pyarray(py)
    }

    /// One score per class from a one-vs-one model's pairwise values (`usvm::model::ovr_scores`,
    /// scikit-learn's `decision_function_shape='ovr'`).
    fn class_scores<'py>(&self, py: Python<'py>, scores: PyReadonlyArray2<'py, f64>) -> Bound<'py, PyArray2<f64>> {
        usvm::model::ovr_scores(self.model.classes().len(), &scores.as_array().to_owned()).into_pyarray(py)
    }

    /// One Platt sigmoid per output, `(A, B)`, fitted to out-of-fold decision values `scores`
    /// (`n × outputs`) of examples labelled `labels` (`usvm::calibration::fit_platt_per_output`: a pair's on
    /// its two classes, its first positive; a class's against the rest; two classes, `classes[1]` positive).
    fn fit_platt<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
        labels: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Sigmoids<'py>> {
        let labels = labels.as_array().to_vec();
        let platt = usvm::calibration::fit_platt_per_output(&self.model, scores.as_array(), &labels)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let (a, b): (Vec<f64>, Vec<f64>) = platt.iter().map(|p| (p.a, p.b)).unzip();
        Ok((a.into_pyarray(py), b.into_pyarray(py)))
    }

    /// Class probabilities (`n × classes`) from decision values `scores` and the sigmoids `(A, B)`
    /// (`usvm::calibration::predict_proba_per_output`: pairs coupled, one-vs-rest normalised).
    fn class_probabilities<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
        a: PyReadonlyArray1<'py, f64>,
        b: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let platt: Vec<Platt> = a.as_array().iter().zip(b.as_array()).map(|(&a, &b)| Platt { a, b }).collect();
        let p = usvm::calibration::predict_proba_per_output(&self.model, &platt, scores.as_array())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(p.into_pyarray(py))
    }

    /// `"ovo"` for a kernel model of more than two classes with one output per pair of classes (the pairs
    /// `(0,1), (0,2), …`, `f > 0` for the first), else `"ovr"`.
    #[getter]
    fn multiclass(&self) -> &'static str {
        match &self.model {
            usvm::Model::Kernel(m) if m.is_one_vs_one() => "ovo",
            _ => "ovr",
        }
    }

    /// The coefficients, one row per output: the hyperplanes `w_k` of a linear model (K × d), the
    /// expansion coefficients `α_j y_j` of a kernel model (K × n_SV), the hyperplanes on the mapped
    /// features otherwise (K × D).
    /// A read-only view of the model's own array (no copy: 16 MB for a hyperplane in 2·10⁶ features);
    /// for a linear model that stores only its used columns, of its full matrix, made once, on the first
    /// read (an error if it does not fit in memory).
    #[getter]
    fn coef<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let this = slf.get();
        let coef = match (this.dense_coef.get(), &this.model) {
            (Some(full), _) => full,
            (None, usvm::Model::Linear(m)) if m.coef.support().is_some() => {
                let shape = [m.coef.n_outputs(), m.n_features()];
                usvm::memory::reserve("the full coefficient matrix", "read model.to_json()'s columns", &shape)
                    .map_err(to_py_err)?;
                this.dense_coef.get_or_init(|| m.coef.dense().into_owned())
            }
            (None, model) => match model.coef_intercept().0 {
                Cow::Borrowed(coef) => coef,
                Cow::Owned(coef) => this.dense_coef.get_or_init(|| coef),
            },
        };
        // SAFETY: the model is frozen (never mutated, so `coef` is never reallocated) and the view holds
        // `slf` as its base, so the model outlives it; the view is made read-only below.
        let view = unsafe { PyArray2::borrow_from_array(coef, slf.clone().into_any()) };
        view.readwrite().make_nonwriteable();
        Ok(view)
    }

    /// The intercepts `b_k`, one per output.
    #[getter]
    fn intercept<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        Array1::from(self.model.intercept().to_vec()).into_pyarray(py)
    }

    /// A kernel model's support vectors: a dense (n_SV × d) array, or `(data, indices, indptr, shape)`
    /// of a CSR matrix for sparse ones; None for other kinds.
    #[getter]
    fn support_vectors<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let usvm::Model::Kernel(m) = &self.model else { return Ok(None) };
        Ok(Some(match &m.support {
            usvm::Features::Dense(a) => a.to_array().into_pyarray(py).into_any(),
            usvm::Features::Sparse(c) => (
                Array1::from(c.values.to_vec()).into_pyarray(py),
                Array1::from(c.indices.iter().map(|&j| j as i64).collect::<Vec<_>>()).into_pyarray(py),
                Array1::from(c.indptr.iter().map(|&j| j as i64).collect::<Vec<_>>()).into_pyarray(py),
                (c.indptr.len() - 1, c.n_cols),
            )
                .into_pyobject(py)?
                .into_any(),
        }))
    }

    /// A kernel model's kernel as a JSON object (`{"type": "rbf", "gamma": ...}`); None for other kinds.
    #[getter]
    fn kernel(&self) -> Option<String> {
        match &self.model {
            usvm::Model::Kernel(m) => Some(serde_json::to_string(&m.kernel).expect("a kernel serialises")),
            _ => None,
        }
    }

    /// The number of stored parameters (BE-SVM's count, Table 3 of its paper; coefficients, intercepts and
    /// support-vector entries for the other kinds).
    #[getter]
    fn n_parameters(&self) -> usize {
        match &self.model {
            usvm::Model::BasisExpansion(m) => m.n_parameters(),
            usvm::Model::Linear(m) => m.coef.stored().len() + m.intercept.len(),
            usvm::Model::Kernel(m) => m.coef.len() + m.intercept.len() + m.support.n_samples() * m.n_features(),
            usvm::Model::Mapped(m) => m.linear.coef.stored().len() + m.linear.intercept.len(),
        }
    }

    /// BE-SVM's fitted basis expansion (its `transform` gives the mapped features); None for other kinds.
    fn expansion(&self) -> Option<crate::besvm::BasisExpansionMap> {
        match &self.model {
            usvm::Model::BasisExpansion(m) => Some(crate::besvm::BasisExpansionMap::new(m.expansion.clone())),
            _ => None,
        }
    }

    /// Pickling: the model file, restored by `Model.from_json`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((py.get_type::<PyModel>().getattr("from_json")?, (self.to_json(None)?,)))
    }

    /// The model file (version 2, or 3 for a linear model that stores its used columns only), the same text `usvm train` writes; `classes`, one per class, replace
    /// the model's labels.
    #[pyo3(signature = (classes=None))]
    fn to_json(&self, classes: Option<Vec<i64>>) -> PyResult<String> {
        let mut file = self.file();
        if let Some(classes) = classes {
            if classes.len() != file.classes.len() {
                return Err(UsvmError::new_err(format!(
                    "classes has {} labels; the model has {} classes",
                    classes.len(),
                    file.classes.len()
                )));
            }
            file.classes = classes;
        }
        Ok(file.to_json() + "\n")
    }

    /// Reads a model file (version 1 or 2).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyModel> {
        let file = ModelFile::from_json(text).map_err(to_py_err)?;
        let model = file.to_model().map_err(to_py_err)?;
        let params = file.params.clone().or_else(|| file.hyperparameters.clone()).unwrap_or_default();
        Ok(PyModel::new(model, file.method, params, file.seed, file.platt))
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
/// the estimators accept; `x_star` the privileged features of SVM+/R-SVM+; `start` a `Model` of the same
/// classes and features to warm-start the linear methods from. Returns the `Model`, one report dict per
/// binary problem (`objective`, `n_iter`, `termination`, `converged`, `gradient_norm`,
/// `initial_gradient_norm`, `duality_gap`, `objective_trace`, `rounds`, `norm_bound`, `fallback`) and the training indices of the support
/// vectors where the method selects them (the SVM; else None). `callback`, if given, is called with a
/// dict per solver event (`iteration`, `objective`, `residual`, `quantity`, `problem`, `n_problems`); an
/// exception it raises stops the fit and is raised here.
#[pyfunction]
#[pyo3(signature = (params_json, x, y, *, cov=None, sample_weight=None, x_star=None, seed=0, threads=None, start=None, callback=None))]
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
    start: Option<PyRef<'py, PyModel>>,
    callback: Option<Bound<'py, PyAny>>,
) -> PyResult<FitResult<'py>> {
    let params = MethodParams::from_json(params_json).map_err(to_py_err)?;
    let data = borrow_data(x, cov, sample_weight)?;
    let star = x_star.filter(|s| !s.is_none()).map(|s| borrow_data(s, None, None)).transpose()?;
    let (views, star_views, labels) = (data.views(), star.as_ref().map(|s| s.views()), y.as_array());
    let start = start.as_ref().map(|m| &m.model);
    let observer = callback.filter(|c| !c.is_none()).map(|c| PyObserver::new(c.unbind()));
    let options =
        FitOptions { seed, threads, observer: observer.as_ref().map(|o| o as &dyn usvm::progress::Observer), start };
    let fit = py.detach(|| {
        guarded(|| -> usvm::Result<_> {
            let mut dataset = views.to_dataset(labels_of(&labels))?;
            if let Some(s) = &star_views {
                dataset.privileged = Some(s.to_dataset(Vec::new())?.features);
            }
            usvm::fit(&params, &dataset, &options)
        })
    });
    if let Some(e) = observer.and_then(PyObserver::into_error) {
        return Err(e);
    }
    let fit = fit?.map_err(to_py_err)?;
    let reports = fit.reports.iter().map(|r| report_dict(py, r)).collect::<PyResult<Vec<_>>>()?;
    let model = PyModel::fitted(fit.model, &params, Some(seed));
    let support = fit.support.map(|s| Array1::from(s.iter().map(|&i| i as i64).collect::<Vec<_>>()).into_pyarray(py));
    Ok((model, reports, support))
}

/// A report as a dict: `objective`, `n_iter`, `termination`, `converged`, `gradient_norm`,
/// `initial_gradient_norm`, `duality_gap`, `objective_trace`, `rounds`, `norm_bound`, `routes` (the plain
/// hinge's solver routes, in order; else empty), `degenerate` (one class predicted on the whole training set;
/// checked by RSVM-RHHQ) and `fallback` (TSVC's
/// cone form: `{"taken": "relaxation" | "alternating", "relaxation_objective", "alternating_objective"}`, else
/// None).
pub(crate) fn report_dict<'py>(py: Python<'py>, r: &usvm::FitReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("objective", r.objective)?;
    d.set_item("n_iter", r.n_iter)?;
    d.set_item("termination", serde_json::to_value(r.termination).expect("serialises").as_str())?;
    d.set_item("converged", r.converged())?;
    d.set_item("gradient_norm", r.gradient_norm)?;
    d.set_item("initial_gradient_norm", r.initial_gradient_norm)?;
    d.set_item("duality_gap", r.duality_gap)?;
    d.set_item("objective_trace", r.objective_trace.clone())?;
    d.set_item("rounds", r.rounds)?;
    d.set_item("norm_bound", r.norm_bound)?;
    let fallback = r
        .fallback
        .map(|f| {
            let taken = serde_json::to_value(f.taken).expect("serialises");
            let fd = PyDict::new(py);
            fd.set_item("taken", taken.as_str())?;
            fd.set_item("relaxation_objective", f.relaxation_objective)?;
            fd.set_item("alternating_objective", f.alternating_objective)?;
            Ok::<_, PyErr>(fd)
        })
        .transpose()?;
    d.set_item("fallback", fallback)?;
    d.set_item("routes", r.routes.iter().map(|route| route.to_string()).collect::<Vec<_>>())?;
    d.set_item("degenerate", r.degenerate)?;
    Ok(d)
}

/// The defaults of a method, as a JSON object.
#[pyfunction]
fn default_params(method: &str) -> PyResult<String> {
    Ok(MethodParams::default_for(method).map_err(to_py_err)?.to_json().to_string())
}

/// Whether `method` learns from privileged features `x_star` (SVM+, R-SVM+, L2-SVM+); fitted without them
/// it is the plain SVM with its `C` and kernel, and the estimators warn.
#[pyfunction]
fn uses_privileged(method: &str) -> PyResult<bool> {
    Ok(MethodParams::default_for(method).map_err(to_py_err)?.uses_privileged())
}

/// Panics inside [`guarded`], for the test that a core panic reaches Python as a `UsvmError`.
#[pyfunction]
fn _panic_inside_guard(message: &str) -> PyResult<()> {
    guarded(|| panic!("{message}"))
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
    m.add_function(wrap_pyfunction!(_panic_inside_guard, m)?)?;
    m.add_function(wrap_pyfunction!(default_params, m)?)?;
    m.add_function(wrap_pyfunction!(uses_privileged, m)?)?;
    Ok(())
}
