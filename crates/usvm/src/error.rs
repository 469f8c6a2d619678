//! Typed errors. Every error carries the offending value so that the edges (CLI, Python) can say exactly
//! what was wrong without re-inspecting the data.

use thiserror::Error;

/// Everything that can be wrong with the data or the settings handed to the library.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// Nothing to learn from or score: no examples, no features, no privileged rows (which input).
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// Two inputs disagree on a size.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which input.
        what: &'static str,
        /// The size the other inputs imply.
        expected: usize,
        /// The size found.
        found: usize,
    },
    /// A NaN or infinite value.
    #[error("non-finite value {value} in {what} (example {index})")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// The example (row).
        index: usize,
        /// The value.
        value: f64,
    },
    /// A finite value too large in magnitude for the solvers: its square, or sums of a few such, overflow.
    #[error(
        "{what}: value {value:e} in example {index}, column {feature} (both counted from 0) is beyond ±{limit:e}, \
         where squares and sums overflow: rescale that column (e.g. standardise it, or change its units)"
    )]
    OutOfRange {
        /// Which input.
        what: &'static str,
        /// The example (row, from 0).
        index: usize,
        /// The feature (column, from 0).
        feature: usize,
        /// The value.
        value: f64,
        /// The largest magnitude accepted.
        limit: f64,
    },
    /// A negative variance.
    #[error("negative variance {value} in covariance of example {index}")]
    NegativeVariance {
        /// The example.
        index: usize,
        /// The variance.
        value: f64,
    },
    /// A covariance matrix that is not symmetric beyond round-off.
    #[error(
        "covariance of example {index} is not symmetric: entry ({row},{col}) differs from its transpose by {difference}"
    )]
    AsymmetricCovariance {
        /// The example.
        index: usize,
        /// The entry's row.
        row: usize,
        /// The entry's column.
        col: usize,
        /// `|Σ_rc - Σ_cr|`.
        difference: f64,
    },
    /// A covariance matrix with a negative eigenvalue beyond round-off.
    #[error("covariance of example {index} is not positive semi-definite: smallest eigenvalue {eigenvalue}")]
    NotPositiveSemidefinite {
        /// The example.
        index: usize,
        /// The smallest eigenvalue.
        eigenvalue: f64,
    },
    /// Training labels of one class only.
    #[error("a single class ({label}) in the training labels: at least two are needed")]
    SingleClass {
        /// The one class.
        label: i64,
    },
    /// A weight that is negative or not finite, or all weights zero.
    #[error("invalid weight {value} for example {index}: weights must be finite and non-negative, not all zero")]
    InvalidWeight {
        /// The example.
        index: usize,
        /// The weight.
        value: f64,
    },
    /// A parameter value out of its range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's field name.
        name: &'static str,
        /// The value, as text.
        value: String,
        /// What the value must be.
        reason: &'static str,
    },
    /// Method parameters that do not parse: an unknown method or field (named), or a value of the wrong type.
    #[error("invalid parameters: {0}")]
    Params(String),
    /// A malformed or unsupported model file.
    #[error("invalid model file: {0}")]
    Format(String),
    /// A dense array handed over in column-major (or strided) layout where row-major is required.
    #[error("{what} must be in row-major layout")]
    Layout {
        /// Which array.
        what: &'static str,
    },
    /// A sparse matrix whose structure (row pointers, column indices) is malformed.
    #[error("malformed sparse structure in {what}: {detail}")]
    MalformedSparse {
        /// Which matrix.
        what: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The data leave nothing to learn from: a constant map, a zero Gram matrix, a non-finite objective.
    #[error("degenerate {what}: {detail}")]
    Degenerate {
        /// What is degenerate.
        what: &'static str,
        /// How.
        detail: String,
    },
    /// An external solver or factorisation failed to start or finish.
    #[error("{solver} failed: {detail}")]
    SolverFailure {
        /// Which solver.
        solver: &'static str,
        /// Its message.
        detail: String,
    },
    /// A dense array larger than the memory available, refused before it is allocated
    /// ([`crate::memory::reserve`]).
    #[error(
        "{what} ({} floats) would take {} of memory but {} is available: {remedy}",
        shape_text(shape),
        Bytes(*bytes),
        Bytes(Some(*available))
    )]
    TooLarge {
        /// What would be allocated.
        what: &'static str,
        /// Its shape (several arrays: their count first).
        shape: Vec<usize>,
        /// Its size in bytes; `None` when that overflows 64 bits.
        bytes: Option<u64>,
        /// The memory available (`MemAvailable`; the address-space limit where that is unknown).
        available: u64,
        /// What to do instead.
        remedy: &'static str,
    },
    /// One shard of a fit over row shards (a partition of the rows) failed, or disagrees with the others.
    #[error("partition {index} of the rows: {detail}")]
    Shard {
        /// The shard's position (its partition's index).
        index: usize,
        /// What went wrong.
        detail: String,
    },
    /// The fit's observer asked it to stop ([`crate::progress::Observer::stop`]).
    #[error("the fit was interrupted by its observer")]
    Interrupted,
}

/// The result of every fallible core operation.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> Error {
    Error::InvalidParameter { name, value: value.to_string(), reason }
}

/// A byte count in binary units (`74.5 GiB`, three significant digits); `None` (beyond 64 bits) reads
/// `more than 16 EiB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub Option<u64>);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let Some(bytes) = self.0 else { return f.write_str("more than 16 EiB") };
        let power = ((64 - bytes.leading_zeros()).saturating_sub(1) / 10).min(6) as usize;
        if power == 0 {
            return write!(f, "{bytes} bytes");
        }
        let value = bytes as f64 / (1u64 << (10 * power)) as f64;
        let decimals = if value < 10.0 {
            2
        } else if value < 100.0 {
            1
        } else {
            0
        };
        write!(f, "{value:.decimals$} {}", UNITS[power])
    }
}

/// `a × b × c`.
pub(crate) fn shape_text(dims: &[usize]) -> String {
    dims.iter().map(usize::to_string).collect::<Vec<_>>().join(" × ")
}
