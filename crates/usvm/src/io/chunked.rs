//! Parallel parsing of line-oriented text. The input is read in blocks of whole lines (about 2 MB of
//! text held at once), each block is cut at line boundaries into chunks that are parsed in parallel,
//! and the chunks' records are appended in file order to a [`Store`]. The first failure in file order
//! is reported with the file's line number, as a line-by-line reader would report it.
//!
//! A [`Store`] keeps the entries of every record in the storage the data's fill calls for: dense rows
//! while at least half of the cells are present, CSR otherwise; [`Store::finish`] makes the final choice
//! from the whole file's fill.

use std::io::BufRead;

use ndarray::Array2;
use rayon::prelude::*;

use super::{Loc, ParseError};
use crate::data::CsrMatrix;

/// Bytes of text read per block. At 4 MB the chunks' parsed rows (about as large) went above glibc's
/// raised mmap threshold and stayed in its heap once freed: 1.51 × the data's peak memory on a 50,000 × 100
/// svm-gsu fit against 1.43 × at 2 MB, with the same throughput (bench/RESULTS.md).
const BLOCK: usize = 2 << 20;
/// The smallest chunk worth a task of its own.
const MIN_CHUNK: usize = 256 << 10;
/// Marks an absent cell of dense rows (a NaN, which no reader accepts as a value).
const ABSENT: u64 = 0x7ff8_dead_beef_0001;

/// The records parsed from one chunk: per record its metadata, line and the end of its `(index, value)`
/// entries.
pub(crate) struct Rows<M> {
    meta: Vec<M>,
    lines: Vec<usize>,
    ends: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    /// One past the largest index pushed.
    width: usize,
}

impl<M> Rows<M> {
    fn new() -> Self {
        Rows {
            meta: Vec::new(),
            lines: Vec::new(),
            ends: Vec::new(),
            indices: Vec::new(),
            values: Vec::new(),
            width: 0,
        }
    }

    /// Adds entry `j` (0-based) of the current record.
    pub fn push(&mut self, j: u32, v: f64) {
        self.width = self.width.max(j as usize + 1);
        self.indices.push(j);
        self.values.push(v);
    }

    /// Ends the current record, read from `line`.
    pub fn end(&mut self, line: usize, meta: M) {
        self.ends.push(self.indices.len());
        self.lines.push(line);
        self.meta.push(meta);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The entries of record `r`.
    fn row(&self, r: usize) -> (&[u32], &[f64]) {
        let range = if r == 0 { 0 } else { self.ends[r - 1] }..self.ends[r];
        (&self.indices[range.clone()], &self.values[range])
    }
}

/// Parses one line of a format.
pub(crate) trait LineParser: Sync {
    /// What a record keeps besides its entries (a label, an id, ...).
    type Meta: Send + Sync;

    /// Parses `text` (one line without its terminator) at `loc` into `out`: nothing for a line without
    /// data, else one record ([`Rows::push`] its entries, then [`Rows::end`]). `tokens` is scratch space.
    fn parse<'t>(
        &self,
        loc: Loc,
        text: &'t str,
        tokens: &mut Vec<&'t str>,
        out: &mut Rows<Self::Meta>,
    ) -> Result<(), ParseError>;
}

/// The first failure of an input, with the first token of its line (svm-gsu files put the id there).
pub(crate) struct Failure {
    pub error: ParseError,
    pub first_token: String,
}

/// The records read before the first failure (all of them when there is none), in file order.
pub(crate) struct Parsed<M> {
    pub meta: Vec<M>,
    pub lines: Vec<usize>,
    pub failure: Option<Failure>,
}

/// Parses `reader` line by line with `parser`, in parallel chunks, appending each record's entries to
/// `store`. Reading stops at the first failure.
pub(crate) fn parse<P: LineParser>(
    reader: impl BufRead,
    source: &str,
    parser: &P,
    store: &mut Store,
) -> Parsed<P::Meta> {
    let mut blocks = BlockReader { reader, buf: Vec::new(), len: 0, done: false, error: None };
    let mut out = Parsed { meta: Vec::new(), lines: Vec::new(), failure: None };
    let (mut base, mut first_block) = (0, true);
    loop {
        let len = blocks.fill();
        if len == 0 {
            break;
        }
        let chunks = split_lines(&blocks.buf[..len]);
        let parse_one = |(k, text): (usize, &&[u8])| parse_chunk(parser, source, text, first_block && k == 0);
        let parsed: Vec<Chunk<P::Meta>> = if chunks.len() == 1 {
            chunks.iter().enumerate().map(parse_one).collect()
        } else {
            chunks.par_iter().enumerate().map(parse_one).collect()
        };
        // Records after a failure are dropped; the lines of each chunk are numbered from the input's start.
        let mut parsed = parsed;
        parsed.truncate(parsed.iter().position(|c| c.failure.is_some()).map_or(parsed.len(), |k| k + 1));
        for chunk in &mut parsed {
            chunk.rows.lines.iter_mut().for_each(|l| *l += base);
            if let Some(failure) = &mut chunk.failure {
                failure.error.line += base;
            }
            base += chunk.n_lines;
        }
        let rows: Vec<&Rows<P::Meta>> = parsed.iter().map(|c| &c.rows).collect();
        if let Err(message) = store.append(&rows) {
            let line = rows.iter().find_map(|r| r.lines.first().copied()).unwrap_or(base);
            out.failure = Some(Failure { error: Loc { source, line }.err("", message), first_token: String::new() });
            return out;
        }
        for mut chunk in parsed {
            out.meta.append(&mut chunk.rows.meta);
            out.lines.append(&mut chunk.rows.lines);
            if chunk.failure.is_some() {
                out.failure = chunk.failure;
                return out;
            }
        }
        blocks.consume(len);
        first_block = false;
    }
    if let Some(e) = blocks.error {
        let error = Loc { source, line: base + 1 }.err("", format!("cannot read: {e}"));
        out.failure = Some(Failure { error, first_token: String::new() });
    }
    out
}

/// Reads whole lines into a reused buffer.
struct BlockReader<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes of `buf` read and not consumed.
    len: usize,
    done: bool,
    error: Option<std::io::Error>,
}

impl<R: BufRead> BlockReader<R> {
    /// Reads up to about [`BLOCK`] bytes (more when a line is longer) and returns the length of the
    /// whole lines at the start of the buffer (the last line may lack its terminator at the end of the
    /// input); 0 at the end. After a read error the partial line is dropped.
    fn fill(&mut self) -> usize {
        let mut want = BLOCK.max(self.len + 1);
        loop {
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            while self.len < want && !self.done {
                match self.reader.read(&mut self.buf[self.len..want]) {
                    Ok(0) => self.done = true,
                    Ok(n) => self.len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.error = Some(e);
                        self.done = true;
                    }
                }
            }
            let whole = self.buf[..self.len].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            match (self.done, whole) {
                (true, _) if self.error.is_none() => return self.len,
                (true, w) | (false, w @ 1..) => return w,
                (false, 0) => want *= 2,
            }
        }
    }

    /// Drops the first `n` bytes of the buffer.
    fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
        if self.done && self.error.is_some() {
            self.len = 0;
        }
    }
}

/// `text` cut at line boundaries into chunks of at least [`MIN_CHUNK`] bytes, a few per thread.
fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    let n = (text.len() / MIN_CHUNK).clamp(1, 4 * rayon::current_num_threads());
    let mut chunks = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let target = (k * text.len() / n).max(start);
        match text[target..].iter().position(|&b| b == b'\n') {
            Some(p) => {
                chunks.push(&text[start..target + p + 1]);
                start = target + p + 1;
            }
            None => break,
        }
    }
    if start < text.len() {
        chunks.push(&text[start..]);
    }
    chunks
}

/// One chunk's records, its number of lines and its failure (line numbers relative to the chunk).
struct Chunk<M> {
    rows: Rows<M>,
    n_lines: usize,
    failure: Option<Failure>,
}

/// Parses the lines of `text` (`first`: it starts the input, whose byte-order mark is dropped).
fn parse_chunk<P: LineParser>(parser: &P, source: &str, text: &[u8], first: bool) -> Chunk<P::Meta> {
    let mut chunk = Chunk { rows: Rows::new(), n_lines: 0, failure: None };
    if text.is_empty() {
        return chunk;
    }
    let mut tokens = Vec::new();
    for bytes in text.strip_suffix(b"\n").unwrap_or(text).split(|&b| b == b'\n') {
        chunk.n_lines += 1;
        let loc = Loc { source, line: chunk.n_lines };
        let Ok(line) = std::str::from_utf8(bytes) else {
            let error = loc.err("", "cannot read: stream did not contain valid UTF-8");
            chunk.failure = Some(Failure { error, first_token: String::new() });
            break;
        };
        let line = line.trim_end_matches('\r');
        let line = if first && chunk.n_lines == 1 { line.trim_start_matches('\u{feff}') } else { line };
        if let Err(error) = parser.parse(loc, line, &mut tokens, &mut chunk.rows) {
            let first_token = line.split_ascii_whitespace().next().unwrap_or_default().to_string();
            chunk.failure = Some(Failure { error, first_token });
            break;
        }
    }
    chunk
}

/// Whether `nnz` entries fill at least half of `rows × n` cells.
fn is_dense(nnz: usize, rows: usize, n: usize) -> bool {
    rows > 0 && n > 0 && 2 * nnz as u128 >= rows as u128 * n as u128
}

/// A dense `rows × n` table or a CSR matrix: what a [`Store`] finishes as.
pub(crate) enum Table {
    Dense(Array2<f64>),
    Sparse(CsrMatrix<'static>),
}

/// Records' entries (distinct indices within a record), held dense or CSR by their fill so far.
pub(crate) struct Store {
    /// The number of columns, when it is given.
    fixed: Option<usize>,
    /// What the store holds, for allocation errors.
    what: &'static str,
    rows: usize,
    nnz: usize,
    /// One past the largest index appended.
    width: usize,
    kind: Kind,
}

enum Kind {
    /// No record yet.
    Undecided,
    /// Row-major, `stride ≥ width` cells a row, [`ABSENT`] where no entry was given.
    Dense {
        cells: Vec<f64>,
        stride: usize,
    },
    Sparse {
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    },
}

impl Store {
    /// An empty store of `n_features` columns (inferred from the indices when `None`).
    pub fn new(n_features: Option<usize>, what: &'static str) -> Self {
        Store { fixed: n_features, what, rows: 0, nnz: 0, width: 0, kind: Kind::Undecided }
    }

    /// One past the largest index appended.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether no entry was stored.
    pub fn is_empty(&self) -> bool {
        self.nnz == 0
    }

    /// Appends the records of `chunks`, in order; the error is the message of a failed allocation.
    fn append<M: Sync>(&mut self, chunks: &[&Rows<M>]) -> Result<(), String> {
        let r: usize = chunks.iter().map(|c| c.len()).sum();
        let k: usize = chunks.iter().map(|c| c.values.len()).sum();
        if r == 0 {
            return Ok(());
        }
        self.width = chunks.iter().map(|c| c.width).fold(self.width, usize::max);
        let n = self.fixed.unwrap_or(self.width);
        if matches!(self.kind, Kind::Undecided) {
            self.kind = match is_dense(k, r, n) {
                true => Kind::Dense { cells: Vec::new(), stride: n },
                false => Kind::Sparse { indptr: vec![0], indices: Vec::new(), values: Vec::new() },
            };
        }
        if let Kind::Dense { stride, .. } = self.kind {
            if !is_dense(self.nnz + k, self.rows + r, n) {
                self.make_sparse();
            } else if n > stride {
                self.restride(n.max(stride + stride / 4))?;
            }
        }
        match &mut self.kind {
            Kind::Dense { cells, stride } => push_dense(cells, *stride, self.rows, chunks, self.what)?,
            Kind::Sparse { indptr, indices, values } => {
                for rows in chunks {
                    indices.extend_from_slice(&rows.indices);
                    values.extend_from_slice(&rows.values);
                    let base = *indptr.last().expect("indptr starts with 0");
                    indptr.extend(rows.ends.iter().map(|e| base + e));
                }
            }
            Kind::Undecided => unreachable!("decided above"),
        }
        self.rows += r;
        self.nnz += k;
        Ok(())
    }

    /// Widens (or narrows, when every index fits) dense rows to `stride` cells, in place.
    fn restride(&mut self, new: usize) -> Result<(), String> {
        let Kind::Dense { cells, stride } = &mut self.kind else { return Ok(()) };
        let (old, rows) = (*stride, self.rows);
        if new > old {
            reserve_cells(cells, rows, new, self.what)?;
            cells.resize(rows * new, f64::from_bits(ABSENT));
            for i in (0..rows).rev() {
                cells.copy_within(i * old..(i + 1) * old, i * new);
                cells[i * new + old..(i + 1) * new].fill(f64::from_bits(ABSENT));
            }
        } else if new < old {
            for i in 0..rows {
                cells.copy_within(i * old..i * old + new, i * new);
            }
            cells.truncate(rows * new);
        }
        *stride = new;
        Ok(())
    }

    /// Moves dense rows into CSR.
    fn make_sparse(&mut self) {
        let Kind::Dense { cells, stride } = &self.kind else { return };
        let (mut indices, mut values) = (Vec::with_capacity(self.nnz), Vec::with_capacity(self.nnz));
        let mut indptr = Vec::with_capacity(self.rows + 1);
        indptr.push(0);
        if *stride > 0 {
            for row in cells.chunks_exact(*stride) {
                // Every present cell was written from a `u32` index (`Rows::push`), so `j` fits.
                for (j, &v) in row.iter().enumerate().filter(|(_, v)| v.to_bits() != ABSENT) {
                    indices.push(j as u32);
                    values.push(v);
                }
                indptr.push(indices.len());
            }
        }
        self.kind = Kind::Sparse { indptr, indices, values };
    }

    /// The entries of record `i`.
    pub fn row(&self, i: usize) -> Vec<(usize, f64)> {
        match &self.kind {
            Kind::Dense { cells, stride } => cells[i * stride..(i + 1) * stride]
                .iter()
                .enumerate()
                .filter(|(_, v)| v.to_bits() != ABSENT)
                .map(|(j, &v)| (j, v))
                .collect(),
            Kind::Sparse { indptr, indices, values } => {
                let r = indptr[i]..indptr[i + 1];
                indices[r.clone()].iter().map(|&j| j as usize).zip(values[r].iter().copied()).collect()
            }
            Kind::Undecided => Vec::new(),
        }
    }

    /// The records `order` (all of them, in order, when `None`) as `n` columns (`n ≥` [`Self::width`]):
    /// dense when at least half of the file's `records × n` cells were given, else CSR. `loc` names the
    /// input in an allocation error.
    pub fn finish(mut self, n: usize, order: Option<&[usize]>, loc: Loc) -> Result<Table, ParseError> {
        debug_assert!(n >= self.width);
        let dense = is_dense(self.nnz, self.rows, n);
        if !dense && matches!(self.kind, Kind::Dense { .. }) {
            self.make_sparse();
        }
        let rows = order.map_or(self.rows, <[usize]>::len);
        match self.kind {
            Kind::Dense { mut cells, stride } => {
                if let Some(order) = order {
                    select_rows_in_place(&mut cells, stride, order);
                }
                self.kind = Kind::Dense { cells, stride };
                self.rows = rows;
                self.restride(n).map_err(|message| loc.err("", message))?;
                let Kind::Dense { mut cells, .. } = self.kind else { unreachable!("dense") };
                cells.par_chunks_mut(1 << 16).for_each(|c| {
                    c.iter_mut().filter(|v| v.to_bits() == ABSENT).for_each(|v| *v = 0.0);
                });
                cells.shrink_to_fit();
                Ok(Table::Dense(Array2::from_shape_vec((rows, n), cells).expect("rows × n cells")))
            }
            Kind::Sparse { indptr, indices, values } => {
                let m = CsrMatrix::new(n, indptr, indices, values);
                let m = match order {
                    Some(order) if order.len() != m.n_rows() || order.iter().enumerate().any(|(k, &i)| k != i) => {
                        m.select_rows(order)
                    }
                    _ => m,
                };
                if dense { Ok(Table::Dense(super::try_dense(loc, self.what, &m)?)) } else { Ok(Table::Sparse(m)) }
            }
            Kind::Undecided => {
                let m = CsrMatrix::new(n, vec![0], Vec::new(), Vec::new());
                Ok(Table::Sparse(m))
            }
        }
    }
}

/// Appends the records of `chunks` to dense `cells` of `stride` cells a row, which hold `held` rows; the
/// chunks are copied in parallel.
fn push_dense<M: Sync>(
    cells: &mut Vec<f64>,
    stride: usize,
    held: usize,
    chunks: &[&Rows<M>],
    what: &str,
) -> Result<(), String> {
    let r: usize = chunks.iter().map(|c| c.len()).sum();
    reserve_cells(cells, held + r, stride, what)?;
    cells.resize((held + r) * stride, f64::from_bits(ABSENT));
    let mut parts = Vec::with_capacity(chunks.len());
    let mut rest = &mut cells[held * stride..];
    for rows in chunks {
        let (part, tail) = rest.split_at_mut(rows.len() * stride);
        parts.push((part, *rows));
        rest = tail;
    }
    parts.into_par_iter().for_each(|(part, rows)| {
        for (i, row) in part.chunks_exact_mut(stride).enumerate() {
            let (idx, val) = rows.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                row[j as usize] = v;
            }
        }
    });
    Ok(())
}

/// Cells (64 MB) a growing dense store reserves at once once it holds more than a million: an allocation
/// that large is mapped on its own, so that growing it later remaps its pages instead of copying them, and
/// the capacity not yet written takes no memory.
const LARGE_CELLS: usize = 1 << 23;

/// Reserves dense `rows × stride` cells, checked against the memory available; the capacity at least
/// doubles when it grows (to [`LARGE_CELLS`] at once past a million cells).
fn reserve_cells(cells: &mut Vec<f64>, rows: usize, stride: usize, what: &str) -> Result<(), String> {
    let fail = || super::alloc_message(what, &[rows, stride]);
    let len = rows.checked_mul(stride).filter(|_| crate::memory::fits(&[rows, stride])).ok_or_else(fail)?;
    if len <= cells.capacity() {
        return Ok(());
    }
    let floor = if len > 1 << 20 { LARGE_CELLS } else { 0 };
    let target = len.max(2 * cells.capacity()).max(floor);
    match cells.try_reserve_exact(target - cells.len()).or_else(|_| cells.try_reserve_exact(len - cells.len())) {
        Ok(()) => Ok(()),
        Err(_) => Err(fail()),
    }
}

/// Keeps rows `order` of the row-major `cells` (`stride` cells a row), in that order, in place.
fn select_rows_in_place(cells: &mut Vec<f64>, stride: usize, order: &[usize]) {
    let rows = cells.len().checked_div(stride).unwrap_or(0);
    if order.windows(2).all(|w| w[0] < w[1]) {
        for (k, &i) in order.iter().enumerate().filter(|&(k, &i)| k != i) {
            cells.copy_within(i * stride..(i + 1) * stride, k * stride);
        }
    } else {
        // A permutation with the unused rows last, applied cycle by cycle through one spare row.
        let mut used = vec![false; rows];
        order.iter().for_each(|&i| used[i] = true);
        let perm: Vec<usize> = order.iter().copied().chain((0..rows).filter(|&i| !used[i])).collect();
        let mut done = vec![false; rows];
        let mut spare = vec![0.0; stride];
        for start in 0..rows {
            if done[start] || perm[start] == start {
                continue;
            }
            spare.copy_from_slice(&cells[start * stride..(start + 1) * stride]);
            let mut k = start;
            loop {
                done[k] = true;
                let src = perm[k];
                if src == start {
                    cells[k * stride..(k + 1) * stride].copy_from_slice(&spare);
                    break;
                }
                cells.copy_within(src * stride..(src + 1) * stride, k * stride);
                k = src;
            }
        }
    }
    cells.truncate(order.len() * stride);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(rows: &[&[f64]]) -> Vec<f64> {
        rows.iter().flat_map(|r| r.iter().copied()).collect()
    }

    #[test]
    fn rows_are_selected_in_place_in_any_order() {
        let all = cells(&[&[0.0, 0.5], &[1.0, 1.5], &[2.0, 2.5], &[3.0, 3.5]]);
        for order in [vec![0, 1, 2, 3], vec![1, 3], vec![3, 0, 2], vec![2, 3, 0, 1], vec![1, 0], vec![]] {
            let mut c = all.clone();
            select_rows_in_place(&mut c, 2, &order);
            let want: Vec<f64> = order.iter().flat_map(|&i| [i as f64, i as f64 + 0.5]).collect();
            assert_eq!(c, want, "{order:?}");
        }
    }

    #[test]
    fn lines_are_split_at_line_boundaries() {
        let text: Vec<u8> = (0..200_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let chunks = split_lines(&text);
        assert_eq!(chunks.concat(), text);
        assert!(chunks.iter().all(|c| c.ends_with(b"\n")));
    }
}
