//! Conic programmes solved by Clarabel (an interior-point solver in pure Rust): linear TSVC as a
//! second-order cone programme, its dual, and the kernel SVM dual QP.
//!
//! **TSVC for a fixed norm bound γ** (Bi & Zhang eq. 8), with weights `c_i` (1 in the paper):
//!
//! `min Σ c_i ξ_i  s.t.  y_i(wᵀx_i + b) + γδ_i ≥ 1 - ξ_i,  ξ_i ≥ 0,  ‖w‖ ≤ γ.`
//!
//! Its Lagrange dual (eq. 9; multipliers `α_i` of the margin constraints, `0 ≤ α_i ≤ c_i`, and
//! `Σ α_i y_i = 0` when there is an intercept) is
//!
//! `min_α  γ ‖Σ α_i y_i x_i‖ - Σ (1 - γδ_i) α_i`,
//!
//! and at the optimum `Σ c_i ξ_i = -(eq. 9)`. For any feasible `α` the difference
//! `Σ c_i ξ_i + (eq. 9 at α)` is the duality gap, a certificate of optimality.
//!
//! **TSVC for a cost C** (eq. 7): with `γ` a variable, `min ½γ² + C Σ c_i ξ_i` over the same
//! constraints is a convex SOCP whose solution, for its optimal `γ*`, also solves eq. 8 at `γ*` (its
//! multipliers are `C α`). It is a relaxation of the non-convex eq. 7 (`‖w‖ ≤ γ` in place of `‖w‖ = γ`):
//! when the cone constraint is active at the solution (`‖w‖ = γ*`, the generic case) the solution is the
//! *global* minimiser of eq. 7.
//!
//! **Kernel SVM dual**: `min ½ αᵀQα - Σ α_i`, `Q_ij = y_i y_j k(x_i, x_j)`, `0 ≤ α_i ≤ C c_i`,
//! `Σ α_i y_i = 0`; the multiplier of the equality constraint is the intercept `b`.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SecondOrderConeT, SolverStatus,
    SupportedConeT, ZeroConeT,
};
use ndarray::Array2;

use crate::data::{Features, dot};
use crate::error::{Error, Result};

/// How the norm of `w` is controlled in the TSVC cone programme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NormBound {
    /// Eq. 8: `‖w‖ ≤ γ` for this fixed `γ ≥ 0`.
    Fixed(f64),
    /// Eq. 7 through its convex relaxation: `γ` a variable, objective `½γ² + C Σ c_i ξ_i` for this `C`.
    Cost(f64),
}

/// What the TSVC cone programme returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SocpSolution {
    /// The hyperplane `w`.
    pub w: Vec<f64>,
    /// The intercept `b`.
    pub b: f64,
    /// The slacks `ξ_i`.
    pub xi: Vec<f64>,
    /// The norm bound: the given one, or the optimal one for [`NormBound::Cost`].
    pub gamma: f64,
    /// Eq. 8's multipliers `α_i ∈ [0, c_i]` (clipped into the box).
    pub alpha: Vec<f64>,
    /// `Σ c_i ξ_i`, eq. 8's objective at the solution.
    pub primal: f64,
    /// Eq. 9's objective at `alpha`.
    pub dual: f64,
    /// `|Σ α_i y_i|` (0 without intercept): how far `alpha` is from dual feasibility.
    pub dual_residual: f64,
    /// Clarabel's status.
    pub status: String,
    /// Whether Clarabel solved (or almost solved) the programme.
    pub solved: bool,
    /// Interior-point iterations.
    pub iterations: u32,
}

impl SocpSolution {
    /// `primal + dual` (≥ 0 up to the dual residual; 0 at the optimum).
    pub fn duality_gap(&self) -> f64 {
        self.primal + self.dual
    }
}

fn settings(max_iter: u32) -> DefaultSettings<f64> {
    DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(max_iter)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .build()
        .expect("valid Clarabel settings")
}

fn solved(status: SolverStatus) -> bool {
    matches!(status, SolverStatus::Solved | SolverStatus::AlmostSolved)
}

/// Eq. 9's objective `γ‖Σ α_i y_i x_i‖ - Σ (1 - γδ_i) α_i`.
pub fn tsvc_dual_objective(x: &Features, y: &[f64], delta: &[f64], gamma: f64, alpha: &[f64]) -> f64 {
    let mut v = vec![0.0; x.n_features()];
    for (i, &a) in alpha.iter().enumerate() {
        if a != 0.0 {
            x.row_axpy(i, a * y[i], &mut v);
        }
    }
    let linear: f64 = alpha.iter().zip(delta).map(|(a, d)| (1.0 - gamma * d) * a).sum();
    gamma * dot(&v, &v).sqrt() - linear
}

/// Linear TSVC as a second-order cone programme (eq. 8, or eq. 7 relaxed; see the module docs). `x`, `y`
/// (±1), `c` (weights, `None` = 1) and `delta` (bounds `δ_i ≥ 0`) are assumed valid.
pub fn tsvc_socp(
    x: &Features,
    y: &[f64],
    c: Option<&[f64]>,
    delta: &[f64],
    fit_intercept: bool,
    bound: NormBound,
    max_iter: u32,
) -> Result<SocpSolution> {
    let (l, n) = (x.n_samples(), x.n_features());
    let nb = usize::from(fit_intercept);
    let (xi0, gvar) = (n + nb, n + nb + l);
    let dim = gvar + usize::from(matches!(bound, NormBound::Cost(_)));
    let weight = |i: usize| c.map_or(1.0, |c| c[i]);
    let mut q = vec![0.0; dim];
    let (mut pi, mut pj, mut pv) = (vec![], vec![], vec![]);
    match bound {
        NormBound::Fixed(_) => (0..l).for_each(|i| q[xi0 + i] = weight(i)),
        NormBound::Cost(cost) => {
            (0..l).for_each(|i| q[xi0 + i] = cost * weight(i));
            pi.push(gvar);
            pj.push(gvar);
            pv.push(1.0);
        }
    }
    // Rows 0..ℓ: -y_i(x_iᵀw + b) - ξ_i [- δ_i γ] + s = -1 [+ γδ_i]; rows ℓ..2ℓ: -ξ_i + s = 0;
    // rows 2ℓ..2ℓ+n+1: s = (γ, w) in the second-order cone.
    let (mut ai, mut aj, mut av) = (vec![], vec![], vec![]);
    let mut rhs = vec![0.0; 2 * l + n + 1];
    let mut row = vec![0.0; n];
    for i in 0..l {
        row.iter_mut().for_each(|v| *v = 0.0);
        x.row_axpy(i, 1.0, &mut row);
        for (j, &v) in row.iter().enumerate() {
            if v != 0.0 {
                ai.push(i);
                aj.push(j);
                av.push(-y[i] * v);
            }
        }
        if fit_intercept {
            ai.push(i);
            aj.push(n);
            av.push(-y[i]);
        }
        ai.push(i);
        aj.push(xi0 + i);
        av.push(-1.0);
        match bound {
            NormBound::Fixed(gamma) => rhs[i] = gamma * delta[i] - 1.0,
            NormBound::Cost(_) => {
                rhs[i] = -1.0;
                if delta[i] != 0.0 {
                    ai.push(i);
                    aj.push(gvar);
                    av.push(-delta[i]);
                }
            }
        }
        ai.push(l + i);
        aj.push(xi0 + i);
        av.push(-1.0);
    }
    match bound {
        NormBound::Fixed(gamma) => rhs[2 * l] = gamma,
        NormBound::Cost(_) => {
            ai.push(2 * l);
            aj.push(gvar);
            av.push(-1.0);
        }
    }
    for j in 0..n {
        ai.push(2 * l + 1 + j);
        aj.push(j);
        av.push(-1.0);
    }
    let p = CscMatrix::new_from_triplets(dim, dim, pi, pj, pv);
    let a = CscMatrix::new_from_triplets(2 * l + n + 1, dim, ai, aj, av);
    let cones: [SupportedConeT<f64>; 2] = [NonnegativeConeT(2 * l), SecondOrderConeT(n + 1)];
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings(max_iter))
        .map_err(|e| Error::SolverFailure { solver: "Clarabel setup", detail: format!("{e:?}") })?;
    solver.solve();
    let sol = &solver.solution;
    let w = sol.x[..n].to_vec();
    let b = if fit_intercept { sol.x[n] } else { 0.0 };
    let (gamma, scale) = match bound {
        NormBound::Fixed(g) => (g, 1.0),
        NormBound::Cost(cost) => (sol.x[gvar].max(0.0), cost),
    };
    // ξ from (w, b) exactly, so that the primal value is that of a feasible point.
    let xi: Vec<f64> = (0..l).map(|i| (1.0 - y[i] * (x.row_dot(i, &w) + b) - gamma * delta[i]).max(0.0)).collect();
    let alpha: Vec<f64> = (0..l).map(|i| (sol.z[i] / scale).clamp(0.0, weight(i))).collect();
    let primal = (0..l).map(|i| weight(i) * xi[i]).sum();
    let dual = tsvc_dual_objective(x, y, delta, gamma, &alpha);
    let dual_residual = if fit_intercept { alpha.iter().zip(y).map(|(a, y)| a * y).sum::<f64>().abs() } else { 0.0 };
    Ok(SocpSolution {
        w,
        b,
        xi,
        gamma,
        alpha,
        primal,
        dual,
        dual_residual,
        status: format!("{:?}", sol.status),
        solved: solved(sol.status),
        iterations: sol.iterations,
    })
}

/// The kernel SVM dual for the Gram matrix `k`, labels `y` (±1) and box bounds `upper_i = C c_i`.
/// Returns `(α, b, solved)`; `b` is the multiplier of `Σ α_i y_i = 0` (0 without intercept), or
/// [`Error::TooLarge`] when the upper triangle of `Q` as triplets and Clarabel's factorisation of it
/// (about three `ℓ × ℓ` arrays) do not fit in memory.
pub fn kernel_svm_dual(
    k: &Array2<f64>,
    y: &[f64],
    upper: &[f64],
    fit_intercept: bool,
) -> Result<(Vec<f64>, f64, bool)> {
    let l = y.len();
    crate::memory::reserve("the kernel SVM dual for Clarabel", crate::kernel::GRAM_REMEDY, &[3, l, l])?;
    let (mut pi, mut pj, mut pv) = (vec![], vec![], vec![]);
    for j in 0..l {
        for i in 0..=j {
            let v = y[i] * y[j] * k[[i, j]];
            if v != 0.0 {
                pi.push(i);
                pj.push(j);
                pv.push(v);
            }
        }
    }
    let q = vec![-1.0; l];
    let nz = usize::from(fit_intercept);
    let (mut ai, mut aj, mut av) = (vec![], vec![], vec![]);
    let mut rhs = vec![0.0; nz + 2 * l];
    for i in 0..l {
        if fit_intercept {
            ai.push(0);
            aj.push(i);
            av.push(y[i]);
        }
        ai.push(nz + i);
        aj.push(i);
        av.push(-1.0);
        ai.push(nz + l + i);
        aj.push(i);
        av.push(1.0);
        rhs[nz + l + i] = upper[i];
    }
    let p = CscMatrix::new_from_triplets(l, l, pi, pj, pv);
    let a = CscMatrix::new_from_triplets(nz + 2 * l, l, ai, aj, av);
    let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
    if fit_intercept {
        cones.push(ZeroConeT(1));
    }
    cones.push(NonnegativeConeT(2 * l));
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings(200))
        .map_err(|e| Error::SolverFailure { solver: "Clarabel setup", detail: format!("{e:?}") })?;
    solver.solve();
    let sol = &solver.solution;
    let alpha: Vec<f64> = sol.x.iter().zip(upper).map(|(a, u)| a.clamp(0.0, *u)).collect();
    let b = if fit_intercept { sol.z[0] } else { 0.0 };
    Ok((alpha, b, solved(sol.status)))
}
