//! A dedicated SMO-type solver for the SVM+ / R-SVM+ dual (DESIGN 2.6, paper 004 eq. 9 and 15):
//!
//! ```text
//! min_{α,β}  F(α, β) = ½ (α∘y)ᵀ A (α∘y) − 1ᵀα + 1/(2ρ) vᵀ B v,     v = α + β − c
//! s.t.       1ᵀv = 0,   yᵀα = 0,   0 ≤ α ≤ u,   β ≥ 0
//! ```
//!
//! with `A`, `B` symmetric PSD (`K`, `K*` for SVM+; the robust `A`, `B` for R-SVM+), per-example costs
//! `c_i = C·c_i` and upper bounds `u_i` (`+∞` for SVM+, `σ'C c_i` for R-SVM+). The dual objective of
//! the paper (a maximisation) is `−F`.
//!
//! **Directions.** The constraint matrix has three kinds of columns: `(1, 1)` (α of a positive example),
//! `(1, −1)` (α of a negative example) and `(1, 0)` (any β). Its circuits — the sparsest directions that
//! keep both equalities — are therefore exactly
//! 1. `β_i += t, β_j −= t`;
//! 2. `α_i += t, α_j −= t` with `y_i = y_j`;
//! 3. `α_i += t, α_j += t, β_k −= 2t` with `y_i = −y_j` (and its negative),
//!
//! the working sets of the alternating SMO of Pechyony, Izmailov, Vashist & Vapnik (2010). Every feasible
//! direction is a conformal sum of circuits, so a point at which no circuit descends is optimal.
//!
//! **Optimality and stopping.** KKT: there are `b`, `b*` with `g_α,i + y_i b + b* ≥ 0` where `α_i` can
//! increase, `≤ 0` where it can decrease, and `g_β,i + b* ≥ 0` (`= 0` where `β_i > 0`), `g = ∇F`.
//! With `s₊ = b* + b`, `s₋ = b* − b` this says `s₊ ∈ [m₊, M₊]`, `s₋ ∈ [m₋, M₋]`, `b* ∈ [m*, M*]` and
//! `b* = (s₊ + s₋)/2`, where `m₊ = max(−g_α)` over increasable positive α, `M₊ = min(−g_α)` over
//! decreasable positive α (likewise for negatives), `m* = max(−g_β)` over all β and `M* = min(−g_β)`
//! over `β > 0`. The violation
//!
//! ```text
//! V = max(m₊ − M₊,  m₋ − M₋,  m* − M*,  (m₊ + m₋)/2 − M*,  m* − (M₊ + M₋)/2)
//! ```
//!
//! is minus the directional derivative of the steepest circuit of each kind (kind 3 halved, per unit of
//! the β it moves), and `V ≤ tol` is the stopping rule: then some `(b, b*)` satisfies every KKT inequality
//! to within `tol`.
//!
//! **Working set.** The kind with the largest violation is chosen; its first index is the steepest one
//! (first order) and the partner(s) are chosen by the largest decrease of `F` along the circuit
//! (second order, as LIBSVM's WSS 2). The step is the exact minimiser along the circuit, clipped to the
//! bounds. One pass over the variables finds every kind's first-order indices and the violation; the
//! second-order partner costs one more pass that reads the fixed indices' rows of `A` and `B` in order.
//! Gradients are kept up to date in `O(n)` per changed variable from rows of `A` and `B`.
//!
//! **Face steps.** Once the active set has settled — no variable entered or left a bound during the last
//! `clamp(n/10, 20, 200)` SMO steps, or at the latest after `20n` steps — the solver jumps towards the
//! minimiser of `F` on the current face (free variables only, both equalities kept; module `face`), with
//! a primal active-set loop that pins the variables reaching their bounds, on one LU factorisation. SMO
//! identifies the active set quickly and then converges only linearly on the free variables (a dense,
//! ill-conditioned `H_FF`); the face steps end that tail (LUPI benchmark, n = 2,000: 466,608 SMO steps
//! and 7.9 s without them, 16,163 steps and 4 face steps with them, to a violation of 1e-12) and make
//! large `C/ρ` solvable (C = 100, ρ = 0.01, n = 1,000: no convergence in 100 s without the active-set
//! loop, 1.5 s with it). A face step costs `O(|F|³)`: tried on a fixed schedule (every `n` steps) while
//! SMO was still moving many variables to their bounds, the first ones (|F| ≈ 1,500 of 2,000) took most
//! of the time and barely lowered the violation.
//!
//! **Bias.** `b`, `b*` are the KKT multipliers above. Free variables give equations: a free positive α
//! gives `s₊ = −g_α,i`, a free negative α `s₋ = −g_α,i`, a positive β gives `b* = −g_β,i`. Each kind's
//! equations are averaged; with two or three kinds present `(b, b*)` is their least-squares solution.
//! With one kind present the remaining degree of freedom is set to the midpoint of the interval the
//! inequalities allow (an infinite end is replaced by the finite one); with none, `s₊` and `s₋` are the
//! midpoints of `[m₊, M₊]` and `[m₋, M₋]` and `b*` their mean clipped to `[m*, M*]`.
//!
//! ```
//! use ndarray::array;
//! use usvm::solver::svmplus_qp::{QpSettings, SvmPlusQp};
//! let k = array![[1.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.0]];
//! let qp = SvmPlusQp { a: k.view(), b: k.view(), y: &[1.0, 1.0, -1.0], c: &[1.0; 3], upper: None, rho: 1.0 };
//! let sol = qp.solve(&QpSettings::default()).unwrap();
//! assert!(sol.converged && sol.violation <= 1e-6);
//! assert!((sol.alpha[0] + sol.alpha[1] - sol.alpha[2]).abs() < 1e-12); // yᵀα = 0
//! ```

use ndarray::ArrayView2;

use crate::error::{Error, Result, invalid};
use crate::progress::{Monitor, Quantity, STEP_EVENTS_EVERY};

mod face;

/// One instance of the QP family.
#[derive(Debug, Clone)]
pub struct SvmPlusQp<'a> {
    /// `A` (`n × n`, symmetric PSD, row-major).
    pub a: ArrayView2<'a, f64>,
    /// `B` (`n × n`, symmetric PSD, row-major).
    pub b: ArrayView2<'a, f64>,
    /// Labels `±1`.
    pub y: &'a [f64],
    /// Per-example costs `c_i ≥ 0` (`C` times the example's weight).
    pub c: &'a [f64],
    /// Upper bounds `u_i` on `α_i` (`None`: no upper bound, the SVM+ dual).
    pub upper: Option<&'a [f64]>,
    /// `ρ > 0`.
    pub rho: f64,
}

/// Stopping rule of the SMO solver.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QpSettings {
    /// Stop when the KKT violation `V` (module docs) is at most this.
    pub tol: f64,
    /// Maximum number of SMO steps.
    pub max_iter: usize,
}

impl Default for QpSettings {
    fn default() -> Self {
        QpSettings { tol: 1e-6, max_iter: 10_000_000 }
    }
}

/// The solution and what the solver reports.
#[derive(Debug, Clone, PartialEq)]
pub struct QpSolution {
    /// The multipliers `α_i`.
    pub alpha: Vec<f64>,
    /// The multipliers `β_i`.
    pub beta: Vec<f64>,
    /// The multiplier of `yᵀα = 0`: the intercept of `f(x) = Σ α_i y_i k(x_i, x) + b`.
    pub bias: f64,
    /// The multiplier of `1ᵀv = 0`: the intercept of the correcting function.
    pub bias_star: f64,
    /// The paper's dual objective `−F(α, β)` (to be maximised).
    pub dual_objective: f64,
    /// SMO steps taken.
    pub n_iter: usize,
    /// Newton steps on a face taken (tried when the active set has settled; module docs).
    pub face_steps: usize,
    /// Whether the KKT violation fell below `tol`.
    pub converged: bool,
    /// The final KKT violation `V`.
    pub violation: f64,
    /// `V` at the start (`α = 0`, `β = c`).
    pub initial_violation: f64,
}

/// The KKT intervals of the module docs: `(m₊, M₊, m₋, M₋, m*, M*)`.
#[derive(Debug, Clone, Copy)]
struct Intervals {
    lo_pos: f64,
    hi_pos: f64,
    lo_neg: f64,
    hi_neg: f64,
    lo_star: f64,
    hi_star: f64,
}

impl Intervals {
    fn violation(&self) -> f64 {
        let v = [
            self.lo_pos - self.hi_pos,
            self.lo_neg - self.hi_neg,
            self.lo_star - self.hi_star,
            0.5 * (self.lo_pos + self.lo_neg) - self.hi_star,
            self.lo_star - 0.5 * (self.hi_pos + self.hi_neg),
        ];
        // An empty set gives an infinite end; `inf - inf` (both sides empty) is no violation.
        v.iter().filter(|x| !x.is_nan()).fold(f64::NEG_INFINITY, |m, &x| m.max(x))
    }
}

/// Curvature below which a direction is treated as flat (the step then goes to the bound).
const TAU: f64 = 1e-12;

impl SvmPlusQp<'_> {
    fn n(&self) -> usize {
        self.y.len()
    }

    /// Checks shapes, labels, costs, bounds and `ρ`.
    pub fn validate(&self) -> Result<()> {
        let n = self.n();
        if n == 0 {
            return Err(Error::Empty("no examples in the QP"));
        }
        for (what, m) in [("QP matrix A", &self.a), ("QP matrix B", &self.b)] {
            if m.dim() != (n, n) {
                return Err(Error::DimensionMismatch { what, expected: n, found: m.nrows().max(m.ncols()) });
            }
            if !m.is_standard_layout() {
                return Err(Error::Layout { what });
            }
            if let Some((i, &v)) = m.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinite { what, index: i / n, value: v });
            }
        }
        if self.c.len() != n {
            return Err(Error::DimensionMismatch { what: "QP costs", expected: n, found: self.c.len() });
        }
        if let Some((i, &v)) = self.y.iter().enumerate().find(|(_, v)| **v != 1.0 && **v != -1.0) {
            return Err(Error::NonFinite { what: "QP labels (must be ±1)", index: i, value: v });
        }
        if let Some((i, &v)) = self.c.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0)) {
            return Err(Error::InvalidWeight { index: i, value: v });
        }
        if let Some(u) = self.upper {
            if u.len() != n {
                return Err(Error::DimensionMismatch { what: "QP upper bounds", expected: n, found: u.len() });
            }
            if let Some(&v) = u.iter().find(|v| !(**v >= 0.0)) {
                return Err(invalid("upper bound", v, "must be non-negative"));
            }
        }
        if !(self.rho > 0.0 && self.rho.is_finite()) {
            return Err(invalid("rho", self.rho, "must be positive and finite"));
        }
        Ok(())
    }

    fn upper(&self, i: usize) -> f64 {
        self.upper.map_or(f64::INFINITY, |u| u[i])
    }

    /// `F(α, β)` (the minimisation form), computed from scratch.
    pub fn objective(&self, alpha: &[f64], beta: &[f64]) -> f64 {
        let (p, q) = self.products(alpha, beta);
        let v: Vec<f64> = (0..self.n()).map(|i| alpha[i] + beta[i] - self.c[i]).collect();
        (0..self.n()).map(|i| 0.5 * alpha[i] * self.y[i] * p[i] - alpha[i] + 0.5 / self.rho * v[i] * q[i]).sum()
    }

    /// `F` in `O(n)` from the gradient the solver keeps: with `y∘A(α∘y) = g_α + 1 − g_β` and
    /// `B(α + β − c)/ρ = g_β`, `F = ½ Σ_i [α_i (g_αi − 1) + (β_i − c_i) g_βi]`.
    fn value_from_gradient(&self, state: &State<'_>) -> f64 {
        let terms =
            (0..self.n()).map(|i| state.alpha[i] * (state.ga[i] - 1.0) + (state.beta[i] - self.c[i]) * state.gb[i]);
        0.5 * terms.sum::<f64>()
    }

    /// `p = A(α∘y)`, `q = B(α + β − c)`.
    fn products(&self, alpha: &[f64], beta: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let n = self.n();
        let ay: Vec<f64> = (0..n).map(|i| alpha[i] * self.y[i]).collect();
        let v: Vec<f64> = (0..n).map(|i| alpha[i] + beta[i] - self.c[i]).collect();
        let a = self.a.as_slice().expect("validated layout");
        let b = self.b.as_slice().expect("validated layout");
        let row_dot = |m: &[f64], i: usize, x: &[f64]| crate::data::dot(&m[i * n..(i + 1) * n], x);
        ((0..n).map(|i| row_dot(a, i, &ay)).collect(), (0..n).map(|i| row_dot(b, i, &v)).collect())
    }

    /// `∇F`: `(g_α, g_β)` at `(α, β)`, computed from scratch.
    pub fn gradient(&self, alpha: &[f64], beta: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (p, q) = self.products(alpha, beta);
        let ga = (0..self.n()).map(|i| self.y[i] * p[i] - 1.0 + q[i] / self.rho).collect();
        let gb = q.iter().map(|v| v / self.rho).collect();
        (ga, gb)
    }

    /// The natural KKT residual of `(α, β, b, b*)`: the largest of the equality violations and
    /// `|x − P(x − r)|` over all variables, `r = g + (y b + b*, b*)` the Lagrangian gradient and `P` the
    /// projection on the bounds. Zero exactly at an optimum with its multipliers.
    pub fn kkt_residual(&self, alpha: &[f64], beta: &[f64], bias: f64, bias_star: f64) -> f64 {
        let (ga, gb) = self.gradient(alpha, beta);
        let mut res: f64 = 0.0;
        let (mut sum_v, mut sum_ya) = (0.0, 0.0);
        for i in 0..self.n() {
            sum_v += alpha[i] + beta[i] - self.c[i];
            sum_ya += self.y[i] * alpha[i];
            let ra = ga[i] + self.y[i] * bias + bias_star;
            let rb = gb[i] + bias_star;
            res = res.max((alpha[i] - (alpha[i] - ra).clamp(0.0, self.upper(i))).abs());
            res = res.max((beta[i] - (beta[i] - rb).max(0.0)).abs());
            res = res.max((-alpha[i]).max(alpha[i] - self.upper(i)).max(-beta[i]).max(0.0));
        }
        res.max(sum_v.abs()).max(sum_ya.abs())
    }

    /// Solves the QP from the feasible start `α = 0`, `β = c`.
    pub fn solve(&self, settings: &QpSettings) -> Result<QpSolution> {
        self.solve_monitored(settings, Monitor::default())
    }

    /// [`Self::solve`], reporting the dual objective `-F` and the KKT violation to `monitor` every
    /// [`STEP_EVENTS_EVERY`] steps and at the end.
    pub fn solve_monitored(&self, settings: &QpSettings, monitor: Monitor<'_>) -> Result<QpSolution> {
        self.validate()?;
        if !(settings.tol > 0.0 && settings.tol.is_finite()) {
            return Err(invalid("tol", settings.tol, "must be positive and finite"));
        }
        let n = self.n();
        let (pos, neg) = (self.y.iter().any(|&v| v > 0.0), self.y.iter().any(|&v| v < 0.0));
        if !(pos && neg) {
            return Err(Error::SingleClass { label: if pos { 1 } else { -1 } });
        }
        let a = self.a.as_slice().expect("validated layout");
        let b = self.b.as_slice().expect("validated layout");
        let inv_rho = 1.0 / self.rho;
        let y = self.y;
        let upper: Vec<f64> = (0..n).map(|i| self.upper(i)).collect();
        let diag_a: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
        let diag_b: Vec<f64> = (0..n).map(|i| b[i * n + i]).collect();
        let mut alpha = vec![0.0; n];
        let mut beta: Vec<f64> = self.c.to_vec();
        // ∇F at the start (A(α∘y) = 0, Bv = 0), then kept up to date row by row:
        // g_α = y∘A(α∘y) − 1 + Bv/ρ, g_β = Bv/ρ.
        let mut ga = vec![-1.0; n];
        let mut gb = vec![0.0; n];

        let mut n_iter = 0;
        let (mut since_face, mut n_face) = (0, 0);
        // SMO steps since a variable last entered or left a bound.
        let mut since_change = 0usize;
        let settled = face_settled(n);
        // SMO steps before the next face step may be tried: `settled`, or `n` after a step that failed
        // (a singular face would otherwise be factorised again every `settled` steps).
        let mut wait = settled;
        let mut initial_violation = f64::NAN;
        let ctx = Ctx { a, b, n, y, inv_rho, diag_a: &diag_a, diag_b: &diag_b };
        loop {
            let state = State { alpha: &alpha, beta: &beta, upper: &upper, ga: &ga, gb: &gb };
            let extremes = Extremes::scan(&state, y);
            let violation = extremes.intervals().violation();
            if n_iter == 0 {
                initial_violation = violation;
            }
            if violation <= settings.tol || n_iter >= settings.max_iter {
                break;
            }
            if n_iter > 0
                && n_iter % STEP_EVENTS_EVERY == 0
                && monitor.iteration(n_iter, Quantity::KktViolation, || (-self.value_from_gradient(&state), violation))
            {
                break;
            }
            n_iter += 1;
            let Some((mv, t)) = ctx.working_set(&state, &extremes) else { break };
            if !(t > 0.0) {
                // Rounding hides the violation from every direction: nothing can move.
                break;
            }
            since_change += 1;
            for e in mv.entries() {
                let m = e.index;
                let was = face_status(alpha[m], beta[m], upper[m]);
                let new_alpha = if e.da != 0.0 { (alpha[m] + e.da * t).clamp(0.0, upper[m]) } else { alpha[m] };
                let new_beta = if e.db != 0.0 { (beta[m] + e.db * t).max(0.0) } else { beta[m] };
                ctx.set(m, new_alpha, new_beta, &mut alpha, &mut beta, &mut ga, &mut gb);
                if was != face_status(alpha[m], beta[m], upper[m]) {
                    since_change = 0;
                }
            }
            since_face += 1;
            if (since_change >= settled && since_face >= wait) || since_face >= FACE_FALLBACK * n {
                // The active set has settled (or SMO has had a long run): jump to the optimum of its face.
                since_face = 0;
                let moved = ctx.face_step(&upper, &mut alpha, &mut beta, &mut ga, &mut gb);
                n_face += usize::from(moved);
                wait = if moved { settled } else { n.max(settled) };
            }
        }
        // Final gradient from scratch (no accumulated rounding in b, b* and the objective).
        let (ga, gb) = self.gradient(&alpha, &beta);
        let state = State { alpha: &alpha, beta: &beta, upper: &upper, ga: &ga, gb: &gb };
        let intervals = Extremes::scan(&state, y).intervals();
        let violation_final = intervals.violation();
        let (bias, bias_star) = recover_bias(&state, y, &intervals);
        let dual_objective = -self.objective(&alpha, &beta);
        monitor.iteration(n_iter, Quantity::KktViolation, || (dual_objective, violation_final.max(0.0)));
        Ok(QpSolution {
            dual_objective,
            alpha,
            beta,
            bias,
            bias_star,
            n_iter,
            face_steps: n_face,
            converged: violation_final <= settings.tol,
            violation: violation_final.max(0.0),
            initial_violation: initial_violation.max(0.0),
        })
    }
}

/// SMO steps without a change of the active set after which a face step is tried: `n/10`, within
/// `[20, 200]`. SMO changes the active set often while it is far from the optimum; a face step then
/// costs `O(|F|³)` for little (the first face steps of a fixed schedule every `n` steps at n = 2,000
/// had |F| ≈ 1,500 and took most of the time without cutting the violation by half).
fn face_settled(n: usize) -> usize {
    (n / 10).clamp(20, 200)
}

/// A face step is tried at the latest after `FACE_FALLBACK · n` SMO steps.
const FACE_FALLBACK: usize = 20;

/// Which of `α_i`, `β_i` are free (off their bounds).
#[inline]
fn face_status(alpha: f64, beta: f64, upper: f64) -> (bool, bool) {
    (alpha > 0.0 && alpha < upper, beta > 0.0)
}

/// The iterate, read-only, for the working-set selection.
struct State<'s> {
    alpha: &'s [f64],
    beta: &'s [f64],
    upper: &'s [f64],
    ga: &'s [f64],
    gb: &'s [f64],
}

/// One variable's change per unit step.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    index: usize,
    da: f64,
    db: f64,
}

/// A direction in `(α, β)` space keeping both equalities: at most four entries.
#[derive(Debug, Clone, Copy, Default)]
struct Move {
    entries: [Entry; 4],
    len: usize,
}

impl Move {
    fn new(entries: &[(usize, f64, f64)]) -> Move {
        let mut m = Move { len: entries.len(), ..Move::default() };
        for (e, &(index, da, db)) in m.entries.iter_mut().zip(entries) {
            *e = Entry { index, da, db };
        }
        m
    }

    fn entries(&self) -> &[Entry] {
        &self.entries[..self.len]
    }
}

/// The directional derivative of `F` along `entries`.
fn derivative(s: &State<'_>, entries: &[Entry]) -> f64 {
    entries.iter().map(|e| e.da * s.ga[e.index] + e.db * s.gb[e.index]).sum()
}

/// The largest feasible step along `entries`.
fn room(s: &State<'_>, entries: &[Entry]) -> f64 {
    entries.iter().fold(f64::INFINITY, |r, e| r.min(room_of(s, e.index, e.da, e.db)))
}

/// The largest feasible step of variable `i` moving by `(da, db)` per unit.
#[inline]
fn room_of(s: &State<'_>, i: usize, da: f64, db: f64) -> f64 {
    let mut r = f64::INFINITY;
    if da > 0.0 {
        r = (s.upper[i] - s.alpha[i]) / da;
    } else if da < 0.0 {
        r = s.alpha[i] / -da;
    }
    if db < 0.0 {
        r = r.min(s.beta[i] / -db);
    }
    r
}

/// The decrease of `F` by the clipped exact step along a direction with derivative `d`, curvature `curv`
/// and room `room`, and the step; `None` if the direction does not descend or cannot move.
#[inline]
fn step_gain(d: f64, curv: f64, room: f64) -> Option<(f64, f64)> {
    if !(d < 0.0) {
        return None;
    }
    let t = if curv > TAU { (-d / curv).min(room) } else { room };
    if !(t > 0.0) || !t.is_finite() {
        return None;
    }
    Some((-(d * t + 0.5 * curv.max(0.0) * t * t), t))
}

/// The working-set kinds: the circuits of the module docs, and two `v`-preserving compounds (an α pair
/// whose β's absorb the change of `α_i + β_i`), which move α like an SVM's SMO without touching the
/// correction term — without them small `ρ` (a stiff `B/ρ`) makes the circuits crawl.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    BetaPair,
    AlphaPair {
        positive: bool,
    },
    TripleUp,
    TripleDown,
    /// `α_i += t, β_i −= t, α_j −= t, β_j += t`, `y_i = y_j`.
    SvmPair {
        positive: bool,
    },
    /// `α_i += t, β_i −= t, α_j += t, β_j −= t`, `y_i = −y_j` (`up`), or the reverse.
    SvmOpposite {
        up: bool,
    },
}

const KINDS: [Kind; 9] = [
    Kind::BetaPair,
    Kind::AlphaPair { positive: true },
    Kind::AlphaPair { positive: false },
    Kind::TripleUp,
    Kind::TripleDown,
    Kind::SvmPair { positive: true },
    Kind::SvmPair { positive: false },
    Kind::SvmOpposite { up: true },
    Kind::SvmOpposite { up: false },
];

/// The smallest value of a key over an index set and its first index (`usize::MAX`: the set is empty).
#[derive(Debug, Clone, Copy)]
struct ArgMin {
    index: usize,
    value: f64,
}

impl ArgMin {
    const EMPTY: ArgMin = ArgMin { index: usize::MAX, value: f64::INFINITY };

    #[inline]
    fn offer(&mut self, index: usize, value: f64) {
        if value < self.value || self.index == usize::MAX {
            *self = ArgMin { index, value };
        }
    }

    fn get(&self) -> Option<usize> {
        (self.index != usize::MAX).then_some(self.index)
    }
}

/// Everything the first-order selection and the stopping rule need, from one pass over the variables.
/// Index `[0]` is the negative class, `[1]` the positive; `h = g_α − g_β` is the derivative along
/// `α_i += 1, β_i −= 1` (`v` unchanged).
#[derive(Debug, Clone, Copy)]
struct Extremes {
    /// `min g_β` over all β.
    gb_min: ArgMin,
    /// `min −g_β` over `β > 0`.
    neg_gb_min: ArgMin,
    /// `min g_α` over increasable α, per class.
    ga_up: [ArgMin; 2],
    /// `min −g_α` over decreasable α, per class.
    neg_ga_down: [ArgMin; 2],
    /// `min h` over increasable α with `β > 0`, per class.
    h_up: [ArgMin; 2],
    /// `min −h` over decreasable α, per class.
    neg_h_down: [ArgMin; 2],
}

impl Extremes {
    fn scan(s: &State<'_>, y: &[f64]) -> Extremes {
        let mut x = Extremes {
            gb_min: ArgMin::EMPTY,
            neg_gb_min: ArgMin::EMPTY,
            ga_up: [ArgMin::EMPTY; 2],
            neg_ga_down: [ArgMin::EMPTY; 2],
            h_up: [ArgMin::EMPTY; 2],
            neg_h_down: [ArgMin::EMPTY; 2],
        };
        for (i, &yi) in y.iter().enumerate() {
            let c = usize::from(yi > 0.0);
            let (ga, gb) = (s.ga[i], s.gb[i]);
            let (up, down, free_beta) = (s.alpha[i] < s.upper[i], s.alpha[i] > 0.0, s.beta[i] > 0.0);
            x.gb_min.offer(i, gb);
            if free_beta {
                x.neg_gb_min.offer(i, -gb);
            }
            if up {
                x.ga_up[c].offer(i, ga);
                if free_beta {
                    x.h_up[c].offer(i, ga - gb);
                }
            }
            if down {
                x.neg_ga_down[c].offer(i, -ga);
                x.neg_h_down[c].offer(i, gb - ga);
            }
        }
        x
    }

    /// The KKT intervals of the module docs (an empty set gives an infinite end).
    fn intervals(&self) -> Intervals {
        Intervals {
            lo_pos: -self.ga_up[1].value,
            hi_pos: self.neg_ga_down[1].value,
            lo_neg: -self.ga_up[0].value,
            hi_neg: self.neg_ga_down[0].value,
            lo_star: -self.gb_min.value,
            hi_star: self.neg_gb_min.value,
        }
    }

    /// The steepest direction of `kind` (first order), if its index sets are not empty.
    fn first_order(&self, kind: Kind) -> Option<Move> {
        let pair = |i: &ArgMin, j: &ArgMin| i.get().zip(j.get()).filter(|(i, j)| i != j);
        match kind {
            Kind::BetaPair => {
                pair(&self.gb_min, &self.neg_gb_min).map(|(i, j)| Move::new(&[(i, 0.0, 1.0), (j, 0.0, -1.0)]))
            }
            Kind::AlphaPair { positive } => {
                let c = usize::from(positive);
                pair(&self.ga_up[c], &self.neg_ga_down[c]).map(|(i, j)| Move::new(&[(i, 1.0, 0.0), (j, -1.0, 0.0)]))
            }
            Kind::TripleUp => {
                let (i, j, k) = (self.ga_up[1].get()?, self.ga_up[0].get()?, self.neg_gb_min.get()?);
                Some(Move::new(&[(i, 1.0, 0.0), (j, 1.0, 0.0), (k, 0.0, -2.0)]))
            }
            Kind::TripleDown => {
                let (i, j, k) = (self.neg_ga_down[1].get()?, self.neg_ga_down[0].get()?, self.gb_min.get()?);
                Some(Move::new(&[(i, -1.0, 0.0), (j, -1.0, 0.0), (k, 0.0, 2.0)]))
            }
            Kind::SvmPair { positive } => {
                let c = usize::from(positive);
                pair(&self.h_up[c], &self.neg_h_down[c]).map(|(i, j)| Move::new(&[(i, 1.0, -1.0), (j, -1.0, 1.0)]))
            }
            Kind::SvmOpposite { up: true } => {
                let (i, j) = (self.h_up[1].get()?, self.h_up[0].get()?);
                Some(Move::new(&[(i, 1.0, -1.0), (j, 1.0, -1.0)]))
            }
            Kind::SvmOpposite { up: false } => {
                let (i, j) = (self.neg_h_down[1].get()?, self.neg_h_down[0].get()?);
                Some(Move::new(&[(i, -1.0, 1.0), (j, -1.0, 1.0)]))
            }
        }
    }
}

/// The rows of `m` (`n × n`, row-major) of the entries with a nonzero weight `w(e)`, with the weights.
fn weighted_rows<'m>(m: &'m [f64], n: usize, entries: &[Entry], w: impl Fn(&Entry) -> f64) -> Vec<(&'m [f64], f64)> {
    entries.iter().map(|e| (&m[e.index * n..(e.index + 1) * n], w(e))).filter(|r| r.1 != 0.0).collect()
}

/// The matrices, read-only.
struct Ctx<'m> {
    a: &'m [f64],
    b: &'m [f64],
    n: usize,
    y: &'m [f64],
    inv_rho: f64,
    diag_a: &'m [f64],
    diag_b: &'m [f64],
}

impl Ctx<'_> {
    /// One Newton step on the face of the iterate (module `face`); whether it moved.
    fn face_step(&self, upper: &[f64], alpha: &mut [f64], beta: &mut [f64], ga: &mut [f64], gb: &mut [f64]) -> bool {
        let state = State { alpha, beta, upper, ga, gb };
        let free = face::free_set(&state);
        if free.len() > face::MAX_FREE {
            return false;
        }
        let step = face::newton_step(self, &state, &free);
        let Some(step) = step else { return false };
        for (r, (&(m, is_alpha), &d)) in free.iter().zip(&step.change).enumerate() {
            let (mut new_alpha, mut new_beta) = (alpha[m], beta[m]);
            if is_alpha {
                new_alpha = (alpha[m] + d).clamp(0.0, upper[m]);
            } else {
                new_beta = (beta[m] + d).max(0.0);
            }
            if step.on_bound[r] {
                // A variable the step pins lands exactly on its bound.
                match (is_alpha, d < 0.0) {
                    (true, true) => new_alpha = 0.0,
                    (true, false) => new_alpha = upper[m],
                    (false, _) => new_beta = 0.0,
                }
            }
            self.set(m, new_alpha, new_beta, alpha, beta, ga, gb);
        }
        true
    }

    /// Sets `α_m`, `β_m` and updates the gradient by the change: `g_α,j += y_j y_m A_mj Δα_m`, and both
    /// `g_α,j` and `g_β,j` gain `B_mj Δv_m / ρ`.
    #[allow(clippy::too_many_arguments)]
    fn set(
        &self,
        m: usize,
        new_alpha: f64,
        new_beta: f64,
        alpha: &mut [f64],
        beta: &mut [f64],
        ga: &mut [f64],
        gb: &mut [f64],
    ) {
        let n = self.n;
        let da = new_alpha - alpha[m];
        let dv = da + (new_beta - beta[m]);
        (alpha[m], beta[m]) = (new_alpha, new_beta);
        if da != 0.0 {
            let coef = da * self.y[m];
            for ((g, &amj), &yj) in ga.iter_mut().zip(&self.a[m * n..(m + 1) * n]).zip(self.y) {
                *g += coef * yj * amj;
            }
        }
        if dv != 0.0 {
            let coef = dv * self.inv_rho;
            for ((g, h), &bmj) in ga.iter_mut().zip(gb.iter_mut()).zip(&self.b[m * n..(m + 1) * n]) {
                *g += coef * bmj;
                *h += coef * bmj;
            }
        }
    }

    /// `uᵀM u` of a direction: `A` on the change of `α∘y`, `B/ρ` on the change of `v = α + β − c`.
    fn curvature(&self, entries: &[Entry]) -> f64 {
        let n = self.n;
        let mut total = 0.0;
        for e in entries {
            for f in entries {
                let (i, j) = (e.index, f.index);
                total += e.da * f.da * self.y[i] * self.y[j] * self.a[i * n + j]
                    + (e.da + e.db) * (f.da + f.db) * self.inv_rho * self.b[i * n + j];
            }
        }
        total
    }

    /// The decrease of `F` by the clipped exact step along `mv`, and the step (`None` if `mv` ascends).
    fn gain(&self, mv: &Move, s: &State<'_>) -> Option<(f64, f64)> {
        let e = mv.entries();
        step_gain(derivative(s, e), self.curvature(e), room(s, e))
    }

    /// Entry `slot` of `mv` re-chosen over the indices `m` with `eligible(m)` by the largest decrease of
    /// `F` (second order); `mv` is kept (step `None`) unless some partner beats `gain`. With the other
    /// entries fixed the curvature is `c_FF + 2·(cross terms from the fixed entries' rows of A and B) +
    /// the partner's diagonal term`: `O(1)` per candidate, rows read in order.
    fn best_partner(
        &self,
        s: &State<'_>,
        mv: Move,
        slot: usize,
        gain: f64,
        eligible: impl Fn(usize) -> bool,
    ) -> (Move, f64, Option<f64>) {
        let n = self.n;
        let mut fixed = [Entry::default(); 3];
        let mut nf = 0;
        for (k, e) in mv.entries().iter().enumerate() {
            if k != slot {
                fixed[nf] = *e;
                nf += 1;
            }
        }
        let fixed = &fixed[..nf];
        let Entry { da, db, .. } = mv.entries[slot];
        let dv = da + db;
        let (d_fixed, room_fixed, curv_fixed) = (derivative(s, fixed), room(s, fixed), self.curvature(fixed));
        // Σ_e (da_e y_e) A_e,m and Σ_e (da_e + db_e) B_e,m over the fixed entries e.
        let rows_a = weighted_rows(self.a, n, fixed, |e| e.da * self.y[e.index]);
        let rows_b = weighted_rows(self.b, n, fixed, |e| e.da + e.db);
        let mut best: Option<(usize, f64)> = None;
        let mut best_gain = gain;
        for m in 0..n {
            let d = d_fixed + da * s.ga[m] + db * s.gb[m];
            if !(d < 0.0) || !eligible(m) {
                continue;
            }
            let cross_a: f64 = rows_a.iter().map(|(r, w)| w * r[m]).sum();
            let cross_b: f64 = rows_b.iter().map(|(r, w)| w * r[m]).sum();
            let curv = curv_fixed
                + 2.0 * (da * self.y[m] * cross_a + dv * self.inv_rho * cross_b)
                + da * da * self.diag_a[m]
                + dv * dv * self.inv_rho * self.diag_b[m];
            if let Some((g, t)) = step_gain(d, curv, room_fixed.min(room_of(s, m, da, db)))
                && g > best_gain
            {
                best_gain = g;
                best = Some((m, t));
            }
        }
        match best {
            Some((m, t)) => {
                let mut mv = mv;
                mv.entries[slot].index = m;
                (mv, best_gain, Some(t))
            }
            None => (mv, gain, None),
        }
    }

    /// The working set: for every kind the steepest (first-order) direction; the kind whose direction
    /// decreases `F` most; then its partner index re-chosen by the largest decrease (second order).
    fn working_set(&self, s: &State<'_>, extremes: &Extremes) -> Option<(Move, f64)> {
        let y = self.y;
        let mut best: Option<(Kind, Move, f64, f64)> = None;
        for kind in KINDS {
            let Some(mv) = extremes.first_order(kind) else { continue };
            if let Some((gain, t)) = self.gain(&mv, s)
                && best.as_ref().is_none_or(|b| gain > b.2)
            {
                best = Some((kind, mv, gain, t));
            }
        }
        let (kind, mut mv, mut gain, mut t) = best?;
        // Second order: re-choose the partner (entry 1 for pairs; entries 1 then 2 for triples) within
        // the class the kind requires.
        let i = mv.entries[0].index;
        let slots: &[usize] = match kind {
            Kind::TripleUp | Kind::TripleDown => &[1, 2],
            _ => &[1],
        };
        for &slot in slots {
            let (m, g, step) = match kind {
                Kind::BetaPair => self.best_partner(s, mv, slot, gain, |m| m != i),
                Kind::AlphaPair { .. } | Kind::SvmPair { .. } => {
                    self.best_partner(s, mv, slot, gain, |m| m != i && y[m] == y[i])
                }
                Kind::SvmOpposite { .. } => self.best_partner(s, mv, slot, gain, |m| y[m] != y[i]),
                Kind::TripleUp | Kind::TripleDown if slot == 1 => {
                    self.best_partner(s, mv, slot, gain, |m| y[m] != y[i])
                }
                Kind::TripleUp | Kind::TripleDown => self.best_partner(s, mv, slot, gain, |_| true),
            };
            if let Some(step) = step {
                (mv, gain, t) = (m, g, step);
            }
        }
        Some((mv, t))
    }
}

/// Midpoint of `[lo, hi]`, the finite end if only one is finite, 0 if neither.
fn midpoint(lo: f64, hi: f64) -> f64 {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => 0.5 * (lo + hi),
        (true, false) => lo,
        (false, true) => hi,
        (false, false) => 0.0,
    }
}

/// `(b, b*)` by the rule of the module docs.
fn recover_bias(s: &State<'_>, y: &[f64], it: &Intervals) -> (f64, f64) {
    let (alpha, beta, upper, ga, gb) = (s.alpha, s.beta, s.upper, s.ga, s.gb);
    let mean = |v: (f64, usize)| (v.1 > 0).then(|| v.0 / v.1 as f64);
    let (mut sp, mut sn, mut ss) = ((0.0, 0), (0.0, 0), (0.0, 0));
    for i in 0..y.len() {
        if alpha[i] > 0.0 && alpha[i] < upper[i] {
            let acc = if y[i] > 0.0 { &mut sp } else { &mut sn };
            acc.0 -= ga[i];
            acc.1 += 1;
        }
        if beta[i] > 0.0 {
            ss.0 -= gb[i];
            ss.1 += 1;
        }
    }
    match (mean(sp), mean(sn), mean(ss)) {
        (Some(p), Some(m), Some(s)) => (0.5 * (p - m), (p + m + s) / 3.0),
        (Some(p), Some(m), None) => (0.5 * (p - m), 0.5 * (p + m)),
        (Some(p), None, Some(s)) => (p - s, s),
        (None, Some(m), Some(s)) => (s - m, s),
        (None, None, Some(s)) => {
            // s₊ = s + b ∈ [m₊, M₊], s₋ = s − b ∈ [m₋, M₋].
            let lo = (it.lo_pos - s).max(s - it.hi_neg);
            let hi = (it.hi_pos - s).min(s - it.lo_neg);
            (midpoint(lo, hi), s)
        }
        (Some(p), None, None) => {
            // b* ∈ [m*, M*] and s₋ = 2b* − s₊ ∈ [m₋, M₋].
            let lo = it.lo_star.max(0.5 * (it.lo_neg + p));
            let hi = it.hi_star.min(0.5 * (it.hi_neg + p));
            let bs = midpoint(lo, hi);
            (p - bs, bs)
        }
        (None, Some(m), None) => {
            let lo = it.lo_star.max(0.5 * (it.lo_pos + m));
            let hi = it.hi_star.min(0.5 * (it.hi_pos + m));
            let bs = midpoint(lo, hi);
            (bs - m, bs)
        }
        (None, None, None) => {
            let (p, m) = (midpoint(it.lo_pos, it.hi_pos), midpoint(it.lo_neg, it.hi_neg));
            let bs = (0.5 * (p + m)).clamp(it.lo_star.min(it.hi_star), it.hi_star.max(it.lo_star));
            (0.5 * (p - m), bs)
        }
    }
}
