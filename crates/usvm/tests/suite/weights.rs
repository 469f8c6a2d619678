//! Every linear method honours the relevance degrees `c_i`: `c_i = 0` is the same minimiser as removing
//! example `i`, and `c_i = 2` as duplicating it (with λ rescaled for the changed `1/ℓ` mean).

use crate::common;

use usvm::{Dataset, LinearMethod, LinearSvmParams};

fn theta(params: &LinearSvmParams, data: &Dataset) -> Vec<f64> {
    let fit = params.fit(data).unwrap();
    assert!(fit.reports.iter().all(|r| r.converged()), "{:?}: {:?}", params.method, fit.reports);
    let mut t = fit.model.coef.dense().row(0).to_vec();
    t.push(fit.model.intercept[0]);
    t
}

fn close(a: &[f64], b: &[f64], what: &str) {
    for (u, v) in a.iter().zip(b) {
        assert!((u - v).abs() < 1e-6 * v.abs().max(1.0), "{what}: {u} vs {v}");
    }
}

#[test]
fn zero_weight_removes_and_double_weight_duplicates_for_every_linear_method() {
    let data = common::random_dataset(31, "diag", 40, 3);
    let (l, lambda) = (40.0, 0.05);
    // The last example, so that LSVM-sampling draws the same samples for the others.
    let i = 39;
    let methods = [
        LinearMethod::Gsu,
        LinearMethod::GsuSubspace { variance_fraction: 0.7 },
        LinearMethod::Hinge,
        LinearMethod::Iso,
        LinearMethod::Sampling { samples: 3, seed: 5 },
        LinearMethod::Power { radius_scale: 0.5 },
    ];
    for method in methods {
        let at = |lambda| LinearSvmParams { method: method.clone(), lambda, ..Default::default() };
        let mut w = vec![1.0; 40];
        w[i] = 0.0;
        let zero = theta(&at(lambda), &data.clone().with_weights(w));
        let removed = theta(&at(lambda * l / (l - 1.0)), &data.select(&(0..39).collect::<Vec<_>>()));
        close(&zero, &removed, &format!("{method:?} c=0"));
        // Sampling draws fresh samples for a duplicated row, so duplication is a different problem there.
        if matches!(method, LinearMethod::Sampling { .. }) {
            continue;
        }
        let mut w = vec![1.0; 40];
        w[i] = 2.0;
        let double = theta(&at(lambda), &data.clone().with_weights(w));
        let duplicated = theta(&at(lambda * l / (l + 1.0)), &data.select(&(0..40).chain([i]).collect::<Vec<_>>()));
        close(&double, &duplicated, &format!("{method:?} c=2"));
        // The expected hinge has no flat part, so the weight always matters (the hinge ignores an example
        // outside the margin).
        let smooth = matches!(method, LinearMethod::Gsu | LinearMethod::GsuSubspace { .. } | LinearMethod::Iso);
        assert!(
            !smooth || double.iter().zip(&theta(&at(lambda), &data)).any(|(u, v)| (u - v).abs() > 1e-4),
            "{method:?}"
        );
    }
}

/// Through the registry, one convention for every method: given `λ`, the data term is the weighted mean
/// `(1/Σc) Σ c_i L_i` — a weight of 2 is the example repeated at the same `λ`, and scaling every weight
/// changes nothing; given `C`, it is `C Σ c_i L_i` — a weight of 2 is the example repeated at the same `C`.
#[test]
fn through_the_registry_a_weight_of_two_is_a_repeated_example_at_the_same_lambda_or_c() {
    use serde_json::json;
    use usvm::{FitOptions, MethodParams};
    let data = common::random_dataset(7, "diag", 30, 3);
    let i = 4;
    let repeated = data.select(&(0..30).chain([i]).collect::<Vec<_>>());
    let mut w = vec![1.0; 30];
    w[i] = 2.0;
    let weighted = data.clone().with_weights(w.clone());
    let scaled = data.clone().with_weights(w.iter().map(|c| 0.37 * c).collect());
    let decision = |p: &MethodParams, d: &Dataset| {
        let fit = usvm::fit(p, d, &FitOptions::default()).unwrap();
        assert!(fit.reports.iter().all(|r| r.converged()), "{}: {:?}", p.name(), fit.reports);
        fit.model.decision_function(&data.features).unwrap().column(0).to_vec()
    };
    for (method, reg) in [
        ("gsu", json!({"lambda": 0.05})),
        ("hinge", json!({"lambda": 0.05})),
        ("ksvm-igsu", json!({"lambda": 0.05})),
        ("sqhinge-gsu", json!({"lambda": 0.05})),
        ("logistic", json!({"lambda": 0.05})),
        ("gsu", json!({"C": 0.5})),
        ("svm", json!({"C": 0.5})),
    ] {
        let p = MethodParams::from_json(&json!({"method": method, "regularization": reg}).to_string()).unwrap();
        let (a, b) = (decision(&p, &repeated), decision(&p, &weighted));
        close(&a, &b, &format!("{method} {reg}: weight 2 vs repeated"));
        if reg.get("lambda").is_some() {
            close(&decision(&p, &scaled), &b, &format!("{method} {reg}: weights scaled by 0.37"));
        }
    }
}
