//! BE-SVM: invariant similarities against brute force, the feature map's normalisation, the squared-hinge
//! solver, the margin relation of paper section 2.6, indefinite similarities, model files, bad input.

use crate::common;

use common::{normal, rel_diff, rng};
use ndarray::{Array1, Array2};
use usvm::besvm::{
    BasisExpansionParams, BasisSelection, BasisSize, BeSvmParams, Block, Normalisation, SquaredHingeSvmParams,
};
use usvm::kernel::similarity::{Grid, Invariant, Measure, Similarity, negative_spectrum};
use usvm::{CsrMatrix, Dataset, Error, Features, Kernel, LinearMethod, LinearSvmParams, Model, ModelFile};

fn grid(height: usize, width: usize, channels: usize) -> Grid {
    Grid { height, width, channels }
}

/// Value of cell (r, q), channel k, zero outside the grid.
fn at(g: Grid, x: &[f64], r: isize, q: isize, k: usize) -> f64 {
    if r < 0 || q < 0 || r >= g.height as isize || q >= g.width as isize {
        0.0
    } else {
        x[(r as usize * g.width + q as usize) * g.channels + k]
    }
}

/// Eq. 12 by brute force (eq. 11 when `hl = 0`): max over global shifts of the sum over cells of the
/// max over local shifts of the cell correlation.
fn brute(g: Grid, h: usize, hl: usize, x: &[f64], y: &[f64]) -> f64 {
    let (h, hl) = (h as isize, hl as isize);
    let mut best = f64::NEG_INFINITY;
    for zy in -h..=h {
        for zx in -h..=h {
            let mut total = 0.0;
            for r in 0..g.height as isize {
                for q in 0..g.width as isize {
                    let mut cell = f64::NEG_INFINITY;
                    for uy in -hl..=hl {
                        for ux in -hl..=hl {
                            let c: f64 = (0..g.channels)
                                .map(|k| at(g, x, r, q, k) * at(g, y, r + zy + uy, q + zx + ux, k))
                                .sum();
                            cell = cell.max(c);
                        }
                    }
                    total += cell;
                }
            }
            best = best.max(total);
        }
    }
    best
}

fn random_grids(seed: u64, n: usize, g: Grid) -> Array2<f64> {
    let mut r = rng(seed);
    Array2::from_shape_fn((n, g.n_features()), |_| normal(&mut r))
}

fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    (a - b).iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

#[test]
fn rigid_and_deformable_equal_brute_force_on_random_grids() {
    for (seed, g) in [(1, grid(4, 5, 1)), (2, grid(3, 3, 2)), (3, grid(5, 4, 3)), (4, grid(1, 6, 1))] {
        let a = random_grids(seed, 7, g);
        let b = random_grids(seed + 100, 11, g);
        for (h, hl) in [(0, 0), (1, 0), (2, 0), (5, 0), (0, 1), (1, 1), (2, 1)] {
            let m = if hl == 0 {
                Invariant::Rigid { grid: g, shift: h }
            } else {
                Invariant::Deformable { grid: g, shift: h, local_shift: hl }
            };
            let want = Array2::from_shape_fn((7, 11), |(i, j)| {
                brute(g, h, hl, a.row(i).as_slice().unwrap(), b.row(j).as_slice().unwrap())
            });
            let scale = want.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            let (fa, fb) = (Features::dense(a.clone()), Features::dense(b.clone()));
            let got = m.cross_similarity(&fa, &fb).unwrap();
            assert!(max_abs_diff(&got, &want) <= 1e-12 * scale, "{g:?} h={h} hl={hl}");
            // Either orientation of the row blocks (b larger than a), and sparse input.
            let got_t = m.cross_similarity(&fb, &fa).unwrap();
            let want_t = Array2::from_shape_fn((11, 7), |(i, j)| {
                brute(g, h, hl, b.row(i).as_slice().unwrap(), a.row(j).as_slice().unwrap())
            });
            assert!(max_abs_diff(&got_t, &want_t) <= 1e-12 * scale);
            let rows: Vec<Vec<(usize, f64)>> =
                a.rows().into_iter().map(|r| r.iter().copied().enumerate().collect()).collect();
            let sparse = Features::Sparse(CsrMatrix::from_rows(g.n_features(), &rows).unwrap());
            assert!(max_abs_diff(&m.cross_similarity(&sparse, &fb).unwrap(), &want) <= 1e-12 * scale);
        }
        // No shifts at all: the linear kernel.
        let (fa, fb) = (Features::dense(a.clone()), Features::dense(b.clone()));
        let linear = Kernel::Linear.cross_similarity(&fa, &fb).unwrap();
        let rigid0 = Invariant::Rigid { grid: g, shift: 0 }.cross_similarity(&fa, &fb).unwrap();
        assert!(max_abs_diff(&linear, &rigid0) <= 1e-12 * linear.iter().fold(0.0f64, |s, v| s.max(v.abs())));
    }
}

/// `x` shifted by `(dy, dx)` cells, zero-padded.
fn shifted(g: Grid, x: &[f64], dy: isize, dx: isize) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for r in 0..g.height as isize {
        for q in 0..g.width as isize {
            for k in 0..g.channels {
                out[(r as usize * g.width + q as usize) * g.channels + k] = at(g, x, r - dy, q - dx, k);
            }
        }
    }
    out
}

#[test]
fn rigid_similarity_is_invariant_to_shifts_within_its_range() {
    // 8×8 images, 2 channels, content in the central 4×4 (a zero border of 2 cells).
    let g = grid(8, 8, 2);
    let mut r = rng(7);
    let content = |r: &mut _| -> Vec<f64> {
        let mut x = vec![0.0; g.n_features()];
        for row in 2..6 {
            for q in 2..6 {
                for k in 0..2 {
                    x[(row * 8 + q) * 2 + k] = normal(r);
                }
            }
        }
        x
    };
    let (x, y) = (content(&mut r), content(&mut r));
    let rigid = Invariant::Rigid { grid: g, shift: 2 };
    let sim = |m: &dyn Similarity, a: &[f64], b: &[f64]| {
        let f = |v: &[f64]| Features::dense(Array2::from_shape_vec((1, v.len()), v.to_vec()).unwrap());
        m.cross_similarity(&f(a), &f(b)).unwrap()[[0, 0]]
    };
    let xx = sim(&rigid, &x, &x);
    let norm2: f64 = x.iter().map(|v| v * v).sum();
    assert!(rel_diff(xx, norm2) < 1e-14);
    let xy = sim(&Kernel::Linear, &x, &y);
    let mut linear_changed = false;
    for dy in -2..=2 {
        for dx in -2..=2 {
            let xt = shifted(g, &x, dy, dx);
            // A shifted copy is exactly as similar to x as x itself (Cauchy-Schwarz bounds every shift)...
            assert!(rel_diff(sim(&rigid, &x, &xt), xx) < 1e-14, "({dy}, {dx})");
            assert!(rel_diff(sim(&rigid, &xt, &x), xx) < 1e-14);
            // ...and shifting y keeps at least the unshifted correlation.
            let yt = shifted(g, &y, dy, dx);
            assert!(sim(&rigid, &x, &yt) >= xy - 1e-12 * xy.abs());
            // The linear similarity is not invariant (so this test can fail).
            linear_changed |= (dy, dx) != (0, 0) && rel_diff(sim(&Kernel::Linear, &x, &xt), xx) > 0.1;
        }
    }
    assert!(linear_changed);
    // Beyond the range the invariance is lost.
    let far = shifted(g, &x, 0, 3);
    assert!(sim(&rigid, &x, &far) < 0.99 * xx);
    // Deformable: at least the rigid value, equal to it with no local shift.
    let deformable = Invariant::Deformable { grid: g, shift: 2, local_shift: 1 };
    let rigid_only = Invariant::Deformable { grid: g, shift: 2, local_shift: 0 };
    assert!(sim(&deformable, &x, &y) >= sim(&rigid, &x, &y));
    assert_eq!(sim(&rigid_only, &x, &y), sim(&rigid, &x, &y));
}

fn two_blobs(seed: u64, n: usize, d: usize) -> (Array2<f64>, Vec<i64>) {
    let mut r = rng(seed);
    let labels: Vec<i64> = (0..n).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        let s = if labels[i] == 1 { 0.8 } else { -0.8 };
        s * if j % 2 == 0 { 1.0 } else { -0.5 } + normal(&mut r)
    });
    (x, labels)
}

#[test]
fn normalisation_statistics_come_from_the_training_set_only() {
    let (x, _) = two_blobs(3, 60, 4);
    let train = Features::dense(x.slice(ndarray::s![..40, ..]).to_owned());
    let test = Features::dense(x.slice(ndarray::s![40.., ..]).to_owned());
    let measures = vec![Measure::Kernel(Kernel::Rbf { gamma: 0.3 }), Measure::Kernel(Kernel::Linear)];
    let params = BasisExpansionParams {
        measures: measures.clone(),
        basis_size: BasisSize::Count(15),
        selection: BasisSelection::Random { seed: 5 },
        normalisation: Normalisation::BeSvm,
    };
    let (map, mapped) = params.fit_transform(&train).unwrap();
    assert_eq!(mapped.dim(), (40, 30));
    assert!(map.basis_indices.iter().all(|&i| i < 40));
    // The statistics by hand, from the 40 training rows: each block is centred with mean norm 1 there.
    for (k, m) in measures.iter().enumerate() {
        let raw = m.cross_similarity(&map.basis, &train).unwrap().reversed_axes();
        let mean = raw.mean_axis(ndarray::Axis(0)).unwrap();
        let scale = raw.rows().into_iter().map(|r| (&r - &mean).mapv(|v| v * v).sum().sqrt()).sum::<f64>() / 40.0;
        let Block::Centred { mean: m_fit, scale: s_fit } = &map.blocks[k] else { panic!("centred") };
        assert!(mean.iter().zip(m_fit).all(|(a, b)| rel_diff(*a, *b) < 1e-12));
        assert!(rel_diff(scale, *s_fit) < 1e-12);
        let block = mapped.slice(ndarray::s![.., 15 * k..15 * (k + 1)]);
        assert!(block.mean_axis(ndarray::Axis(0)).unwrap().iter().all(|v| v.abs() < 1e-12));
        let mean_norm = block.rows().into_iter().map(|r| r.dot(&r).sqrt()).sum::<f64>() / 40.0;
        assert!((mean_norm - 1.0).abs() < 1e-12);
    }
    // Transforming the training set again gives the same map; transforming test data changes nothing,
    // and each test row's image depends on that row only (no statistics of the test batch).
    assert_eq!(map.transform(&train).unwrap(), mapped);
    let t_all = map.transform(&test).unwrap();
    let t_one = map.transform(&Features::dense(x.slice(ndarray::s![45..46, ..]).to_owned())).unwrap();
    assert!(t_all.row(5).iter().zip(t_one.row(0)).all(|(a, b)| (a - b).abs() < 1e-12));
    assert_eq!(map.transform(&train).unwrap(), mapped);
    // The test block is not centred: its mean is not zero (the statistics are not re-estimated).
    assert!(t_all.mean_axis(ndarray::Axis(0)).unwrap().iter().any(|v| v.abs() > 1e-3));
    // Refitting with different test data around changes nothing: fit sees only what it is given.
    let (map2, _) = params.fit_transform(&train).unwrap();
    assert_eq!(map2, map);
}

/// The squared-hinge SVM dual `min ½βᵀ(Y G Y + I/(2C))β - 1ᵀβ, β ≥ 0` (no bias), or the hinge SVM dual
/// `min ½βᵀ Y G Y β - 1ᵀβ, 0 ≤ β ≤ C` (`squared = false`), solved by Clarabel. Returns `(β, dual value)`.
fn dual_by_clarabel(g: &Array2<f64>, y: &[f64], c: f64, squared: bool) -> (Vec<f64>, f64) {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::*;
    let l = y.len();
    let p: Vec<Vec<f64>> = (0..l)
        .map(|i| {
            (0..l)
                .map(|j| {
                    if j < i {
                        0.0
                    } else {
                        y[i] * y[j] * g[[i, j]] + if squared && i == j { 1.0 / (2.0 * c) } else { 0.0 }
                    }
                })
                .collect()
        })
        .collect();
    let q = vec![-1.0; l];
    let rows = if squared { l } else { 2 * l };
    let mut a = vec![vec![0.0; l]; rows];
    let mut b = vec![0.0; rows];
    for i in 0..l {
        a[i][i] = -1.0;
        if !squared {
            a[l + i][i] = 1.0;
            b[l + i] = c;
        }
    }
    let settings = common::clarabel_settings(1e-10);
    let (pm, am) = (CscMatrix::from(&p), CscMatrix::from(&a));
    let cones = [NonnegativeConeT(rows)];
    let mut solver = DefaultSolver::new(&pm, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    assert!(matches!(sol.status, SolverStatus::Solved | SolverStatus::AlmostSolved), "{:?}", sol.status);
    (sol.x.clone(), -sol.obj_val)
}

#[test]
fn margin_relation_with_rbf_and_all_training_points_as_basis() {
    // Paper 2.6: with s = k, all ℓ training points as basis and unnormalised maps φ̃(x_i) = K e_i, BE-SVM is
    // the kernel SVM with Gram matrix S_BXᵀ S_BX = K²: its dual optimum β gives w = Σ y_i β_i φ̃(x_i) = K Y β
    // and the margin (βᵀ Y K² Y β)^{-1}, against (αᵀ Y K Y α)^{-1} for the kernel SVM on K.
    let (x, labels) = two_blobs(11, 30, 2);
    let y: Vec<f64> = labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let xf = Features::dense(x.clone());
    // The BE-SVM map before normalisation is K: recover it from the fitted centred block.
    let params = BasisExpansionParams {
        measures: vec![Measure::Kernel(kernel)],
        basis_size: BasisSize::All,
        selection: BasisSelection::Index,
        normalisation: Normalisation::BeSvm,
    };
    let (map, mapped) = params.fit_transform(&xf).unwrap();
    assert_eq!(map.basis_indices, (0..30).collect::<Vec<_>>());
    let Block::Centred { mean, scale } = &map.blocks[0] else { panic!("centred") };
    let raw = Array2::from_shape_fn((30, 30), |(i, j)| mapped[[i, j]] * scale + mean[j]);
    let k = kernel.gram(&xf).unwrap();
    assert!(max_abs_diff(&raw, &k) < 1e-12);
    let k2 = k.dot(&k);
    let yv = Array1::from(y.clone());
    let data = Dataset::dense(k.clone(), labels.clone());
    for c in [0.1, 1.0, 10.0] {
        // Squared hinge (eq. 6): our Newton solver on φ̃ against the dual with K² + I/(2C).
        let ours = SquaredHingeSvmParams { c, fit_intercept: false, ..Default::default() }.fit(&data).unwrap();
        assert!(ours.reports[0].converged());
        let w = ours.model.coef.dense().row(0).to_owned();
        // KKT: β_i = 2C max(0, 1 - y_i wᵀφ̃_i) is the dual solution belonging to w, and w = Σ y_i β_i φ̃_i = KYβ.
        let f = k.dot(&w);
        let beta = Array1::from_shape_fn(30, |i| 2.0 * c * (1.0 - y[i] * f[i]).max(0.0));
        let by = &beta * &yv;
        let w_dual = k.dot(&by);
        assert!((&w - &w_dual).mapv(f64::abs).sum() <= 1e-8 * w.mapv(f64::abs).sum(), "C={c}");
        // Its dual value on K² equals our primal value (a duality certificate that w is optimal), and
        // Clarabel's dual optimum lies between them and below.
        let d_value = beta.sum() - 0.5 * by.dot(&k2.dot(&by)) - beta.dot(&beta) / (4.0 * c);
        let primal = ours.reports[0].objective * c * 30.0;
        assert!(rel_diff(primal, d_value) < 1e-10, "C={c}: {primal} vs {d_value}");
        let (_, dual) = dual_by_clarabel(&k2, &y, c, true);
        assert!(dual <= primal * (1.0 + 1e-12) && rel_diff(primal, dual) < 1e-6, "C={c}: {primal} vs {dual}");
        // The margin: (βᵀ Y K² Y β)^{-1} = 1/‖w‖².
        let margin_be = 1.0 / by.dot(&k2.dot(&by));
        assert!(rel_diff(margin_be, 1.0 / w.dot(&w)) < 1e-8);
        // Hinge (the paper's analysis): the library's exact hinge SVM on φ̃ against the dual on K².
        let hinge = LinearSvmParams {
            method: LinearMethod::Hinge,
            lambda: 1.0 / (c * 30.0),
            fit_intercept: false,
            ..Default::default()
        }
        .fit(&data)
        .unwrap();
        let wh = hinge.model.coef.dense().row(0).to_owned();
        let (beta_h, _) = dual_by_clarabel(&k2, &y, c, false);
        let byh = &Array1::from(beta_h) * &yv;
        assert!(rel_diff(1.0 / byh.dot(&k2.dot(&byh)), 1.0 / wh.dot(&wh)) < 1e-5, "C={c}: {:?}", hinge.reports[0]);
        // The kernel SVM on K itself: margin (αᵀYKYα)^{-1}, a different problem (K² weighs each eigenpair
        // (λ_i, v_i) of K by λ_i² instead of λ_i); both are positive and finite.
        let (alpha, _) = dual_by_clarabel(&k, &y, c, false);
        let ay = &Array1::from(alpha) * &yv;
        let margin_k = 1.0 / ay.dot(&k.dot(&ay));
        assert!(margin_k.is_finite() && margin_k > 0.0 && margin_be.is_finite() && margin_be > 0.0);
    }
}

/// Digit-like 6×6 images: a class-dependent stroke at a random position, plus noise.
fn shifted_patterns(seed: u64, n: usize) -> (Array2<f64>, Vec<i64>) {
    let g = grid(6, 6, 1);
    let mut r = rng(seed);
    let labels: Vec<i64> = (0..n).map(|i| (i % 2) as i64).collect();
    let mut x = Array2::zeros((n, 36));
    for i in 0..n {
        let (oy, ox) = ((normal(&mut r).abs() * 1.0) as usize % 3, (normal(&mut r).abs() * 1.0) as usize % 3);
        for t in 0..3 {
            let (rr, qq) = if labels[i] == 1 { (oy + t, ox + 1) } else { (oy + 1, ox + t) };
            x[[i, rr * g.width + qq]] = 1.0;
        }
        for v in x.row_mut(i).iter_mut() {
            *v += 0.1 * normal(&mut r);
        }
    }
    (x, labels)
}

#[test]
fn indefinite_similarities_train_without_error() {
    let (x, labels) = shifted_patterns(21, 60);
    let g = grid(6, 6, 1);
    let data = Dataset::dense(x.clone(), labels.clone());
    let xf = Features::dense(x);
    for m in [
        Measure::Invariant(Invariant::Rigid { grid: g, shift: 2 }),
        Measure::Invariant(Invariant::Deformable { grid: g, shift: 1, local_shift: 1 }),
    ] {
        let s = m.cross_similarity(&xf, &xf).unwrap();
        let sym = (&s + &s.t()) * 0.5;
        let (ratio, energy) = negative_spectrum(sym.view()).unwrap();
        assert!(ratio > 0.05 && energy > 1e-3, "{m:?}: {ratio} {energy}");
        for (selection, normalisation) in [
            (BasisSelection::Random { seed: 1 }, Normalisation::BeSvm),
            (BasisSelection::Index, Normalisation::BeSvm),
            (BasisSelection::KMedoids { seed: 2, max_iter: 50 }, Normalisation::BeSvm),
            (BasisSelection::Index, Normalisation::Nystroem),
        ] {
            let params = BeSvmParams {
                expansion: BasisExpansionParams {
                    measures: vec![m, Measure::Kernel(Kernel::Rbf { gamma: 0.1 })],
                    basis_size: BasisSize::Fraction(0.5),
                    selection,
                    normalisation,
                },
                svm: SquaredHingeSvmParams::default(),
            };
            let fit = params.fit(&data).unwrap();
            assert!(fit.reports.iter().all(|r| r.converged()), "{m:?} {selection:?}");
            let acc = fit.model.predict(&data.features).unwrap().iter().zip(&labels).filter(|(a, b)| a == b).count();
            assert!(acc >= 57, "{m:?} {selection:?} {normalisation:?}: {acc}/60");
        }
    }
}

#[test]
fn squared_hinge_solver_reaches_the_dual_optimum_with_intercept_and_multiclass() {
    // With an intercept the squared-hinge problem has the dual constraint Σ y_i β_i = 0; check optimality
    // by the gradient instead: ‖∇J‖ ≤ 1e-10‖∇J(0)‖, and one-vs-rest shapes.
    let (x, _) = two_blobs(5, 90, 5);
    let labels: Vec<i64> = (0..90).map(|i| (i % 3) as i64 * 10).collect();
    let data = Dataset::dense(x, labels);
    let fit = SquaredHingeSvmParams::default().fit(&data).unwrap();
    assert_eq!(fit.model.coef.dense().dim(), (3, 5));
    assert_eq!(fit.model.classes, vec![0, 10, 20]);
    for r in &fit.reports {
        assert!(r.converged() && r.gradient_norm <= 1e-10 * r.initial_gradient_norm.unwrap(), "{r:?}");
    }
}

#[test]
fn same_seed_same_basis_and_model_file_round_trip() {
    let (x, labels) = shifted_patterns(4, 40);
    let data = Dataset::dense(x, labels);
    let g = grid(6, 6, 1);
    let params = BeSvmParams {
        expansion: BasisExpansionParams {
            measures: vec![
                Measure::Invariant(Invariant::Deformable { grid: g, shift: 1, local_shift: 1 }),
                Measure::Kernel(Kernel::Rbf { gamma: 0.2 }),
            ],
            basis_size: BasisSize::Count(12),
            selection: BasisSelection::KMedoids { seed: 3, max_iter: 100 },
            normalisation: Normalisation::BeSvm,
        },
        svm: SquaredHingeSvmParams::default(),
    };
    let a = params.fit(&data).unwrap();
    let b = params.fit(&data).unwrap();
    assert_eq!(a.model, b.model);
    for normalisation in [Normalisation::BeSvm, Normalisation::Nystroem] {
        let p = BeSvmParams {
            expansion: BasisExpansionParams { normalisation, ..params.expansion.clone() },
            ..params.clone()
        };
        let model = p.fit(&data).unwrap().model;
        let file = ModelFile::from_basis_expansion(&model, "besvm", serde_json::to_value(&p).unwrap());
        let json = file.to_json();
        let back = ModelFile::from_json(&json).unwrap().to_model().unwrap();
        let Model::BasisExpansion(back) = back else { panic!("a BE-SVM model") };
        assert_eq!(back, model);
        let (fa, fb) =
            (model.decision_function(&data.features).unwrap(), back.decision_function(&data.features).unwrap());
        assert_eq!(fa, fb);
        // Existing keys are kept; the linear reader refuses it; a corrupted width is a format error.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        for key in ["format", "version", "method", "n_features", "classes", "coef", "intercept", "basis_expansion"] {
            assert!(value.get(key).is_some(), "{key}");
        }
        assert!(matches!(ModelFile::from_json(&json).unwrap().to_linear(), Err(Error::Format(_))));
        let mut bad = ModelFile::from_json(&json).unwrap();
        bad.basis_expansion.as_mut().unwrap().basis_indices.pop();
        assert!(matches!(bad.to_model(), Err(Error::Format(_))));
        let mut bad = ModelFile::from_json(&json).unwrap();
        bad.n_features = 35;
        assert!(matches!(bad.to_model(), Err(Error::Format(_))));
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let (x, labels) = two_blobs(1, 20, 4);
    let data = Dataset::dense(x.clone(), labels.clone());
    let ok = BeSvmParams {
        expansion: BasisExpansionParams {
            measures: vec![Measure::Kernel(Kernel::Rbf { gamma: 0.5 })],
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(ok.fit(&data).is_ok());
    let with = |f: &dyn Fn(&mut BeSvmParams)| {
        let mut p = ok.clone();
        f(&mut p);
        p.fit(&data).unwrap_err()
    };
    assert!(matches!(with(&|p| p.expansion.measures.clear()), Error::InvalidParameter { name: "similarity", .. }));
    assert!(matches!(with(&|p| p.expansion.basis_size = BasisSize::Count(0)), Error::InvalidParameter { .. }));
    assert!(matches!(with(&|p| p.expansion.basis_size = BasisSize::Count(21)), Error::InvalidParameter { .. }));
    assert!(matches!(with(&|p| p.expansion.basis_size = BasisSize::Fraction(1.5)), Error::InvalidParameter { .. }));
    assert!(matches!(with(&|p| p.svm.c = 0.0), Error::InvalidParameter { name: "C", .. }));
    assert!(matches!(with(&|p| p.svm.tol = f64::NAN), Error::InvalidParameter { name: "tol", .. }));
    assert!(matches!(
        with(&|p| p.expansion.measures = vec![Measure::Kernel(Kernel::Rbf { gamma: -1.0 })]),
        Error::InvalidParameter { name: "gamma", .. }
    ));
    // A grid that does not match the width of the input.
    let rigid = Measure::Invariant(Invariant::Rigid { grid: grid(3, 3, 1), shift: 1 });
    assert!(matches!(with(&|p| p.expansion.measures = vec![rigid]), Error::DimensionMismatch { .. }));
    let empty_grid = Measure::Invariant(Invariant::Rigid { grid: grid(0, 4, 1), shift: 1 });
    assert!(matches!(with(&|p| p.expansion.measures = vec![empty_grid]), Error::InvalidParameter { name: "grid", .. }));
    // Data: NaN, a single class, no examples.
    let mut nan = x.clone();
    nan[[3, 1]] = f64::NAN;
    assert!(matches!(ok.fit(&Dataset::dense(nan, labels.clone())), Err(Error::NonFinite { .. })));
    assert!(matches!(ok.fit(&Dataset::dense(x.clone(), vec![1; 20])), Err(Error::SingleClass { .. })));
    assert!(matches!(ok.fit(&Dataset::dense(Array2::zeros((0, 4)), vec![])), Err(Error::Empty(_))));
    // A constant map (every example identical) cannot be scaled.
    let same = Dataset::dense(Array2::ones((6, 4)), vec![0, 1, 0, 1, 0, 1]);
    assert!(matches!(ok.fit(&same), Err(Error::Degenerate { .. })));
    // Prediction with the wrong width, or non-finite values.
    let model = ok.fit(&data).unwrap().model;
    assert!(matches!(
        model.decision_function(&Features::dense(Array2::zeros((2, 3)))),
        Err(Error::DimensionMismatch { .. })
    ));
    let mut bad = Array2::zeros((2, 4));
    bad[[1, 2]] = f64::INFINITY;
    assert!(matches!(model.decision_function(&Features::dense(bad)), Err(Error::NonFinite { .. })));
}
