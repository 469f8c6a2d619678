//! What a fit reports besides the model: the objective, the iterations, why the solver stopped and the
//! solver's certificate. Non-convergence is reported here, never as an error.

use serde::{Deserialize, Serialize};

/// Why a solver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// The stopping rule was met (gradient, KKT violation, duality gap or relative decrease).
    Converged,
    /// The iteration (or round, or epoch) limit was reached first.
    MaxIterations,
    /// No representable progress before the stopping rule was met (line search at round-off level).
    Stalled,
    /// A relaxation solved, but its bound did not certify the solution as globally optimal.
    NotCertified,
}

impl Termination {
    /// `Converged` if `converged`, else `MaxIterations`.
    pub fn from_converged(converged: bool) -> Self {
        if converged { Termination::Converged } else { Termination::MaxIterations }
    }

    /// The termination of an iterative run: `Converged` if its rule was `met`, else `MaxIterations` if it
    /// used all `max_iter` iterations, else `Stalled`.
    pub fn of_run(met: bool, n_iter: usize, max_iter: usize) -> Self {
        if met {
            Termination::Converged
        } else if n_iter >= max_iter {
            Termination::MaxIterations
        } else {
            Termination::Stalled
        }
    }

    /// The worse of two terminations (`Converged` is the best; the first failure wins).
    pub fn and(self, other: Termination) -> Termination {
        if self == Termination::Converged { other } else { self }
    }
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Termination::Converged => "converged",
            Termination::MaxIterations => "stopped at the iteration limit before converging",
            Termination::Stalled => "stalled before meeting the stopping rule",
            Termination::NotCertified => "solved a relaxation that did not certify global optimality",
        })
    }
}

/// What fitting one binary problem reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// The objective at the solution (without any smoothing floor; the dual for SMO-type solvers).
    pub objective: f64,
    /// Newton or L-BFGS iterations, SGD iterations, SMO iterations, or the total over alternating rounds.
    pub n_iter: usize,
    /// Why the solver stopped.
    pub termination: Termination,
    /// The residual of the solver's stopping rule at the solution: `‖∇J‖` (of the smoothed objective for
    /// the exact solver; a sub-gradient for SGD) or the maximal KKT violation (SMO, the SVM+ QP).
    pub gradient_norm: f64,
    /// `‖∇J(0)‖` (or the initial KKT violation), the reference of a relative stopping rule; `None` where
    /// the rule is absolute (SMO, the cone programmes).
    #[serde(default)]
    pub initial_gradient_norm: Option<f64>,
    /// The final floor `ε` on `σ_i` of the linear objective (the exact solver, SGD; 0 where the solution is
    /// unsmoothed, e.g. the hinge by dual coordinate descent); `None` for solvers of other objectives.
    #[serde(default)]
    pub sigma_floor: Option<f64>,
    /// The objective after each round (alternating methods) or stage (continuation); monotone for
    /// the alternating methods.
    pub objective_trace: Vec<f64>,
    /// The relative duality gap of the solution against a dual lower bound `D`, for solvers that certify
    /// one: `(J - D)/|J|` (dual coordinate descent) or `(J - D)/max(1, |J|)` (TSVC's cone programme, whose
    /// slack objective `J` may be 0); `None` otherwise.
    #[serde(default)]
    pub duality_gap: Option<f64>,
    /// Outer rounds: the SVM solves of an alternating method (Power SVM, TSVC; the first included) or the
    /// cone programmes solved (TSVC's cone form); 0 for a method that is one solve.
    #[serde(default)]
    pub rounds: usize,
    /// TSVC's cone form: the bound `γ` on `‖w‖` of eq. 8 at the solution (the optimal one when solving for
    /// `C`); `None` otherwise.
    #[serde(default)]
    pub norm_bound: Option<f64>,
    /// TSVC's cone form for `C` when its relaxation did not certify: the two solutions of eq. 7 it
    /// compared (the relaxation's and the alternating rounds') and which it returned; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// The plain hinge: the routes the exact solver took, in order (a route that stalled hands its iterate
    /// to the next); empty for every other solver.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
    /// The fitted classifier predicts one class for every training example although both are present
    /// (checked by RSVM-RHHQ, whose bounded loss admits such minima): a warning, not a solver failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub degenerate: bool,
}

/// A route of the exact solver for the plain hinge (every `Σ_i = 0`, `solver::exact`'s `route`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Dual coordinate descent (LIBLINEAR `-s 3` steps) with exact finishes on the margin set.
    Dual,
    /// Newton on the smoothed hinge in the primal, stage by stage, with exact finishes on the margin set:
    /// affine invariant, so ill-scaled columns cost it nothing.
    Primal,
    /// The primal QP over every example by an interior-point method (normal equations the size of `[w; b]`;
    /// Clarabel beyond 2,000 coordinates when there are more of them than examples), made exact by an
    /// active-set solve on its margin set: 10–30 factorisations whatever λ, for where both iterative routes
    /// stall (small λ on dense data).
    Qp,
    /// The smoothing continuation of the GSU solver, the last resort when no route certifies.
    Smoothing,
    /// Over shards: the distributed dual method (CoCoA+) and an exact finish on the rows near the margin
    /// (`usvm::sharded`); not a route of a local fit.
    Cocoa,
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Route::Dual => "dual",
            Route::Primal => "primal",
            Route::Qp => "qp",
            Route::Cocoa => "cocoa",
            Route::Smoothing => "smoothing",
        })
    }
}

/// A solution of TSVC's eq. 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    /// The cone programme's: the convex relaxation's, or the best of the search over the norm bound `γ`
    /// when the relaxation does not certify.
    Relaxation,
    /// The alternating rounds' (Algorithm 1), a local minimum.
    Alternating,
}

/// Where the relaxation of TSVC's cone form for `C` does not certify the global minimum (non-separable
/// data), the form also runs the alternating rounds and returns the solution of lower objective (eq. 7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fallback {
    /// The solution returned.
    pub taken: Candidate,
    /// Eq. 7 at the relaxation's solution.
    pub relaxation_objective: f64,
    /// Eq. 7 at the alternating rounds' solution.
    pub alternating_objective: f64,
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (relaxation, alternating) = (self.relaxation_objective, self.alternating_objective);
        match self.taken {
            Candidate::Alternating => write!(
                f,
                "the alternating solution was taken (objective {alternating}, below the relaxation's {relaxation})"
            ),
            Candidate::Relaxation => write!(
                f,
                "the relaxation's solution was kept (objective {relaxation}; the alternating solution's {alternating})"
            ),
        }
    }
}

impl FitReport {
    /// Whether the stopping rule was met.
    pub fn converged(&self) -> bool {
        self.termination == Termination::Converged
    }
}

/// The termination of several binary problems: `Converged` if all converged, else the first failure.
pub fn overall(reports: &[FitReport]) -> Termination {
    reports.iter().fold(Termination::Converged, |t, r| t.and(r.termination))
}
