//! The Rust half of python/tests/test_agreement.py: the same deterministic data set (integer arithmetic,
//! identical in both languages) fitted through the Rust API, checked against the objectives recorded in
//! python/tests/data/agreement.json. The Python package must reproduce the same objectives to 1e-10.
//! Regenerate the file (after a deliberate change of the core) with
//! `USVM_WRITE_AGREEMENT=1 cargo test -p usvm-py --test agreement`.

use std::path::PathBuf;

use ndarray::{Array2, Array3};
use serde_json::{Value, json};
use usvm::solver::pegasos::SgdSettings;
use usvm::{Covariances, Dataset, LinearMethod, LinearSvmParams, Solver};

const N: usize = 80;
const D: usize = 5;

fn means_labels() -> (Array2<f64>, Vec<i64>) {
    let labels: Vec<i64> = (0..N).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((N, D), |(i, j)| {
        let shift = if labels[i] == 1 { 0.5 } else { -0.5 };
        ((i * 7 + j * 13) % 17) as f64 / 4.0 - 2.0 + shift
    });
    (x, labels)
}

fn variances() -> Array2<f64> {
    Array2::from_shape_fn((N, D), |(i, j)| 0.05 + ((i * 3 + j * 5) % 7) as f64 * 0.1)
}

/// `(name, covariance form, params)` of every case, in file order.
fn cases() -> Vec<(&'static str, &'static str, LinearSvmParams)> {
    let base = LinearSvmParams { lambda: 0.01, ..Default::default() };
    let with = |method| LinearSvmParams { method, ..base.clone() };
    vec![
        ("gsu", "diag", base.clone()),
        ("gsu", "full", base.clone()),
        ("gsu", "iso", base.clone()),
        ("hinge", "none", with(LinearMethod::Hinge)),
        ("iso", "diag", with(LinearMethod::Iso)),
        ("power", "diag", with(LinearMethod::Power { radius_scale: 1.0 })),
        ("sampling", "diag", with(LinearMethod::Sampling { samples: 5, seed: 3 })),
        ("gsu-subspace", "diag", with(LinearMethod::GsuSubspace { variance_fraction: 0.6 })),
        (
            "gsu-sgd",
            "diag",
            LinearSvmParams {
                solver: Solver::Sgd(SgdSettings { iterations: 500, batch: 20, seed: 1 }),
                ..base.clone()
            },
        ),
    ]
}

fn dataset(cov: &str) -> Dataset<'static> {
    let (x, labels) = means_labels();
    let v = variances();
    let covariances = match cov {
        "none" => Covariances::None,
        "diag" => Covariances::diagonal(v),
        "full" => Covariances::full(Array3::from_shape_fn((N, D, D), |(i, j, k)| if j == k { v[[i, j]] } else { 0.0 })),
        "iso" => Covariances::isotropic(v.column(0).to_vec()),
        _ => unreachable!(),
    };
    Dataset::dense(x, labels).with_covariances(covariances)
}

fn fit_all() -> Vec<Value> {
    cases()
        .into_iter()
        .map(|(name, cov, params)| {
            let fit = params.fit(&dataset(cov)).expect("fit");
            json!({
                "name": name,
                "cov": cov,
                "objective": fit.reports[0].objective,
                "coef": fit.model.coef.dense().row(0).to_vec(),
                "intercept": fit.model.intercept[0],
            })
        })
        .collect()
}

#[test]
fn rust_api_reproduces_the_recorded_objectives() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/tests/data/agreement.json");
    let fitted = fit_all();
    if std::env::var_os("USVM_WRITE_AGREEMENT").is_some() {
        let text = serde_json::to_string_pretty(&json!({ "n": N, "d": D, "lambda": 0.01, "cases": fitted })).unwrap();
        std::fs::write(&path, text + "\n").unwrap();
    }
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let recorded = recorded["cases"].as_array().unwrap();
    assert_eq!(recorded.len(), fitted.len());
    for (r, f) in recorded.iter().zip(&fitted) {
        assert_eq!(r["name"], f["name"]);
        let (a, b) = (r["objective"].as_f64().unwrap(), f["objective"].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-10 * a.abs(), "{}: recorded {a}, now {b}", r["name"]);
    }
}
