//! Parquet tables (feature `parquet`): one row per example, columns chosen by name. The label column
//! (default: the last column) holds integers (integral floats are accepted); an optional weight column
//! holds finite, non-negative per-example weights; optional variance columns hold the diagonal of `Σ_i`,
//! one per feature column in the same order; every other column is a feature, in the file's order. Feature,
//! weight and variance columns must be numeric (any integer or float type) without nulls.
//!
//! Errors are [`ParseError`]s whose `line` is the 1-based row (0 for the file or its schema) and whose
//! `field` is the column name: `FILE:ROW: field 'COLUMN': MESSAGE`.

use std::fs::File;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use ndarray::Array2;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::{Loc, ParseError, empty_input, try_zeros};
use crate::covariance::Covariances;
use crate::data::Dataset;

/// Which columns of a table are what (by name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableColumns {
    /// The label column (default: the last column).
    pub label: Option<String>,
    /// A column of per-example weights (not a feature).
    pub weight: Option<String>,
    /// Per-feature variance columns, one per feature column, in the features' order (not features).
    pub variances: Option<Vec<String>>,
}

/// Reads a Parquet file into a dataset with dense features (module docs).
pub fn read_parquet(file: File, source: &str, columns: &TableColumns) -> Result<Dataset<'static>, ParseError> {
    read_batches(file, source, columns, 1 << 16)
}

/// [`read_parquet`] in record batches of `batch` rows.
fn read_batches(
    file: File,
    source: &str,
    columns: &TableColumns,
    batch: usize,
) -> Result<Dataset<'static>, ParseError> {
    let whole = |field: &str, message: String| Loc { source, line: 0 }.err(field, message);
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| whole("", format!("not a readable Parquet file: {e}")))?;
    let schema = builder.schema().clone();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let position = |name: &str| {
        names
            .iter()
            .position(|&c| c == name)
            .ok_or_else(|| whole(name, format!("no such column (columns: {})", names.join(", "))))
    };
    if names.is_empty() {
        return Err(whole("", "the table has no columns".into()));
    }
    let label = match &columns.label {
        Some(name) => position(name)?,
        None => names.len() - 1,
    };
    let weight = columns.weight.as_deref().map(position).transpose()?;
    let variances: Vec<usize> = columns.variances.iter().flatten().map(|c| position(c)).collect::<Result<_, _>>()?;
    let mut roles = vec![None; names.len()];
    for (c, role) in
        [(Some(label), "label"), (weight, "weight")].into_iter().chain(variances.iter().map(|&c| (Some(c), "variance")))
    {
        let Some(c) = c else { continue };
        if let Some(other) = roles[c].replace(role) {
            return Err(whole(names[c], format!("named as both the {other} column and a {role} column")));
        }
    }
    let features: Vec<usize> = (0..names.len()).filter(|&c| roles[c].is_none()).collect();
    if features.is_empty() {
        return Err(whole(names[label], "no feature columns besides the label, weight and variance columns".into()));
    }
    if columns.variances.is_some() && variances.len() != features.len() {
        let listed: Vec<&str> = features.iter().map(|&c| names[c]).collect();
        return Err(whole(
            "",
            format!(
                "{} variance columns for {} feature columns ({}): give one per feature, in the same order",
                variances.len(),
                features.len(),
                listed.join(", ")
            ),
        ));
    }
    for &c in features.iter().chain(&variances).chain(&weight) {
        let t = schema.field(c).data_type();
        if !is_number(t) {
            return Err(whole(names[c], format!("has type {t}, not a number")));
        }
    }
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(usize::MAX);
    let (n, m) = (features.len(), variances.len());
    let top = Loc { source, line: 0 };
    let mut x = try_zeros(top, "", "the feature values", &[rows, n])?;
    let mut v = try_zeros(top, "", "the variances", &[rows, m])?;
    let reader = builder.with_batch_size(batch).build().map_err(|e| whole("", e.to_string()))?;
    let (mut y, mut w) = (Vec::with_capacity(rows), Vec::new());
    let mut row0 = 0;
    for batch in reader {
        let batch = batch.map_err(|e| Loc { source, line: row0 + 1 }.err("", format!("cannot read: {e}")))?;
        if row0 + batch.num_rows() > rows {
            return Err(Loc { source, line: rows + 1 }.err("", format!("more rows than the file's metadata ({rows})")));
        }
        let floats = |c: usize| numbers(source, names[c], batch.column(c), row0);
        for (j, &c) in features.iter().enumerate() {
            for (r, value) in floats(c)?.into_iter().enumerate() {
                x[(row0 + r) * n + j] = value;
            }
        }
        for (k, &c) in variances.iter().enumerate() {
            for (r, value) in floats(c)?.into_iter().enumerate() {
                if value < 0.0 {
                    return Err(Loc { source, line: row0 + r + 1 }.err(names[c], format!("negative variance {value}")));
                }
                v[(row0 + r) * m + k] = value;
            }
        }
        if let Some(c) = weight {
            for (r, value) in floats(c)?.into_iter().enumerate() {
                if value < 0.0 {
                    return Err(Loc { source, line: row0 + r + 1 }.err(names[c], format!("negative weight {value}")));
                }
                w.push(value);
            }
        }
        y.extend(labels(source, names[label], batch.column(label), row0)?);
        row0 += batch.num_rows();
    }
    if row0 < rows {
        return Err(Loc { source, line: row0 + 1 }.err("", format!("fewer rows than the file's metadata ({rows})")));
    }
    if y.is_empty() {
        return Err(empty_input(source));
    }
    let l = y.len();
    let covariances = if m == 0 {
        Covariances::None
    } else {
        Covariances::diagonal(Array2::from_shape_vec((l, n), v).expect("ℓ rows of n variances"))
    };
    let mut dataset = Dataset::dense(Array2::from_shape_vec((l, n), x).expect("ℓ rows of n features"), y)
        .with_covariances(covariances);
    dataset.weights = weight.map(|_| w);
    Ok(dataset)
}

fn is_number(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

/// The first null row of a column, as an error.
fn no_nulls(source: &str, name: &str, col: &ArrayRef, row0: usize) -> Result<(), ParseError> {
    match (0..col.len()).find(|&r| col.is_null(r)) {
        Some(r) => Err(Loc { source, line: row0 + r + 1 }.err(name, "missing value (null)")),
        None => Ok(()),
    }
}

/// A numeric column as finite f64s.
fn numbers(source: &str, name: &str, col: &ArrayRef, row0: usize) -> Result<Vec<f64>, ParseError> {
    no_nulls(source, name, col, row0)?;
    let cast = arrow_cast::cast(col, &DataType::Float64)
        .map_err(|e| Loc { source, line: row0 + 1 }.err(name, format!("cannot read as a number: {e}")))?;
    let values = cast.as_primitive::<Float64Type>().values();
    if let Some(r) = values.iter().position(|v| !v.is_finite()) {
        return Err(Loc { source, line: row0 + r + 1 }.err(name, format!("{} is not a finite number", values[r])));
    }
    Ok(values.to_vec())
}

/// The label column as integers (integral floats accepted).
fn labels(source: &str, name: &str, col: &ArrayRef, row0: usize) -> Result<Vec<i64>, ParseError> {
    no_nulls(source, name, col, row0)?;
    let t = col.data_type();
    if t.is_integer() {
        let cast = arrow_cast::cast(col, &DataType::Int64)
            .map_err(|e| Loc { source, line: row0 + 1 }.err(name, format!("label out of range: {e}")))?;
        return Ok(cast.as_primitive::<Int64Type>().values().to_vec());
    }
    if !t.is_floating() {
        return Err(Loc { source, line: 0 }.err(name, format!("label column has type {t}; labels must be integers")));
    }
    numbers(source, name, col, row0)?
        .into_iter()
        .enumerate()
        .map(|(r, v)| {
            // Every integral f64 strictly inside ±2^63 fits an i64.
            if v.fract() == 0.0 && v.abs() < 9_223_372_036_854_775_808.0 {
                Ok(v as i64)
            } else {
                Err(Loc { source, line: row0 + r + 1 }.err(name, format!("label {v} is not an integer")))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;

    use super::*;

    fn write(path: &std::path::Path, columns: Vec<(&str, ArrayRef)>) {
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
        // Two row groups, so that the rows arrive in more than one piece.
        let half = batch.num_rows() / 2;
        writer.write(&batch.slice(0, half)).unwrap();
        writer.flush().unwrap();
        writer.write(&batch.slice(half, batch.num_rows() - half)).unwrap();
        writer.close().unwrap();
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("usvm-parquet-{}-{name}.parquet", std::process::id()))
    }

    fn floats(v: &[f64]) -> ArrayRef {
        Arc::new(Float64Array::from(v.to_vec()))
    }

    #[test]
    fn columns_by_name_in_batches_of_any_size() {
        let path = temp("ok");
        write(
            &path,
            vec![
                ("a", floats(&[1.0, 2.0, 3.0, 4.0, 5.0])),
                ("y", Arc::new(Int32Array::from(vec![1, -1, 1, -1, 1])) as ArrayRef),
                ("b", Arc::new(Int32Array::from(vec![10, 20, 30, 40, 50])) as ArrayRef),
                ("w", floats(&[1.0, 0.5, 2.0, 1.0, 0.0])),
                ("va", floats(&[0.1, 0.2, 0.3, 0.4, 0.5])),
                ("vb", floats(&[1.0, 2.0, 3.0, 4.0, 5.0])),
            ],
        );
        let columns = TableColumns {
            label: Some("y".into()),
            weight: Some("w".into()),
            variances: Some(vec!["va".into(), "vb".into()]),
        };
        let whole = read_parquet(File::open(&path).unwrap(), "t.parquet", &columns).unwrap();
        for batch in [1, 2, 3] {
            assert_eq!(read_batches(File::open(&path).unwrap(), "t.parquet", &columns, batch).unwrap(), whole);
        }
        assert_eq!(whole.labels, vec![1, -1, 1, -1, 1]);
        assert_eq!(whole.features.to_dense(), ndarray::array![[1., 10.], [2., 20.], [3., 30.], [4., 40.], [5., 50.]]);
        assert_eq!(whole.weights, Some(vec![1.0, 0.5, 2.0, 1.0, 0.0]));
        let Covariances::Diagonal(d) = &whole.covariances else { panic!("diagonal covariances") };
        assert_eq!(d.variances.row(4).to_vec(), vec![0.5, 5.0]);
        // By default the label is the last column (integral floats are labels) and the rest are features.
        let plain = read_parquet(File::open(&path).unwrap(), "t.parquet", &TableColumns::default()).unwrap();
        assert_eq!((plain.n_features(), plain.labels.to_vec()), (5, vec![1, 2, 3, 4, 5]));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn bad_tables_name_the_row_and_column() {
        let path = temp("bad");
        let y: ArrayRef = Arc::new(Int32Array::from(vec![1, -1, 1, -1]));
        let read = |columns: &TableColumns| {
            read_batches(File::open(&path).unwrap(), "b.parquet", columns, 1).unwrap_err().to_string()
        };
        let label = |name: &str| TableColumns { label: Some(name.into()), ..Default::default() };
        write(&path, vec![("a", floats(&[1.0, 2.0, f64::NAN, 4.0])), ("y", y.clone())]);
        assert_eq!(read(&label("y")), "b.parquet:3: field 'a': NaN is not a finite number");
        assert_eq!(read(&label("z")), "b.parquet:0: field 'z': no such column (columns: a, y)");
        write(
            &path,
            vec![
                ("a", floats(&[1.0, 2.0, 3.0, 4.0])),
                ("s", Arc::new(StringArray::from(vec!["p", "q", "r", "s"])) as ArrayRef),
                ("y", y.clone()),
            ],
        );
        assert_eq!(read(&label("y")), "b.parquet:0: field 's': has type Utf8, not a number");
        let vars = TableColumns { variances: Some(vec!["a".into()]), ..label("y") };
        assert!(read(&vars).contains("field 's': has type Utf8"), "{}", read(&vars));
        write(
            &path,
            vec![
                ("a", floats(&[1.0, 2.0, 3.0, 4.0])),
                ("b", floats(&[1.0, 2.0, 3.0, 4.0])),
                ("va", floats(&[1.0, 1.0, -1.0, 1.0])),
                ("y", y.clone()),
            ],
        );
        let one = TableColumns { variances: Some(vec!["va".into()]), ..label("y") };
        assert_eq!(
            read(&one),
            "b.parquet:0: field '': 1 variance columns for 2 feature columns (a, b): give one per feature, in the same order"
        );
        let both = TableColumns { variances: Some(vec!["va".into(), "va".into()]), ..label("y") };
        assert!(
            read(&both).contains("field 'va': named as both the variance column and a variance column"),
            "{}",
            read(&both)
        );
        let shifted = TableColumns { variances: Some(vec!["va".into(), "a".into()]), ..label("y") };
        assert!(read(&shifted).contains("2 variance columns for 1 feature columns (b)"), "{}", read(&shifted));
        let negative = TableColumns { label: Some("y".into()), weight: Some("va".into()), variances: None };
        assert_eq!(read(&negative), "b.parquet:3: field 'va': negative weight -1");
        write(
            &path,
            vec![
                ("a", floats(&[1.0, 2.0, 3.0, 4.0])),
                ("y", Arc::new(Int32Array::from(vec![Some(1), Some(-1), None, Some(1)])) as ArrayRef),
            ],
        );
        assert_eq!(read(&label("y")), "b.parquet:3: field 'y': missing value (null)");
        std::fs::write(&path, "a,y\n1,1\n").unwrap();
        assert!(
            read(&label("y")).starts_with("b.parquet:0: field '': not a readable Parquet file"),
            "{}",
            read(&label("y"))
        );
        let _ = std::fs::remove_file(path);
    }
}
