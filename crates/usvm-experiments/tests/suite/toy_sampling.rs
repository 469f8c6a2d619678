//! A fast version of the toy sampling experiment (thesis Fig. 3.4): LSVM trained on N samples per Gaussian
//! approaches the LSVM-GSU hyperplane as N grows, while LSVM on the means stays far from it.

use usvm_experiments::toy_sampling::{SamplingExperiment, ToySet};

#[test]
fn angle_to_gsu_decreases_with_the_sample_size() {
    let experiment = SamplingExperiment {
        set: ToySet { dim: 2, ..Default::default() },
        samples: vec![10, 200, 4_000],
        repeats: 3,
        ..Default::default()
    };
    let fits = std::sync::atomic::AtomicUsize::new(0);
    let outcome = experiment
        .run(&|| {
            fits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(fits.into_inner(), experiment.n_fits());
    let means: Vec<f64> = outcome.angles.iter().map(|a| a.mean()).collect();
    assert!(means.windows(2).all(|w| w[1] < w[0]), "mean angles {means:?} do not decrease");
    assert!(means[2] < 1.0 && means[0] > 2.0 * means[2], "{means:?}");
    // LSVM on the means ignores the covariances: farther from LSVM-GSU than even N = 10 samples.
    assert!(outcome.hinge_angle > means[0], "hinge {} vs {means:?}", outcome.hinge_angle);
    // Same seeds, same bits.
    let again = SamplingExperiment { samples: vec![200], ..experiment }.run(&|| {}).unwrap();
    assert_eq!(again.angles[0], outcome.angles[1]);
}

#[test]
fn invalid_settings_are_errors() {
    let bad = |e: SamplingExperiment| matches!(e.run(&|| {}), Err(usvm::Error::InvalidParameter { .. }));
    assert!(bad(SamplingExperiment { repeats: 0, ..Default::default() }));
    assert!(bad(SamplingExperiment { samples: vec![10, 0], ..Default::default() }));
    assert!(bad(SamplingExperiment { set: ToySet { dim: 0, ..Default::default() }, ..Default::default() }));
    assert!(bad(SamplingExperiment { set: ToySet { scale: f64::NAN, ..Default::default() }, ..Default::default() }));
    assert!(bad(SamplingExperiment { lambda: -1.0, ..Default::default() }));
}
