//! Bi & Zhang Table 1, linear target, the full protocol (50 trials per size, 10⁴ clean test points,
//! C = 1, δ_i = σ_i): TSVC's average test error is below SVC's in every column, and both are within a
//! factor of two of the paper's numbers. (The quadratic-target half is not reproduced: see
//! docs/reproductions.md.) On the same data, the cone form (`--form socp`) never returns a worse eq. 7 than
//! the alternating form, and says when its relaxation did not certify.

use usvm_experiments::tsvc_synthetic::{Target, TsvcSynthetic, run};

#[test]
fn table_1_linear_target_tsvc_beats_svc_in_every_column() {
    let protocol = TsvcSynthetic::default();
    let columns = run(&protocol, Target::Linear).unwrap();
    for (col, (paper_svc, paper_tsvc)) in columns.iter().zip(Target::Linear.paper()) {
        let (svc, tsvc) = (100.0 * col.svc, 100.0 * col.tsvc);
        assert!(tsvc < svc, "ℓ = {}: TSVC {tsvc:.2}% not below SVC {svc:.2}%", col.size);
        assert!(
            svc / paper_svc < 2.0 && paper_svc / svc < 2.0,
            "ℓ = {}: SVC {svc:.2}% vs paper {paper_svc}%",
            col.size
        );
        assert!(
            tsvc / paper_tsvc < 2.0 && paper_tsvc / tsvc < 2.0,
            "ℓ = {}: TSVC {tsvc:.2}% vs paper {paper_tsvc}%",
            col.size
        );
        assert!(col.rounds >= 2.0);
    }
}

/// TSVC's cone form on the paper's non-separable synthetic set (linear target, C = 1, δ_i = σ_i), 30 seeded
/// trials: it never returns a worse eq. 7 than the alternating form; where its relaxation does not certify
/// (checked here on the relaxation itself) the report says so and which solution it took, and where it
/// certifies the alternating form does not go below its lower bound.
#[test]
fn socp_form_is_never_worse_than_the_alternating_form_and_says_when_uncertified() {
    use usvm::solver::conic::{NormBound, tsvc_socp};
    use usvm::svm::{Delta, TsvcForm, TsvcParams};
    use usvm::{Candidate, Termination};
    use usvm_experiments::tsvc_synthetic::{NoiseScale, trial};
    let (mut uncertified, mut alternating_taken) = (0, 0);
    for t in 0..30u64 {
        let l = [20, 50, 100][t as usize % 3];
        let data = trial(Target::Linear, l, 10, NoiseScale::StandardDeviation, 7000 + t);
        let params = TsvcParams { c: 1.0, delta: Delta::PerExample(data.delta.clone()), ..Default::default() };
        let alt = params.fit(&data.train).unwrap().reports[0].report.clone();
        let socp = TsvcParams { form: TsvcForm::Socp, ..params }.fit(&data.train).unwrap().reports.remove(0);
        let (ja, js, lower) = (alt.objective, socp.report.objective, socp.lower_bound.unwrap());
        assert!(js <= ja * (1.0 + 1e-9), "trial {t}: the cone form's {js} above the alternating form's {ja}");
        // The relaxation certifies when its cone constraint ‖w‖ ≤ γ is active.
        let y: Vec<f64> = data.train.labels.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
        let joint = tsvc_socp(&data.train.features, &y, None, &data.delta, true, NormBound::Cost(1.0), 200).unwrap();
        let norm = joint.w.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm >= joint.gamma * (1.0 - 1e-6) {
            assert_eq!((socp.report.termination, socp.report.fallback), (Termination::Converged, None), "trial {t}");
            assert!(lower <= ja * (1.0 + 1e-9), "trial {t}: alternating {ja} below the certified bound {lower}");
        } else {
            uncertified += 1;
            assert_eq!(socp.report.termination, Termination::NotCertified, "trial {t}");
            let fallback = socp.report.fallback.expect("an uncertified relaxation is compared with the rounds");
            assert_eq!(fallback.alternating_objective, ja, "trial {t}");
            assert_eq!(js, ja.min(fallback.relaxation_objective), "trial {t}");
            alternating_taken += usize::from(fallback.taken == Candidate::Alternating);
        }
    }
    // The non-separable set exercises the fallback.
    assert!(uncertified >= 10 && alternating_taken >= 5, "{uncertified} uncertified, {alternating_taken} fell back");
}
