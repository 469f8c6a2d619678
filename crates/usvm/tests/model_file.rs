//! The JSON model file: exact round trips, and clear errors for malformed files.

mod common;

use usvm::model::{Coef, ModelFile};
use usvm::{Error, LinearMethod, LinearSvmParams};

#[test]
fn binary_round_trip_is_exact() {
    let data = common::random_dataset(30, "diag", 50, 4);
    let params = LinearSvmParams::default();
    let model = params.fit(&data).unwrap().model;
    let file = ModelFile::from_linear(&model, "gsu", serde_json::to_value(&params).unwrap());
    let text = file.to_json();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["format"], "usvm-model");
    assert_eq!(json["version"], 1);
    assert_eq!(json["classes"], serde_json::json!([0, 1]));
    assert!(json["coef"].as_array().unwrap().iter().all(|v| v.is_f64()));
    assert!(json["intercept"].is_f64());
    assert!(json["platt"].is_null());
    assert_eq!(json["hyperparameters"]["lambda"], 0.01);
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
        ("version", serde_json::json!(2)),
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
