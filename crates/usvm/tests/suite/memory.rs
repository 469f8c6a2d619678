//! Bounded allocations (issue #18): a Gram matrix or dense covariances that cannot fit in memory are
//! refused with `Error::TooLarge` — naming what, its size and what to do — before anything is allocated,
//! instead of aborting. Each case asks for terabytes or more from inputs of a few megabytes.

use ndarray::Array2;
use usvm::covariance::Covariances;
use usvm::gaussians::{CovarianceForm, gaussians_from_repeats};
use usvm::io::{ReadOptions, read_svmgsu};
use usvm::kernel::Kernel;
use usvm::svm::{Delta, KernelSvmParams, SvmPlusParams, TsvcParams};
use usvm::{Dataset, Error};

/// A million examples of one feature (8 MB): every ℓ × ℓ matrix of them needs 8 TB.
const L: usize = 1_000_000;

fn million() -> Dataset<'static> {
    let x = Array2::from_shape_fn((L, 1), |(i, _)| (i % 1000) as f64 / 1000.0);
    Dataset::dense(x, (0..L).map(|i| (i % 2) as i64).collect::<Vec<_>>())
}

/// Asserts `TooLarge` naming `what`, at least `min_bytes`, with a message that states the size in binary
/// units and a remedy.
fn too_large<T: std::fmt::Debug>(result: usvm::Result<T>, what: &str, min_bytes: u64) {
    let err = result.expect_err("an impossible allocation must be refused");
    let Error::TooLarge { what: named, bytes, available, remedy, .. } = &err else { panic!("{err:?}") };
    assert!(named.contains(what), "{err}");
    assert!(bytes.is_none_or(|b| b >= min_bytes && b > *available), "{err:?}");
    assert!(!remedy.is_empty());
    let text = err.to_string();
    assert!(text.contains("would take") && text.contains("iB") && text.contains(remedy), "{text}");
}

#[test]
fn gram_matrices_beyond_memory_are_errors() {
    let data = million();
    too_large(Kernel::Rbf { gamma: 1.0 }.gram(&data.features), "kernel matrix", 8 * (L * L) as u64);
    // Kernel TSVC holds three ℓ × ℓ matrices.
    let tsvc = TsvcParams { kernel: Kernel::Rbf { gamma: 1.0 }, delta: Delta::Uniform(0.1), ..Default::default() };
    too_large(tsvc.fit(&data), "kernel TSVC", 24 * (L * L) as u64);
    // SVM+ holds K and K* (R-SVM+ more).
    let lupi = Dataset { privileged: Some(data.features.clone()), ..data.clone() };
    too_large(SvmPlusParams::default().fit(&lupi), "SVM+", 16 * (L * L) as u64);
    // The kernel SVM's column cache: a budget beyond memory, on ℓ² entries beyond it too.
    let svm = KernelSvmParams { kernel: Kernel::Rbf { gamma: 1.0 }, cache_mb: 1e9, ..Default::default() };
    too_large(svm.fit(&data), "column cache", 8 * (L * L) as u64);
}

#[test]
fn full_covariances_beyond_memory_are_errors() {
    // Two examples on 2^20 sparse features: their full covariances need 16 TiB.
    let n = 1 << 20;
    too_large(Covariances::isotropic(vec![1.0, 2.0]).to_full(2, n), "full covariances", 1 << 44);
    // Two examples observed twice on 2^19 features (16 MB): their full covariances need 4 TiB.
    let group = Array2::from_shape_fn((2, 1 << 19), |(r, j)| (r + j % 7) as f64);
    too_large(gaussians_from_repeats(&[group.view(), group.view()], CovarianceForm::Full), "full covariances", 1 << 42);
    // An svm-gsu covariance file whose one off-diagonal entry states 2^26 features: 32 PiB dense, and a
    // 2^26 × 2^26 matrix to factor for the low-rank form.
    let index = 1 << 26;
    let cov = format!("a 1,{index}:0.5 1,1:1 {index},{index}:1\n");
    for low_rank in [false, true] {
        let mut reader = cov.as_bytes();
        let err = read_svmgsu(
            ("a 1:1\n".as_bytes(), "means"),
            ("a 1\n".as_bytes(), "labels"),
            Some((&mut reader, "cov")),
            ReadOptions { n_features: None, low_rank },
        )
        .expect_err("a 2^26-dimensional dense covariance cannot be held");
        let text = err.to_string();
        assert!(text.starts_with("cov:"), "{text}");
        let what = if low_rank {
            "a dense covariance (67108864 × 67108864 floats)"
        } else {
            "full covariances (1 × 67108864 × 67108864 floats)"
        };
        assert!(text.contains(what) && text.contains("would take 32.0 PiB"), "{text}");
    }
}
