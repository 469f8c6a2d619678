//! One regularised-risk objective for every linear method:
//!
//! `J(w, b) = λ/2 ‖w‖² + (1/ℓ) Σ_i c_i L(d_i, σ_i)`, `d_i = 1 - y_i(wᵀx_i + b)`,
//! `σ_i = √(wᵀΣ_i w + ε²)`,
//!
//! where `L` is any [`MarginLoss`], `Σ_i` any [`Covariance`], the bias `b` is not regularised and `ε ≥ 0`
//! is an optional floor that makes the objective smooth where `wᵀΣ_i w = 0` (the exact solver drives it
//! to a tiny value; `ε = 0` is the exact objective). With `u = -y x` (`∂d/∂w`) and `s = Σw/σ` (`∂σ/∂w`):
//!
//! `∇_w J = λw + (1/ℓ) Σ c_i (L_d u_i + L_σ s_i)`, `∂_b J = -(1/ℓ) Σ c_i L_d y_i`,
//!
//! `H v = λv + (1/ℓ) Σ c_i ( [u s] ∇²L [u s]ᵀ v + (L_σ/σ)(Σ_i v - s sᵀv) )`
//!
//! (with the bias coordinate of `u` equal to `-y` and that of `s` zero). For the expected hinge loss
//! this is DESIGN 2.1's `(φ/σ)(a aᵀv + Σv - Σw wᵀΣv/σ²)`, `a = u - t s`.
//!
//! Sums over examples run over fixed-size chunks in parallel and are added in chunk order, so results
//! are bit-for-bit reproducible whatever the number of threads. The passes that accumulate a vector of
//! length `n` (the gradient and `Hv`) give each block of consecutive examples its own accumulator; a block
//! holds at least `CHUNK` examples and, for sparse rows, enough of them to scatter about `n` entries, so
//! that a pass costs O(nnz + n) — not O(ℓ·n) — however wide and sparse the data. The block length depends
//! on the data only (never on the thread count), so the bits do not either.

use rayon::prelude::*;

use crate::covariance::Covariance;
use crate::data::{Features, axpy, dot};
use crate::linalg::columns_from_products;
use crate::loss::{LossDerivatives, MarginLoss};

/// Examples per parallel work unit; partial sums are added in a fixed order.
const CHUNK: usize = 256;
/// Below this many chunks a pass runs on the calling thread (thread hand-off costs more than it saves).
const PARALLEL_MIN_CHUNKS: usize = 8;
/// Blocks of sparse rows larger than one chunk run in parallel only above this many entries in total.
const PARALLEL_MIN_ENTRIES: usize = 1 << 16;

/// The data term's inputs: means, labels `±1`, optional weights `c_i`, covariances.
#[derive(Clone, Copy)]
pub struct Problem<'a> {
    /// The means.
    pub features: &'a Features<'a>,
    /// Labels in `{-1, +1}`.
    pub y: &'a [f64],
    /// Weights `c_i`; `None` means 1.
    pub weights: Option<&'a [f64]>,
    /// The covariances `Σ_i`.
    pub covariances: &'a dyn Covariance,
}

impl Problem<'_> {
    /// `ℓ`.
    pub fn n_samples(&self) -> usize {
        self.y.len()
    }
    /// `n`.
    pub fn n_features(&self) -> usize {
        self.features.n_features()
    }
    #[inline]
    /// `c_i` (1 without weights).
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
    }

    /// How a pass that accumulates an `n`-vector splits the examples: blocks of whole [`CHUNK`]s that each
    /// touch (on average) at least `n` entries — the features' stored entries plus the covariances'
    /// [`Covariance::apply_entries`] — so that the accumulators cost at most about as much as the data.
    /// Dense rows touch `n` entries each, so their blocks are single chunks, as before.
    fn blocks(&self) -> Blocks {
        let (l, n) = (self.n_samples(), self.n_features());
        let mut entries = self.features.stored_entries();
        if let Features::Dense(_) = self.features {
            return Blocks { len: CHUNK, entries };
        }
        if !self.covariances.is_zero() {
            entries += (0..l).map(|i| self.covariances.apply_entries(i, n)).sum::<usize>();
        }
        let per_example = (entries / l.max(1)).max(1);
        Blocks { len: n.div_ceil(per_example).div_ceil(CHUNK).max(1) * CHUNK, entries }
    }
}

/// Consecutive blocks of `len` examples (or curvature terms), one accumulator each (see [`Problem::blocks`]).
#[derive(Clone, Copy)]
struct Blocks {
    len: usize,
    /// Entries touched by a pass over all examples (for the decision to go parallel).
    entries: usize,
}

impl Blocks {
    /// `out = Σ_blocks acc_k`, where `f(range, acc_k)` adds block `k`'s contributions to a zeroed `acc_k`;
    /// the accumulators are added in block order (a single block accumulates into `out` directly). Returns
    /// `f`'s results in block order.
    fn accumulate<T: Send>(
        self,
        count: usize,
        out: &mut [f64],
        f: impl Fn(std::ops::Range<usize>, &mut [f64]) -> T + Sync + Send,
    ) -> Vec<T> {
        out.iter_mut().for_each(|o| *o = 0.0);
        let blocks = count.div_ceil(self.len);
        if blocks <= 1 {
            return vec![f(0..count, out)];
        }
        let dim = out.len();
        let range = |k: usize| k * self.len..((k + 1) * self.len).min(count);
        let run = |k: usize| {
            let mut acc = vec![0.0; dim];
            let t = f(range(k), &mut acc);
            (acc, t)
        };
        let parallel =
            if self.len == CHUNK { blocks >= PARALLEL_MIN_CHUNKS } else { self.entries >= PARALLEL_MIN_ENTRIES };
        let partial: Vec<(Vec<f64>, T)> =
            if parallel { (0..blocks).into_par_iter().map(run).collect() } else { (0..blocks).map(run).collect() };
        partial
            .into_iter()
            .map(|(acc, t)| {
                axpy(1.0, &acc, out);
                t
            })
            .collect()
    }
}

/// `λ/2‖w‖² + (1/ℓ) Σ c_i L(d_i, σ_i)` over `θ = [w; b]` (or `θ = w` without intercept).
#[derive(Clone, Copy)]
pub struct Objective<'a, L> {
    /// The data.
    pub problem: Problem<'a>,
    /// The loss of `(d_i, σ_i)`.
    pub loss: L,
    /// `λ > 0`.
    pub lambda: f64,
    /// Whether `θ` ends with an intercept.
    pub fit_intercept: bool,
    /// `ε` in `σ_i = √(wᵀΣ_i w + ε²)`.
    pub sigma_floor: f64,
}

/// Per-example second-order coefficients saved by [`Objective::value_grad`] for Hessian-vector products.
#[derive(Debug, Clone)]
pub struct Curvature {
    /// `(i, σ_i, L_σ, L_dd, L_dσ, L_σσ)` for the examples with nonzero curvature.
    terms: Vec<(usize, [f64; 5])>,
}

impl Curvature {
    /// Number of examples that contribute curvature (the "active set").
    pub fn n_active(&self) -> usize {
        self.terms.len()
    }
}

impl<'a, L: MarginLoss> Objective<'a, L> {
    /// The objective with an intercept and no floor on `σ_i`.
    pub fn new(problem: Problem<'a>, loss: L, lambda: f64) -> Self {
        Objective { problem, loss, lambda, fit_intercept: true, sigma_floor: 0.0 }
    }

    /// Length of `θ`: `n + 1` with an intercept, `n` without.
    pub fn dim(&self) -> usize {
        self.problem.n_features() + usize::from(self.fit_intercept)
    }

    #[inline]
    fn split<'t>(&self, theta: &'t [f64]) -> (&'t [f64], f64) {
        let n = self.problem.n_features();
        (&theta[..n], if self.fit_intercept { theta[n] } else { 0.0 })
    }

    /// `(d_i, σ_i)` at `θ`.
    #[inline]
    pub fn margin(&self, theta: &[f64], i: usize) -> (f64, f64) {
        let (w, b) = self.split(theta);
        let p = &self.problem;
        let d = 1.0 - p.y[i] * (p.features.row_dot(i, w) + b);
        let var = if p.covariances.is_zero() { 0.0 } else { p.covariances.quad_form(i, w).max(0.0) };
        (d, (var + self.sigma_floor * self.sigma_floor).sqrt())
    }

    pub(crate) fn regulariser(&self, theta: &[f64]) -> f64 {
        let (w, _) = self.split(theta);
        0.5 * self.lambda * dot(w, w)
    }

    /// `J(θ)`.
    pub fn value(&self, theta: &[f64]) -> f64 {
        let l = self.problem.n_samples();
        let partial: Vec<f64> = map_chunks(l, |r| {
            r.map(|i| {
                let (d, s) = self.margin(theta, i);
                self.problem.weight(i) * self.loss.value(d, s)
            })
            .sum()
        });
        self.regulariser(theta) + partial.iter().sum::<f64>() / l as f64
    }

    /// `J(θ)`, writing `∇J(θ)` into `grad`; also returns the curvature for [`Self::hess_vec`].
    pub fn value_grad(&self, theta: &[f64], grad: &mut [f64]) -> (f64, Curvature) {
        let n = self.problem.n_features();
        let (value, curvature) = self.data_value_grad(theta, grad);
        let inv_l = 1.0 / self.problem.n_samples() as f64;
        grad.iter_mut().for_each(|g| *g *= inv_l);
        axpy(self.lambda, &theta[..n], &mut grad[..n]);
        (self.regulariser(theta) + value * inv_l, curvature)
    }

    /// The data term's sums `Σ c_i L(d_i, σ_i)` (returned) and `Σ c_i ∇_θ L` (written into `grad`), before
    /// the `1/ℓ` and the regulariser: what one shard of the rows contributes to [`Self::value_grad`].
    pub fn data_value_grad(&self, theta: &[f64], grad: &mut [f64]) -> (f64, Curvature) {
        let p = &self.problem;
        let (l, dim) = (p.n_samples(), self.dim());
        let with_cov = !p.covariances.is_zero();
        type Partial = (Vec<f64>, Vec<(usize, [f64; 5])>);
        let partial: Vec<Partial> = p.blocks().accumulate(l, &mut grad[..dim], |r, g| {
            // The value is summed per chunk (blocks are whole chunks), in the same order as `value`.
            let mut values = Vec::new();
            let mut terms = Vec::new();
            for chunk in r.step_by(CHUNK).map(|k| k..(k + CHUNK).min(l)) {
                let mut value = 0.0;
                for i in chunk {
                    let c = p.weight(i);
                    let (ld, s) = self.add_example_gradient(theta, i, c, g);
                    value += c * ld.value;
                    if ld.dd != 0.0 || ld.ds != 0.0 || ld.ss != 0.0 || (with_cov && s > 0.0 && ld.s != 0.0) {
                        terms.push((i, [s, ld.s, ld.dd, ld.ds, ld.ss]));
                    }
                }
                values.push(value);
            }
            (values, terms)
        });
        let mut value = 0.0;
        let mut terms = Vec::new();
        for (v, t) in partial {
            v.iter().for_each(|v| value += v);
            terms.extend(t);
        }
        (value, Curvature { terms })
    }

    /// `grad += scale · ∇_θ L(d_i, σ_i)` for one example's loss; returns the loss derivatives and `σ_i`.
    #[inline]
    pub fn add_example_gradient(
        &self,
        theta: &[f64],
        i: usize,
        scale: f64,
        grad: &mut [f64],
    ) -> (LossDerivatives, f64) {
        let p = &self.problem;
        let n = p.n_features();
        let (d, s) = self.margin(theta, i);
        let ld = self.loss.derivatives(d, s);
        let yi = p.y[i];
        if ld.d != 0.0 {
            p.features.row_axpy(i, -scale * ld.d * yi, &mut grad[..n]);
            if self.fit_intercept {
                grad[n] -= scale * ld.d * yi;
            }
        }
        if s > 0.0 && ld.s != 0.0 && !p.covariances.is_zero() {
            p.covariances.apply_add(i, scale * ld.s / s, &theta[..n], &mut grad[..n]);
        }
        (ld, s)
    }

    /// `∇J(θ)` only.
    pub fn gradient(&self, theta: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; self.dim()];
        self.value_grad(theta, &mut g);
        g
    }

    /// `out = ∇²J(θ) v`, using the curvature saved at the same `θ`.
    pub fn hess_vec(&self, theta: &[f64], curvature: &Curvature, v: &[f64], out: &mut [f64]) {
        let n = self.problem.n_features();
        self.data_hess_vec(theta, curvature, v, out);
        let inv_l = 1.0 / self.problem.n_samples() as f64;
        out.iter_mut().for_each(|o| *o *= inv_l);
        axpy(self.lambda, &v[..n], &mut out[..n]);
    }

    /// `out = ∇²J(θ)` (column-major `dim × dim`), using the curvature saved at the same `θ`.
    pub fn hessian(&self, theta: &[f64], curvature: &Curvature, out: &mut [f64]) {
        let (n, dim) = (self.problem.n_features(), self.dim());
        self.data_hessian(theta, curvature, out);
        let inv_l = 1.0 / self.problem.n_samples() as f64;
        out.iter_mut().for_each(|o| *o *= inv_l);
        for j in 0..n {
            out[j * dim + j] += self.lambda;
        }
    }

    /// `out = Σ c_i ∇²_θ L(d_i, σ_i)` (column-major `dim × dim`): the data term of [`Self::hessian`] before
    /// the `1/ℓ`. Without covariances example `i` adds `c_i L_dd y_i² x̃_i x̃_iᵀ` (`x̃ = (x, 1)`): one
    /// rank-one update of the lower triangle per active example, then mirrored (a quarter of the work of `dim`
    /// products with [`Self::data_hess_vec`]); with covariances, the columns of those products.
    pub fn data_hessian(&self, theta: &[f64], curvature: &Curvature, out: &mut [f64]) {
        let p = &self.problem;
        let (n, dim) = (p.n_features(), self.dim());
        if !p.covariances.is_zero() {
            let product = |e: &[f64], column: &mut [f64]| self.data_hess_vec(theta, curvature, e, column);
            return columns_from_products(dim, &mut out[..dim * dim], product);
        }
        p.blocks().accumulate(curvature.terms.len(), &mut out[..dim * dim], |r, acc| {
            let mut row = vec![0.0; dim];
            for &(i, [_, _, ldd, _, _]) in &curvature.terms[r] {
                let g = p.weight(i) * ldd * p.y[i] * p.y[i];
                if g == 0.0 {
                    continue;
                }
                row.iter_mut().for_each(|v| *v = 0.0);
                p.features.row_axpy(i, 1.0, &mut row[..n]);
                if self.fit_intercept {
                    row[n] = 1.0;
                }
                for a in (0..dim).filter(|&a| row[a] != 0.0) {
                    axpy(g * row[a], &row[a..], &mut acc[a * dim + a..(a + 1) * dim]);
                }
            }
        });
        for a in 0..dim {
            for b in a + 1..dim {
                out[b * dim + a] = out[a * dim + b];
            }
        }
    }

    /// `out = Σ c_i ∇²_θ L(d_i, σ_i) v`: the data term's part of [`Self::hess_vec`] before the `1/ℓ`.
    pub fn data_hess_vec(&self, theta: &[f64], curvature: &Curvature, v: &[f64], out: &mut [f64]) {
        let p = &self.problem;
        let (n, dim) = (p.n_features(), self.dim());
        let (w, _) = self.split(theta);
        let (vw, vb) = self.split(v);
        let with_cov = !p.covariances.is_zero();
        p.blocks().accumulate(curvature.terms.len(), &mut out[..dim], |r, acc| {
            let terms = &curvature.terms[r];
            let mut scratch = Vec::new();
            for &(i, [s, ls, ldd, lds, lss]) in terms {
                let (yi, c) = (p.y[i], p.weight(i));
                let pu = -yi * (p.features.row_dot(i, vw) + vb);
                let q = if with_cov && s > 0.0 { p.covariances.bilinear(i, w, vw) / s } else { 0.0 };
                let alpha = ldd * pu + lds * q;
                if alpha != 0.0 {
                    p.features.row_axpy(i, -c * alpha * yi, &mut acc[..n]);
                    if self.fit_intercept {
                        acc[n] -= c * alpha * yi;
                    }
                }
                if with_cov && s > 0.0 {
                    // Σ_i (β/σ · w + L_σ/σ · v), β = L_dσ p + L_σσ q - (L_σ/σ) q.
                    let beta = lds * pu + lss * q - ls / s * q;
                    p.covariances.apply_combination_add(i, c, beta / s, w, ls / s, vw, &mut acc[..n], &mut scratch);
                }
            }
        });
    }

    /// `(Σ c_i L(d_i, σ_i), min_i σ_i)` at `θ` without the floor (`ε = 0`); `min` of no examples is `+∞`.
    pub fn data_exact(&self, theta: &[f64]) -> (f64, f64) {
        let exact = Objective { sigma_floor: 0.0, ..*self };
        let partial: Vec<(f64, f64)> = map_chunks(self.problem.n_samples(), |r| {
            r.fold((0.0, f64::INFINITY), |(v, m), i| {
                let (d, s) = exact.margin(theta, i);
                (v + self.problem.weight(i) * self.loss.value(d, s), m.min(s))
            })
        });
        partial.iter().fold((0.0, f64::INFINITY), |(v, m), p| (v + p.0, m.min(p.1)))
    }
}

/// `f` over the consecutive ranges `0..CHUNK, CHUNK..2·CHUNK, …` of `0..n`, results in range order: in
/// parallel when there are enough ranges to pay for it, sequentially otherwise. Both give the same bits,
/// since the caller adds the per-range results in order either way.
fn map_chunks<T: Send>(n: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync + Send) -> Vec<T> {
    let range = |k: usize| k * CHUNK..((k + 1) * CHUNK).min(n);
    let count = n.div_ceil(CHUNK);
    if count < PARALLEL_MIN_CHUNKS {
        (0..count).map(|k| f(range(k))).collect()
    } else {
        (0..count).into_par_iter().map(|k| f(range(k))).collect()
    }
}

/// `J(θ + α s)` as a function of the step `α` alone. Each example's margin is affine in `α` and its
/// variance quadratic, `σ_i(α)² = q₀ + 2αq₁ + α²q₂ + ε²`, so after one pass over the data every evaluation
/// costs O(ℓ) without touching the features or covariances again.
pub struct Line<L> {
    data: LineTerms<L>,
    lambda: f64,
    inv_l: f64,
    /// `‖w‖², wᵀs_w, ‖s_w‖²`.
    reg: [f64; 3],
}

/// The data term along a line: `α ↦ Σ c_i L(d_i(α), σ_i(α))` and its first two derivatives.
pub struct LineTerms<L> {
    loss: L,
    floor2: f64,
    /// Per example `(c_i, d_i, a_i = ∂d_i/∂α, q₀, q₁, q₂)`.
    terms: Vec<[f64; 6]>,
}

impl<L: MarginLoss> Line<L> {
    /// `(φ(α), φ'(α), φ''(α))`.
    pub fn eval(&self, alpha: f64) -> (f64, f64, f64) {
        let [ww, ws, ss] = self.reg;
        let [v, dv, ddv] = self.data.eval(alpha);
        let reg = 0.5 * self.lambda * (ww + alpha * (2.0 * ws + alpha * ss));
        (reg + v * self.inv_l, self.lambda * (ws + alpha * ss) + dv * self.inv_l, self.lambda * ss + ddv * self.inv_l)
    }
}

impl<L: MarginLoss> LineTerms<L> {
    /// `[Σ c_i L, Σ c_i dL/dα, Σ c_i d²L/dα²]` at `α`.
    pub fn eval(&self, alpha: f64) -> [f64; 3] {
        let partial: Vec<[f64; 3]> = map_chunks(self.terms.len(), |r| {
            let terms = &self.terms[r];
            let mut acc = [0.0; 3];
            for &[c, d0, a, q0, q1, q2] in terms {
                let d = d0 + alpha * a;
                let s = ((q0 + alpha * (2.0 * q1 + alpha * q2)).max(0.0) + self.floor2).sqrt();
                let ld = self.loss.derivatives(d, s);
                // σ' = (q₁ + αq₂)/σ, σ'' = (q₂ - σ'²)/σ.
                let (s1, s2) = if s > 0.0 {
                    let s1 = (q1 + alpha * q2) / s;
                    (s1, (q2 - s1 * s1) / s)
                } else {
                    (0.0, 0.0)
                };
                acc[0] += c * ld.value;
                acc[1] += c * (ld.d * a + ld.s * s1);
                acc[2] += c * (ld.dd * a * a + 2.0 * ld.ds * a * s1 + ld.ss * s1 * s1 + ld.s * s2);
            }
            acc
        });
        partial.iter().fold([0.0; 3], |t, p| [t[0] + p[0], t[1] + p[1], t[2] + p[2]])
    }
}

impl<'a, L: MarginLoss> Objective<'a, L> {
    /// The objective along `θ + α s` (see [`Line`]).
    pub fn line(&self, theta: &[f64], dir: &[f64]) -> Line<L> {
        let (w, _) = self.split(theta);
        let (sw, _) = self.split(dir);
        Line {
            data: self.line_terms(theta, dir),
            lambda: self.lambda,
            inv_l: 1.0 / self.problem.n_samples() as f64,
            reg: [dot(w, w), dot(w, sw), dot(sw, sw)],
        }
    }

    /// The data term along `θ + α s` (see [`LineTerms`]): one pass over the examples.
    pub fn line_terms(&self, theta: &[f64], dir: &[f64]) -> LineTerms<L> {
        let p = &self.problem;
        let (w, _) = self.split(theta);
        let (sw, sb) = self.split(dir);
        let with_cov = !p.covariances.is_zero();
        let terms: Vec<[f64; 6]> = map_chunks(p.n_samples(), |r| {
            r.map(|i| {
                let (d, _) = self.margin(theta, i);
                let a = -p.y[i] * (p.features.row_dot(i, sw) + sb);
                let [q0, q1, q2] = if with_cov { p.covariances.line_forms(i, w, sw) } else { [0.0; 3] };
                [p.weight(i), d, a, q0, q1, q2]
            })
            .collect::<Vec<_>>()
        })
        .concat();
        LineTerms { loss: self.loss, floor2: self.sigma_floor * self.sigma_floor, terms }
    }
}
