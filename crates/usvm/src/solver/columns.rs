//! The columns a linear problem actually uses. A feature `j` that no example stores and no covariance
//! touches enters the objective only through `λ/2 w_j²`: it is decoupled from everything else and its
//! optimum is `w_j = 0` (`∂J/∂w_j = λ w_j`). Dropping such columns leaves the objective of the rest, its
//! gradient and Hessian unchanged, so a solver may work on the used columns only and put zeros back —
//! which, on wide sparse data (millions of features, a few per example), turns each vector operation of
//! the solver from O(n) into O(used columns).

use crate::covariance::Covariances;
use crate::data::Features;
use crate::objective::Problem;

/// Restrict only when at most this fraction of the columns is used (otherwise the copy does not pay).
const MAX_USED_FRACTION: f64 = 0.5;

/// A problem's sparse features and covariances on its used columns, with the map back.
pub(crate) struct UsedColumns {
    /// The used columns, ascending.
    columns: Vec<usize>,
    n_features: usize,
    features: Features<'static>,
    covariances: Covariances,
}

impl UsedColumns {
    /// The restriction of `problem`, or `None` when its features are dense, its covariances may touch any
    /// column, or more than half of the columns are used.
    pub(crate) fn of(problem: &Problem<'_>) -> Option<Self> {
        let Features::Sparse(x) = problem.features else { return None };
        let n = x.n_cols;
        let mut used = vec![false; n];
        x.mark_columns(&mut used);
        if !problem.covariances.mark_columns(&mut used) {
            return None;
        }
        let columns: Vec<usize> = (0..n).filter(|&j| used[j]).collect();
        if columns.len() as f64 > MAX_USED_FRACTION * n as f64 {
            return None;
        }
        let mut new_index = vec![usize::MAX; n];
        columns.iter().enumerate().for_each(|(k, &j)| new_index[j] = k);
        let covariances = problem.covariances.restrict_columns(&new_index, columns.len())?;
        let features = Features::Sparse(x.restrict_columns(&new_index, columns.len()));
        Some(UsedColumns { columns, n_features: n, features, covariances })
    }

    /// The same problem (labels and weights borrowed from `problem`) on the used columns.
    pub(crate) fn problem<'b>(&'b self, problem: &Problem<'b>) -> Problem<'b> {
        Problem { features: &self.features, covariances: self.covariances.as_dyn(), ..*problem }
    }

    /// `θ = [w; b…]` on the used columns (the trailing entries after `w`, e.g. the intercept, are kept).
    pub(crate) fn restrict(&self, theta: &[f64]) -> Vec<f64> {
        let tail = &theta[self.n_features..];
        self.columns.iter().map(|&j| theta[j]).chain(tail.iter().copied()).collect()
    }

    /// The inverse of [`Self::restrict`]: zeros on the dropped columns.
    pub(crate) fn expand(&self, theta: &[f64]) -> Vec<f64> {
        let k = self.columns.len();
        let mut out = Vec::with_capacity(self.n_features + theta.len() - k);
        out.resize(self.n_features, 0.0);
        self.columns.iter().zip(theta).for_each(|(&j, &v)| out[j] = v);
        out.extend_from_slice(&theta[k..]);
        out
    }
}
