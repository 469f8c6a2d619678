//! LIBSVM's precomputed-kernel layout: one example per line, `label 0:s 1:K(x, x_1) 2:K(x, x_2) ...`,
//! where `s ≥ 1` is the example's serial number (its row in the training Gram matrix; any integer at
//! prediction time) and index `j ≥ 1` holds the kernel value with training example `j` (absent = 0).
//!
//! The rows are read into dense features whose column 0 is the serial number and column `j` the value of
//! index `j`: the input of [`crate::kernel::Kernel::Precomputed`].
//!
//! ```
//! let text = "1 0:1 1:4 2:1\n-1 0:2 1:1 2:9\n";
//! let d = usvm::io::read_libsvm_precomputed(text.as_bytes(), "k.txt").unwrap();
//! assert_eq!(d.features.to_dense(), ndarray::array![[1.0, 4.0, 1.0], [2.0, 1.0, 9.0]]);
//! ```

use std::io::BufRead;

use ndarray::Array2;

use super::{LineReader, Loc, ParseError, empty_input, parse_label, parse_pair, parse_value, try_zeros};
use crate::data::{Dataset, Features};

/// Reads a precomputed-kernel file (see the module docs).
pub fn read_libsvm_precomputed(data: impl BufRead, source: &str) -> Result<Dataset<'static>, ParseError> {
    let mut lines = LineReader::new(data);
    let mut labels = Vec::new();
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut width = 1;
    // The line and token of the largest index, for the error when the rows cannot be allocated.
    let mut widest = (0, String::new());
    while let Some((line, text)) = lines.next_line(source)? {
        let loc = Loc { source, line };
        let mut tokens = text.split('#').next().unwrap_or_default().split_ascii_whitespace();
        let Some(label) = tokens.next() else { continue };
        let label = parse_label(loc, label)?;
        let serial = match tokens.next().map(|t| (t, t.split_once(':'))) {
            Some((t, Some(("0", v)))) => {
                let s = parse_value(loc, t, v)?;
                if !(s >= 1.0 && s.fract() == 0.0) {
                    return Err(loc.err(t, "the serial number 0:s must be a positive integer"));
                }
                s
            }
            Some((t, _)) => return Err(loc.err(t, "expected the serial number 0:s first (precomputed kernel)")),
            None => return Err(loc.err(label.to_string().as_str(), "missing the serial number 0:s")),
        };
        let mut row = vec![(0, serial)];
        for token in tokens {
            let (j, v) = parse_pair(loc, token, None)?;
            let j = j as usize;
            if row.last().is_some_and(|&(p, _)| j < p) {
                return Err(loc.err(token, "indices must be strictly ascending"));
            }
            row.push((j + 1, v));
            if j + 2 > width {
                width = j + 2;
                widest = (line, token.to_string());
            }
        }
        labels.push(label);
        rows.push(row);
    }
    if labels.is_empty() {
        return Err(empty_input(source));
    }
    let zeros = try_zeros(Loc { source, line: widest.0 }, &widest.1, "the kernel rows", &[rows.len(), width])?;
    let mut x = Array2::from_shape_vec((rows.len(), width), zeros).expect("ℓ·width zeros");
    for (i, row) in rows.iter().enumerate() {
        for &(j, v) in row {
            x[[i, j]] = v;
        }
    }
    Ok(Dataset::new(Features::dense(x), labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_line_and_field() {
        let read = |t: &str| read_libsvm_precomputed(t.as_bytes(), "k.txt");
        for (text, line, field) in [
            ("1 1:2\n", 1, "1:2"),
            ("1 0:1 1:2\n-1 0:1.5 1:1\n", 2, "0:1.5"),
            ("1 0:1 2:2 1:1\n", 1, "1:1"),
            ("1 0:1 1:nan\n", 1, "1:nan"),
            ("x 0:1\n", 1, "x"),
            ("1\n", 1, "1"),
        ] {
            let e = read(text).unwrap_err();
            assert_eq!((e.line, e.field.as_str()), (line, field), "{e}");
        }
        assert!(read("# nothing\n").is_err());
        let d = read("2 0:2 2:0.5 # c\n\n3 0:1 1:1\n").unwrap();
        assert_eq!(d.labels, vec![2, 3]);
        assert_eq!(d.features.to_dense(), ndarray::array![[2.0, 0.0, 0.5], [1.0, 1.0, 0.0]]);
    }
}
