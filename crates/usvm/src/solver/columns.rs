//! The columns a linear problem actually uses. A feature `j` that no example stores and no covariance
//! touches enters the objective only through `λ/2 w_j²`: it is decoupled from everything else and its
//! optimum is `w_j = 0` (`∂J/∂w_j = λ w_j`). Dropping such columns leaves the objective of the rest, its
//! gradient and Hessian unchanged, so a solver may work on the used columns only and put zeros back —
//! which, on wide sparse data (millions of features, a few per example), turns each vector operation of
//! the solver from O(n) into O(used columns).
//!
//! The used columns are found with a bitmap of the `n` columns (`n/8` bytes) and renumbered by rank. The
//! linear SVMs restrict once per fit and keep the restriction in their model (`model::Coefficients`);
//! [`crate::solver::exact::solve`], for its other callers, writes the full `w` back ([`UsedColumns::expand`]).

use crate::covariance::{Covariance, Covariances};
use crate::data::Features;
use crate::features::ColumnSet;
use crate::objective::Problem;

/// Restrict only when at most this fraction of the columns is used (otherwise the copy does not pay).
const MAX_USED_FRACTION: f64 = 0.5;

/// A problem's sparse features and covariances on its used columns, with the map back. The restricted
/// features borrow the row pointers and values of the problem's; only the column indices are renumbered.
pub(crate) struct UsedColumns<'a> {
    /// The used columns (frozen: ranked).
    columns: ColumnSet,
    /// How many there are.
    used: usize,
    n_features: usize,
    features: Features<'a>,
    covariances: Covariances,
}

impl<'a> UsedColumns<'a> {
    /// The restriction of `problem`, or `None` when its features are dense, its covariances may touch any
    /// column, or more than half of the columns are used.
    pub(crate) fn of(problem: &Problem<'a>) -> Option<Self> {
        Self::of_parts(problem.features, problem.covariances)
    }

    /// [`Self::of`] for the features and covariances of a problem.
    pub(crate) fn of_parts(features: &'a Features<'a>, covariances: &dyn Covariance) -> Option<Self> {
        let Features::Sparse(x) = features else { return None };
        let n = x.n_cols;
        let mut used = ColumnSet::new(n);
        x.mark_columns(&mut used);
        if !covariances.mark_columns(&mut used) {
            return None;
        }
        let count = used.len();
        if count as f64 > MAX_USED_FRACTION * n as f64 {
            return None;
        }
        used.freeze();
        let covariances = covariances.restrict_columns(&used)?;
        let features = Features::Sparse(x.restrict_columns(&used));
        Some(UsedColumns { used: count, columns: used, n_features: n, features, covariances })
    }

    /// The same problem (labels and weights borrowed from `problem`) on the used columns.
    pub(crate) fn problem<'b>(&'b self, problem: &Problem<'b>) -> Problem<'b> {
        Problem { features: &self.features, covariances: self.covariances.as_dyn(), ..*problem }
    }

    /// `θ = [w; b…]` on the used columns (the trailing entries after `w`, e.g. the intercept, are kept).
    pub(crate) fn restrict(&self, theta: &[f64]) -> Vec<f64> {
        let tail = &theta[self.n_features..];
        self.columns.members().map(|j| theta[j as usize]).chain(tail.iter().copied()).collect()
    }

    /// The used columns (frozen: a member's rank is its position in a restricted `θ`).
    pub(crate) fn columns(&self) -> &ColumnSet {
        &self.columns
    }

    /// The used columns, given up.
    pub(crate) fn into_columns(self) -> ColumnSet {
        self.columns
    }

    /// The inverse of [`Self::restrict`]: zeros on the dropped columns, written in one sequential pass
    /// ([`ColumnSet::spread`]; no zero-fill followed by a scatter).
    pub(crate) fn expand(&self, theta: &[f64]) -> Vec<f64> {
        let k = self.used;
        let mut out = huge_vec(self.n_features + theta.len() - k);
        self.columns.spread(&theta[..k], self.n_features, &mut out);
        out.extend_from_slice(&theta[k..]);
        out
    }
}

/// An empty vector with room for `len` values; on Linux a large one is advised to be backed by transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`, before any of its pages is touched): its first touch then costs one
/// page fault per 2 MiB rather than per 4 KiB. On wide data (16 MB at n = 2·10⁶) those faults otherwise take
/// as long as the solve.
fn huge_vec(len: usize) -> Vec<f64> {
    let out = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    if len >= 1 << 19 {
        const PAGE: usize = 4096;
        let start = (out.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (out.as_ptr() as usize + len * size_of::<f64>()) / PAGE * PAGE;
        // SAFETY: [start, end) lies inside `out`'s allocation, page-aligned; MADV_HUGEPAGE is advice on how
        // its pages are backed and leaves their contents unchanged. Its result is ignored: without huge
        // pages the vector is the same, only slower to touch.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
    out
}
