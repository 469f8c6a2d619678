//! BE-SVM's parts on their own: the basis expansion as a transformer (settings as the core's
//! `BasisExpansionParams` in JSON), its default `γ`, and its squared-hinge solver for cross-checks. The
//! classifier itself fits through the registry (`registry.rs`).

use ndarray::Array1;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::besvm::{BasisExpansion, BasisExpansionParams, SquaredHingeSvmParams};
use usvm::{Dataset, Features};

use crate::{borrow_data, value_error};

fn json_error(e: serde_json::Error) -> PyErr {
    PyValueError::new_err(format!("invalid settings: {e}"))
}

/// The features of `x` (dense or CSR), owned: copied once with the GIL released.
fn features(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Features<'static>> {
    let data = borrow_data(x, None, None)?;
    let views = data.views();
    py.detach(|| views.to_dataset(Vec::new()).map(|d| d.features.into_owned())).map_err(value_error)
}

fn dataset(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: PyReadonlyArray1<'_, i64>,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Dataset<'static>> {
    let data = borrow_data(x, None, sample_weight)?;
    let (views, labels) = (data.views(), y.as_array().to_vec());
    py.detach(|| views.to_dataset(labels).map(Dataset::into_owned)).map_err(value_error)
}

/// A fitted basis expansion (the BE-SVM feature map).
#[pyclass(module = "usvm._usvm", frozen)]
pub struct BasisExpansionMap {
    inner: BasisExpansion,
}

impl BasisExpansionMap {
    pub(crate) fn new(inner: BasisExpansion) -> Self {
        BasisExpansionMap { inner }
    }
}

#[pymethods]
impl BasisExpansionMap {
    /// `φ(x)` for every row of `x`.
    fn transform<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let f = features(py, x)?;
        let out = py.detach(|| self.inner.transform(&f)).map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }
    /// Pickling: the map as JSON, restored by `_besvm_map_from_state`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let state = serde_json::to_string(&self.inner).map_err(json_error)?;
        Ok((py.import("usvm._usvm")?.getattr("_besvm_map_from_state")?, (state,)))
    }
    #[getter]
    fn basis_indices(&self) -> Vec<usize> {
        self.inner.basis_indices.clone()
    }
    #[getter]
    fn n_outputs(&self) -> usize {
        self.inner.n_outputs()
    }
}

/// Fits the basis expansion with `params` (JSON of `usvm::besvm::BasisExpansionParams`).
#[pyfunction]
fn fit_basis_expansion(py: Python<'_>, x: &Bound<'_, PyAny>, params: &str) -> PyResult<BasisExpansionMap> {
    let params: BasisExpansionParams = serde_json::from_str(params).map_err(json_error)?;
    let f = features(py, x)?;
    let inner = py.detach(|| params.fit(&f)).map_err(value_error)?;
    Ok(BasisExpansionMap { inner })
}

fn reports<'py>(py: Python<'py>, r: &[usvm::svm::FitReport], out: &Bound<'py, PyDict>) -> PyResult<()> {
    let _ = py;
    out.set_item("objective", r.iter().map(|r| r.objective).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.converged()).collect::<Vec<_>>())?;
    out.set_item("gradient_norm", r.iter().map(|r| r.gradient_norm).collect::<Vec<_>>())?;
    Ok(())
}

/// The squared-hinge SVM `½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀx_i + b))²` (LIBLINEAR `-s 2`, bias not
/// regularised) by BE-SVM's Newton solver, on features given as they are (for cross-checks of that solver):
/// `coef`, `intercept`, `classes` and per binary problem `objective`, `n_iter`, `converged`, `gradient_norm`.
#[pyfunction]
#[pyo3(signature = (x, y, *, c=1.0, fit_intercept=true, tol=1e-10, max_iter=1000, sample_weight=None))]
#[allow(clippy::too_many_arguments)]
fn fit_squared_hinge<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    c: f64,
    fit_intercept: bool,
    tol: f64,
    max_iter: usize,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let params = SquaredHingeSvmParams { c, fit_intercept, tol, max_iter, ..Default::default() };
    let data = dataset(py, x, y, sample_weight)?;
    let fit = py.detach(|| params.fit(&data)).map_err(value_error)?;
    let out = PyDict::new(py);
    out.set_item("coef", fit.model.coef.dense().into_owned().into_pyarray(py))?;
    out.set_item("intercept", Array1::from(fit.model.intercept).into_pyarray(py))?;
    out.set_item("classes", fit.model.classes)?;
    reports(py, &fit.reports, &out)?;
    Ok(out)
}

/// `γ = 1/(d·Var x)` over the training features (scikit-learn's "scale").
#[pyfunction]
fn gamma_scale(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    let f = features(py, x)?;
    Ok(usvm::kernel::similarity::gamma_scale(&f))
}

#[pyfunction]
fn _besvm_map_from_state(state: &str) -> PyResult<BasisExpansionMap> {
    Ok(BasisExpansionMap { inner: serde_json::from_str(state).map_err(json_error)? })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BasisExpansionMap>()?;
    m.add_function(wrap_pyfunction!(fit_basis_expansion, m)?)?;
    m.add_function(wrap_pyfunction!(fit_squared_hinge, m)?)?;
    m.add_function(wrap_pyfunction!(gamma_scale, m)?)?;
    m.add_function(wrap_pyfunction!(_besvm_map_from_state, m)?)?;
    Ok(())
}
