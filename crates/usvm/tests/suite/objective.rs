//! Gradients and Hessian-vector products of the one objective against central finite differences, and the
//! full Hessian against the products, for every covariance form (proptest over random problems and points).

use crate::common;

use proptest::prelude::*;
use usvm::loss::{ExpectedHinge, MarginLoss, SquaredHinge};
use usvm::objective::{Objective, Problem};

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Checks ∇J and ∇²J v at θ against central differences (relative 1e-6).
fn check<L: MarginLoss>(objective: &Objective<'_, L>, theta: &[f64], v: &[f64]) -> Result<(), TestCaseError> {
    let dim = objective.dim();
    let mut g = vec![0.0; dim];
    let (value, curvature) = objective.value_grad(theta, &mut g);
    prop_assert!((value - objective.value(theta)).abs() <= 1e-14 * value.abs().max(1.0));
    let h = 1e-6;
    let fd: Vec<f64> = (0..dim)
        .map(|j| {
            let (mut p, mut m) = (theta.to_vec(), theta.to_vec());
            p[j] += h;
            m[j] -= h;
            (objective.value(&p) - objective.value(&m)) / (2.0 * h)
        })
        .collect();
    let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
    prop_assert!(norm(&err) <= 1e-6 * norm(&g).max(1e-2), "gradient {g:?} vs finite differences {fd:?}");

    let mut hv = vec![0.0; dim];
    objective.hess_vec(theta, &curvature, v, &mut hv);
    let shifted = |sign: f64| {
        let t: Vec<f64> = theta.iter().zip(v).map(|(a, b)| a + sign * h * b).collect();
        objective.gradient(&t)
    };
    let (gp, gm) = (shifted(1.0), shifted(-1.0));
    let fd_hv: Vec<f64> = gp.iter().zip(&gm).map(|(a, b)| (a - b) / (2.0 * h)).collect();
    let err: Vec<f64> = hv.iter().zip(&fd_hv).map(|(a, b)| a - b).collect();
    prop_assert!(norm(&err) <= 1e-6 * norm(&hv).max(1e-2), "Hv {hv:?} vs finite differences {fd_hv:?}");

    // The full Hessian (formed directly without covariances) has the products as its columns.
    let mut hessian = vec![0.0; dim * dim];
    objective.hessian(theta, &curvature, &mut hessian);
    let mut e = vec![0.0; dim];
    for (j, column) in hessian.chunks(dim).enumerate() {
        e[j] = 1.0;
        objective.hess_vec(theta, &curvature, &e, &mut hv);
        e[j] = 0.0;
        let err: Vec<f64> = column.iter().zip(&hv).map(|(a, b)| a - b).collect();
        prop_assert!(norm(&err) <= 1e-13 * norm(&hv).max(1e-300), "column {j}: {column:?} vs H e_j {hv:?}");
    }
    Ok(())
}

fn point(seed: u64, dim: usize, scale: f64) -> Vec<f64> {
    let mut r = common::rng(seed);
    (0..dim).map(|_| scale * common::normal(&mut r)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The expected hinge loss with every covariance form (floor ε = 0 where σ_i > 0; the smoothing floor
    /// where Σ = 0), with per-example weights, with and without an intercept.
    #[test]
    fn expected_hinge_gradient_and_hessian(
        seed in 0u64..10_000,
        form in prop::sample::select(common::FORMS.to_vec()),
        lambda in 1e-3f64..1.0,
        scale in 0.05f64..2.0,
        weighted in any::<bool>(),
        intercept in any::<bool>(),
    ) {
        let (l, n) = (9, 5);
        let data = common::random_dataset(seed, form, l, n);
        let y = common::labels_pm1(&data);
        let weights: Vec<f64> = (0..l).map(|i| 0.2 + 0.1 * i as f64).collect();
        let problem = Problem {
            features: &data.features,
            y: &y,
            weights: weighted.then_some(weights.as_slice()),
            covariances: data.covariances.as_dyn(),
        };
        // Forms with zero covariance somewhere (none, sparse diagonal) need the floor to be smooth.
        let floor = if matches!(form, "none" | "sparse_diag") { 0.3 } else { 0.0 };
        let objective = Objective { fit_intercept: intercept, sigma_floor: floor, ..Objective::new(problem, ExpectedHinge, lambda) };
        let theta = point(seed + 1, objective.dim(), scale);
        let v = point(seed + 2, objective.dim(), 1.0);
        check(&objective, &theta, &v)?;
    }

    /// The squared hinge (σ ignored) away from its kinks.
    #[test]
    fn squared_hinge_gradient_and_hessian(seed in 0u64..10_000, lambda in 1e-3f64..1.0) {
        let data = common::random_dataset(seed, "none", 9, 5);
        let y = common::labels_pm1(&data);
        let problem = Problem { features: &data.features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
        let objective = Objective::new(problem, SquaredHinge, lambda);
        let theta = point(seed + 1, objective.dim(), 0.5);
        let near_kink = (0..9).any(|i| objective.margin(&theta, i).0.abs() < 1e-3);
        prop_assume!(!near_kink);
        let v = point(seed + 2, objective.dim(), 1.0);
        check(&objective, &theta, &v)?;
    }
}

#[test]
fn sparse_and_dense_features_agree() {
    let data = common::random_dataset(3, "diag", 20, 6);
    let y = common::labels_pm1(&data);
    let sparse = match &data.features {
        usvm::Features::Dense(a) => {
            let rows: Vec<Vec<(usize, f64)>> =
                (0..a.nrows()).map(|i| a.row(i).iter().copied().enumerate().collect()).collect();
            usvm::Features::Sparse(usvm::CsrMatrix::from_rows(6, &rows).unwrap())
        }
        _ => unreachable!(),
    };
    let theta = point(5, 7, 0.7);
    let make = |features| {
        let p = Problem { features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
        Objective::new(p, ExpectedHinge, 0.1).gradient(&theta)
    };
    let (a, b) = (make(&data.features), make(&sparse));
    for (x, z) in a.iter().zip(&b) {
        assert!((x - z).abs() <= 1e-14 * x.abs().max(1.0));
    }
}

/// The direct Hessian of the plain (smoothed) hinge reads sparse rows as it reads dense ones.
#[test]
fn the_direct_hessian_of_sparse_and_dense_features_agrees() {
    let data = common::random_dataset(4, "none", 20, 6);
    let y = common::labels_pm1(&data);
    let usvm::Features::Dense(a) = &data.features else { unreachable!() };
    // Every third entry zero, so the sparse rows have gaps.
    let rows: Vec<Vec<(usize, f64)>> = (0..a.nrows())
        .map(|i| a.row(i).iter().copied().enumerate().filter(|(j, _)| (i + j) % 3 != 0).collect())
        .collect();
    let sparse = usvm::Features::Sparse(usvm::CsrMatrix::from_rows(6, &rows).unwrap());
    let dense = usvm::Features::dense(sparse.to_dense());
    let theta = point(6, 7, 0.3);
    let hessian = |features| {
        let p = Problem { features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
        let objective = Objective { sigma_floor: 0.5, ..Objective::new(p, ExpectedHinge, 0.1) };
        let (_, curvature) = objective.value_grad(&theta, &mut [0.0; 7]);
        let mut h = vec![0.0; 49];
        objective.hessian(&theta, &curvature, &mut h);
        h
    };
    let (d, s) = (hessian(&dense), hessian(&sparse));
    assert!(d.iter().any(|&v| v != 0.0));
    for (x, z) in d.iter().zip(&s) {
        assert!((x - z).abs() <= 1e-14 * x.abs().max(1.0), "{d:?} vs {s:?}");
    }
}
