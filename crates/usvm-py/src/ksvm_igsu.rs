//! Bindings of KSVM-iGSU: `fit_kernel_igsu` returns the model as the JSON model file (so that the Python
//! estimator pickles as plain data) and `model_decision_function` evaluates such a model.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::solver::exact::ExactSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{Approximation, KernelIgsuParams};
use usvm::{Kernel, ModelFile, Solver};

use crate::{borrow_data, value_error};

fn kernel(name: &str, gamma: f64, degree: u32, coef0: f64) -> PyResult<Kernel> {
    Ok(match name {
        "linear" => Kernel::Linear,
        "rbf" => Kernel::Rbf { gamma },
        "poly" | "polynomial" => Kernel::Polynomial { gamma, coef0, degree },
        _ => {
            return Err(PyValueError::new_err(format!("kernel must be 'linear', 'rbf' or 'poly'; got {name:?}")));
        }
    })
}

/// Fits KSVM-iGSU on integer labels; `cov` as for `fit_linear` (its isotropic part `tr Σ_i / n` is used).
///
/// Returns a dict: `model` (the JSON model file), `classes`, and per binary problem `objective`, `n_iter`,
/// `converged`, `gradient_norm`.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, cov=None, sample_weight=None, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, lam=0.01,
    fit_intercept=true, solver="exact", approximation="exact", n_components=500, tol=1e-6, max_iter=1000,
    iterations=1000, batch=100, seed=0
))]
#[allow(clippy::too_many_arguments)]
fn fit_kernel_igsu<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    cov: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    kernel: &str,
    gamma: f64,
    degree: u32,
    coef0: f64,
    lam: f64,
    fit_intercept: bool,
    solver: &str,
    approximation: &str,
    n_components: usize,
    tol: f64,
    max_iter: usize,
    iterations: usize,
    batch: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let params = KernelIgsuParams {
        kernel: self::kernel(kernel, gamma, degree, coef0)?,
        lambda: lam,
        fit_intercept,
        solver: match solver {
            "exact" => Solver::Exact(ExactSettings { tol, max_iter, ..ExactSettings::default() }),
            "sgd" => Solver::Sgd(SgdSettings { iterations, batch, seed }),
            _ => return Err(PyValueError::new_err(format!("solver must be 'exact' or 'sgd'; got {solver:?}"))),
        },
        approximation: match approximation {
            "exact" => Approximation::Exact,
            "nystroem" => Approximation::Nystroem { components: n_components, seed },
            "fourier" => Approximation::Fourier { components: n_components, seed },
            _ => {
                return Err(PyValueError::new_err(format!(
                    "approximation must be 'exact', 'nystroem' or 'fourier'; got {approximation:?}"
                )));
            }
        },
    };
    let data = borrow_data(x, cov, sample_weight)?;
    let (views, labels) = (data.views(), y.as_array());
    let (fit, json) = py
        .detach(|| {
            let fit = params.fit(&views.to_dataset(labels.to_vec())?)?;
            let file = ModelFile::from_model(&fit.model, "ksvm-igsu", Default::default());
            Ok::<_, usvm::Error>((fit, file.to_json()))
        })
        .map_err(value_error)?;
    let out = PyDict::new(py);
    out.set_item("model", json)?;
    out.set_item("classes", fit.model.classes().to_vec())?;
    let r = &fit.reports;
    out.set_item("objective", r.iter().map(|r| r.objective).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.converged()).collect::<Vec<_>>())?;
    out.set_item("gradient_norm", r.iter().map(|r| r.gradient_norm).collect::<Vec<_>>())?;
    Ok(out)
}

/// The decision values `(n_samples, n_outputs)` of a model given as its JSON model file.
#[pyfunction]
fn model_decision_function<'py>(
    py: Python<'py>,
    model: &str,
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let data = borrow_data(x, None, None)?;
    let views = data.views();
    let f = py
        .detach(|| {
            let model = ModelFile::from_json(model)?.to_model()?;
            let dataset = views.to_dataset(Vec::new())?;
            model.decision_function(&dataset.features)
        })
        .map_err(value_error)?;
    Ok(f.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_kernel_igsu, m)?)?;
    m.add_function(wrap_pyfunction!(model_decision_function, m)?)?;
    Ok(())
}
