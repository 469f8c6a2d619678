//! Experiment protocols of DESIGN section 8, on data embedded in the library (nothing is read from disk).

pub mod lupi;
pub mod toy_sampling;
pub mod tsvc_synthetic;
pub mod wdbc;
