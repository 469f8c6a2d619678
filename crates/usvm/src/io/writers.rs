//! Writers for the svm-gsu and CSV input formats, the inverses of [`super::read_svmgsu`] and
//! [`super::read_csv_with_variances`] (LIBSVM: [`super::write_libsvm`], [`super::write_libsvm_variances`]).
//! Floats are written in shortest round-trip form. Writers produce text only; the caller makes the
//! file appear atomically.
//!
//! - svm-gsu means `<id> j:v ...`: zeros omitted, except that the last feature is always written so a
//!   reader infers the same dimension; labels `<id> <label>`; covariances `<id> i,j:v ...` with the
//!   upper triangle (`i ≤ j`) of each `Σ_i` (diagonal forms write only `i,i` entries; low-rank forms
//!   their diagonal `j,j` and factor entries `uK,J:V`; exact zeros are omitted). Ids default to `1..ℓ`.
//! - CSV: a header of feature names plus the label column (last); the variance CSV has the same feature
//!   columns without the label (and factor blocks `uK:NAME` for low-rank forms). Full covariances have
//!   no variance CSV.

use std::io::{self, Write};

use crate::covariance::Covariances;
use crate::data::{Dataset, Features};

fn id(ids: Option<&[String]>, i: usize) -> String {
    ids.map_or_else(|| (i + 1).to_string(), |ids| ids[i].clone())
}

fn check_ids(data: &Dataset, ids: Option<&[String]>) -> io::Result<()> {
    match ids {
        Some(ids) if ids.len() != data.n_samples() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} ids for {} examples", ids.len(), data.n_samples()),
        )),
        Some(ids) if ids.iter().any(|s| s.is_empty() || s.chars().any(char::is_whitespace)) => {
            Err(io::Error::new(io::ErrorKind::InvalidInput, "ids must be non-empty and without whitespace"))
        }
        _ => Ok(()),
    }
}

/// svm-gsu means file.
pub fn write_svmgsu_means(data: &Dataset, ids: Option<&[String]>, out: &mut impl Write) -> io::Result<()> {
    check_ids(data, ids)?;
    let n = data.n_features();
    for i in 0..data.n_samples() {
        write!(out, "{}", id(ids, i))?;
        let row: Vec<(usize, f64)> = match &data.features {
            Features::Dense(a) => a.row(i).iter().copied().enumerate().collect(),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                idx.iter().map(|&j| j as usize).zip(val.iter().copied()).collect()
            }
        };
        let mut last_written = false;
        for &(j, v) in &row {
            if v != 0.0 || j + 1 == n {
                write!(out, " {}:{v}", j + 1)?;
                last_written = j + 1 == n;
            }
        }
        if !last_written && n > 0 {
            write!(out, " {n}:0")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// svm-gsu labels file.
pub fn write_svmgsu_labels(data: &Dataset, ids: Option<&[String]>, out: &mut impl Write) -> io::Result<()> {
    check_ids(data, ids)?;
    for (i, label) in data.labels.iter().enumerate() {
        writeln!(out, "{} {label}", id(ids, i))?;
    }
    Ok(())
}

/// svm-gsu covariance file (every form; `None` writes id-only lines, i.e. zero covariances).
pub fn write_svmgsu_covariances(data: &Dataset, ids: Option<&[String]>, out: &mut impl Write) -> io::Result<()> {
    check_ids(data, ids)?;
    let n = data.n_features();
    let cov = &data.covariances;
    for i in 0..data.n_samples() {
        write!(out, "{}", id(ids, i))?;
        match cov {
            Covariances::None => {}
            Covariances::Isotropic(c) => {
                if c.variances[i] != 0.0 {
                    for j in 1..=n {
                        write!(out, " {j},{j}:{}", c.variances[i])?;
                    }
                }
            }
            Covariances::Diagonal(c) => {
                for (j, &v) in c.variances.row(i).iter().enumerate().filter(|(_, v)| **v != 0.0) {
                    write!(out, " {},{}:{v}", j + 1, j + 1)?;
                }
            }
            Covariances::SparseDiagonal(c) => {
                let (idx, val) = c.variances.row(i);
                for (&j, &v) in idx.iter().zip(val).filter(|(_, v)| **v != 0.0) {
                    write!(out, " {},{}:{v}", j + 1, j + 1)?;
                }
            }
            Covariances::LowRank(c) => {
                if let Some(d) = c.diagonal_row(i) {
                    for (j, v) in d.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        write!(out, " {},{}:{v}", j + 1, j + 1)?;
                    }
                }
                for (k, column) in c.factors[i].columns().into_iter().enumerate() {
                    for (j, v) in column.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        write!(out, " u{},{}:{v}", k + 1, j + 1)?;
                    }
                }
            }
            Covariances::Full(c) => {
                let m = c.matrices.index_axis(ndarray::Axis(0), i);
                for a in 0..n {
                    for b in a..n {
                        // Symmetrise: the reader sets (a, b) and (b, a) from one entry.
                        let v = if a == b { m[[a, a]] } else { 0.5 * (m[[a, b]] + m[[b, a]]) };
                        if v != 0.0 {
                            write!(out, " {},{}:{v}", a + 1, b + 1)?;
                        }
                    }
                }
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Column names `names` (default `f1..fn`) checked for CSV-safety.
fn feature_names(n: usize, names: Option<&[String]>) -> io::Result<Vec<String>> {
    let names: Vec<String> = match names {
        Some(names) if names.len() != n => {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} names for {n} features", names.len())));
        }
        Some(names) => names.to_vec(),
        None => (1..=n).map(|j| format!("f{j}")).collect(),
    };
    Ok(names.into_iter().map(|s| quote(&s)).collect())
}

/// A CSV field, quoted when it needs to be.
fn quote(s: &str) -> String {
    if s.contains([',', '"']) || s.trim() != s || s.is_empty() {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV of the means with the label in the last column `label_col`.
pub fn write_csv(data: &Dataset, names: Option<&[String]>, label_col: &str, out: &mut impl Write) -> io::Result<()> {
    let names = feature_names(data.n_features(), names)?;
    writeln!(out, "{},{}", names.join(","), quote(label_col))?;
    for (i, label) in data.labels.iter().enumerate() {
        match &data.features {
            Features::Dense(a) => a.row(i).iter().try_for_each(|v| write!(out, "{v},"))?,
            Features::Sparse(_) => data.features.row_dense(i).iter().try_for_each(|v| write!(out, "{v},"))?,
        }
        writeln!(out, "{label}")?;
    }
    Ok(())
}

/// Variance CSV (same feature columns, no label): the diagonal of the diagonal forms; for a low-rank
/// form the factor blocks `uK:NAME` for `K = 1..max r_i` (zeros past an example's rank), after the
/// diagonal block when there is one. Full covariances are `InvalidInput`.
pub fn write_csv_variances(data: &Dataset, names: Option<&[String]>, out: &mut impl Write) -> io::Result<()> {
    let n = data.n_features();
    let names = feature_names(n, names)?;
    let (diagonal, rank) = match &data.covariances {
        Covariances::LowRank(c) => (c.diagonal.is_some(), c.factors.iter().map(|f| f.ncols()).max().unwrap_or(0)),
        _ => (true, 0),
    };
    let mut header: Vec<String> = if diagonal { names.clone() } else { Vec::new() };
    for k in 1..=rank {
        // `uK:NAME`, quoted like NAME when NAME needs quotes.
        header.extend(names.iter().map(|name| match name.strip_prefix('"') {
            Some(inner) => format!("\"u{k}:{inner}"),
            None => quote(&format!("u{k}:{name}")),
        }));
    }
    writeln!(out, "{}", header.join(","))?;
    for i in 0..data.n_samples() {
        let mut row: Vec<f64> = match &data.covariances {
            Covariances::None => vec![0.0; n],
            Covariances::Isotropic(c) => vec![c.variances[i]; n],
            Covariances::Diagonal(c) => c.variances.row(i).to_vec(),
            Covariances::SparseDiagonal(c) => {
                let mut row = vec![0.0; n];
                let (idx, val) = c.variances.row(i);
                idx.iter().zip(val).for_each(|(&j, &v)| row[j as usize] = v);
                row
            }
            Covariances::LowRank(c) => c.diagonal_row(i).map(<[f64]>::to_vec).unwrap_or_default(),
            Covariances::Full(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "full covariances cannot be written as a variance CSV (use the svm-gsu format, or a low-rank form)",
                ));
            }
        };
        if let Covariances::LowRank(c) = &data.covariances {
            let u = &c.factors[i];
            for k in 0..rank {
                if k < u.ncols() {
                    row.extend(u.column(k).iter());
                } else {
                    row.extend(std::iter::repeat_n(0.0, n));
                }
            }
        }
        let text: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        writeln!(out, "{}", text.join(","))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{ReadOptions, read_csv_with_variances, read_libsvm_with_variances, read_svmgsu};
    use ndarray::{Array2, array};

    fn quad_forms(c: &Covariances, l: usize, n: usize) -> Vec<f64> {
        let w: Vec<f64> = (0..n).map(|j| 1.0 + (j as f64) * 0.37).collect();
        (0..l).map(|i| c.as_dyn().quad_form(i, &w)).collect()
    }

    #[test]
    fn svmgsu_round_trip_of_every_form() {
        let x = array![[1.5, 0.0, -2.0, 0.0], [0.0, 0.1, 0.0, 0.0]];
        let base = Dataset::dense(x.clone(), vec![1, -1]);
        let u = array![[1.0, 0.5], [0.0, 2.0], [0.3, 0.0], [0.0, 0.0]];
        let forms = [
            Covariances::None,
            Covariances::isotropic(vec![0.5, 0.0]),
            Covariances::diagonal(array![[0.1, 0.0, 0.3, 1e-300], [1.0, 2.0, 3.0, 4.0]]),
            Covariances::low_rank(vec![u.clone(), u * 0.5], Some(array![[0.1; 4], [0.0; 4]])),
        ];
        for cov in forms {
            let data = base.clone().with_covariances(cov.clone());
            let (mut m, mut l, mut c) = (Vec::new(), Vec::new(), Vec::new());
            write_svmgsu_means(&data, None, &mut m).unwrap();
            write_svmgsu_labels(&data, None, &mut l).unwrap();
            write_svmgsu_covariances(&data, None, &mut c).unwrap();
            let mut cr: &[u8] = &c;
            let back = read_svmgsu((&m[..], "m"), (&l[..], "l"), Some((&mut cr, "c")), ReadOptions::default()).unwrap();
            assert_eq!(back.dataset.features.to_dense(), x);
            assert_eq!(*back.dataset.labels, [1, -1]);
            assert_eq!(back.ids, ["1", "2"]);
            let (got, want) = (quad_forms(&back.dataset.covariances, 2, 4), quad_forms(&cov, 2, 4));
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-14 * w.abs(), "{}: {got:?} vs {want:?}", cov.kind());
            }
        }
        let ids = vec!["a b".to_string(), "c".to_string()];
        assert!(write_svmgsu_labels(&base, Some(&ids), &mut Vec::new()).is_err());
    }

    #[test]
    fn csv_round_trip() {
        let x = array![[1.5, 0.0], [0.25, -3.0]];
        let var = array![[0.5, 0.0], [1e-7, 2.0]];
        let data = Dataset::dense(x.clone(), vec![3, 7]).with_covariances(Covariances::diagonal(var.clone()));
        let names = vec!["a,1".to_string(), "b".to_string()];
        let (mut d, mut v) = (Vec::new(), Vec::new());
        write_csv(&data, Some(&names), "class", &mut d).unwrap();
        write_csv_variances(&data, Some(&names), &mut v).unwrap();
        let back = read_csv_with_variances(&d[..], "d", &v[..], "v", Some("class")).unwrap();
        assert_eq!(back, data);
        let full = data.clone().with_covariances(Covariances::full(ndarray::Array3::zeros((2, 2, 2))));
        assert!(write_csv_variances(&full, None, &mut Vec::new()).is_err());
    }

    /// A rank-2 covariance on 784 features round-trips through every format in factor form: the svm-gsu
    /// covariance file, the LIBSVM variance file and the variance CSV.
    #[test]
    fn low_rank_round_trips_in_every_format() {
        let (l, n) = (3, 784);
        let x = Array2::from_shape_fn((l, n), |(i, j)| ((i * 7 + j) % 11) as f64 / 10.0);
        let factors: Vec<Array2<f64>> = (0..l)
            .map(|i| Array2::from_shape_fn((n, 2), |(j, k)| ((i + j * (k + 1)) % 5) as f64 * 0.1 - 0.2))
            .collect();
        let diag = Array2::from_shape_fn((l, n), |(i, j)| if j % 3 == 0 { 0.01 * (i + 1) as f64 } else { 0.0 });
        for diagonal in [None, Some(diag)] {
            let cov = Covariances::low_rank(factors.clone(), diagonal.clone());
            let data = Dataset::dense(x.clone(), vec![1, -1, 1]).with_covariances(cov.clone());
            let same = |back: &Dataset, what: &str| {
                let Covariances::LowRank(got) = &back.covariances else { panic!("{what}: not low-rank") };
                assert_eq!(got.factors, factors, "{what}");
                assert_eq!(got.diagonal, diagonal, "{what}");
            };
            let (mut m, mut lb, mut c) = (Vec::new(), Vec::new(), Vec::new());
            write_svmgsu_means(&data, None, &mut m).unwrap();
            write_svmgsu_labels(&data, None, &mut lb).unwrap();
            write_svmgsu_covariances(&data, None, &mut c).unwrap();
            let mut cr: &[u8] = &c;
            let back = read_svmgsu((&m[..], "m"), (&lb[..], "l"), Some((&mut cr, "c")), ReadOptions::default());
            same(&back.unwrap().dataset, "svm-gsu");
            // Only the non-zero entries are written: well under the dense upper triangle.
            assert!(c.len() < l * n * 2 * 16 + l * n * 8, "{} bytes", c.len());

            let (mut d, mut v) = (Vec::new(), Vec::new());
            crate::io::write_libsvm(&data, &mut d).unwrap();
            crate::io::write_libsvm_variances(&data, &mut v).unwrap();
            same(&read_libsvm_with_variances(&d[..], "d", &v[..], "v", Some(n)).unwrap().dataset, "LIBSVM");

            let (mut d, mut v) = (Vec::new(), Vec::new());
            write_csv(&data, None, "y", &mut d).unwrap();
            write_csv_variances(&data, None, &mut v).unwrap();
            same(&read_csv_with_variances(&d[..], "d", &v[..], "v", Some("y")).unwrap(), "CSV");
        }
    }
}
