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

use super::{
    CsrBuilder, LineReader, Loc, ParseError, check_factor_entries, empty_input, factor_matrix, is_factor_token,
    parse_factor_entry, parse_label, parse_pair, try_dense,
};
use crate::covariance::Covariances;
use crate::data::{Dataset, Features};

/// Reads a LIBSVM/svmlight file into a dataset with sparse features and no covariances.
/// `n_features` fixes the dimension (larger indices are errors); by default it is the largest index.
pub fn read_libsvm(
    data: impl BufRead,
    source: &str,
    n_features: Option<usize>,
) -> Result<Dataset<'static>, ParseError> {
    read(data, source, None::<(&[u8], &str)>, n_features)
}

/// Reads a LIBSVM/svmlight file and its variance file (same layout, same labels, line for line) into
/// a dataset with sparse diagonal covariances.
pub fn read_libsvm_with_variances(
    data: impl BufRead,
    source: &str,
    variances: impl BufRead,
    variances_source: &str,
    n_features: Option<usize>,
) -> Result<Dataset<'static>, ParseError> {
    read(data, source, Some((variances, variances_source)), n_features)
}

/// The factor entries `(k, j, v)` of each variance line, with its line number.
type FactorLines = Vec<(usize, Vec<(u32, u32, f64)>)>;

fn read<R: BufRead, V: BufRead>(
    data: R,
    source: &str,
    variances: Option<(V, &str)>,
    n_features: Option<usize>,
) -> Result<Dataset<'static>, ParseError> {
    let mut lines = LineReader::new(data);
    let mut x = CsrBuilder::new();
    let mut labels = Vec::new();
    let mut var = variances.map(|(r, s)| (LineReader::new(r), s, CsrBuilder::new(), FactorLines::new()));
    while let Some((line, label)) = next_record(&mut lines, source, n_features, None, &mut x)? {
        labels.push(label);
        if let Some((var_lines, var_source, v, factors)) = &mut var {
            let loc = Loc { source: var_source, line: 0 };
            match next_record(var_lines, var_source, n_features, Some(factors), v)? {
                Some((var_line, var_label)) if var_label != label => {
                    return Err(Loc { line: var_line, ..loc }.err(
                        &var_label.to_string(),
                        format!("label differs from label {label} on {source} line {line}"),
                    ));
                }
                Some(_) => {}
                None => {
                    return Err(loc.err("", format!("fewer data lines than {source} (which has a data line {line})")));
                }
            }
        }
    }
    if labels.is_empty() {
        return Err(empty_input(source));
    }
    let mut width = x.width;
    let covariances = match var {
        None => Covariances::None,
        Some((mut var_lines, var_source, mut v, mut factors)) => {
            if let Some((line, _)) = next_record(&mut var_lines, var_source, n_features, Some(&mut factors), &mut v)? {
                return Err(Loc { source: var_source, line }
                    .err("", format!("more data lines than {source} ({} examples)", labels.len())));
            }
            width = width.max(v.width);
            width = width.max(factors.iter().flat_map(|(_, f)| f.iter().map(|e| e.1 as usize + 1)).max().unwrap_or(0));
            let n = n_features.unwrap_or(width);
            let diagonal = v.finish(n);
            if factors.iter().all(|(_, f)| f.is_empty()) {
                Covariances::sparse_diagonal(diagonal)
            } else {
                let factors = factors
                    .iter()
                    .map(|(line, f)| factor_matrix(Loc { source: var_source, line: *line }, f, n))
                    .collect::<Result<Vec<Array2<f64>>, _>>()?;
                let loc = Loc { source: var_source, line: 0 };
                let diagonal =
                    if diagonal.values.is_empty() { None } else { Some(try_dense(loc, "the variances", &diagonal)?) };
                Covariances::low_rank(factors, diagonal)
            }
        }
    };
    Ok(Dataset {
        features: Features::Sparse(x.finish(n_features.unwrap_or(width))),
        labels,
        weights: None,
        covariances,
        privileged: None,
    })
}

/// Parses the next data line into `out` (one row) and returns its line number and label. `factors`:
/// this is a variance file, whose values must be non-negative and whose factor entries `uK,J:V` are
/// appended to `factors` (one entry per line).
fn next_record<R: BufRead>(
    lines: &mut LineReader<R>,
    source: &str,
    n_features: Option<usize>,
    mut factors: Option<&mut FactorLines>,
    out: &mut CsrBuilder,
) -> Result<Option<(usize, i64)>, ParseError> {
    while let Some((line, text)) = lines.next_line(source)? {
        let loc = Loc { source, line };
        let data = text.split('#').next().unwrap_or_default();
        let tokens: Vec<&str> = data.split_ascii_whitespace().collect();
        let Some((label, tokens)) = tokens.split_first() else {
            continue;
        };
        let label = parse_label(loc, label)?;
        let mut previous: Option<usize> = None;
        let mut factor = Vec::new();
        for (k, &token) in tokens.iter().enumerate() {
            if token.starts_with("qid:") {
                return Err(loc.err(token, "qid (ranking query id) tokens are not supported"));
            }
            if factors.is_some() && is_factor_token(token) {
                let (c, j, v) = parse_factor_entry(loc, token, n_features)?;
                factor.push((c, j, v, k));
                continue;
            }
            let (j, v) = parse_pair(loc, token, n_features)?;
            if factors.is_some() && v < 0.0 {
                return Err(loc.err(token, "negative variance"));
            }
            if let Some(p) = previous
                && j <= p
            {
                return Err(loc.err(token, format!("indices must be strictly ascending (previous index {})", p + 1)));
            }
            previous = Some(j);
            out.push(j, v);
        }
        out.end_row();
        if let Some(factors) = factors.as_deref_mut() {
            check_factor_entries(loc, &mut factor, tokens)?;
            factors.push((line, factor.into_iter().map(|(c, j, v, _)| (c, j, v)).collect()));
        }
        return Ok(Some((line, label)));
    }
    Ok(None)
}

/// Writes the dataset's labels and means as LIBSVM lines (zeros omitted, floats in round-trip form).
pub fn write_libsvm(data: &Dataset, out: &mut impl Write) -> std::io::Result<()> {
    for (i, &label) in data.labels.iter().enumerate() {
        match &data.features {
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                write_row(out, label, idx.iter().copied().zip(val.iter().copied()))?;
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
                write_row(out, label, idx.iter().copied().zip(val.iter().copied()))?;
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
        read_libsvm_with_variances(text.as_bytes(), "d.svm", var.as_bytes(), "v.svm", None)
    }

    fn assert_err(r: Result<Dataset<'static>, ParseError>, source: &str, line: usize, field: &str, msg: &str) {
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
        let back = read_libsvm_with_variances(&out[..], "o", &var[..], "v", Some(4)).unwrap();
        assert_eq!(back, d);
        assert_eq!(String::from_utf8(out).unwrap(), "1 1:0.1 3:-2.5e-300 4:1e300\n-1\n1 2:3\n");
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
        let d = read_libsvm_with_variances(&data[..], "toy.svm", &var[..], "toy.var.svm", None).unwrap();
        assert_eq!(d.labels, vec![1, -1, 1, -1]);
        assert_eq!(d.n_features(), 3);
        assert_eq!(d.features.row_dense(2), vec![0.0, 0.0, -1.25]);
        d.validate().unwrap();
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
