//! RSVM-RHHQ over paper 004's η grid on the shipped digits-plus task (80 training images, L1-normalised
//! pooled pixels as in the Table 1 protocol, C = 10, RBF γ = 10): the rounds from the C-SVM (the default)
//! predict both classes at every η, where the rounds from `f = 0` stay at the constant classifier for
//! η ≥ 10; `best` is no worse than either start; the `degenerate` flag says exactly when the classifier
//! predicts one class on its training images.

use usvm::svm::{HqStart, RescaledHingeParams};
use usvm::{Dataset, Features, Kernel};
use usvm_experiments::lupi::digits_plus::DigitsPlus;
use usvm_experiments::lupi::table1::Preprocess;

const PAPER_ETAS: [f64; 8] = [0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0];

fn training_set(trial: u64) -> Dataset<'static> {
    let split = DigitsPlus::load().split(80, trial);
    let x = Preprocess::L1.apply(split.train.features.to_dense());
    Dataset { features: Features::dense(x), ..split.train }
}

#[test]
fn the_svm_start_keeps_both_classes_across_the_paper_eta_grid() {
    for trial in 0..2 {
        let data = training_set(trial);
        for eta in PAPER_ETAS {
            let params = |start| RescaledHingeParams {
                kernel: Kernel::Rbf { gamma: 10.0 },
                c: 10.0,
                eta,
                start,
                ..Default::default()
            };
            let fit = |start| params(start).fit(&data).unwrap();
            let (svm, zero, best) = (fit(HqStart::Svm), fit(HqStart::Zero), fit(HqStart::Best));
            assert_eq!(RescaledHingeParams::default().start, HqStart::Svm);
            for (name, f) in [("svm", &svm), ("zero", &zero), ("best", &best)] {
                let r = &f.reports[0];
                let predicted = f.model.predict(&data.features).unwrap();
                let one_class = predicted.iter().all(|&p| p == predicted[0]);
                assert_eq!(r.degenerate, one_class, "η = {eta}, start {name}: the flag says what the model predicts");
                assert!(r.objective_trace.windows(2).all(|w| w[1] <= w[0]), "η = {eta}, start {name}: monotone");
            }
            let (js, jz, jb) = (svm.reports[0].objective, zero.reports[0].objective, best.reports[0].objective);
            assert!(jb <= js.min(jz), "η = {eta}: best {jb} vs svm {js}, zero {jz}");
            assert!(!svm.reports[0].degenerate, "η = {eta}, trial {trial}: the C-SVM start predicts both classes");
            if eta >= 10.0 {
                // The failure the C-SVM start removes: from `f = 0` every first cost is `C·η/(e^η − 1)`,
                // and the rounds stay at the constant classifier (J = C × the misclassified minority).
                assert!(zero.reports[0].degenerate && js < 0.5 * jz, "η = {eta}: svm {js}, zero {jz}");
            }
        }
    }
}
