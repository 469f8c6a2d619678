//! Dual coordinate descent for the plain hinge and squared hinge (issue #17): the same optimum as the
//! Newton route and as an independent conic solver, a small duality gap, determinism, dense = sparse,
//! weights, and the squared hinge against the primal Newton solver.

use crate::common;

use usvm::besvm::{SquaredHingeSolver, SquaredHingeSvmParams};
use usvm::covariance::NoCovariance;
use usvm::loss::{ExpectedHinge, SquaredHinge};
use usvm::objective::{Objective, Problem};
use usvm::solver::dual_cd::{self, DualCdSettings, DualLoss};
use usvm::solver::exact::{self, ExactSettings};
use usvm::solver::hinge_polish;
use usvm::{CsrMatrix, Dataset, Features, LinearMethod, LinearSvmParams};

fn hinge(lambda: f64) -> LinearSvmParams {
    LinearSvmParams { method: LinearMethod::Hinge, lambda, ..Default::default() }
}

fn theta(fit: &usvm::LinearFit) -> Vec<f64> {
    let mut t = fit.model.coef.dense().row(0).to_vec();
    t.push(fit.model.intercept[0]);
    t
}

fn hinge_objective(data: &Dataset, lambda: f64, theta: &[f64]) -> f64 {
    let y = common::labels_pm1(data);
    let p = Problem { features: &data.features, y: &y, weights: data.weights.as_deref(), covariances: &NoCovariance };
    Objective::new(p, ExpectedHinge, lambda).value(theta)
}

/// The route the Σ = 0 hinge took before dual CD: Newton with a smoothing continuation to a floor of 1e-3,
/// the active-set polish, and the continuation to the end when the polish does not settle.
fn newton_route(data: &Dataset, lambda: f64) -> (Vec<f64>, f64) {
    let y = common::labels_pm1(data);
    let c = data.weights.as_deref();
    let p = Problem { features: &data.features, y: &y, weights: c, covariances: &NoCovariance };
    let objective = Objective::new(p, ExpectedHinge, lambda);
    let coarse = ExactSettings { tol: 1e-4, sigma_floor: 1e-3, ..ExactSettings::default() };
    let (t, report) = exact::solve(&objective, vec![0.0; objective.dim()], &coarse, Default::default());
    if let Some(p) = hinge_polish::polish(&data.features, &y, c, lambda, true, &t, 3e-3) {
        let v = objective.value(&p.theta);
        if v <= report.objective * (1.0 + 1e-12) {
            return (p.theta, v);
        }
    }
    let (t, r) = exact::solve(&objective, t, &ExactSettings::default(), Default::default());
    (t, r.objective)
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    let scale = b.iter().map(|v| v.abs()).fold(1.0, f64::max);
    for (u, v) in a.iter().zip(b) {
        assert!((u - v).abs() <= tol * scale, "{what}: {a:?} vs {b:?}");
    }
}

fn to_sparse(x: &Features<'static>) -> Features<'static> {
    let dense = x.to_dense();
    let rows: Vec<Vec<(usize, f64)>> = dense
        .rows()
        .into_iter()
        .map(|r| r.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, &v)| (j, v)).collect())
        .collect();
    Features::Sparse(CsrMatrix::from_rows(dense.ncols(), &rows).unwrap())
}

/// A sparse problem with more features than examples (text-like: 8 non-zeros per row among `n`).
fn sparse_dataset(seed: u64, l: usize, n: usize) -> Dataset<'static> {
    use rand::RngExt;
    let mut r = common::rng(seed);
    let truth: Vec<f64> = (0..n).map(|_| common::normal(&mut r)).collect();
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for _ in 0..l {
        let mut cols: Vec<usize> = (0..8).map(|_| r.random_range(0..n)).collect();
        cols.sort_unstable();
        cols.dedup();
        let row: Vec<(usize, f64)> = cols.into_iter().map(|j| (j, r.random_range(0.1..1.0))).collect();
        let score: f64 = row.iter().map(|&(j, v)| truth[j] * v).sum();
        labels.push(i64::from((score > 0.0) != (r.random_range(0.0..1.0) < 0.15)));
        rows.push(row);
    }
    Dataset {
        features: Features::Sparse(CsrMatrix::from_rows(n, &rows).unwrap()),
        labels: labels.into(),
        weights: None,
        covariances: usvm::Covariances::None,
        privileged: None,
    }
}

#[test]
fn dual_cd_equals_the_newton_route_on_zero_covariance_problems() {
    let toy = usvm::io::read_libsvm(
        std::io::BufReader::new(std::fs::File::open("tests/data/toy.svm").unwrap()),
        "toy.svm",
        None,
    )
    .unwrap();
    let mut cases = vec![(toy, 0.1), (common::random_dataset(40, "none", 200, 5), 1e-2)];
    cases.push((common::random_dataset(41, "none", 500, 20), 1e-3));
    cases.push((common::random_dataset(42, "none", 80, 3), 1.0));
    cases.push((common::random_dataset(43, "none", 1000, 10), 1e-5));
    for (k, (data, lambda)) in cases.iter().enumerate() {
        let fit = hinge(*lambda).fit(data).unwrap();
        let r = &fit.reports[0];
        let ours = hinge_objective(data, *lambda, &theta(&fit));
        // The report's objective is the certificate's own evaluation of J at θ (another summation order).
        assert!(common::rel_diff(ours, r.objective) <= 1e-14, "case {k}: {ours} vs {}", r.objective);
        let (newton_theta, newton) = newton_route(data, *lambda);
        assert!(r.converged(), "case {k}: {r:?}");
        // Ours is the exact optimum: never above Newton's, and Newton's is within its floor of it.
        assert!(ours <= newton * (1.0 + 1e-12), "case {k}: dual CD {ours} vs Newton {newton}");
        assert!(common::rel_diff(ours, newton) <= 1e-9, "case {k}: dual CD {ours} vs Newton {newton}");
        assert_close(&theta(&fit), &newton_theta, 1e-4, &format!("case {k}"));
        assert!(r.duality_gap.unwrap() <= 1e-10, "case {k}: {r:?}");
    }
}

#[test]
fn dual_cd_matches_clarabel_on_small_problems() {
    for (seed, l, n, lambda, weighted) in
        [(1, 60, 4, 0.1, false), (2, 60, 4, 0.01, true), (3, 90, 6, 1e-3, false), (4, 120, 2, 1e-4, true)]
    {
        let mut data = common::random_dataset(seed, "none", l, n);
        if weighted {
            data.weights = Some((0..l).map(|i| [0.25, 1.0, 0.0, 2.5][i % 4]).collect());
        }
        let y = common::labels_pm1(&data);
        let (w, b, reference) = common::hinge_svm_by_clarabel(&data.features, &y, data.weights.as_deref(), lambda);
        let fit = hinge(lambda).fit(&data).unwrap();
        let ours = fit.reports[0].objective;
        assert!(ours <= reference + 1e-10 * reference, "seed {seed}: {ours} vs Clarabel {reference}");
        assert!(common::rel_diff(ours, reference) <= 1e-8, "seed {seed}: {ours} vs Clarabel {reference}");
        let mut clarabel = w;
        clarabel.push(b);
        assert_close(&theta(&fit), &clarabel, 1e-4, &format!("seed {seed}"));
    }
    // More features than examples, sparse rows.
    let data = sparse_dataset(5, 60, 300);
    let y = common::labels_pm1(&data);
    let (_, _, reference) = common::hinge_svm_by_clarabel(&data.features, &y, None, 0.01);
    let ours = hinge(0.01).fit(&data).unwrap().reports[0].objective;
    assert!(common::rel_diff(ours, reference) <= 1e-8, "sparse: {ours} vs Clarabel {reference}");
}

#[test]
fn the_duality_gap_certifies_the_solution_with_and_without_the_exact_finish() {
    let data = common::random_dataset(6, "none", 400, 8);
    let y = common::labels_pm1(&data);
    let reference = hinge(1e-3).fit(&data).unwrap().reports[0].objective;
    for polish in [true, false] {
        for (lambda, fit_intercept) in [(1e-3, true), (1e-2, false)] {
            let settings = DualCdSettings { polish, tol: 1e-10, ..Default::default() };
            let r = dual_cd::solve(&data.features, &y, None, lambda, DualLoss::Hinge, fit_intercept, &settings);
            assert!(r.converged && r.relative_gap() <= 1e-10, "polish {polish}: {r:?}");
            assert!(r.dual <= r.primal * (1.0 + 1e-12));
            let p = Problem { features: &data.features, y: &y, weights: None, covariances: &NoCovariance };
            let objective = Objective { fit_intercept, ..Objective::new(p, ExpectedHinge, lambda) };
            assert!(common::rel_diff(objective.value(&r.theta), r.primal) <= 1e-12);
            if fit_intercept {
                assert!(common::rel_diff(r.primal, reference) <= 1e-9, "{} vs {reference}", r.primal);
            }
        }
    }
}

/// Shrinking leaves examples out of the epochs, and a subproblem solved on the shrunk set is checked over
/// every example from a certificate's margins (no epoch over every example): the same optimum as without
/// shrinking, both losses, with and without intercept, dense and sparse rows, without the exact finish.
#[test]
fn shrinking_and_its_checks_at_the_certificates_reach_the_optimum_without_shrinking() {
    let dense = common::random_dataset(12, "none", 600, 10);
    let sparse = sparse_dataset(13, 500, 2000);
    for data in [&dense, &sparse] {
        let y = common::labels_pm1(data);
        for loss in [DualLoss::Hinge, DualLoss::SquaredHinge] {
            for (lambda, fit_intercept) in [(1e-2, true), (1e-3, true), (1e-2, false)] {
                let run = |shrinking| {
                    let settings = DualCdSettings { shrinking, polish: false, tol: 1e-10, ..Default::default() };
                    dual_cd::solve(&data.features, &y, None, lambda, loss, fit_intercept, &settings)
                };
                let (shrunk, plain) = (run(true), run(false));
                let what = format!("{loss:?} λ {lambda} intercept {fit_intercept}");
                assert!(shrunk.converged && shrunk.relative_gap() <= 1e-10, "{what}: {shrunk:?}");
                assert!(plain.converged && plain.relative_gap() <= 1e-10, "{what}: {plain:?}");
                assert!(
                    common::rel_diff(shrunk.primal, plain.primal) <= 2e-10,
                    "{what}: {} vs {}",
                    shrunk.primal,
                    plain.primal
                );
            }
        }
    }
}

#[test]
fn same_seed_same_bits_and_other_seeds_the_same_optimum() {
    let data = common::random_dataset(7, "none", 300, 6);
    let y = common::labels_pm1(&data);
    let run = |seed, polish| {
        let settings = DualCdSettings { seed, polish, ..Default::default() };
        dual_cd::solve(&data.features, &y, None, 1e-3, DualLoss::Hinge, true, &settings)
    };
    for polish in [true, false] {
        let (a, b) = (run(3, polish), run(3, polish));
        assert_eq!(a, b);
        let c = run(4, polish);
        assert!(common::rel_diff(a.primal, c.primal) <= 1e-9, "{} vs {}", a.primal, c.primal);
    }
    let (a, b) = (hinge(1e-3).fit(&data).unwrap(), hinge(1e-3).fit(&data).unwrap());
    assert_eq!(a.model, b.model);
}

#[test]
fn sparse_and_dense_rows_give_the_same_answer() {
    let data = common::random_dataset(8, "none", 300, 12);
    let sparse = Dataset { features: to_sparse(&data.features), ..data.clone() };
    for lambda in [1e-2, 1e-4] {
        let (a, b) = (hinge(lambda).fit(&data).unwrap(), hinge(lambda).fit(&sparse).unwrap());
        assert!(common::rel_diff(a.reports[0].objective, b.reports[0].objective) <= 1e-12);
        assert_close(&theta(&a), &theta(&b), 1e-8, "dense vs sparse");
    }
    let y = common::labels_pm1(&data);
    for loss in [DualLoss::Hinge, DualLoss::SquaredHinge] {
        let settings = DualCdSettings::default();
        let a = dual_cd::solve(&data.features, &y, None, 1e-3, loss, true, &settings);
        let b = dual_cd::solve(&sparse.features, &y, None, 1e-3, loss, true, &settings);
        assert!(common::rel_diff(a.primal, b.primal) <= 1e-9, "{loss:?}: {} vs {}", a.primal, b.primal);
    }
}

#[test]
fn weights_scale_and_remove_examples() {
    let data = common::random_dataset(9, "none", 120, 5);
    // Weight 2 on every example equals the same problem with λ halved... per unit of loss:
    // λ/2‖w‖² + (1/ℓ)Σ 2 L = 2 (λ/4‖w‖² + (1/ℓ)Σ L): same minimiser as weights 1 with λ/2.
    let doubled = data.clone().with_weights(vec![2.0; 120]);
    let a = hinge(0.02).fit(&doubled).unwrap();
    let b = hinge(0.01).fit(&data).unwrap();
    assert_close(&theta(&a), &theta(&b), 1e-8, "weights 2");
    // Zero weights remove examples (λ rescaled for the mean over the kept ones).
    let mut w = vec![1.0; 120];
    let dropped = [3, 10, 11, 50, 99];
    for &i in &dropped {
        w[i] = 0.0;
    }
    let keep: Vec<usize> = (0..120).filter(|i| !dropped.contains(i)).collect();
    let a = hinge(0.01).fit(&data.clone().with_weights(w)).unwrap();
    let b = hinge(0.01 * 120.0 / 115.0).fit(&data.select(&keep)).unwrap();
    assert!(a.reports[0].converged(), "{:?}", a.reports[0]);
    assert_close(&theta(&a), &theta(&b), 1e-8, "zero weights");
    // Integer weights equal repeated examples.
    let reps: Vec<f64> = (0..120).map(|i| (1 + i % 3) as f64).collect();
    let idx: Vec<usize> = (0..120).flat_map(|i| std::iter::repeat_n(i, 1 + i % 3)).collect();
    let a = hinge(0.01).fit(&data.clone().with_weights(reps)).unwrap();
    let b = hinge(0.01 * 120.0 / idx.len() as f64).fit(&data.select(&idx)).unwrap();
    assert_close(&theta(&a), &theta(&b), 1e-7, "integer weights");
}

#[test]
fn squared_hinge_equals_the_primal_newton_solution() {
    for (seed, l, n, c, fit_intercept, weighted) in
        [(10, 200, 6, 1.0, true, false), (11, 300, 10, 0.05, false, true), (12, 150, 4, 20.0, true, true)]
    {
        let mut data = common::random_dataset(seed, "none", l, n);
        if weighted {
            data.weights = Some((0..l).map(|i| [1.0, 0.5, 0.0, 3.0][i % 4]).collect());
        }
        let params = SquaredHingeSvmParams { c, fit_intercept, ..Default::default() };
        let newton = params.fit(&data).unwrap();
        let dual = SquaredHingeSvmParams { solver: SquaredHingeSolver::DualCd, ..params }.fit(&data).unwrap();
        let (a, b) = (&newton.reports[0], &dual.reports[0]);
        assert!(a.converged() && b.converged(), "{a:?} {b:?}");
        assert!(common::rel_diff(a.objective, b.objective) <= 1e-12, "{a:?} {b:?}");
        assert!(b.duality_gap.unwrap() <= 1e-8, "{b:?}");
        assert_close(
            dual.model.coef.dense().as_slice().unwrap(),
            newton.model.coef.dense().as_slice().unwrap(),
            1e-8,
            "coef",
        );
        // Dual CD alone, to its gap tolerance, against the same optimum.
        let y = common::labels_pm1(&data);
        let lambda = params.lambda(l);
        let settings = DualCdSettings { tol: 1e-12, ..Default::default() };
        let c_w = data.weights.as_deref();
        let r = dual_cd::solve(&data.features, &y, c_w, lambda, DualLoss::SquaredHinge, fit_intercept, &settings);
        assert!(r.converged && r.relative_gap() <= 1e-12, "{r:?}");
        let p = Problem { features: &data.features, y: &y, weights: c_w, covariances: &NoCovariance };
        let objective = Objective { fit_intercept, ..Objective::new(p, SquaredHinge, lambda) };
        assert!(common::rel_diff(objective.value(&r.theta), a.objective) <= 1e-11, "{r:?} vs {a:?}");
    }
}

#[test]
fn gsu_without_covariances_and_sampling_use_the_dual_method() {
    let data = common::random_dataset(13, "none", 150, 4);
    let gsu = LinearSvmParams { lambda: 0.01, ..Default::default() }.fit(&data).unwrap();
    let plain = hinge(0.01).fit(&data).unwrap();
    assert_eq!(gsu.model, plain.model);
    assert!(gsu.reports[0].duality_gap.is_some_and(|g| g <= 1e-10), "{:?}", gsu.reports[0]);
}

/// A dense problem with many more examples than features and a large `C`: the plain hinge goes to the
/// primal route (Newton on the smoothed hinge, then dual CD from its multipliers).
fn tall_dataset(seed: u64) -> Dataset<'static> {
    let mut r = common::rng(seed);
    let (x, labels) = common::blobs(&mut r, 3000, 6, 0.3);
    Dataset::dense(x, labels)
}

#[test]
fn the_primal_route_reaches_the_optimum_of_dual_cd_and_clarabel() {
    let data = tall_dataset(11);
    let y = common::labels_pm1(&data);
    for lambda in [1e-4, 1e-5] {
        let fit = hinge(lambda).fit(&data).unwrap();
        let r = &fit.reports[0];
        assert!(r.converged() && r.duality_gap.unwrap() <= 1e-10, "λ = {lambda}: {r:?}");
        // Coordinate descent alone, forced (the fit takes the primal route here).
        let settings = DualCdSettings { tol: 1e-10, ..Default::default() };
        let cd = dual_cd::solve(&data.features, &y, None, lambda, DualLoss::Hinge, true, &settings);
        assert!(cd.converged, "λ = {lambda}: {cd:?}");
        assert!(
            common::rel_diff(r.objective, cd.primal) <= 1e-9,
            "λ = {lambda}: {} vs dual CD {}",
            r.objective,
            cd.primal
        );
        let (_, _, reference) = common::hinge_svm_by_clarabel(&data.features, &y, None, lambda);
        assert!(r.objective <= reference * (1.0 + 1e-10), "λ = {lambda}: {} vs Clarabel {reference}", r.objective);
        assert!(
            common::rel_diff(r.objective, reference) <= 1e-8,
            "λ = {lambda}: {} vs Clarabel {reference}",
            r.objective
        );
    }
}

#[test]
fn a_looser_gap_tolerance_stops_early_with_a_valid_certificate() {
    use usvm::svm::Solver;
    let data = tall_dataset(12);
    // λ = 1e-2: dual coordinate descent; λ = 1e-5: the primal route.
    for lambda in [1e-2, 1e-5] {
        let optimum = hinge(lambda).fit(&data).unwrap().reports[0].objective;
        for gap_tol in [1e-2, 1e-4, 1e-6] {
            let solver = Solver::Exact(ExactSettings { gap_tol, ..Default::default() });
            let fit = LinearSvmParams { solver, ..hinge(lambda) }.fit(&data).unwrap();
            let r = &fit.reports[0];
            let gap = r.duality_gap.unwrap();
            assert!(r.converged() && gap <= gap_tol, "λ = {lambda}, gap_tol {gap_tol}: {r:?}");
            let value = hinge_objective(&data, lambda, &theta(&fit));
            assert!(common::rel_diff(r.objective, value) <= 1e-14, "{} vs {value}", r.objective);
            // The certificate: J - J* ≤ J - D ≤ gap·J.
            assert!(
                r.objective >= optimum * (1.0 - 1e-12),
                "λ = {lambda}: {} below the optimum {optimum}",
                r.objective
            );
            assert!(r.objective - optimum <= gap * r.objective + 1e-15, "λ = {lambda}, gap_tol {gap_tol}: {r:?}");
        }
    }
    for bad in [0.0, 1.0, -1e-3, f64::NAN] {
        let solver = Solver::Exact(ExactSettings { gap_tol: bad, ..Default::default() });
        let err = LinearSvmParams { solver, ..hinge(1e-2) }.fit(&data).unwrap_err();
        assert!(err.to_string().contains("gap_tol"), "{err}");
    }
}

#[test]
fn the_qp_route_certifies_loose_gaps_at_full_steps_with_valid_certificates() {
    use usvm::svm::Solver;
    // 600 × 100 overlapping classes at λ = 1e-6: fewer examples than 10·(n + 1), and a multiplier needs
    // ~3·10⁵ coordinate steps to cross its box, so the fit starts on the QP route, which from a gap of
    // 1e-2 also certifies at each affine direction's full step.
    let mut rng = common::rng(29);
    let (x, labels) = common::overlapping_classes(&mut rng, 600, 100);
    let data = Dataset::dense(x, labels);
    let lambda = 1e-6;
    let optimum = hinge(lambda).fit(&data).unwrap().reports[0].objective;
    // The default fit (the same route, to a gap of 1e-10) against an independent solver.
    let (_, _, reference) = common::hinge_svm_by_clarabel(&data.features, &common::labels_pm1(&data), None, lambda);
    assert!(common::rel_diff(optimum, reference) <= 1e-7, "{optimum} vs Clarabel {reference}");
    for gap_tol in [0.45, 1e-2, 1e-4] {
        let solver = Solver::Exact(ExactSettings { gap_tol, ..Default::default() });
        let fit = LinearSvmParams { solver, ..hinge(lambda) }.fit(&data).unwrap();
        let r = &fit.reports[0];
        assert_eq!(r.routes, [usvm::Route::Qp], "gap_tol {gap_tol}");
        let gap = r.duality_gap.unwrap();
        assert!(r.converged() && gap <= gap_tol, "gap_tol {gap_tol}: {r:?}");
        let value = hinge_objective(&data, lambda, &theta(&fit));
        assert!(common::rel_diff(r.objective, value) <= 1e-14, "{} vs {value}", r.objective);
        assert!(r.objective >= optimum * (1.0 - 1e-12), "{} below the optimum {optimum}", r.objective);
        assert!(r.objective - optimum <= gap * r.objective + 1e-15, "gap_tol {gap_tol}: {r:?}");
    }
}

#[test]
fn the_smoothed_newton_certificate_brackets_the_optimum() {
    use usvm::solver::hinge_newton;
    let data = tall_dataset(13);
    let y = common::labels_pm1(&data);
    let lambda = 1e-4;
    let optimum = hinge(lambda).fit(&data).unwrap().reports[0].objective;
    let p = Problem { features: &data.features, y: &y, weights: None, covariances: &NoCovariance };
    let objective = Objective::new(p, ExpectedHinge, lambda);
    for tol in [1e-1, 1e-2, 1e-3] {
        let r = hinge_newton::solve(&objective, tol, 1000, None, Default::default());
        assert!(r.dual <= optimum * (1.0 + 1e-12) && optimum <= r.primal * (1.0 + 1e-12), "tol {tol}: {r:?}");
        assert_eq!(r.primal, objective.value(&r.theta));
        let dual = dual_cd::dual_value(&data.features, &y, None, lambda, DualLoss::Hinge, true, &r.beta);
        assert_eq!(dual, r.dual);
        if r.converged {
            assert!(r.relative_gap() <= tol);
        }
    }
    // A warm start from its multipliers reaches the cold optimum.
    let r = hinge_newton::solve(&objective, 1e-3, 1000, None, Default::default());
    let settings = DualCdSettings { tol: 1e-10, ..Default::default() };
    let start = dual_cd::Start { beta: &r.beta, bias: r.theta[data.n_features()] };
    let warm = dual_cd::solve_monitored(
        &data.features,
        &y,
        None,
        lambda,
        DualLoss::Hinge,
        true,
        &settings,
        Some(start),
        Default::default(),
    );
    assert!(warm.converged && common::rel_diff(warm.primal, optimum) <= 1e-9, "{warm:?} vs {optimum}");
}

#[test]
fn the_reported_gradient_norms_equal_a_direct_evaluation() {
    // The solver reads only the rows whose multiplier and loss slope disagree; the reference sums every
    // row: `hinge_subgradient_norm` for the hinge, the objective's gradient for the squared hinge.
    let dense = common::random_dataset(61, "none", 300, 6);
    let weighted = Dataset { weights: Some((0..300).map(|i| 0.5 + (i % 4) as f64 * 0.5).collect()), ..dense.clone() };
    let wide = sparse_dataset(62, 300, 2000);
    let sparse = Dataset { features: to_sparse(&dense.features), ..dense.clone() };
    for (name, data) in [("dense", &dense), ("weighted", &weighted), ("sparse", &sparse), ("wide", &wide)] {
        let y = common::labels_pm1(data);
        let (x, c) = (&data.features, data.weights.as_deref());
        for (loss, fit_intercept, tol) in [
            (DualLoss::Hinge, true, 1e-2),
            (DualLoss::Hinge, true, 1e-8),
            (DualLoss::Hinge, false, 1e-3),
            (DualLoss::SquaredHinge, true, 1e-2),
            (DualLoss::SquaredHinge, false, 1e-8),
        ] {
            let lambda = 1e-2;
            let settings = DualCdSettings { tol, polish: false, ..DualCdSettings::default() };
            let fit = dual_cd::solve(x, &y, c, lambda, loss, fit_intercept, &settings);
            let reference = |theta: &[f64]| match loss {
                DualLoss::Hinge => dual_cd::hinge_subgradient_norm(x, &y, c, lambda, fit_intercept, theta),
                DualLoss::SquaredHinge => {
                    let p = Problem { features: x, y: &y, weights: c, covariances: &NoCovariance };
                    let o = Objective { fit_intercept, ..Objective::new(p, SquaredHinge, lambda) };
                    o.gradient(theta).iter().map(|g| g * g).sum::<f64>().sqrt()
                }
            };
            let what = format!("{name}, {loss:?}, intercept {fit_intercept}, tol {tol}");
            let initial = reference(&vec![0.0; fit.theta.len()]);
            assert!(common::rel_diff(fit.initial_gradient_norm, initial) <= 1e-12, "{what}: {fit:?} vs {initial}");
            let at_theta = reference(&fit.theta);
            assert!(
                (fit.gradient_norm - at_theta).abs() <= 1e-10 * initial,
                "{what}: {} vs {at_theta}",
                fit.gradient_norm
            );
        }
    }
}

/// The rows with a constant column `B` appended last (as LIBLINEAR's `-B` does) or first.
fn with_constant_column(x: &Features<'static>, last: bool, b: f64) -> Features<'static> {
    let dense = x.to_dense();
    let column = ndarray::Array2::from_elem((dense.nrows(), 1), b);
    let parts = if last { [dense.view(), column.view()] } else { [column.view(), dense.view()] };
    Features::dense(ndarray::concatenate(ndarray::Axis(1), &parts).unwrap())
}

/// Without intercept, a constant column `B` is a bias regularised by `b²/(2B²)`, which dual CD solves by the
/// method of multipliers where `B²` outweighs its penalty (at a large C; `bias_updates > 0`) and as any
/// other column where not: either way the optimum of the problem as given (Clarabel's, the bias held at
/// 0), certified to 1e-10, from dense and sparse rows, the column first or last, with and without weights.
#[test]
fn a_constant_column_without_intercept_is_a_regularised_bias_solved_exactly() {
    let settings = DualCdSettings::default();
    // (.., whether `B²` exceeds the penalty `ρ`: a tenth of the other columns' mean `‖x_i‖²` at a large C,
    // all of it at a small one)
    for (seed, lambda, b, at_end, weighted, regularised) in [
        (11, 1e-3, 1.0, true, false, true),
        (12, 1e-4, 3.0, false, true, true),
        (13, 1e-3, 0.5, true, false, false),
        (14, 1.0, 1.0, true, false, false),
    ] {
        let data = common::random_dataset(seed, "none", 150, 4);
        let y = common::labels_pm1(&data);
        let x = with_constant_column(&data.features, at_end, b);
        let weights: Option<Vec<f64>> = weighted.then(|| (0..150).map(|i| [0.5, 1.0, 0.0, 2.0][i % 4]).collect());
        let (w_ref, _, reference) = common::hinge_svm_by_clarabel_with(&x, &y, weights.as_deref(), lambda, false);
        for rows in [x.clone(), to_sparse(&x)] {
            let fit = dual_cd::solve(&rows, &y, weights.as_deref(), lambda, DualLoss::Hinge, false, &settings);
            let case = format!("seed {seed}, B = {b}, sparse {}", matches!(rows, Features::Sparse(_)));
            assert!(fit.converged && fit.relative_gap() <= 1e-10, "{case}: gap {}", fit.relative_gap());
            assert_eq!(fit.bias_updates > 0, regularised, "{case}: {} multiplier steps", fit.bias_updates);
            let objective =
                dual_cd::objective_value(&rows, &y, weights.as_deref(), lambda, DualLoss::Hinge, false, &fit.theta);
            assert!(common::rel_diff(objective, fit.primal) <= 1e-13, "{case}: J(θ) {objective} vs {}", fit.primal);
            assert!(fit.primal <= reference * (1.0 + 1e-10), "{case}: {} vs Clarabel {reference}", fit.primal);
            assert!(common::rel_diff(fit.primal, reference) <= 1e-8, "{case}: {} vs Clarabel {reference}", fit.primal);
            assert_close(&fit.theta, &w_ref, 1e-4, &case);
        }
    }
}

/// At a small λ the exact finish's `w = (g + Σ_M β_i y_i x_i)/λ` sums terms far larger than `w`: its margins
/// are refined against the `w` formed, so that a finish by conjugate gradients (here 1,498 margin rows)
/// is exact to round-off, with and without intercept: a gap of 1e-12 where 1e-10 was asked (7.6e-11
/// unrefined).
#[test]
fn the_exact_finish_by_conjugate_gradients_holds_its_margins_to_round_off() {
    let data = sparse_dataset(7, 1500, 30_000);
    let y = common::labels_pm1(&data);
    for intercept in [true, false] {
        let fit = dual_cd::solve(&data.features, &y, None, 1e-7, DualLoss::Hinge, intercept, &Default::default());
        let upper = 1.0 / 1500.0;
        let free = fit.beta.iter().filter(|&&b| b > 0.0 && b < upper * (1.0 - 1e-9)).count();
        assert!(free > 500, "intercept {intercept}: {free} free multipliers");
        assert!(fit.converged && fit.relative_gap() <= 1e-11, "intercept {intercept}: gap {}", fit.relative_gap());
    }
}
