//! The Newton step on the current face, which ends SMO's slow linear tail.
//!
//! SMO finds the active set quickly but then converges linearly on the free variables, at a rate set by
//! the conditioning of the dense `H_FF` (`YAY + B/ρ` on the free α, `B/ρ` on the free β): thousands of
//! pairwise steps for a few hundred free variables. With the free set `F` (`0 < α_i < u_i`, `β_i > 0`)
//! held fixed, the QP restricted to its face is an equality-constrained quadratic whose minimiser solves
//!
//! ```text
//! [ H_FF  E_Fᵀ ] [ Δ ]   [ −g_F ]
//! [ E_F   0    ] [ λ ] = [  0   ]
//! ```
//!
//! with `E_F` the rows of both equalities (`(1, y_i)` for an α, `(1, 0)` for a β; a row with no free
//! variable is dropped). The step `x_F += τΔ` goes as far as the bounds allow (`τ ≤ 1`); its decrease is
//! `−g_FᵀΔ (τ − τ²/2)` since `ΔᵀH_FFΔ = −g_FᵀΔ` at the solution. When `τ = 1` the free variables are
//! optimal on the face and only SMO's KKT check is left; when a bound stops it, SMO goes on from the new
//! active set.

use faer::linalg::solvers::Solve;

use super::{Ctx, State};

/// The largest free set for which the step is tried (the dense solve is `O(|F|³)`).
pub(super) const MAX_FREE: usize = 3000;

/// A variable of the face: `(index, is_alpha)`.
type Var = (usize, bool);

/// The free variables of the iterate.
pub(super) fn free_set(s: &State<'_>) -> Vec<Var> {
    let n = s.alpha.len();
    let alphas = (0..n).filter(|&i| s.alpha[i] > 0.0 && s.alpha[i] < s.upper[i]).map(|i| (i, true));
    let betas = (0..n).filter(|&i| s.beta[i] > 0.0).map(|i| (i, false));
    alphas.chain(betas).collect()
}

/// A step on the free variables: their changes, and the positions (in the free set) of the variables
/// that land exactly on a bound.
pub(super) struct FaceStep {
    pub change: Vec<f64>,
    pub pinned: Vec<usize>,
}

/// The better of two steps on the face of `free` (none if the system is singular or nothing descends):
/// the Newton step cut at the first bound (`τΔ`), and the Newton step of the guessed active set — every
/// variable the Newton step would carry past a bound is pinned to that bound and the rest re-solved
/// (the pinned changes on the right-hand side), until no free variable leaves its box (at most
/// `MAX_ROUNDS` solves). The second finds many bounds at once where the first finds one per solve.
pub(super) fn newton_step(ctx: &Ctx<'_>, s: &State<'_>, free: &[Var]) -> Option<FaceStep> {
    let (n, y, inv_rho) = (ctx.n, ctx.y, ctx.inv_rho);
    let m0 = free.len();
    if m0 == 0 {
        return None;
    }
    let h = |p: Var, q: Var| {
        let (i, j) = (p.0, q.0);
        let mut v = inv_rho * ctx.b[i * n + j];
        if p.1 && q.1 {
            v += y[i] * y[j] * ctx.a[i * n + j];
        }
        v
    };
    let grad = |p: Var| if p.1 { s.ga[p.0] } else { s.gb[p.0] };
    // The equality rows: 1ᵀv over every variable, yᵀα if an α is free; `e(k, p)` is row k's entry.
    let with_y = free.iter().any(|v| v.1);
    let n_rows = 1 + usize::from(with_y);
    let e = |k: usize, p: Var| match k {
        0 => 1.0,
        _ if p.1 => y[p.0],
        _ => 0.0,
    };
    // The allowed change of each free variable: [lo, hi].
    let bounds =
        |p: Var| if p.1 { (-s.alpha[p.0], s.upper[p.0] - s.alpha[p.0]) } else { (-s.beta[p.0], f64::INFINITY) };
    // A ridge of 1e-13 · (largest diagonal) keeps the system regular when free examples repeat.
    let ridge = 1e-13 * free.iter().map(|&p| h(p, p)).fold(0.0, f64::max);
    // The change of every free variable (`pinned[r]`: variable r is held at `delta[r]`).
    let mut delta = vec![0.0; m0];
    let mut pinned = vec![false; m0];
    let mut clipped: Option<FaceStep> = None;
    for round in 0..MAX_ROUNDS {
        let open: Vec<usize> = (0..m0).filter(|&r| !pinned[r]).collect();
        let held: Vec<usize> = (0..m0).filter(|&r| pinned[r]).collect();
        let m = open.len();
        let size = m + n_rows;
        let kkt = faer::Mat::<f64>::from_fn(size, size, |r, c| match (r < m, c < m) {
            (true, true) => h(free[open[r]], free[open[c]]) + if r == c { ridge } else { 0.0 },
            (true, false) => e(c - m, free[open[r]]),
            (false, true) => e(r - m, free[open[c]]),
            (false, false) => 0.0,
        });
        let rhs = faer::Mat::<f64>::from_fn(size, 1, |r, _| {
            if r < m {
                let p = free[open[r]];
                -grad(p) - held.iter().map(|&q| h(p, free[q]) * delta[q]).sum::<f64>()
            } else {
                -held.iter().map(|&q| e(r - m, free[q]) * delta[q]).sum::<f64>()
            }
        });
        let sol = kkt.partial_piv_lu().solve(&rhs);
        if (0..m).any(|r| !sol[(r, 0)].is_finite()) {
            break;
        }
        for (k, &r) in open.iter().enumerate() {
            delta[r] = sol[(k, 0)];
        }
        if round == 0 {
            // τ = the largest step in [0, 1] that keeps every free variable within its bounds.
            let (mut tau, mut stop) = (1.0, None);
            for (r, &d) in delta.iter().enumerate() {
                let (lo, hi) = bounds(free[r]);
                let room = if d < 0.0 {
                    lo / d
                } else if d > 0.0 {
                    hi / d
                } else {
                    f64::INFINITY
                };
                if room < tau {
                    (tau, stop) = (room, Some(r));
                }
            }
            let step = FaceStep { change: delta.iter().map(|d| tau * d).collect(), pinned: stop.into_iter().collect() };
            if stop.is_none() {
                return (decrease(&h, &grad, free, &step.change) > 0.0).then_some(step);
            }
            clipped = Some(step);
        }
        // Pin every variable the step carries past a bound to that bound.
        let mut moved = false;
        for &r in &open {
            let (lo, hi) = bounds(free[r]);
            if delta[r] < lo || delta[r] > hi {
                delta[r] = delta[r].clamp(lo, hi);
                pinned[r] = true;
                moved = true;
            }
        }
        if !moved {
            let guessed = FaceStep { change: delta, pinned: (0..m0).filter(|&r| pinned[r]).collect() };
            let clipped = clipped.expect("the first round sets it");
            let (dg, dc) = (decrease(&h, &grad, free, &guessed.change), decrease(&h, &grad, free, &clipped.change));
            return [(dg, guessed), (dc, clipped)]
                .into_iter()
                .filter(|s| s.0 > 0.0)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|s| s.1);
        }
    }
    clipped.filter(|step| decrease(&h, &grad, free, &step.change) > 0.0)
}

/// The most solves of the guessed-active-set step.
const MAX_ROUNDS: usize = 10;

/// `F(x) − F(x + Δ) = −(gᵀΔ + ½ΔᵀHΔ)` for a change `Δ` of the free variables.
fn decrease(h: &impl Fn(Var, Var) -> f64, grad: &impl Fn(Var) -> f64, free: &[Var], change: &[f64]) -> f64 {
    let nz: Vec<usize> = (0..free.len()).filter(|&r| change[r] != 0.0).collect();
    let linear: f64 = nz.iter().map(|&r| grad(free[r]) * change[r]).sum();
    let quad: f64 =
        nz.iter().map(|&r| change[r] * nz.iter().map(|&q| h(free[r], free[q]) * change[q]).sum::<f64>()).sum();
    -(linear + 0.5 * quad)
}
