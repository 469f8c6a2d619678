//! The questions a driver asks every shard, and their answers: plain data (serde), so that an engine can
//! carry them between processes in any encoding. Every sum is over the shard's own rows, before the
//! `1/ℓ` of the whole data and without the regulariser; the driver adds those.

use serde::{Deserialize, Serialize};

/// The point a question is asked at: binary problem `positive` vs the rest, `θ = [w; b]`, floor `ε`, of
/// the objective `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The positive class; every other label is negative.
    pub positive: i64,
    /// `θ = [w; b]` (`w` alone without an intercept).
    pub theta: Vec<f64>,
    /// The floor `ε` of `σ_i = √(wᵀΣ_i w + ε²)`.
    pub floor: f64,
    /// Which objective.
    #[serde(default)]
    pub target: Target,
}

/// Which objective a [`Point`] is of. Power SVM's alternating rounds (Bi & Zhang's Algorithm 1) ask about
/// two more than the method's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// The method's: the expected hinge under the shard's covariances as the method prepares them (the
    /// hinge for `hinge` and for Power SVM's first round).
    #[default]
    Method,
    /// Power SVM's round: the hinge on the points moved for the direction of `w`, `x_i + y_i r_i w/‖w‖`.
    Moved {
        /// The `w` whose direction moves the points.
        w: Vec<f64>,
    },
    /// Power SVM's objective: the hinge at the worst point of each ball, `max(0, d_i + r_i‖w‖)`
    /// ([`Question::Exact`] only).
    Ball,
}

/// A question to every shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Question {
    /// The shard's size, width and labels ([`ShardInfo`]).
    Describe,
    /// `Σ c_i L_i` and `Σ c_i ∇L_i` at the point, and `Σ c_i ∇²L_i` (column-major) when `hessian`.
    ValueGrad {
        /// Where.
        at: Point,
        /// Whether to form the Hessian (`dim²` numbers).
        hessian: bool,
    },
    /// `Σ c_i ∇²L_i v` at the point.
    HessVec {
        /// Where.
        at: Point,
        /// The vector.
        v: Vec<f64>,
    },
    /// `[Σ c_i L_i, Σ c_i dL_i/dα, Σ c_i d²L_i/dα²]` along `θ + α·direction`, at each `α` of `steps`.
    Line {
        /// The line's origin.
        at: Point,
        /// Its direction.
        direction: Vec<f64>,
        /// The steps `α`.
        steps: Vec<f64>,
    },
    /// `Σ c_i L_i` and `min σ_i` at the point's `θ` without a floor.
    Exact {
        /// Where (its floor is ignored).
        at: Point,
    },
}

/// What one shard has: the driver checks that the shards agree and sums them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// Rows `ℓ_k` (may be 0).
    pub n_samples: usize,
    /// Features `n`.
    pub n_features: usize,
    /// The length of `θ`: `n + 1` with an intercept.
    pub dim: usize,
    /// The distinct labels of its rows, sorted.
    pub classes: Vec<i64>,
    /// `Σ c_i` over its rows.
    pub weight_sum: f64,
}

/// A shard's answer to a [`Question`] of the same name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// To [`Question::Describe`].
    Describe(ShardInfo),
    /// To [`Question::ValueGrad`].
    ValueGrad {
        /// `Σ c_i L_i`.
        value: f64,
        /// `Σ c_i ∇L_i`.
        grad: Vec<f64>,
        /// `Σ c_i ∇²L_i`, column-major; empty unless asked for.
        hessian: Vec<f64>,
    },
    /// To [`Question::HessVec`].
    HessVec {
        /// `Σ c_i ∇²L_i v`.
        product: Vec<f64>,
    },
    /// To [`Question::Line`].
    Line {
        /// One `[φ, φ', φ'']` partial sum per step.
        values: Vec<[f64; 3]>,
    },
    /// To [`Question::Exact`].
    Exact {
        /// `Σ c_i L_i` at `ε = 0`.
        value: f64,
        /// `min σ_i` at `ε = 0` (`+∞` for no rows).
        min_sigma: f64,
    },
}

const F64: u64 = 8;

fn point_bytes(p: &Point) -> u64 {
    let moved = match &p.target {
        Target::Moved { w } => w.len() as u64,
        Target::Method | Target::Ball => 0,
    };
    F64 * (p.theta.len() as u64 + 2 + moved)
}

impl Question {
    /// The point it is asked at (none for `Describe`).
    pub fn at(&self) -> Option<&Point> {
        match self {
            Question::Describe => None,
            Question::ValueGrad { at, .. }
            | Question::HessVec { at, .. }
            | Question::Line { at, .. }
            | Question::Exact { at } => Some(at),
        }
    }

    /// The numbers it carries, in bytes (8 per number): what it costs to send to one shard.
    pub fn payload_bytes(&self) -> u64 {
        match self {
            Question::Describe => 0,
            Question::ValueGrad { at, .. } | Question::Exact { at } => point_bytes(at),
            Question::HessVec { at, v } => point_bytes(at) + F64 * v.len() as u64,
            Question::Line { at, direction, steps } => point_bytes(at) + F64 * (direction.len() + steps.len()) as u64,
        }
    }
}

impl Answer {
    /// The numbers it carries, in bytes (8 per number).
    pub fn payload_bytes(&self) -> u64 {
        match self {
            Answer::Describe(i) => F64 * (4 + i.classes.len() as u64),
            Answer::ValueGrad { grad, hessian, .. } => F64 * (1 + grad.len() + hessian.len()) as u64,
            Answer::HessVec { product } => F64 * product.len() as u64,
            Answer::Line { values } => 3 * F64 * values.len() as u64,
            Answer::Exact { .. } => 2 * F64,
        }
    }
}
