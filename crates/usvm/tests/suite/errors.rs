//! Bad input gives typed errors, never panics.

use ndarray::{Array2, Array3, array};
use usvm::solver::pegasos::SgdSettings;
use usvm::{Covariances, CsrMatrix, Dataset, Error, Features, LinearMethod, LinearSvmParams, Solver};

fn fit(data: &Dataset) -> Result<usvm::LinearFit, Error> {
    LinearSvmParams::default().fit(data)
}

fn base() -> Dataset<'static> {
    Dataset::dense(array![[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], vec![1, 1, 0, 0])
}

#[test]
fn empty_data() {
    let d = Dataset::dense(Array2::zeros((0, 2)), vec![]);
    assert!(matches!(fit(&d), Err(Error::Empty(_))));
    let d = Dataset::dense(Array2::zeros((3, 0)), vec![0, 1, 0]);
    assert!(matches!(fit(&d), Err(Error::Empty(_))));
}

#[test]
fn single_class() {
    let d = Dataset::dense(array![[1.0], [2.0]], vec![3, 3]);
    assert_eq!(fit(&d).unwrap_err(), Error::SingleClass { label: 3 });
}

#[test]
fn label_count_mismatch() {
    let d = Dataset { labels: vec![0, 1, 0].into(), ..base() };
    assert!(matches!(fit(&d), Err(Error::DimensionMismatch { what: "labels", expected: 4, found: 3 })));
}

#[test]
fn non_finite_features() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut d = base();
        if let Features::Dense(x) = &mut d.features {
            x.view_mut()[[2, 1]] = bad;
        }
        assert!(matches!(fit(&d), Err(Error::NonFinite { what: "features", index: 2, .. })), "{bad}");
    }
    let sparse = Features::Sparse(CsrMatrix::from_rows(2, &[vec![(0, 1.0)], vec![(1, f64::NAN)]]).unwrap());
    let d = Dataset {
        features: sparse,
        labels: vec![0, 1].into(),
        weights: None,
        covariances: Covariances::None,
        privileged: None,
    };
    assert!(matches!(fit(&d), Err(Error::NonFinite { index: 1, .. })));
}

/// The plain hinge checks the values of dense rows on their compressed copy (`usvm::fit` leaves them to it):
/// NaN, ±∞ and a value beyond the range are named as `Dataset::validate` names them (the first in row order),
/// whether the rows compress (a tenth non-zero) or not (all non-zero), through every method that compresses.
#[test]
fn bad_dense_values_are_named_whether_or_not_the_rows_compress() {
    use usvm::{FitOptions, MethodParams};
    let (l, n) = (40, 10);
    for fill in [1, n] {
        let mut x = Array2::zeros((l, n));
        for i in 0..l {
            for j in (i % n..n).step_by(n / fill).take(fill) {
                x[[i, j]] = (i + j) as f64 / 7.0 - 2.0;
            }
        }
        let y: Vec<i64> = (0..l as i64).map(|i| i % 2).collect();
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e160] {
            for (i, j) in [(7, 3), (0, 0), (l - 1, n - 1)] {
                let mut rows = x.clone();
                rows[[i, j]] = bad;
                rows[[l - 1, 0]] = f64::NAN; // a later fault: the first is named
                let data = Dataset::dense(rows, y.clone());
                let expected = data.validate().unwrap_err();
                for method in ["hinge", "gsu", "iso"] {
                    let params = MethodParams::default_for(method).unwrap();
                    let got = usvm::fit(&params, &data, &FitOptions::default()).unwrap_err();
                    // (As text: NaN is not equal to itself.)
                    assert_eq!(
                        got.to_string(),
                        expected.to_string(),
                        "{method}, {fill} of {n} filled, {bad} at ({i}, {j})"
                    );
                }
            }
        }
    }
}

/// A malformed covariance and the error it must produce.
type CovarianceCase = (Covariances, fn(&Error) -> bool);

#[test]
fn covariance_problems() {
    let cases: Vec<CovarianceCase> = vec![
        (Covariances::isotropic(vec![1.0, -0.5, 1.0, 1.0]), |e| matches!(e, Error::NegativeVariance { index: 1, .. })),
        (Covariances::isotropic(vec![1.0, 1.0, f64::NAN, 1.0]), |e| matches!(e, Error::NonFinite { index: 2, .. })),
        (Covariances::isotropic(vec![1.0; 3]), |e| matches!(e, Error::DimensionMismatch { expected: 4, found: 3, .. })),
        (Covariances::diagonal(Array2::from_elem((4, 3), 1.0)), |e| {
            matches!(e, Error::DimensionMismatch { expected: 2, found: 3, .. })
        }),
        (Covariances::diagonal(array![[1.0, 1.0], [1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]), |e| {
            matches!(e, Error::NegativeVariance { index: 2, .. })
        }),
        (
            Covariances::sparse_diagonal(
                CsrMatrix::from_rows(2, &[vec![(0, 1.0)], vec![], vec![(1, -2.0)], vec![]]).unwrap(),
            ),
            |e| matches!(e, Error::NegativeVariance { index: 2, .. }),
        ),
        (Covariances::low_rank(vec![Array2::zeros((3, 1)); 4], None), |e| {
            matches!(e, Error::DimensionMismatch { expected: 2, found: 3, .. })
        }),
        (Covariances::low_rank(vec![Array2::zeros((2, 1)); 4], Some(Array2::from_elem((4, 2), -1.0))), |e| {
            matches!(e, Error::NegativeVariance { index: 0, .. })
        }),
        // Finite factor entries whose squares overflow: Σ_3 is infinite (Power SVM's radius was, and its
        // dual coordinate descent panicked on the NaN margins).
        (
            Covariances::low_rank(
                vec![Array2::zeros((2, 1)), Array2::zeros((2, 1)), Array2::zeros((2, 1)), array![[1e162], [0.0]]],
                None,
            ),
            |e| matches!(e, Error::NonFinite { what: "covariance trace", index: 3, .. }),
        ),
        (Covariances::isotropic(vec![1.0, f64::MAX, 1.0, 1.0]), |e| {
            matches!(e, Error::NonFinite { what: "covariance trace", index: 1, .. })
        }),
    ];
    for (cov, check) in cases {
        let err = fit(&base().with_covariances(cov.clone())).unwrap_err();
        assert!(check(&err), "{cov:?}: {err}");
    }
}

#[test]
fn power_radius_overflow() {
    let power = LinearSvmParams { method: LinearMethod::Power { radius_scale: 1e300 }, ..Default::default() };
    let d = base().with_covariances(Covariances::isotropic(vec![1e10, 0.0, 0.0, 0.0]));
    assert!(matches!(power.fit(&d), Err(Error::NonFinite { index: 0, .. })));
}

#[test]
fn full_covariance_must_be_symmetric_and_psd() {
    let mut m = Array3::zeros((4, 2, 2));
    for i in 0..4 {
        m[[i, 0, 0]] = 1.0;
        m[[i, 1, 1]] = 1.0;
    }
    let mut asym = m.clone();
    asym[[1, 0, 1]] = 0.5;
    let err = fit(&base().with_covariances(Covariances::full(asym))).unwrap_err();
    assert!(matches!(err, Error::AsymmetricCovariance { index: 1, .. }), "{err}");
    let mut indefinite = m.clone();
    indefinite[[3, 0, 1]] = 2.0;
    indefinite[[3, 1, 0]] = 2.0; // eigenvalues 3 and -1
    let err = fit(&base().with_covariances(Covariances::full(indefinite))).unwrap_err();
    match err {
        Error::NotPositiveSemidefinite { index: 3, eigenvalue } => assert!((eigenvalue + 1.0).abs() < 1e-12),
        other => panic!("{other}"),
    }
    // PSD but singular is fine; round-off asymmetry is tolerated.
    let mut singular = m.clone();
    singular[[0, 1, 1]] = 0.0;
    singular[[2, 0, 1]] = 1e-17;
    assert!(fit(&base().with_covariances(Covariances::full(singular))).is_ok());
}

#[test]
fn weights() {
    for (w, index) in [(vec![1.0, -1.0, 1.0, 1.0], 1), (vec![1.0, 1.0, f64::NAN, 1.0], 2), (vec![0.0; 4], 0)] {
        let d = base().with_weights(w);
        assert!(matches!(fit(&d), Err(Error::InvalidWeight { index: i, .. }) if i == index));
    }
    let d = base().with_weights(vec![1.0; 3]);
    assert!(matches!(fit(&d), Err(Error::DimensionMismatch { what: "weights", .. })));
}

#[test]
fn invalid_parameters() {
    let bad = [
        LinearSvmParams { lambda: 0.0, ..Default::default() },
        LinearSvmParams { lambda: f64::NAN, ..Default::default() },
        LinearSvmParams { method: LinearMethod::GsuSubspace { variance_fraction: 1.5 }, ..Default::default() },
        LinearSvmParams { method: LinearMethod::Sampling { samples: 0, seed: 0 }, ..Default::default() },
        LinearSvmParams { method: LinearMethod::Power { radius_scale: -1.0 }, ..Default::default() },
        LinearSvmParams {
            solver: Solver::Sgd(SgdSettings { iterations: 0, ..Default::default() }),
            ..Default::default()
        },
        LinearSvmParams { solver: Solver::Sgd(SgdSettings { batch: 0, ..Default::default() }), ..Default::default() },
    ];
    for p in bad {
        assert!(matches!(p.fit(&base()), Err(Error::InvalidParameter { .. })), "{p:?}");
    }
    // Subspace learning needs directions.
    let d = base().with_covariances(Covariances::isotropic(vec![1.0; 4]));
    let p = LinearSvmParams { method: LinearMethod::GsuSubspace { variance_fraction: 0.9 }, ..Default::default() };
    assert!(matches!(p.fit(&d), Err(Error::InvalidParameter { name: "subspace_variance", .. })));
}

/// Features beyond a linear model's count as zero coefficients (LIBLINEAR's rule): they change nothing.
#[test]
fn prediction_with_more_features_than_a_linear_model() {
    let model = fit(&base()).unwrap().model;
    let narrow = Array2::from_shape_vec((2, 2), vec![0.5, -1.0, 2.0, 0.25]).unwrap();
    let mut wide = Array2::from_elem((2, 3), 7.0);
    wide.slice_mut(ndarray::s![.., ..2]).assign(&narrow);
    let (f, g) = (model.decision_function(&Features::dense(narrow)), model.decision_function(&Features::dense(wide)));
    assert_eq!(f.unwrap(), g.unwrap());
}

#[test]
fn zero_variance_everywhere_is_fine() {
    // Zero covariances (all σ_i = 0) are a valid input: LSVM-GSU is then the hinge SVM.
    let d = base().with_covariances(Covariances::diagonal(Array2::zeros((4, 2))));
    let fit = fit(&d).unwrap();
    assert!(fit.reports[0].converged());
}

#[test]
fn column_major_features_are_read_in_place_and_predict_as_the_same_rows() {
    use ndarray::{Array2, ShapeBuilder};
    use usvm::{Features, Kernel, KernelModel, LinearModel};
    let fortran = Array2::from_shape_vec((3, 2).f(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let (x, x_c) = (Features::dense(fortran.clone()), Features::dense(fortran.as_standard_layout().to_owned()));
    let (xv, xv_t) = (Features::dense_view(fortran.view()), Features::dense_view(fortran.t()));
    assert!(xv.is_view() && xv_t.is_view(), "a column-major view and its row-major transpose are both borrowed");
    let linear = LinearModel { classes: vec![0, 1], coef: ndarray::array![[1.0, -1.0]].into(), intercept: vec![0.0] };
    let expected = ndarray::array![[-3.0], [-3.0], [-3.0]];
    for f in [&x, &x_c, &xv] {
        assert_eq!(linear.decision_function(f).unwrap(), expected);
    }
    let support = Features::dense(ndarray::array![[0.0, 1.0]]);
    let kernel = KernelModel {
        kernel: Kernel::Linear,
        classes: vec![0, 1],
        support,
        coef: ndarray::array![[1.0]],
        intercept: vec![0.0],
        multiclass: Default::default(),
        n_support: Vec::new(),
    };
    for f in [&x, &xv] {
        assert_eq!(kernel.decision_function(f).unwrap(), ndarray::array![[4.0], [5.0], [6.0]]);
    }
}
