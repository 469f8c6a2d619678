//! Bindings of the kernel SVM ([`usvm::svm::KernelSvmParams`], LIBSVM's SMO with per-example costs).

use ndarray::Array1;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::svm::KernelSvmParams;
use usvm::{Kernel, KernelModel};

use crate::{borrow_data, value_error};

fn kernel(name: &str, gamma: f64, degree: u32, coef0: f64) -> PyResult<Kernel> {
    Ok(match name {
        "linear" => Kernel::Linear,
        "rbf" => Kernel::Rbf { gamma },
        "poly" | "polynomial" => Kernel::Polynomial { gamma, coef0, degree },
        "precomputed" => Kernel::Precomputed,
        _ => {
            return Err(PyValueError::new_err(format!(
                "kernel must be one of 'linear', 'rbf', 'poly', 'precomputed'; got {name:?}"
            )));
        }
    })
}

/// Fits a kernel SVM (C-SVC, per-example costs `C·sample_weight_i`; one-vs-rest for more than two classes).
///
/// With `kernel="precomputed"`, `x` holds rows of the Gram matrix in LIBSVM's layout (column 0 the serial
/// number `1..ℓ`, column `j` the kernel value with training example `j`).
/// Returns a dict: `support` (training indices of the support vectors), `dual_coef` (K × n_sv, `α_i y_i`),
/// `intercept` (K,), `classes`, and per binary problem `objective` (the dual `½αᵀQα - 1ᵀα`), `n_iter`,
/// `converged`, `max_violation`, `n_support`, `n_bounded`.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, sample_weight=None, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, c=1.0, tol=1e-3,
    cache_mb=200.0, max_iter=0, shrinking=true
))]
#[allow(clippy::too_many_arguments)]
fn fit_kernel_svm<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    kernel: &str,
    gamma: f64,
    degree: u32,
    coef0: f64,
    c: f64,
    tol: f64,
    cache_mb: f64,
    max_iter: usize,
    shrinking: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let params =
        KernelSvmParams { kernel: self::kernel(kernel, gamma, degree, coef0)?, c, tol, cache_mb, max_iter, shrinking };
    let data = borrow_data(x, None, sample_weight)?;
    let (views, labels) = (data.views(), y.as_array());
    let fit = py.detach(|| params.fit(&views.to_dataset(labels.to_vec())?)).map_err(value_error)?;
    let out = PyDict::new(py);
    out.set_item("support", Array1::from(fit.support.iter().map(|&i| i as i64).collect::<Vec<_>>()).into_pyarray(py))?;
    out.set_item("dual_coef", fit.model.coef.into_pyarray(py))?;
    out.set_item("intercept", Array1::from(fit.model.intercept).into_pyarray(py))?;
    out.set_item("classes", fit.model.classes)?;
    let r = &fit.reports;
    out.set_item("objective", r.iter().map(|r| r.objective).collect::<Vec<_>>())?;
    out.set_item("n_iter", r.iter().map(|r| r.n_iter).collect::<Vec<_>>())?;
    out.set_item("converged", r.iter().map(|r| r.converged()).collect::<Vec<_>>())?;
    out.set_item("max_violation", r.iter().map(|r| r.max_violation).collect::<Vec<_>>())?;
    out.set_item("n_support", r.iter().map(|r| r.n_support).collect::<Vec<_>>())?;
    out.set_item("n_bounded", r.iter().map(|r| r.n_bounded).collect::<Vec<_>>())?;
    Ok(out)
}

/// `f_k(x) = Σ_j dual_coef[k, j] k(x, s_j) + intercept[k]` for the rows of `x` and support vectors `s_j`
/// (the rows of `support_vectors`); returns an `(n, K)` array. Not for precomputed kernels.
#[pyfunction]
#[pyo3(signature = (x, support_vectors, dual_coef, intercept, *, kernel="rbf", gamma=1.0, degree=3, coef0=0.0))]
#[allow(clippy::too_many_arguments)]
fn kernel_decision_function<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    support_vectors: &Bound<'py, PyAny>,
    dual_coef: numpy::PyReadonlyArray2<'py, f64>,
    intercept: PyReadonlyArray1<'py, f64>,
    kernel: &str,
    gamma: f64,
    degree: u32,
    coef0: f64,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let kernel = self::kernel(kernel, gamma, degree, coef0)?;
    if kernel == Kernel::Precomputed {
        return Err(PyValueError::new_err("a precomputed kernel's decision function is a product with the Gram rows"));
    }
    kernel.validate().map_err(value_error)?;
    let (xb, svb) = (borrow_data(x, None, None)?, borrow_data(support_vectors, None, None)?);
    let (coef, intercept) = (dual_coef.as_array().to_owned(), intercept.as_array().to_vec());
    if coef.nrows() != intercept.len() {
        return Err(PyValueError::new_err("dual_coef must have one row per intercept"));
    }
    let (xv, svv) = (xb.views(), svb.views());
    let f = py
        .detach(|| -> usvm::Result<_> {
            let support = svv.to_dataset(Vec::new())?.features;
            if coef.ncols() != support.n_samples() {
                return Err(usvm::Error::DimensionMismatch {
                    what: "dual_coef columns (support vectors)",
                    expected: support.n_samples(),
                    found: coef.ncols(),
                });
            }
            let model = KernelModel { kernel, classes: Vec::new(), support, coef, intercept };
            model.decision_function(&xv.to_dataset(Vec::new())?.features)
        })
        .map_err(value_error)?;
    Ok(f.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_kernel_svm, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_decision_function, m)?)?;
    Ok(())
}
