//! Bindings of SVM+ / R-SVM+ ([`usvm::svm::SvmPlusParams`], learning using privileged information).

use ndarray::Array1;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::Kernel;
use usvm::svm::{LupiMethod, SvmPlusParams};

use crate::{borrow_data, value_error};

/// Fits SVM+ (`robust=False`) or R-SVM+ on `x` with privileged features `x_star` (one row per example).
///
/// `kernel` on `x`: "rbf" (γ = `gamma`, or 1/D when None, D the mean squared distance between rows),
/// "linear", "poly" (γ = `gamma`, required); `k*` on `x_star` is Gaussian with `gamma_star` (None: 1/D*).
/// Returns a dict: `support_vectors` (dense), `dual_coef` (K × n_sv), `intercept` (K,), `classes`,
/// `gamma` and `gamma_star` actually used (None for a non-Gaussian `k`), and per binary problem
/// `objective` (the dual, maximised), `n_iter`, `converged`, `max_violation`.
#[pyfunction]
#[pyo3(signature = (
    x, y, x_star, *, robust=false, robust_lambda=0.1, sigma_prime=1.0, c=1.0, rho=1.0, kernel="rbf",
    gamma=None, degree=3, coef0=0.0, gamma_star=None, tol=1e-4, max_iter=10_000_000
))]
#[allow(clippy::too_many_arguments)]
fn fit_svm_plus<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    x_star: &Bound<'py, PyAny>,
    robust: bool,
    robust_lambda: f64,
    sigma_prime: f64,
    c: f64,
    rho: f64,
    kernel: &str,
    gamma: Option<f64>,
    degree: u32,
    coef0: f64,
    gamma_star: Option<f64>,
    tol: f64,
    max_iter: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let kernel = match (kernel, gamma) {
        ("rbf", None) => None,
        ("rbf", Some(g)) => Some(Kernel::Rbf { gamma: g }),
        ("linear", _) => Some(Kernel::Linear),
        ("poly" | "polynomial", Some(g)) => Some(Kernel::Polynomial { gamma: g, coef0, degree }),
        ("poly" | "polynomial", None) => return Err(PyValueError::new_err("kernel 'poly' needs a gamma")),
        _ => {
            return Err(PyValueError::new_err(format!(
                "kernel must be one of 'linear', 'rbf', 'poly'; got {kernel:?}"
            )));
        }
    };
    let method = if robust { LupiMethod::Robust { lambda: robust_lambda, sigma_prime } } else { LupiMethod::SvmPlus };
    let mut params = SvmPlusParams {
        method,
        c,
        rho,
        kernel,
        kernel_star: gamma_star.map(|g| Kernel::Rbf { gamma: g }),
        ..SvmPlusParams::default()
    };
    params.qp.tol = tol;
    params.qp.max_iter = max_iter;
    let (data, star) = (borrow_data(x, None, None)?, borrow_data(x_star, None, None)?);
    let (views, star_views, labels) = (data.views(), star.views(), y.as_array());
    let fit = py
        .detach(|| -> usvm::Result<_> {
            let privileged = star_views.to_dataset(Vec::new())?.features;
            params.fit(&views.to_dataset(labels.to_vec())?.with_privileged(privileged))
        })
        .map_err(value_error)?;
    let out = PyDict::new(py);
    out.set_item("support_vectors", fit.model.support.to_dense().into_pyarray(py))?;
    let gamma_of = |k: &Kernel| match *k {
        Kernel::Rbf { gamma } | Kernel::Polynomial { gamma, .. } => Some(gamma),
        _ => None,
    };
    out.set_item("gamma", gamma_of(&fit.model.kernel))?;
    out.set_item("gamma_star", gamma_of(&fit.kernel_star))?;
    out.set_item("dual_coef", fit.model.coef.into_pyarray(py))?;
    out.set_item("intercept", Array1::from(fit.model.intercept).into_pyarray(py))?;
    out.set_item("classes", fit.model.classes)?;
    let r = &fit.reports;
    out.set_item("objective", r.iter().map(|r| r.objective).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.converged()).collect::<Vec<_>>())?;
    out.set_item("max_violation", r.iter().map(|r| r.gradient_norm).collect::<Vec<_>>())?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_svm_plus, m)?)?;
    Ok(())
}
