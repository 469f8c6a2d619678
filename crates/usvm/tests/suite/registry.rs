//! The method registry: every method fits through `usvm::fit`, and its report's `termination` is right
//! on a case that converges and on one that hits the iteration (or round) limit; the seed of
//! `FitOptions` decides every random draw; one-vs-rest works for every method that offers it.

use crate::common;

use serde_json::{Value, json};
use usvm::{Dataset, FitOptions, MethodParams, Termination};

/// Overlapping blobs with diagonal covariances and privileged features (the features plus noise).
fn data() -> Dataset<'static> {
    let mut rng = common::rng(7);
    let mut d = common::random_dataset(7, "diag", 40, 3);
    let noisy = d.features.to_dense().mapv(|v| v + 0.3 * common::normal(&mut rng));
    d.privileged = Some(usvm::Features::dense(noisy));
    d
}

fn params(method: &str, fields: &[(&str, Value)]) -> MethodParams {
    let mut p = MethodParams::default_for(method).unwrap();
    for (name, value) in fields {
        p.set(name, value).unwrap_or_else(|e| panic!("{method}: {e}"));
    }
    p
}

fn termination(p: &MethodParams, data: &Dataset) -> Termination {
    usvm::fit(p, data, &FitOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", p.name())).termination()
}

/// (method, fields that converge, fields that stop at a limit first).
/// Fields to set, by name.
type Fields = Vec<(&'static str, Value)>;

fn cases() -> Vec<(&'static str, Fields, Fields)> {
    let sgd = || vec![("solver", json!("sgd")), ("iterations", json!(3)), ("batch", json!(2))];
    vec![
        ("gsu", vec![], vec![("max_iter", json!(1))]),
        (
            "gsu",
            vec![("subspace_variance", json!(0.9))],
            vec![("subspace_variance", json!(0.9)), ("max_iter", json!(1))],
        ),
        ("hinge", vec![], sgd()), // Σ = 0: the exact route is dual CD, whose limit is its own
        ("iso", vec![], vec![("max_iter", json!(1))]),
        ("sampling", vec![], sgd()), // the samples have Σ = 0: the exact route is dual CD, whose limit is its own
        ("power", vec![], vec![("max_rounds", json!(1))]),
        ("svm", vec![], vec![("max_iter", json!(1))]),
        ("ksvm-igsu", vec![], vec![("max_iter", json!(1))]),
        ("sqhinge-gsu", vec![], vec![("max_iter", json!(1))]),
        ("besvm", vec![], vec![("max_iter", json!(1))]),
        ("svmplus", vec![], vec![("max_iter", json!(1))]),
        ("rsvmplus", vec![], vec![("max_iter", json!(1))]),
        (
            "tsvc",
            vec![("delta", json!(0.3))],
            vec![("delta", json!(0.3)), ("max_rounds", json!(1)), ("tol", json!(0.0))],
        ),
        ("logistic", vec![], vec![("max_iter", json!(1))]),
    ]
}

#[test]
fn every_method_reports_why_it_stopped() {
    let data = data();
    for (method, good, limited) in cases() {
        let p = params(method, &good);
        assert_eq!(termination(&p, &data), Termination::Converged, "{method} {good:?}");
        let p = params(method, &limited);
        assert_eq!(termination(&p, &data), Termination::MaxIterations, "{method} {limited:?}");
    }
}

#[test]
fn every_method_fits_one_vs_rest_and_the_seed_decides_the_draws() {
    let mut rng = common::rng(3);
    let (x, labels) = common::blobs(&mut rng, 30, 2, 2.0);
    let three: Vec<i64> = labels.iter().enumerate().map(|(i, &y)| if i % 3 == 0 { 2 } else { y }).collect();
    let mut data = Dataset::dense(x.clone(), three).with_covariances(usvm::Covariances::isotropic(vec![0.1; 30]));
    data.privileged = Some(usvm::Features::dense(x));
    for (method, _) in usvm::params::METHODS {
        let p = MethodParams::default_for(method).unwrap();
        if matches!(method, "tsvc" | "svmplus" | "rsvmplus") {
            continue; // binary only: refused below
        }
        let fit = usvm::fit(&p, &data, &FitOptions::default()).unwrap_or_else(|e| panic!("{method}: {e}"));
        assert_eq!(fit.model.classes(), &[0, 1, 2], "{method}");
        assert_eq!(fit.reports.len(), 3, "{method}");
    }
    let same = |seed| {
        let p = params("sampling", &[("samples", json!(3))]);
        let fit = usvm::fit(&p, &data, &FitOptions { seed, ..FitOptions::default() }).unwrap();
        fit.model.decision_function(&data.features).unwrap()
    };
    assert_eq!(same(5), same(5));
    assert_ne!(same(5), same(6));
}

#[test]
fn bad_parameters_are_named_before_fitting() {
    let data = data();
    for (method, field, value) in [
        ("gsu", "lambda", json!(-1.0)),
        ("svm", "C", json!(0.0)),
        ("svm", "gamma", json!(-2.0)),
        ("sampling", "samples", json!(0)),
        ("power", "radius_scale", json!(-1.0)),
        ("tsvc", "delta", json!(-0.5)),
        ("besvm", "basis_size", json!("0")),
        ("rsvmplus", "sigma_prime", json!(0.0)),
    ] {
        let mut p = MethodParams::default_for(method).unwrap();
        p.set(field, &value).unwrap();
        let e = usvm::fit(&p, &data, &FitOptions::default()).unwrap_err();
        match &e {
            usvm::Error::InvalidParameter { name, .. } => assert!(field.eq_ignore_ascii_case(name), "{method}: {e}"),
            _ => panic!("{method}: {e}"),
        }
    }
    // Checked before the no-privileged-information mode is taken.
    let mut p = MethodParams::default_for("svmplus").unwrap();
    p.set("rho", &json!(0.0)).unwrap();
    let e = usvm::fit(&p, &Dataset { privileged: None, ..data }, &FitOptions::default()).unwrap_err();
    assert!(matches!(e, usvm::Error::InvalidParameter { name: "rho", .. }), "{e}");
}

#[test]
fn without_privileged_features_the_lupi_methods_are_the_svm_with_their_c_and_kernel() {
    let with_star = data();
    let plain = Dataset { privileged: None, ..with_star.clone() };
    let scores = |p: &MethodParams, d: &Dataset| {
        let fit = usvm::fit(p, d, &FitOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", p.name()));
        (fit.model.decision_function(&d.features).unwrap(), fit.support)
    };
    for (kernel, gamma) in [("rbf", Some(0.3)), ("rbf", None), ("linear", None), ("polynomial", Some(0.5))] {
        let mut fields = vec![("C", json!(2.0)), ("kernel", json!(kernel)), ("tol", json!(1e-8))];
        if let Some(g) = gamma {
            fields.push(("gamma", json!(g)));
        }
        for method in ["svmplus", "rsvmplus", "l2svmplus"] {
            let lupi = params(method, &fields);
            let mut svm = params("svm", &fields);
            if kernel == "rbf" && gamma.is_none() {
                // The LUPI methods' default γ = 1/D (D the mean squared distance between rows).
                let usvm::Kernel::Rbf { gamma } = usvm::svm::svm_plus::default_gaussian(&plain.features) else {
                    unreachable!()
                };
                svm.set("gamma", &json!(gamma)).unwrap();
            }
            // The same machine, bit for bit, support indices included.
            assert_eq!(scores(&lupi, &plain), scores(&svm, &plain), "{method} {kernel}");
            // With x*, the method's own fit (which names no support indices), not the SVM.
            let fit = usvm::fit(&lupi, &with_star, &FitOptions::default()).unwrap();
            assert!(fit.support.is_none(), "{method} {kernel}");
        }
    }
}

#[test]
fn a_thread_count_runs_the_fit_on_its_own_pool() {
    let data = data();
    let p = MethodParams::default_for("svm").unwrap();
    let one = usvm::fit(&p, &data, &FitOptions { threads: Some(1), ..FitOptions::default() }).unwrap();
    let all = usvm::fit(&p, &data, &FitOptions::default()).unwrap();
    assert_eq!(one, all);
}

/// The coefficients of a linear or BE-SVM model.
fn hyperplanes(m: &usvm::Model) -> ndarray::Array2<f64> {
    match m {
        usvm::Model::Linear(m) => m.coef.dense().into_owned(),
        usvm::Model::BasisExpansion(m) => m.linear.coef.dense().into_owned(),
        _ => panic!("not a linear model"),
    }
}

#[test]
fn a_warm_start_reaches_the_same_hyperplane_in_fewer_iterations() {
    let data = data();
    // (method, its solver's fields, the regularisation field, the target value, a nearby value)
    let cases: Vec<(&str, Fields, &str, f64, f64)> = vec![
        ("gsu", vec![("tol", json!(1e-10))], "lambda", 1e-3, 2e-3),
        ("sqhinge-gsu", vec![("tol", json!(1e-10))], "lambda", 1e-3, 2e-3),
        ("sqhinge-gsu", vec![("solver", json!("newton")), ("tol", json!(1e-10))], "lambda", 1e-3, 2e-3),
        ("logistic", vec![("tol", json!(1e-10))], "lambda", 1e-3, 2e-3),
        ("besvm", vec![("tol", json!(1e-10))], "C", 10.0, 5.0),
    ];
    for (method, solver, reg, target, nearby) in cases {
        let with = |value: f64| params(method, &[solver.clone(), vec![(reg, json!(value))]].concat());
        let tight = with(target);
        let cold = usvm::fit(&tight, &data, &FitOptions::default()).unwrap();
        let near = usvm::fit(&with(nearby), &data, &FitOptions::default()).unwrap();
        let warm = usvm::fit(&tight, &data, &FitOptions { start: Some(&near.model), ..FitOptions::default() }).unwrap();
        let (a, b) = (hyperplanes(&cold.model), hyperplanes(&warm.model));
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-6 * scale, "{method}: {x} vs {y}");
        }
        let iterations = |f: &usvm::Fit| f.reports.iter().map(|r| r.n_iter).sum::<usize>();
        assert!(iterations(&warm) < iterations(&cold), "{method}: {} vs {}", iterations(&warm), iterations(&cold));
        // A start of other classes is ignored: the fit is the cold one, bit for bit.
        let mut other = near.model.clone();
        match &mut other {
            usvm::Model::Linear(m) => m.classes = vec![5, 6],
            usvm::Model::BasisExpansion(m) => m.linear.classes = vec![5, 6],
            _ => unreachable!(),
        }
        let ignored = usvm::fit(&tight, &data, &FitOptions { start: Some(&other), ..FitOptions::default() }).unwrap();
        assert_eq!(ignored, cold, "{method}");
    }
    // BE-SVM: a start on another map (another basis) is ignored too.
    let fields = |c: f64, size: &str| params("besvm", &[("C", json!(c)), ("basis_size", json!(size))]);
    let cold = usvm::fit(&fields(10.0, "0.5"), &data, &FitOptions::default()).unwrap();
    let other = usvm::fit(&fields(5.0, "0.25"), &data, &FitOptions::default()).unwrap();
    let opts = FitOptions { start: Some(&other.model), ..FitOptions::default() };
    assert_eq!(usvm::fit(&fields(10.0, "0.5"), &data, &opts).unwrap(), cold);
}

#[test]
fn the_svm_names_its_support_vectors_by_training_index() {
    let data = data();
    let fit = usvm::fit(&MethodParams::default_for("svm").unwrap(), &data, &FitOptions::default()).unwrap();
    let usvm::Model::Kernel(m) = &fit.model else { panic!("kernel") };
    let support = fit.support.as_ref().expect("the SVM keeps its support indices");
    assert_eq!(support.len(), m.support.n_samples());
    let (x, sv) = (data.features.to_dense(), m.support.to_dense());
    for (row, &i) in support.iter().enumerate() {
        assert_eq!(sv.row(row), x.row(i));
    }
    let linear = usvm::fit(&MethodParams::default_for("gsu").unwrap(), &data, &FitOptions::default()).unwrap();
    assert!(linear.support.is_none());
}

#[test]
fn a_value_whose_square_overflows_is_refused_before_any_solver_runs() {
    let mut data = common::random_dataset(3, "none", 30, 3);
    if let usvm::Features::Dense(x) = &mut data.features {
        x.view_mut()[[0, 2]] = 1e308;
    }
    let sgd = params("gsu", &[("solver", json!({"name": "sgd", "iterations": 50, "batch": 5}))]);
    match usvm::fit(&sgd, &data, &FitOptions::default()) {
        Err(usvm::Error::OutOfRange { index: 0, feature: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn borrowed_features_fit_and_predict_as_owned_ones() {
    use usvm::{CsrMatrix, Features};
    let owned = data();
    let dense = owned.features.to_dense();
    let rows: Vec<Vec<(usize, f64)>> =
        dense.rows().into_iter().map(|r| r.iter().copied().enumerate().collect()).collect();
    let sparse = CsrMatrix::from_rows(3, &rows).unwrap();
    let views = [
        Features::dense_view(dense.view()),
        Features::Sparse(CsrMatrix::borrowed(3, &sparse.indptr, &sparse.indices, &sparse.values)),
    ];
    for method in ["gsu", "hinge", "svm", "logistic"] {
        // Single precision reads dense rows in f32 (sparse ones in f64): the same problem only in double.
        let p = if method == "svm" { params(method, &[("precision", json!("double"))]) } else { params(method, &[]) };
        let expected = usvm::fit(&p, &owned, &FitOptions::default()).unwrap().model;
        for x in &views {
            assert!(x.is_view());
            let borrowed = Dataset { features: x.clone(), ..owned.clone() };
            let model = usvm::fit(&p, &borrowed, &FitOptions::default()).unwrap().model;
            let (a, b) = (model.decision_function(x).unwrap(), expected.decision_function(&owned.features).unwrap());
            let scale = b.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            assert!(a.iter().zip(&b).all(|(u, v)| (u - v).abs() <= 1e-8 * scale), "{method}: {a} vs {b}");
        }
    }
}

#[test]
fn borrowed_labels_fit_exactly_as_owned_ones() {
    let base = data();
    let three: Vec<i64> = (0..base.n_samples()).map(|i| (i % 3) as i64).collect();
    let one_thread = FitOptions { threads: Some(1), ..FitOptions::default() };
    for labels in [base.labels.to_vec(), three] {
        let owned = Dataset { labels: labels.clone().into(), ..base.clone() };
        let borrowed = Dataset { labels: labels.as_slice().into(), ..base.clone() };
        assert!(!owned.is_view() && borrowed.is_view(), "only the labels are borrowed");
        assert_eq!(borrowed, owned);
        assert_eq!(serde_json::to_string(&borrowed).unwrap(), serde_json::to_string(&owned).unwrap());
        let copied = borrowed.clone().into_owned();
        assert!(!copied.is_view());
        assert_eq!(copied, owned);
        let methods: Vec<&str> = if labels.contains(&2) {
            vec!["gsu", "svm", "logistic"]
        } else {
            usvm::params::METHODS.iter().map(|(name, _)| *name).collect()
        };
        for method in methods {
            let p = params(method, &[]);
            let expected = usvm::fit(&p, &owned, &one_thread).unwrap_or_else(|e| panic!("{method}: {e}"));
            let fit = usvm::fit(&p, &borrowed, &one_thread).unwrap();
            assert_eq!(fit.model, expected.model, "{method}");
            assert_eq!(fit.support, expected.support, "{method}");
        }
    }
    // Means and labels both borrowed: a view until `into_owned`.
    let (x, labels) = (base.features.to_dense(), base.labels.to_vec());
    let view = Dataset::dense_view(x.view(), &labels);
    assert!(view.is_view() && view.features.is_view());
    let copied = view.into_owned();
    assert!(!copied.is_view() && copied.labels == labels && copied.features.to_dense() == x);
}

/// A column-major (Fortran-ordered) array is borrowed as it is, and every method fits the model it fits
/// from the same values row-major: the strided row walks only change the order of the sums.
#[test]
fn column_major_features_are_borrowed_and_fit_as_row_major_ones() {
    use ndarray::ShapeBuilder;
    let base = data();
    let x = base.features.to_dense();
    let mut columns = ndarray::Array2::zeros(x.dim().f());
    columns.assign(&x);
    let three: Vec<i64> = (0..base.n_samples()).map(|i| (i % 3) as i64).collect();
    let one_thread = FitOptions { threads: Some(1), ..FitOptions::default() };
    for labels in [base.labels.to_vec(), three] {
        let rows = Dataset { labels: labels.clone().into(), ..base.clone() };
        let view = Dataset { features: usvm::Features::dense_view(columns.view()), ..rows.clone() };
        let usvm::Features::Dense(m) = &view.features else { unreachable!() };
        assert!(m.is_view() && m.is_column_major(), "borrowed in its own layout");
        assert_eq!(view.features, rows.features, "the same entries");
        // Every method at its defaults and with the fields of its converging case, and the kernel methods
        // with each kernel (the RBF ones read rows through their own code paths).
        let mut runs: Vec<(&str, Fields)> = usvm::params::METHODS.iter().map(|(name, _)| (*name, vec![])).collect();
        runs.extend(cases().into_iter().map(|(method, fields, _)| (method, fields)));
        for kernel in ["rbf", "linear", "polynomial"] {
            for method in ["svm", "ksvm-igsu", "svmplus", "rsvm-rhhq"] {
                runs.push((method, vec![("kernel", json!(kernel))]));
            }
            runs.push(("tsvc", vec![("kernel", json!(kernel)), ("delta", json!(0.3))]));
        }
        if labels.contains(&2) {
            runs.retain(|(method, _)| ["gsu", "hinge", "svm", "logistic", "besvm"].contains(method));
        }
        for (method, fields) in &runs {
            let p = params(method, fields);
            let expected = usvm::fit(&p, &rows, &one_thread).unwrap_or_else(|e| panic!("{method}: {e}")).model;
            let model = usvm::fit(&p, &view, &one_thread).unwrap_or_else(|e| panic!("{method}: {e}")).model;
            let a = model.decision_function(&view.features).unwrap();
            let b = expected.decision_function(&rows.features).unwrap();
            let scale = b.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            assert!(a.iter().zip(&b).all(|(u, v)| (u - v).abs() <= 1e-7 * scale), "{method}: {a} vs {b}");
        }
    }
}
