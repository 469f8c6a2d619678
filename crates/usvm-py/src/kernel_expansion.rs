//! The decision function of a kernel expansion given as arrays (TSVC's kernel form in Python).

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
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
    m.add_function(wrap_pyfunction!(kernel_decision_function, m)?)?;
    Ok(())
}
