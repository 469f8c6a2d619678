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
//! bounds. Gradients are kept up to date in `O(n)` per changed variable from rows of `A` and `B`.
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
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
    /// The multiplier of `yᵀα = 0`: the intercept of `f(x) = Σ α_i y_i k(x_i, x) + b`.
    pub bias: f64,
    /// The multiplier of `1ᵀv = 0`: the intercept of the correcting function.
    pub bias_star: f64,
    /// The paper's dual objective `−F(α, β)` (to be maximised).
    pub dual_objective: f64,
    pub n_iter: usize,
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
                return Err(Error::Numerical(format!("{what} must be in row-major layout")));
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
        let mut alpha = vec![0.0; n];
        let mut beta: Vec<f64> = self.c.to_vec();
        // p = A(α∘y), q = B v; at the start both are zero.
        let mut p = vec![0.0; n];
        let mut q = vec![0.0; n];
        let mut ga = vec![-1.0; n];
        let mut gb = vec![0.0; n];

        let mut n_iter = 0;
        let mut initial_violation = f64::NAN;
        let ctx = Ctx { a, b, n, y, inv_rho };
        loop {
            for i in 0..n {
                ga[i] = y[i] * p[i] - 1.0 + q[i] * inv_rho;
                gb[i] = q[i] * inv_rho;
            }
            let state = State { alpha: &alpha, beta: &beta, upper: &upper, ga: &ga, gb: &gb };
            let intervals = kkt_intervals(&state, y);
            let violation = intervals.violation();
            if n_iter == 0 {
                initial_violation = violation;
            }
            if violation <= settings.tol || n_iter >= settings.max_iter {
                break;
            }
            n_iter += 1;
            let Some((mv, t)) = ctx.working_set(&state) else { break };
            if !(t > 0.0) {
                // Rounding hides the violation from every direction: nothing can move.
                break;
            }
            for e in &mv.entries[..mv.len] {
                let m = e.index;
                let mut dv = 0.0;
                if e.da != 0.0 {
                    let new = (alpha[m] + e.da * t).clamp(0.0, upper[m]);
                    let da = new - alpha[m];
                    alpha[m] = new;
                    let coef = da * y[m];
                    for (pj, &amj) in p.iter_mut().zip(&a[m * n..(m + 1) * n]) {
                        *pj += coef * amj;
                    }
                    dv += da;
                }
                if e.db != 0.0 {
                    let new = (beta[m] + e.db * t).max(0.0);
                    dv += new - beta[m];
                    beta[m] = new;
                }
                if dv != 0.0 {
                    for (qj, &bmj) in q.iter_mut().zip(&b[m * n..(m + 1) * n]) {
                        *qj += dv * bmj;
                    }
                }
            }
        }
        // Final gradient from scratch (no accumulated rounding in b, b* and the objective).
        let (ga, gb) = self.gradient(&alpha, &beta);
        let state = State { alpha: &alpha, beta: &beta, upper: &upper, ga: &ga, gb: &gb };
        let intervals = kkt_intervals(&state, y);
        let violation_final = intervals.violation();
        let (bias, bias_star) = recover_bias(&state, y, &intervals);
        Ok(QpSolution {
            dual_objective: -self.objective(&alpha, &beta),
            alpha,
            beta,
            bias,
            bias_star,
            n_iter,
            converged: violation_final <= settings.tol,
            violation: violation_final.max(0.0),
            initial_violation: initial_violation.max(0.0),
        })
    }
}

/// The iterate, read-only, for the working-set selection.
struct State<'s> {
    alpha: &'s [f64],
    beta: &'s [f64],
    upper: &'s [f64],
    ga: &'s [f64],
    gb: &'s [f64],
}

impl State<'_> {
    fn up(&self, i: usize) -> bool {
        self.alpha[i] < self.upper[i]
    }
    fn down(&self, i: usize) -> bool {
        self.alpha[i] > 0.0
    }
    /// `g_α − g_β = y∘A(α∘y) − 1`: the derivative along `α_i += 1, β_i −= 1` (`v` unchanged).
    fn h(&self, i: usize) -> f64 {
        self.ga[i] - self.gb[i]
    }
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

    /// The directional derivative of `F`.
    fn derivative(&self, s: &State<'_>) -> f64 {
        self.entries().iter().map(|e| e.da * s.ga[e.index] + e.db * s.gb[e.index]).sum()
    }

    /// The largest feasible step.
    fn room(&self, s: &State<'_>) -> f64 {
        self.entries().iter().fold(f64::INFINITY, |r, e| {
            let mut r = r;
            if e.da > 0.0 {
                r = r.min((s.upper[e.index] - s.alpha[e.index]) / e.da);
            } else if e.da < 0.0 {
                r = r.min(s.alpha[e.index] / -e.da);
            }
            if e.db < 0.0 {
                r = r.min(s.beta[e.index] / -e.db);
            }
            r
        })
    }
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
    /// `α_i += t, β_i −= t, α_j += t, β_j −= t`, `y_i = −y_j` (`sign = 1`), or the reverse (`sign = −1`).
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

/// The matrices, read-only.
struct Ctx<'m> {
    a: &'m [f64],
    b: &'m [f64],
    n: usize,
    y: &'m [f64],
    inv_rho: f64,
}

impl Ctx<'_> {
    /// `uᵀM u` of the direction: `A` on the change of `α∘y`, `B/ρ` on the change of `v = α + β − c`.
    fn curvature(&self, mv: &Move) -> f64 {
        let n = self.n;
        let mut total = 0.0;
        for e in mv.entries() {
            for f in mv.entries() {
                let (i, j) = (e.index, f.index);
                total += e.da * f.da * self.y[i] * self.y[j] * self.a[i * n + j]
                    + (e.da + e.db) * (f.da + f.db) * self.inv_rho * self.b[i * n + j];
            }
        }
        total
    }

    /// The decrease of `F` by the clipped exact step along `mv`, and the step (`None` if `mv` ascends).
    fn gain(&self, mv: &Move, s: &State<'_>) -> Option<(f64, f64)> {
        let d = mv.derivative(s);
        if !(d < 0.0) {
            return None;
        }
        let curv = self.curvature(mv);
        let room = mv.room(s);
        let t = if curv > TAU { (-d / curv).min(room) } else { room };
        if !(t > 0.0) || !t.is_finite() {
            return None;
        }
        Some((-(d * t + 0.5 * curv.max(0.0) * t * t), t))
    }

    /// The direction for `kind` with first index `i`, partner `j` and (triples) β index `k`.
    fn make(kind: Kind, i: usize, j: usize, k: usize) -> Move {
        match kind {
            Kind::BetaPair => Move::new(&[(i, 0.0, 1.0), (j, 0.0, -1.0)]),
            Kind::AlphaPair { .. } => Move::new(&[(i, 1.0, 0.0), (j, -1.0, 0.0)]),
            Kind::TripleUp => Move::new(&[(i, 1.0, 0.0), (j, 1.0, 0.0), (k, 0.0, -2.0)]),
            Kind::TripleDown => Move::new(&[(i, -1.0, 0.0), (j, -1.0, 0.0), (k, 0.0, 2.0)]),
            Kind::SvmPair { .. } => Move::new(&[(i, 1.0, -1.0), (j, -1.0, 1.0)]),
            Kind::SvmOpposite { up: true } => Move::new(&[(i, 1.0, -1.0), (j, 1.0, -1.0)]),
            Kind::SvmOpposite { up: false } => Move::new(&[(i, -1.0, 1.0), (j, -1.0, 1.0)]),
        }
    }

    /// The working set: for every kind the steepest (first-order) direction; the kind whose direction
    /// decreases `F` most; then its partner index re-chosen by the largest decrease (second order).
    fn working_set(&self, s: &State<'_>) -> Option<(Move, f64)> {
        let n = self.n;
        let y = self.y;
        let argmin = |pred: &dyn Fn(usize) -> bool, key: &dyn Fn(usize) -> f64| -> Option<usize> {
            (0..n).filter(|&m| pred(m)).fold(None, |best: Option<usize>, m| match best {
                Some(b) if key(b) <= key(m) => Some(b),
                _ => Some(m),
            })
        };
        let pos = |m: usize| y[m] > 0.0;
        let mut best: Option<(Kind, Move, f64, f64)> = None;
        for kind in KINDS {
            // (first index, partner, β index) by first order.
            let first = match kind {
                Kind::BetaPair => argmin(&|_| true, &|m| s.gb[m])
                    .zip(argmin(&|m| s.beta[m] > 0.0, &|m| -s.gb[m]))
                    .map(|(i, j)| (i, j, 0)),
                Kind::AlphaPair { positive } => argmin(&|m| pos(m) == positive && s.up(m), &|m| s.ga[m])
                    .zip(argmin(&|m| pos(m) == positive && s.down(m), &|m| -s.ga[m]))
                    .map(|(i, j)| (i, j, 0)),
                Kind::TripleUp => {
                    let i = argmin(&|m| pos(m) && s.up(m), &|m| s.ga[m]);
                    let j = argmin(&|m| !pos(m) && s.up(m), &|m| s.ga[m]);
                    let k = argmin(&|m| s.beta[m] > 0.0, &|m| -s.gb[m]);
                    i.zip(j).zip(k).map(|((i, j), k)| (i, j, k))
                }
                Kind::TripleDown => {
                    let i = argmin(&|m| pos(m) && s.down(m), &|m| -s.ga[m]);
                    let j = argmin(&|m| !pos(m) && s.down(m), &|m| -s.ga[m]);
                    let k = argmin(&|_| true, &|m| s.gb[m]);
                    i.zip(j).zip(k).map(|((i, j), k)| (i, j, k))
                }
                Kind::SvmPair { positive } => {
                    argmin(&|m| pos(m) == positive && s.up(m) && s.beta[m] > 0.0, &|m| s.h(m))
                        .zip(argmin(&|m| pos(m) == positive && s.down(m), &|m| -s.h(m)))
                        .map(|(i, j)| (i, j, 0))
                }
                Kind::SvmOpposite { up: true } => argmin(&|m| pos(m) && s.up(m) && s.beta[m] > 0.0, &|m| s.h(m))
                    .zip(argmin(&|m| !pos(m) && s.up(m) && s.beta[m] > 0.0, &|m| s.h(m)))
                    .map(|(i, j)| (i, j, 0)),
                Kind::SvmOpposite { up: false } => argmin(&|m| pos(m) && s.down(m), &|m| -s.h(m))
                    .zip(argmin(&|m| !pos(m) && s.down(m), &|m| -s.h(m)))
                    .map(|(i, j)| (i, j, 0)),
            };
            let Some((i, j, k)) = first else { continue };
            if i == j && !matches!(kind, Kind::SvmOpposite { .. } | Kind::TripleUp | Kind::TripleDown) {
                continue;
            }
            let mv = Self::make(kind, i, j, k);
            if let Some((gain, t)) = self.gain(&mv, s)
                && best.as_ref().is_none_or(|b| gain > b.2)
            {
                best = Some((kind, mv, gain, t));
            }
        }
        let (kind, mut mv, mut gain, mut t) = best?;
        // Second order: re-choose the partner (entry 1 for pairs; entries 1 then 2 for triples).
        let slots: &[usize] = match kind {
            Kind::TripleUp | Kind::TripleDown => &[1, 2],
            _ => &[1],
        };
        for &slot in slots {
            let current = mv.entries[slot].index;
            for m in 0..n {
                if m == current {
                    continue;
                }
                let mut cand = mv;
                cand.entries[slot].index = m;
                // Same-class or opposite-class partners only, as the kind requires.
                let i = mv.entries[0].index;
                let ok = match kind {
                    Kind::BetaPair => m != i,
                    Kind::AlphaPair { .. } | Kind::SvmPair { .. } => m != i && y[m] == y[i],
                    Kind::SvmOpposite { .. } => y[m] != y[i],
                    Kind::TripleUp | Kind::TripleDown => slot == 2 || y[m] != y[i],
                };
                if !ok {
                    continue;
                }
                if let Some((g, step)) = self.gain(&cand, s)
                    && g > gain
                {
                    (mv, gain, t) = (cand, g, step);
                }
            }
        }
        Some((mv, t))
    }
}

/// The KKT intervals of the module docs.
fn kkt_intervals(s: &State<'_>, y: &[f64]) -> Intervals {
    let inf = f64::INFINITY;
    let mut it = Intervals { lo_pos: -inf, hi_pos: inf, lo_neg: -inf, hi_neg: inf, lo_star: -inf, hi_star: inf };
    for (i, &yi) in y.iter().enumerate() {
        let v = -s.ga[i];
        let (lo, hi) = if yi > 0.0 { (&mut it.lo_pos, &mut it.hi_pos) } else { (&mut it.lo_neg, &mut it.hi_neg) };
        if s.up(i) {
            *lo = lo.max(v);
        }
        if s.down(i) {
            *hi = hi.min(v);
        }
        let w = -s.gb[i];
        it.lo_star = it.lo_star.max(w);
        if s.beta[i] > 0.0 {
            it.hi_star = it.hi_star.min(w);
        }
    }
    it
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
