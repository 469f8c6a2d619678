//! Typed errors. Every error carries the offending value so that the edges (CLI, Python) can say exactly
//! what was wrong without re-inspecting the data.

use thiserror::Error;

/// Everything that can be wrong with the data or the settings handed to the library.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    #[error("empty input: {0}")]
    Empty(&'static str),
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch { what: &'static str, expected: usize, found: usize },
    #[error("non-finite value {value} in {what} (example {index})")]
    NonFinite { what: &'static str, index: usize, value: f64 },
    #[error("negative variance {value} in covariance of example {index}")]
    NegativeVariance { index: usize, value: f64 },
    #[error(
        "covariance of example {index} is not symmetric: entry ({row},{col}) differs from its transpose by {difference}"
    )]
    AsymmetricCovariance { index: usize, row: usize, col: usize, difference: f64 },
    #[error("covariance of example {index} is not positive semi-definite: smallest eigenvalue {eigenvalue}")]
    NotPositiveSemidefinite { index: usize, eigenvalue: f64 },
    #[error("a single class ({label}) in the training labels: at least two are needed")]
    SingleClass { label: i64 },
    #[error("invalid weight {value} for example {index}: weights must be finite and non-negative, not all zero")]
    InvalidWeight { index: usize, value: f64 },
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter { name: &'static str, value: String, reason: &'static str },
    /// Method parameters that do not parse: an unknown method or field (named), or a value of the wrong type.
    #[error("invalid parameters: {0}")]
    Params(String),
    #[error("invalid model file: {0}")]
    Format(String),
    /// A dense array handed over in column-major (or strided) layout where row-major is required.
    #[error("{what} must be in row-major layout")]
    Layout { what: &'static str },
    /// A sparse matrix whose structure (row pointers, column indices) is malformed.
    #[error("malformed sparse structure in {what}: {detail}")]
    MalformedSparse { what: &'static str, detail: String },
    /// The data leave nothing to learn from: a constant map, a zero Gram matrix, a non-finite objective.
    #[error("degenerate {what}: {detail}")]
    Degenerate { what: &'static str, detail: String },
    /// An external solver or factorisation failed to start or finish.
    #[error("{solver} failed: {detail}")]
    SolverFailure { solver: &'static str, detail: String },
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> Error {
    Error::InvalidParameter { name, value: value.to_string(), reason }
}
