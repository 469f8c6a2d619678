//! The structure-aware `fit` target: a small dataset and a registry method decoded from the bytes, fitted
//! with small iteration limits. The property: [`crate::fit`] returns an error or a model whose coefficients
//! are finite and which scores its training rows; it never panics.
//!
//! The bytes, in order (past the end every byte reads as 0, so that every input decodes):
//!
//! | bytes | meaning |
//! |---|---|
//! | 1 | method: index into [`METHODS`] |
//! | 1 each | `ℓ` (1..=40), `n` (1..=6), classes (1..=4, labels from `[-1, 1, 2, 0]`) |
//! | 1 | flags: bits 0-2 covariance form (none, isotropic, diagonal, low-rank, full as given, full `G Gᵀ`, sparse diagonal), 3 weights, 4 sparse features, 5 privileged features, 6 a diagonal with the low-rank factors |
//! | 2 | two variants ([`VARIANTS`], e.g. the SGD solver or a polynomial kernel; past the list: none) |
//! | 1 | iteration limit `k` (1..=16): every `max_iter`, `iterations`, `max_rounds`; `samples`, `components` small |
//! | 1 | regularisation: the default, `λ` (or `C`, flag bit 7) of 1e-6 or 1e6, or a value that follows |
//! | rest | `ℓ × n` feature values, `ℓ` label bytes, then as the flags say `ℓ` weights, the covariance values (low-rank: a rank byte first), a width byte and the privileged values; last TSVC's `|δ|` |
//!
//! A value is one byte `b`: `b < 200` is `(b - 100) / 8`, `b < 248` one of [`SPECIAL`] (NaN, ±∞, 1e300,
//! the largest and smallest doubles, ...), else the `f64` of the next 8 bytes.

use ndarray::{Array2, Array3};
use serde_json::{Value, json};

use crate::covariance::Covariances;
use crate::data::{CsrMatrix, Dataset, Features};
use crate::methods::FitOptions;
use crate::params::{METHODS, MethodParams};

/// Values that break arithmetic.
const SPECIAL: [f64; 12] = [
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e300,
    -1e300,
    1e-300,
    f64::MAX,
    f64::MIN_POSITIVE,
    5e-324,
    1e8,
];

/// Field variants a method may take (set by [`MethodParams::set`]; those a method lacks are skipped).
const VARIANTS: [(&str, &str); 17] = [
    ("solver", "sgd"),
    ("solver", "newton"),
    ("kernel", "linear"),
    ("kernel", "polynomial"),
    ("kernel", "precomputed"),
    ("form", "socp"),
    ("approximation", "nystroem"),
    ("approximation", "fourier"),
    ("loss", "thesis"),
    ("basis_selection", "kmedoids"),
    ("basis_selection", "index"),
    ("basis_selection", "nystroem"),
    ("similarity", "linear"),
    ("basis_size", "0.5"),
    ("fit_intercept", "false"),
    ("shrinking", "false"),
    ("precision", "double"),
];

/// Labels of up to four classes.
const CLASSES: [i64; 4] = [-1, 1, 2, 0];

/// A cursor over the input.
struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// `lo..=hi` from one byte.
    fn within(&mut self, lo: usize, hi: usize) -> usize {
        lo + usize::from(self.byte()) % (hi - lo + 1)
    }

    fn value(&mut self) -> f64 {
        match self.byte() {
            b @ 0..200 => (f64::from(b) - 100.0) / 8.0,
            b @ 200..248 => SPECIAL[usize::from(b - 200) % SPECIAL.len()],
            _ => f64::from_le_bytes(std::array::from_fn(|_| self.byte())),
        }
    }

    fn values(&mut self, count: usize) -> Vec<f64> {
        (0..count).map(|_| self.value()).collect()
    }
}

/// Decodes a method and a dataset from `bytes` and fits it.
pub(super) fn run(bytes: &[u8]) {
    let mut b = Bytes { data: bytes, pos: 0 };
    let method = METHODS[b.within(0, METHODS.len() - 1)].0;
    let (l, n, k) = (b.within(1, 40), b.within(1, 6), b.within(1, 4));
    let flags = b.byte();
    let variants = [b.byte(), b.byte()];
    let limit = b.within(1, 16);
    let regularization = b.byte();

    let mut params = MethodParams::default_for(method).expect("a registry name");
    for v in variants {
        if let Some(&(field, value)) = VARIANTS.get(usize::from(v)) {
            let value = match value {
                "false" => json!(false),
                "linear" if field == "similarity" => json!(["linear"]),
                _ => json!(value),
            };
            drop(params.set(field, &value));
        }
    }
    for (field, value) in [
        ("max_iter", limit),
        ("iterations", limit),
        ("max_rounds", limit),
        ("samples", 1 + limit % 3),
        ("components", 1 + limit % 5),
    ] {
        drop(params.set(field, &json!(value)));
    }
    let strength = match regularization % 8 {
        5 => Some(1e-6),
        6 => Some(1e6),
        7 => Some(b.value()),
        _ => None,
    };
    if let Some(v) = strength {
        let name = if flags & 0x80 != 0 { "C" } else { "lambda" };
        drop(params.set(name, &Value::from(v)));
    }

    let data = dataset(&mut b, l, n, k, flags);
    if method == "tsvc" {
        // Mostly valid bounds (NaN and ∞ stay invalid).
        drop(params.set("delta", &Value::from(b.value().abs())));
    }
    // The global pool (`RAYON_NUM_THREADS=1` for one core): a pool per fit would cost half the run.
    let options = FitOptions { threads: None, seed: 7, ..FitOptions::default() };
    if let Ok(fit) = crate::fit(&params, &data, &options) {
        assert!(fit.model.is_finite(), "{method}: a fitted model with non-finite coefficients: {params:?}");
        drop(fit.model.decision_function(&data.features));
    }
}

/// `ℓ` rows of `n` features, their labels, and what `flags` asks for.
fn dataset(b: &mut Bytes, l: usize, n: usize, k: usize, flags: u8) -> Dataset<'static> {
    let x = Array2::from_shape_vec((l, n), b.values(l * n)).expect("ℓ·n values");
    let labels: Vec<i64> = (0..l).map(|_| CLASSES[b.within(0, k - 1)]).collect();
    let mut data = Dataset::dense(x.clone(), labels);
    if flags & 0x10 != 0 {
        let rows: Vec<Vec<(usize, f64)>> =
            x.rows().into_iter().map(|r| r.iter().copied().enumerate().filter(|&(_, v)| v != 0.0).collect()).collect();
        data.features = Features::Sparse(CsrMatrix::from_rows(n, &rows).expect("columns below n"));
    }
    if flags & 0x08 != 0 {
        data.weights = Some(b.values(l));
    }
    data.covariances = match flags & 0x07 {
        1 => Covariances::isotropic(b.values(l)),
        2 => Covariances::diagonal(Array2::from_shape_vec((l, n), b.values(l * n)).expect("ℓ·n values")),
        3 => {
            let r = b.within(1, 3);
            let factors =
                (0..l).map(|_| Array2::from_shape_vec((n, r), b.values(n * r)).expect("n·r values")).collect();
            let diagonal =
                (flags & 0x40 != 0).then(|| Array2::from_shape_vec((l, n), b.values(l * n)).expect("ℓ·n values"));
            Covariances::low_rank(factors, diagonal)
        }
        4 | 5 => {
            let mut m = Array3::zeros((l, n, n));
            for i in 0..l {
                let g = Array2::from_shape_vec((n, n), b.values(n * n)).expect("n² values");
                // As given (symmetrised from the upper triangle), or G Gᵀ (positive semi-definite).
                let s = if flags & 0x07 == 4 {
                    Array2::from_shape_fn((n, n), |(p, q)| g[[p.min(q), p.max(q)]])
                } else {
                    g.dot(&g.t())
                };
                m.index_axis_mut(ndarray::Axis(0), i).assign(&s);
            }
            Covariances::full(m)
        }
        6 => {
            let rows: Vec<Vec<(usize, f64)>> = (0..l).map(|_| (0..n).map(|j| (j, b.value())).collect()).collect();
            Covariances::sparse_diagonal(CsrMatrix::from_rows(n, &rows).expect("columns below n"))
        }
        _ => Covariances::None,
    };
    if flags & 0x20 != 0 {
        let m = b.within(1, 3);
        data.privileged = Some(Features::dense(Array2::from_shape_vec((l, m), b.values(l * m)).expect("ℓ·m values")));
    }
    data
}
