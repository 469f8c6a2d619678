//! Support vectors packed for size: the rows' nonzero entries as a CSR matrix whose column indices are
//! stored as per-row gaps in LEB128 varints and whose values are stored as little-endian `f64` bytes, both
//! base64-encoded. Exact, and about 10.7 characters per value where a shortest round-trip decimal takes up
//! to 24 (17 significant digits, sign and exponent).
//!
//! ```
//! use usvm::model::PackedRows;
//! use usvm::Features;
//! let x = Features::dense(ndarray::array![[0.0, 1.0 / 3.0, 0.0], [2.5, 0.0, -1e-300]]);
//! let packed = PackedRows::pack(&x);
//! assert_eq!(packed.unpack().unwrap(), x);
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::data::{CsrMatrix, Features};
use crate::error::{Error, Result};

/// Rows packed for size (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedRows {
    /// Number of columns.
    pub n_cols: usize,
    /// Whether the rows are read back as dense rows (else as a CSR matrix).
    pub dense: bool,
    /// Row pointers into the stored entries (length `n_rows + 1`).
    pub indptr: Vec<usize>,
    /// Base64 of the column indices: per row, the first index and then the gaps to the previous one, each
    /// as an unsigned LEB128 varint.
    pub indices: String,
    /// Base64 of the stored values, little-endian `f64`.
    pub values: String,
}

impl PackedRows {
    /// Packs the nonzero entries of `x`'s rows (a sparse matrix's stored entries as they are).
    pub fn pack(x: &Features) -> PackedRows {
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        let mut push_row = |idx: &mut dyn Iterator<Item = (usize, f64)>| {
            let mut previous = 0;
            let mut count = 0;
            for (j, v) in idx {
                varint(if count == 0 { j } else { j - previous }, &mut indices);
                values.extend_from_slice(&v.to_le_bytes());
                previous = j;
                count += 1;
            }
            let last = *indptr.last().expect("indptr starts at 0");
            indptr.push(last + count);
        };
        match x {
            Features::Dense(m) => {
                for i in 0..m.nrows() {
                    let row = m.row(i);
                    push_row(&mut row.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, &v)| (j, v)));
                }
            }
            Features::Sparse(m) => {
                for i in 0..m.n_rows() {
                    let (idx, val) = m.row(i);
                    push_row(&mut idx.iter().zip(val).map(|(&j, &v)| (j as usize, v)));
                }
            }
        }
        PackedRows {
            n_cols: x.n_features(),
            dense: matches!(x, Features::Dense(_)),
            indptr,
            indices: STANDARD.encode(indices),
            values: STANDARD.encode(values),
        }
    }

    /// The rows, after checking the encoding, the shapes and the values.
    pub fn unpack(&self) -> Result<Features<'static>> {
        let bad = |what: &str| Error::Format(format!("packed support vectors: {what}"));
        let bytes = STANDARD.decode(&self.values).map_err(|e| bad(&format!("values: {e}")))?;
        let code = STANDARD.decode(&self.indices).map_err(|e| bad(&format!("indices: {e}")))?;
        let nnz = *self.indptr.last().ok_or_else(|| bad("indptr is empty"))?;
        if bytes.len() != 8 * nnz || self.indptr[0] != 0 || self.indptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("indptr does not match the values"));
        }
        let values: Vec<f64> =
            bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
        let mut indices = Vec::with_capacity(nnz);
        let mut pos = 0;
        for w in self.indptr.windows(2) {
            let mut j = 0usize;
            for k in 0..w[1] - w[0] {
                let step = read_varint(&code, &mut pos).ok_or_else(|| bad("indices are truncated"))?;
                j = if k == 0 { step } else { j.checked_add(step).ok_or_else(|| bad("index overflow"))? };
                indices.push(u32::try_from(j).map_err(|_| bad("an index beyond 2^32"))?);
            }
        }
        if pos != code.len() {
            return Err(bad("indices hold more entries than indptr"));
        }
        let csr = CsrMatrix {
            n_cols: self.n_cols,
            indptr: self.indptr.clone().into(),
            indices: indices.into(),
            values: values.into(),
        };
        let sparse = Features::Sparse(csr);
        sparse.validate().map_err(|e| bad(&e.to_string()))?;
        if !self.dense {
            return Ok(sparse);
        }
        let Features::Sparse(m) = &sparse else { unreachable!("built sparse") };
        crate::memory::reserve("the support vectors", "", &[m.n_rows(), m.n_cols])?;
        Ok(Features::dense(m.to_dense()))
    }
}

/// Appends `v` as an unsigned LEB128 varint.
fn varint(mut v: usize, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `pos`, advancing it; `None` when truncated or too long.
fn read_varint(code: &[u8], pos: &mut usize) -> Option<usize> {
    let mut v = 0usize;
    for shift in (0..64).step_by(7) {
        let b = *code.get(*pos)?;
        *pos += 1;
        v |= ((b & 0x7f) as usize).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_exactly_and_rejects_damage() {
        let dense =
            Features::dense(ndarray::array![[0.0, f64::MIN_POSITIVE, 0.0, 1e99], [0.0; 4], [-0.1, 0.0, 0.0, 5e-324]]);
        for x in [
            dense.clone(),
            Features::Sparse(CsrMatrix::from_rows(300, &[vec![(0, 1.5), (299, -2.0)], vec![(128, 0.25)]]).unwrap()),
        ] {
            let packed = PackedRows::pack(&x);
            assert_eq!(packed.unpack().unwrap(), x);
        }
        let packed = PackedRows::pack(&dense);
        let mut bad = packed.clone();
        bad.values.pop();
        assert!(bad.unpack().is_err());
        let mut bad = packed.clone();
        bad.indptr[1] += 1;
        assert!(bad.unpack().is_err());
        let mut bad = packed.clone();
        bad.n_cols = 2; // an index beyond the columns
        assert!(bad.unpack().is_err());
        let mut bad = packed;
        bad.values = STANDARD.encode(f64::NAN.to_le_bytes().repeat(4));
        assert!(bad.unpack().is_err());
    }
}
