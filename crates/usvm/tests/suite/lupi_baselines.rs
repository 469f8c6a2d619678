//! Paper 004's Table 1 baselines: L2-SVM+ against an independent QP (Clarabel on a dual matrix formed by a
//! different formula), its duality certificate, and RSVM-RHHQ's monotone half-quadratic trace, its η → 0
//! limit (the weighted hinge SVM), the derivative its weights are, and bad input for both.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{normal, rel_diff, rng};
use ndarray::Array2;
use usvm::svm::rescaled_hinge::{rescaled_hinge, rescaled_hinge_objective, rescaled_hinge_weight};
use usvm::svm::{KernelSvmParams, L2SvmPlusParams, RescaledHingeParams};
use usvm::{Dataset, Error, Features, FitOptions, Kernel, MethodParams};

/// `exp(−γ‖a_i − b_j‖²)`, written here (not the library's kernel code).
fn gaussian(a: &Array2<f64>, gamma: f64) -> Array2<f64> {
    let n = a.nrows();
    Array2::from_shape_fn((n, n), |(i, j)| {
        let d2: f64 = a.row(i).iter().zip(a.row(j)).map(|(u, v)| (u - v) * (u - v)).sum();
        (-gamma * d2).exp()
    })
}

/// `X` with `M X = B` by Gaussian elimination with partial pivoting (dense, small).
fn solve(m: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let n = m.nrows();
    let (mut a, mut x) = (m.clone(), b.clone());
    for k in 0..n {
        let p = (k..n).max_by(|&i, &j| a[[i, k]].abs().total_cmp(&a[[j, k]].abs())).unwrap();
        for c in 0..n {
            a.swap([k, c], [p, c]);
            x.swap([k, c], [p, c]);
        }
        for i in k + 1..n {
            let f = a[[i, k]] / a[[k, k]];
            for c in k..n {
                a[[i, c]] -= f * a[[k, c]];
            }
            for c in 0..n {
                x[[i, c]] -= f * x[[k, c]];
            }
        }
    }
    for k in (0..n).rev() {
        for c in 0..n {
            let s: f64 = (k + 1..n).map(|j| a[[k, j]] * x[[j, c]]).sum();
            x[[k, c]] = (x[[k, c]] - s) / a[[k, k]];
        }
    }
    x
}

/// A random LUPI problem: labels {0, 1}, `x` noisy, `x*` the clean signal plus a little noise.
fn lupi_problem(seed: u64, n: usize, d: usize, weighted: bool) -> Dataset<'static> {
    let mut r = rng(seed);
    let labels: Vec<i64> = (0..n).map(|i| (i % 2) as i64).collect();
    let signal: Vec<f64> = labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
    let x = Array2::from_shape_fn((n, d), |(i, k)| if k == 0 { signal[i] } else { 0.0 } + 1.5 * normal(&mut r));
    let x_star = Array2::from_shape_fn((n, 2), |(i, k)| if k == 0 { signal[i] } else { 0.0 } + 0.3 * normal(&mut r));
    let data = Dataset::dense(x, labels).with_privileged(Features::dense(x_star));
    if weighted { data.with_weights((0..n).map(|i| 0.5 + (i % 3) as f64 * 0.5).collect()) } else { data }
}

fn dense(f: &Features) -> Array2<f64> {
    match f {
        Features::Dense(m) => m.to_array(),
        Features::Sparse(_) => unreachable!("dense test data"),
    }
}

/// `min ½αᵀQα s.t. 1ᵀα = 1, α ≥ 0` by Clarabel: `(α, ½αᵀQα)`.
fn one_equality_qp_by_clarabel(q: &Array2<f64>) -> (Vec<f64>, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let n = q.nrows();
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in 0..n {
        for row in 0..=col {
            rowval.push(row);
            nzval.push(0.5 * (q[[row, col]] + q[[col, row]]));
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(n, n, colptr, rowval, nzval);
    let mut a = vec![vec![0.0; n]; n + 1];
    let mut rhs = vec![0.0; n + 1];
    a[0].iter_mut().for_each(|v| *v = 1.0);
    rhs[0] = 1.0;
    for i in 0..n {
        a[1 + i][i] = -1.0;
    }
    let cones = [ZeroConeT(1), NonnegativeConeT(n)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-14)
        .tol_gap_rel(1e-14)
        .tol_feas(1e-13)
        .max_iter(500)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &vec![0.0; n], &CscMatrix::from(&a), &rhs, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved), "clarabel: {:?}", sol.status);
    (sol.x.clone(), sol.obj_val)
}

#[test]
fn l2svmplus_dual_matches_clarabel_on_six_random_problems() {
    let mut worst: f64 = 0.0;
    for (seed, n, c, rho, weighted) in [
        (1, 20, 1.0, 1.0, false),
        (2, 30, 10.0, 0.1, false),
        (3, 40, 0.1, 10.0, true),
        (4, 50, 1.0, 0.01, false),
        (5, 60, 100.0, 1.0, true),
        (6, 80, 1.0, 100.0, false),
    ] {
        let data = lupi_problem(seed, n, 3, weighted);
        let (gamma, gamma_star) = (0.3, 0.7);
        let params = L2SvmPlusParams {
            c,
            rho,
            kernel: Some(Kernel::Rbf { gamma }),
            kernel_star: Some(Kernel::Rbf { gamma: gamma_star }),
            tol: 1e-12,
            ..Default::default()
        };
        let fit = params.fit(&data).unwrap();
        assert!(fit.reports[0].converged(), "seed {seed}");
        // The dual matrix by another formula: H = (ρI + K̄*D)⁻¹ K̄* (Gaussian elimination; no eigen, no Cholesky).
        let x = dense(&data.features);
        let k_bar = gaussian(&x, gamma) + 1.0;
        let k_star_bar = gaussian(&dense(data.privileged.as_ref().unwrap()), gamma_star) + 1.0;
        let costs: Vec<f64> = (0..n).map(|i| c * data.weights.as_ref().map_or(1.0, |w| w[i])).collect();
        let m = Array2::from_shape_fn((n, n), |(i, j)| k_star_bar[[i, j]] * costs[j] + if i == j { rho } else { 0.0 });
        let h = solve(&m, &k_star_bar);
        let y: Vec<f64> = data.labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
        let q = Array2::from_shape_fn((n, n), |(i, j)| y[i] * y[j] * k_bar[[i, j]] + h[[i, j]]);
        let (alpha, obj) = one_equality_qp_by_clarabel(&q);
        let ours = -fit.reports[0].objective;
        let rel = rel_diff(ours, obj);
        worst = worst.max(rel);
        assert!(rel <= 1e-8, "seed {seed}: dual {ours} vs clarabel {obj} (relative {rel:e})");
        let da = alpha.iter().zip(&fit.alpha[0]).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(da <= 1e-5, "seed {seed}: α differs by {da:e}");
        // Our α in the independent Q gives our objective; the certificate closes.
        let a = ndarray::ArrayView1::from(&fit.alpha[0][..]);
        assert!(rel_diff(0.5 * a.dot(&q.dot(&a)), ours) <= 1e-8, "seed {seed}");
        assert!((a.sum() - 1.0).abs() <= 1e-12 && a.iter().all(|&v| v >= 0.0));
        assert!(fit.reports[0].duality_gap.unwrap() <= 1e-8, "seed {seed}: gap {:?}", fit.reports[0].duality_gap);
        // The decision function is Σ α_i y_i k̄(x_i, x) / t with t = αᵀQα.
        let t = fit.margin[0];
        assert!(rel_diff(t, 2.0 * ours) <= 1e-12);
        let f = fit.model.decision_function(&data.features).unwrap();
        for i in 0..n {
            let want: f64 = (0..n).map(|j| fit.alpha[0][j] * y[j] * k_bar[[i, j]]).sum::<f64>() / t;
            assert!((f[[i, 0]] - want).abs() <= 1e-10 * want.abs().max(1.0), "seed {seed}, row {i}");
        }
    }
    eprintln!("L2-SVM+ vs Clarabel: max relative dual difference {worst:e}");
}

#[test]
fn l2svmplus_through_the_registry_uses_the_privileged_features() {
    let data = lupi_problem(7, 60, 3, false);
    let params = MethodParams::from_json(r#"{"method": "l2svmplus", "rho": 0.5}"#).unwrap();
    let fit = usvm::fit(&params, &data, &FitOptions::default()).unwrap();
    assert!(fit.termination() == usvm::Termination::Converged);
    let acc = fit.model.predict(&data.features).unwrap().iter().zip(data.labels.iter()).filter(|(a, b)| a == b).count();
    assert!(acc as f64 >= 0.7 * 60.0, "training accuracy {acc}/60");
    // Three classes: one-vs-rest.
    let mut three = data.clone();
    three.labels = (0..60).map(|i| (i % 3) as i64).collect();
    let fit = usvm::fit(&params, &three, &FitOptions::default()).unwrap();
    assert_eq!(fit.reports.len(), 3);
}

#[test]
fn l2svmplus_bad_input_is_a_typed_error() {
    let data = lupi_problem(8, 20, 2, false);
    let mut plain = data.clone();
    plain.privileged = None;
    assert!(matches!(L2SvmPlusParams::default().fit(&plain), Err(Error::Empty(w)) if w.contains("privileged")));
    // Through the registry, a dataset without x* is the no-privileged-information mode (tests/registry.rs).
    for (field, value, name) in [("rho", 0.0, "rho"), ("rho", -1.0, "rho"), ("C", 0.0, "C"), ("tol", -1e-3, "tol")] {
        let mut p = MethodParams::default_for("l2svmplus").unwrap();
        p.set(field, &serde_json::json!(value)).unwrap();
        let e = usvm::fit(&p, &data, &FitOptions::default()).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { name: n, .. } if n == name), "{field}={value}: {e}");
    }
    let e = L2SvmPlusParams { rho: f64::NAN, ..Default::default() }.fit(&data).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "rho", .. }), "{e}");
    let e = L2SvmPlusParams { kernel: Some(Kernel::Precomputed), ..Default::default() }.fit(&data).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "kernel", .. }), "{e}");
    let mut one = data.clone();
    one.labels = vec![1; 20].into();
    assert!(matches!(L2SvmPlusParams::default().fit(&one), Err(Error::SingleClass { .. })));
}

/// Two noisy blobs with a few labels flipped far from the boundary.
fn noisy_blobs(seed: u64, n: usize) -> Dataset<'static> {
    let mut r = rng(seed);
    let labels: Vec<i64> = (0..n).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((n, 2), |(i, _)| if labels[i] == 1 { 1.0 } else { -1.0 } + 0.8 * normal(&mut r));
    let flipped: Vec<i64> = labels.iter().enumerate().map(|(i, &l)| if i % 7 == 3 { 1 - l } else { l }).collect();
    Dataset::dense(x, flipped)
}

#[test]
fn rhhq_trace_is_monotone_and_its_objective_is_the_models() {
    for (seed, eta, c) in [(1, 0.5, 1.0), (2, 2.0, 10.0), (3, 10.0, 10.0), (4, 100.0, 1.0), (5, 1.0, 100.0)] {
        let mut data = noisy_blobs(seed, 60);
        if seed == 2 {
            data = data.with_weights((0..60).map(|i| [0.0, 1.0, 2.5][i % 3]).collect());
        }
        let kernel = Kernel::Rbf { gamma: 0.5 };
        let params = RescaledHingeParams { kernel, c, eta, tol: 1e-9, ..Default::default() };
        let fit = params.fit(&data).unwrap();
        let r = &fit.reports[0];
        let trace = &r.objective_trace;
        assert!(trace.len() >= 3, "seed {seed}: {} rounds", trace.len());
        for w in trace.windows(2) {
            assert!(w[1] <= w[0], "seed {seed}: the objective rose from {} to {}", w[0], w[1]);
        }
        assert!(trace[trace.len() - 1] < trace[0]);
        assert_eq!(r.objective, *trace.last().unwrap());
        // The objective recomputed from the model (its own Gram matrix and decision values).
        let y: Vec<f64> = data.labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
        let n = data.n_samples();
        let sv = fit.model.support.clone();
        let mut coef = vec![0.0; n];
        // Map the support vectors back to the training rows (they are distinct rows).
        let x = dense(&data.features);
        let svd = dense(&sv);
        for (k, row) in svd.rows().into_iter().enumerate() {
            let i = (0..n).find(|&i| x.row(i) == row).unwrap();
            coef[i] = fit.model.coef[[0, k]];
        }
        let j = rescaled_hinge_objective(kernel, &data, &y, &coef, fit.model.intercept[0], c, eta).unwrap();
        assert!(rel_diff(j, r.objective) <= 1e-9, "seed {seed}: {j} vs {}", r.objective);
    }
}

#[test]
fn rhhq_with_eta_to_zero_is_the_weighted_hinge_svm() {
    let data = noisy_blobs(9, 50).with_weights((0..50).map(|i| 0.5 + (i % 4) as f64 * 0.5).collect());
    let kernel = Kernel::Rbf { gamma: 0.7 };
    let smo = usvm::solver::smo::SmoSettings { tol: 1e-10, ..RescaledHingeParams::default().smo };
    let rhhq =
        RescaledHingeParams { kernel, c: 3.0, eta: 1e-9, tol: 1e-12, smo, ..Default::default() }.fit(&data).unwrap();
    let svm = KernelSvmParams { kernel, c: 3.0, tol: 1e-10, ..Default::default() }.fit(&data).unwrap();
    let (a, b) =
        (rhhq.model.decision_function(&data.features).unwrap(), svm.model.decision_function(&data.features).unwrap());
    let diff = a.iter().zip(&b).fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
    assert!(diff <= 1e-6, "decision values differ by {diff:e}");
    // J(η → 0) is the weighted hinge-SVM primal, −(LIBSVM's dual objective) at the optimum.
    assert!(rel_diff(rhhq.reports[0].objective, -svm.reports[0].objective) <= 1e-6);
}

#[test]
fn rhhq_weight_is_the_derivative_of_the_loss() {
    for eta in [1e-3, 0.1, 1.0, 3.0, 30.0] {
        assert_eq!(rescaled_hinge(0.0, eta), 0.0);
        assert!((rescaled_hinge(1.0, eta) - 1.0).abs() <= 1e-15);
        for h in [0.0f64, 0.3, 1.0, 2.5, 7.0] {
            let e = 1e-6 * h.max(1.0);
            let fd = (rescaled_hinge(h + e, eta) - rescaled_hinge(h - e, eta)) / (2.0 * e);
            let w = rescaled_hinge_weight(h, eta);
            // Relative 1e-6, plus the round-off of the difference quotient, ε·g(h)/e (g ≈ β where g' ≈ 0).
            let tol = 1e-6 * w.abs() + 2.0 * f64::EPSILON * rescaled_hinge(h + e, eta) / e;
            assert!((fd - w).abs() <= tol, "η {eta}, h {h}: {fd} vs {w}");
        }
        // Bounded by β = 1/(1 − e^{−η}); the hinge as η → 0.
        assert!(rescaled_hinge(1e6, eta) <= 1.0 / -(-eta).exp_m1() * (1.0 + 1e-15));
    }
    assert!((rescaled_hinge(2.5, 1e-9) - 2.5).abs() <= 1e-8);
}

#[test]
fn rhhq_downweights_far_outliers() {
    // One label flipped far on the wrong side: the SVM pays C for it, RSVM-RHHQ (η = 5) ignores it.
    let mut data = noisy_blobs(11, 41);
    let x = match &mut data.features {
        Features::Dense(m) => m,
        Features::Sparse(_) => unreachable!(),
    };
    x.view_mut().row_mut(40).assign(&ndarray::array![6.0, 6.0]);
    data.labels.to_mut()[40] = 0;
    let kernel = Kernel::Linear;
    let fit = RescaledHingeParams { kernel, c: 1.0, eta: 5.0, ..Default::default() }.fit(&data).unwrap();
    let f = fit.model.decision_function(&data.features).unwrap();
    assert!(f[[40, 0]] > 1.0, "the outlier keeps its wrong-side score {}", f[[40, 0]]);
    let svm = KernelSvmParams { kernel, c: 1.0, ..Default::default() }.fit(&data).unwrap();
    assert!((svm.alpha[[0, 40]] - 1.0).abs() < 1e-9, "the SVM bounds the outlier's α at C");
}

#[test]
fn rhhq_bad_parameters_are_typed_errors() {
    let data = noisy_blobs(12, 20);
    for (field, value, name) in
        [("eta", 0.0, "eta"), ("eta", -1.0, "eta"), ("C", -2.0, "C"), ("tol", 0.0, "tol"), ("svm_tol", -1.0, "svm_tol")]
    {
        let mut p = MethodParams::default_for("rsvm-rhhq").unwrap();
        p.set(field, &serde_json::json!(value)).unwrap();
        let e = usvm::fit(&p, &data, &FitOptions::default()).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { name: n, .. } if n == name), "{field}={value}: {e}");
    }
    let mut p = MethodParams::default_for("rsvm-rhhq").unwrap();
    p.set("max_rounds", &serde_json::json!(0)).unwrap();
    assert!(matches!(
        usvm::fit(&p, &data, &FitOptions::default()),
        Err(Error::InvalidParameter { name: "max_rounds", .. })
    ));
    let e = RescaledHingeParams { eta: f64::INFINITY, ..Default::default() }.fit(&data).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "eta", .. }), "{e}");
}
