//! Repeated observations (the input of `usvm uncertainty repeated`): a CSV with a header row
//! ([`super::read_csv`]'s rules), one observation per line. Lines with the same value in the group column
//! are observations of one example, in order of first appearance; the label column (default: the last
//! column other than the group column) must be constant within a group; every other column is a
//! feature. Every group needs at least two observations (the unbiased covariance of
//! [`crate::gaussians::gaussians_from_repeats`] divides by `N_i - 1`).
//!
//! ```
//! let text = "id,a,y\nu,1,1\nv,0,-1\nu,3,1\nv,2,-1\n";
//! let obs = usvm::io::read_repeated_csv(text.as_bytes(), "obs.csv", "id", None).unwrap();
//! assert_eq!((obs.ids.clone(), obs.labels.clone()), (vec!["u".to_string(), "v".to_string()], vec![1, -1]));
//! assert_eq!(obs.groups[0], ndarray::array![[1.0], [3.0]]);
//! ```

use std::collections::HashMap;
use std::io::BufRead;

use ndarray::Array2;

use super::csv::{next_record, read_header};
use super::{LineReader, Loc, ParseError, empty_input, parse_label, parse_value};

/// Observations grouped by example.
#[derive(Debug, Clone, PartialEq)]
pub struct Observations {
    /// Each example's group-column value, in order of first appearance.
    pub ids: Vec<String>,
    /// Each example's label.
    pub labels: Vec<i64>,
    /// The names of the feature columns, in order.
    pub feature_names: Vec<String>,
    /// Each example's observations, one per row (`N_i × n`, `N_i ≥ 2`).
    pub groups: Vec<Array2<f64>>,
}

/// One example while reading: its label, the line of its first observation, its values row after row.
struct Group {
    label: i64,
    line: usize,
    values: Vec<f64>,
}

/// Reads repeated observations (see the module docs), grouped by the column named `group_col`.
pub fn read_repeated_csv(
    data: impl BufRead,
    source: &str,
    group_col: &str,
    label_col: Option<&str>,
) -> Result<Observations, ParseError> {
    let mut lines = LineReader::new(data);
    let (header_line, names) = read_header(&mut lines, source)?;
    let loc = Loc { source, line: header_line };
    let find = |col: &str| {
        names
            .iter()
            .position(|c| c == col)
            .ok_or_else(|| loc.err(col, format!("no such column (columns: {})", names.join(", "))))
    };
    let group = find(group_col)?;
    let label = match label_col {
        Some(col) => find(col)?,
        None => (0..names.len()).rev().find(|&c| c != group).unwrap_or(group),
    };
    if label == group {
        return Err(loc.err(group_col, "the label column cannot be the group column"));
    }
    let features: Vec<usize> = (0..names.len()).filter(|&c| c != group && c != label).collect();
    if features.is_empty() {
        return Err(loc.err("", "no feature columns besides the group and label columns"));
    }

    let mut ids: Vec<String> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    while let Some((line, fields)) = next_record(&mut lines, source, names.len())? {
        let loc = Loc { source, line };
        let y = parse_label(loc, &fields[label])?;
        let k = match index.get(fields[group].as_ref()) {
            Some(&k) => {
                let g = &groups[k];
                if g.label != y {
                    let message =
                        format!("label differs from label {} of group '{}' on line {}", g.label, ids[k], g.line);
                    return Err(loc.err(&fields[label], message));
                }
                k
            }
            None => {
                index.insert(fields[group].to_string(), ids.len());
                ids.push(fields[group].to_string());
                groups.push(Group { label: y, line, values: Vec::new() });
                ids.len() - 1
            }
        };
        for &c in &features {
            groups[k].values.push(parse_value(loc, &fields[c], &fields[c])?);
        }
    }
    if groups.is_empty() {
        return Err(empty_input(source));
    }
    let n = features.len();
    if let Some((g, id)) = groups.iter().zip(&ids).find(|(g, _)| g.values.len() < 2 * n) {
        let message = format!("group '{id}' has a single observation; the unbiased covariance needs at least two");
        return Err(Loc { source, line: g.line }.err(id, message));
    }
    Ok(Observations {
        labels: groups.iter().map(|g| g.label).collect(),
        groups: groups
            .into_iter()
            .map(|g| Array2::from_shape_vec((g.values.len() / n, n), g.values).expect("rows of n values"))
            .collect(),
        ids,
        feature_names: features.iter().map(|&c| names[c].clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn read(text: &str, label: Option<&str>) -> Result<Observations, ParseError> {
        read_repeated_csv(text.as_bytes(), "o.csv", "id", label)
    }

    fn assert_err(text: &str, line: usize, field: &str, msg: &str) {
        let e = read(text, None).unwrap_err();
        assert_eq!((e.source.as_str(), e.line, e.field.as_str()), ("o.csv", line, field), "{e}");
        assert!(e.message.contains(msg), "{e}");
    }

    #[test]
    fn groups_in_order_of_first_appearance() {
        let obs = read("a,id,b,y\n1,v,2,-1\n3,u,4,1\n5,v,6,-1\n\n7,u,8,1\n9,u,0,1\n", None).unwrap();
        assert_eq!(obs.ids, ["v", "u"]);
        assert_eq!(obs.labels, [-1, 1]);
        assert_eq!(obs.feature_names, ["a", "b"]);
        assert_eq!(obs.groups, [array![[1.0, 2.0], [5.0, 6.0]], array![[3.0, 4.0], [7.0, 8.0], [9.0, 0.0]]]);
        let by_name = read("y,id,a\n1,u,1\n1,u,2\n", Some("y")).unwrap();
        assert_eq!((by_name.feature_names, by_name.labels), (vec!["a".to_string()], vec![1]));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        assert_err("id,a,y\nu,1,1\nu,2,1\nv,0,-1\n", 4, "v", "group 'v' has a single observation");
        assert_err("id,a,b,y\nu,1,2,1\nu,2,1\n", 3, "u,2,1", "expected 4 fields, found 3");
        assert_err("id,a,y\nu,1,1\nu,NaN,1\n", 3, "NaN", "non-finite value");
        assert_err("id,a,y\nu,1,1\nu,2,-1\n", 3, "-1", "label differs from label 1 of group 'u' on line 2");
        assert_err("key,a,y\nu,1,1\n", 1, "id", "no such column");
        assert_err("id,y\nu,1\n", 1, "", "no feature columns");
        assert_err("id\nu\n", 1, "id", "the label column cannot be the group column");
        assert_err("id,a,y\n", 0, "", "empty input");
    }
}
