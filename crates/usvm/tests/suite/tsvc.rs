//! TSVC (Bi & Zhang): Lemma 1 against brute force, the cone programme against an independent
//! formulation and its dual, the alternating rounds against the cone programme and the hinge SVM, and
//! kernel TSVC against the linear case.

use crate::common;

use ndarray::{Array2, array};
use rand_distr::{Distribution, Uniform};
use usvm::kernel::Kernel;
use usvm::solver::conic::{self, NormBound};
use usvm::svm::tsvc::{optimal_perturbation, tsvc_objective};
use usvm::svm::{Delta, TsvcForm, TsvcParams, tsvc_kernel};
use usvm::{Candidate, Dataset, Error, Features, LinearMethod, LinearSvmParams, Model, Termination};

fn linear(fit: &usvm::svm::TsvcFit) -> (Vec<f64>, f64) {
    match &fit.model {
        Model::Linear(m) => (m.coef.dense().row(0).to_vec(), m.intercept[0]),
        _ => panic!("expected a linear model"),
    }
}

/// Noisy two-class data with per-example bounds in [0.1, 0.8].
fn noisy(seed: u64, l: usize, n: usize) -> (Dataset<'static>, Vec<f64>) {
    let mut r = common::rng(seed);
    let (x, labels) = common::blobs(&mut r, l, n, 2.0);
    let u = Uniform::new(0.1, 0.8).unwrap();
    let delta = (0..l).map(|_| u.sample(&mut r)).collect();
    (Dataset::dense(x, labels), delta)
}

/// Separable data: two clusters far apart along the first axis.
fn separable(seed: u64, l: usize) -> (Dataset<'static>, Vec<f64>) {
    let mut r = common::rng(seed);
    let u = Uniform::new(-1.0, 1.0).unwrap();
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, 2), |(i, j)| {
        let s = if labels[i] == 1 { 1.0 } else { -1.0 };
        if j == 0 { s * 3.0 + u.sample(&mut r) } else { 2.0 * u.sample(&mut r) }
    });
    let delta = (0..l).map(|_| 0.2 + 0.3 * (u.sample(&mut r) + 1.0)).collect();
    (Dataset::dense(x, labels), delta)
}

#[test]
fn lemma_1_matches_brute_force_search_over_the_ball() {
    let mut r = common::rng(1);
    let u = Uniform::new(-1.0, 1.0).unwrap();
    for trial in 0..20 {
        let n = 2 + trial % 2;
        let w: Vec<f64> = (0..n).map(|_| 2.0 * u.sample(&mut r)).collect();
        let x: Vec<f64> = (0..n).map(|_| u.sample(&mut r)).collect();
        let (y, b, delta) =
            (if trial % 3 == 0 { -1.0 } else { 1.0 }, 0.3 * u.sample(&mut r), 1.0 + 0.5 * u.sample(&mut r));
        let margin = |d: &[f64]| y * (x.iter().zip(d).zip(&w).map(|((a, e), w)| (a + e) * w).sum::<f64>() + b);
        let best = optimal_perturbation(&w, y, delta);
        let norm: f64 = best.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!((norm - delta).abs() < 1e-12);
        let m_best = margin(&best);
        // Brute force: a fine grid of directions (n = 2) or random directions (n = 3), radii in (0, δ].
        let mut m_brute = f64::NEG_INFINITY;
        for k in 0..20_000 {
            let dir: Vec<f64> = if n == 2 {
                let t = 2.0 * std::f64::consts::PI * k as f64 / 20_000.0;
                vec![t.cos(), t.sin()]
            } else {
                let v: Vec<f64> = (0..3).map(|_| common::normal(&mut r)).collect();
                let s = v.iter().map(|a| a * a).sum::<f64>().sqrt();
                v.iter().map(|a| a / s).collect()
            };
            for rad in [0.25, 0.5, 1.0] {
                let d: Vec<f64> = dir.iter().map(|v| v * rad * delta).collect();
                let m = margin(&d);
                assert!(m <= m_best + 1e-12, "a point of the ball beats Lemma 1: {m} > {m_best}");
                m_brute = m_brute.max(m);
            }
        }
        let tol = if n == 2 { 1e-6 } else { 2e-2 };
        assert!(m_best - m_brute <= tol * m_best.abs().max(1.0), "n={n}: {m_best} vs {m_brute}");
        // The hinge at the best point equals eq. 7's loss term.
        let xf = Features::dense(Array2::from_shape_vec((1, n), x.clone()).unwrap());
        let eq7 = tsvc_objective(&xf, &[y], None, &[delta], 1.0, &w, b) - 0.5 * w.iter().map(|v| v * v).sum::<f64>();
        assert!((eq7 - (1.0 - m_best).max(0.0)).abs() < 1e-12);
    }
    assert_eq!(optimal_perturbation(&[0.0, 0.0], 1.0, 0.5), vec![0.0, 0.0]);
}

/// Eq. 9 as its own cone programme: `min γ t - Σ(1 - γδ_i)α_i`, `‖Σ α_i y_i x_i‖ ≤ t`, `Σ α_i y_i = 0`,
/// `0 ≤ α_i ≤ 1` — an independent formulation (dual variables only) solved by Clarabel.
fn dual_by_clarabel(x: &Features, y: &[f64], delta: &[f64], gamma: f64) -> f64 {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let (l, n) = (x.n_samples(), x.n_features());
    let dim = l + 1; // α, t
    let mut q: Vec<f64> = delta.iter().map(|d| -(1.0 - gamma * d)).collect();
    q.push(gamma);
    let mut a = vec![vec![0.0; dim]; 1 + 2 * l + 1 + n];
    let mut b = vec![0.0; a.len()];
    for i in 0..l {
        a[0][i] = y[i]; // zero cone
        a[1 + i][i] = -1.0; // α ≥ 0
        a[1 + l + i][i] = 1.0; // α ≤ 1
        b[1 + l + i] = 1.0;
        let xi = x.row_dense(i);
        for j in 0..n {
            a[2 + 2 * l + j][i] = -y[i] * xi[j];
        }
    }
    a[1 + 2 * l][l] = -1.0; // cone head t
    let p = CscMatrix::zeros((dim, dim));
    let am = CscMatrix::from(&a);
    let cones = [ZeroConeT(1), NonnegativeConeT(2 * l), SecondOrderConeT(n + 1)];
    let settings = common::clarabel_settings(1e-10);
    let mut solver = DefaultSolver::new(&p, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(matches!(solver.solution.status, SolverStatus::Solved), "{:?}", solver.solution.status);
    solver.solution.obj_val
}

#[test]
fn socp_matches_an_independent_dual_solution_and_its_duality_gap_closes() {
    for (seed, gamma) in [(2, 0.5), (3, 1.0), (4, 2.0)] {
        let (data, delta) = noisy(seed, 40, 3);
        let y = common::labels_pm1(&data);
        let sol = conic::tsvc_socp(&data.features, &y, None, &delta, true, NormBound::Fixed(gamma), 200).unwrap();
        assert!(sol.solved, "{}", sol.status);
        let independent = dual_by_clarabel(&data.features, &y, &delta, gamma);
        let scale = sol.primal.abs().max(1.0);
        assert!((sol.primal + independent).abs() <= 1e-6 * scale, "primal {} vs -dual {}", sol.primal, -independent);
        assert!(sol.duality_gap().abs() <= 1e-6 * scale, "gap {}", sol.duality_gap());
        assert!(sol.dual_residual <= 1e-8, "Σαy = {}", sol.dual_residual);
        let wn = sol.w.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(wn <= gamma * (1.0 + 1e-8), "‖w‖ = {wn} > γ = {gamma}");
    }
}

#[test]
fn socp_for_a_cost_solves_eq_8_at_its_optimal_bound_and_certifies_eq_7() {
    let (data, delta) = noisy(5, 60, 3);
    let y = common::labels_pm1(&data);
    let c = 0.5;
    let joint = conic::tsvc_socp(&data.features, &y, None, &delta, true, NormBound::Cost(c), 200).unwrap();
    assert!(joint.solved);
    assert!(joint.duality_gap().abs() <= 1e-6 * joint.primal.max(1.0), "gap {}", joint.duality_gap());
    let wn = joint.w.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((wn - joint.gamma).abs() <= 1e-6 * joint.gamma, "cone constraint not active: {wn} vs {}", joint.gamma);
    let fixed = conic::tsvc_socp(&data.features, &y, None, &delta, true, NormBound::Fixed(joint.gamma), 200).unwrap();
    assert!(common::rel_diff(fixed.primal, joint.primal) < 1e-6, "{} vs {}", fixed.primal, joint.primal);
    for (u, v) in fixed.w.iter().zip(&joint.w) {
        assert!((u - v).abs() < 1e-5 * wn, "{u} vs {v}");
    }
    // The relaxation is exact here, so no alternating fit can do better on eq. 7.
    let alt = TsvcParams { c, delta: Delta::PerExample(delta.clone()), ..Default::default() }.fit(&data).unwrap();
    let socp = TsvcParams { c, delta: Delta::PerExample(delta), form: TsvcForm::Socp, ..Default::default() }
        .fit(&data)
        .unwrap();
    let (ja, js) = (alt.reports[0].report.objective, socp.reports[0].report.objective);
    assert!(js <= ja * (1.0 + 1e-7), "SOCP {js} above alternating {ja}");
}

#[test]
fn zero_delta_reproduces_the_hinge_svm() {
    let (data, _) = noisy(6, 80, 4);
    let c = 0.3;
    let lambda = 1.0 / (c * 80.0);
    let hinge = LinearSvmParams { method: LinearMethod::Hinge, lambda, ..Default::default() }.fit(&data).unwrap();
    let alt = TsvcParams { c, delta: Delta::Uniform(0.0), ..Default::default() }.fit(&data).unwrap();
    let (w, b) = linear(&alt);
    assert_eq!(w, hinge.model.coef.dense().row(0).to_vec());
    assert_eq!(b, hinge.model.intercept[0]);
    assert!(alt.reports[0].report.converged());
    assert!(common::rel_diff(alt.reports[0].report.objective, hinge.reports[0].objective / lambda) < 1e-12);
    let socp =
        TsvcParams { c, delta: Delta::Uniform(0.0), form: TsvcForm::Socp, ..Default::default() }.fit(&data).unwrap();
    let (ws, bs) = linear(&socp);
    for (u, v) in ws.iter().chain([&bs]).zip(w.iter().chain([&b])) {
        assert!((u - v).abs() < 1e-5 * v.abs().max(1.0), "{u} vs {v}");
    }
    assert!(common::rel_diff(socp.reports[0].report.objective, alt.reports[0].report.objective) < 1e-7);
}

#[test]
fn alternating_and_socp_agree_on_separable_data() {
    for seed in [7, 8] {
        let (data, delta) = separable(seed, 30);
        let params = TsvcParams { c: 10.0, delta: Delta::PerExample(delta), ..Default::default() };
        let alt = params.fit(&data).unwrap();
        let socp = TsvcParams { form: TsvcForm::Socp, ..params }.fit(&data).unwrap();
        let (ra, rs) = (&alt.reports[0], &socp.reports[0]);
        assert!(ra.report.converged() && rs.report.converged());
        assert!(ra.report.rounds >= 2);
        assert!(common::rel_diff(ra.report.objective, rs.report.objective) < 1e-6, "{ra:?} vs {rs:?}");
        let ((wa, ba), (ws, bs)) = (linear(&alt), linear(&socp));
        let scale = wa.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (u, v) in wa.iter().chain([&ba]).zip(ws.iter().chain([&bs])) {
            assert!((u - v).abs() < 1e-4 * scale.max(1.0), "seed {seed}: {wa:?} {ba} vs {ws:?} {bs}");
        }
        assert_eq!(alt.model.predict(&data.features).unwrap(), socp.model.predict(&data.features).unwrap());
    }
}

#[test]
fn alternating_trace_is_monotone_and_stops() {
    let (data, delta) = noisy(9, 150, 5);
    let fit = TsvcParams { c: 1.0, delta: Delta::PerExample(delta.clone()), ..Default::default() }.fit(&data).unwrap();
    let r = &fit.reports[0];
    let trace = &r.report.objective_trace;
    assert!(trace.len() >= 2 && r.report.rounds >= trace.len(), "{r:?}");
    assert!(trace.windows(2).all(|w| w[1] <= w[0]), "not monotone: {trace:?}");
    assert!(r.report.converged());
    let y = common::labels_pm1(&data);
    let (w, b) = linear(&fit);
    let j = tsvc_objective(&data.features, &y, None, &delta, 1.0, &w, b);
    assert!(common::rel_diff(j, r.report.objective) < 1e-12);
    // One round only: the first trace entry is the SVM on the unmoved points, the stopping rule unmet.
    let one = TsvcParams { max_rounds: 1, tol: 0.0, delta: Delta::PerExample(delta), ..Default::default() }
        .fit(&data)
        .unwrap();
    assert!(one.reports[0].report.rounds == 2 && one.reports[0].report.objective_trace[0] == trace[0]);
}

#[test]
fn kernel_svm_dual_matches_the_primal_hinge_svm() {
    let data = common::random_dataset(10, "none", 50, 3);
    let y = common::labels_pm1(&data);
    let c = 0.7;
    let (w_ref, b_ref, _) = common::hinge_svm_by_clarabel(&data.features, &y, None, 1.0 / (c * 50.0));
    let k = Kernel::Linear.gram(&data.features).unwrap();
    let (alpha, b, ok) = tsvc_kernel::svm_step(&k, &y, &vec![c; 50], true, None, 0).unwrap();
    let (alpha_ip, b_ip, ok_ip) = tsvc_kernel::svm_step(&k, &y, &vec![c; 50], false, None, 0).unwrap();
    assert!(ok_ip && b_ip == 0.0 && alpha_ip.len() == 50);
    assert!(ok);
    let x = data.features.to_dense();
    for j in 0..3 {
        let wj: f64 = (0..50).map(|i| alpha[i] * y[i] * x[[i, j]]).sum();
        assert!((wj - w_ref[j]).abs() < 1e-6 * w_ref[j].abs().max(1.0), "{wj} vs {}", w_ref[j]);
    }
    assert!((b - b_ref).abs() < 1e-6 * b_ref.abs().max(1.0), "{b} vs {b_ref}");
}

#[test]
fn kernel_tsvc_with_the_linear_kernel_is_linear_tsvc() {
    let (data, delta) = noisy(11, 60, 3);
    let y = common::labels_pm1(&data);
    let c = 0.5;
    let x = data.features.to_dense();
    // With an intercept the kernel step is SMO, without one Clarabel.
    for fit_intercept in [true, false] {
        let params =
            TsvcParams { c, kernel: Kernel::Linear, fit_intercept, max_rounds: 100, tol: 1e-9, ..Default::default() };
        let k = tsvc_kernel::fit_binary(&x, &y, None, &delta, &params).unwrap();
        let params =
            TsvcParams { c, delta: Delta::PerExample(delta.clone()), tol: 1e-9, fit_intercept, ..Default::default() };
        let lin = params.fit(&data).unwrap();
        let (w, b) = linear(&lin);
        let wk: Vec<f64> = (0..3).map(|j| (0..60).map(|i| k.coef[i] * k.points[[i, j]]).sum()).collect();
        for (u, v) in wk.iter().chain([&k.intercept]).zip(w.iter().chain([&b])) {
            assert!((u - v).abs() < 1e-4 * v.abs().max(1.0), "{wk:?} {} vs {w:?} {b}", k.intercept);
        }
        assert!(common::rel_diff(k.report.report.objective, lin.reports[0].report.objective) < 1e-6);
    }
}

#[test]
fn kernel_tsvc_trace_is_monotone_for_rbf_and_polynomial() {
    // Points around a circle of radius 3, labelled inside / outside, with bounds.
    let mut r = common::rng(12);
    let u = Uniform::new(-5.0, 5.0).unwrap();
    let x = Array2::from_shape_fn((60, 2), |_| u.sample(&mut r));
    let labels: Vec<i64> = x.rows().into_iter().map(|p| i64::from(p[0] * p[0] + p[1] * p[1] > 9.0)).collect();
    let delta: Vec<f64> = (0..60).map(|i| 0.1 + 0.7 * ((i * 37) % 60) as f64 / 60.0).collect();
    let data = Dataset::dense(x, labels);
    for kernel in [Kernel::Rbf { gamma: 0.3 }, Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 }] {
        let params = TsvcParams { c: 1.0, kernel, delta: Delta::PerExample(delta.clone()), ..Default::default() };
        let fit = params.fit(&data).unwrap();
        let rep = &fit.reports[0];
        let trace = &rep.report.objective_trace;
        assert!(trace.windows(2).all(|w| w[1] <= w[0]), "{kernel:?} not monotone: {trace:?}");
        assert!(trace.len() >= 2, "{kernel:?}: no accepted round {rep:?}");
        assert!(trace.last().unwrap() < &trace[0]);
        let acc =
            fit.model.predict(&data.features).unwrap().iter().zip(data.labels.iter()).filter(|(a, b)| a == b).count();
        assert!(acc >= 54, "{kernel:?}: {acc}/60");
        // δ = 0: one SVM, and the rounds stop at once.
        let zero = TsvcParams { delta: Delta::Uniform(0.0), ..params.clone() }.fit(&data).unwrap();
        assert_eq!(zero.reports[0].report.objective_trace.len(), 1);
        // An SMO limit too small for the SVM steps: not converged, said in the termination.
        let short = TsvcParams { svm_max_iter: 2, ..params }.fit(&data).unwrap();
        assert_eq!(short.reports[0].report.termination, Termination::MaxIterations, "{kernel:?}");
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let data = Dataset::dense(array![[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], vec![0, 1, 1]);
    let bad = |p: TsvcParams| p.fit(&data).unwrap_err();
    // Bounds that move a point beyond the floating-point range (found by the fit fuzz target).
    for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 1.0 }] {
        let err = bad(TsvcParams { delta: Delta::Uniform(1e300), kernel, ..Default::default() });
        assert!(matches!(err, Error::InvalidParameter { name: "delta", .. }), "{err}");
    }
    assert!(matches!(bad(TsvcParams { c: 0.0, ..Default::default() }), Error::InvalidParameter { name: "C", .. }));
    assert!(matches!(
        bad(TsvcParams { delta: Delta::Uniform(-0.1), ..Default::default() }),
        Error::InvalidParameter { name: "delta", .. }
    ));
    assert!(matches!(
        bad(TsvcParams { delta: Delta::PerExample(vec![0.1, f64::NAN, 0.0]), ..Default::default() }),
        Error::InvalidParameter { name: "delta", .. }
    ));
    assert!(matches!(
        bad(TsvcParams { delta: Delta::PerExample(vec![0.1]), ..Default::default() }),
        Error::DimensionMismatch { what: "delta", expected: 3, found: 1 }
    ));
    assert!(matches!(
        bad(TsvcParams { form: TsvcForm::Socp, kernel: Kernel::Rbf { gamma: 1.0 }, ..Default::default() }),
        Error::InvalidParameter { name: "form", .. }
    ));
    assert!(matches!(
        bad(TsvcParams { norm_bound: Some(1.0), ..Default::default() }),
        Error::InvalidParameter { name: "norm_bound", .. }
    ));
    assert!(matches!(
        bad(TsvcParams { kernel: Kernel::Rbf { gamma: -1.0 }, ..Default::default() }),
        Error::InvalidParameter { name: "gamma", .. }
    ));
    let single = Dataset::dense(array![[0.0], [1.0]], vec![1, 1]);
    assert!(matches!(TsvcParams::default().fit(&single), Err(Error::SingleClass { .. })));
    let nan = Dataset::dense(array![[0.0], [f64::NAN]], vec![0, 1]);
    assert!(matches!(TsvcParams::default().fit(&nan), Err(Error::NonFinite { .. })));
}

#[test]
fn one_vs_rest_gives_one_report_per_class() {
    let x = array![[0.0, 0.0], [0.2, 0.1], [3.0, 0.0], [3.1, 0.3], [0.0, 3.0], [0.2, 3.2]];
    let data = Dataset::dense(x, vec![0, 0, 1, 1, 2, 2]);
    for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 0.5 }] {
        let fit = TsvcParams { c: 10.0, kernel, delta: Delta::Uniform(0.1), ..Default::default() }.fit(&data).unwrap();
        assert_eq!(fit.reports.len(), 3);
        assert_eq!(fit.model.predict(&data.features).unwrap(), *data.labels);
    }
}

#[test]
fn socp_for_a_cost_searches_the_bound_when_the_relaxation_is_loose() {
    // Overlapping classes, large C·Σδ: the relaxation pushes γ above ‖w‖ and is only a lower bound.
    let mut r = common::rng(13);
    let (x, labels) = common::blobs(&mut r, 200, 5, 0.5);
    let data = Dataset::dense(x, labels);
    let u = Uniform::new(0.1, 0.8).unwrap();
    let delta: Vec<f64> = (0..200).map(|_| u.sample(&mut r)).collect();
    let params = TsvcParams { c: 10.0, delta: Delta::PerExample(delta), tol: 1e-9, ..Default::default() };
    let alt = params.fit(&data).unwrap();
    let socp = TsvcParams { form: TsvcForm::Socp, ..params }.fit(&data).unwrap();
    let r = &socp.reports[0];
    let (lower, value) = (r.lower_bound.unwrap(), r.report.objective);
    let ja = alt.reports[0].report.objective;
    // Not certified: eq. 7's minimiser need not solve eq. 8 for any γ; the bound holds for every method.
    assert_eq!(r.report.termination, Termination::NotCertified);
    assert!(lower <= ja, "lower bound {lower} above the alternating objective {ja}");
    // The search over γ and the alternating rounds both ran; the lower objective was returned.
    let f = r.report.fallback.expect("the cone form for C compares with the alternating rounds");
    assert_eq!(f.alternating_objective, ja);
    assert!(lower < f.relaxation_objective, "the relaxation was exact: {r:?}");
    assert_eq!(value, ja.min(f.relaxation_objective));
    let taken = if ja < f.relaxation_objective { Candidate::Alternating } else { Candidate::Relaxation };
    assert_eq!(f.taken, taken);
    match taken {
        Candidate::Alternating => {
            assert_eq!(linear(&socp), linear(&alt));
            assert_eq!(r.report.objective_trace, alt.reports[0].report.objective_trace);
            assert_eq!((r.duality_gap, r.report.norm_bound), (None, None));
        }
        Candidate::Relaxation => {
            assert!(r.report.rounds > 1 + 12, "{r:?}");
            assert!(r.duality_gap.unwrap().abs() <= 1e-6 * value, "{r:?}");
        }
    }
}

#[test]
fn socp_with_a_fixed_norm_bound_solves_eq_8_alone() {
    let (data, delta) = noisy(5, 60, 3);
    let params = TsvcParams { delta: Delta::PerExample(delta), form: TsvcForm::Socp, ..Default::default() };
    let fit = TsvcParams { norm_bound: Some(0.5), ..params }.fit(&data).unwrap();
    let r = &fit.reports[0].report;
    assert_eq!((r.fallback, r.rounds, r.norm_bound), (None, 1, Some(0.5)));
}
