//! One exact linear fit over row shards (DESIGN 9): the data live in [`Shard`]s — one per partition of
//! the rows, on as many machines as an engine (Dask, Spark) provides — and a driver runs the local exact
//! solver (`solver::exact`'s continuation and Newton iterations, unchanged) on sums of the shards'
//! answers. The objective is a sum over rows,
//!
//! `J(θ) = λ/2‖w‖² + (1/ℓ) Σ_k Σ_{i ∈ shard k} c_i L(d_i, σ_i)`,
//!
//! so every quantity the solver needs is a sum of per-shard partial sums: the value and gradient (with the
//! `(n+1)²` Hessian when `n + 1 ≤ 64`, so that a Newton direction costs no further round), Hessian-vector
//! products for conjugate gradients otherwise, the objective along a line, and at the end of each
//! smoothing stage the unsmoothed value and the smallest `σ_i`. The driver adds the answers **in shard
//! order**, so a sharded fit is the local fit up to the order of floating-point additions, takes the same
//! Newton steps, and is bit-for-bit the same from run to run. No averaging of per-shard models, no ADMM.
//!
//! Every [`Question`] carries the point it is asked at, so a shard that was lost and re-created from its
//! partition answers it exactly as the lost one would have: the engine re-asks, the fit goes on.
//!
//! The methods that run this way are those whose fit is one exact solve of the smooth objective: `gsu`
//! (without subspaces) and `iso`; and the plain hinge, `hinge`, and `power`, whose alternating rounds (Bi &
//! Zhang's Algorithm 1, `svm::alternating`) each solve a hinge SVM on moved points ([`Target::Moved`]: the
//! shards move their own rows) and compare the ball-hinge objective (the hinge at `θ` of the rows moved for
//! `θ` itself: the next round's first question, asked early and kept for it). The hinge fits are
//! not Newton's over shards (hundreds of rounds on its nonsmooth objective) but a distributed dual method
//! with an exact finish (the `cocoa` module): tens of rounds, certified by the whole problem's duality gap, the local
//! optimum to the solvers' tolerance (not bit for bit, since locally the hinge is solved by other routes).
//! Its rounds update multipliers the shards keep ([`DualState`]): an engine either keeps each shard alive
//! through the fit (Spark's barrier stage, restarted whole on a failure) or passes the state along
//! ([`Shard::answer_with_state`]; Dask, which recomputes a lost state from its lineage). The local solver
//! also drops the unused columns of wide sparse data, which the sharded one keeps (the same optimum; their
//! coefficients stay zero).

mod cocoa;
mod driver;
mod dual_round;
mod protocol;
mod shard;

pub use driver::{ShardedFit, Shards, Traffic, fit_sharded};
pub use protocol::{
    Answer, AtStep, BINS, DualAnswer, DualRound, DualState, MarginAnswer, NextStage, Point, Question, ShardInfo, Target,
};
pub use shard::Shard;

use crate::error::{Result, invalid};
use crate::methods::LinearSolver;
use crate::methods::linear::Linear;
use crate::params::MethodParams;
use crate::solver::exact::ExactSettings;

/// How a shardable method treats the covariances: as given, made isotropic, ignored, or (Power SVM) turned
/// into the radii `r_i = scale·√(tr Σ_i / n)` of its balls, with at most `max_rounds` alternating rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Treatment {
    AsGiven,
    Isotropic,
    Ignored,
    Power { radius_scale: f64, max_rounds: usize },
}

/// What a sharded fit needs of its method.
struct Plan {
    treatment: Treatment,
    linear: Linear,
    settings: ExactSettings,
}

impl Plan {
    fn of(params: &MethodParams) -> Result<Plan> {
        let (treatment, linear) = match params {
            MethodParams::Gsu(g) if g.subspace_variance.is_none() => (
                Treatment::AsGiven,
                Linear { regularization: g.regularization, fit_intercept: g.fit_intercept, solver: g.solver },
            ),
            MethodParams::Iso(l) => (Treatment::Isotropic, l.clone()),
            MethodParams::Hinge(l) => (Treatment::Ignored, l.clone()),
            MethodParams::Power(p) => (
                Treatment::Power { radius_scale: p.radius_scale, max_rounds: p.max_rounds },
                Linear { regularization: p.regularization, fit_intercept: p.fit_intercept, solver: p.solver },
            ),
            other => {
                return Err(invalid(
                    "method",
                    other.name(),
                    "cannot be fit over shards: the sharded fit runs the exact solver of gsu (without \
                     subspace_variance), iso, hinge and power",
                ));
            }
        };
        let LinearSolver::Exact(settings) = linear.solver else {
            return Err(invalid("solver", "sgd", "a sharded fit runs the exact solver"));
        };
        Ok(Plan { treatment, linear, settings })
    }
}
