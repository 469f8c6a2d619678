//! Bindings of the thesis chapter-5 squared-hinge layer ([`usvm::svm::SquaredHingeGsuParams`]): the same
//! input conversion as `fit_linear` (arrays copied once, with the GIL released), one call to `fit`.

use ndarray::Array1;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::solver::exact::ExactSettings;
use usvm::solver::lbfgs::LbfgsSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};

use super::{borrow_data, value_error};

/// Fits the squared-hinge layer (`loss` "thesis" or "expected"; `solver` "lbfgs", "newton" or "sgd") on
/// integer labels. Returns a dict like `fit_linear`: `coef` (K × d), `intercept`, `classes`, and per binary
/// problem `objective`, `n_iter`, `converged`, `gradient_norm`, `initial_gradient_norm`, `objective_trace`.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, cov=None, sample_weight=None, loss="expected", lam=0.01, fit_intercept=true, solver="lbfgs",
    tol=1e-6, max_iter=1000, memory=10, iterations=1000, batch=100, seed=0
))]
#[allow(clippy::too_many_arguments)]
fn fit_sqhinge<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    cov: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    loss: &str,
    lam: f64,
    fit_intercept: bool,
    solver: &str,
    tol: f64,
    max_iter: usize,
    memory: usize,
    iterations: usize,
    batch: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let loss = match loss {
        "thesis" => SquaredHingeGsuLoss::Thesis,
        "expected" => SquaredHingeGsuLoss::Expected,
        _ => return Err(PyValueError::new_err(format!("loss must be 'thesis' or 'expected'; got {loss:?}"))),
    };
    let solver = match solver {
        "lbfgs" => SquaredHingeGsuSolver::Lbfgs(LbfgsSettings { tol, max_iter, memory }),
        "newton" => SquaredHingeGsuSolver::Newton(ExactSettings { tol, max_iter, ..ExactSettings::default() }),
        "sgd" => SquaredHingeGsuSolver::Sgd(SgdSettings { iterations, batch, seed }),
        _ => {
            return Err(PyValueError::new_err(format!("solver must be 'lbfgs', 'newton' or 'sgd'; got {solver:?}")));
        }
    };
    let params = SquaredHingeGsuParams { loss, lambda: lam, fit_intercept, solver };
    let data = borrow_data(x, cov, sample_weight)?;
    let (views, labels) = (data.views(), y.as_array());
    let fit = py.detach(|| params.fit(&views.to_dataset(labels.to_vec())?)).map_err(value_error)?;
    let out = PyDict::new(py);
    out.set_item("coef", fit.model.coef.into_pyarray(py))?;
    out.set_item("intercept", Array1::from(fit.model.intercept).into_pyarray(py))?;
    out.set_item("classes", fit.model.classes)?;
    let r = &fit.reports;
    out.set_item("objective", r.iter().map(|r| r.objective).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.converged()).collect::<Vec<_>>())?;
    out.set_item("gradient_norm", r.iter().map(|r| r.gradient_norm).collect::<Vec<_>>())?;
    out.set_item("initial_gradient_norm", r.iter().map(|r| r.initial_gradient_norm).collect::<Vec<_>>())?;
    out.set_item("objective_trace", r.iter().map(|r| r.objective_trace.clone()).collect::<Vec<_>>())?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_sqhinge, m)?)
}
