//! Plot bindings: render `usvm-plot` figures to PNG or SVG bytes (the Python wrappers in `usvm/_plot.py`
//! validate the arguments and write the files). Invalid figures raise `ValueError` with the plot crate's
//! message; rendering runs with the GIL released.

use numpy::{PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use usvm_plot::{
    AnglePlot, AnglePoint, AngleSeries, BoundaryPlot, Format, Gaussian2, Line, PlotError, PrCurve, PrPlot,
};

fn plot_error(e: PlotError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn bytes<'py>(
    py: Python<'py>,
    format: &str,
    render: impl FnOnce(Format) -> usvm_plot::Result<Vec<u8>> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let format = Format::from_name(format).map_err(plot_error)?;
    let data = py.detach(|| render(format)).map_err(plot_error)?;
    Ok(PyBytes::new(py, &data))
}

/// Boundary plot of `means` (n × 2) with covariances `covs` (n × 2 × 2, or None for none), classes
/// `positive`, and lines `(label, w1, w2, b)`.
#[pyfunction]
#[pyo3(signature = (means, positive, covs, lines, sigmas, format, width, height, title=None))]
#[allow(clippy::too_many_arguments)]
fn render_boundary<'py>(
    py: Python<'py>,
    means: PyReadonlyArray2<'py, f64>,
    positive: Vec<bool>,
    covs: Option<PyReadonlyArray3<'py, f64>>,
    lines: Vec<(String, f64, f64, f64)>,
    sigmas: f64,
    format: &str,
    width: u32,
    height: u32,
    title: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let m = means.as_array();
    if m.ncols() != 2 || positive.len() != m.nrows() {
        return Err(PyValueError::new_err(format!(
            "means must have shape (n, 2) and positive length n; got {:?} and {}",
            m.shape(),
            positive.len()
        )));
    }
    let c = covs.as_ref().map(|c| c.as_array());
    if let Some(c) = &c
        && c.shape() != [m.nrows(), 2, 2]
    {
        return Err(PyValueError::new_err(format!("covs must have shape (n, 2, 2); got {:?}", c.shape())));
    }
    let gaussians = (0..m.nrows())
        .map(|i| Gaussian2 {
            mean: [m[[i, 0]], m[[i, 1]]],
            cov: c.as_ref().map_or([[0.0; 2]; 2], |c| [[c[[i, 0, 0]], c[[i, 0, 1]]], [c[[i, 1, 0]], c[[i, 1, 1]]]]),
            positive: positive[i],
        })
        .collect();
    let lines = lines.into_iter().map(|(label, w1, w2, b)| Line { label, w: [w1, w2], b }).collect();
    let plot = BoundaryPlot { gaussians, lines, sigmas, title, ..Default::default() };
    bytes(py, format, |f| plot.render(f, width, height))
}

/// Precision-recall curves `(label, y_true as bool, scores)`.
#[pyfunction]
#[pyo3(signature = (curves, format, width, height, title=None))]
fn render_pr<'py>(
    py: Python<'py>,
    curves: Vec<(String, Vec<bool>, Vec<f64>)>,
    format: &str,
    width: u32,
    height: u32,
    title: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let curves = curves.into_iter().map(|(label, y, scores)| PrCurve { label, y, scores }).collect();
    let plot = PrPlot { curves, title };
    bytes(py, format, |f| plot.render(f, width, height))
}

/// Angle curves `(label, n, angle, low, high)` and reference points `(label, n, angle)`.
#[pyfunction]
#[pyo3(signature = (series, references, format, width, height, title=None))]
#[allow(clippy::type_complexity)]
fn render_angle<'py>(
    py: Python<'py>,
    series: Vec<(String, Vec<f64>, Vec<f64>, Option<Vec<f64>>, Option<Vec<f64>>)>,
    references: Vec<(String, f64, f64)>,
    format: &str,
    width: u32,
    height: u32,
    title: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(series.len());
    for (label, n, angle, low, high) in series {
        let ok = |v: &Option<Vec<f64>>| v.as_ref().is_none_or(|v| v.len() == n.len());
        if angle.len() != n.len() || !ok(&low) || !ok(&high) {
            return Err(PyValueError::new_err(format!(
                "series {label:?}: n, angle, low and high must have one length"
            )));
        }
        let points = (0..n.len())
            .map(|k| AnglePoint {
                n: n[k],
                angle: angle[k],
                low: low.as_ref().map(|v| v[k]),
                high: high.as_ref().map(|v| v[k]),
            })
            .collect();
        out.push(AngleSeries { label, points });
    }
    let plot = AnglePlot { series: out, references, title, ..Default::default() };
    bytes(py, format, |f| plot.render(f, width, height))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(render_boundary, m)?)?;
    m.add_function(wrap_pyfunction!(render_pr, m)?)?;
    m.add_function(wrap_pyfunction!(render_angle, m)?)?;
    Ok(())
}
