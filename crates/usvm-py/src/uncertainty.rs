//! Bindings of `usvm::gaussians` (DESIGN 2.9): plain numpy in, numpy out. The Python wrappers
//! in `python/src/usvm/_uncertainty.py` convert inputs to C-ordered float64 and shape the results.

use ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use usvm::Covariances;
use usvm::gaussians::{
    BlockParams, CovarianceForm, StandardErrorRule, TranslationParams, WelchParams, Window, block_pool,
    gaussians_from_repeats, standard_errors_to_variances, translation_covariances, welch_frequencies, welch_pool,
};

/// `(means, variances)` as numpy vectors.
type MeansVariances<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

fn value_error(e: usvm::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `(means, covariance)` of each group (a list of `N_i × n` float64 arrays); the covariance is a
/// `(ℓ, n, n)` array (full), `(ℓ, n)` (diag), `(ℓ,)` (iso) or a list of `(n, N_i)` factors (lowrank).
#[pyfunction]
fn repeats_to_gaussians<'py>(
    py: Python<'py>,
    groups: Vec<PyReadonlyArray2<'py, f64>>,
    form: &str,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyAny>)> {
    let form = match form {
        "full" => CovarianceForm::Full,
        "diag" => CovarianceForm::Diagonal,
        "iso" => CovarianceForm::Isotropic,
        "lowrank" => CovarianceForm::LowRank,
        other => {
            return Err(PyValueError::new_err(format!(
                "cov_type must be 'full', 'diag', 'iso' or 'lowrank'; got {other:?}"
            )));
        }
    };
    let views: Vec<_> = groups.iter().map(|g| g.as_array()).collect();
    let g = gaussians_from_repeats(&views, form).map_err(value_error)?;
    let cov: Bound<'py, PyAny> = match g.covariances {
        Covariances::Full(c) => c.matrices.into_pyarray(py).into_any(),
        Covariances::Diagonal(c) => c.variances.into_pyarray(py).into_any(),
        Covariances::Isotropic(c) => Array1::from(c.variances).into_pyarray(py).into_any(),
        Covariances::LowRank(c) => PyList::new(py, c.factors.into_iter().map(|f| f.into_pyarray(py)))?.into_any(),
        _ => unreachable!("gaussians_from_repeats returns the requested form"),
    };
    Ok((g.means.into_pyarray(py), cov))
}

/// `(ℓ, n, 2)` factors `U_i = [σ_h ∂f/∂x, σ_v ∂f/∂y]` of the translation covariances of `ℓ` images.
#[pyfunction]
fn translation_factors<'py>(
    py: Python<'py>,
    images: PyReadonlyArray2<'py, f64>,
    height: usize,
    width: usize,
    sigma_h: f64,
    sigma_v: f64,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let params = TranslationParams { height, width, sigma_h, sigma_v };
    let Covariances::LowRank(c) = translation_covariances(images.as_array(), &params).map_err(value_error)? else {
        unreachable!("translation covariances are low-rank")
    };
    let n = height * width;
    let mut out = ndarray::Array3::zeros((c.factors.len(), n, 2));
    for (i, f) in c.factors.iter().enumerate() {
        out.index_axis_mut(ndarray::Axis(0), i).assign(f);
    }
    Ok(out.into_pyarray(py))
}

/// Welch pooling of every row of `x`: `(frequencies, means, variances)`.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn welch_rows<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    segment_len: usize,
    overlap: usize,
    window: &str,
    fs: f64,
    detrend: bool,
    ddof: usize,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
    let window = match window {
        "hann" => Window::Hann,
        "hamming" => Window::Hamming,
        "boxcar" | "rectangular" => Window::Rectangular,
        other => {
            return Err(PyValueError::new_err(format!("window must be 'hann', 'hamming' or 'boxcar'; got {other:?}")));
        }
    };
    let params = WelchParams { segment_len, overlap, window, sampling_rate: fs, detrend, ddof };
    let x = x.as_array();
    let nf = segment_len / 2 + 1;
    let (mut m, mut v) = (Array2::zeros((x.nrows(), nf)), Array2::zeros((x.nrows(), nf)));
    for (i, row) in x.rows().into_iter().enumerate() {
        let p = welch_pool(&row.to_vec(), &params).map_err(|e| PyValueError::new_err(format!("row {i}: {e}")))?;
        m.row_mut(i).assign(&Array1::from(p.means));
        v.row_mut(i).assign(&Array1::from(p.variances));
    }
    Ok((Array1::from(welch_frequencies(&params)).into_pyarray(py), m.into_pyarray(py), v.into_pyarray(py)))
}

/// Block pooling of one `H × W × C` map: `(means, variances)` flattened block-row, block-column, channel.
#[pyfunction]
fn block_pool_map<'py>(
    py: Python<'py>,
    map: PyReadonlyArray3<'py, f64>,
    block_height: usize,
    block_width: usize,
    ddof: usize,
) -> PyResult<MeansVariances<'py>> {
    let p = block_pool(map.as_array(), &BlockParams { block_height, block_width, ddof }).map_err(value_error)?;
    Ok((Array1::from(p.means).into_pyarray(py), Array1::from(p.variances).into_pyarray(py)))
}

/// Variances from standard errors: `fraction = None` squares them; otherwise the WDBC range rule, the
/// rescaled standard error itself (`square_range = False`, the paper) or its square.
#[pyfunction]
#[pyo3(signature = (means, se, reference=None, fraction=None, square_range=false))]
fn se_to_variances<'py>(
    py: Python<'py>,
    means: PyReadonlyArray2<'py, f64>,
    se: PyReadonlyArray2<'py, f64>,
    reference: Option<PyReadonlyArray1<'py, i64>>,
    fraction: Option<f64>,
    square_range: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rule = match fraction {
        None => StandardErrorRule::Squared,
        Some(fraction) if square_range => StandardErrorRule::RangeScaledSquared { fraction },
        Some(fraction) => StandardErrorRule::RangeScaled { fraction },
    };
    let reference: Option<Vec<usize>> = match reference {
        Some(r) => Some(
            r.as_array()
                .iter()
                .map(|&i| usize::try_from(i).map_err(|_| PyValueError::new_err(format!("negative row index {i}"))))
                .collect::<PyResult<_>>()?,
        ),
        None => None,
    };
    let v = standard_errors_to_variances(means.as_array(), se.as_array(), reference.as_deref(), rule)
        .map_err(value_error)?;
    Ok(v.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(repeats_to_gaussians, m)?)?;
    m.add_function(wrap_pyfunction!(translation_factors, m)?)?;
    m.add_function(wrap_pyfunction!(welch_rows, m)?)?;
    m.add_function(wrap_pyfunction!(block_pool_map, m)?)?;
    m.add_function(wrap_pyfunction!(se_to_variances, m)?)?;
    Ok(())
}
