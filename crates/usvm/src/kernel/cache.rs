//! An LRU cache of matrix columns for solvers that need Gram (or `Q`) columns on demand — LIBSVM's `Cache`.
//!
//! Column `i` is cached as a prefix `[0, len_i)` of its entries; a request for a longer prefix computes
//! only the missing tail. Entries are stored as [`Entry`] values: `f64`, or `f32` as LIBSVM's `Qfloat`
//! (twice the columns in the same memory; the values are computed in `f64` and rounded once). The total
//! number of cached entries stays within a budget set in megabytes (4 or 8 bytes per entry, at least two
//! full columns so that a solver can hold the two columns of a working pair); when it would be exceeded the
//! least recently used columns are dropped.
//!
//! [`ColumnCache::swap_index`] follows a solver that permutes its variables (shrinking): it swaps the
//! columns `i` and `j` and the entries `i` and `j` inside every cached column, dropping a column that
//! holds one of the two entries but not the other.
//!
//! ```
//! use usvm::kernel::cache::ColumnCache;
//! let mut cache = ColumnCache::<f64>::new(3, 1.0);
//! let mut calls = 0;
//! let mut fill = |start: usize, out: &mut [f64]| {
//!     calls += 1;
//!     for (k, v) in out.iter_mut().enumerate() {
//!         *v = (start + k) as f64;
//!     }
//! };
//! cache.fill(1, 2, &mut fill);
//! cache.fill(1, 3, &mut fill); // computes only entry 2
//! assert_eq!(cache.column(1), &[0.0, 1.0, 2.0]);
//! assert_eq!(calls, 2);
//! ```

/// The precision kernel values are stored (and, for dense rows, computed from) in: in files `"single"` or
/// `"double"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f32` entries, as LIBSVM and scikit-learn's `SVC` cache them: twice the columns per megabyte; each
    /// entry within half an `f32` ulp (3e-8 relative) of its `f64` value.
    Single,
    /// `f64` entries: the problem as given, to the last digit.
    #[default]
    Double,
}

/// A cached matrix entry: `f64`, or `f32` (the value rounded to nearest).
pub trait Entry: Copy + Default + Into<f64> + Send + Sync + std::fmt::Debug + 'static {
    /// Stores `values` (computed by `fill` into `scratch` when `Self` is not `f64`) into `out`.
    fn fill_from(out: &mut [Self], scratch: &mut Vec<f64>, fill: impl FnOnce(&mut [f64]));
}

impl Entry for f64 {
    fn fill_from(out: &mut [f64], _: &mut Vec<f64>, fill: impl FnOnce(&mut [f64])) {
        fill(out);
    }
}

impl Entry for f32 {
    fn fill_from(out: &mut [f32], scratch: &mut Vec<f64>, fill: impl FnOnce(&mut [f64])) {
        scratch.resize(out.len(), 0.0);
        fill(scratch);
        out.iter_mut().zip(scratch.iter()).for_each(|(o, &v)| *o = v as f32);
    }
}

/// The column cache. Columns are indexed `0..n`; `n` is also the sentinel of the LRU list.
#[derive(Debug, Clone)]
pub struct ColumnCache<T: Entry = f64> {
    columns: Vec<Vec<T>>,
    /// Doubly linked LRU list over the cached (non-empty) columns; `next[n]` is the least recently used.
    prev: Vec<usize>,
    next: Vec<usize>,
    budget: usize,
    used: usize,
    /// Where `f32` columns are computed before rounding.
    scratch: Vec<f64>,
}

impl<T: Entry> ColumnCache<T> {
    /// A cache of `n` columns (each at most `n` long) within `size_mb` megabytes (at least two columns).
    pub fn new(n: usize, size_mb: f64) -> Self {
        let entries = (size_mb.max(0.0) * (1u64 << 20) as f64 / std::mem::size_of::<T>() as f64) as usize;
        let mut prev = vec![0; n + 1];
        let mut next = vec![0; n + 1];
        prev[n] = n;
        next[n] = n;
        ColumnCache {
            columns: vec![Vec::new(); n],
            prev,
            next,
            budget: entries.max(2 * n),
            used: 0,
            scratch: Vec::new(),
        }
    }

    /// The budget in entries.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Entries currently cached.
    pub fn used(&self) -> usize {
        self.used
    }

    fn cached(&self, i: usize) -> bool {
        !self.columns[i].is_empty()
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = n;
        self.prev[n] = p;
    }

    /// Inserts `i` as the most recently used.
    fn link(&mut self, i: usize) {
        let s = self.columns.len();
        let last = self.prev[s];
        self.next[last] = i;
        self.prev[i] = last;
        self.next[i] = s;
        self.prev[s] = i;
    }

    fn evict(&mut self, i: usize) {
        self.unlink(i);
        self.used -= self.columns[i].len();
        self.columns[i] = Vec::new();
    }

    /// Makes column `i` hold at least its first `len` entries, calling `fill(start, out)` to compute the
    /// missing entries `start..len` into `out`, and marks it most recently used.
    pub fn fill(&mut self, i: usize, len: usize, fill: impl FnOnce(usize, &mut [f64])) {
        let have = self.columns[i].len();
        if have > 0 {
            self.unlink(i);
        }
        if have < len {
            let more = len - have;
            let sentinel = self.columns.len();
            while self.used + more > self.budget && self.next[sentinel] != sentinel {
                let lru = self.next[sentinel];
                self.evict(lru);
            }
            let column = &mut self.columns[i];
            column.reserve_exact(more);
            column.resize(len, T::default());
            self.used += more;
            T::fill_from(&mut column[have..len], &mut self.scratch, |out| fill(have, out));
        }
        if !self.columns[i].is_empty() {
            self.link(i);
        }
    }

    /// The cached prefix of column `i` (empty if not cached).
    pub fn column(&self, i: usize) -> &[T] {
        &self.columns[i]
    }

    /// Swaps the indices `i` and `j`: columns `i` and `j`, and entries `i` and `j` of every cached column.
    pub fn swap_index(&mut self, i: usize, j: usize) {
        if i == j {
            return;
        }
        for k in [i, j] {
            if self.cached(k) {
                self.unlink(k);
            }
        }
        self.columns.swap(i, j);
        for k in [i, j] {
            if self.cached(k) {
                self.link(k);
            }
        }
        let (lo, hi) = (i.min(j), i.max(j));
        let sentinel = self.columns.len();
        let mut h = self.next[sentinel];
        while h != sentinel {
            let following = self.next[h];
            let len = self.columns[h].len();
            if len > lo {
                if len > hi {
                    self.columns[h].swap(lo, hi);
                } else {
                    self.evict(h);
                }
            }
            h = following;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache over the matrix `m[r][c] = 100 r + c` under the permutation `perm` (position → index).
    fn filler(perm: &[usize], col: usize) -> impl FnOnce(usize, &mut [f64]) + '_ {
        move |start, out| {
            for (k, v) in out.iter_mut().enumerate() {
                *v = (100 * perm[start + k] + perm[col]) as f64;
            }
        }
    }

    #[test]
    fn lru_eviction_stays_within_budget_and_keeps_recent_columns() {
        let n = 1000;
        // 2.5 columns' worth of entries (the floor of two columns does not apply).
        let mut cache = ColumnCache::<f64>::new(n, 2500.0 * 8.0 / (1 << 20) as f64);
        assert_eq!(cache.budget(), 2500);
        let perm: Vec<usize> = (0..n).collect();
        cache.fill(0, n, filler(&perm, 0));
        cache.fill(1, n, filler(&perm, 1));
        cache.fill(0, n, filler(&perm, 0)); // 0 becomes the most recent
        cache.fill(2, n, filler(&perm, 2)); // evicts 1, the least recent
        assert!(cache.column(1).is_empty());
        assert_eq!(cache.column(0).len(), n);
        assert_eq!(cache.column(2)[7], 702.0);
        assert!(cache.used() <= cache.budget());
        // A partial column and its extension.
        cache.fill(3, 100, filler(&perm, 3));
        assert_eq!(cache.used(), 2100);
        cache.fill(3, 600, filler(&perm, 3));
        assert_eq!(cache.used(), 1600, "0 was evicted to make room");
        assert!(cache.column(0).is_empty());
        assert_eq!(cache.column(3)[599], 59903.0);
    }

    #[test]
    fn swap_index_tracks_a_permutation() {
        let n = 6;
        let mut cache = ColumnCache::<f64>::new(n, 1.0);
        let mut perm: Vec<usize> = (0..n).collect();
        cache.fill(0, n, filler(&perm, 0));
        cache.fill(1, 3, filler(&perm, 1));
        cache.fill(4, 5, filler(&perm, 4));
        for (a, b) in [(1, 4), (2, 5), (0, 3), (3, 3)] {
            cache.swap_index(a, b);
            perm.swap(a, b);
        }
        for c in 0..n {
            let col = cache.column(c);
            for (r, &v) in col.iter().enumerate() {
                assert_eq!(v, (100 * perm[r] + perm[c]) as f64, "column {c} row {r}");
            }
        }
        // Column at position 4 (was 1, 3 long) held row 1 but not row 4: dropped by the first swap.
        assert!(cache.column(4).is_empty());
        assert_eq!(cache.column(3).len(), n);
    }

    #[test]
    fn single_precision_holds_twice_the_entries_rounded_once() {
        let n = 1000;
        let mb = 2500.0 * 8.0 / (1 << 20) as f64;
        let mut cache = ColumnCache::<f32>::new(n, mb);
        assert_eq!(cache.budget(), 5000);
        let perm: Vec<usize> = (0..n).collect();
        for c in 0..5 {
            cache.fill(c, n, filler(&perm, c));
        }
        assert!((0..5).all(|c| cache.column(c).len() == n), "five columns fit in the budget of 2.5 f64 ones");
        let mut thirds = ColumnCache::<f32>::new(3, 1.0);
        thirds.fill(0, 3, |start, out| out.iter_mut().enumerate().for_each(|(k, v)| *v = (start + k + 1) as f64 / 3.0));
        assert_eq!(thirds.column(0), &[1.0f32 / 3.0, 2.0 / 3.0, 1.0]);
    }
}
