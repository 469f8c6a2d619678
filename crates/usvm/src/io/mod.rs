//! Text formats (DESIGN 6): parsing and writing only. The caller opens the files and hands over a
//! [`BufRead`] plus a `source` name (usually the path) that every [`ParseError`] carries.
//!
//! | format | reader | features | covariances |
//! |---|---|---|---|
//! | svm-gsu: means `<id> j:v ...`, labels `<id> <label>`, covariances `<id> i,j:v ...` | [`read_svmgsu`] | dense or sparse by fill | none, diagonal (dense or sparse by fill), low-rank or full |
//! | LIBSVM/svmlight `label j:v ...` (+ variance file of the same layout) | [`read_libsvm`], [`read_libsvm_with_variances`] | dense or sparse by fill | none, diagonal (dense or sparse by fill) or low-rank |
//! | CSV with a header row (+ variance CSV) | [`read_csv`], [`read_csv_with_variances`] | dense | none or diagonal |
//! | repeated observations: CSV with a header row and a group column | [`read_repeated_csv`] | dense, grouped | (estimated by [`crate::gaussians`]) |
//! | LIBSVM precomputed kernel `label 0:s 1:K(x,x_1) ...` | [`read_libsvm_precomputed`] | dense, serial in column 0 | none |
//! | svm-gsu linear model file | [`read_svmgsu_model`] | | |
//! | Parquet table, columns by name (feature `parquet`) | `read_parquet` | dense | none or diagonal |
//!
//! Common rules: feature indices are 1-based; labels are integers (`+1`, `-1`, `2`, `1.0` are accepted,
//! `1.5` and `abc` are not); every number must be finite; variances must be non-negative; an input
//! without data lines is an error. Input is parsed line by line, never held whole; the LIBSVM and svm-gsu
//! readers parse blocks of lines in parallel chunks (about 4 MB of text held at once) and store what they
//! read dense when at least half of the `lines × features` values of the file are given ("by fill"),
//! else as CSR.
//!
//! ```
//! let text = "+1 1:0.5 3:2\n-1 2:1 # a comment\n";
//! let data = usvm::io::read_libsvm(text.as_bytes(), "train.txt", None).unwrap();
//! assert_eq!((data.n_samples(), data.n_features()), (2, 3));
//! let err = usvm::io::read_libsvm("1 1:nan\n".as_bytes(), "bad.txt", None).unwrap_err();
//! assert_eq!(err.to_string(), "bad.txt:1: field '1:nan': non-finite value");
//! ```

mod chunked;
mod csv;
#[cfg(feature = "internals")]
pub mod fuzz;
mod libsvm;
#[cfg(feature = "parquet")]
mod parquet;
mod precomputed;
mod repeated;
mod svmgsu;
mod writers;

pub use csv::{read_csv, read_csv_weighted, read_csv_with_variances};
pub use libsvm::{LibsvmData, read_libsvm, read_libsvm_with_variances, write_libsvm, write_libsvm_variances};
#[cfg(feature = "parquet")]
pub use parquet::{TableColumns, read_parquet};
pub use precomputed::read_libsvm_precomputed;
pub use repeated::{Observations, read_repeated_csv};
pub use svmgsu::{SvmGsuData, read_svmgsu, read_svmgsu_model};
pub use writers::{write_csv, write_csv_variances, write_svmgsu_covariances, write_svmgsu_labels, write_svmgsu_means};

use std::fmt;
use std::io::BufRead;

/// How a reader shapes what it reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Fixes the number of features (a larger index is an error); by default the largest index seen, at
    /// most [`MAX_INFERRED_FEATURES`].
    pub n_features: Option<usize>,
    /// Factor every dense covariance as it is read, into [`Covariances::LowRank`](crate::Covariances)
    /// (svm-gsu covariance files; see [`read_svmgsu`]).
    pub low_rank: bool,
}

/// A malformed input: file, 1-based line (0 when the file as a whole is at fault, e.g. empty input),
/// the offending token and what is wrong with it. Displays as `FILE:LINE: field 'TOKEN': MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file (or stream) name.
    pub source: String,
    /// 1-based line (0: the input as a whole).
    pub line: usize,
    /// The offending token.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

// Written by hand: `thiserror` would take a field named `source` for the underlying error.
impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: field '{}': {}", self.source, self.line, self.field, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A position in an input, for building errors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Loc<'a> {
    pub source: &'a str,
    pub line: usize,
}

impl Loc<'_> {
    pub fn err(self, field: &str, message: impl Into<String>) -> ParseError {
        ParseError {
            source: self.source.to_string(),
            line: self.line,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// The error for an input without data lines.
pub(crate) fn empty_input(source: &str) -> ParseError {
    Loc { source, line: 0 }.err("", "empty input: no data lines")
}

/// Reads one line at a time into a reused buffer (no copy of the whole text is ever held).
pub(crate) struct LineReader<R> {
    reader: R,
    buf: String,
    line: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R) -> Self {
        LineReader { reader, buf: String::new(), line: 0 }
    }

    /// The next line without its terminator (and without a leading byte-order mark on line 1), with
    /// its 1-based number; `None` at the end. Read failures (including invalid UTF-8) are errors.
    pub fn next_line(&mut self, source: &str) -> Result<Option<(usize, &str)>, ParseError> {
        self.buf.clear();
        match self.reader.read_line(&mut self.buf) {
            Ok(0) => Ok(None),
            Ok(_) => {
                self.line += 1;
                Ok(Some((self.line, self.text())))
            }
            Err(e) => Err(Loc { source, line: self.line + 1 }.err("", format!("cannot read: {e}"))),
        }
    }

    /// The next line that is not blank (whitespace only), as [`Self::next_line`].
    pub fn next_nonblank(&mut self, source: &str) -> Result<Option<(usize, &str)>, ParseError> {
        loop {
            match self.next_line(source)? {
                None => return Ok(None),
                Some((_, text)) if text.trim().is_empty() => {}
                Some(_) => break,
            }
        }
        Ok(Some((self.line, self.text())))
    }

    /// The current line without its terminator (and BOM).
    fn text(&self) -> &str {
        let text = self.buf.trim_end_matches(['\n', '\r']);
        if self.line == 1 { text.trim_start_matches('\u{feff}') } else { text }
    }
}

/// A finite `f64`.
pub(crate) fn parse_value(loc: Loc, field: &str, text: &str) -> Result<f64, ParseError> {
    let v: f64 = match short_decimal(text.as_bytes()) {
        Some(v) => v,
        None => text.parse().map_err(|_| loc.err(field, "not a number"))?,
    };
    if !v.is_finite() {
        return Err(loc.err(field, "non-finite value"));
    }
    Ok(v)
}

/// Powers of ten exactly representable as `f64`.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// `[+-]DIGITS[.DIGITS]` with a mantissa of at most 2^53 and at most 22 decimals, as `m / 10^k`: both
/// operands are exact and the division is correctly rounded, so this is the value `str::parse` gives
/// (Clinger's fast path). `None` for any other text (exponents, long mantissas, words), which the caller
/// hands to `str::parse`.
fn short_decimal(text: &[u8]) -> Option<f64> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mut mantissa, mut count, mut decimals, mut dot) = (0u64, 0usize, 0usize, false);
    for &b in digits {
        match b {
            b'0'..=b'9' if count < 18 => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                count += 1;
                decimals += usize::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if count == 0 || mantissa > 1 << 53 || decimals >= EXACT_POWERS_OF_TEN.len() {
        return None;
    }
    let v = mantissa as f64 / EXACT_POWERS_OF_TEN[decimals];
    Some(if negative { -v } else { v })
}

/// A plain run of at most 18 ASCII digits as an integer; `None` for anything else.
fn short_integer(text: &[u8]) -> Option<usize> {
    if text.is_empty() || text.len() > 18 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0, |n, &b| n * 10 + usize::from(b - b'0')))
}

/// A finite, non-negative `f64`.
pub(crate) fn parse_variance(loc: Loc, field: &str, text: &str) -> Result<f64, ParseError> {
    let v = parse_value(loc, field, text)?;
    if v < 0.0 {
        return Err(loc.err(field, "negative variance"));
    }
    Ok(v)
}

/// An integer class label: `+1`, `-1`, `3`, or an integral float such as `1.0`.
pub(crate) fn parse_label(loc: Loc, text: &str) -> Result<i64, ParseError> {
    if let Ok(v) = text.parse::<i64>() {
        return Ok(v);
    }
    let v = parse_value(loc, text, text).map_err(|e| match e.message.as_str() {
        "not a number" => loc.err(text, "label is not an integer"),
        _ => e,
    })?;
    // 2^63 is exactly representable; every integral f64 strictly inside ±2^63 fits an i64.
    if v.fract() != 0.0 || v.abs() >= 9_223_372_036_854_775_808.0 {
        return Err(loc.err(text, "label is not an integer"));
    }
    Ok(v as i64)
}

/// The largest dimension a reader infers from the indices it reads (2^26): one stray index such as
/// `1000000000000:1` must not make the fit allocate terabytes. A larger dimension is read when it is given
/// ([`ReadOptions::n_features`], the CLI's `--n-features`).
pub const MAX_INFERRED_FEATURES: usize = 1 << 26;

/// A 1-based feature index, returned 0-based; it must be `≤ n_features` when that is given, else
/// `≤` [`MAX_INFERRED_FEATURES`], and `≤ 2^32` in any case (sparse columns are stored as `u32`).
pub(crate) fn parse_index(loc: Loc, field: &str, text: &str, n_features: Option<usize>) -> Result<u32, ParseError> {
    let j: usize = match short_integer(text.as_bytes()) {
        Some(j) => j,
        None => text.parse().map_err(|_| loc.err(field, format!("index '{text}' is not a positive integer")))?,
    };
    if j == 0 {
        return Err(loc.err(field, "feature indices are 1-based: index 0 is invalid"));
    }
    match n_features {
        Some(n) if j > n => Err(loc.err(field, format!("index {j} exceeds the number of features ({n})"))),
        None if j > MAX_INFERRED_FEATURES => Err(loc.err(
            field,
            format!(
                "index {j} exceeds {MAX_INFERRED_FEATURES} features; give the dimension (--n-features) to read more"
            ),
        )),
        _ => u32::try_from(j - 1).map_err(|_| {
            loc.err(field, format!("index {j} exceeds the 32-bit column range (at most {} features)", 1u64 << 32))
        }),
    }
}

/// A sparse `j:v` token: 0-based index and finite value.
pub(crate) fn parse_pair(loc: Loc, token: &str, n_features: Option<usize>) -> Result<(u32, f64), ParseError> {
    let (j, v) = token.split_once(':').ok_or_else(|| loc.err(token, "expected INDEX:VALUE"))?;
    Ok((parse_index(loc, token, j, n_features)?, parse_value(loc, token, v)?))
}

/// Whether `token` is a factor entry `uK,J:V` (rather than `J:V` or `I,J:V`).
pub(crate) fn is_factor_token(token: &str) -> bool {
    token.starts_with('u')
}

/// A low-rank factor entry `uK,J:V` — `U[J, K] = V`, factor column `K` and feature `J`, both 1-based —
/// returned as 0-based `(k, j, v)`; `j < n_features` when that is given.
pub(crate) fn parse_factor_entry(
    loc: Loc,
    token: &str,
    n_features: Option<usize>,
) -> Result<(u32, u32, f64), ParseError> {
    let malformed = || loc.err(token, "expected uCOLUMN,FEATURE:VALUE (a low-rank factor entry)");
    let rest = token.strip_prefix('u').ok_or_else(malformed)?;
    let (kj, v) = rest.split_once(':').ok_or_else(malformed)?;
    let (k, j) = kj.split_once(',').ok_or_else(malformed)?;
    let k: usize = k.parse().map_err(|_| loc.err(token, format!("factor column '{k}' is not a positive integer")))?;
    if k == 0 {
        return Err(loc.err(token, "factor columns are 1-based: column 0 is invalid"));
    }
    let j = parse_index(loc, token, j, n_features)?;
    if let Some(n) = n_features
        && k > n
    {
        return Err(loc.err(token, format!("factor column {k} exceeds the number of features ({n}): rank ≤ n")));
    }
    let v = parse_value(loc, token, v)?;
    match u32::try_from(k - 1) {
        Ok(k) => Ok((k, j, v)),
        _ => Err(loc.err(token, "index too large")),
    }
}

/// The factor entries `(k, j, v)` of one example, checked for repeats: sorted by `(k, j)`.
/// `tokens[pos]` is the token of each entry, for the error.
pub(crate) fn check_factor_entries(
    loc: Loc,
    entries: &mut [(u32, u32, f64, usize)],
    tokens: &[&str],
) -> Result<(), ParseError> {
    entries.sort_by_key(|e| (e.0, e.1, e.3));
    if let Some(w) = entries.windows(2).find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1)) {
        return Err(loc.err(tokens[w[1].3], format!("factor entry u{},{} repeated", w[1].0 + 1, w[1].1 + 1)));
    }
    Ok(())
}

/// The zeros of a dense array of shape `dims` that a reader sizes from the indices it read, or an error at
/// `loc` naming `field` when its size overflows or the memory cannot be had: a short input stating a large
/// index (e.g. a low-rank factor of 2^26 rows) must be a parse error, not an aborted process.
pub(crate) fn try_zeros(loc: Loc, field: &str, what: &str, dims: &[usize]) -> Result<Vec<f64>, ParseError> {
    let mut v = Vec::new();
    match dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) {
        Some(len) if crate::memory::fits(dims) && v.try_reserve_exact(len).is_ok() => {
            v.resize(len, 0.0);
            Ok(v)
        }
        _ => Err(loc.err(field, alloc_message(what, dims))),
    }
}

/// What a reader says when `what`, an `f64` array of shape `dims`, cannot be allocated.
pub(crate) fn alloc_message(what: &str, dims: &[usize]) -> String {
    let shape: Vec<String> = dims.iter().map(ToString::to_string).collect();
    let (bytes, available) = (crate::memory::Bytes(crate::memory::f64_bytes(dims)), crate::memory::limit());
    format!(
        "{what} ({} values, {bytes}) cannot be allocated: {} available",
        shape.join(" × "),
        crate::memory::Bytes(Some(available))
    )
}

/// [`CsrMatrix::to_dense`](crate::data::CsrMatrix::to_dense) through [`try_zeros`].
pub(crate) fn try_dense(loc: Loc, what: &str, m: &crate::data::CsrMatrix) -> Result<ndarray::Array2<f64>, ParseError> {
    let shape = (m.n_rows(), m.n_cols);
    let mut a = ndarray::Array2::from_shape_vec(shape, try_zeros(loc, "", what, &[shape.0, shape.1])?)
        .expect("rows·cols zeros");
    for i in 0..shape.0 {
        let (idx, val) = m.row(i);
        for (&j, &v) in idx.iter().zip(val) {
            a[[i, j as usize]] += v;
        }
    }
    Ok(a)
}

/// The `n × r` factor (column-major) from its `(k, j, v)` entries, `r` one past the largest `k`. Errors
/// when `r > n` (the rank of an `n × n` covariance is at most `n`) or when it cannot be allocated.
pub(crate) fn factor_matrix(
    loc: Loc,
    entries: &[(u32, u32, f64)],
    n: usize,
) -> Result<ndarray::Array2<f64>, ParseError> {
    use ndarray::ShapeBuilder;
    let r = entries.iter().map(|e| e.0 as usize + 1).max().unwrap_or(0);
    if r > n {
        return Err(
            loc.err(&format!("u{r}"), format!("factor column {r} exceeds the number of features ({n}): rank ≤ n"))
        );
    }
    let zeros = try_zeros(loc, &format!("u{r}"), "a covariance factor", &[n, r])?;
    let mut u = ndarray::Array2::from_shape_vec((n, r).f(), zeros).expect("n·r zeros");
    for &(k, j, v) in entries {
        u[[j as usize, k as usize]] = v;
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Loc = Loc { source: "f.txt", line: 7 };

    #[test]
    fn display_names_file_line_and_token() {
        let e = L.err("3:x", "not a number");
        assert_eq!(e.to_string(), "f.txt:7: field '3:x': not a number");
    }

    #[test]
    fn labels() {
        for (t, v) in [("+1", 1), ("-1", -1), ("1.0", 1), ("-2.0", -2), ("7", 7), ("1e0", 1)] {
            assert_eq!(parse_label(L, t).unwrap(), v, "{t}");
        }
        for t in ["abc", "1.5", "nan", "inf", "1e300", ""] {
            let e = parse_label(L, t).unwrap_err();
            assert_eq!(e.field, t);
            assert!(e.message == "label is not an integer" || e.message == "non-finite value", "{t}: {}", e.message);
        }
        assert_eq!(parse_label(L, "NaN").unwrap_err().message, "non-finite value");
    }

    #[test]
    fn values_and_pairs() {
        assert_eq!(parse_pair(L, "3:-0.5", None).unwrap(), (2, -0.5));
        assert_eq!(parse_pair(L, "3:inf", None).unwrap_err().message, "non-finite value");
        assert_eq!(parse_pair(L, "3:NaN", None).unwrap_err().message, "non-finite value");
        assert_eq!(parse_pair(L, "3:1e999", None).unwrap_err().message, "non-finite value");
        assert_eq!(parse_pair(L, "3", None).unwrap_err().message, "expected INDEX:VALUE");
        assert_eq!(parse_pair(L, "3:", None).unwrap_err().message, "not a number");
        assert!(parse_pair(L, "0:1", None).unwrap_err().message.contains("1-based"));
        assert!(parse_pair(L, "-1:1", None).unwrap_err().message.contains("positive integer"));
        assert!(parse_pair(L, "a:1", None).unwrap_err().message.contains("positive integer"));
        assert!(parse_pair(L, "5:1", Some(4)).unwrap_err().message.contains("exceeds"));
        assert_eq!(parse_pair(L, "4:1", Some(4)).unwrap(), (3, 1.0));
        assert_eq!(parse_variance(L, "v", "-0.1").unwrap_err().message, "negative variance");
        assert_eq!(parse_variance(L, "v", "0").unwrap(), 0.0);
    }

    #[test]
    fn short_decimals_parse_as_str_parse_does() {
        let cases = [
            "0",
            "-0",
            "+1",
            "3.141592",
            "-9.999999",
            "0.000001",
            "5.",
            ".5",
            "123456789012345678",
            "9007199254740993",
            "0.1",
            "0.30000000000000004",
            "1.0000000000000002",
            "-1234.5678e0",
            "1e22",
            ".",
            "-",
            "+",
            "",
            "1.2.3",
            "--1",
            "1-",
            "nan",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
        ];
        for text in cases {
            let want = text.parse::<f64>().ok();
            let got = short_decimal(text.as_bytes()).or_else(|| text.parse().ok());
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{text}");
        }
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let text = format!("{}.{:0w$}", rng % 100_000, (rng >> 20) % 10u64.pow(9), w = (rng % 10) as usize);
            let want: f64 = text.parse().unwrap();
            assert_eq!(short_decimal(text.as_bytes()).map(f64::to_bits), Some(want.to_bits()), "{text}");
        }
        for (text, want) in [("12", Some(12)), ("+12", None), ("", None), ("1a", None), ("0123", Some(123))] {
            assert_eq!(short_integer(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn dense_arrays_too_large_to_allocate_are_errors() {
        assert_eq!(try_zeros(L, "t", "x", &[2, 3]).unwrap(), vec![0.0; 6]);
        for dims in [[1 << 26, 1 << 26], [usize::MAX, 2]] {
            let e = try_zeros(L, "t", "a covariance factor", &dims).unwrap_err();
            assert_eq!((e.line, e.field.as_str()), (7, "t"));
            assert!(
                e.message.starts_with("a covariance factor (") && e.message.contains(") cannot be allocated: "),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn line_reader_strips_terminators_and_bom() {
        let mut r = LineReader::new("\u{feff}a\r\nb\n\nc".as_bytes());
        let mut got = Vec::new();
        while let Some((n, t)) = r.next_line("x").unwrap() {
            got.push((n, t.to_string()));
        }
        let want = [(1, "a"), (2, "b"), (3, ""), (4, "c")];
        assert_eq!(got, want.map(|(n, t)| (n, t.to_string())));
    }

    #[test]
    fn line_reader_reports_invalid_utf8() {
        let bytes: &[u8] = b"ok\n\xff\xfe\n";
        let mut r = LineReader::new(bytes);
        assert!(r.next_line("bin.dat").unwrap().is_some());
        let e = r.next_line("bin.dat").unwrap_err();
        assert_eq!((e.source.as_str(), e.line), ("bin.dat", 2));
        assert!(e.message.starts_with("cannot read"));
    }
}
