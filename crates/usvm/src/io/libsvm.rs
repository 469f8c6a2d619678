//! LIBSVM / svmlight: one example per line, `label j:v j:v ... [# comment]` with 1-based, strictly
//! ascending indices (absent features are zero). Blank and comment-only lines are skipped; ranking
//! `qid:` tokens are rejected.
//!
//! Variance file: the same layout, data line for data line, with per-feature variances `j:s²` (absent
//! variances are zero). Its label column is required and must equal the data file's label on the
//! matching line, a cheap guard against misaligned files. A line may add low-rank factor entries
//! `uK,J:V` (`U[J,K] = V`, both 1-based, any order), making that example's covariance
//! `U Uᵀ + diag(s²)`; with any factor entry in the file the covariances are [`Covariances::LowRank`].

use std::io::{BufRead, Write};

use ndarray::Array2;

use super::chunked::{self, LineParser, Parsed, Rows, Store, Table};
use super::{
    Loc, ParseError, check_factor_entries, empty_input, factor_matrix, is_factor_token, parse_factor_entry,
    parse_label, parse_pair, try_dense,
};
use crate::covariance::Covariances;
use crate::data::{Dataset, Features};

/// Reads a LIBSVM/svmlight file into a dataset without covariances: dense features when at least half of
/// the `examples × features` values are given, else sparse (CSR). `n_features` fixes the dimension
/// (larger indices are errors); by default it is the largest index.
pub fn read_libsvm(
    data: impl BufRead,
    source: &str,
    n_features: Option<usize>,
) -> Result<Dataset<'static>, ParseError> {
    read(data, source, None::<(&[u8], &str)>, n_features).map(|d| d.dataset)
}

/// A dataset read from a LIBSVM file and its variance file, with the reader's notes: what it decided that
/// the user may not expect (the variances widening the data).
#[derive(Debug)]
pub struct LibsvmData {
    /// The dataset.
    pub dataset: Dataset<'static>,
    /// One sentence each, naming the file.
    pub notes: Vec<String>,
}

/// Reads a LIBSVM/svmlight file and its variance file (same layout, same labels, line for line) into
/// a dataset with diagonal covariances, dense or sparse by the variance file's fill.
pub fn read_libsvm_with_variances(
    data: impl BufRead,
    source: &str,
    variances: impl BufRead,
    variances_source: &str,
    n_features: Option<usize>,
) -> Result<LibsvmData, ParseError> {
    read(data, source, Some((variances, variances_source)), n_features)
}

/// The factor entries `(k, j, v)` of a variance line.
type Factor = Vec<(u32, u32, f64)>;

fn read<R: BufRead, V: BufRead>(
    data: R,
    source: &str,
    variances: Option<(V, &str)>,
    n_features: Option<usize>,
) -> Result<LibsvmData, ParseError> {
    let mut x = Store::new(n_features, "the features");
    let parsed = chunked::parse(data, source, &DataLine { n_features }, &mut x);
    let Some((reader, var_source)) = variances else {
        if let Some(failure) = parsed.failure {
            return Err(failure.error);
        }
        if parsed.meta.is_empty() {
            return Err(empty_input(source));
        }
        let n = n_features.unwrap_or(x.width());
        let dataset = dataset(features(x, n, source)?, parsed.meta, Covariances::None);
        return Ok(LibsvmData { dataset, notes: Vec::new() });
    };
    let mut v = Store::new(n_features, "the variances");
    let var = chunked::parse(reader, var_source, &VarLine { n_features }, &mut v);
    check_pairing(&parsed, source, &var, var_source)?;
    let width = v.width().max(var.meta.iter().flat_map(|(_, f)| f.iter().map(|e| e.1 as usize + 1)).max().unwrap_or(0));
    let mut notes = Vec::new();
    if n_features.is_none() && width > x.width() {
        notes.push(format!(
            "{var_source}: variance entries reach feature {width}, beyond the largest index of {source} ({}): \
             the data have {width} features, the means zero beyond {} (give the number of features to fix the \
             dimension)",
            x.width(),
            x.width()
        ));
    }
    let n = n_features.unwrap_or(width.max(x.width()));
    let loc = Loc { source: var_source, line: 0 };
    let covariances = if var.meta.iter().all(|(_, f)| f.is_empty()) {
        match v.finish(n, None, loc)? {
            Table::Dense(a) => Covariances::diagonal(a),
            Table::Sparse(m) => Covariances::sparse_diagonal(m),
        }
    } else {
        let factors = var
            .meta
            .iter()
            .zip(&var.lines)
            .map(|((_, f), line)| factor_matrix(Loc { source: var_source, line: *line }, f, n))
            .collect::<Result<Vec<Array2<f64>>, _>>()?;
        let diagonal = match v.is_empty() {
            true => None,
            false => Some(match v.finish(n, None, loc)? {
                Table::Dense(a) => a,
                Table::Sparse(m) => try_dense(loc, "the variances", &m)?,
            }),
        };
        Covariances::low_rank(factors, diagonal)
    };
    Ok(LibsvmData { dataset: dataset(features(x, n, source)?, parsed.meta, covariances), notes })
}

/// The features of `x` as `n` columns, dense or sparse by their fill.
fn features(x: Store, n: usize, source: &str) -> Result<Features<'static>, ParseError> {
    Ok(match x.finish(n, None, Loc { source, line: 0 })? {
        Table::Dense(a) => Features::dense(a),
        Table::Sparse(m) => Features::Sparse(m),
    })
}

fn dataset(features: Features<'static>, labels: Vec<i64>, covariances: Covariances) -> Dataset<'static> {
    Dataset::new(features, labels).with_covariances(covariances)
}

/// The error a line-by-line reader of both files in step reports first: a failure of either file, a
/// variance label that differs from its data label, an input without data lines, or a variance file with
/// fewer or more data lines.
fn check_pairing(
    data: &Parsed<i64>,
    source: &str,
    var: &Parsed<(i64, Factor)>,
    var_source: &str,
) -> Result<(), ParseError> {
    let var_failure = || var.failure.as_ref().map(|f| f.error.clone());
    let whole = Loc { source: var_source, line: 0 };
    for (k, (&label, &line)) in data.meta.iter().zip(&data.lines).enumerate() {
        match var.meta.get(k) {
            Some(&(var_label, _)) if var_label != label => {
                return Err(Loc { line: var.lines[k], ..whole }
                    .err(&var_label.to_string(), format!("label differs from label {label} on {source} line {line}")));
            }
            Some(_) => {}
            None => {
                return Err(var_failure().unwrap_or_else(|| {
                    whole.err("", format!("fewer data lines than {source} (which has a data line {line})"))
                }));
            }
        }
    }
    if let Some(failure) = &data.failure {
        return Err(failure.error.clone());
    }
    if data.meta.is_empty() {
        return Err(empty_input(source));
    }
    match var.lines.get(data.meta.len()) {
        Some(&line) => {
            Err(Loc { line, ..whole }.err("", format!("more data lines than {source} ({} examples)", data.meta.len())))
        }
        None => var_failure().map_or(Ok(()), Err),
    }
}

/// A data line: its label.
struct DataLine {
    n_features: Option<usize>,
}

impl LineParser for DataLine {
    type Meta = i64;

    fn parse<'t>(
        &self,
        loc: Loc,
        text: &'t str,
        tokens: &mut Vec<&'t str>,
        out: &mut Rows<i64>,
    ) -> Result<(), ParseError> {
        if let Some(label) = record(loc, text, tokens, self.n_features, None, out)? {
            out.end(loc.line, label);
        }
        Ok(())
    }
}

/// A variance line: its label and factor entries.
struct VarLine {
    n_features: Option<usize>,
}

impl LineParser for VarLine {
    type Meta = (i64, Factor);

    fn parse<'t>(
        &self,
        loc: Loc,
        text: &'t str,
        tokens: &mut Vec<&'t str>,
        out: &mut Rows<(i64, Factor)>,
    ) -> Result<(), ParseError> {
        let mut factor = Vec::new();
        if let Some(label) = record(loc, text, tokens, self.n_features, Some(&mut factor), out)? {
            out.end(loc.line, (label, factor));
        }
        Ok(())
    }
}

/// Parses a line's entries into `out` and returns its label (`None`: no data on the line). `factor`:
/// this is a variance line, whose values must be non-negative and whose factor entries `uK,J:V` go there.
fn record<'t, M>(
    loc: Loc,
    text: &'t str,
    tokens: &mut Vec<&'t str>,
    n_features: Option<usize>,
    factor: Option<&mut Factor>,
    out: &mut Rows<M>,
) -> Result<Option<i64>, ParseError> {
    let data = text.split('#').next().unwrap_or_default();
    tokens.clear();
    tokens.extend(data.split_ascii_whitespace());
    let Some((label, tokens)) = tokens.split_first() else {
        return Ok(None);
    };
    let label = parse_label(loc, label)?;
    let variances = factor.is_some();
    let mut previous: Option<usize> = None;
    let mut entries = Vec::new();
    for (k, &token) in tokens.iter().enumerate() {
        if token.starts_with("qid:") {
            return Err(loc.err(token, "qid (ranking query id) tokens are not supported"));
        }
        if variances && is_factor_token(token) {
            let (c, j, v) = parse_factor_entry(loc, token, n_features)?;
            entries.push((c, j, v, k));
            continue;
        }
        let (j, v) = parse_pair(loc, token, n_features)?;
        let (j, v) = (j as usize, v);
        if variances && v < 0.0 {
            return Err(loc.err(token, "negative variance"));
        }
        if let Some(p) = previous
            && j <= p
        {
            return Err(loc.err(token, format!("indices must be strictly ascending (previous index {})", p + 1)));
        }
        previous = Some(j);
        out.push(j as u32, v);
    }
    if let Some(factor) = factor {
        check_factor_entries(loc, &mut entries, tokens)?;
        factor.extend(entries.into_iter().map(|(c, j, v, _)| (c, j, v)));
    }
    Ok(Some(label))
}

/// Writes the dataset's labels and means as LIBSVM lines (zeros omitted, floats in round-trip form).
pub fn write_libsvm(data: &Dataset, out: &mut impl Write) -> std::io::Result<()> {
    for (i, &label) in data.labels.iter().enumerate() {
        match &data.features {
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                write_row(out, label, idx.iter().map(|&j| j as usize).zip(val.iter().copied()))?;
            }
            Features::Dense(a) => write_row(out, label, a.row(i).iter().copied().enumerate())?,
        }
    }
    Ok(())
}

/// Writes the dataset's per-feature variances in the layout [`read_libsvm_with_variances`] reads; a
/// low-rank covariance adds its factor entries `uK,J:V` (non-zero ones) after the diagonal. Full
/// covariances cannot be written (an `InvalidInput` error).
pub fn write_libsvm_variances(data: &Dataset, out: &mut impl Write) -> std::io::Result<()> {
    let n = data.n_features();
    for (i, &label) in data.labels.iter().enumerate() {
        match &data.covariances {
            Covariances::None => write_row(out, label, std::iter::empty())?,
            Covariances::Isotropic(c) => write_row(out, label, (0..n).map(|j| (j, c.variances[i])))?,
            Covariances::Diagonal(c) => write_row(out, label, c.variances.row(i).iter().copied().enumerate())?,
            Covariances::SparseDiagonal(c) => {
                let (idx, val) = c.variances.row(i);
                write_row(out, label, idx.iter().map(|&j| j as usize).zip(val.iter().copied()))?;
            }
            Covariances::LowRank(c) => {
                let diagonal = c.diagonal_row(i).unwrap_or_default();
                write!(out, "{label}")?;
                for (j, v) in diagonal.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                    write!(out, " {}:{}", j + 1, format_f64(*v))?;
                }
                write_factor(out, &c.factors[i])?;
                writeln!(out)?;
            }
            Covariances::Full(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "full covariances cannot be written as a LIBSVM variance file (use the svm-gsu format, or a low-rank form)",
                ));
            }
        }
    }
    Ok(())
}

/// The non-zero entries of a factor as ` uK,J:V` tokens, column by column.
pub(crate) fn write_factor(out: &mut impl Write, u: &Array2<f64>) -> std::io::Result<()> {
    for (k, column) in u.columns().into_iter().enumerate() {
        for (j, v) in column.iter().enumerate().filter(|(_, v)| **v != 0.0) {
            write!(out, " u{},{}:{}", k + 1, j + 1, format_f64(*v))?;
        }
    }
    Ok(())
}

fn write_row(out: &mut impl Write, label: i64, entries: impl Iterator<Item = (usize, f64)>) -> std::io::Result<()> {
    write!(out, "{label}")?;
    for (j, v) in entries.filter(|&(_, v)| v != 0.0) {
        write!(out, " {}:{}", j + 1, format_f64(v))?;
    }
    writeln!(out)
}

/// Shortest round-trip form: integers without a fraction, others in Rust's `Debug` form (which uses an
/// exponent for very large or small magnitudes).
pub(crate) fn format_f64(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v}") } else { format!("{v:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Dataset<'static>, ParseError> {
        read_libsvm(text.as_bytes(), "d.svm", None)
    }

    fn read_var(text: &str, var: &str) -> Result<Dataset<'static>, ParseError> {
        read_libsvm_with_variances(text.as_bytes(), "d.svm", var.as_bytes(), "v.svm", None).map(|d| d.dataset)
    }

    fn assert_err(r: Result<Dataset, ParseError>, source: &str, line: usize, field: &str, msg: &str) {
        let e = r.unwrap_err();
        assert_eq!((e.source.as_str(), e.line, e.field.as_str()), (source, line, field), "{e}");
        assert!(e.message.contains(msg), "{e}");
    }

    #[test]
    fn factor_too_large_to_allocate_is_an_error() {
        let r = read_var("1 1:1\n", "1 1:1 u67108864,67108864:1\n");
        assert_err(
            r,
            "v.svm",
            1,
            "u67108864",
            "a covariance factor (67108864 × 67108864 values, 32.0 PiB) cannot be allocated",
        );
    }

    #[test]
    fn reads_sparse_with_comments_and_blank_lines() {
        let d = read_str("# header\n+1 1:0.5 4:-2 # trailing\n\n-1\n1.0 2:3e-1\n").unwrap();
        assert_eq!(d.labels, vec![1, -1, 1]);
        let Features::Sparse(m) = &d.features else { panic!("LIBSVM input must stay sparse") };
        assert_eq!(m.n_cols, 4);
        assert_eq!(m.indptr, vec![0, 2, 2, 3]);
        assert_eq!(m.indices, vec![0, 3, 1]);
        assert_eq!(m.values, vec![0.5, -2.0, 0.3]);
        assert_eq!(d.covariances, Covariances::None);
    }

    #[test]
    fn a_column_beyond_32_bits_is_an_error_naming_its_line() {
        // Columns are stored as u32: 1-based index 2^32 is column u32::MAX, the last one that fits.
        let d = read_libsvm("1 1:1 4294967296:2\n".as_bytes(), "d.svm", Some(1 << 33)).unwrap();
        let Features::Sparse(m) = &d.features else { panic!("sparse input") };
        assert_eq!(m.indices, vec![0, u32::MAX]);
        let r = read_libsvm("1 1:1\n-1 2:1 4294967297:2\n".as_bytes(), "d.svm", Some(1 << 33));
        assert_err(r, "d.svm", 2, "4294967297:2", "index 4294967297 exceeds the 32-bit column range");
    }

    #[test]
    fn caller_gives_the_dimension() {
        let d = read_libsvm("1 2:1\n".as_bytes(), "d", Some(5)).unwrap();
        assert_eq!(d.n_features(), 5);
        assert_err(read_libsvm("1 2:1\n-1 6:1\n".as_bytes(), "d", Some(5)), "d", 2, "6:1", "exceeds");
    }

    #[test]
    fn errors_name_file_line_and_token() {
        assert_err(read_str("1 1:1\n-1 2:x\n"), "d.svm", 2, "2:x", "not a number");
        assert_err(read_str("1 1:NaN\n"), "d.svm", 1, "1:NaN", "non-finite value");
        assert_err(read_str("1 1:inf\n"), "d.svm", 1, "1:inf", "non-finite value");
        assert_err(read_str("1 0:1\n"), "d.svm", 1, "0:1", "1-based");
        assert_err(read_str("1 3\n"), "d.svm", 1, "3", "INDEX:VALUE");
        assert_err(read_str("1 3:1 2:1\n"), "d.svm", 1, "2:1", "ascending");
        assert_err(read_str("1 3:1 3:2\n"), "d.svm", 1, "3:2", "ascending");
        assert_err(read_str("1 qid:3 1:1\n"), "d.svm", 1, "qid:3", "qid");
        assert_err(read_str("abc 1:1\n"), "d.svm", 1, "abc", "not an integer");
        assert_err(read_str("1.5 1:1\n"), "d.svm", 1, "1.5", "not an integer");
        assert_err(read_str(""), "d.svm", 0, "", "empty input");
        assert_err(read_str("# only a comment\n\n"), "d.svm", 0, "", "empty input");
    }

    #[test]
    fn variances_become_sparse_diagonal() {
        let d = read_var("1 1:1 2:2\n-1 3:1\n", "1 2:0.5\n-1 1:0 4:0.25\n").unwrap();
        assert_eq!(d.n_features(), 4);
        let Covariances::SparseDiagonal(c) = &d.covariances else { panic!("expected sparse diagonal covariances") };
        assert_eq!(c.variances.n_cols, 4);
        assert_eq!(c.variances.row(1), (&[0, 3][..], &[0.0, 0.25][..]));
        d.validate().unwrap();
    }

    #[test]
    fn variance_errors() {
        assert_err(read_var("1 1:1\n", "1 1:-0.5\n"), "v.svm", 1, "1:-0.5", "negative variance");
        assert_err(read_var("1 1:1\n", "1 1:nan\n"), "v.svm", 1, "1:nan", "non-finite");
        assert_err(read_var("1 1:1\n-1 1:1\n", "1 1:1\n1 1:1\n"), "v.svm", 2, "1", "label differs");
        assert_err(read_var("1 1:1\n-1 1:1\n", "1 1:1\n"), "v.svm", 0, "", "fewer data lines");
        assert_err(read_var("1 1:1\n", "1 1:1\n\n-1 1:1\n"), "v.svm", 3, "", "more data lines");
    }

    #[test]
    fn write_then_read_round_trips() {
        let text = "1 1:0.1 3:-2.5e-300 4:1e300\n-1\n1 2:3\n";
        let d = read_var(text, "1 1:0.5\n-1 2:1\n1\n").unwrap();
        let mut out = Vec::new();
        write_libsvm(&d, &mut out).unwrap();
        let mut var = Vec::new();
        write_libsvm_variances(&d, &mut var).unwrap();
        let back = read_libsvm_with_variances(&out[..], "o", &var[..], "v", Some(4)).unwrap().dataset;
        assert_eq!(back, d);
        assert_eq!(String::from_utf8(out).unwrap(), "1 1:0.1 3:-2.5e-300 4:1e300\n-1\n1 2:3\n");
    }

    #[test]
    fn variances_beyond_the_data_widen_it_with_a_note() {
        let read =
            |n| read_libsvm_with_variances(&b"1 1:1\n-1 2:1\n"[..], "d.svm", &b"1 u1,4:0.5\n-1\n"[..], "v.svm", n);
        let wide = read(None).unwrap();
        assert_eq!(wide.dataset.n_features(), 4);
        assert_eq!(wide.notes.len(), 1);
        assert!(
            wide.notes[0].starts_with("v.svm: variance entries reach feature 4, beyond the largest index of d.svm (2)")
        );
        let fixed = read(Some(4)).unwrap();
        assert!(fixed.notes.is_empty());
        assert!(
            read_libsvm_with_variances(&b"1 1:1 2:1\n"[..], "d", &b"1 2:0.5\n"[..], "v", None)
                .unwrap()
                .notes
                .is_empty()
        );
    }

    #[test]
    fn writes_dense_features() {
        let d = Dataset::dense(ndarray::array![[0.0, 1.5], [2.0, 0.0]], vec![1, -1]);
        let mut out = Vec::new();
        write_libsvm(&d, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "1 2:1.5\n-1 1:2\n");
    }

    #[test]
    fn golden_fixture() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
        let data = std::fs::read(format!("{dir}toy.svm")).unwrap();
        let var = std::fs::read(format!("{dir}toy.var.svm")).unwrap();
        let d = read_libsvm_with_variances(&data[..], "toy.svm", &var[..], "toy.var.svm", None).unwrap().dataset;
        assert_eq!(d.labels, vec![1, -1, 1, -1]);
        assert_eq!(d.n_features(), 3);
        assert_eq!(d.features.row_dense(2), vec![0.0, 0.0, -1.25]);
        d.validate().unwrap();
    }

    #[test]
    fn dense_files_are_read_dense() {
        let d = read_var("1 1:1 2:2\n-1 1:3\n", "1 1:0.5 2:0\n-1 2:0.25\n").unwrap();
        assert_eq!(d.features, Features::dense(ndarray::array![[1.0, 2.0], [3.0, 0.0]]));
        let Covariances::Diagonal(c) = &d.covariances else { panic!("expected dense diagonal covariances") };
        assert_eq!(c.variances, ndarray::array![[0.5, 0.0], [0.0, 0.25]]);
        // Half of the values given is dense; fewer is sparse, also when the dimension is given.
        assert!(matches!(read_str("1 1:1\n-1 2:1\n").unwrap().features, Features::Dense(_)));
        assert!(matches!(read_libsvm("1 1:1 2:1\n".as_bytes(), "d", Some(5)).unwrap().features, Features::Sparse(_)));
    }

    /// Many megabytes, so that the input spans several blocks and chunks read in parallel.
    fn long_input(rows: usize, line: impl Fn(usize) -> String) -> String {
        (0..rows).map(|i| line(i) + "\n").collect()
    }

    #[test]
    fn dense_start_then_sparse_rows_keep_every_stored_entry() {
        // Dense first (explicit zeros included), then rows on a wide index: the file is sparse.
        let text = long_input(600_000, |i| match i < 400_000 {
            true => format!("{} 1:0 2:{i}", 1 - 2 * (i % 2) as i64),
            false => format!("-1 {}:1.5", 1000 + i % 7),
        });
        let d = read_str(&text).unwrap();
        let Features::Sparse(m) = &d.features else { panic!("a mostly empty file is sparse") };
        assert_eq!((m.n_rows(), m.n_cols), (600_000, 1006));
        assert_eq!(m.row(3), (&[0, 1][..], &[0.0, 3.0][..]));
        assert_eq!(m.row(599_999), (&[999 + 599_999 % 7][..], &[1.5][..]));
        assert_eq!(m.values.len(), 2 * 400_000 + 200_000);
        assert_eq!(d.labels[..2], [1, -1]);
    }

    #[test]
    fn errors_in_long_inputs_name_their_line() {
        let mut text = long_input(700_000, |i| format!("1 1:{i} 2:0.5"));
        text.push_str("1 1:1\n-1 2:x\n");
        assert_err(read_str(&text), "d.svm", 700_002, "2:x", "not a number");
        let mut bytes = long_input(500_000, |_| "1 1:1".into()).into_bytes();
        bytes.extend_from_slice(b"1 1:\xff\n1 1:1\n");
        let e = read_libsvm(&bytes[..], "b.svm", None).unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (500_001, "cannot read: stream did not contain valid UTF-8"));
    }

    #[test]
    fn paired_files_report_the_error_met_first_line_by_line() {
        // Data line 2 is bad, but variance line 1 already is.
        assert_err(read_var("1 1:1\n1 1:x\n", "1 1:-1\n1 1:1\n"), "v.svm", 1, "1:-1", "negative variance");
        // Variance line 2 differs after data line 2 was read; data line 3 is bad.
        assert_err(read_var("1 1:1\n1 1:1\n1 x\n", "1 1:1\n-1\n"), "v.svm", 2, "-1", "label differs");
        assert_err(read_var("1 1:1\n1 x\n", "1 1:1\n"), "d.svm", 2, "x", "INDEX:VALUE");
        assert_err(read_var("1 1:1\n", "1 1:1\n1 1:y\n"), "v.svm", 2, "1:y", "not a number");
        assert_err(read_var("1 1:1\n", "1 1:1\n1 1:1\n"), "v.svm", 2, "", "more data lines");
        assert_err(read_var("\n", "1 1:y\n"), "d.svm", 0, "", "empty input");
    }

    #[test]
    fn variance_file_with_factor_entries() {
        let d = read_var("1 1:1\n-1 2:1\n", "1 1:0.5 u1,2:2 u1,1:1\n-1\n").unwrap();
        let Covariances::LowRank(c) = &d.covariances else { panic!("expected low-rank") };
        assert_eq!(c.factors[0], ndarray::array![[1.0], [2.0]]);
        assert_eq!(c.factors[1].dim(), (2, 0));
        assert_eq!(c.diagonal, Some(ndarray::array![[0.5, 0.0], [0.0, 0.0]]));
        let d = read_var("1 1:1\n-1 2:1\n", "1 u1,1:1\n-1 u1,2:3\n").unwrap();
        let Covariances::LowRank(c) = &d.covariances else { panic!("expected low-rank") };
        assert_eq!(c.diagonal, None);
        assert_err(read_var("1 1:1\n", "1 u1,1:inf\n"), "v.svm", 1, "u1,1:inf", "non-finite");
        assert_err(read_var("1 1:1\n", "1 u1,1:1 u1,1:1\n"), "v.svm", 1, "u1,1:1", "repeated");
        assert_err(read_var("1 1:1\n", "1 u3,1:1\n"), "v.svm", 1, "u3", "rank ≤ n");
        assert_err(read_var("1 1:1\n", "1 u1,0:1\n"), "v.svm", 1, "u1,0:1", "1-based");
        // In the data file a factor token is just malformed.
        assert_err(read_str("1 u1,1:1\n"), "d.svm", 1, "u1,1:1", "index");
    }
}
