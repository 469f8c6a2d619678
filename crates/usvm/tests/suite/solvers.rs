//! The exact solver and the SGD: optimality, cross-checks against an independent conic solver, limits,
//! agreement between covariance forms, and determinism.

use crate::common;

use ndarray::{Array2, Array3};
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::solver::exact::ExactSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::{Covariances, Dataset, LinearMethod, LinearSvmParams, Solver};

fn params(method: LinearMethod, lambda: f64) -> LinearSvmParams {
    LinearSvmParams { method, lambda, ..Default::default() }
}

fn theta(fit: &usvm::LinearFit) -> Vec<f64> {
    let mut t = fit.model.coef.dense().row(0).to_vec();
    t.push(fit.model.intercept[0]);
    t
}

/// The exact objective (no floor) of a fitted binary model on `data`'s own covariances.
fn gsu_objective(data: &Dataset, lambda: f64, theta: &[f64]) -> f64 {
    let y = common::labels_pm1(data);
    let p = Problem {
        features: &data.features,
        y: &y,
        weights: data.weights.as_deref(),
        covariances: data.covariances.as_dyn(),
    };
    Objective::new(p, ExpectedHinge, lambda).value(theta)
}

#[test]
fn exact_solver_reaches_the_relative_gradient_tolerance_for_every_form() {
    for form in common::FORMS {
        let data = common::random_dataset(21, form, 200, 8);
        let fit = params(LinearMethod::Gsu, 0.01).fit(&data).unwrap();
        let r = &fit.reports[0];
        assert!(r.converged(), "{form}: {r:?}");
        if form == "none" {
            // The plain hinge is certified by its duality gap (its sub-gradient need not vanish at a point
            // optimal to within the gap, such as the QP route's interior-point iterate).
            assert!(r.duality_gap.unwrap() <= 1e-10, "{form}: {r:?}");
        } else {
            assert!(r.gradient_norm <= 1e-6 * r.initial_gradient_norm.unwrap(), "{form}: {r:?}");
        }
        assert!(r.objective.is_finite() && r.objective > 0.0);
    }
}

#[test]
fn zero_covariance_equals_an_independently_solved_hinge_svm() {
    for (seed, lambda, weighted) in [(1, 0.1, false), (2, 0.01, true), (3, 1e-3, false)] {
        let mut data = common::random_dataset(seed, "none", 60, 4);
        if weighted {
            data.weights = Some((0..60).map(|i| 0.25 + (i % 4) as f64 * 0.25).collect());
        }
        let y = common::labels_pm1(&data);
        let (_, _, reference) = common::hinge_svm_by_clarabel(&data.features, &y, data.weights.as_deref(), lambda);
        for method in [LinearMethod::Gsu, LinearMethod::Hinge] {
            let fit = params(method.clone(), lambda).fit(&data).unwrap();
            let ours = gsu_objective(&data, lambda, &theta(&fit));
            assert!(
                common::rel_diff(ours, reference) <= 1e-6,
                "{method:?} λ={lambda}: objective {ours} vs Clarabel {reference} ({:?})",
                fit.reports[0]
            );
            assert!(fit.reports[0].converged(), "{:?}", fit.reports[0]);
        }
    }
}

#[test]
fn hinge_method_ignores_covariances() {
    let data = common::random_dataset(4, "diag", 80, 5);
    let plain = Dataset { covariances: Covariances::None, ..data.clone() };
    let a = params(LinearMethod::Hinge, 0.05).fit(&data).unwrap();
    let b = params(LinearMethod::Gsu, 0.05).fit(&plain).unwrap();
    assert_eq!(a.model, b.model);
}

#[test]
fn some_zero_covariances_converge() {
    // Half the examples certain (Σ = 0), half uncertain.
    let mut data = common::random_dataset(5, "diag", 100, 6);
    if let Covariances::Diagonal(c) = &mut data.covariances {
        for i in (0..100).step_by(2) {
            c.variances.row_mut(i).fill(0.0);
        }
    }
    let fit = params(LinearMethod::Gsu, 0.02).fit(&data).unwrap();
    assert!(fit.reports[0].converged(), "{:?}", fit.reports[0]);
    // The floor is negligible: the unsmoothed objective's subgradient optimality is approached, and the
    // objective cannot be improved by a tiny coordinate move.
    let t = theta(&fit);
    let base = gsu_objective(&data, 0.02, &t);
    for j in 0..t.len() {
        for step in [1e-5, -1e-5] {
            let mut moved = t.clone();
            moved[j] += step;
            assert!(gsu_objective(&data, 0.02, &moved) >= base - 1e-9);
        }
    }
}

#[test]
fn isotropic_diagonal_lowrank_and_full_forms_give_identical_results() {
    let mut r = common::rng(6);
    let (l, n) = (60, 4);
    let (x, labels) = common::blobs(&mut r, l, n, 1.5);
    let s2: Vec<f64> = (0..l).map(|i| 0.1 + 0.05 * (i % 7) as f64).collect();
    let iso = Covariances::isotropic(s2.clone());
    let diag = Covariances::diagonal(Array2::from_shape_fn((l, n), |(i, _)| s2[i]));
    let mut full = Array3::zeros((l, n, n));
    for i in 0..l {
        for j in 0..n {
            full[[i, j, j]] = s2[i];
        }
    }
    let lowrank = Covariances::low_rank(
        (0..l).map(|i| Array2::from_shape_fn((n, n), |(a, b)| if a == b { s2[i].sqrt() } else { 0.0 })).collect(),
        None,
    );
    let fits: Vec<_> = [iso, diag, Covariances::full(full), lowrank]
        .into_iter()
        .map(|c| {
            params(LinearMethod::Gsu, 0.05).fit(&Dataset::dense(x.clone(), labels.clone()).with_covariances(c)).unwrap()
        })
        .collect();
    for f in &fits[1..] {
        let (a, b) = (theta(&fits[0]), theta(f));
        for (u, v) in a.iter().zip(&b) {
            assert!((u - v).abs() <= 1e-9 * u.abs().max(1.0), "{a:?} vs {b:?}");
        }
        assert!(common::rel_diff(fits[0].reports[0].objective, f.reports[0].objective) < 1e-12);
    }
}

#[test]
fn sgd_approaches_the_exact_optimum_as_iterations_grow() {
    let data = common::random_dataset(8, "diag", 2000, 10);
    let lambda = 0.01;
    let exact = params(LinearMethod::Gsu, lambda).fit(&data).unwrap().reports[0].objective;
    let gaps: Vec<f64> = [30, 300, 3000, 30000]
        .iter()
        .map(|&t| {
            let sgd = LinearSvmParams {
                solver: Solver::Sgd(SgdSettings { iterations: t, batch: 50, seed: 1 }),
                ..params(LinearMethod::Gsu, lambda)
            };
            let fit = sgd.fit(&data).unwrap();
            (fit.reports[0].objective - exact) / exact
        })
        .collect();
    assert!(gaps.iter().all(|&g| g >= -1e-9), "SGD below the exact optimum: {gaps:?}");
    assert!(gaps[3] < gaps[0] && gaps[3] < 0.01, "SGD relative gaps {gaps:?}");
}

#[test]
fn same_seed_same_bits() {
    let data = common::random_dataset(9, "lowrank", 300, 6);
    for method in [LinearMethod::Gsu, LinearMethod::Sampling { samples: 5, seed: 3 }] {
        for solver in
            [Solver::Exact(ExactSettings::default()), Solver::Sgd(SgdSettings { iterations: 200, batch: 10, seed: 4 })]
        {
            let p = LinearSvmParams { solver, ..params(method.clone(), 0.03) };
            let (a, b) = (p.fit(&data).unwrap(), p.fit(&data).unwrap());
            assert_eq!(a.model.coef.dense().as_slice().unwrap(), b.model.coef.dense().as_slice().unwrap());
            assert_eq!(a.model.intercept, b.model.intercept);
        }
    }
    // A different seed draws different batches.
    let fit = |seed| {
        LinearSvmParams {
            solver: Solver::Sgd(SgdSettings { iterations: 50, batch: 5, seed }),
            ..params(LinearMethod::Gsu, 0.03)
        }
        .fit(&data)
        .unwrap()
        .model
    };
    assert_ne!(fit(1), fit(2));
}

#[test]
fn deterministic_across_thread_counts() {
    let data = common::random_dataset(10, "diag", 3000, 5);
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| params(LinearMethod::Gsu, 0.01).fit(&data).unwrap().model)
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn sampling_approaches_gsu_as_samples_grow() {
    let data = common::random_dataset(12, "full", 30, 2);
    let gsu = theta(&params(LinearMethod::Gsu, 0.05).fit(&data).unwrap());
    let angle = |n| {
        let t = theta(&params(LinearMethod::Sampling { samples: n, seed: 5 }, 0.05).fit(&data).unwrap());
        let (a, b) = (&gsu[..2], &t[..2]);
        let cos = (a[0] * b[0] + a[1] * b[1]) / ((a[0].hypot(a[1])) * (b[0].hypot(b[1])));
        cos.clamp(-1.0, 1.0).acos().to_degrees()
    };
    let (few, many) = (angle(3), angle(3000));
    assert!(many < few.max(0.5) && many < 2.0, "angle with 3 samples {few}°, with 3000 {many}°");
}

#[test]
fn iso_baseline_uses_the_mean_variance() {
    let data = common::random_dataset(13, "full", 50, 3);
    let iso_data = Dataset { covariances: data.covariances.to_isotropic(50, 3), ..data.clone() };
    let a = params(LinearMethod::Iso, 0.05).fit(&data).unwrap();
    let b = params(LinearMethod::Gsu, 0.05).fit(&iso_data).unwrap();
    assert_eq!(a.model, b.model);
}

#[test]
fn power_svm_alternating_objective_is_monotone_and_zero_radius_is_the_hinge() {
    let data = common::random_dataset(14, "iso", 120, 4);
    let fit = params(LinearMethod::Power { radius_scale: 1.0 }, 0.02).fit(&data).unwrap();
    let trace = &fit.reports[0].objective_trace;
    assert!(trace.len() >= 2, "{trace:?}");
    assert!(trace.windows(2).all(|w| w[1] <= w[0]), "not monotone: {trace:?}");
    assert_eq!(*trace.last().unwrap(), fit.reports[0].objective);
    let zero = params(LinearMethod::Power { radius_scale: 0.0 }, 0.02).fit(&data).unwrap();
    let hinge = params(LinearMethod::Hinge, 0.02).fit(&data).unwrap();
    assert!(common::rel_diff(zero.reports[0].objective, hinge.reports[0].objective) < 1e-9);
    for (u, v) in theta(&zero).iter().zip(theta(&hinge)) {
        assert!((u - v).abs() < 1e-6 * v.abs().max(1.0), "{u} vs {v}");
    }
}

#[test]
fn subspace_with_all_variance_equals_gsu_and_keeps_largest_axes() {
    let data = common::random_dataset(15, "full", 40, 3);
    let a = params(LinearMethod::GsuSubspace { variance_fraction: 1.0 }, 0.05).fit(&data).unwrap();
    let b = params(LinearMethod::Gsu, 0.05).fit(&data).unwrap();
    for (u, v) in theta(&a).iter().zip(theta(&b)) {
        assert!((u - v).abs() < 1e-7 * v.abs().max(1.0), "{u} vs {v}");
    }
    // Diagonal: variances (4, 1, 0.5) hold 72.7%, 18.2%, 9.1%: p = 0.7 keeps axis 0 only, p = 0.8 axes 0 and 1.
    let x = ndarray::array![[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]];
    let var = ndarray::array![[0.5, 1.0, 4.0], [4.0, 1.0, 0.5]];
    let d = Dataset::dense(x, vec![0, 1]).with_covariances(Covariances::diagonal(var));
    let (means, cov) = usvm::svm::project_to_subspaces(&d, 0.7).unwrap();
    assert_eq!(means.to_dense(), ndarray::array![[0.0, 0.0, 3.0], [-1.0, 0.0, 0.0]]);
    match cov {
        Covariances::Diagonal(c) => assert_eq!(c.variances, ndarray::array![[0.0, 0.0, 4.0], [4.0, 0.0, 0.0]]),
        other => panic!("{other:?}"),
    }
    let (means, _) = usvm::svm::project_to_subspaces(&d, 0.8).unwrap();
    assert_eq!(means.to_dense(), ndarray::array![[0.0, 2.0, 3.0], [-1.0, -2.0, 0.0]]);
}

#[test]
fn subspace_full_covariance_projects_onto_leading_eigenvectors() {
    // Σ = diag(9, 1) rotated by 45°: the leading eigenvector is (1, 1)/√2 with 90% of the variance.
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let rot = ndarray::array![[s, -s], [s, s]];
    let sigma = rot.dot(&ndarray::array![[9.0, 0.0], [0.0, 1.0]]).dot(&rot.t());
    let mut full = Array3::zeros((2, 2, 2));
    full.index_axis_mut(ndarray::Axis(0), 0).assign(&sigma);
    full.index_axis_mut(ndarray::Axis(0), 1).assign(&sigma);
    let d =
        Dataset::dense(ndarray::array![[2.0, 0.0], [0.0, -2.0]], vec![0, 1]).with_covariances(Covariances::full(full));
    let (means, cov) = usvm::svm::project_to_subspaces(&d, 0.85).unwrap();
    let m = means.to_dense();
    for (got, want) in m.iter().zip([1.0, 1.0, -1.0, -1.0]) {
        assert!((got - want).abs() < 1e-12, "{m:?}");
    }
    // The kept covariance is 9 u uᵀ: wᵀΣw for w = (1, 1) is 9·2 = 18.
    let q = usvm::covariance::Covariance::quad_form(cov.as_dyn(), 0, &[1.0, 1.0]);
    assert!((q - 18.0).abs() < 1e-10);
}

#[test]
fn multiclass_one_vs_rest() {
    let mut r = common::rng(16);
    let centres = [[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0]];
    let l = 90;
    let labels: Vec<i64> = (0..l).map(|i| (i % 3) as i64 * 10).collect();
    let x = Array2::from_shape_fn((l, 2), |(i, j)| centres[i % 3][j] + 0.5 * common::normal(&mut r));
    let data = Dataset::dense(x, labels.clone());
    let fit = params(LinearMethod::Hinge, 0.01).fit(&data).unwrap();
    assert_eq!(fit.model.classes, vec![0, 10, 20]);
    assert_eq!(fit.model.coef.dense().nrows(), 3);
    assert_eq!(fit.reports.len(), 3);
    let predicted = fit.model.predict(&data.features).unwrap();
    let correct = predicted.iter().zip(&labels).filter(|(a, b)| a == b).count();
    assert!(correct >= 88, "{correct}/90");
}

#[test]
fn weights_zero_removes_an_example() {
    let data = common::random_dataset(17, "diag", 50, 3);
    let mut weighted = data.clone();
    let mut w = vec![1.0; 50];
    w[7] = 0.0;
    weighted.weights = Some(w);
    let keep: Vec<usize> = (0..50).filter(|&i| i != 7).collect();
    let a = params(LinearMethod::Gsu, 0.05).fit(&weighted).unwrap();
    // Same minimiser with λ rescaled for the 49-example mean: (1/50)Σ = (49/50)(1/49)Σ.
    let b = params(LinearMethod::Gsu, 0.05 * 50.0 / 49.0).fit(&data.select(&keep)).unwrap();
    for (u, v) in theta(&a).iter().zip(theta(&b)) {
        assert!((u - v).abs() < 1e-6 * v.abs().max(1.0), "{u} vs {v}");
    }
}

#[test]
fn warm_start_reaches_the_same_optimum() {
    let data = common::random_dataset(18, "diag", 150, 5);
    for method in [LinearMethod::Gsu, LinearMethod::Hinge] {
        let near = params(method.clone(), 0.02).fit(&data).unwrap().model;
        let cold = params(method.clone(), 0.01).fit(&data).unwrap();
        let warm = params(method.clone(), 0.01).fit_from(&data, Some(&near)).unwrap();
        assert!(warm.reports[0].converged(), "{:?}", warm.reports[0]);
        let (a, b) = (cold.reports[0].objective, warm.reports[0].objective);
        assert!(common::rel_diff(a, b) < 1e-8, "{method:?}: cold {a} warm {b}");
    }
}

#[test]
fn cross_validation_path_matches_independent_folds() {
    let data = common::random_dataset(19, "diag", 120, 4);
    let lambdas = [0.5, 0.01, 0.1];
    let path =
        usvm::model_selection::cross_validate_path(&params(LinearMethod::Gsu, 1.0), &lambdas, &data, 4, 2, &|| {})
            .unwrap();
    for (j, &lambda) in lambdas.iter().enumerate() {
        let folds = usvm::model_selection::cross_validate(&params(LinearMethod::Gsu, lambda), &data, 4, 2).unwrap();
        let accuracy = folds.iter().map(|f| f.accuracy * f.test.len() as f64).sum::<f64>() / 120.0;
        assert!((accuracy - path[j]).abs() < 1e-12, "λ={lambda}: {accuracy} vs {}", path[j]);
    }
}

#[test]
fn hinge_svm_is_solved_exactly_on_its_margin_set() {
    // The active-set solve settles on these (exact: no smoothing left, KKT residual at round-off); on the
    // last one it does not, and the continuation finishes the job.
    for (seed, l, n, lambda, exact) in [(40, 200, 5, 1e-2, true), (42, 80, 3, 1.0, true), (41, 500, 20, 1e-3, false)] {
        let data = common::random_dataset(seed, "none", l, n);
        let fit = params(LinearMethod::Hinge, lambda).fit(&data).unwrap();
        let r = &fit.reports[0];
        assert!(r.converged(), "{r:?}");
        if exact {
            assert_eq!(r.sigma_floor, Some(0.0), "{r:?}");
            assert!(r.gradient_norm <= 1e-10 * r.initial_gradient_norm.unwrap(), "{r:?}");
        }
        let y = common::labels_pm1(&data);
        let (_, _, reference) = common::hinge_svm_by_clarabel(&data.features, &y, None, lambda);
        assert!(r.objective <= reference * (1.0 + 1e-9), "{} vs Clarabel {reference}", r.objective);
    }
    // Every example twice makes the margin set's Gram matrix singular; the (1/ℓ)-mean makes it the same
    // problem as the original data.
    let data = common::random_dataset(43, "none", 40, 2);
    let doubled = data.select(&(0..80).map(|i| i % 40).collect::<Vec<_>>());
    let fit = params(LinearMethod::Hinge, 0.05).fit(&doubled).unwrap();
    let single = params(LinearMethod::Hinge, 0.05).fit(&data).unwrap();
    assert!(fit.reports[0].converged() && fit.reports[0].sigma_floor == Some(0.0), "{:?}", fit.reports[0]);
    assert!(common::rel_diff(fit.reports[0].objective, single.reports[0].objective) < 1e-12);
    for (u, v) in theta(&fit).iter().zip(theta(&single)) {
        assert!((u - v).abs() < 1e-10 * v.abs().max(1.0), "{u} vs {v}");
    }
}

/// More features than examples and rank-2 covariances, as for images with translation covariances: at
/// small λ many examples sit at the expected hinge's apex (`d_i = 0`, `U_iᵀw = 0`). The exact finish on
/// them certifies the fit (relative duality gap ≤ 1e-10, unsmoothed: `sigma_floor` 0) in tens of Newton
/// steps, and no direction descends from it.
#[test]
fn low_rank_fits_at_small_lambda_certify_at_the_apex() {
    let (l, n) = (40, 50);
    let mut r = common::rng(17);
    let (x, labels) = common::blobs(&mut r, l, n, 3.0);
    let factors = (0..l).map(|_| Array2::from_shape_fn((n, 2), |_| 0.2 * common::normal(&mut r))).collect();
    let data = Dataset::dense(x, labels).with_covariances(Covariances::low_rank(factors, None));
    for lambda in [1e-3, 1e-5] {
        let fit = params(LinearMethod::Gsu, lambda).fit(&data).unwrap();
        let report = &fit.reports[0];
        assert!(report.converged(), "λ = {lambda}: {report:?}");
        assert!(report.duality_gap.unwrap() <= 1e-10, "λ = {lambda}: {report:?}");
        assert_eq!(report.sigma_floor, Some(0.0), "λ = {lambda}: the finish did not run");
        assert!(report.n_iter <= 80, "λ = {lambda}: {} Newton steps", report.n_iter);
        let theta = theta(&fit);
        let value = gsu_objective(&data, lambda, &theta);
        let norm = theta.iter().map(|t| t * t).sum::<f64>().sqrt();
        for k in 0..200 {
            let direction: Vec<f64> = (0..=n).map(|_| common::normal(&mut r)).collect();
            let step = [1e-7, 1e-5, 1e-3][k % 3] * norm;
            let moved: Vec<f64> = theta.iter().zip(&direction).map(|(t, d)| t + step * d).collect();
            let change = gsu_objective(&data, lambda, &moved) - value;
            assert!(change >= -1e-12 * value, "λ = {lambda}: J falls by {change:e} along direction {k}");
        }
    }
}
