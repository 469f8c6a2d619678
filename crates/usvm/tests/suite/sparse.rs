//! Wide sparse data (issue #17): the sparse code paths — block accumulation of the gradient and `Hv`, the
//! exact solver on the used columns, the margin system solved by conjugate gradients — agree with the dense
//! ones on the same problem, stay finite-difference exact, and give the same bits for any thread count.

use crate::common;

use rand_distr::{Distribution, Uniform};
use usvm::loss::ExpectedHinge;
use usvm::model::{Coefficients, ModelFile};
use usvm::objective::{Objective, Problem};
use usvm::solver::exact::ExactSettings;
use usvm::solver::hinge_polish;
use usvm::{Covariances, CsrMatrix, Dataset, Features, LinearMethod, LinearSvmParams, Solver};

/// `l × n` sparse means with `k` distinct random columns per row (values N(0, 1)), labels from a hidden
/// hyperplane with 10% noise, and sparse diagonal variances `U[0.05, 0.5)` on the same pattern.
fn wide_sparse(seed: u64, l: usize, n: usize, k: usize) -> Dataset<'static> {
    let mut rng = common::rng(seed);
    let column = Uniform::new(0, n).unwrap();
    let unit = Uniform::new(0.0, 1.0).unwrap();
    let w_star: Vec<f64> = (0..n).map(|_| common::normal(&mut rng)).collect();
    let (mut rows, mut variances, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..l {
        let mut cols: Vec<usize> = Vec::new();
        while cols.len() < k {
            cols.push(column.sample(&mut rng));
            cols.sort_unstable();
            cols.dedup();
        }
        let row: Vec<(usize, f64)> = cols.iter().map(|&j| (j, common::normal(&mut rng))).collect();
        let score: f64 = row.iter().map(|&(j, v)| v * w_star[j]).sum();
        labels.push(if score + 0.3 * common::normal(&mut rng) > 0.0 { 1 } else { 0 });
        variances.push(cols.iter().map(|&j| (j, 0.05 + 0.45 * unit.sample(&mut rng))).collect::<Vec<_>>());
        rows.push(row);
    }
    Dataset {
        features: Features::Sparse(CsrMatrix::from_rows(n, &rows).unwrap()),
        labels: labels.into(),
        weights: None,
        covariances: Covariances::sparse_diagonal(CsrMatrix::from_rows(n, &variances).unwrap()),
        privileged: None,
    }
}

/// The same problem with dense means and dense diagonal covariances.
fn densified(data: &Dataset<'static>) -> Dataset<'static> {
    let covariances = match &data.covariances {
        Covariances::SparseDiagonal(c) => Covariances::diagonal(c.variances.to_dense()),
        other => other.clone(),
    };
    Dataset::dense(data.features.to_dense(), data.labels.clone()).with_covariances(covariances)
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().chain(b).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter().zip(b).map(|(x, z)| (x - z).abs()).fold(0.0, f64::max) / scale
}

fn theta(fit: &usvm::LinearFit) -> Vec<f64> {
    let mut t = fit.model.coef.dense().row(0).to_vec();
    t.push(fit.model.intercept[0]);
    t
}

/// Value, gradient, `Hv` and the line function of one problem, at a point and along a direction.
fn passes(data: &Dataset, cov: &Covariances, floor: f64) -> (f64, Vec<f64>, Vec<f64>, (f64, f64, f64)) {
    let y = common::labels_pm1(data);
    let weights: Vec<f64> = (0..data.n_samples()).map(|i| 0.5 + (i % 7) as f64 / 7.0).collect();
    let problem = Problem { features: &data.features, y: &y, weights: Some(&weights), covariances: cov.as_dyn() };
    let objective = Objective { sigma_floor: floor, ..Objective::new(problem, ExpectedHinge, 1e-3) };
    let dim = objective.dim();
    let mut rng = common::rng(99);
    let point: Vec<f64> = (0..dim).map(|_| 0.3 * common::normal(&mut rng)).collect();
    let dir: Vec<f64> = (0..dim).map(|_| common::normal(&mut rng)).collect();
    let mut g = vec![0.0; dim];
    let (value, curvature) = objective.value_grad(&point, &mut g);
    assert!(common::rel_diff(value, objective.value(&point)) <= 1e-14);
    let mut hv = vec![0.0; dim];
    objective.hess_vec(&point, &curvature, &dir, &mut hv);
    (value, g, hv, objective.line(&point, &dir).eval(0.7))
}

#[test]
fn objective_passes_on_sparse_rows_match_dense_rows() {
    // 1,200 rows of 3 entries in 2,000 columns: several accumulation blocks of several chunks each.
    let sparse = wide_sparse(1, 1200, 2000, 3);
    let dense = densified(&sparse);
    for (with_cov, floor) in [(false, 0.2), (true, 0.0), (true, 0.05)] {
        let cov = |d: &Dataset| if with_cov { d.covariances.clone() } else { Covariances::None };
        let (v1, g1, h1, l1) = passes(&sparse, &cov(&sparse), floor);
        let (v2, g2, h2, l2) = passes(&dense, &cov(&dense), floor);
        assert!(common::rel_diff(v1, v2) <= 1e-13, "value {v1} vs {v2}");
        assert!(max_rel(&g1, &g2) <= 1e-13, "gradient differs by {:e}", max_rel(&g1, &g2));
        assert!(max_rel(&h1, &h2) <= 1e-13, "Hv differs by {:e}", max_rel(&h1, &h2));
        assert!(max_rel(&[l1.0, l1.1, l1.2], &[l2.0, l2.1, l2.2]) <= 1e-13, "line {l1:?} vs {l2:?}");
    }
}

#[test]
fn gradient_and_hessian_on_wide_sparse_rows_match_finite_differences() {
    let data = wide_sparse(2, 600, 900, 3);
    let y = common::labels_pm1(&data);
    for (cov, floor) in [(&Covariances::None, 0.3), (&data.covariances, 0.0)] {
        let problem = Problem { features: &data.features, y: &y, weights: None, covariances: cov.as_dyn() };
        let objective = Objective { sigma_floor: floor, ..Objective::new(problem, ExpectedHinge, 0.01) };
        let dim = objective.dim();
        let mut rng = common::rng(5);
        let point: Vec<f64> = (0..dim).map(|_| 0.5 * common::normal(&mut rng)).collect();
        let dir: Vec<f64> = (0..dim).map(|_| common::normal(&mut rng)).collect();
        let (mut g, h) = (vec![0.0; dim], 1e-6);
        let (_, curvature) = objective.value_grad(&point, &mut g);
        let shifted = |j: usize, step: f64| {
            let mut t = point.clone();
            t[j] += step;
            objective.value(&t)
        };
        let fd: Vec<f64> = (0..dim).map(|j| (shifted(j, h) - shifted(j, -h)) / (2.0 * h)).collect();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
        assert!(norm(&err) <= 1e-6 * norm(&g).max(1e-2), "gradient error {}", norm(&err));
        let mut hv = vec![0.0; dim];
        objective.hess_vec(&point, &curvature, &dir, &mut hv);
        let along =
            |s: f64| objective.gradient(&point.iter().zip(&dir).map(|(a, b)| a + s * h * b).collect::<Vec<_>>());
        let fd_hv: Vec<f64> = along(1.0).iter().zip(along(-1.0)).map(|(a, b)| (a - b) / (2.0 * h)).collect();
        let err: Vec<f64> = hv.iter().zip(&fd_hv).map(|(a, b)| a - b).collect();
        assert!(norm(&err) <= 1e-6 * norm(&hv).max(1e-2), "Hv error {}", norm(&err));
    }
}

#[test]
fn fits_on_sparse_rows_match_dense_rows() {
    // 300 rows of 8 entries in 4,000 columns: fewer than half of the columns are used, so the exact solver
    // works on the used columns only; the dense copy solves the full problem.
    let sparse = wide_sparse(3, 300, 4000, 8);
    let dense = densified(&sparse);
    let settings = ExactSettings { tol: 1e-12, ..ExactSettings::default() };
    for method in [LinearMethod::Hinge, LinearMethod::Gsu] {
        for lambda in [1e-2, 1e-4] {
            let params = LinearSvmParams {
                method: method.clone(),
                lambda,
                solver: Solver::Exact(settings),
                ..Default::default()
            };
            let (a, b) = (params.fit(&sparse).unwrap(), params.fit(&dense).unwrap());
            let (ra, rb) = (&a.reports[0], &b.reports[0]);
            assert!(ra.converged() && rb.converged(), "{method:?} λ = {lambda}: {ra:?} {rb:?}");
            assert!(
                common::rel_diff(ra.objective, rb.objective) <= 1e-9,
                "{method:?} λ = {lambda}: objective {} vs {}",
                ra.objective,
                rb.objective
            );
            let d = max_rel(&theta(&a), &theta(&b));
            assert!(d <= 1e-9, "{method:?} λ = {lambda}: solutions differ by {d:e} (relative)");
        }
    }
}

#[test]
fn unused_columns_get_exactly_zero_weight_even_from_a_warm_start() {
    let data = wide_sparse(4, 200, 4000, 5);
    let Features::Sparse(x) = &data.features else { unreachable!() };
    let mut used = vec![false; 4000];
    x.indices.iter().for_each(|&j| used[j as usize] = true);
    for (method, fit_intercept) in [
        (LinearMethod::Hinge, true),
        (LinearMethod::Gsu, true),
        (LinearMethod::Hinge, false),
        (LinearMethod::Gsu, false),
    ] {
        let params = LinearSvmParams { method, lambda: 1e-3, fit_intercept, ..Default::default() };
        let fit = params.fit(&data).unwrap();
        // The model stores the used columns only.
        let support: Vec<u32> = fit.model.coef.support().expect("a wide sparse fit stores its support").collect();
        assert_eq!(support, (0..4000).filter(|&j| used[j as usize]).collect::<Vec<u32>>());
        // Warm starts: dense, non-zero on the unused columns; and on the same support.
        let mut dense_start = fit.model.clone();
        dense_start.coef = (fit.model.coef.dense().into_owned() + 0.5).into();
        let mut support_start = fit.model.clone();
        support_start.coef =
            Coefficients::from_column_list(fit.model.coef.stored().to_owned() + 0.5, &support, 4000).unwrap();
        for start in [dense_start, support_start] {
            let warm = params.fit_from(&data, Some(&start)).unwrap();
            for model in [&fit.model, &warm.model] {
                let row = model.coef.dense().row(0).to_vec();
                assert!((0..4000).filter(|&j| !used[j]).all(|j| row[j] == 0.0));
            }
            assert!(common::rel_diff(fit.reports[0].objective, warm.reports[0].objective) <= 1e-9);
        }
    }
}

#[test]
fn large_sparse_margin_sets_are_solved_by_conjugate_gradients_exactly() {
    // 700 rows of 4 entries in 1,500 columns at λ = 1e-4: most rows end on the margin, more than the dense
    // factorisation takes for sparse rows; the dense copy solves the same margin system by LU.
    let sparse = wide_sparse(5, 700, 1500, 4);
    let dense = densified(&sparse);
    let lambda = 1e-4;
    let fit = LinearSvmParams { method: LinearMethod::Hinge, lambda, ..Default::default() }.fit(&sparse).unwrap();
    let r = &fit.reports[0];
    assert!(r.converged() && r.sigma_floor == Some(0.0), "{r:?}");
    let start = theta(&fit);
    let y = common::labels_pm1(&sparse);
    let polished = |x| hinge_polish::polish(x, &y, None, lambda, true, &start, 1e-6).unwrap();
    let (s, d) = (polished(&sparse.features), polished(&dense.features));
    let (ws, residual_s, wd, residual_d) = (s.theta, s.residual, d.theta, d.residual);
    let on_margin =
        (0..700).filter(|&i| (1.0 - y[i] * (dense.features.row_dot(i, &wd[..1500]) + wd[1500])).abs() <= 1e-9).count();
    assert!(on_margin > 500, "only {on_margin} rows on the margin");
    assert!(residual_s <= 1e-12 && residual_d <= 1e-12, "KKT residuals {residual_s:e} {residual_d:e}");
    assert!(max_rel(&ws, &wd) <= 1e-9, "solutions differ by {:e}", max_rel(&ws, &wd));
}

#[test]
fn sparse_fits_are_bit_for_bit_the_same_for_any_thread_count() {
    // 2,000 rows of 40 entries in 30,000 columns: accumulation blocks of several chunks, run in parallel.
    let data = wide_sparse(6, 2000, 30_000, 40);
    let y = common::labels_pm1(&data);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
            let problem =
                Problem { features: &data.features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
            let objective = Objective { sigma_floor: 0.1, ..Objective::new(problem, ExpectedHinge, 1e-3) };
            let point: Vec<f64> = (0..objective.dim()).map(|j| ((j % 13) as f64 - 6.0) * 0.01).collect();
            let mut g = vec![0.0; objective.dim()];
            let (value, curvature) = objective.value_grad(&point, &mut g);
            let mut hv = vec![0.0; objective.dim()];
            objective.hess_vec(&point, &curvature, &point, &mut hv);
            let fits: Vec<_> = [LinearMethod::Hinge, LinearMethod::Gsu]
                .into_iter()
                .map(|method| LinearSvmParams { method, lambda: 1e-3, ..Default::default() }.fit(&data).unwrap().model)
                .collect();
            (value, g, hv, fits)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn rows_without_entries_fit_to_the_bias_alone() {
    // No column is used at all: the solver works on the intercept only.
    let rows = vec![Vec::new(); 9];
    let data = Dataset {
        features: Features::Sparse(CsrMatrix::from_rows(50, &rows).unwrap()),
        labels: (0..9).map(|i| i64::from(i % 3 == 0)).collect(),
        weights: None,
        covariances: Covariances::sparse_diagonal(CsrMatrix::from_rows(50, &rows).unwrap()),
        privileged: None,
    };
    for method in [LinearMethod::Hinge, LinearMethod::Gsu] {
        let fit = LinearSvmParams { method, lambda: 1e-2, ..Default::default() }.fit(&data).unwrap();
        assert!(fit.model.coef.dense().iter().all(|&c| c == 0.0));
        // Three positives, six negatives: the hinge's minimiser over b is b = -1 (loss 2/3).
        assert!((fit.model.intercept[0] + 1.0).abs() <= 1e-6, "b = {}", fit.model.intercept[0]);
        assert!(common::rel_diff(fit.reports[0].objective, 2.0 / 3.0) <= 1e-6, "{:?}", fit.reports[0]);
    }
}

#[test]
fn a_model_on_its_used_columns_round_trips_and_predicts_like_its_full_matrix() {
    let mut data = wide_sparse(7, 150, 5000, 4);
    data.labels = (0..150).map(|i| (i % 3) as i64).collect::<Vec<_>>().into();
    for method in [LinearMethod::Hinge, LinearMethod::Gsu] {
        let model = LinearSvmParams { method, lambda: 1e-2, ..Default::default() }.fit(&data).unwrap().model;
        assert!(model.coef.support().is_some() && model.coef.n_outputs() == 3);
        let full = usvm::LinearModel { coef: model.coef.dense().into_owned().into(), ..model.clone() };
        assert_eq!(model.decision_function(&data.features).unwrap(), full.decision_function(&data.features).unwrap());
        let dense_x = Features::dense(data.features.to_dense());
        assert!(
            (&model.decision_function(&dense_x).unwrap() - &full.decision_function(&data.features).unwrap())
                .iter()
                .all(|d| d.abs() <= 1e-12)
        );
        let file = ModelFile::from_linear(&model, "hinge", serde_json::Value::Null);
        let text = file.to_json();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["version"], 3);
        assert_eq!(json["columns"].as_array().unwrap().len(), model.coef.stored().ncols());
        assert_eq!(ModelFile::from_json(&text).unwrap().to_linear().unwrap(), model);
        // Malformed lists of columns are errors, not panics.
        let columns = json["columns"].as_array().unwrap().clone();
        let last = columns.len() - 1;
        let mut swapped = columns.clone();
        swapped.swap(0, 1);
        let mut beyond = columns.clone();
        beyond[last] = serde_json::json!(5000);
        for (what, value) in [
            ("swapped", serde_json::Value::Array(swapped)),
            ("beyond n_features", serde_json::Value::Array(beyond)),
            ("one short", serde_json::Value::Array(columns[..last].to_vec())),
        ] {
            let mut bad = json.clone();
            bad["columns"] = value;
            let err = ModelFile::from_json(&bad.to_string()).and_then(|f| f.to_linear()).unwrap_err();
            assert!(matches!(err, usvm::Error::Format(_)), "{what}: {err}");
        }
        // A width a file states but does not hold is not allocated for.
        let mut wide = json.clone();
        wide["n_features"] = serde_json::json!(1u64 << 40);
        let err = ModelFile::from_json(&wide.to_string()).and_then(|f| f.to_linear()).unwrap_err();
        assert!(matches!(err, usvm::Error::Format(_)), "{err}");
        let mut old = json.clone();
        old["version"] = serde_json::json!(2);
        assert!(ModelFile::from_json(&old.to_string()).and_then(|f| f.to_linear()).is_err());
    }
}
