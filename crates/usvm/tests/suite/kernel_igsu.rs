//! KSVM-iGSU / RD-KSVM-iGSU: gradient checks of J(α, b), the σ → 0 limit against an independent conic
//! solution of the kernel SVM, the linear kernel against LSVM-iGSU, relevance degrees, SGD, Nyström and
//! random Fourier features, and bad input.

use crate::common;

use ndarray::Array2;
use usvm::kernel::feature_map::{FACTOR_PANEL, KernelFactor, Nystroem, RandomFourier};
use usvm::solver::exact::ExactSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{Approximation, GramOperator, KernelIgsuFit, KernelIgsuParams, KernelObjective, isotropic_variances};
use usvm::{Covariances, Dataset, Error, Features, Kernel, LinearMethod, LinearSvmParams, Model, ModelFile, Solver};

const KERNELS: [Kernel; 3] =
    [Kernel::Linear, Kernel::Rbf { gamma: 0.4 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }];

fn params(kernel: Kernel, lambda: f64) -> KernelIgsuParams {
    KernelIgsuParams { kernel, lambda, ..Default::default() }
}

/// Blobs with isotropic variances `σ_i²` drawn in [0.05, 0.5] (every third zero when `some_zero`).
fn iso_dataset(seed: u64, l: usize, n: usize, some_zero: bool) -> Dataset<'static> {
    let mut r = common::rng(seed);
    let (x, labels) = common::blobs(&mut r, l, n, 2.0);
    let v = (0..l).map(|i| if some_zero && i % 3 == 0 { 0.0 } else { 0.05 + 0.45 * ((i * 7919) % 97) as f64 / 97.0 });
    Dataset::dense(x, labels).with_covariances(Covariances::isotropic(v.collect()))
}

/// `(J(α, b), f(x_i))` of a binary kernel model on its training set, with the exact Gram matrix.
fn kernel_objective(fit: &KernelIgsuFit, data: &Dataset, lambda: f64) -> (f64, Vec<f64>) {
    let Model::Kernel(m) = &fit.model else { panic!("not a kernel model") };
    let f: Vec<f64> = m.decision_function(&data.features).unwrap().column(0).to_vec();
    let y = common::labels_pm1(data);
    let (variances, l) = (isotropic_variances(data), data.n_samples());
    // J from f: αᵀKα over the support, d_i from f(x_i).
    let ks = m.kernel.gram(&m.support).unwrap();
    let a = m.coef.row(0).to_owned();
    let norm2 = a.dot(&ks.dot(&a));
    let loss: f64 = (0..l)
        .map(|i| {
            let c = data.weights.as_ref().map_or(1.0, |w| w[i]);
            c * usvm::loss::MarginLoss::value(
                &usvm::loss::ExpectedHinge,
                1.0 - y[i] * f[i],
                (variances[i] * norm2).sqrt(),
            )
        })
        .sum();
    (0.5 * lambda * norm2 + loss / l as f64, f)
}

#[test]
fn gradient_matches_central_differences() {
    for (case, kernel) in KERNELS.iter().enumerate() {
        for (weighted, some_zero) in [(false, false), (true, true)] {
            let data = iso_dataset(100 + case as u64, 30, 3, some_zero);
            let gram = kernel.gram(&data.features).unwrap();
            let y = common::labels_pm1(&data);
            let variances = isotropic_variances(&data);
            let weights: Vec<f64> = (0..30).map(|i| 0.1 + 0.05 * i as f64).collect();
            let objective = KernelObjective {
                gram: GramOperator::Matrix(&gram),
                y: &y,
                variances: &variances,
                weights: weighted.then_some(&weights[..]),
                lambda: 0.03,
            };
            let implicit =
                KernelObjective { gram: GramOperator::Implicit { kernel: *kernel, x: &data.features }, ..objective };
            let mut r = common::rng(7 + case as u64);
            for _ in 0..3 {
                let alpha: Vec<f64> = (0..30).map(|_| 0.1 * common::normal(&mut r)).collect();
                let b = 0.3 * common::normal(&mut r);
                let (value, grad, db) = objective.value_grad(&alpha, b).unwrap();
                let (v2, g2, db2) = implicit.value_grad(&alpha, b).unwrap();
                assert!(common::rel_diff(value, v2) < 1e-12 && common::rel_diff(db, db2) < 1e-10);
                assert!(grad.iter().zip(&g2).all(|(a, c)| (a - c).abs() < 1e-10 * (1.0 + a.abs())));
                let h = 1e-6;
                let fd = |f: &dyn Fn(f64) -> f64| (f(h) - f(-h)) / (2.0 * h);
                for j in 0..30 {
                    let g = fd(&|e| {
                        let mut a = alpha.clone();
                        a[j] += e;
                        objective.value(&a, b).unwrap()
                    });
                    let tol = 1e-6 * grad[j].abs().max(1e-2);
                    assert!((g - grad[j]).abs() < tol, "{kernel:?} w={weighted} α_{j}: fd {g} vs {}", grad[j]);
                }
                let g = fd(&|e| objective.value(&alpha, b + e).unwrap());
                assert!((g - db).abs() < 1e-6 * db.abs().max(1e-2), "{kernel:?} b: fd {g} vs {db}");
            }
        }
    }
}

/// The kernel hinge SVM's optimum `min λ/2 αᵀKα + (1/ℓ) Σ c_i max(0, 1 - y_i(K_iᵀα + b))`, through its dual
/// `max Σ β_i - 1/(2λ) Σ β_i β_j y_i y_j K_ij`, `0 ≤ β_i ≤ c_i/ℓ`, `yᵀβ = 0`, solved by Clarabel.
fn kernel_svm_by_clarabel(gram: &Array2<f64>, y: &[f64], c: Option<&[f64]>, lambda: f64) -> f64 {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let l = y.len();
    let p: Vec<Vec<f64>> = (0..l).map(|i| (0..l).map(|j| y[i] * y[j] * gram[[i, j]] / lambda).collect()).collect();
    let q = vec![-1.0; l];
    // Rows: yᵀβ = 0 (zero cone), -β ≤ 0, β ≤ c/ℓ.
    let mut a = vec![vec![0.0; l]; 1 + 2 * l];
    let mut b = vec![0.0; 1 + 2 * l];
    for i in 0..l {
        a[0][i] = y[i];
        a[1 + i][i] = -1.0;
        a[1 + l + i][i] = 1.0;
        b[1 + l + i] = c.map_or(1.0, |c| c[i]) / l as f64;
    }
    let settings = common::clarabel_settings(1e-12);
    let (pm, am) = (CscMatrix::from(&p), CscMatrix::from(&a));
    let cones = [ZeroConeT(1), NonnegativeConeT(2 * l)];
    let mut solver = DefaultSolver::new(&pm, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(matches!(solver.solution.status, SolverStatus::Solved | SolverStatus::AlmostSolved));
    -solver.solution.obj_val
}

#[test]
fn zero_variances_give_the_kernel_svm() {
    for (case, kernel) in
        [Kernel::Rbf { gamma: 0.5 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 2 }].into_iter().enumerate()
    {
        for weighted in [false, true] {
            let mut data = iso_dataset(200 + case as u64, 60, 2, false);
            data.covariances = Covariances::None;
            if weighted {
                data.weights = Some((0..60).map(|i| 0.25 + (i % 4) as f64 * 0.25).collect());
            }
            let lambda = 0.02;
            let fit = params(kernel, lambda).fit(&data).unwrap();
            assert!(fit.reports[0].converged(), "{:?}", fit.reports[0]);
            let (ours, _) = kernel_objective(&fit, &data, lambda);
            let y = common::labels_pm1(&data);
            let dual =
                kernel_svm_by_clarabel(&kernel.gram(&data.features).unwrap(), &y, data.weights.as_deref(), lambda);
            assert!(common::rel_diff(ours, dual) < 1e-6, "{kernel:?} weighted={weighted}: {ours} vs dual {dual}");
        }
    }
}

#[test]
fn linear_kernel_is_lsvm_igsu() {
    for (seed, some_zero) in [(300, false), (301, true)] {
        let data = iso_dataset(seed, 80, 4, some_zero);
        let lambda = 0.05;
        let kfit = params(Kernel::Linear, lambda).fit(&data).unwrap();
        let lfit = LinearSvmParams { method: LinearMethod::Gsu, lambda, ..Default::default() }.fit(&data).unwrap();
        assert!(kfit.reports[0].converged() && lfit.reports[0].converged());
        let (ours, f) = kernel_objective(&kfit, &data, lambda);
        let (a, b) = (ours, lfit.reports[0].objective);
        assert!(common::rel_diff(a, b) < 1e-8, "kernel {a} vs linear {b}");
        let g = lfit.model.decision_function(&data.features).unwrap();
        for (u, v) in f.iter().zip(g.column(0)) {
            assert!((u - v).abs() < 1e-6 * (1.0 + v.abs()), "{u} vs {v}");
        }
    }
}

#[test]
fn relevance_degrees_act_as_removal_and_duplication() {
    let data = iso_dataset(400, 40, 2, false);
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let (l, lambda) = (40.0, 0.05);
    let decision = |fit: &KernelIgsuFit| fit.model.decision_function(&data.features).unwrap().column(0).to_vec();
    let close = |a: &[f64], b: &[f64], what: &str| {
        for (u, v) in a.iter().zip(b) {
            assert!((u - v).abs() < 1e-6 * (1.0 + v.abs()), "{what}: {u} vs {v}");
        }
    };
    // c_5 = 0 is the same minimiser as dropping example 5, with λ rescaled for the 39-example mean.
    let mut w = vec![1.0; 40];
    w[5] = 0.0;
    let zero = params(kernel, lambda).fit(&data.clone().with_weights(w)).unwrap();
    let keep: Vec<usize> = (0..40).filter(|&i| i != 5).collect();
    let removed = params(kernel, lambda * l / (l - 1.0)).fit(&data.select(&keep)).unwrap();
    close(&decision(&zero), &decision(&removed), "c=0 vs removed");
    // c_5 = 2 is example 5 twice, with λ rescaled for the 41-example mean.
    let mut w = vec![1.0; 40];
    w[5] = 2.0;
    let double = params(kernel, lambda).fit(&data.clone().with_weights(w)).unwrap();
    let idx: Vec<usize> = (0..40).chain([5]).collect();
    let duplicated = params(kernel, lambda * l / (l + 1.0)).fit(&data.select(&idx)).unwrap();
    close(&decision(&double), &decision(&duplicated), "c=2 vs duplicated");
    // And the weights do change the solution.
    let plain = params(kernel, lambda).fit(&data).unwrap();
    assert!(decision(&plain).iter().zip(decision(&double)).any(|(u, v)| (u - v).abs() > 1e-3));
}

#[test]
fn sgd_approaches_the_exact_objective() {
    let data = iso_dataset(500, 100, 2, false);
    let (kernel, lambda) = (Kernel::Rbf { gamma: 0.5 }, 0.05);
    let exact = params(kernel, lambda).fit(&data).unwrap();
    let (reference, _) = kernel_objective(&exact, &data, lambda);
    let sgd = |seed| KernelIgsuParams {
        solver: Solver::Sgd(SgdSettings { iterations: 20000, batch: 10, seed }),
        ..params(kernel, lambda)
    };
    let fit = sgd(3).fit(&data).unwrap();
    let (value, _) = kernel_objective(&fit, &data, lambda);
    assert!(common::rel_diff(value, fit.reports[0].objective) < 1e-10);
    assert!(value >= reference * (1.0 - 1e-9) && value < reference * 1.02, "sgd {value} vs exact {reference}");
    // Same seed, same bits.
    assert_eq!(fit.model, sgd(3).fit(&data).unwrap().model);
}

#[test]
fn nystroem_with_all_landmarks_is_exact() {
    for kernel in KERNELS {
        let data = iso_dataset(600, 50, 3, true);
        let lambda = 0.03;
        let exact = params(kernel, lambda).fit(&data).unwrap();
        let nys = KernelIgsuParams {
            approximation: Approximation::Nystroem { components: 50, seed: 1 },
            ..params(kernel, lambda)
        }
        .fit(&data)
        .unwrap();
        let (a, fa) = kernel_objective(&exact, &data, lambda);
        let (b, fb) = kernel_objective(&nys, &data, lambda);
        assert!(common::rel_diff(a, b) < 1e-7, "{kernel:?}: exact {a} vs Nyström {b}");
        for (u, v) in fa.iter().zip(&fb) {
            assert!((u - v).abs() < 1e-5 * (1.0 + u.abs()), "{kernel:?}: {u} vs {v}");
        }
    }
}

#[test]
fn random_fourier_features_converge_with_components() {
    let data = iso_dataset(700, 120, 2, false);
    let (kernel, lambda) = (Kernel::Rbf { gamma: 0.3 }, 0.03);
    let exact = params(kernel, lambda).fit(&data).unwrap();
    let (reference, f_exact) = kernel_objective(&exact, &data, lambda);
    let errors: Vec<(f64, f64)> = [20, 200, 2000]
        .into_iter()
        .map(|components| {
            let fit = KernelIgsuParams {
                approximation: Approximation::Fourier { components, seed: 4 },
                ..params(kernel, lambda)
            }
            .fit(&data)
            .unwrap();
            let f = fit.model.decision_function(&data.features).unwrap();
            let df = f.column(0).iter().zip(&f_exact).map(|(u, v)| (u - v).abs()).fold(0.0, f64::max);
            (common::rel_diff(fit.reports[0].objective, reference), df)
        })
        .collect();
    assert!(errors[2].0 < errors[0].0 && errors[2].1 < errors[0].1 / 3.0, "{errors:?}");
    assert!(errors[2].0 < 0.05 && errors[2].1 < 0.1, "{errors:?}");
}

#[test]
fn pivoted_cholesky_factors_and_maps_back() {
    let data = iso_dataset(800, 70, 3, false);
    for kernel in KERNELS {
        let factor = KernelFactor::new(kernel, &data.features, 1e-12, 70).unwrap();
        let gram = kernel.gram(&data.features).unwrap();
        let llt = factor.l.dot(&factor.l.t());
        let err = (&gram - &llt).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = gram.diag().iter().fold(0.0f64, |m, v| m.max(*v));
        assert!(err <= 1e-10 * scale, "{kernel:?}: {err}");
        if kernel == Kernel::Linear {
            assert_eq!(factor.rank(), 3);
        }
        let w: Vec<f64> = (0..factor.rank()).map(|j| (j as f64 * 0.37).sin()).collect();
        let alpha = factor.pivot_coefficients(&w);
        let lw = factor.l.dot(&ndarray::ArrayView1::from(&w[..]));
        let sub = gram.select(ndarray::Axis(1), &factor.pivots);
        let ka = sub.dot(&ndarray::ArrayView1::from(&alpha[..]));
        assert!(lw.iter().zip(&ka).all(|(a, b)| (a - b).abs() < 1e-6 * (1.0 + a.abs())), "{kernel:?}");
    }
    // Nyström on all rows reproduces K; its features are seeded.
    let kernel = Kernel::Rbf { gamma: 0.2 };
    let map = Nystroem::fit(kernel, &data.features, 70, 9).unwrap();
    let phi = map.transform(&data.features).unwrap();
    let err = (&kernel.gram(&data.features).unwrap() - &phi.dot(&phi.t())).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(err < 1e-8, "{err}");
    let a = RandomFourier::new(kernel, 3, 64, 5).unwrap();
    assert_eq!(a, RandomFourier::new(kernel, 3, 64, 5).unwrap());
    assert_ne!(a, RandomFourier::new(kernel, 3, 64, 6).unwrap());
}

#[test]
fn variances_come_from_any_covariance_form() {
    let mut data = common::random_dataset(900, "diag", 40, 3);
    let Covariances::Diagonal(d) = &data.covariances else { unreachable!() };
    let want: Vec<f64> = d.variances.rows().into_iter().map(|r| r.sum() / 3.0).collect();
    assert_eq!(isotropic_variances(&data), want);
    let fit_diag = params(Kernel::Rbf { gamma: 0.5 }, 0.05).fit(&data).unwrap();
    data.covariances = Covariances::isotropic(want);
    let fit_iso = params(Kernel::Rbf { gamma: 0.5 }, 0.05).fit(&data).unwrap();
    assert_eq!(fit_diag.model, fit_iso.model);
    let full = common::random_dataset(901, "full", 10, 3);
    let Covariances::Full(f) = &full.covariances else { unreachable!() };
    let v = isotropic_variances(&full);
    for (i, vi) in v.iter().enumerate() {
        let m = f.matrices.index_axis(ndarray::Axis(0), i);
        assert!((vi - m.diag().sum() / 3.0).abs() < 1e-12);
    }
}

#[test]
fn one_vs_rest_and_model_files() {
    let mut r = common::rng(1000);
    let centres = [[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]];
    let labels: Vec<i64> = (0..90).map(|i| (i % 3) as i64 * 10).collect();
    let x = Array2::from_shape_fn((90, 2), |(i, j)| centres[i % 3][j] + 0.7 * common::normal(&mut r));
    let data = Dataset::dense(x, labels.clone()).with_covariances(Covariances::isotropic(vec![0.1; 90]));
    for approximation in [
        Approximation::Exact,
        Approximation::Nystroem { components: 30, seed: 2 },
        Approximation::Fourier { components: 100, seed: 2 },
    ] {
        for solver in
            [Solver::Exact(ExactSettings::default()), Solver::Sgd(SgdSettings { iterations: 2000, batch: 10, seed: 1 })]
        {
            let fit = KernelIgsuParams { approximation, solver, ..params(Kernel::Rbf { gamma: 0.3 }, 0.01) }
                .fit(&data)
                .unwrap();
            assert_eq!(fit.reports.len(), 3);
            assert_eq!(fit.model.classes(), &[0, 10, 20]);
            let predicted = fit.model.predict(&data.features).unwrap();
            let correct = predicted.iter().zip(&labels).filter(|(a, b)| a == b).count();
            assert!(correct >= 85, "{approximation:?} {solver:?}: {correct}/90");
            assert!(matches!(fit.model, Model::Kernel(_) | Model::Mapped(_)));
            let file = ModelFile::from_model(&fit.model, "ksvm-igsu", serde_json::json!({}));
            let back = ModelFile::from_json(&file.to_json()).unwrap().to_model().unwrap();
            assert_eq!(back, fit.model);
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = iso_dataset(1100, 20, 2, false);
    let fit = |p: KernelIgsuParams, d: &Dataset| p.fit(d).map(|_| ());
    let base = params(Kernel::Rbf { gamma: 0.5 }, 0.1);
    let bad_param = |p: KernelIgsuParams, name: &str| {
        assert!(matches!(fit(p.clone(), &data), Err(Error::InvalidParameter { name: n, .. }) if n == name), "{p:?}");
    };
    bad_param(KernelIgsuParams { lambda: 0.0, ..base.clone() }, "lambda");
    bad_param(KernelIgsuParams { lambda: f64::NAN, ..base.clone() }, "lambda");
    bad_param(KernelIgsuParams { kernel: Kernel::Rbf { gamma: -1.0 }, ..base.clone() }, "gamma");
    bad_param(KernelIgsuParams { kernel: Kernel::Precomputed, ..base.clone() }, "kernel");
    bad_param(
        KernelIgsuParams { approximation: Approximation::Nystroem { components: 0, seed: 0 }, ..base.clone() },
        "components",
    );
    bad_param(
        KernelIgsuParams {
            kernel: Kernel::Linear,
            approximation: Approximation::Fourier { components: 10, seed: 0 },
            ..base.clone()
        },
        "approximation",
    );
    bad_param(
        KernelIgsuParams { solver: Solver::Sgd(SgdSettings { iterations: 0, ..Default::default() }), ..base.clone() },
        "iterations",
    );
    bad_param(
        KernelIgsuParams { solver: Solver::Sgd(SgdSettings { batch: 0, ..Default::default() }), ..base.clone() },
        "batch",
    );
    bad_param(
        KernelIgsuParams { solver: Solver::Exact(ExactSettings { tol: 0.0, ..Default::default() }), ..base.clone() },
        "tol",
    );
    let mut nan = data.clone();
    if let Features::Dense(a) = &mut nan.features {
        a.view_mut()[[3, 1]] = f64::NAN;
    }
    assert!(matches!(fit(base.clone(), &nan), Err(Error::NonFinite { what: "features", index: 3, .. })));
    let single = Dataset { labels: vec![1; 20].into(), ..data.clone() };
    assert!(matches!(fit(base.clone(), &single), Err(Error::SingleClass { label: 1 })));
    let neg = data.clone().with_covariances(Covariances::isotropic(vec![-1.0; 20]));
    assert!(matches!(fit(base.clone(), &neg), Err(Error::NegativeVariance { .. })));
    let weights = data.clone().with_weights(vec![-1.0; 20]);
    assert!(matches!(fit(base.clone(), &weights), Err(Error::InvalidWeight { .. })));
    let empty = Dataset::dense(Array2::zeros((0, 2)), vec![]);
    assert!(matches!(fit(base.clone(), &empty), Err(Error::Empty(_))));
    // Prediction with more features: zero trailing features change nothing for a kernel expansion (LIBSVM's
    // rule: the support vectors are zero there); an explicit feature map refuses (below).
    let model = base.fit(&data).unwrap().model;
    let wide = Features::dense(Array2::zeros((2, 5)));
    let narrow = Features::dense(Array2::zeros((2, 2)));
    assert_eq!(model.decision_function(&wide).unwrap(), model.decision_function(&narrow).unwrap());
    let rff = KernelIgsuParams {
        approximation: Approximation::Fourier { components: 10, seed: 0 },
        ..params(Kernel::Rbf { gamma: 0.5 }, 0.1)
    };
    let model = rff.fit(&data).unwrap().model;
    assert!(matches!(model.decision_function(&wide), Err(Error::DimensionMismatch { .. })));
}

#[test]
fn blocked_dense_phase_matches_the_column_by_column_factor() {
    // ℓ = 600 in 4-D with a narrow RBF: the rank passes ℓ/8 = 75, so the factor switches to the blocked phase
    // (several panels, the trailing matrix compacted each time); stopped by the tolerance, by a rank cap in
    // the middle of a panel, and run to full rank.
    let data = iso_dataset(601, 600, 4, false);
    let kernel = Kernel::Rbf { gamma: 2.0 };
    let gram = kernel.gram(&data.features).unwrap();
    let scale = gram.diag().iter().fold(0.0f64, |m, v| m.max(*v));
    for (tol, cap) in [(1e-6, 600), (1e-12, 230), (1e-14, 600)] {
        let fast = KernelFactor::new(kernel, &data.features, tol, cap).unwrap();
        let slow = KernelFactor::with_dense_switch(kernel, &data.features, tol, cap, false).unwrap();
        assert!(fast.rank() > 2 * FACTOR_PANEL, "{tol}: rank {}", fast.rank());
        assert!(fast.rank().abs_diff(slow.rank()) <= 2, "{tol}: {} vs {}", fast.rank(), slow.rank());
        assert!(fast.rank() <= cap);
        // Same pivots while the residual diagonal is well above rounding.
        assert_eq!(fast.pivots[..100], slow.pivots[..100], "{tol}");
        for f in [&fast, &slow] {
            let llt = f.l.dot(&f.l.t());
            let err = (&gram - &llt).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let bound = if cap < 600 { 2.0 * f.residual } else { 10.0 * tol * scale + 1e-12 };
            assert!(err <= bound.max(1e-13), "{tol} {cap}: {err} vs residual {}", f.residual);
            for (k, &p) in f.pivots.iter().enumerate() {
                assert!(f.l.row(p).iter().skip(k + 1).all(|&v| v == 0.0));
            }
        }
        assert!(common::rel_diff(fast.residual, slow.residual) < 1e-3 || fast.residual < 1e-12, "{tol}");
    }
}
