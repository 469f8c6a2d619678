//! Every linear method honours the relevance degrees `c_i`: `c_i = 0` is the same minimiser as removing
//! example `i`, and `c_i = 2` as duplicating it (with λ rescaled for the changed `1/ℓ` mean).

mod common;

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
