//! SVM+'s data-dependent default: the Gaussian kernel's `γ = 1/D`, `D` the mean squared distance between
//! rows ([`usvm::svm::svm_plus::default_gaussian`]), so that Python can report and store the `γ` used.

use pyo3::prelude::*;
use usvm::Kernel;

use crate::{borrow_data, value_error};

/// `γ = 1/D` for the rows of `x` (`D` the mean of `‖x_i − x_j‖²` over pairs; 1 when all rows coincide).
#[pyfunction]
fn default_gaussian_gamma(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    let data = borrow_data(x, None, None)?;
    let views = data.views();
    let kernel = py
        .detach(|| views.to_dataset(Vec::new()).map(|d| usvm::svm::svm_plus::default_gaussian(&d.features)))
        .map_err(value_error)?;
    match kernel {
        Kernel::Rbf { gamma } => Ok(gamma),
        _ => unreachable!("default_gaussian is a Gaussian kernel"),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(default_gaussian_gamma, m)?)?;
    Ok(())
}
