//! The thesis' mini-batch stochastic sub-gradient method (Algorithm 1, after Pegasos):
//! at step `t = 1..T` draw `k` distinct examples, step `η_t = 1/(λt)` along the mini-batch
//! (sub)gradient `λw + (1/k) Σ_batch c_i ∇L_i` (and its bias part), then project `w` onto the ball of radius
//! `√(2 J(0)/λ)`, which contains the optimum because `λ/2‖w*‖² ≤ J(w*) ≤ J(0)` (the paper's `1/√λ` is
//! the bound for the hinge loss with `J(0) = 1` only under `‖w*‖² ≤ 1/λ`, not valid here).
//!
//! The random generator (Xoshiro256++) is seeded once and advances: same seed, same bits.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::data::{axpy, norm2};
use crate::loss::MarginLoss;
use crate::objective::Objective;
use crate::progress::{Monitor, Quantity};
use crate::report::FitReport;
use crate::report::Termination;

/// Iteration events per run (the SGD's iterations are cheap).
pub(crate) const EVENTS: usize = 100;

/// Settings of the SGD solver (thesis defaults `T = 1000`, `k = 100`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SgdSettings {
    /// `T`, the number of iterations.
    pub iterations: usize,
    /// `k`, the mini-batch size.
    pub batch: usize,
    /// The seed of the mini-batch draws.
    pub seed: u64,
}

impl Default for SgdSettings {
    fn default() -> Self {
        SgdSettings { iterations: 1000, batch: 100, seed: 0 }
    }
}

/// Runs Algorithm 1 on `objective` (its `sigma_floor` is used as given; 0 is the exact loss).
/// `tol` only decides the `converged` flag of the report, from the final full (sub)gradient.
pub fn solve<L: MarginLoss>(
    objective: &Objective<'_, L>,
    settings: &SgdSettings,
    tol: f64,
    monitor: Monitor<'_>,
) -> (Vec<f64>, FitReport) {
    let p = &objective.problem;
    let (l, n, dim) = (p.n_samples(), p.n_features(), objective.dim());
    let lambda = objective.lambda;
    let zero = vec![0.0; dim];
    let radius = (2.0 * objective.value(&zero) / lambda).sqrt();
    let reference = super::exact::initial_gradient_norm(objective);
    let k = settings.batch.clamp(1, l);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let every = (settings.iterations / EVENTS).max(1);
    let mut theta = zero;
    let mut g = vec![0.0; dim];
    for t in 1..=settings.iterations {
        let batch = rand::seq::index::sample(&mut rng, l, k);
        g.iter_mut().for_each(|v| *v = 0.0);
        let mut batch_loss = 0.0;
        for i in batch.iter() {
            let scale = p.weight(i) / k as f64;
            batch_loss += scale * objective.add_example_gradient(&theta, i, scale, &mut g).0.value;
        }
        axpy(lambda, &theta[..n], &mut g[..n]);
        // Every `every`-th iteration: the mini-batch objective and sub-gradient at the current iterate.
        if (t % every == 0 || t == settings.iterations)
            && monitor.iteration(t, Quantity::GradientNorm, || (objective.regulariser(&theta) + batch_loss, norm2(&g)))
        {
            break;
        }
        let eta = 1.0 / (lambda * t as f64);
        axpy(-eta, &g, &mut theta);
        let norm = norm2(&theta[..n]);
        if norm > radius {
            theta[..n].iter_mut().for_each(|v| *v *= radius / norm);
        }
    }
    let mut full = vec![0.0; dim];
    let (value, _) = objective.value_grad(&theta, &mut full);
    let gradient_norm = norm2(&full);
    let report = FitReport {
        objective: value,
        n_iter: settings.iterations,
        termination: Termination::from_converged(gradient_norm <= tol * reference),
        gradient_norm,
        initial_gradient_norm: Some(reference),
        sigma_floor: Some(objective.sigma_floor),
        objective_trace: Vec::new(),
        duality_gap: None,
        rounds: 0,
        norm_bound: None,
        fallback: None,
        routes: Vec::new(),
        degenerate: false,
    };
    (theta, report)
}
