//! Shared helpers for the integration tests: seeded random problems in every covariance form and an
//! independent hinge-SVM solution by a conic solver.
#![allow(dead_code)]

use ndarray::{Array2, Array3};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::{Covariances, CsrMatrix, Dataset, Features};

pub const FORMS: [&str; 6] = ["none", "iso", "diag", "sparse_diag", "lowrank", "full"];

pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

pub fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    StandardNormal.sample(rng)
}

/// `bench/dask_scaling.py`'s data: two random class centres of spread `1.5/√n`, random labels, unit noise
/// (heavily overlapping classes).
pub fn overlapping_classes(rng: &mut Xoshiro256PlusPlus, l: usize, n: usize) -> (Array2<f64>, Vec<i64>) {
    let centres: Vec<Vec<f64>> =
        (0..2).map(|_| (0..n).map(|_| normal(rng) * 1.5 / (n as f64).sqrt()).collect()).collect();
    let labels: Vec<i64> = (0..l).map(|_| i64::from(normal(rng) > 0.0)).collect();
    let x = Array2::from_shape_fn((l, n), |(i, j)| centres[labels[i] as usize][j] + normal(rng));
    (x, labels)
}

/// Uniform in `[low, high)`.
pub fn uniform(rng: &mut Xoshiro256PlusPlus, low: f64, high: f64) -> f64 {
    Uniform::new(low, high).unwrap().sample(rng)
}

/// A random SPD-or-PSD `n × n` matrix `B Bᵀ / n` (rank `r`).
pub fn random_psd(rng: &mut Xoshiro256PlusPlus, n: usize, r: usize, scale: f64) -> Array2<f64> {
    let b = Array2::from_shape_fn((n, r), |_| normal(rng));
    b.dot(&b.t()) * (scale / r as f64)
}

/// Random covariances of `l` examples in `form`, of typical size `scale`.
pub fn random_covariances(rng: &mut Xoshiro256PlusPlus, form: &str, l: usize, n: usize, scale: f64) -> Covariances {
    let u = Uniform::new(0.1, 1.0).unwrap();
    match form {
        "none" => Covariances::None,
        "iso" => Covariances::isotropic((0..l).map(|_| scale * u.sample(rng)).collect()),
        "diag" => Covariances::diagonal(Array2::from_shape_fn((l, n), |_| scale * u.sample(rng))),
        "sparse_diag" => {
            let mut rows = vec![Vec::new(); l];
            for row in rows.iter_mut() {
                for j in 0..n {
                    let (keep, v) = (u.sample(rng), scale * u.sample(rng));
                    if keep > 0.5 {
                        row.push((j, v));
                    }
                }
            }
            Covariances::sparse_diagonal(CsrMatrix::from_rows(n, &rows).unwrap())
        }
        "lowrank" => Covariances::low_rank(
            (0..l).map(|_| Array2::from_shape_fn((n, 2), |_| scale.sqrt() * 0.5 * normal(rng))).collect(),
            Some(Array2::from_shape_fn((l, n), |_| 0.1 * scale * u.sample(rng))),
        ),
        "full" => {
            let mut m = Array3::zeros((l, n, n));
            for i in 0..l {
                m.index_axis_mut(ndarray::Axis(0), i).assign(&random_psd(rng, n, n, scale));
            }
            Covariances::full(m)
        }
        _ => panic!("unknown form {form}"),
    }
}

/// Two Gaussian blobs in `n` dimensions, labels 0/1, means shifted by `separation` along the diagonal.
pub fn blobs(rng: &mut Xoshiro256PlusPlus, l: usize, n: usize, separation: f64) -> (Array2<f64>, Vec<i64>) {
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, n), |(i, _)| {
        let s = if labels[i] == 1 { 1.0 } else { -1.0 };
        s * separation / (n as f64).sqrt() + normal(rng)
    });
    (x, labels)
}

pub fn random_dataset(seed: u64, form: &str, l: usize, n: usize) -> Dataset<'static> {
    let mut r = rng(seed);
    let (x, labels) = blobs(&mut r, l, n, 2.0);
    let cov = random_covariances(&mut r, form, l, n, 0.5);
    Dataset::dense(x, labels).with_covariances(cov)
}

pub fn labels_pm1(data: &Dataset) -> Vec<f64> {
    let classes = data.classes();
    data.labels.iter().map(|&c| if c == classes[1] { 1.0 } else { -1.0 }).collect()
}

/// The hinge-loss SVM `min λ/2‖w‖² + (1/ℓ) Σ c_i max(0, 1 - y_i(wᵀx_i + b))` solved as a QP by Clarabel,
/// an interior-point conic solver independent of this crate. Returns `(w, b, objective)`.
/// Clarabel's settings for the independent cross-checks: quiet, the duality gap (absolute and relative)
/// and feasibility to `tol`, at most 500 interior-point iterations.
pub fn clarabel_settings(tol: f64) -> clarabel::solver::DefaultSettings<f64> {
    clarabel::solver::DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(tol)
        .tol_gap_rel(tol)
        .tol_feas(tol)
        .max_iter(500)
        .build()
        .unwrap()
}

pub fn hinge_svm_by_clarabel(x: &Features, y: &[f64], c: Option<&[f64]>, lambda: f64) -> (Vec<f64>, f64, f64) {
    hinge_svm_by_clarabel_with(x, y, c, lambda, true)
}

/// [`hinge_svm_by_clarabel`], with the bias held at 0 unless `intercept`.
pub fn hinge_svm_by_clarabel_with(
    x: &Features,
    y: &[f64],
    c: Option<&[f64]>,
    lambda: f64,
    intercept: bool,
) -> (Vec<f64>, f64, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let (l, n) = (x.n_samples(), x.n_features());
    let dim = n + 1 + l;
    let mut p = vec![vec![0.0; dim]; dim];
    for (j, row) in p.iter_mut().enumerate().take(n) {
        row[j] = lambda;
    }
    let mut q = vec![0.0; dim];
    for i in 0..l {
        q[n + 1 + i] = c.map_or(1.0, |c| c[i]) / l as f64;
    }
    let mut a = vec![vec![0.0; dim]; 2 * l];
    let mut b = vec![0.0; 2 * l];
    for i in 0..l {
        let xi = x.row_dense(i);
        for j in 0..n {
            a[i][j] = -y[i] * xi[j];
        }
        a[i][n] = -y[i];
        a[i][n + 1 + i] = -1.0;
        b[i] = -1.0;
        a[l + i][n + 1 + i] = -1.0;
    }
    let mut cones = vec![NonnegativeConeT(2 * l)];
    if !intercept {
        // b = 0, in a zero cone.
        let mut zero = vec![0.0; dim];
        zero[n] = 1.0;
        a.push(zero);
        b.push(0.0);
        cones.push(ZeroConeT(1));
    }
    let settings = clarabel_settings(1e-12);
    let (pm, am) = (CscMatrix::from(&p), CscMatrix::from(&a));
    let mut solver = DefaultSolver::new(&pm, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(
        matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved),
        "clarabel status {:?}",
        sol.status
    );
    (sol.x[..n].to_vec(), sol.x[n], sol.obj_val)
}

pub fn rel_diff(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
}
