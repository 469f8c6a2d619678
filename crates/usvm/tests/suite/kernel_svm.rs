//! The SMO solver and the kernel SVM against an independent QP solution of the dual (Clarabel), KKT
//! conditions, per-example costs, precomputed kernels, determinism and bad input.

use crate::common;

use common::{rel_diff, rng};
use ndarray::Array2;
use rand_distr::{Distribution, Uniform};
use usvm::kernel::cache::{ColumnCache, Precision};
use usvm::model::{Multiclass, vote};
use usvm::solver::smo::{self, DenseQ, SmoSettings};
use usvm::svm::KernelSvmParams;
use usvm::{Dataset, Error, Features, Kernel};

/// `min ½αᵀQα - 1ᵀα  s.t.  yᵀα = 0, 0 ≤ α ≤ c` by Clarabel: `(α, objective)`.
fn dual_by_clarabel(q: &Array2<f64>, y: &[f64], c: &[f64]) -> (Vec<f64>, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let l = y.len();
    let p: Vec<Vec<f64>> = (0..l).map(|i| (0..l).map(|j| if j >= i { q[[i, j]] } else { 0.0 }).collect()).collect();
    let mut a = vec![vec![0.0; l]; 2 * l + 1];
    let mut b = vec![0.0; 2 * l + 1];
    a[0].copy_from_slice(y);
    for i in 0..l {
        a[1 + i][i] = -1.0;
        a[1 + l + i][i] = 1.0;
        b[1 + l + i] = c[i];
    }
    let settings = common::clarabel_settings(1e-12);
    let (pm, am) = (CscMatrix::from(&p), CscMatrix::from(&a));
    let cones = [ZeroConeT(1), NonnegativeConeT(2 * l)];
    let mut solver = DefaultSolver::new(&pm, &vec![-1.0; l], &am, &b, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved), "{:?}", sol.status);
    (sol.x.clone(), sol.obj_val)
}

/// Two overlapping Gaussian blobs, labels 0/1, with random weights in [0.2, 1] when `weighted`.
fn problem(seed: u64, l: usize, n: usize, weighted: bool) -> Dataset<'static> {
    let mut r = rng(seed);
    let (x, labels) = common::blobs(&mut r, l, n, 1.5);
    let data = Dataset::dense(x, labels);
    if weighted {
        let u = Uniform::new(0.2, 1.0).unwrap();
        let w = (0..l).map(|_| u.sample(&mut r)).collect();
        data.with_weights(w)
    } else {
        data
    }
}

fn signed(data: &Dataset) -> Vec<f64> {
    common::labels_pm1(data)
}

#[test]
fn smo_matches_clarabel_with_per_example_costs_and_satisfies_kkt() {
    let kernels =
        [Kernel::Rbf { gamma: 0.3 }, Kernel::Linear, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }];
    for (seed, (l, kernel)) in
        [(60, kernels[0]), (150, kernels[1]), (200, kernels[2]), (120, kernels[0])].into_iter().enumerate()
    {
        let data = problem(seed as u64, l, 4, seed != 1);
        let y = signed(&data);
        let c = 2.0;
        let costs: Vec<f64> = (0..l).map(|i| c * data.weights.as_ref().map_or(1.0, |w| w[i])).collect();
        let k = kernel.gram(&data.features).unwrap();
        let q = Array2::from_shape_fn((l, l), |(i, j)| y[i] * y[j] * k[[i, j]]);
        let (alpha_ref, obj_ref) = dual_by_clarabel(&q, &y, &costs);

        for shrinking in [true, false] {
            let params = KernelSvmParams {
                kernel,
                c,
                tol: 1e-10,
                shrinking,
                precision: Precision::Double,
                ..Default::default()
            };
            let fit = params.fit(&data).unwrap();
            let report = &fit.reports[0];
            assert!(report.converged() && report.max_violation < 1e-10, "{report:?}");
            let d = rel_diff(report.objective, obj_ref);
            assert!(d < 1e-6, "{kernel:?} l={l}: objective {} vs clarabel {obj_ref} ({d:e})", report.objective);
            // The objective recomputed from α.
            let alpha = fit.alpha.row(0).to_vec();
            let qa = q.dot(&ndarray::ArrayView1::from(&alpha));
            let recomputed = 0.5 * alpha.iter().zip(&qa).map(|(a, g)| a * g).sum::<f64>() - alpha.iter().sum::<f64>();
            assert!(rel_diff(recomputed, report.objective) < 1e-12);
            // Feasibility and KKT at the scale of the tolerance.
            assert!(alpha.iter().zip(&y).map(|(a, y)| a * y).sum::<f64>().abs() < 1e-10);
            let f = fit.model.decision_function(&data.features).unwrap();
            let mut n_free = 0;
            for i in 0..l {
                assert!(alpha[i] >= 0.0 && alpha[i] <= costs[i]);
                let margin = y[i] * f[[i, 0]];
                if alpha[i] == 0.0 {
                    assert!(margin >= 1.0 - 1e-8, "i={i}: α=0, margin {margin}");
                } else if alpha[i] == costs[i] {
                    assert!(margin <= 1.0 + 1e-8, "i={i}: α=C, margin {margin}");
                } else {
                    n_free += 1;
                    assert!((margin - 1.0).abs() < 1e-8, "i={i}: free, margin {margin}");
                }
                if kernel != Kernel::Linear {
                    // Strictly convex dual: the same α as the interior-point solution.
                    assert!((alpha[i] - alpha_ref[i]).abs() < 1e-5 * c, "α_{i}: {} vs {}", alpha[i], alpha_ref[i]);
                }
            }
            assert!(n_free > 0);
            assert_eq!(fit.support.len(), alpha.iter().filter(|&&a| a > 0.0).count());
        }
    }
}

/// `½αᵀQα - 1ᵀα` in `f64`.
fn dual_value(q: &Array2<f64>, alpha: &[f64]) -> f64 {
    let qa = q.dot(&ndarray::ArrayView1::from(alpha));
    0.5 * alpha.iter().zip(&qa).map(|(a, g)| a * g).sum::<f64>() - alpha.iter().sum::<f64>()
}

/// Single-precision kernel values (LIBSVM's f32 cache, rows read in f32) move the exact dual objective at
/// the solution by far less than the tolerance's own effect, and the support set only where `α` is within
/// the tolerance of a bound; raw, offset features (centred before rounding) included.
#[test]
fn single_precision_moves_the_dual_objective_and_support_set_within_the_tolerance() {
    for (seed, kernel, offset) in
        [(11, Kernel::Rbf { gamma: 0.2 }, 0.0), (12, Kernel::Rbf { gamma: 0.2 }, 1e4), (13, Kernel::Linear, 0.0)]
    {
        let mut data = problem(seed, 400, 6, true);
        if let Features::Dense(m) = &mut data.features {
            m.view_mut().mapv_inplace(|v| v + offset);
        }
        let y = signed(&data);
        let k = kernel.gram(&data.features).unwrap();
        let q = Array2::from_shape_fn((400, 400), |(i, j)| y[i] * y[j] * k[[i, j]]);
        for tol in [1e-3, 1e-6] {
            let fit = |precision| {
                KernelSvmParams { kernel, c: 4.0, tol, precision, ..Default::default() }.fit(&data).unwrap()
            };
            let (single, double) = (fit(Precision::Single), fit(Precision::Double));
            assert!(single.reports[0].converged() && double.reports[0].converged());
            let (a_s, a_d) = (single.alpha.row(0).to_vec(), double.alpha.row(0).to_vec());
            let (j_s, j_d) = (dual_value(&q, &a_s), dual_value(&q, &a_d));
            assert!(rel_diff(j_s, j_d) < 1e-6, "{kernel:?} offset {offset} tol {tol}: {j_s} vs {j_d}");
            let costs: Vec<f64> = data.weights.as_ref().unwrap().iter().map(|w| 4.0 * w).collect();
            for i in 0..400 {
                let near_bound = |a: f64| a < 10.0 * tol || a > costs[i] - 10.0 * tol;
                if (a_s[i] > 0.0) != (a_d[i] > 0.0) {
                    assert!(near_bound(a_s[i]) && near_bound(a_d[i]), "α_{i}: {} vs {}", a_s[i], a_d[i]);
                }
            }
        }
    }
}

#[test]
fn smo_is_deterministic_and_a_tiny_cache_changes_nothing_but_time() {
    let data = problem(7, 200, 3, true);
    let params = KernelSvmParams { kernel: Kernel::Rbf { gamma: 0.5 }, c: 5.0, tol: 1e-8, ..Default::default() };
    let a = params.fit(&data).unwrap();
    let b = params.fit(&data).unwrap();
    assert_eq!(a, b);
    // A cache of two columns: the same iterates (the cache only stores exact columns).
    let tiny = KernelSvmParams { cache_mb: 1e-9, ..params.clone() }.fit(&data).unwrap();
    assert_eq!(tiny.alpha, a.alpha);
    assert_eq!(tiny.reports, a.reports);
}

#[test]
fn zero_weights_leave_examples_out() {
    let data = problem(3, 80, 3, true);
    let mut w = data.weights.clone().unwrap();
    for v in w.iter_mut().step_by(5) {
        *v = 0.0;
    }
    let keep: Vec<usize> = (0..80).filter(|i| i % 5 != 0).collect();
    let params = KernelSvmParams { kernel: Kernel::Rbf { gamma: 0.5 }, c: 3.0, tol: 1e-10, ..Default::default() };
    let with_zeros = params.fit(&data.clone().with_weights(w)).unwrap();
    let sub = data.select(&keep);
    let reference = params.fit(&sub).unwrap();
    assert!(rel_diff(with_zeros.reports[0].objective, reference.reports[0].objective) < 1e-12);
    assert!((0..80).step_by(5).all(|i| with_zeros.alpha[[0, i]] == 0.0));
}

#[test]
fn precomputed_kernel_gives_the_same_machine() {
    let data = problem(11, 90, 3, true);
    let kernel = Kernel::Rbf { gamma: 0.4 };
    let params = KernelSvmParams { kernel, c: 2.0, tol: 1e-10, precision: Precision::Double, ..Default::default() };
    let direct = params.fit(&data).unwrap();
    // LIBSVM layout: column 0 the serial number, column j the kernel value with example j.
    let k = kernel.gram(&data.features).unwrap();
    let l = data.n_samples();
    let rows = Array2::from_shape_fn((l, l + 1), |(i, j)| if j == 0 { (i + 1) as f64 } else { k[[i, j - 1]] });
    let pre = Dataset { features: Features::dense(rows.clone()), ..data.clone() };
    let fit = KernelSvmParams { kernel: Kernel::Precomputed, ..params }.fit(&pre).unwrap();
    assert!(rel_diff(fit.reports[0].objective, direct.reports[0].objective) < 1e-12);
    assert_eq!(fit.support, direct.support);
    let f_direct = direct.model.decision_function(&data.features).unwrap();
    let f_pre = fit.model.decision_function(&Features::dense(rows)).unwrap();
    assert!(f_direct.iter().zip(&f_pre).all(|(a, b)| (a - b).abs() < 1e-9));
    // Serial numbers out of range are rejected.
    let mut bad = pre.clone();
    if let Features::Dense(m) = &mut bad.features {
        m.view_mut()[[4, 0]] = (l + 1) as f64;
    }
    assert!(matches!(
        KernelSvmParams { kernel: Kernel::Precomputed, ..Default::default() }.fit(&bad),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn one_vs_rest_shares_the_support_set() {
    let mut r = rng(5);
    let (x, _) = common::blobs(&mut r, 150, 2, 0.0);
    let labels: Vec<i64> = (0..150).map(|i| (i % 3) as i64 * 10).collect();
    let mut x = x;
    for (i, mut row) in x.rows_mut().into_iter().enumerate() {
        row[0] += 5.0 * (i % 3) as f64;
    }
    let data = Dataset::dense(x, labels.clone());
    let params = KernelSvmParams { kernel: Kernel::Rbf { gamma: 0.5 }, c: 1.0, ..Default::default() };
    let fit = KernelSvmParams { multiclass: Multiclass::OneVsRest, ..params }.fit(&data).unwrap();
    assert_eq!(fit.reports.len(), 3);
    assert_eq!(fit.model.coef.nrows(), 3);
    assert_eq!(fit.model.n_support(), fit.support.len());
    for k in 0..3 {
        // Each binary problem's α, restricted to the shared support set.
        let y: Vec<f64> = labels.iter().map(|&c| if c == 10 * k as i64 { 1.0 } else { -1.0 }).collect();
        for (s, &i) in fit.support.iter().enumerate() {
            assert_eq!(fit.model.coef[[k, s]], fit.alpha[[k, i]] * y[i]);
        }
    }
    let acc = fit.model.predict(&data.features).unwrap().iter().zip(&labels).filter(|(a, b)| a == b).count();
    assert!(acc > 140, "training accuracy {acc}/150");
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = problem(1, 30, 2, false);
    let ok = KernelSvmParams { kernel: Kernel::Rbf { gamma: 1.0 }, ..Default::default() };
    assert!(ok.fit(&data).is_ok());
    let bad_params = [
        KernelSvmParams { c: 0.0, ..ok.clone() },
        KernelSvmParams { c: f64::NAN, ..ok.clone() },
        KernelSvmParams { tol: 0.0, ..ok.clone() },
        KernelSvmParams { cache_mb: -1.0, ..ok.clone() },
        KernelSvmParams { kernel: Kernel::Rbf { gamma: -1.0 }, ..ok.clone() },
        KernelSvmParams { kernel: Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 0 }, ..ok.clone() },
    ];
    for p in bad_params {
        assert!(matches!(p.fit(&data), Err(Error::InvalidParameter { .. })), "{p:?}");
    }
    let mut nan = data.clone();
    if let Features::Dense(m) = &mut nan.features {
        m.view_mut()[[3, 1]] = f64::NAN;
    }
    assert!(matches!(ok.fit(&nan), Err(Error::NonFinite { .. })));
    let single = Dataset { labels: vec![1; 30].into(), ..data.clone() };
    assert!(matches!(ok.fit(&single), Err(Error::SingleClass { label: 1 })));
    let negative = data.clone().with_weights((0..30).map(|i| if i == 2 { -1.0 } else { 1.0 }).collect());
    assert!(matches!(ok.fit(&negative), Err(Error::InvalidWeight { index: 2, .. })));
    // Zero weight on every positive example leaves a single class.
    let w: Vec<f64> = data.labels.iter().map(|&c| if c == 1 { 0.0 } else { 1.0 }).collect();
    assert!(matches!(ok.fit(&data.clone().with_weights(w)), Err(Error::SingleClass { .. })));
    let empty = Dataset::dense(Array2::zeros((0, 2)), vec![]);
    assert!(matches!(ok.fit(&empty), Err(Error::Empty(_))));
}

#[test]
fn smo_solver_rejects_bad_problems_and_handles_a_start() {
    let q = DenseQ::new(vec![2.0, 1.0, 1.0, 2.0], 2);
    let s = SmoSettings::default();
    let y = [1.0, 1.0];
    assert!(matches!(smo::solve(&q, &[-1.0], &y, &[1.0, 1.0], None, &s), Err(Error::DimensionMismatch { .. })));
    assert!(smo::solve(&q, &[-1.0, -1.0], &[1.0, 0.5], &[1.0, 1.0], None, &s).is_err());
    assert!(smo::solve(&q, &[-1.0, -1.0], &y, &[1.0, 0.0], None, &s).is_err());
    assert!(smo::solve(&q, &[-1.0, f64::NAN], &y, &[1.0, 1.0], None, &s).is_err());
    assert!(smo::solve(&q, &[-1.0, -1.0], &y, &[1.0, 1.0], Some(&[2.0, 0.0]), &s).is_err());
    // yᵀα = 1 from the start (1, 0): min ½αᵀQα - 1ᵀα on α_1 + α_2 = 1 is α = (½, ½).
    let tight = SmoSettings { tol: 1e-12, ..s };
    let sol = smo::solve(&q, &[-1.0, -1.0], &y, &[1.0, 1.0], Some(&[1.0, 0.0]), &tight).unwrap();
    assert!((sol.alpha[0] - 0.5).abs() < 1e-12 && (sol.alpha[1] - 0.5).abs() < 1e-12, "{sol:?}");
    assert!((sol.objective - (0.5 * 1.5 - 1.0)).abs() < 1e-12);
    // A maximum of one iteration is reported, not an error.
    let data = problem(2, 50, 2, false);
    let fit = KernelSvmParams { max_iter: 1, tol: 1e-12, ..Default::default() }.fit(&data).unwrap();
    assert!(!fit.reports[0].converged() && fit.reports[0].n_iter == 1);
}

#[test]
fn column_cache_budget_is_at_least_two_columns() {
    assert_eq!(ColumnCache::<f64>::new(100, 0.0).budget(), 200);
}

/// Four classes in a ring, weighted.
fn four_classes(seed: u64, l: usize) -> Dataset<'static> {
    let mut r = rng(seed);
    let (mut x, _) = common::blobs(&mut r, l, 3, 0.0);
    let labels: Vec<i64> = (0..l).map(|i| [7, -2, 3, 11][i % 4]).collect();
    for (i, mut row) in x.rows_mut().into_iter().enumerate() {
        let t = (i % 4) as f64 * std::f64::consts::FRAC_PI_2;
        row[0] += 2.5 * t.cos();
        row[1] += 2.5 * t.sin();
    }
    let u = Uniform::new(0.2, 1.0).unwrap();
    let w = (0..l).map(|_| u.sample(&mut r)).collect();
    Dataset::dense(x, labels).with_weights(w)
}

/// One-vs-one: each pair's machine is the binary SVM of the pair's examples (first class positive), the
/// support vectors are grouped by class, and the votes pick the class LIBSVM's rule picks.
#[test]
fn one_vs_one_is_the_binary_machine_of_every_pair() {
    let data = four_classes(21, 240);
    let params = KernelSvmParams {
        kernel: Kernel::Rbf { gamma: 0.3 },
        c: 2.0,
        tol: 1e-10,
        precision: Precision::Double,
        ..Default::default()
    };
    let fit = params.fit(&data).unwrap();
    let model = &fit.model;
    let classes = model.classes.clone();
    assert_eq!(classes, vec![-2, 3, 7, 11]);
    assert!(model.is_one_vs_one() && model.coef.nrows() == 6 && fit.reports.len() == 6);
    assert_eq!(model.n_support.iter().sum::<usize>(), model.n_support());
    let f = model.decision_function(&data.features).unwrap();
    for (p, (a, b)) in usvm::model::class_pairs(4).into_iter().enumerate() {
        let rows: Vec<usize> = (0..240).filter(|&i| [classes[a], classes[b]].contains(&data.labels[i])).collect();
        let pair = params.fit(&data.select(&rows)).unwrap();
        // The binary machine's positive class is the larger label, b: its values are the pair's negated.
        let g = pair.model.decision_function(&data.features).unwrap();
        let err = (0..240).map(|i| (f[[i, p]] + g[[i, 0]]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-8, "pair ({a}, {b}): {err:e}");
        assert!(rel_diff(fit.reports[p].objective, pair.reports[0].objective) < 1e-10);
    }
    // Grouped by class, in training order within a class.
    let class_of = |i: usize| classes.binary_search(&data.labels[i]).unwrap();
    assert!(fit.support.windows(2).all(|w| (class_of(w[0]), w[0]) < (class_of(w[1]), w[1])));
    // Predictions are the votes.
    let predicted = model.predict(&data.features).unwrap();
    let votes = vote(4, &f);
    assert!(predicted.iter().zip(&votes).all(|(p, &v)| *p == classes[v]));
    let accuracy = predicted.iter().zip(data.labels.iter()).filter(|(p, y)| p == y).count() as f64 / 240.0;
    assert!(accuracy > 0.8, "{accuracy}");
}

#[test]
fn votes_follow_libsvm_ties_to_the_first_class() {
    // Pairs (0,1), (0,2), (1,2): a cycle gives one vote each, the first class wins; f = 0 votes the second.
    let f = ndarray::array![[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [0.0, 0.0, 0.0], [-1.0, -1.0, 2.0]];
    assert_eq!(vote(3, &f), vec![0, 0, 2, 1]);
}
