//! The questions a driver asks every shard, and their answers: plain data (serde), so that an engine can
//! carry them between processes in any encoding. Every sum is over the shard's own rows, before the
//! `1/ℓ` of the whole data and without the regulariser; the driver adds those.

use serde::{Deserialize, Serialize};

use crate::data::{Features, axpy};

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
/// moved rows too.
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
        /// Also `Σ c_i L_i`, `Σ c_i ∇L_i` (and `Σ c_i ∇²L_i` up to 64 variables) at `θ + d`, the step
        /// `α = 1` of a Newton direction, so that the next iteration needs no round of its own when the step
        /// is taken.
        #[serde(default)]
        with_gradient: bool,
    },
    /// `Σ c_i L_i` and `min σ_i` at the point's `θ` without a floor.
    Exact {
        /// Where (its floor is ignored).
        at: Point,
        /// Also the sums of [`Question::ValueGrad`] at the same `θ` and target at this floor, with the
        /// Hessian when asked for: the first round of the continuation's next stage, brought along.
        #[serde(default)]
        next: Option<NextStage>,
    },
    /// A Newton direction from this shard's own rows (GIANT, Wang et al. 2018): the solution, by conjugate
    /// gradients to a relative residual `forcing`, of `(λ I_w + (data_scale/W_k) Σ_k c_i ∇²L_i) p = -g` at
    /// the point, with `W_k = Σ_k c_i` the shard's weight: its rows' Hessian standing for the whole data's.
    LocalNewton {
        /// Where (the Hessian's point).
        at: Point,
        /// The whole objective's gradient `g` there.
        gradient: Vec<f64>,
        /// The whole data term's scale `inv_l · Σ c_i` (the data Hessian is `inv_l Σ c_i ∇²L_i`).
        data_scale: f64,
        /// `λ`.
        lambda: f64,
        /// The conjugate gradients' relative residual.
        forcing: f64,
    },
    /// The plain hinge (and Power SVM's rounds): one round of the distributed dual method
    /// (the `cocoa` module of [`crate::sharded`]) — the certificate's partial sums at the shard's multipliers, then local
    /// coordinate descent on its own multipliers, which it keeps ([`DualState`]).
    Dual(DualRound),
    /// The plain hinge's exact finish (the `cocoa` module of [`crate::sharded`]): the hinge's partial sums at `θ`, the rows within
    /// `band` of the margin (`|d_i| ≤ band`) and the class sums of the others on the loss' linear side
    /// (`d_i > band`).
    Margin {
        /// Where (its floor is ignored).
        at: Point,
        /// The half-width of the band around the margin.
        band: f64,
        /// At most this many rows are returned (those nearest the margin).
        max_rows: usize,
        /// A line search's origin `θ₀` (empty for none): the hinge's partial sums are also returned at
        /// `θ₀ + τ(θ - θ₀)` for each `τ` of `steps`.
        origin: Vec<f64>,
        /// The steps `τ` along the line.
        steps: Vec<f64>,
        /// Power SVM: the `w` of another moved target (empty for none), whose hinge at `θ` comes too, from
        /// the same pass ([`MarginAnswer::also_hinge`]).
        #[serde(default)]
        also: Vec<f64>,
    },
}

/// One round of the distributed dual method for the hinge in C-form, `min_α ½‖Σ α_i y_i x_i‖² - Σ α_i` over
/// `0 ≤ α_i ≤ C c_i` (`yᵀα = 0` by an augmented Lagrangian with multiplier `μ` and penalty `ρ`, as in
/// the local dual coordinate descent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DualRound {
    /// The binary problem and its target (the point's `θ` is `[w; b̂]`: `w = Σ α_i y_i x_i` over all shards,
    /// `b̂ = μ + ρ yᵀα` the bias estimate).
    pub at: Point,
    /// Which solve of the fit (a new one starts from `α = 0`).
    pub solve: u64,
    /// The round of the solve: the shard's multipliers must be those after round `round - 1`.
    pub round: u64,
    /// `C`: the box is `[0, C c_i]`.
    pub upper: f64,
    /// The penalty `ρ` (0 without intercept).
    pub rho: f64,
    /// CoCoA+'s scaling `σ'` of the local quadratic (the number of shards, for adding the updates).
    pub sigma: f64,
    /// Passes of coordinate descent over the shard's rows.
    pub passes: usize,
    /// Biases `b̂ + δ` at which to sum the hinge at `w` (the primal's bias is the best of them).
    pub offsets: Vec<f64>,
}

/// A shard's multipliers `α` of one solve after a round (the state of the distributed dual method, kept by
/// the shard or, for an engine that keeps tasks free of state, passed along with the questions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DualState {
    /// The solve.
    pub solve: u64,
    /// Rounds done.
    pub rounds: u64,
    /// The binary problem.
    pub positive: i64,
    /// `α_i`, one per row.
    pub alpha: Vec<f64>,
}

/// What one shard has: the driver checks that the shards agree and sums them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// Rows `ℓ_k` (may be 0).
    pub n_samples: usize,
    /// `Σ ‖x_i‖²` over its rows (the scale of the dual method's penalty).
    #[serde(default)]
    pub squared_norms: f64,
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
        /// The sums at `θ + d` when asked for.
        #[serde(default)]
        at_one: Option<AtStep>,
    },
    /// To [`Question::Exact`].
    Exact {
        /// `Σ c_i L_i` at `ε = 0`.
        value: f64,
        /// `min σ_i` at `ε = 0` (`+∞` for no rows).
        min_sigma: f64,
        /// The sums at the next stage's floor when asked for.
        #[serde(default)]
        next: Option<AtStep>,
    },
    /// To [`Question::LocalNewton`].
    LocalNewton {
        /// The shard's direction `p_k`.
        direction: Vec<f64>,
        /// Its weight `W_k = Σ_k c_i` (0 for a shard without rows: its direction does not count).
        weight: f64,
    },
    /// To [`Question::Dual`].
    Dual(DualAnswer),
    /// To [`Question::Margin`].
    Margin(MarginAnswer),
}

/// The stage [`Question::Exact`] asks the sums of along with its own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NextStage {
    /// The stage's floor `ε`.
    pub floor: f64,
    /// Whether to form the Hessian (at most 64 variables).
    pub hessian: bool,
}

/// A shard's sums at the step `α = 1` of a line ([`Question::Line`]'s `with_gradient`), or at the next
/// stage's floor ([`Question::Exact`]'s `next`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtStep {
    /// `Σ c_i L_i`.
    pub value: f64,
    /// `Σ c_i ∇L_i`.
    pub grad: Vec<f64>,
    /// `Σ c_i ∇²L_i`, column-major, up to 64 variables; else empty.
    pub hessian: Vec<f64>,
}

impl AtStep {
    /// Adds another shard's sums (of the same sizes).
    pub(super) fn add(&mut self, other: &AtStep) {
        self.value += other.value;
        axpy(1.0, &other.grad, &mut self.grad);
        axpy(1.0, &other.hessian, &mut self.hessian);
    }
}

/// A shard's answer to a [`DualRound`]: the certificate's partial sums at its multipliers `α` before the
/// round (and at the round's `w`), and the update of its local coordinate descent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DualAnswer {
    /// `Σ_{y_i = +1} α_i x_i` and `Σ_{y_i = -1} α_i x_i` (`w` of the multipliers, free of drift).
    pub class_sums: [Vec<f64>; 2],
    /// `Σ α_i` over each class.
    pub class_alpha: [f64; 2],
    /// `Σ c_i max(0, 1 - y_i(wᵀx_i + b̂ + δ))` at each offset `δ`.
    pub hinge: Vec<f64>,
    /// Counts of `|d_i|` at `b̂` in the bins `[2^-(k+1), 2^-k)·16`, `k = 0…`[`BINS`]` - 2`, the last bin below.
    pub histogram: Vec<u64>,
    /// The update `Σ Δα_i y_i x_i` of the local coordinate descent.
    pub delta_w: Vec<f64>,
    /// `Σ Δα_i y_i`.
    pub delta_t: f64,
}

/// Bins of [`DualAnswer::histogram`].
pub const BINS: usize = 48;

/// A shard's answer to [`Question::Margin`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarginAnswer {
    /// `Σ c_i max(0, d_i)` over all its rows.
    pub hinge: f64,
    /// ... at each step of the line (empty without one).
    pub line: Vec<f64>,
    /// The rows within the band (at most `max_rows`, the nearest the margin; the others keep their side).
    pub rows: Features<'static>,
    /// Their `±1` labels.
    pub y: Vec<f64>,
    /// Their weights `c_i`.
    pub c: Vec<f64>,
    /// Per class (`+1`, `-1`): `Σ c_i x_i` and `Σ c_i` over the rows with `d_i > band`.
    pub active_sums: [Vec<f64>; 2],
    /// ... and their weights.
    pub active_weights: [f64; 2],
    /// `Σ c_i max(0, d_i)` over all its rows for the question's `also` target (0 without one).
    pub also_hinge: f64,
}

const F64: u64 = 8;

fn point_bytes(p: &Point) -> u64 {
    let moved = match &p.target {
        Target::Moved { w } => w.len() as u64,
        Target::Method => 0,
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
            | Question::Exact { at, .. }
            | Question::LocalNewton { at, .. }
            | Question::Margin { at, .. } => Some(at),
            Question::Dual(r) => Some(&r.at),
        }
    }

    /// The numbers it carries, in bytes (8 per number): what it costs to send to one shard.
    pub fn payload_bytes(&self) -> u64 {
        match self {
            Question::Describe => 0,
            Question::ValueGrad { at, .. } => point_bytes(at),
            Question::Exact { at, next } => point_bytes(at) + if next.is_some() { 2 * F64 } else { 0 },
            Question::HessVec { at, v } => point_bytes(at) + F64 * v.len() as u64,
            Question::Line { at, direction, steps, .. } => {
                point_bytes(at) + F64 * (direction.len() + steps.len()) as u64
            }
            Question::LocalNewton { at, gradient, .. } => point_bytes(at) + F64 * (3 + gradient.len()) as u64,
            Question::Dual(r) => point_bytes(&r.at) + F64 * (7 + r.offsets.len() as u64),
            Question::Margin { at, origin, steps, also, .. } => {
                point_bytes(at) + F64 * (2 + origin.len() + steps.len() + also.len()) as u64
            }
        }
    }
}

impl Answer {
    /// The numbers it carries, in bytes (8 per number).
    pub fn payload_bytes(&self) -> u64 {
        match self {
            Answer::Describe(i) => F64 * (5 + i.classes.len() as u64),
            Answer::ValueGrad { grad, hessian, .. } => F64 * (1 + grad.len() + hessian.len()) as u64,
            Answer::HessVec { product } => F64 * product.len() as u64,
            Answer::Line { values, at_one } => {
                F64 * (3 * values.len() + at_one.as_ref().map_or(0, |a| 1 + a.grad.len() + a.hessian.len())) as u64
            }
            Answer::Exact { next, .. } => {
                F64 * (2 + next.as_ref().map_or(0, |a| 1 + a.grad.len() + a.hessian.len())) as u64
            }
            Answer::LocalNewton { direction, .. } => F64 * (1 + direction.len()) as u64,
            Answer::Dual(d) => {
                let vectors = d.class_sums.iter().map(Vec::len).sum::<usize>() + d.delta_w.len() + d.hinge.len();
                F64 * (vectors + d.histogram.len() + 3) as u64
            }
            Answer::Margin(m) => {
                let rows =
                    m.rows.stored_entries() as u64 * F64 * if matches!(m.rows, Features::Sparse(_)) { 3 } else { 2 }
                        / 2;
                let sums = m.active_sums.iter().map(Vec::len).sum::<usize>();
                rows + F64 * (2 * m.y.len() + sums + m.line.len() + 5) as u64
            }
        }
    }
}
