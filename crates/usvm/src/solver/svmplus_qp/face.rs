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
//! variable is dropped). The bounds are then handled by a primal active-set loop on that one
//! factorisation ([`newton_step`]): move towards the minimiser as far as the bounds allow, pin the
//! variable that stops the move at its bound, re-solve on the smaller face by a Schur complement, and
//! repeat. When the loop ends inside the bounds with nothing pinned, the free variables are optimal on
//! the face and only SMO's KKT check is left; otherwise SMO goes on from the new active set (and may
//! free pinned variables again).

use super::{Ctx, State};
use crate::linalg::{Lu, VectorState};

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

/// A step on the free variables: their changes, and which of them land exactly on a bound.
pub(super) struct FaceStep {
    pub change: Vec<f64>,
    pub on_bound: Vec<bool>,
}

/// The step on the face of `free` by a primal active-set loop on one factorisation (none if the system
/// is singular or nothing descends).
///
/// With `K` the KKT matrix of the face (module docs) factorised once and `u = K⁻¹(−g_F, 0)` its Newton
/// step, the iterate moves from the current change `x` (initially 0) towards the target `z`, as far as
/// the bounds allow; a variable that stops it is pinned at its bound and the target re-solved on the
/// smaller face. A pinned set `P` with displacements `d_P` adds the constraints `Δ_P = d_P`, so by the
/// Schur complement `z = u − W μ` with `W = K⁻¹ E_Pᵀ` (the columns for the next [`SOLVE_AHEAD`] variables
/// the ray would stop at are solved together, one pass over the factors) and
/// `(E_P W) μ = E_P u − d_P` (`|P| × |P|`). Every target minimises `F` on an affine set that contains the
/// current iterate, so `F` decreases along the whole path; the loop ends at a target inside the bounds
/// or after `MAX_PINS` pins.
pub(super) fn newton_step(ctx: &Ctx<'_>, s: &State<'_>, free: &[Var]) -> Option<FaceStep> {
    let (n, y, inv_rho) = (ctx.n, ctx.y, ctx.inv_rho);
    let m = free.len();
    if m == 0 {
        return None;
    }
    // H is symmetric: entry (p, q) is read from row q, so that a column of H (q fixed, as the column-major
    // KKT matrix is filled) gathers from one row of A and B instead of striding across n rows.
    let h = |p: Var, q: Var| {
        let (i, j) = (p.0, q.0);
        let mut v = inv_rho * ctx.b[j * n + i];
        if p.1 && q.1 {
            v += y[i] * y[j] * ctx.a[j * n + i];
        }
        v
    };
    let grad = |p: Var| if p.1 { s.ga[p.0] } else { s.gb[p.0] };
    // The equality rows: 1ᵀv over every variable, yᵀα if an α is free; `e(k, p)` is row k's entry.
    let with_y = free.iter().any(|v| v.1);
    let size = m + 1 + usize::from(with_y);
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
    let lu = KktLu::new(size, |r, c| match (r < m, c < m) {
        (true, true) => h(free[r], free[c]) + if r == c { ridge } else { 0.0 },
        (true, false) => e(c - m, free[r]),
        (false, true) => e(r - m, free[c]),
        (false, false) => 0.0,
    });
    let mut u = lu.solve(|r| if r < m { -grad(free[r]) } else { 0.0 });
    u.truncate(m);
    if u.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut x = vec![0.0; m];
    let mut pinned: Vec<usize> = Vec::new();
    let mut on_bound = vec![false; m];
    let mut w: Vec<Vec<f64>> = Vec::new(); // W's columns, first m entries
    // Columns K⁻¹e_r solved ahead: when a variable stops the move, the next few variables in the order
    // the ray would meet their bounds are solved with it (one pass over the factors for several
    // right-hand sides, instead of one pass per pin).
    let mut ahead: Vec<Option<Vec<f64>>> = vec![None; m];
    for _ in 0..=MAX_PINS {
        let z = if pinned.is_empty() {
            u.clone()
        } else {
            let k = pinned.len();
            let mu = Lu::partial(k, |a, b| w[b][pinned[a]]).solve(|a| u[pinned[a]] - x[pinned[a]]);
            if mu.iter().any(|v| !v.is_finite()) {
                break;
            }
            let mut z: Vec<f64> = (0..m).map(|i| u[i] - (0..k).map(|b| w[b][i] * mu[b]).sum::<f64>()).collect();
            // The Schur solve keeps `z_P = d_P` and `E z = 0` only to the conditioning of `K`: make both
            // exact (pinned entries set, the equality residual removed from the others by least norm).
            for &p in &pinned {
                z[p] = x[p];
            }
            restore_equalities(&mut z, &on_bound, free, y);
            z
        };
        // Move towards z as far as the bounds allow (pinned variables do not move: z_P = x_P).
        let (mut tau, mut stop) = (1.0, None);
        let mut rooms: Vec<(f64, usize)> = Vec::new();
        for (r, (&zr, &xr)) in z.iter().zip(&x).enumerate() {
            let dir = zr - xr;
            let (lo, hi) = bounds(free[r]);
            let room = if dir < 0.0 {
                (lo - xr) / dir
            } else if dir > 0.0 {
                (hi - xr) / dir
            } else {
                f64::INFINITY
            };
            if on_bound[r] {
                continue;
            }
            if room < tau {
                (tau, stop) = (room.max(0.0), Some(r));
            }
            if room < 1.0 && ahead[r].is_none() {
                rooms.push((room, r));
            }
        }
        for (xr, &zr) in x.iter_mut().zip(&z) {
            *xr += tau * (zr - *xr);
        }
        let Some(r) = stop else { break };
        // Pin the stopping variable exactly at its bound.
        let (lo, hi) = bounds(free[r]);
        x[r] = if x[r] - lo <= hi - x[r] { lo } else { hi };
        pinned.push(r);
        on_bound[r] = true;
        if ahead[r].is_none() {
            rooms.sort_by(|a, b| a.0.total_cmp(&b.0));
            let others = rooms.iter().map(|&(_, q)| q).filter(|&q| q != r);
            let batch: Vec<usize> = std::iter::once(r).chain(others).take(SOLVE_AHEAD).collect();
            for (q, mut col) in batch.iter().zip(lu.solve_units(&batch)) {
                col.truncate(m);
                ahead[*q] = Some(col);
            }
        }
        w.push(ahead[r].take().expect("solved above"));
    }
    (decrease(&h, &grad, free, &x) > 0.0).then_some(FaceStep { change: x, on_bound })
}

/// Removes the residual `r = E z` of the equality rows from the entries of `z` not `fixed` by the
/// least-norm correction `z_N −= E_Nᵀ (E_N E_Nᵀ)⁻¹ r` (`E_N E_Nᵀ` is at most 2 × 2).
fn restore_equalities(z: &mut [f64], fixed: &[bool], free: &[Var], y: &[f64]) {
    let open = |r: usize| !fixed[r];
    let (mut r0, mut r1) = (0.0, 0.0);
    let (mut g00, mut g01, mut g11) = (0.0, 0.0, 0.0);
    for (r, &(i, is_alpha)) in free.iter().enumerate() {
        r0 += z[r];
        let yi = if is_alpha { y[i] } else { 0.0 };
        r1 += yi * z[r];
        if open(r) {
            g00 += 1.0;
            g01 += yi;
            g11 += yi * yi;
        }
    }
    let det = g00 * g11 - g01 * g01;
    let (c0, c1) = if g11 > 0.0 && det > 1e-9 * g00 * g11 {
        ((g11 * r0 - g01 * r1) / det, (g00 * r1 - g01 * r0) / det)
    } else if g00 > 0.0 && g11 == 0.0 {
        (r0 / g00, 0.0)
    } else {
        return;
    };
    for (r, &(i, is_alpha)) in free.iter().enumerate() {
        if open(r) {
            z[r] -= c0 + if is_alpha { y[i] * c1 } else { 0.0 };
        }
    }
}

/// The most variables one face step pins to a bound.
const MAX_PINS: usize = 128;

/// How many columns `K⁻¹e_r` one pass over the factors solves for the pin loop.
const SOLVE_AHEAD: usize = 16;

/// A partially pivoted LU of the face's KKT matrix, with solves for several unit right-hand sides at once.
struct KktLu {
    lu: faer::linalg::solvers::PartialPivLu<f64>,
    size: usize,
}

impl KktLu {
    fn new(size: usize, entry: impl Fn(usize, usize) -> f64) -> Self {
        let _state = VectorState;
        KktLu { lu: faer::Mat::<f64>::from_fn(size, size, entry).partial_piv_lu(), size }
    }

    /// `x` with `K x = r`.
    fn solve(&self, r: impl Fn(usize) -> f64) -> Vec<f64> {
        use faer::linalg::solvers::Solve;
        let _state = VectorState;
        let x = self.lu.solve(faer::Mat::<f64>::from_fn(self.size, 1, |i, _| r(i)));
        (0..self.size).map(|i| x[(i, 0)]).collect()
    }

    /// `K⁻¹e_r` for every `r` of `units`.
    fn solve_units(&self, units: &[usize]) -> Vec<Vec<f64>> {
        use faer::linalg::solvers::Solve;
        let _state = VectorState;
        let rhs = faer::Mat::<f64>::from_fn(self.size, units.len(), |i, j| if i == units[j] { 1.0 } else { 0.0 });
        let x = self.lu.solve(rhs);
        (0..units.len()).map(|j| (0..self.size).map(|i| x[(i, j)]).collect()).collect()
    }
}

/// `F(x) − F(x + Δ) = −(gᵀΔ + ½ΔᵀHΔ)` for a change `Δ` of the free variables.
fn decrease(h: &impl Fn(Var, Var) -> f64, grad: &impl Fn(Var) -> f64, free: &[Var], change: &[f64]) -> f64 {
    let nz: Vec<usize> = (0..free.len()).filter(|&r| change[r] != 0.0).collect();
    let linear: f64 = nz.iter().map(|&r| grad(free[r]) * change[r]).sum();
    let quad: f64 =
        nz.iter().map(|&r| change[r] * nz.iter().map(|&q| h(free[q], free[r]) * change[q]).sum::<f64>()).sum();
    -(linear + 0.5 * quad)
}
