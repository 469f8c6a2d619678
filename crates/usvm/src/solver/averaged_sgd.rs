//! Mini-batch SGD with a bounded first step and suffix averaging, for smooth losses whose gradients grow
//! with the margin (the squared hinges of chapter 5), where the thesis' plain Algorithm 1
//! ([`super::pegasos`], step `1/(λt)` from `t = 1`) starts with steps far above the stable `1/L` and ends on
//! a noisy last iterate.
//!
//! At step `t = 1..T` draw `k` distinct examples, step `η_t = 1/(λ(t + t₀))` along the mini-batch gradient
//! `λw + (1/k) Σ_batch c_i ∇L_i` (and its bias part), and project `w` onto the ball of radius
//! `√(2 J(0)/λ)` (which contains the optimum, see [`super::pegasos`]). The offset `t₀ = L/λ`, with
//! `L = 2 max_i c_i (‖x_i‖² + 1 + tr Σ_i)` a bound on the curvature of one example's squared-hinge loss,
//! makes the first step at most `1/L`. The result is the average of the iterates of the second half
//! (`t > T/2`), which keeps the `O(1/(λT))` rate of strongly convex SGD (Rakhlin, Shamir & Sridharan 2012)
//! without the last iterate's noise.
//!
//! The random generator (Xoshiro256++) is seeded once and advances: same seed, same bits.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::pegasos::{EVENTS, SgdSettings};
use crate::data::{axpy, norm2};
use crate::loss::MarginLoss;
use crate::objective::Objective;
use crate::progress::{Monitor, Quantity};
use crate::report::FitReport;
use crate::report::Termination;

/// Runs the averaged SGD on `objective` (its `sigma_floor` as given). `tol` only decides the report's
/// `converged` flag, from the final full gradient.
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
    let curvature = (0..l)
        .map(|i| {
            let norm2 = p.features.row_dot(i, &p.features.row_dense(i));
            2.0 * p.weight(i) * (norm2 + 1.0 + p.covariances.trace(i, n))
        })
        .fold(0.0, f64::max);
    let t0 = curvature / lambda;
    let k = settings.batch.clamp(1, l);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let every = (settings.iterations / EVENTS).max(1);
    let mut theta = zero;
    let mut average = vec![0.0; dim];
    let mut averaged = 0usize;
    let mut g = vec![0.0; dim];
    let start_average = settings.iterations / 2 + 1;
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
        let eta = 1.0 / (lambda * (t as f64 + t0));
        axpy(-eta, &g, &mut theta);
        let norm = norm2(&theta[..n]);
        if norm > radius {
            theta[..n].iter_mut().for_each(|v| *v *= radius / norm);
        }
        if t >= start_average {
            // Running mean: average += (θ - average) / m.
            averaged += 1;
            let m = averaged as f64;
            average.iter_mut().zip(&theta).for_each(|(a, &x)| *a += (x - *a) / m);
        }
    }
    let mut full = vec![0.0; dim];
    let (value, _) = objective.value_grad(&average, &mut full);
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
    (average, report)
}
