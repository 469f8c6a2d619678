//! The "1" versus "7" protocol shared by the thesis 3.5.2 runners (`digits_1v7`, `translation_28x28`):
//! seeded per-class splits and test accuracy with λ chosen by 3-fold cross-validation.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::model_selection::cross_validate_path;
use usvm::solver::exact::ExactSettings;
use usvm::{Dataset, LinearMethod, LinearSvmParams, Solver};

/// The exact solver to ‖∇J‖ ≤ 1e-4‖∇J(0)‖ with the σ floor at 1e-6 (each loss within 4e-7 of the exact
/// one): rank-1/2 covariances leave many margins nearly deterministic, where the default continuation down
/// to 1e-8 costs many Newton steps without changing any prediction here.
pub const CV_SOLVER: Solver =
    Solver::Exact(ExactSettings { tol: 1e-4, max_iter: 1000, sigma_floor: 1e-6, gap_tol: 1e-10, route: None });

/// `per_class` random training examples of each class (labels ±1; seeded), the rest as test set.
pub fn split(labels: &[i64], per_class: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for class in [1, -1] {
        let mut idx: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == class).collect();
        idx.shuffle(&mut rng);
        train.extend_from_slice(&idx[..per_class]);
        test.extend_from_slice(&idx[per_class..]);
    }
    (train, test)
}

/// Test accuracy of `method` with λ chosen by stratified 3-fold cross-validation accuracy over `grid`
/// (ties: the larger λ), solved by [`CV_SOLVER`].
pub fn evaluate(method: &LinearMethod, train: &Dataset, test: &Dataset, seed: u64, grid: &[f64]) -> f64 {
    let params = |lambda| LinearSvmParams { method: method.clone(), lambda, solver: CV_SOLVER, ..Default::default() };
    let cv = cross_validate_path(&LinearSvmParams { max_rounds: 1, ..params(1.0) }, grid, train, 3, seed, &|| {})
        .expect("valid training set");
    let best = (0..cv.len()).fold(0, |b, k| if cv[k] >= cv[b] { k } else { b });
    let model = params(grid[best]).fit(train).expect("fit").model;
    let predicted = model.predict(&test.features).expect("predict");
    predicted.iter().zip(test.labels.iter()).filter(|(p, y)| p == y).count() as f64 / test.n_samples() as f64
}
