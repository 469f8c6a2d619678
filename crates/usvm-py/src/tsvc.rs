//! Bindings of TSVC ([`usvm::svm::TsvcParams`], Bi & Zhang): linear (alternating or SOCP) or kernel.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::svm::{Delta, TsvcForm, TsvcParams};
use usvm::{Kernel, Model};

use crate::{borrow_data, value_error};

/// Fits TSVC. `delta` is one bound or one per example; `form` is "alternating" or "socp" (linear kernel);
/// `norm_bound` solves eq. 8 for a fixed ‖w‖ ≤ γ (socp only).
///
/// Returns a dict: `classes`; linear: `coef` (K × n), `intercept` (K,); kernel: `support_vectors` (the
/// shifted training points kept), `dual_coef` (K × n_sv), `intercept`; per binary problem `objective`,
/// `objective_trace`, `rounds`, `converged`, `n_iter`, and for socp `gamma` and `duality_gap`.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, delta, sample_weight=None, kernel="linear", gamma=1.0, degree=3, coef0=0.0, c=1.0,
    form="alternating", norm_bound=None, max_rounds=100, tol=1e-6, fit_intercept=true
))]
#[allow(clippy::too_many_arguments)]
fn fit_tsvc<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    delta: Vec<f64>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    kernel: &str,
    gamma: f64,
    degree: u32,
    coef0: f64,
    c: f64,
    form: &str,
    norm_bound: Option<f64>,
    max_rounds: usize,
    tol: f64,
    fit_intercept: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let kernel = match kernel {
        "linear" => Kernel::Linear,
        "rbf" => Kernel::Rbf { gamma },
        "poly" | "polynomial" => Kernel::Polynomial { gamma, coef0, degree },
        _ => return Err(PyValueError::new_err(format!("kernel must be 'linear', 'rbf' or 'poly'; got {kernel:?}"))),
    };
    let form = match form {
        "alternating" => TsvcForm::Alternating,
        "socp" => TsvcForm::Socp,
        _ => return Err(PyValueError::new_err(format!("form must be 'alternating' or 'socp'; got {form:?}"))),
    };
    let delta = if delta.len() == 1 { Delta::Uniform(delta[0]) } else { Delta::PerExample(delta) };
    let params = TsvcParams { c, delta, form, kernel, fit_intercept, max_rounds, tol, norm_bound };
    let data = borrow_data(x, None, sample_weight)?;
    let (views, labels) = (data.views(), y.as_array());
    let fit = py.detach(|| params.fit(&views.to_dataset(labels.to_vec())?)).map_err(value_error)?;
    let out = PyDict::new(py);
    match fit.model {
        Model::Linear(m) => {
            out.set_item("coef", m.coef.into_pyarray(py))?;
            out.set_item("intercept", ndarray::Array1::from(m.intercept).into_pyarray(py))?;
            out.set_item("classes", m.classes)?;
        }
        Model::Kernel(m) => {
            out.set_item("support_vectors", m.support.to_dense().into_pyarray(py))?;
            out.set_item("dual_coef", m.coef.into_pyarray(py))?;
            out.set_item("intercept", ndarray::Array1::from(m.intercept).into_pyarray(py))?;
            out.set_item("classes", m.classes)?;
        }
        Model::Mapped(_) | Model::BasisExpansion(_) => unreachable!("TSVC fits linear or kernel models"),
    }
    let r = &fit.reports;
    out.set_item("objective", r.iter().map(|r| r.report.objective).collect::<Vec<_>>())?;
    out.set_item("objective_trace", r.iter().map(|r| r.report.objective_trace.clone()).collect::<Vec<_>>())?;
    out.set_item("rounds", r.iter().map(|r| r.rounds).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.report.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.report.converged()).collect::<Vec<_>>())?;
    out.set_item("gamma", r.iter().map(|r| r.gamma).collect::<Vec<_>>())?;
    out.set_item("duality_gap", r.iter().map(|r| r.duality_gap).collect::<Vec<_>>())?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_tsvc, m)?)?;
    Ok(())
}
