//! Progress events: every method's solvers report iterations through the observer of `FitOptions`, the
//! numbers never decrease within a binary problem, each problem's last event states its report, a fit
//! with an observer equals a fit without (bit for bit), and an observer can stop a fit.

use crate::common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use usvm::progress::{Iteration, Observer, Progress, Quantity};
use usvm::{Dataset, Error, FitOptions, MethodParams};

/// Overlapping blobs with diagonal covariances and privileged features (the features plus noise).
fn data() -> Dataset<'static> {
    let mut rng = common::rng(7);
    let mut d = common::random_dataset(7, "diag", 60, 3);
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

/// Every event, in order.
#[derive(Default)]
struct Record {
    iterations: Mutex<Vec<Iteration>>,
    phases: Mutex<Vec<String>>,
}

impl Observer for Record {
    fn observe(&self, event: Progress<'_>) {
        match event {
            Progress::Iteration(i) => self.iterations.lock().unwrap().push(i),
            Progress::Phase(p) => self.phases.lock().unwrap().push(p.to_string()),
            Progress::Done(_) => {}
        }
    }
}

/// Asks to stop after `after` iteration events.
struct StopAfter {
    after: usize,
    seen: AtomicUsize,
}

impl Observer for StopAfter {
    fn observe(&self, event: Progress<'_>) {
        if let Progress::Iteration(_) = event {
            self.seen.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn stop(&self) -> bool {
        self.seen.load(Ordering::Relaxed) >= self.after
    }
}

fn cases() -> Vec<(&'static str, Vec<(&'static str, Value)>)> {
    vec![
        ("gsu", vec![]),                                                             // Newton continuation
        ("hinge", vec![]),                                                           // dual CD
        ("gsu", vec![("solver", json!("sgd")), ("iterations", json!(300))]),         // SGD
        ("power", vec![]),                                                           // alternating rounds
        ("svm", vec![]),                                                             // SMO
        ("ksvm-igsu", vec![]),                                                       // Newton on a kernel factor
        ("sqhinge-gsu", vec![]),                                                     // L-BFGS
        ("sqhinge-gsu", vec![("solver", json!("sgd")), ("iterations", json!(300))]), // averaged SGD
        ("besvm", vec![]),                                                           // dual CD + Newton
        ("svmplus", vec![]),                                                         // the SVM+ QP
        ("l2svmplus", vec![]),                                                       // SMO
        ("rsvm-rhhq", vec![]),                                                       // SMO rounds
        ("tsvc", vec![("delta", json!(0.3))]),                                       // alternating rounds
        ("logistic", vec![]),                                                        // Newton
    ]
}

#[test]
fn every_method_reports_iterations_that_end_at_its_report_and_change_nothing() {
    let data = data();
    for (method, fields) in cases() {
        let p = params(method, &fields);
        let silent = usvm::fit(&p, &data, &FitOptions::default()).unwrap_or_else(|e| panic!("{method}: {e}"));
        let record = Record::default();
        let observed = usvm::fit(&p, &data, &FitOptions { observer: Some(&record), ..FitOptions::default() }).unwrap();
        assert_eq!(silent, observed, "{method} {fields:?}: an observer changed the fit");
        let events = record.iterations.into_inner().unwrap();
        assert!(events.iter().any(|e| e.quantity != Quantity::Final), "{method}: no solver event");
        let finals: Vec<&Iteration> = events.iter().filter(|e| e.quantity == Quantity::Final).collect();
        assert_eq!(finals.len(), silent.reports.len(), "{method}");
        for (k, r) in silent.reports.iter().enumerate() {
            let mine: Vec<&Iteration> = events.iter().filter(|e| e.problem.0 == k).collect();
            assert!(mine.windows(2).all(|w| w[0].iteration <= w[1].iteration), "{method}: {mine:?}");
            let last = mine.last().unwrap();
            assert_eq!(last.quantity, Quantity::Final, "{method}");
            assert_eq!((last.iteration, last.objective), (r.n_iter, r.objective), "{method}");
        }
        assert_eq!(record.phases.into_inner().unwrap(), ["validating", "fitting"], "{method}");
    }
}

#[test]
fn one_vs_rest_events_name_their_binary_problem() {
    let mut rng = common::rng(3);
    let (x, labels) = common::blobs(&mut rng, 30, 2, 2.0);
    let three: Vec<i64> = labels.iter().enumerate().map(|(i, &y)| if i % 3 == 0 { 2 } else { y }).collect();
    let data = Dataset::dense(x, three).with_covariances(usvm::Covariances::isotropic(vec![0.1; 30]));
    for method in ["gsu", "svm"] {
        let record = Record::default();
        let p = MethodParams::default_for(method).unwrap();
        usvm::fit(&p, &data, &FitOptions { observer: Some(&record), ..FitOptions::default() }).unwrap();
        let events = record.iterations.into_inner().unwrap();
        for k in 0..3 {
            assert!(events.iter().any(|e| e.problem == (k, 3) && e.quantity != Quantity::Final), "{method} {k}");
        }
        assert!(events.iter().all(|e| e.problem.1 == 3));
    }
}

#[test]
fn an_observer_can_stop_a_fit() {
    let data = data();
    for (method, fields) in [
        ("gsu", vec![]),
        ("svm", vec![("tol", json!(1e-12))]),
        ("power", vec![]),
        ("gsu", vec![("solver", json!("sgd")), ("iterations", json!(1_000_000))]),
    ] {
        let stop = StopAfter { after: 1, seen: AtomicUsize::new(0) };
        let p = params(method, &fields);
        let e = usvm::fit(&p, &data, &FitOptions { observer: Some(&stop), ..FitOptions::default() }).unwrap_err();
        assert!(matches!(e, Error::Interrupted), "{method}: {e}");
        // Stopped at the first event (the SGD's first is after 1% of its iterations): far from a full run.
        assert!(stop.seen.load(Ordering::Relaxed) <= 3, "{method}: {}", stop.seen.load(Ordering::Relaxed));
    }
}
