//! The JSON model file: exact round trips, and clear errors for malformed files.

use crate::common;

use usvm::model::{Coef, ModelFile};
use usvm::{Error, LinearMethod, LinearSvmParams};

#[test]
fn binary_round_trip_is_exact() {
    let data = common::random_dataset(30, "diag", 50, 4);
    let params = usvm::MethodParams::default_for("gsu").unwrap();
    let model = match usvm::fit(&params, &data, &Default::default()).unwrap().model {
        usvm::Model::Linear(m) => m,
        m => panic!("{m:?}"),
    };
    let file = ModelFile::from_linear(&model, "gsu", params.to_json());
    let text = file.to_json();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["format"], "usvm-model");
    assert_eq!(json["version"], 2);
    assert_eq!(json["classes"], serde_json::json!([0, 1]));
    assert!(json["coef"].as_array().unwrap().iter().all(|v| v.is_f64()));
    assert!(json["intercept"].is_f64());
    assert!(json["platt"].is_null());
    assert_eq!(json["params"]["regularization"]["lambda"], 0.01);
    assert_eq!(usvm::MethodParams::from_value(&json["params"]).unwrap(), params);
    let back = ModelFile::from_json(&text).unwrap();
    assert_eq!(back, file);
    assert_eq!(back.to_linear().unwrap(), model); // bit-exact floats
}

#[test]
fn one_vs_rest_round_trip() {
    let mut data = common::random_dataset(31, "none", 60, 3);
    data.labels = (0..60).map(|i| (i % 3) as i64).collect();
    let model = LinearSvmParams { method: LinearMethod::Hinge, ..Default::default() }.fit(&data).unwrap().model;
    let file = ModelFile::from_linear(&model, "hinge", serde_json::Value::Null);
    assert!(matches!(file.coef, Coef::OneVsRest(ref rows) if rows.len() == 3));
    assert_eq!(ModelFile::from_json(&file.to_json()).unwrap().to_linear().unwrap(), model);
}

#[test]
fn malformed_files_are_errors() {
    let data = common::random_dataset(32, "none", 20, 2);
    let model = LinearSvmParams::default().fit(&data).unwrap().model;
    let good = serde_json::to_value(ModelFile::from_linear(&model, "gsu", serde_json::Value::Null)).unwrap();
    let variants: Vec<(&str, serde_json::Value)> = vec![
        ("format", serde_json::json!("other")),
        ("version", serde_json::json!(5)),
        // `columns` needs version 3, and a strictly increasing list below n_features, one per coefficient.
        ("columns", serde_json::json!([0, 1])),
        ("n_features", serde_json::json!(3)),
        ("classes", serde_json::json!([1])),
        ("intercept", serde_json::json!([0.0, 1.0])),
    ];
    for (field, value) in variants {
        let mut v = good.clone();
        v[field] = value;
        let err = ModelFile::from_json(&v.to_string()).and_then(|f| f.to_linear()).unwrap_err();
        assert!(matches!(err, Error::Format(_)), "{field}: {err}");
    }
    assert!(matches!(ModelFile::from_json("{not json"), Err(Error::Format(_))));
}

#[test]
fn kernel_model_round_trip_keeps_only_support_vectors() {
    use ndarray::array;
    use usvm::{Features, Kernel, KernelModel, Model};
    let x = Features::dense(array![[0.0, 1.0], [1.0, 0.5], [2.0, -1.0], [0.3, 0.2]]);
    let coef = array![[0.5, 0.0, -0.25, 1.0 / 3.0], [0.0, 0.0, 0.1, 0.0], [0.0, 0.0, 0.0, -1.0]];
    let kernel = Kernel::Rbf { gamma: 0.7 };
    let model = KernelModel::from_training(kernel, vec![1, 2, 3], &x, coef, vec![0.1, -0.2, 0.3]);
    assert_eq!(model.n_support(), 3); // the second example has no weight in any output
    let file = ModelFile::from_kernel(&model, "svm", serde_json::json!({"C": 1.0}));
    let text = file.to_json();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["kernel"], serde_json::json!({"type": "rbf", "gamma": 0.7}));
    assert_eq!(json["support_vectors"]["dense"][1], serde_json::json!([2.0, -1.0]));
    let back = ModelFile::from_json(&text).unwrap();
    assert_eq!(back.to_model().unwrap(), Model::Kernel(model.clone()));
    assert!(matches!(back.to_linear(), Err(Error::Format(_))));
    // f_k(x) = Σ_j coef[k, j] k(x, s_j) + b_k, checked at a training point
    let f = model.decision_function(&x).unwrap();
    let k = |a: [f64; 2], b: [f64; 2]| kernel.eval(&a, &b);
    let want =
        0.5 * k([1.0, 0.5], [0.0, 1.0]) - 0.25 * k([1.0, 0.5], [2.0, -1.0]) + k([1.0, 0.5], [0.3, 0.2]) / 3.0 + 0.1;
    assert!((f[[1, 0]] - want).abs() < 1e-15);
    // a support vector with the wrong width is an error, not a panic
    let bad = text.replace("[\n        2.0,\n        -1.0\n      ]", "[2.0]");
    assert_ne!(bad, text);
    assert!(matches!(ModelFile::from_json(&bad).unwrap().to_model(), Err(Error::Format(_))));
}

/// One-vs-one kernel models: each support vector's coefficients stored once, in LIBSVM's `sv_coef` layout
/// (checked by hand on three classes), read back to the same model; sparse-enough dense support vectors
/// stored by their nonzeros and read back dense; a wrong `n_support` or an old version is an error.
#[test]
fn one_vs_one_kernel_model_round_trip_in_libsvm_layout() {
    use ndarray::array;
    use usvm::model::Multiclass;
    use usvm::{Features, Kernel, KernelModel, Model};
    // Support vectors: two of class 0, one of class 1, one of class 2; pairs (0,1), (0,2), (1,2).
    let support = Features::dense(array![[0.0, 1.0, 0.0], [0.0, 0.0, 0.5], [2.0, 0.0, 0.0], [0.0, 0.0, -1.0]]);
    let coef = array![[0.5, 0.25, -0.75, 0.0], [0.0, 0.125, 0.0, -0.125], [0.0, 0.0, 0.3, -0.3]];
    let model = KernelModel {
        kernel: Kernel::Rbf { gamma: 0.7 },
        classes: vec![4, 5, 9],
        support,
        coef,
        intercept: vec![0.1, -0.2, 0.3],
        multiclass: Multiclass::OneVsOne,
        n_support: vec![2, 1, 1],
    };
    let text = ModelFile::from_kernel(&model, "svm", serde_json::json!({})).to_json();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["version"], 4);
    assert_eq!(json["multiclass"], "ovo");
    assert_eq!(json["n_support"], serde_json::json!([2, 1, 1]));
    // Row o (o < c) or o - 1 (o > c) holds a class-c vector's coefficient in its pair with o.
    assert_eq!(json["coef"], serde_json::json!([[0.5, 0.25, -0.75, -0.125], [0.0, 0.125, 0.3, -0.3]]));
    assert_eq!(json["support_vectors"]["dense_nonzeros"]["indices"], serde_json::json!([1, 2, 0, 2]));
    let back = ModelFile::from_json(&text).unwrap().to_model().unwrap();
    assert_eq!(back, Model::Kernel(model.clone()));
    let bad = text.replace("\"n_support\": [\n    2,\n    1,\n    1\n  ]", "\"n_support\": [2, 2]");
    assert_ne!(bad, text);
    assert!(matches!(ModelFile::from_json(&bad).unwrap().to_model(), Err(Error::Format(_))));
    let old = text.replace("\"version\": 4", "\"version\": 2");
    assert!(matches!(ModelFile::from_json(&old).unwrap().to_model(), Err(Error::Format(_))));
}

/// Above 16,384 stored values the support vectors are packed (base64 of varint index gaps and f64 bytes):
/// read back exactly, dense or sparse as they were, and the file is smaller than its decimal form.
#[test]
fn large_kernel_models_pack_their_support_vectors_exactly() {
    use ndarray::Array2;
    use usvm::{Features, Kernel, KernelModel, Model};
    let mut r = common::rng(9);
    let x =
        Array2::from_shape_fn((400, 80), |(i, j)| if (i + j) % 3 == 0 { 0.0 } else { common::normal(&mut r) / 7.0 });
    let coef = Array2::from_shape_fn((1, 400), |(_, j)| (j as f64).sin());
    let rows: Vec<Vec<(usize, f64)>> = x
        .rows()
        .into_iter()
        .map(|r| r.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, &v)| (j, v)).collect())
        .collect();
    let sparse = Features::Sparse(usvm::data::CsrMatrix::from_rows(80, &rows).unwrap());
    for support in [Features::dense(x.clone()), sparse] {
        let model =
            KernelModel::from_training(Kernel::Rbf { gamma: 0.1 }, vec![0, 1], &support, coef.clone(), vec![0.5]);
        let file = ModelFile::from_kernel(&model, "svm", serde_json::json!({}));
        let text = file.to_json();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(json["support_vectors"]["packed"].is_object());
        assert_eq!(ModelFile::from_json(&text).unwrap().to_model().unwrap(), Model::Kernel(model.clone()));
        let mut decimal = file.clone();
        decimal.support_vectors =
            Some(usvm::model::SupportVectors::Dense(x.rows().into_iter().map(|r| r.to_vec()).collect()));
        assert!(text.len() * 3 < decimal.to_json().len() * 2, "{} vs {}", text.len(), decimal.to_json().len());
    }
}
