//! The core's progress events as calls of a Python callable. Fits run with the GIL released; each event
//! attaches to the interpreter (from whichever thread the solver runs on), calls the callable with a dict
//! and detaches again. The first exception the callable raises is kept, asks the core to stop the fit
//! (`Observer::stop`), and is what the fit raises.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use usvm::progress::{Iteration, Observer, Progress};

/// Calls `callback(record)` for every iteration event; keeps the first exception.
pub(crate) struct PyObserver {
    callback: Py<PyAny>,
    error: Mutex<Option<PyErr>>,
}

impl PyObserver {
    pub(crate) fn new(callback: Py<PyAny>) -> Self {
        PyObserver { callback, error: Mutex::new(None) }
    }

    /// The exception the callback raised, if any.
    pub(crate) fn into_error(self) -> Option<PyErr> {
        self.error.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn failed(&self) -> bool {
        self.error.lock().map_or(true, |e| e.is_some())
    }
}

/// `{"iteration", "objective", "residual", "quantity", "problem", "n_problems"}`.
fn record<'py>(py: Python<'py>, i: &Iteration) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("iteration", i.iteration)?;
    d.set_item("objective", i.objective)?;
    d.set_item("residual", i.residual)?;
    d.set_item("quantity", i.quantity.name())?;
    d.set_item("problem", i.problem.0)?;
    d.set_item("n_problems", i.problem.1)?;
    Ok(d)
}

impl Observer for PyObserver {
    fn observe(&self, event: Progress<'_>) {
        let Progress::Iteration(i) = event else { return };
        if self.failed() {
            return;
        }
        let outcome = Python::attach(|py| record(py, &i).and_then(|d| self.callback.call1(py, (d,)).map(|_| ())));
        if let Err(e) = outcome
            && let Ok(mut slot) = self.error.lock()
        {
            slot.get_or_insert(e);
        }
    }

    fn stop(&self) -> bool {
        self.failed()
    }
}
