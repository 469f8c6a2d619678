//! CSV with a header row: one example per line, comma-separated, fields optionally in double quotes
//! (`""` is a quote inside one; quoted fields cannot span lines); blank lines are skipped. The label
//! column is chosen by name (default: the last column); every other column is a feature.
//!
//! Variance CSV: the same feature columns, in the same order, with per-feature variances. Its header may
//! include the label column, whose values are then ignored. Rows correspond one for one. A low-rank
//! covariance `U Uᵀ + diag(v)` adds one block of columns per factor column `K = 1..r`, named `uK:NAME`
//! for every feature `NAME` in order (its values are `U[·, K]`, any sign); the diagonal block (the plain
//! feature names) is then optional.

use std::borrow::Cow;
use std::io::BufRead;

use ndarray::{Array2, ShapeBuilder};

use super::{LineReader, Loc, ParseError, empty_input, parse_label, parse_value, parse_variance};
use crate::covariance::Covariances;
use crate::data::Dataset;

/// Reads a CSV file into a dataset with dense features. `label_col` names the label column (default:
/// the last one).
pub fn read_csv(data: impl BufRead, source: &str, label_col: Option<&str>) -> Result<Dataset<'static>, ParseError> {
    read(data, source, None::<(&[u8], &str)>, label_col, None)
}

/// Reads a CSV file and its variance CSV into a dataset with dense diagonal covariances.
pub fn read_csv_with_variances(
    data: impl BufRead,
    source: &str,
    variances: impl BufRead,
    variances_source: &str,
    label_col: Option<&str>,
) -> Result<Dataset<'static>, ParseError> {
    read(data, source, Some((variances, variances_source)), label_col, None)
}

/// [`read_csv`] / [`read_csv_with_variances`] with a column of relevance degrees `c_i`
/// ([`Dataset::weights`]): the column named `weight_col` is not a feature (the variance CSV does not list
/// it), and each of its fields must be a finite, non-negative number.
pub fn read_csv_weighted<V: BufRead>(
    data: impl BufRead,
    source: &str,
    variances: Option<(V, &str)>,
    label_col: Option<&str>,
    weight_col: &str,
) -> Result<Dataset<'static>, ParseError> {
    read(data, source, variances, label_col, Some(weight_col))
}

fn read<R: BufRead, V: BufRead>(
    data: R,
    source: &str,
    variances: Option<(V, &str)>,
    label_col: Option<&str>,
    weight_col: Option<&str>,
) -> Result<Dataset<'static>, ParseError> {
    let mut lines = LineReader::new(data);
    let (header_line, names) = read_header(&mut lines, source)?;
    let label = match label_col {
        None => names.len() - 1,
        Some(name) => names.iter().position(|c| c == name).ok_or_else(|| {
            Loc { source, line: header_line }.err(name, format!("no such column (columns: {})", names.join(", ")))
        })?,
    };
    let weight = match weight_col {
        None => None,
        Some(name) => match names.iter().position(|c| c == name) {
            None => {
                return Err(Loc { source, line: header_line }
                    .err(name, format!("no such column (columns: {})", names.join(", "))));
            }
            Some(c) if c == label => {
                return Err(Loc { source, line: header_line }.err(name, "the weight column is the label column"));
            }
            Some(c) => Some(c),
        },
    };
    let is_feature = |c: usize| c != label && Some(c) != weight;
    if !(0..names.len()).any(is_feature) {
        return Err(Loc { source, line: header_line }.err(&names[0], "no feature columns besides the label column"));
    }
    let features: Vec<&str> = (0..names.len()).filter(|&c| is_feature(c)).map(|c| names[c].as_str()).collect();

    let mut var = match variances {
        Some((reader, var_source)) => {
            let mut var_lines = LineReader::new(reader);
            let layout = check_variance_header(&mut var_lines, var_source, &features, &names[label])?;
            Some((var_lines, var_source, layout, Vec::new(), Vec::new()))
        }
        None => None,
    };

    let n = features.len();
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut w = Vec::new();
    while let Some((line, fields)) = next_record(&mut lines, source, names.len())? {
        let loc = Loc { source, line };
        y.push(parse_label(loc, &fields[label])?);
        if let Some(c) = weight {
            let v = parse_value(loc, &fields[c], &fields[c])?;
            if v < 0.0 {
                return Err(loc.err(&fields[c], "negative weight"));
            }
            w.push(v);
        }
        for (_, f) in fields.iter().enumerate().filter(|&(c, _)| is_feature(c)) {
            x.push(parse_value(loc, f, f)?);
        }
        if let Some((var_lines, var_source, layout, v, u)) = &mut var {
            let Some((var_line, fields)) = next_record(var_lines, var_source, layout.width(n))? else {
                return Err(Loc { source: var_source, line: 0 }
                    .err("", format!("fewer rows than {source} (which has a row on line {line})")));
            };
            let loc = Loc { source: var_source, line: var_line };
            let mut values = fields.iter().enumerate().filter(|&(c, _)| Some(c) != layout.label).map(|(_, f)| f);
            if layout.diagonal {
                for f in values.by_ref().take(n) {
                    v.push(parse_variance(loc, f, f)?);
                }
            }
            for f in values {
                u.push(parse_value(loc, f, f)?);
            }
        }
    }
    if y.is_empty() {
        return Err(empty_input(source));
    }
    let l = y.len();
    let covariances = match var {
        None => Covariances::None,
        Some((mut var_lines, var_source, layout, v, u)) => {
            if let Some((line, _)) = next_record(&mut var_lines, var_source, layout.width(n))? {
                return Err(Loc { source: var_source, line }.err("", format!("more rows than {source} ({l} examples)")));
            }
            let diagonal = layout.diagonal.then(|| Array2::from_shape_vec((l, n), v).expect("ℓ rows of n variances"));
            match (layout.rank, diagonal) {
                (0, Some(d)) => Covariances::diagonal(d),
                (r, diagonal) => {
                    // Each row's factor values are its r blocks of n: U in column-major order.
                    let factors = u
                        .chunks_exact(n * r)
                        .map(|block| Array2::from_shape_vec((n, r).f(), block.to_vec()).expect("r blocks of n"))
                        .collect();
                    Covariances::low_rank(factors, diagonal)
                }
            }
        }
    };
    let mut dataset = Dataset::dense(Array2::from_shape_vec((l, n), x).expect("ℓ rows of n features"), y)
        .with_covariances(covariances);
    dataset.weights = weight.map(|_| w);
    Ok(dataset)
}

/// The first non-blank line: distinct column names.
pub(super) fn read_header<R: BufRead>(
    lines: &mut LineReader<R>,
    source: &str,
) -> Result<(usize, Vec<String>), ParseError> {
    let Some((line, text)) = lines.next_nonblank(source)? else {
        return Err(empty_input(source));
    };
    let loc = Loc { source, line };
    let names: Vec<String> =
        split_record(text).map_err(|m| loc.err(&excerpt(text), m))?.into_iter().map(Cow::into_owned).collect();
    let mut seen = std::collections::HashSet::new();
    if let Some(name) = names.iter().find(|&name| !seen.insert(name)) {
        return Err(loc.err(name, "duplicate column name"));
    }
    Ok((line, names))
}

/// The columns of a variance CSV.
struct VarianceLayout {
    /// The position of the label column, if present.
    label: Option<usize>,
    /// Whether the plain feature columns (the diagonal) are present.
    diagonal: bool,
    /// The number of factor blocks `uK:NAME`.
    rank: usize,
}

impl VarianceLayout {
    /// Fields per row for `n` features.
    fn width(&self, n: usize) -> usize {
        usize::from(self.label.is_some()) + n * (usize::from(self.diagonal) + self.rank)
    }
}

/// Checks that the variance header lists `features` in order (the diagonal), or factor blocks
/// `u1:NAME ... u2:NAME ...` with every feature in order, or both (diagonal first), optionally with the
/// label column `label` anywhere.
fn check_variance_header<R: BufRead>(
    lines: &mut LineReader<R>,
    source: &str,
    features: &[&str],
    label: &str,
) -> Result<VarianceLayout, ParseError> {
    let (line, names) = read_header(lines, source)?;
    let loc = Loc { source, line };
    let label_pos = names.iter().position(|c| c == label);
    let var_features: Vec<&str> =
        (0..names.len()).filter(|&c| Some(c) != label_pos).map(|c| names[c].as_str()).collect();
    let diagonal = !var_features.first().is_some_and(|c| c.starts_with("u1:") && features.first() != Some(c));
    let rank = if diagonal { var_features.len().saturating_sub(features.len()) } else { var_features.len() }
        .div_ceil(features.len().max(1));
    let blocks = (0..usize::from(diagonal) + rank).flat_map(|b| {
        let k = b + usize::from(!diagonal);
        features.iter().map(move |f| if k == 0 { f.to_string() } else { format!("u{k}:{f}") })
    });
    let mut count = 0;
    for (k, want) in blocks.enumerate() {
        count += 1;
        match var_features.get(k) {
            Some(got) if *got == want => {}
            Some(got) if diagonal && k < features.len() => {
                return Err(loc.err(got, format!("expected column '{want}' (same features, same order)")));
            }
            Some(got) if !got.starts_with('u') => {
                return Err(loc.err(got, "column not in the data file (factor columns are named uK:FEATURE)"));
            }
            Some(got) => return Err(loc.err(got, format!("expected column '{want}' (factor blocks in order)"))),
            None => return Err(loc.err("", format!("missing column '{want}'"))),
        }
    }
    if let Some(extra) = var_features.get(count) {
        return Err(loc.err(extra, "column not in the data file"));
    }
    Ok(VarianceLayout { label: label_pos, diagonal, rank })
}

/// A line number and the fields of that line.
type Record<'a> = (usize, Vec<Cow<'a, str>>);

/// The next non-blank line split into exactly `width` fields.
pub(super) fn next_record<'a, R: BufRead>(
    lines: &'a mut LineReader<R>,
    source: &str,
    width: usize,
) -> Result<Option<Record<'a>>, ParseError> {
    let Some((line, text)) = lines.next_nonblank(source)? else {
        return Ok(None);
    };
    let loc = Loc { source, line };
    let fields = split_record(text).map_err(|m| loc.err(&excerpt(text), m))?;
    if fields.len() != width {
        return Err(loc.err(&excerpt(text), format!("expected {width} fields, found {}", fields.len())));
    }
    Ok(Some((line, fields)))
}

/// Splits one CSV record on commas, trimming whitespace around fields; a field wrapped in double
/// quotes may contain commas, and `""` inside it is one quote.
fn split_record(line: &str) -> Result<Vec<Cow<'_, str>>, &'static str> {
    if !line.contains('"') {
        return Ok(line.split(',').map(|f| Cow::Borrowed(f.trim())).collect());
    }
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted field"),
                    Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            match chars.next() {
                None => {
                    fields.push(Cow::Owned(field));
                    return Ok(fields);
                }
                Some(',') => fields.push(Cow::Owned(field)),
                Some(_) => return Err("unexpected character after a closing quote"),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(Cow::Owned(field.trim_end().to_string()));
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("quote inside an unquoted field"),
                    Some(c) => field.push(c),
                }
            }
            fields.push(Cow::Owned(field.trim_end().to_string()));
        }
    }
}

/// The start of a line, for naming a malformed record.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((k, _)) => format!("{}...", &text[..k]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn read_str(text: &str, label: Option<&str>) -> Result<Dataset<'static>, ParseError> {
        read_csv(text.as_bytes(), "d.csv", label)
    }

    fn read_var(text: &str, var: &str, label: Option<&str>) -> Result<Dataset<'static>, ParseError> {
        read_csv_with_variances(text.as_bytes(), "d.csv", var.as_bytes(), "v.csv", label)
    }

    fn assert_err(r: Result<Dataset<'static>, ParseError>, source: &str, line: usize, field: &str, msg: &str) {
        let e = r.unwrap_err();
        assert_eq!((e.source.as_str(), e.line, e.field.as_str()), (source, line, field), "{e}");
        assert!(e.message.contains(msg), "{e}");
    }

    #[test]
    fn label_is_last_column_by_default() {
        let d = read_str("a,b,y\n1,2,+1\n\n3, 4 ,-1.0\n", None).unwrap();
        assert_eq!(*d.labels, [1, -1]);
        assert_eq!(d.features.to_dense(), array![[1.0, 2.0], [3.0, 4.0]]);
        assert!(matches!(d.features, crate::data::Features::Dense(_)));
        assert_eq!(d.covariances, Covariances::None);
    }

    #[test]
    fn label_column_by_name_and_quoted_fields() {
        let d = read_str("\"class\",\"x, 1\",x2\n\"2\",0.5,\"-1e-3\"\n", Some("class")).unwrap();
        assert_eq!(*d.labels, [2]);
        assert_eq!(d.features.to_dense(), array![[0.5, -0.001]]);
    }

    #[test]
    fn variances_with_or_without_label_column() {
        let data = "a,y,b\n1,1,2\n3,-1,4\n";
        let without = read_var(data, "a,b\n0.1,0.2\n0,0.4\n", Some("y")).unwrap();
        let with = read_var(data, "y,a,b\n9,0.1,0.2\nx,0,0.4\n", Some("y")).unwrap();
        assert_eq!(without, with);
        let Covariances::Diagonal(c) = &with.covariances else { panic!("expected diagonal") };
        assert_eq!(c.variances, array![[0.1, 0.2], [0.0, 0.4]]);
        with.validate().unwrap();
    }

    #[test]
    fn errors_name_file_line_and_token() {
        assert_err(read_str("", None), "d.csv", 0, "", "empty input");
        assert_err(read_str("a,y\n", None), "d.csv", 0, "", "empty input");
        assert_err(read_str("a,y\n1,1\n2,abc\n", None), "d.csv", 3, "abc", "not an integer");
        assert_err(read_str("a,y\n1.5,1.5\n", None), "d.csv", 2, "1.5", "not an integer");
        assert_err(read_str("a,y\nNaN,1\n", None), "d.csv", 2, "NaN", "non-finite");
        assert_err(read_str("a,y\nx,1\n", None), "d.csv", 2, "x", "not a number");
        assert_err(read_str("a,y\n1,1,1\n", None), "d.csv", 2, "1,1,1", "expected 2 fields, found 3");
        assert_err(read_str("a,y\n\"1,1\n", None), "d.csv", 2, "\"1,1", "unterminated");
        assert_err(read_str("a,y\n1,1\n", Some("z")), "d.csv", 1, "z", "no such column");
        assert_err(read_str("y\n1\n", None), "d.csv", 1, "y", "no feature columns");
        assert_err(read_str("a,a,y\n1,1,1\n", None), "d.csv", 1, "a", "duplicate column");
    }

    #[test]
    fn variance_errors() {
        let data = "a,b,y\n1,2,1\n3,4,-1\n";
        assert_err(read_var(data, "a,b\n0.1,-0.2\n0,0\n", None), "v.csv", 2, "-0.2", "negative variance");
        assert_err(read_var(data, "a,b\n0.1,inf\n0,0\n", None), "v.csv", 2, "inf", "non-finite");
        assert_err(read_var(data, "b,a\n0,0\n0,0\n", None), "v.csv", 1, "b", "expected column 'a'");
        assert_err(read_var(data, "a\n0\n0\n", None), "v.csv", 1, "", "missing column 'b'");
        assert_err(read_var(data, "a,b,c\n0,0,0\n0,0,0\n", None), "v.csv", 1, "c", "not in the data file");
        assert_err(read_var(data, "a,b\n0,0\n", None), "v.csv", 0, "", "fewer rows");
        assert_err(read_var(data, "a,b\n0,0\n0,0\n0,0\n", None), "v.csv", 4, "", "more rows");
        assert_err(read_var(data, "a,b\n0,0\n0\n", None), "v.csv", 3, "0", "expected 2 fields");
        assert_err(read_var(data, "", None), "v.csv", 0, "", "empty input");
        // Low-rank factor blocks.
        let lr = read_var(data, "u1:a,u1:b\n1,2\n-1,0\n", None).unwrap();
        let Covariances::LowRank(c) = &lr.covariances else { panic!("expected low-rank") };
        assert_eq!(c.factors[0], array![[1.0], [2.0]]);
        assert_eq!(c.diagonal, None);
        let lr = read_var(data, "a,b,u1:a,u1:b,u2:a,u2:b\n0.5,0,1,2,3,4\n0,0,0,0,0,0\n", None).unwrap();
        let Covariances::LowRank(c) = &lr.covariances else { panic!("expected low-rank") };
        assert_eq!(c.factors[0], array![[1.0, 3.0], [2.0, 4.0]]);
        assert_eq!(c.diagonal, Some(array![[0.5, 0.0], [0.0, 0.0]]));
        assert_err(read_var(data, "u1:a\n0\n0\n", None), "v.csv", 1, "", "missing column 'u1:b'");
        assert_err(read_var(data, "a,b,u2:a,u2:b\n0,0,0,0\n0,0,0,0\n", None), "v.csv", 1, "u2:a", "'u1:a'");
        assert_err(read_var(data, "u1:a,u1:b\n0,nan\n0,0\n", None), "v.csv", 2, "nan", "non-finite");
        assert_err(read_var(data, "a,b,u1:b,u1:a\n0,0,0,0\n0,0,0,0\n", None), "v.csv", 1, "u1:b", "'u1:a'");
    }

    #[test]
    fn split_record_cases() {
        let f = |s| split_record(s).unwrap().into_iter().map(Cow::into_owned).collect::<Vec<_>>();
        assert_eq!(f("a, b ,c"), ["a", "b", "c"]);
        assert_eq!(f(" \"x,\"\"y\"\" \" , z"), ["x,\"y\" ", "z"]);
        assert_eq!(f("\"\",1"), ["", "1"]);
        assert_eq!(f("a,"), ["a", ""]);
        assert!(split_record("\"a\"b").is_err());
        assert!(split_record("a\"b,1").is_err());
    }
}
