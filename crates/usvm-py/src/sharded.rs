//! The fit over row shards ([`usvm::sharded`]) from Python: `Shard` holds one partition's rows on a worker
//! and answers encoded questions; `fit_sharded` runs the driver, asking every question through a Python
//! callable (the engine: `usvm.dask`) that returns the shards' encoded answers in shard order. Questions
//! and answers cross as `bytes` (postcard: exact little-endian f64s), which any engine can carry.

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use usvm::sharded::{self, Answer, DualState, Question, Shard, Shards};
use usvm::{FitOptions, MethodParams};

use crate::registry::{PyModel, report_dict, to_py_err};
use crate::{borrow_data, labels_of};

/// One partition's rows, prepared for a sharded fit of `params_json` (its method must be `gsu`, `iso`,
/// `hinge` or `power` with the exact solver): `y` integer labels, `cov` any covariance form the estimators accept.
#[pyclass(name = "Shard", module = "usvm._usvm")]
pub struct PyShard {
    shard: Shard,
}

#[pymethods]
impl PyShard {
    #[new]
    #[pyo3(signature = (params_json, x, y, *, cov=None, sample_weight=None))]
    fn new<'py>(
        py: Python<'py>,
        params_json: &str,
        x: &Bound<'py, PyAny>,
        y: PyReadonlyArray1<'py, i64>,
        cov: Option<&Bound<'py, PyAny>>,
        sample_weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<PyShard> {
        let params = MethodParams::from_json(params_json).map_err(to_py_err)?;
        let data = borrow_data(x, cov, sample_weight)?;
        let (views, labels) = (data.views(), y.as_array());
        let shard = py
            .detach(|| views.to_dataset(labels_of(&labels)).and_then(|d| Shard::new(&params, d)))
            .map_err(to_py_err)?;
        Ok(PyShard { shard })
    }

    /// The rows it holds.
    #[getter]
    fn n_samples(&self) -> usize {
        self.shard.n_samples()
    }

    /// How many of its rows `model` classifies as labelled.
    fn correct(&self, py: Python<'_>, model: &PyModel) -> PyResult<usize> {
        let (shard, model) = (&self.shard, model.model());
        py.detach(|| shard.correct(model)).map_err(to_py_err)
    }

    /// Pickles as its rows (postcard), so that an engine can move it between workers; caches are rebuilt.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let bytes = postcard::to_allocvec(&slf.borrow().shard)
            .map_err(|e| PyValueError::new_err(format!("a shard that does not encode: {e}")))?;
        Ok((slf.get_type().getattr("from_bytes")?, (PyBytes::new(py, &bytes),)))
    }

    /// A shard from [`Self::__reduce__`]'s bytes.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<PyShard> {
        let shard =
            postcard::from_bytes(bytes).map_err(|e| PyValueError::new_err(format!("malformed shard bytes: {e}")))?;
        Ok(PyShard { shard })
    }

    /// The answer to an encoded question, encoded (the dual method's multipliers kept in the shard).
    fn answer<'py>(&mut self, py: Python<'py>, question: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let question = decode(question)?;
        let shard = &mut self.shard;
        let answer = py.detach(|| shard.answer(&question)).map_err(to_py_err)?;
        encode_answer(py, &answer)
    }

    /// The answer to an encoded question from the dual method's multipliers `state` (`None` before the
    /// first round), and the multipliers after it: `(state, answer)`, for an engine that passes the state
    /// along as a task result (see `question_keeps_state`).
    fn answer_with_state<'py>(
        &mut self,
        py: Python<'py>,
        state: Option<PyRef<'py, PyDualState>>,
        question: &[u8],
    ) -> PyResult<(Option<PyDualState>, Bound<'py, PyBytes>)> {
        let question = decode(question)?;
        let state = state.map(|s| s.state.clone());
        let shard = &mut self.shard;
        let (state, answer) = py.detach(|| shard.answer_with_state(state, &question)).map_err(to_py_err)?;
        let bytes = encode_answer(py, &answer)?;
        Ok((state.map(|state| PyDualState { state }), bytes))
    }
}

/// A shard's multipliers in the distributed dual method (`usvm::sharded::DualState`), passed from round
/// to round by an engine whose tasks keep no state; pickles as its numbers.
#[pyclass(name = "DualState", module = "usvm._usvm", frozen)]
pub struct PyDualState {
    state: DualState,
}

#[pymethods]
impl PyDualState {
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let bytes = postcard::to_allocvec(&slf.get().state).expect("a dual state encodes");
        Ok((slf.get_type().getattr("from_bytes")?, (PyBytes::new(slf.py(), &bytes),)))
    }

    /// A state from [`Self::__reduce__`]'s bytes.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<PyDualState> {
        let state = postcard::from_bytes(bytes)
            .map_err(|e| PyValueError::new_err(format!("malformed dual-state bytes: {e}")))?;
        Ok(PyDualState { state })
    }

    /// Rounds done.
    #[getter]
    fn rounds(&self) -> u64 {
        self.state.rounds
    }
}

/// `answer` encoded straight into a Python bytes object: a Margin answer's rows are megabytes, which an
/// intermediate buffer grown by doubling would copy and page in twice over.
fn encode_answer<'py>(py: Python<'py>, answer: &Answer) -> PyResult<Bound<'py, PyBytes>> {
    let len = postcard::experimental::serialized_size(answer).expect("an answer encodes");
    PyBytes::new_with(py, len, |buffer| {
        postcard::to_slice(answer, buffer).expect("the buffer has the answer's size");
        Ok(())
    })
}

fn decode(question: &[u8]) -> PyResult<Question> {
    postcard::from_bytes(question).map_err(|e| PyValueError::new_err(format!("a malformed sharded-fit question: {e}")))
}

/// Whether an encoded question is a round of the dual method, whose answer depends on (and updates) the
/// shard's multipliers: an engine without state in its tasks asks it with `Shard.answer_with_state`.
#[pyfunction]
fn question_keeps_state(question: &[u8]) -> PyResult<bool> {
    Ok(matches!(decode(question)?, Question::Dual(_)))
}

/// The shards behind a Python callable `ask(question: bytes) -> list[bytes]`.
struct Remote<'py> {
    ask: Bound<'py, PyAny>,
    /// The callable's exception, re-raised as is by `fit_sharded`.
    error: Option<PyErr>,
}

impl Shards for Remote<'_> {
    fn ask(&mut self, question: &Question) -> usvm::Result<Vec<Answer>> {
        let py = self.ask.py();
        let bytes = PyBytes::new(py, &postcard::to_allocvec(question).expect("a question encodes"));
        let answers: Vec<Vec<u8>> = match self.ask.call1((bytes,)).and_then(|a| a.extract()) {
            Ok(a) => a,
            Err(e) => {
                let detail = e.to_string();
                self.error = Some(e);
                return Err(usvm::Error::SolverFailure { solver: "sharded fit", detail });
            }
        };
        answers
            .iter()
            .enumerate()
            .map(|(index, a)| {
                postcard::from_bytes(a)
                    .map_err(|e| usvm::Error::Shard { index, detail: format!("a malformed answer: {e}") })
            })
            .collect()
    }
}

/// Fits `params_json` over the shards behind `ask` (see the module). Returns the `Model`, one report dict
/// per binary problem, and a dict of `n_shards`, `n_samples`, `rounds` (per binary problem),
/// `total_rounds`, `bytes_sent`, `bytes_received`.
#[pyfunction]
#[pyo3(signature = (params_json, ask, *, start=None))]
fn fit_sharded<'py>(
    py: Python<'py>,
    params_json: &str,
    ask: Bound<'py, PyAny>,
    start: Option<PyRef<'py, PyModel>>,
) -> PyResult<(PyModel, Vec<Bound<'py, PyDict>>, Bound<'py, PyDict>)> {
    let params = MethodParams::from_json(params_json).map_err(to_py_err)?;
    let options = FitOptions { start: start.as_ref().map(|m| m.model()), ..FitOptions::default() };
    let mut remote = Remote { ask, error: None };
    let fit = match sharded::fit_sharded(&params, &mut remote, &options) {
        Ok(fit) => fit,
        Err(e) => return Err(remote.error.take().unwrap_or_else(|| to_py_err(e))),
    };
    let reports = fit.fit.reports.iter().map(|r| report_dict(py, r)).collect::<PyResult<Vec<_>>>()?;
    let info = PyDict::new(py);
    info.set_item("n_shards", fit.n_shards)?;
    info.set_item("n_samples", fit.n_samples)?;
    info.set_item("rounds", fit.rounds.clone())?;
    info.set_item("total_rounds", fit.traffic.rounds)?;
    info.set_item("bytes_sent", fit.traffic.bytes_sent)?;
    info.set_item("bytes_received", fit.traffic.bytes_received)?;
    Ok((PyModel::fitted(fit.fit.model, &params, None), reports, info))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyShard>()?;
    m.add_class::<PyDualState>()?;
    m.add_function(wrap_pyfunction!(question_keeps_state, m)?)?;
    m.add_function(wrap_pyfunction!(fit_sharded, m)?)?;
    Ok(())
}
