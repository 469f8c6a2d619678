//! The svm-gsu format (the reference C++ code, DESIGN 6): three whitespace-separated files joined by
//! example id.
//!
//! - means: `<id> j:v j:v ...`, 1-based sparse indices in any order (each at most once);
//! - labels: `<id> <label>`;
//! - covariances (optional): `<id> i,j:v ...`, 1-based, sparse. An entry `(i,j)` sets both `(i,j)` and
//!   `(j,i)`; giving both with different values is an error. A line whose entries are all on the
//!   diagonal is a diagonal matrix. A low-rank covariance `Σ = U Uᵀ + diag(v)` is written as its factor
//!   entries `uK,J:V` (`U[J,K] = V`, factor column `K`, feature `J`, both 1-based; absent entries are
//!   zero, the rank is the largest `K`) plus optional diagonal entries `J,J:V`; such a line may not hold
//!   off-diagonal `I,J` entries.
//!
//! The files are joined with hash maps in O(ℓ), in the order of the labels file. An id missing from
//! one of the files is skipped and reported; a repeated id within one file is an error. Blank lines
//! are skipped.
//!
//! The means are dense features when at least half of the file's `lines × n` values are given, else
//! sparse (CSR). Covariances are diagonal when every kept example is diagonal: dense
//! [`Covariances::Diagonal`] when at least half of the file's `lines × n` variances are given, else
//! [`Covariances::SparseDiagonal`]. They become
//! [`Covariances::LowRank`] when a line has factor entries (dense lines are then factored too) or when
//! [`ReadOptions::low_rank`] asks for it, otherwise dense [`Covariances::Full`]. With `low_rank`, each
//! dense line is factored as soon as it is read ([`psd_factor`]: eigenvalues at most `max(n,1)·ε·λ_max`
//! are dropped as round-off), so no more than one dense matrix is ever held. Otherwise each covariance
//! is held once, as its upper-triangle entries, released as it is copied into the dense array.

use std::collections::HashMap;
use std::io::BufRead;

use ndarray::{Array2, Array3, ShapeBuilder};

use super::chunked::{self, Failure, LineParser, Parsed, Rows, Store, Table};
use super::{
    LineReader, Loc, ParseError, ReadOptions, check_factor_entries, empty_input, factor_matrix, is_factor_token,
    parse_factor_entry, parse_index, parse_label, parse_pair, parse_value, try_zeros,
};
use crate::covariance::{Covariances, FULL_REMEDY, psd_factor};
use crate::data::{Dataset, Features};
use crate::model::LinearModel;

/// A joined svm-gsu input.
#[derive(Debug, Clone, PartialEq)]
pub struct SvmGsuData {
    /// The examples found in every file, in labels-file order.
    pub dataset: Dataset<'static>,
    /// The id of every example of `dataset`.
    pub ids: Vec<String>,
    /// One message (`FILE:LINE: id '...' has no ...; skipped`) per skipped line.
    pub skipped: Vec<String>,
    /// What the reader inferred that the user should hear of: covariance indices beyond the means' largest
    /// index, which widen the data (the sparse means are zero there) unless the dimension is given.
    pub notes: Vec<String>,
}

/// Reads and joins svm-gsu means, labels and (optionally) covariance files, each given as
/// `(reader, source name)`. `options.n_features` fixes the dimension (larger indices are errors); by
/// default it is the largest index seen in the means and covariance files (a sparse means file may omit
/// trailing zeros), with a note when the covariances reach beyond the means.
pub fn read_svmgsu(
    means: (impl BufRead, &str),
    labels: (impl BufRead, &str),
    covariances: Option<(&mut dyn BufRead, &str)>,
    options: ReadOptions,
) -> Result<SvmGsuData, ParseError> {
    let n_features = options.n_features;
    let (labels_reader, labels_src) = labels;
    let (means_reader, means_src) = means;
    let labelled = read_labels(labels_reader, labels_src)?;
    let mut x = Store::new(n_features, "the means");
    let means = chunked::parse(means_reader, means_src, &MeanLine { n_features }, &mut x);
    let mean_index = index_ids(means_src, means.meta.iter().map(String::as_str), &means.lines, &means.failure)?;
    let mut variances = Store::new(n_features, "the variances");
    let cov = covariances.map(|(reader, src)| (chunked::parse(reader, src, &CovLine { options }, &mut variances), src));
    let cov_index = match &cov {
        Some((c, src)) => Some(index_ids(src, c.meta.iter().map(|m| m.id.as_str()), &c.lines, &c.failure)?),
        None => None,
    };

    let mut ids = Vec::new();
    let mut y = Vec::new();
    let (mut x_order, mut cov_order) = (Vec::new(), Vec::new());
    let mut used_mean = vec![false; means.meta.len()];
    let mut used_cov = vec![false; cov.as_ref().map_or(0, |(c, _)| c.meta.len())];
    let mut skipped = Vec::new();
    for (id, label, line) in labelled {
        let mean = mean_index.get(id.as_str()).copied();
        let row = cov_index.as_ref().map(|index| index.get(id.as_str()).copied());
        mean.into_iter().for_each(|k| used_mean[k] = true);
        row.flatten().into_iter().for_each(|k| used_cov[k] = true);
        match (mean, row) {
            (Some(mean), row @ (None | Some(Some(_)))) => {
                x_order.push(mean);
                cov_order.extend(row.flatten());
                ids.push(id);
                y.push(label);
            }
            (mean, row) => {
                let mut missing = Vec::new();
                if mean.is_none() {
                    missing.push(format!("mean vector in {means_src}"));
                }
                if let (Some(None), Some((_, src))) = (row, &cov) {
                    missing.push(format!("covariance in {src}"));
                }
                skipped.push(format!("{labels_src}:{line}: id '{id}' has no {}; skipped", missing.join(" and no ")));
            }
        }
    }
    let unused = |meta: Vec<(usize, &str)>, used: &[bool]| {
        meta.into_iter()
            .zip(used)
            .filter(|(_, u)| !**u)
            .map(|((line, id), _)| (line, id.to_string()))
            .collect::<Vec<_>>()
    };
    let mean_rows: Vec<(usize, &str)> =
        means.lines.iter().copied().zip(means.meta.iter().map(String::as_str)).collect();
    report_unlabelled(&mut skipped, unused(mean_rows, &used_mean).into_iter(), means_src, labels_src);
    let cov_source = cov.as_ref().map(|(_, src)| *src);
    let mean_width = x.width();
    let cov_width = match &cov {
        Some((c, src)) => {
            let rows: Vec<(usize, &str)> = c.lines.iter().copied().zip(c.meta.iter().map(|m| m.id.as_str())).collect();
            report_unlabelled(&mut skipped, unused(rows, &used_cov).into_iter(), src, labels_src);
            c.meta.iter().filter_map(|m| m.other.as_ref().map(|o| o.1)).fold(variances.width(), usize::max)
        }
        None => 0,
    };
    if ids.is_empty() {
        return Err(Loc { source: labels_src, line: 0 }.err("", "no id appears in every input file"));
    }

    let n = n_features.unwrap_or(mean_width.max(cov_width));
    let mut notes = Vec::new();
    if let (None, Some(source)) = (n_features, cov_source)
        && cov_width > mean_width
    {
        notes.push(format!(
            "{source}: covariance entries reach feature {cov_width}, beyond the largest index of the means \
             ({mean_width}): the data have {cov_width} features, the means zero beyond {mean_width} \
             (give the number of features to fix the dimension)"
        ));
    }
    let covariances = match cov {
        Some((c, source)) => assemble(variances, c, &cov_order, n, source)?,
        None => Covariances::None,
    };
    let features = match x.finish(n, Some(&x_order), Loc { source: means_src, line: 0 })? {
        Table::Dense(a) => Features::dense(a),
        Table::Sparse(m) => Features::Sparse(m),
    };
    Ok(SvmGsuData { dataset: Dataset::new(features, y).with_covariances(covariances), ids, skipped, notes })
}

/// Reads an svm-gsu *linear* model file:
///
/// ```text
/// SVM-GSU Model_File
/// kernel_type linear
/// lambda 0.001
/// sigmA -0.16095
/// sigmB 3.00825
/// cov_mat_type diagonal
/// w 2.09625 1.63941 ...
/// b 33.0391
/// ```
///
/// The result is a binary model with classes `[-1, 1]` and `f(x) = wᵀx + b`. `lambda` and
/// `cov_mat_type` are informational and ignored; so are `sigmA`/`sigmB`, the reference code's sigmoid,
/// which has a sign bug and is fitted on training scores (DESIGN 4): refit Platt scaling with
/// [`crate::calibration`] instead. Kernel (`rbf`) model files are rejected.
pub fn read_svmgsu_model(text: &str, source: &str) -> Result<LinearModel, ParseError> {
    let mut lines = text.lines().enumerate().map(|(k, l)| (k + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    let Some((line, header)) = lines.next() else {
        return Err(empty_input(source));
    };
    if header != "SVM-GSU Model_File" {
        return Err(Loc { source, line }.err(header, "expected the header 'SVM-GSU Model_File'"));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let (mut w, mut b) = (None, None);
    for (line, text) in lines {
        let loc = Loc { source, line };
        let mut tokens = text.split_ascii_whitespace();
        let key = tokens.next().unwrap_or_default();
        if let Some(first) = seen.insert(key, line) {
            return Err(loc.err(key, format!("repeated key (first on line {first})")));
        }
        let values: Vec<&str> = tokens.collect();
        match key {
            "kernel_type" => match values[..] {
                ["linear"] => {}
                [kind] => {
                    return Err(loc.err(kind, "only linear svm-gsu models can be read"));
                }
                _ => return Err(loc.err(key, "expected one kernel name")),
            },
            "lambda" | "sigmA" | "sigmB" => {
                let [v] = values[..] else {
                    return Err(loc.err(key, "expected one number"));
                };
                parse_value(loc, v, v)?;
            }
            "cov_mat_type" => {}
            "w" => {
                let w_values: Result<Vec<f64>, _> = values.iter().map(|v| parse_value(loc, v, v)).collect();
                w = Some(w_values?);
            }
            "b" => {
                let [v] = values[..] else {
                    return Err(loc.err(key, "expected one number"));
                };
                b = Some(parse_value(loc, v, v)?);
            }
            _ => return Err(loc.err(key, "unknown key in an svm-gsu linear model file")),
        }
    }
    let whole = Loc { source, line: 0 };
    if !seen.contains_key("kernel_type") {
        return Err(whole.err("kernel_type", "missing"));
    }
    let w = w.ok_or_else(|| whole.err("w", "missing"))?;
    let b = b.ok_or_else(|| whole.err("b", "missing"))?;
    let n = w.len();
    Ok(LinearModel {
        classes: vec![-1, 1],
        coef: Array2::from_shape_vec((1, n), w).expect("1 × n from n values").into(),
        intercept: vec![b],
    })
}

/// A first-seen line number per id, for duplicate detection.
fn check_duplicate(seen: &mut HashMap<String, usize>, loc: Loc, id: &str) -> Result<(), ParseError> {
    if let Some(first) = seen.get(id) {
        return Err(loc.err(id, format!("duplicate id (first on line {first})")));
    }
    seen.insert(id.to_string(), loc.line);
    Ok(())
}

/// `(id, label, line)` in file order.
fn read_labels(reader: impl BufRead, source: &str) -> Result<Vec<(String, i64, usize)>, ParseError> {
    let mut lines = LineReader::new(reader);
    let mut seen = HashMap::new();
    let mut out = Vec::new();
    while let Some((line, text)) = lines.next_line(source)? {
        let loc = Loc { source, line };
        let tokens: Vec<&str> = text.split_ascii_whitespace().collect();
        match tokens[..] {
            [] => continue,
            [id, label] => {
                check_duplicate(&mut seen, loc, id)?;
                out.push((id.to_string(), parse_label(loc, label)?, line));
            }
            [id] => return Err(loc.err(id, "missing label: expected '<id> <label>'")),
            [_, _, extra, ..] => {
                return Err(loc.err(extra, "unexpected token: expected '<id> <label>'"));
            }
        }
    }
    if out.is_empty() {
        return Err(empty_input(source));
    }
    Ok(out)
}

/// Every id of an svm-gsu file's records with its record, in file order. The first error is the one a
/// line-by-line reader meets first: a repeated id (checked before the rest of its line), the file's
/// failure, or an empty file.
fn index_ids<'a>(
    source: &str,
    ids: impl Iterator<Item = &'a str>,
    lines: &[usize],
    failure: &Option<Failure>,
) -> Result<HashMap<&'a str, usize>, ParseError> {
    let repeated = |line: usize, id: &str, first: usize| {
        Loc { source, line }.err(id, format!("duplicate id (first on line {})", lines[first]))
    };
    let mut index = HashMap::new();
    for (k, (id, &line)) in ids.zip(lines).enumerate() {
        if let Some(&first) = index.get(id) {
            return Err(repeated(line, id, first));
        }
        index.insert(id, k);
    }
    if let Some(Failure { error, first_token }) = failure {
        return Err(match index.get(first_token.as_str()) {
            Some(&first) => repeated(error.line, first_token, first),
            None => error.clone(),
        });
    }
    if index.is_empty() {
        return Err(empty_input(source));
    }
    Ok(index)
}

/// A means line `<id> j:v ...`: its id; entries sorted by index, each index at most once.
struct MeanLine {
    n_features: Option<usize>,
}

impl LineParser for MeanLine {
    type Meta = String;

    fn parse<'t>(
        &self,
        loc: Loc,
        text: &'t str,
        tokens: &mut Vec<&'t str>,
        out: &mut Rows<String>,
    ) -> Result<(), ParseError> {
        tokens.clear();
        tokens.extend(text.split_ascii_whitespace());
        let Some((id, tokens)) = tokens.split_first() else { return Ok(()) };
        let mut entries = Vec::with_capacity(tokens.len());
        for (k, token) in tokens.iter().enumerate() {
            let (j, v) = parse_pair(loc, token, self.n_features)?;
            entries.push((j, v, k));
        }
        if !entries.is_sorted_by_key(|e| e.0) {
            entries.sort_by_key(|e| (e.0, e.2));
        }
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(loc.err(tokens[w[1].2], format!("index {} repeated", w[1].0 as usize + 1)));
        }
        entries.iter().for_each(|&(j, v, _)| out.push(j, v));
        out.end(loc.line, id.to_string());
        Ok(())
    }
}

/// A covariance line's id; a line that is not diagonal keeps its entries and width here (a diagonal
/// line's entries go to the store).
struct CovMeta {
    id: String,
    other: Option<Box<(CovEntries, usize)>>,
}

struct CovRow {
    line: usize,
    entries: CovEntries,
}

enum CovEntries {
    /// Upper-triangle entries `(i, j, Σ_ij)`, `i ≤ j`, 0-based, sorted, distinct.
    Matrix(Vec<(u32, u32, f64)>),
    /// Factor entries `(k, j, U_jk)` and diagonal entries `(j, v_j)`, 0-based.
    Factor { factor: Vec<(u32, u32, f64)>, diagonal: Vec<(u32, f64)> },
    /// A dense line factored as it was read: its factor (rows up to its largest index).
    Factored(Array2<f64>),
}

/// A covariance line `<id> i,j:v ... uK,J:V ...`.
struct CovLine {
    options: ReadOptions,
}

impl LineParser for CovLine {
    type Meta = CovMeta;

    fn parse<'t>(
        &self,
        loc: Loc,
        text: &'t str,
        tokens: &mut Vec<&'t str>,
        out: &mut Rows<CovMeta>,
    ) -> Result<(), ParseError> {
        tokens.clear();
        tokens.extend(text.split_ascii_whitespace());
        let Some((id, tokens)) = tokens.split_first() else { return Ok(()) };
        let (entries, width) = cov_entries(loc, tokens, self.options)?;
        let other = match entries {
            CovEntries::Matrix(e) if e.iter().all(|&(i, j, _)| i == j) => {
                e.iter().for_each(|&(j, _, v)| out.push(j, v));
                None
            }
            other => Some(Box::new((other, width))),
        };
        out.end(loc.line, CovMeta { id: id.to_string(), other });
        Ok(())
    }
}

/// The entries of a covariance line (its tokens after the id) and one past their largest index.
fn cov_entries(loc: Loc, tokens: &[&str], options: ReadOptions) -> Result<(CovEntries, usize), ParseError> {
    let n_features = options.n_features;
    let (mut entries, mut factor) = (Vec::new(), Vec::new());
    for (k, token) in tokens.iter().enumerate() {
        if is_factor_token(token) {
            let (c, j, v) = parse_factor_entry(loc, token, n_features)?;
            factor.push((c, j, v, k));
        } else {
            let (i, j, v) = parse_cov_entry(loc, token, n_features)?;
            entries.push((i.min(j), i.max(j), v, k));
        }
    }
    // Stable sort: entries for the same unordered pair stay in line order.
    entries.sort_by_key(|e| (e.0, e.1));
    if let Some(w) = entries.windows(2).find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1) && w[0].2 != w[1].2) {
        let message = format!(
            "conflicts with the value {} given earlier for entry ({},{}) or its transpose",
            w[0].2,
            w[0].0 + 1,
            w[0].1 + 1
        );
        return Err(loc.err(tokens[w[1].3], message));
    }
    entries.dedup_by_key(|e| (e.0, e.1));
    let mut width = entries.iter().map(|e| e.1 + 1).max().unwrap_or(0);
    let index = |i: usize, k: usize| u32::try_from(i).map_err(|_| loc.err(tokens[k], "index too large"));
    if !factor.is_empty() {
        if let Some(e) = entries.iter().find(|e| e.0 != e.1) {
            return Err(loc.err(
                tokens[e.3],
                "a line with factor entries (uK,J:V) may add only diagonal entries (J,J:V), not off-diagonal ones",
            ));
        }
        check_factor_entries(loc, &mut factor, tokens)?;
        width = width.max(factor.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0));
        let diagonal = entries.iter().map(|&(j, _, v, k)| Ok((index(j, k)?, v))).collect::<Result<_, _>>()?;
        let factor = factor.into_iter().map(|(c, j, v, _)| (c, j, v)).collect();
        return Ok((CovEntries::Factor { factor, diagonal }, width));
    }
    let entries: Vec<(u32, u32, f64)> =
        entries.into_iter().map(|(i, j, v, k)| Ok((index(i, k)?, index(j, k)?, v))).collect::<Result<_, _>>()?;
    let entries = if options.low_rank && entries.iter().any(|&(i, j, _)| i != j) {
        let m = entries.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
        CovEntries::Factored(psd_factor(0, dense_matrix(loc, &entries, m)?.view()).map_err(|e| factor_error(loc, e))?)
    } else {
        CovEntries::Matrix(entries)
    };
    Ok((entries, width))
}

/// The covariances of the kept records `order` of a parsed covariance file: diagonal (dense or sparse by
/// the file's fill) when every kept line is diagonal, else as [`assemble_covariances`] makes them.
fn assemble(
    variances: Store,
    parsed: Parsed<CovMeta>,
    order: &[usize],
    n: usize,
    source: &str,
) -> Result<Covariances, ParseError> {
    let Parsed { mut meta, lines, .. } = parsed;
    if order.iter().all(|&k| meta[k].other.is_none()) {
        return Ok(match variances.finish(n, Some(order), Loc { source, line: 0 })? {
            Table::Dense(a) => Covariances::diagonal(a),
            Table::Sparse(m) => Covariances::sparse_diagonal(m),
        });
    }
    let row = |k: usize, other: Option<Box<(CovEntries, usize)>>| CovRow {
        line: lines[k],
        entries: match other {
            Some(other) => other.0,
            None => CovEntries::Matrix(variances.row(k).into_iter().map(|(j, v)| (j as u32, j as u32, v)).collect()),
        },
    };
    let rows = order.iter().map(|&k| row(k, meta[k].other.take())).collect();
    assemble_covariances(rows, n, source)
}

/// A failed factorisation of the covariance on `loc`'s line (entries are finite and symmetric by
/// construction, so what is left is an indefinite matrix or a failed eigensolver).
fn factor_error(loc: Loc, e: crate::Error) -> ParseError {
    match e {
        crate::Error::NotPositiveSemidefinite { eigenvalue, .. } => {
            loc.err("", format!("covariance is not positive semi-definite: smallest eigenvalue {eigenvalue}"))
        }
        other => loc.err("", other.to_string()),
    }
}

/// The symmetric `n × n` matrix of upper-triangle entries (the covariance on `loc`'s line).
fn dense_matrix(loc: Loc, entries: &[(u32, u32, f64)], n: usize) -> Result<Array2<f64>, ParseError> {
    crate::memory::reserve("a dense covariance", FULL_REMEDY, &[n, n]).map_err(|e| loc.err("", e.to_string()))?;
    let mut m = Array2::from_shape_vec((n, n), try_zeros(loc, "", "a dense covariance", &[n, n])?).expect("n² zeros");
    for &(i, j, v) in entries {
        let (i, j) = (i as usize, j as usize);
        m[[i, j]] = v;
        m[[j, i]] = v;
    }
    Ok(m)
}

/// An `i,j:v` token: 0-based `(i, j)` and a finite value, non-negative on the diagonal.
fn parse_cov_entry(loc: Loc, token: &str, n_features: Option<usize>) -> Result<(usize, usize, f64), ParseError> {
    let malformed = || loc.err(token, "expected ROW,COL:VALUE");
    let (ij, v) = token.split_once(':').ok_or_else(malformed)?;
    let (i, j) = ij.split_once(',').ok_or_else(malformed)?;
    let i = parse_index(loc, token, i, n_features)? as usize;
    let j = parse_index(loc, token, j, n_features)? as usize;
    let v = parse_value(loc, token, v)?;
    if i == j && v < 0.0 {
        return Err(loc.err(token, "negative variance"));
    }
    Ok((i, j, v))
}

/// Reports the `(line, id)` rows of `source` whose id has no label, in line order.
fn report_unlabelled(
    skipped: &mut Vec<String>,
    rows: impl Iterator<Item = (usize, String)>,
    source: &str,
    labels_src: &str,
) {
    let mut left: Vec<(usize, String)> = rows.collect();
    left.sort_unstable();
    skipped.extend(
        left.into_iter().map(|(line, id)| format!("{source}:{line}: id '{id}' has no label in {labels_src}; skipped")),
    );
}

/// Low-rank when a line was factored or has factor
/// entries (the other dense lines are factored here, one at a time); dense full matrices otherwise.
fn assemble_covariances(rows: Vec<CovRow>, n: usize, source: &str) -> Result<Covariances, ParseError> {
    if rows.iter().all(|r| matches!(r.entries, CovEntries::Matrix(_))) {
        // The line stating the largest index, if the dimension is this file's.
        let widest = rows
            .iter()
            .find(|r| matches!(&r.entries, CovEntries::Matrix(e) if e.iter().any(|e| e.1 as usize + 1 == n)));
        let loc = Loc { source, line: widest.or(rows.first()).map_or(0, |r| r.line) };
        crate::memory::reserve("full covariances", FULL_REMEDY, &[rows.len(), n, n])
            .map_err(|e| loc.err("", e.to_string()))?;
        let zeros = try_zeros(loc, "", "the dense covariances", &[rows.len(), n, n])?;
        let mut m = Array3::from_shape_vec((rows.len(), n, n), zeros).expect("ℓ·n² zeros");
        for (k, row) in rows.into_iter().enumerate() {
            let CovEntries::Matrix(entries) = row.entries else { unreachable!("all rows are matrices") };
            for (i, j, v) in entries {
                let (i, j) = (i as usize, j as usize);
                m[[k, i, j]] = v;
                m[[k, j, i]] = v;
            }
        }
        return Ok(Covariances::full(m));
    }
    let mut factors = Vec::with_capacity(rows.len());
    let mut diagonal: Option<Array2<f64>> = None;
    let n_rows = rows.len();
    for (k, row) in rows.into_iter().enumerate() {
        let loc = Loc { source, line: row.line };
        let mut set_diagonal = |entries: &mut dyn Iterator<Item = (u32, f64)>| -> Result<(), ParseError> {
            for (j, v) in entries {
                if diagonal.is_none() {
                    let zeros = try_zeros(loc, "", "the dense variances", &[n_rows, n])?;
                    diagonal = Some(Array2::from_shape_vec((n_rows, n), zeros).expect("ℓ·n zeros"));
                }
                diagonal.as_mut().expect("allocated")[[k, j as usize]] = v;
            }
            Ok(())
        };
        let factor = match row.entries {
            CovEntries::Matrix(entries) if entries.iter().all(|&(i, j, _)| i == j) => {
                set_diagonal(&mut entries.iter().map(|&(j, _, v)| (j, v)))?;
                Array2::zeros((n, 0).f())
            }
            CovEntries::Matrix(entries) => {
                psd_factor(k, dense_matrix(loc, &entries, n)?.view()).map_err(|e| factor_error(loc, e))?
            }
            CovEntries::Factor { factor, diagonal } => {
                set_diagonal(&mut diagonal.iter().copied())?;
                factor_matrix(loc, &factor, n)?
            }
            CovEntries::Factored(u) => {
                let zeros = try_zeros(loc, "", "a covariance factor", &[n, u.ncols()])?;
                let mut padded = Array2::from_shape_vec((n, u.ncols()).f(), zeros).expect("n·r zeros");
                padded.slice_mut(ndarray::s![..u.nrows(), ..]).assign(&u);
                padded
            }
        };
        factors.push(factor);
    }
    Ok(Covariances::low_rank(factors, diagonal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn read(means: &str, labels: &str, cov: Option<&str>, n: Option<usize>) -> Result<SvmGsuData, ParseError> {
        let mut cov = cov.map(str::as_bytes);
        read_svmgsu(
            (means.as_bytes(), "m.txt"),
            (labels.as_bytes(), "l.txt"),
            cov.as_mut().map(|r| (r as &mut dyn BufRead, "c.txt")),
            ReadOptions { n_features: n, ..Default::default() },
        )
    }

    fn assert_err(r: Result<SvmGsuData, ParseError>, source: &str, line: usize, field: &str, msg: &str) {
        let e = r.unwrap_err();
        assert_eq!((e.source.as_str(), e.line, e.field.as_str()), (source, line, field), "{e}");
        assert!(e.message.contains(msg), "{e}");
    }

    #[test]
    fn joins_by_id_in_labels_order_and_reports_missing_ids() {
        let d = read("a 1:1\nb 2:2 1:1\n\nc 3:3\n", "c -1\nz 1\na +1\n", None, None).unwrap();
        assert_eq!(d.ids, ["c", "a"]);
        assert_eq!(*d.dataset.labels, [-1, 1]);
        assert_eq!(d.dataset.n_features(), 3);
        let Features::Sparse(m) = &d.dataset.features else { panic!("svm-gsu means must stay sparse") };
        assert_eq!(m.row(0), (&[2][..], &[3.0][..]));
        assert_eq!(m.row(1), (&[0][..], &[1.0][..]));
        assert_eq!(d.dataset.covariances, Covariances::None);
        assert_eq!(
            d.skipped,
            ["l.txt:2: id 'z' has no mean vector in m.txt; skipped", "m.txt:2: id 'b' has no label in l.txt; skipped",]
        );
    }

    #[test]
    fn covariances_beyond_the_means_widen_the_data_with_a_note() {
        // Sparse means may omit trailing zeros: an entry on feature 7 makes 7 features, and says so.
        let (means, labels, cov) = ("a 1:1 3:2\nb 2:1\n", "a 1\nb -1\n", "a 7,7:0.5\nb 1,1:1\n");
        let d = read(means, labels, Some(cov), None).unwrap();
        assert_eq!(d.dataset.n_features(), 7);
        assert_eq!(d.notes.len(), 1);
        assert!(d.notes[0].starts_with("c.txt: covariance entries reach feature 7") && d.notes[0].contains("(3)"));
        // Within the means' width, or with the dimension given: no note; beyond a given dimension: an error.
        assert!(read(means, labels, Some("a 3,3:0.5\n"), None).unwrap().notes.is_empty());
        assert!(read(means, labels, Some(cov), Some(8)).unwrap().notes.is_empty());
        assert_err(read(means, labels, Some(cov), Some(3)), "c.txt", 1, "7,7:0.5", "");
    }

    #[test]
    fn unsorted_indices_are_sorted() {
        let d = read("a 3:3 1:1\n", "a 1\n", None, None).unwrap();
        assert_eq!(d.dataset.features.row_dense(0), vec![1.0, 0.0, 3.0]);
    }

    #[test]
    fn diagonal_covariances_stay_sparse() {
        let d = read("a 1:1\nb 2:1\n", "a 1\nb -1\n", Some("b 4,4:0.5\na 1,1:0.25 2,2:0\n"), None).unwrap();
        assert_eq!(d.dataset.n_features(), 4);
        let Covariances::SparseDiagonal(c) = &d.dataset.covariances else { panic!("expected sparse diagonal") };
        assert_eq!(c.variances.row(0), (&[0, 1][..], &[0.25, 0.0][..]));
        assert_eq!(c.variances.row(1), (&[3][..], &[0.5][..]));
        d.dataset.validate().unwrap();
    }

    #[test]
    fn dense_means_and_diagonals_are_read_dense_in_labels_order() {
        let means = "a 1:1 2:2\nb 2:3\nc 1:4 2:5\nd 1:6\n";
        let cov = "d 1,1:0.4\nc 1,1:0.3 2,2:0.3\nb 2,2:0.2\na 1,1:0.1 2,2:0\n";
        let d = read(means, "c 1\nx 1\nd -1\na 1\n", Some(cov), None).unwrap();
        assert_eq!(d.ids, ["c", "d", "a"]);
        assert_eq!(d.dataset.features, Features::dense(array![[4.0, 5.0], [6.0, 0.0], [1.0, 2.0]]));
        let Covariances::Diagonal(c) = &d.dataset.covariances else { panic!("expected dense diagonal") };
        assert_eq!(c.variances, array![[0.3, 0.3], [0.4, 0.0], [0.1, 0.0]]);
        assert_eq!(d.skipped.len(), 3);
        // Widened by the covariances beyond the means' indices.
        let d = read("a 1:1\n", "a 1\n", Some("a 1,1:1 2,2:1\n"), None).unwrap();
        assert_eq!(d.dataset.features, Features::dense(array![[1.0, 0.0]]));
    }

    #[test]
    fn duplicate_ids_come_before_the_rest_of_their_line() {
        assert_err(read("a 1:1\na 1:x\n", "a 1\n", None, None), "m.txt", 2, "a", "duplicate id (first on line 1)");
        assert_err(read("a 1:1\nb 1:x\na 1:1\n", "a 1\n", None, None), "m.txt", 2, "1:x", "not a number");
    }

    #[test]
    fn one_full_example_makes_all_full() {
        let d =
            read("a 1:1\nb 2:1\n", "a 1\nb -1\n", Some("a 1,1:2\nb 1,1:1 2,1:0.5 2,2:1 1,2:0.5\n"), Some(2)).unwrap();
        let Covariances::Full(c) = &d.dataset.covariances else { panic!("expected full") };
        assert_eq!(c.matrices, array![[[2.0, 0.0], [0.0, 0.0]], [[1.0, 0.5], [0.5, 1.0]]]);
        d.dataset.validate().unwrap();
    }

    #[test]
    fn one_triangle_sets_both() {
        let d = read("a 1:1\n", "a 1\n", Some("a 1,1:1 2,2:1 2,1:-0.5\n"), None).unwrap();
        let Covariances::Full(c) = &d.dataset.covariances else { panic!("expected full") };
        assert_eq!(c.matrices, array![[[1.0, -0.5], [-0.5, 1.0]]]);
    }

    #[test]
    fn errors_name_file_line_and_token() {
        let ok_m = "a 1:1\nb 1:2\n";
        let ok_l = "a 1\nb -1\n";
        assert_err(read("a 1:1\nb 1:x\n", ok_l, None, None), "m.txt", 2, "1:x", "not a number");
        assert_err(read("a 1:1\nb 1:nan\n", ok_l, None, None), "m.txt", 2, "1:nan", "non-finite");
        assert_err(read("a 1:1\nb 1-2\n", ok_l, None, None), "m.txt", 2, "1-2", "INDEX:VALUE");
        assert_err(read("a 0:1\n", ok_l, None, None), "m.txt", 1, "0:1", "1-based");
        assert_err(read("a 2:1 1:1 2:3\n", ok_l, None, None), "m.txt", 1, "2:3", "index 2 repeated");
        assert_err(read("a 1:1\n\na 1:2\n", ok_l, None, None), "m.txt", 3, "a", "duplicate id (first on line 1)");
        assert_err(read(ok_m, "a 1\na -1\n", None, None), "l.txt", 2, "a", "duplicate id");
        assert_err(read(ok_m, "a 1\nb 1.5\n", None, None), "l.txt", 2, "1.5", "not an integer");
        assert_err(read(ok_m, "a abc\n", None, None), "l.txt", 1, "abc", "not an integer");
        assert_err(read(ok_m, "a\n", None, None), "l.txt", 1, "a", "missing label");
        assert_err(read(ok_m, "a 1 2\n", None, None), "l.txt", 1, "2", "unexpected token");
        assert_err(read(ok_m, "", None, None), "l.txt", 0, "", "empty input");
        assert_err(read("\n\n", ok_l, None, None), "m.txt", 0, "", "empty input");
        assert_err(read(ok_m, ok_l, Some(""), None), "c.txt", 0, "", "empty input");
        assert_err(read(ok_m, ok_l, Some("a 1,1:-1\n"), None), "c.txt", 1, "1,1:-1", "negative variance");
        assert_err(read(ok_m, ok_l, Some("a 1,1:inf\n"), None), "c.txt", 1, "1,1:inf", "non-finite");
        assert_err(read(ok_m, ok_l, Some("a 1:1\n"), None), "c.txt", 1, "1:1", "ROW,COL:VALUE");
        assert_err(read(ok_m, ok_l, Some("a 1,0:1\n"), None), "c.txt", 1, "1,0:1", "1-based");
        assert_err(read(ok_m, ok_l, Some("a 1,1:1\na 1,1:1\n"), None), "c.txt", 2, "a", "duplicate id");
        assert_err(read(ok_m, ok_l, Some("a 1,2:0.5 1,1:1 2,1:0.4\n"), None), "c.txt", 1, "2,1:0.4", "conflicts");
        assert_err(read(ok_m, ok_l, Some("a 3,1:1\n"), Some(2)), "c.txt", 1, "3,1:1", "exceeds");
        assert_err(read("a 3:1\n", ok_l, None, Some(2)), "m.txt", 1, "3:1", "exceeds");
        assert_err(read("x 1:1\n", ok_l, None, None), "l.txt", 0, "", "no id appears");
    }

    #[test]
    fn stated_dimensions_too_large_to_allocate_are_errors() {
        // 2^26 features: one dense matrix, or a factor of 2^26 columns, is 2^52 values (2^55 bytes).
        let (m, l) = ("a 1:1\nb 2:1\n", "a 1\nb -1\n");
        let huge = "a 1,1:1 1,67108864:0.5\nb 1,1:1\n";
        assert_err(
            read(m, l, Some(huge), None),
            "c.txt",
            1,
            "",
            "full covariances (2 × 67108864 × 67108864 floats) would take 64.0 PiB",
        );
        let mut cov = huge.as_bytes();
        let low_rank = ReadOptions { low_rank: true, ..Default::default() };
        let r = read_svmgsu((m.as_bytes(), "m.txt"), (l.as_bytes(), "l.txt"), Some((&mut cov, "c.txt")), low_rank);
        assert_err(r, "c.txt", 1, "", "a dense covariance (67108864 × 67108864 floats) would take 32.0 PiB");
        let factor = Some("a u67108864,67108864:1\nb 1,1:1\n");
        assert_err(read(m, l, factor, None), "c.txt", 1, "u67108864", "a covariance factor");
    }

    #[test]
    fn low_rank_lines() {
        let lr = |c: &str, low_rank: bool| {
            let mut cov = c.as_bytes();
            read_svmgsu(
                ("a 1:1\nb 2:1\n".as_bytes(), "m.txt"),
                ("a 1\nb -1\n".as_bytes(), "l.txt"),
                Some((&mut cov as &mut dyn BufRead, "c.txt")),
                ReadOptions { n_features: Some(3), low_rank },
            )
        };
        // Factor entries (any order) plus a diagonal; a diagonal-only line is rank 0.
        let d = lr("a u1,2:2 u1,1:1 u2,3:-1 3,3:0.5\nb 2,2:4\n", false).unwrap();
        let Covariances::LowRank(c) = &d.dataset.covariances else { panic!("expected low-rank") };
        assert_eq!(c.factors[0], array![[1.0, 0.0], [2.0, 0.0], [0.0, -1.0]]);
        assert_eq!(c.factors[1].dim(), (3, 0));
        assert_eq!(c.diagonal, Some(array![[0.0, 0.0, 0.5], [0.0, 4.0, 0.0]]));
        d.dataset.validate().unwrap();
        // A dense line among factor lines is factored: rank 1 here.
        let d = lr("a u1,1:1\nb 1,1:1 1,2:2 2,2:4\n", false).unwrap();
        let Covariances::LowRank(c) = &d.dataset.covariances else { panic!("expected low-rank") };
        assert_eq!(c.ranks(), [1, 1]);
        let f = &c.factors[1];
        assert!(
            (&f.dot(&f.t()) - &array![[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
                .iter()
                .all(|v| v.abs() < 1e-14)
        );
        // Asked for low rank, a dense file is factored line by line.
        let d = lr("a 1,1:1 1,2:1 2,2:1\nb 3,3:2\n", true).unwrap();
        let Covariances::LowRank(c) = &d.dataset.covariances else { panic!("expected low-rank") };
        assert_eq!((c.ranks(), c.factors[0].dim()), (vec![1, 0], (3, 1)));
        assert_eq!(c.diagonal, Some(array![[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]));

        assert_err(lr("a u1,1:1 1,2:1\n", false), "c.txt", 1, "1,2:1", "only diagonal entries");
        assert_err(lr("a u1,1:1 u1,1:2\n", false), "c.txt", 1, "u1,1:2", "u1,1 repeated");
        assert_err(lr("a u1,1:nan\n", false), "c.txt", 1, "u1,1:nan", "non-finite");
        assert_err(lr("a u4,1:1\n", false), "c.txt", 1, "u4,1:1", "rank ≤ n");
        assert_err(lr("a u1,4:1\n", false), "c.txt", 1, "u1,4:1", "exceeds");
        assert_err(lr("a u0,1:1\n", false), "c.txt", 1, "u0,1:1", "1-based");
        assert_err(lr("a u1:1\n", false), "c.txt", 1, "u1:1", "uCOLUMN,FEATURE:VALUE");
        assert_err(lr("a 1,1:1 1,2:2 2,2:1\n", true), "c.txt", 1, "", "not positive semi-definite");
        assert_err(lr("a 1,1:1 1,2:2 2,2:1\nb u1,1:1\n", false), "c.txt", 1, "", "not positive semi-definite");
    }

    /// A dense rank-2 covariance on 784 features (the 28×28 translation case) is read as rank 2.
    #[test]
    fn dense_file_of_known_rank_is_factored_to_that_rank() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let n = 784;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let u: Array2<f64> = Array2::from_shape_fn((n, 2), |_| StandardNormal.sample(&mut rng));
        let sigma: Array2<f64> = u.dot(&u.t());
        let mut line = String::from("a");
        for i in 0..n {
            for j in i..n {
                line.push_str(&format!(" {},{}:{}", i + 1, j + 1, sigma[[i, j]]));
            }
        }
        for low_rank in [true, false] {
            let mut cov = line.as_bytes();
            // Auto (low_rank false) keeps it full; asked for low rank, it is factored to rank 2.
            let d = read_svmgsu(
                ("a 1:1\n".as_bytes(), "m.txt"),
                ("a 1\n".as_bytes(), "l.txt"),
                Some((&mut cov as &mut dyn BufRead, "c.txt")),
                ReadOptions { n_features: None, low_rank },
            )
            .unwrap();
            assert_eq!(d.dataset.n_features(), n);
            match &d.dataset.covariances {
                Covariances::LowRank(c) => {
                    assert!(low_rank);
                    assert_eq!(c.ranks(), [2]);
                    let err =
                        (&c.factors[0].dot(&c.factors[0].t()) - &sigma).iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    assert!(err < 1e-12 * sigma.iter().fold(0.0f64, |m, v| m.max(v.abs())), "{err}");
                }
                Covariances::Full(_) => assert!(!low_rank),
                other => panic!("unexpected {}", other.kind()),
            }
        }
    }

    #[test]
    fn golden_fixture() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
        let file = |name: &str| std::fs::read(format!("{dir}{name}")).unwrap();
        let (means, labels, cov) = (file("toy.means"), file("toy.labels"), file("toy.cov"));
        let d = read_svmgsu(
            (&means[..], "toy.means"),
            (&labels[..], "toy.labels"),
            Some((&mut &cov[..], "toy.cov")),
            ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(d.ids, ["doc_5", "doc_3", "doc_7"]);
        assert_eq!(*d.dataset.labels, [-1, 1, -1]);
        assert_eq!(
            d.skipped,
            [
                "toy.labels:3: id 'doc_6' has no mean vector in toy.means and no covariance in toy.cov; skipped",
                "toy.labels:4: id 'doc_1' has no covariance in toy.cov; skipped",
            ]
        );
        assert_eq!(d.dataset.features.row_dense(1), vec![-0.21, 0.1, -0.43]);
        let Covariances::Full(c) = &d.dataset.covariances else { panic!("doc_7 is not diagonal") };
        assert_eq!(
            c.matrices,
            array![
                [[0.25, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.1]],
                [[0.25, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.1]],
                [[0.5, 0.1, 0.0], [0.1, 0.5, 0.0], [0.0, 0.0, 0.0]],
            ]
        );
        d.dataset.validate().unwrap();

        let model = read_svmgsu_model(&String::from_utf8(file("toy.model")).unwrap(), "toy.model").unwrap();
        assert_eq!(model.classes, [-1, 1]);
        assert_eq!(*model.coef.dense(), array![[2.5, -1.0, 0.125]]);
        assert_eq!(model.intercept, [0.75]);
        // f(doc_3) = 2.5·(-0.21) - 0.1 + 0.125·(-0.43) + 0.75
        let f = model.decision_function(&d.dataset.features).unwrap();
        assert!((f[[1, 0]] - (2.5 * -0.21 - 0.1 + 0.125 * -0.43 + 0.75)).abs() < 1e-12);
    }

    #[test]
    fn model_file_errors() {
        let good = "SVM-GSU Model_File\nkernel_type linear\nw 1 2\nb 0.5\n";
        let m = read_svmgsu_model(good, "m").unwrap();
        assert_eq!((m.n_features(), m.intercept[0]), (2, 0.5));
        let err = |text: &str| read_svmgsu_model(text, "m").unwrap_err();
        let e = err("");
        assert_eq!((e.line, e.message.as_str()), (0, "empty input: no data lines"));
        let e = err("LIBSVM\n");
        assert_eq!((e.line, e.field.as_str()), (1, "LIBSVM"));
        let e = err("SVM-GSU Model_File\nkernel_type rbf\n");
        assert_eq!((e.line, e.field.as_str()), (2, "rbf"));
        let e = err("SVM-GSU Model_File\nkernel_type linear\nw 1 nan\nb 0\n");
        assert_eq!((e.line, e.field.as_str(), e.message.as_str()), (3, "nan", "non-finite value"));
        let e = err("SVM-GSU Model_File\nkernel_type linear\nw 1\nb 0 1\n");
        assert_eq!((e.line, e.field.as_str()), (4, "b"));
        let e = err("SVM-GSU Model_File\nkernel_type linear\nw 1\nw 2\nb 0\n");
        assert!(e.message.contains("repeated key"));
        let e = err("SVM-GSU Model_File\nkernel_type linear\nb 0\n");
        assert_eq!((e.line, e.field.as_str(), e.message.as_str()), (0, "w", "missing"));
        let e = err("SVM-GSU Model_File\nkernel_type linear\nw 1\nb 0\nSV\n");
        assert_eq!((e.line, e.field.as_str()), (5, "SV"));
        let e = err("SVM-GSU Model_File\nw 1\nb 0\n");
        assert_eq!(e.field, "kernel_type");
    }
}
