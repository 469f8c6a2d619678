//! SVM+ and R-SVM+: the SMO solver against Clarabel, the fast robust regulariser against its definition,
//! the limits (λ = 0 is the slack variant of SVM+ eq. 8; ρ → 0 is the C-SVM; ρ → ∞ shares one slack),
//! and bad input (privileged information helping on the synthetic LUPI task: usvm-experiments).

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{normal, rel_diff, rng};
use ndarray::{Array2, ArrayView2};
use usvm::kernel::Kernel;
use usvm::kernel::gradient::{gradient_gram_sum, gradient_gram_sum_naive, kernel_gradient};
use usvm::solver::svmplus_qp::{QpSettings, SvmPlusQp};
use usvm::svm::svm_plus::mean_squared_distance;
use usvm::svm::{LupiMethod, SvmPlusParams};
use usvm::{CsrMatrix, Dataset, Error, Features};

/// The dual QP solved by Clarabel in the form of paper eq. 15: `min ½μᵀMμ − vᵀμ` over `μ = (α, β)`.
/// Returns `(α, β, b, b*, F)` with `F` including the constant `cᵀBc/(2ρ)`.
fn qp_by_clarabel(qp: &SvmPlusQp<'_>) -> (Vec<f64>, Vec<f64>, f64, f64, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let n = qp.y.len();
    let (a, b) = (qp.a, qp.b);
    let r = 1.0 / qp.rho;
    // Upper triangle of M = [[A∘yyᵀ + B/ρ, B/ρ], [B/ρ, B/ρ]], column by column.
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in 0..2 * n {
        for row in 0..=col {
            let (i, j) = (row % n, col % n);
            let mut v = r * b[[i, j]];
            if row < n && col < n {
                v += qp.y[i] * qp.y[j] * a[[i, j]];
            }
            rowval.push(row);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(2 * n, 2 * n, colptr, rowval, nzval);
    let bc: Vec<f64> = (0..n).map(|i| (0..n).map(|j| b[[i, j]] * qp.c[j]).sum::<f64>() * r).collect();
    let mut q: Vec<f64> = bc.iter().map(|v| -1.0 - v).collect();
    q.extend(bc.iter().map(|v| -v));
    let constant = 0.5 * r * (0..n).map(|i| qp.c[i] * bc[i] / r).sum::<f64>();
    let n_up = if qp.upper.is_some() { n } else { 0 };
    let rows = 2 + 2 * n + n_up;
    let mut dense = vec![vec![0.0; 2 * n]; rows];
    let mut rhs = vec![0.0; rows];
    for i in 0..n {
        dense[0][i] = 1.0;
        dense[0][n + i] = 1.0;
        dense[1][i] = qp.y[i];
    }
    rhs[0] = qp.c.iter().sum();
    for k in 0..2 * n {
        dense[2 + k][k] = -1.0;
    }
    if let Some(u) = qp.upper {
        for i in 0..n {
            dense[2 + 2 * n + i][i] = 1.0;
            rhs[2 + 2 * n + i] = u[i];
        }
    }
    let am = CscMatrix::from(&dense);
    let cones = [ZeroConeT(2), NonnegativeConeT(2 * n + n_up)];
    let settings = common::clarabel_settings(1e-12);
    let mut solver = DefaultSolver::new(&p, &q, &am, &rhs, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved), "clarabel: {:?}", sol.status);
    // Px + q + Aᵀz = 0: z₀ multiplies 1ᵀ(α+β) (b*), z₁ multiplies yᵀα (b).
    (sol.x[..n].to_vec(), sol.x[n..].to_vec(), sol.z[1], sol.z[0], sol.obj_val + constant)
}

fn random_features(seed: u64, n: usize, d: usize, shift: f64) -> (Array2<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let y: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
    let x = Array2::from_shape_fn((n, d), |(i, _)| y[i] * shift + normal(&mut r));
    (x, y)
}

fn tight() -> QpSettings {
    QpSettings { tol: 1e-10, ..QpSettings::default() }
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn smo_matches_clarabel_on_random_svmplus_and_rsvmplus_problems() {
    let face_steps: usize =
        [(1, 20, false), (2, 60, true), (3, 100, false), (5, 100, true), (4, 300, true), (6, 300, false)]
            .into_iter()
            .map(|(seed, n, robust)| compare_with_clarabel(seed, n, robust))
            .sum();
    // The face (Newton) steps are exercised, not only the SMO steps.
    assert!(face_steps > 0);
}

/// SMO vs Clarabel on one random problem: dual objective (1e-6 relative), KKT residuals, and on small
/// problems the variables themselves. Returns the number of face steps the solver took.
fn compare_with_clarabel(seed: u64, n: usize, robust: bool) -> usize {
    {
        let (x, y) = random_features(seed, n, 3, 0.7);
        let (xs, _) = random_features(seed + 100, n, 2, 0.0);
        let xs = xs + &Array2::from_shape_fn((n, 2), |(i, _)| y[i]);
        let (fx, fxs) = (Features::dense(x), Features::dense(xs));
        let method = if robust { LupiMethod::Robust { lambda: 0.05, sigma_prime: 3.0 } } else { LupiMethod::SvmPlus };
        let params = SvmPlusParams { method, c: 2.0, rho: 0.5, ..Default::default() };
        let m = params.matrices(&fx, &fxs).unwrap();
        let c: Vec<f64> = (0..n).map(|i| if i % 5 == 0 { 1.0 } else { 2.0 }).collect();
        let upper: Option<Vec<f64>> = robust.then(|| c.iter().map(|v| 3.0 * v).collect());
        let qp = SvmPlusQp { a: m.a.view(), b: m.b.view(), y: &y, c: &c, upper: upper.as_deref(), rho: 0.5 };
        let ours = qp.solve(&tight()).unwrap();
        assert!(ours.converged, "n = {n}: violation {}", ours.violation);
        let (alpha, beta, b, b_star, f) = qp_by_clarabel(&qp);
        let f_ours = -ours.dual_objective;
        assert!(rel_diff(f_ours, f) < 1e-6, "n = {n}: objective {f_ours} vs clarabel {f}");
        assert!((qp.objective(&alpha, &beta) - f).abs() < 1e-8 * f.abs().max(1.0));
        let kkt_ours = qp.kkt_residual(&ours.alpha, &ours.beta, ours.bias, ours.bias_star);
        let kkt_clarabel = qp.kkt_residual(&alpha, &beta, b, b_star);
        // The interior-point solution sits a little inside the bounds: its residual is looser.
        assert!(kkt_ours < 1e-8 && kkt_clarabel < 1e-4, "n = {n}: KKT residual {kkt_ours} vs {kkt_clarabel}");
        // Gaussian A and B are positive definite: the solution is unique (and, on small problems, well
        // enough conditioned to compare the variables themselves).
        if n <= 60 {
            let scale = c.iter().cloned().fold(0.0, f64::max);
            assert!(max_abs_diff(&ours.alpha, &alpha) < 1e-5 * scale, "n = {n}: α differs");
            assert!(max_abs_diff(&ours.beta, &beta) < 1e-5 * scale, "n = {n}: β differs");
            assert!((ours.bias - b).abs() < 1e-5 && (ours.bias_star - b_star).abs() < 1e-5, "n = {n}: bias");
        }
        ours.face_steps
    }
}

#[test]
fn fast_gradient_gram_sum_equals_the_naive_sum_of_h_s() {
    let mut r = rng(11);
    let x = Array2::from_shape_fn((40, 4), |_| 3.0 + normal(&mut r));
    let rows: Vec<Vec<(usize, f64)>> = x
        .rows()
        .into_iter()
        .map(|row| row.iter().enumerate().filter(|(j, _)| (j + row.len()) % 3 != 0).map(|(j, v)| (j, *v)).collect())
        .collect();
    let sparse = Features::Sparse(CsrMatrix::from_rows(4, &rows).unwrap());
    for k in [
        Kernel::Rbf { gamma: 0.3 },
        Kernel::Linear,
        Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 },
        Kernel::Polynomial { gamma: 0.5, coef0: 0.0, degree: 1 },
    ] {
        for f in [Features::dense(x.clone()), sparse.clone()] {
            let (fast, naive) = (gradient_gram_sum(&k, &f).unwrap(), gradient_gram_sum_naive(&k, &f));
            let scale = naive.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let err = (&fast - &naive).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err <= 1e-10 * scale, "{k:?}: {err} of {scale}");
            assert!((0..40).all(|i| (0..i).all(|j| fast[[i, j]] == fast[[j, i]])));
        }
    }
}

#[test]
fn kernel_gradients_match_central_differences() {
    let (x, z) = ([0.3, -1.2, 0.7], [1.1, 0.4, -0.5]);
    for k in [Kernel::Rbf { gamma: 0.4 }, Kernel::Linear, Kernel::Polynomial { gamma: 0.7, coef0: 0.5, degree: 3 }] {
        let g = kernel_gradient(&k, &x, &z);
        for j in 0..3 {
            let h = 1e-6;
            let (mut zp, mut zm) = (z, z);
            zp[j] += h;
            zm[j] -= h;
            let fd = (k.eval(&x, &zp) - k.eval(&x, &zm)) / (2.0 * h);
            assert!((fd - g[j]).abs() < 1e-7 * fd.abs().max(1.0), "{k:?} coordinate {j}: {fd} vs {}", g[j]);
        }
    }
}

/// The slack variant of SVM+ (paper eq. 8) in the primal with linear kernels, by Clarabel:
/// variables `(w, w*, b, b*, ε)`. Returns `(w, b, objective)`.
fn slack_svmplus_primal(
    x: ArrayView2<f64>,
    xs: ArrayView2<f64>,
    y: &[f64],
    c: f64,
    rho: f64,
    sp: f64,
) -> (Vec<f64>, f64, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let (n, d, ds) = (x.nrows(), x.ncols(), xs.ncols());
    let dim = d + ds + 2 + n;
    let (ib, ibs, ie) = (d + ds, d + ds + 1, d + ds + 2);
    let mut p = vec![vec![0.0; dim]; dim];
    for j in 0..d {
        p[j][j] = 1.0;
    }
    for j in 0..ds {
        p[d + j][d + j] = rho;
    }
    let mut q = vec![0.0; dim];
    for i in 0..n {
        for j in 0..ds {
            q[d + j] += c * xs[[i, j]];
        }
        q[ibs] += c;
        q[ie + i] = sp * c;
    }
    let mut a = vec![vec![0.0; dim]; 3 * n];
    let mut rhs = vec![0.0; 3 * n];
    for i in 0..n {
        // −y_i(wᵀx_i + b) − (w*ᵀx*_i + b*) − ε_i ≤ −1
        for j in 0..d {
            a[i][j] = -y[i] * x[[i, j]];
        }
        a[i][ib] = -y[i];
        for j in 0..ds {
            a[i][d + j] = -xs[[i, j]];
        }
        a[i][ibs] = -1.0;
        a[i][ie + i] = -1.0;
        rhs[i] = -1.0;
        // −(w*ᵀx*_i + b*) ≤ 0, −ε_i ≤ 0
        for j in 0..ds {
            a[n + i][d + j] = -xs[[i, j]];
        }
        a[n + i][ibs] = -1.0;
        a[2 * n + i][ie + i] = -1.0;
    }
    let settings = common::clarabel_settings(1e-12);
    let (pm, am) = (CscMatrix::from(&p), CscMatrix::from(&a));
    let mut solver = DefaultSolver::new(&pm, &q, &am, &rhs, &[NonnegativeConeT(3 * n)], settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved), "{:?}", sol.status);
    (sol.x[..d].to_vec(), sol.x[ib], sol.obj_val)
}

#[test]
fn rsvmplus_with_lambda_zero_is_the_slack_variant_of_svmplus() {
    let n = 80;
    let (x, y) = random_features(21, n, 3, 0.5);
    let (xs, _) = random_features(22, n, 2, 0.0);
    let xs = xs + &Array2::from_shape_fn((n, 2), |(i, j)| if j == 0 { 0.8 * y[i] } else { 0.0 });
    let labels: Vec<i64> = y.iter().map(|&v| i64::from(v > 0.0)).collect();
    let data = Dataset::dense(x.clone(), labels).with_privileged(Features::dense(xs.clone()));
    let (c, rho, sp) = (0.5, 2.0, 1.5);
    let params = SvmPlusParams {
        method: LupiMethod::Robust { lambda: 0.0, sigma_prime: sp },
        c,
        rho,
        kernel: Some(Kernel::Linear),
        kernel_star: Some(Kernel::Linear),
        qp: tight(),
    };
    let fit = params.fit(&data).unwrap();
    let (w, b, primal) = slack_svmplus_primal(x.view(), xs.view(), &y, c, rho, sp);
    let sol = &fit.solutions[0];
    assert!(rel_diff(sol.dual_objective, primal) < 1e-6, "dual {} vs primal {primal}", sol.dual_objective);
    let w_dual: Vec<f64> = (0..3).map(|j| (0..n).map(|i| sol.alpha[i] * y[i] * x[[i, j]]).sum()).collect();
    assert!(max_abs_diff(&w_dual, &w) < 1e-5, "{w_dual:?} vs {w:?}");
    assert!((sol.bias - b).abs() < 1e-5, "b {} vs {b}", sol.bias);
    // The box binds (otherwise this would not test eq. 8): some α_i sits at σ'C.
    assert!(sol.alpha.iter().any(|&a| (a - sp * c).abs() < 1e-9));
    // The model's decision values are the primal's.
    let f = fit.model.decision_function(&Features::dense(x.clone())).unwrap();
    for i in 0..n {
        let fp: f64 = (0..3).map(|j| w[j] * x[[i, j]]).sum::<f64>() + b;
        assert!((f[[i, 0]] - fp).abs() < 1e-5);
    }
}

/// The C-SVM dual by Clarabel: `min ½(α∘y)ᵀK(α∘y) − 1ᵀα`, `0 ≤ α ≤ C`, `yᵀα = 0`. Returns `F`.
fn svm_dual_by_clarabel(k: ArrayView2<f64>, y: &[f64], c: f64, sum_cap: Option<f64>) -> f64 {
    let n = y.len();
    let zero = Array2::zeros((n, n));
    // The same QP family with B = 0: α ≤ C (box) or Σα ≤ nC (the β slack of 1ᵀ(α+β) = nC).
    let costs = vec![sum_cap.map_or(c, |s| s / n as f64); n];
    let upper = vec![c; n];
    let qp = SvmPlusQp {
        a: k,
        b: zero.view(),
        y,
        c: &costs,
        upper: sum_cap.is_none().then_some(upper.as_slice()),
        rho: 1.0,
    };
    qp_by_clarabel(&qp).4
}

#[test]
fn svmplus_tends_to_the_c_svm_as_rho_goes_to_zero_and_to_one_shared_slack_as_rho_grows() {
    let n = 40;
    let (x, y) = random_features(31, n, 2, 0.4);
    let (xs, _) = random_features(32, n, 2, 0.0);
    let labels: Vec<i64> = y.iter().map(|&v| i64::from(v > 0.0)).collect();
    let data = Dataset::dense(x.clone(), labels).with_privileged(Features::dense(xs));
    let c = 1.0;
    // K* = I (a very narrow Gaussian): the correcting space can fit any slack, so ρ → 0 frees ξ entirely.
    let base = SvmPlusParams {
        c,
        kernel_star: Some(Kernel::Rbf { gamma: 1e3 }),
        qp: QpSettings { tol: 1e-9, ..Default::default() },
        ..Default::default()
    };
    let kernel = usvm::svm::svm_plus::default_gaussian(&data.features);
    let k = kernel.gram(&data.features).unwrap();
    let svm = svm_dual_by_clarabel(k.view(), &y, c, None);
    // Our own C-SVM (B = 0, σ' = 1) agrees with Clarabel.
    let ours_svm = -base.fit_svm(&data).unwrap().solutions[0].dual_objective;
    assert!(rel_diff(ours_svm, svm) < 1e-6, "{ours_svm} vs {svm}");
    let mut gaps = Vec::new();
    for rho in [1e-1, 1e-2, 1e-3, 1e-4] {
        let fit = SvmPlusParams { rho, ..base.clone() }.fit(&data).unwrap();
        assert!(fit.reports[0].converged(), "rho = {rho}");
        gaps.push(rel_diff(-fit.solutions[0].dual_objective, svm));
    }
    assert!(gaps.windows(2).all(|w| w[1] < w[0]), "{gaps:?}");
    assert!(gaps[3] < 1e-4, "{gaps:?}");
    // ρ → ∞: the correcting function is a constant; the dual keeps Σα ≤ nC only.
    let shared = svm_dual_by_clarabel(k.view(), &y, f64::INFINITY, Some(n as f64 * c));
    let fit = SvmPlusParams { rho: 1e6, ..base.clone() }.fit(&data).unwrap();
    assert!(
        rel_diff(-fit.solutions[0].dual_objective, shared) < 1e-4,
        "{} vs {shared}",
        -fit.solutions[0].dual_objective
    );
    assert!(rel_diff(shared, svm) > 1e-2, "the two limits differ on this problem");
}

#[test]
fn one_vs_rest_and_default_gamma() {
    let mut r = rng(41);
    let n = 60;
    let labels: Vec<i64> = (0..n).map(|i| (i % 3) as i64).collect();
    let x = Array2::from_shape_fn((n, 2), |(i, j)| 3.0 * ((labels[i] as usize + j) % 3) as f64 + normal(&mut r));
    let xs = Array2::from_shape_fn((n, 1), |(i, _)| labels[i] as f64);
    let data = Dataset::dense(x.clone(), labels.clone()).with_privileged(Features::dense(xs.clone()));
    let fit = SvmPlusParams::default().fit(&data).unwrap();
    assert_eq!(fit.model.coef.nrows(), 3);
    let acc = fit.model.predict(&data.features).unwrap().iter().zip(&labels).filter(|(a, b)| a == b).count();
    assert!(acc as f64 / n as f64 > 0.9);
    // γ = 1/D, D the mean squared distance of distinct pairs.
    let mut sum = 0.0;
    for i in 0..n {
        for j in 0..n {
            sum += (0..2).map(|k| (x[[i, k]] - x[[j, k]]).powi(2)).sum::<f64>();
        }
    }
    let d = sum / (n * (n - 1)) as f64;
    assert!(rel_diff(mean_squared_distance(&data.features), d) < 1e-12);
    assert_eq!(fit.model.kernel, Kernel::Rbf { gamma: 1.0 / mean_squared_distance(&data.features) });
    // Same data, same bits.
    let again = SvmPlusParams::default().fit(&data).unwrap();
    assert_eq!(fit.model, again.model);
}

#[test]
fn bad_input_is_a_typed_error() {
    let x = Array2::from_shape_fn((6, 2), |(i, j)| (i + j) as f64);
    let labels = vec![0, 1, 0, 1, 0, 1];
    let plain = Dataset::dense(x.clone(), labels.clone());
    assert!(matches!(SvmPlusParams::default().fit(&plain), Err(Error::Empty(_))));
    let short = plain.clone().with_privileged(Features::dense(Array2::zeros((5, 1))));
    assert!(matches!(SvmPlusParams::default().fit(&short), Err(Error::DimensionMismatch { .. })));
    let mut bad = Array2::zeros((6, 1));
    bad[[2, 0]] = f64::NAN;
    let nan = plain.clone().with_privileged(Features::dense(bad));
    assert!(matches!(SvmPlusParams::default().fit(&nan), Err(Error::NonFinite { index: 2, .. })));
    let good = plain.clone().with_privileged(Features::dense(Array2::ones((6, 1))));
    for params in [
        SvmPlusParams { c: 0.0, ..Default::default() },
        SvmPlusParams { rho: f64::INFINITY, ..Default::default() },
        SvmPlusParams { method: LupiMethod::Robust { lambda: -1.0, sigma_prime: 2.0 }, ..Default::default() },
        SvmPlusParams { method: LupiMethod::Robust { lambda: 1.0, sigma_prime: 0.0 }, ..Default::default() },
        SvmPlusParams { kernel_star: Some(Kernel::Rbf { gamma: -1.0 }), ..Default::default() },
        SvmPlusParams { qp: QpSettings { tol: 0.0, max_iter: 10 }, ..Default::default() },
    ] {
        assert!(matches!(params.fit(&good), Err(Error::InvalidParameter { .. })), "{params:?}");
    }
    let single = Dataset::dense(x, vec![1; 6]).with_privileged(Features::dense(Array2::ones((6, 1))));
    assert!(matches!(SvmPlusParams::default().fit(&single), Err(Error::SingleClass { .. })));
    // Cross-validation splits carry the privileged rows along.
    let picked = good.select(&[4, 1]);
    assert_eq!(picked.privileged.unwrap().n_samples(), 2);
}
