//! Bounded allocations (issue #18): inputs of a few lines or megabytes that ask for terabytes of dense
//! covariances or Gram matrices stop with exit status 1 and one line stating the size and what to do,
//! instead of aborting; no model is written.

use crate::common;

use common::*;

#[test]
fn dense_covariances_beyond_memory_exit_1_with_their_size() {
    let dir = temp_dir("memory-cov");
    // svm-gsu: one off-diagonal entry at feature 2^26 makes the covariance a dense 2^26 × 2^26 matrix.
    let (means, labels, cov) = (dir.join("m.txt"), dir.join("l.txt"), dir.join("c.txt"));
    std::fs::write(&means, "a 1:1\nb 1:-1\n").unwrap();
    std::fs::write(&labels, "a 1\nb -1\n").unwrap();
    std::fs::write(&cov, "a 1,67108864:0.5 1,1:1 67108864,67108864:1\nb 1,1:1\n").unwrap();
    let model = dir.join("model.json");
    let args = ["train", "--method", "gsu", "--means", s(&means), "--labels", s(&labels), "--cov", s(&cov)];
    let train = |extra: &[&str]| usvm(&[&args[..], &["--model", s(&model)], extra].concat());
    fails_with_all(
        &train(&[]),
        &["c.txt", "full covariances (2 × 67108864 × 67108864 floats) would take 64.0 PiB", "low-rank"],
    );
    fails_with_all(&train(&["--cov-type", "lowrank"]), &["c.txt:1", "a dense covariance", "would take 32.0 PiB"]);
    // LIBSVM with per-feature variances on a million features, asked for as full matrices.
    let (data, var) = (dir.join("d.svm"), dir.join("v.svm"));
    std::fs::write(&data, "1 1:1\n-1 1:-1\n").unwrap();
    std::fs::write(&var, "1 1:0.1\n-1 1:0.2\n").unwrap();
    let out = usvm(&[
        "train",
        "--method",
        "gsu",
        "--data",
        s(&data),
        "--var",
        s(&var),
        "--n-features",
        "1000000",
        "--cov-type",
        "full",
        "--model",
        s(&model),
    ]);
    fails_with_all(&out, &["full covariances (2 × 1000000 × 1000000 floats) would take 14.6 TiB", "diagonal"]);
    assert!(!model.exists());
}

#[test]
fn a_gram_matrix_beyond_memory_exits_1_with_its_size() {
    let dir = temp_dir("memory-gram");
    // A million examples of one feature (10 MB): kernel TSVC's three ℓ × ℓ matrices need 21.8 TiB.
    let data = dir.join("big.svm");
    std::fs::write(&data, (0..1_000_000).map(|i| format!("{} 1:{}\n", i % 2, i % 97)).collect::<String>()).unwrap();
    let model = dir.join("model.json");
    let out = usvm(&[
        "train",
        "--method",
        "tsvc",
        "--kernel",
        "rbf",
        "--delta",
        "0.1",
        "--data",
        s(&data),
        "--model",
        s(&model),
    ]);
    fails_with_all(
        &out,
        &["kernel matrices of kernel TSVC (3 × 1000000 × 1000000 floats) would take 21.8 TiB", "kernel approximation"],
    );
    assert!(!model.exists());
}

#[test]
fn a_stated_dimension_beyond_memory_exits_1_before_the_solver() {
    // Ten lines, one of them at index 10^9, read with the dimension the user states: the solver's dense
    // vectors (8 × 10^12 values) cannot exist, and that is said before any is allocated.
    let dir = temp_dir("memory-dimension");
    let data = dir.join("huge-index.svm");
    let lines: String =
        (0..10).map(|i| format!("{} 1:{i} 2:0.5{}\n", i % 2, if i == 0 { " 1000000000:2" } else { "" })).collect();
    std::fs::write(&data, lines).unwrap();
    let model = dir.join("model.json");
    for method in ["gsu", "hinge", "logistic"] {
        let out = usvm(&[
            "train",
            "--method",
            method,
            "--data",
            s(&data),
            "--n-features",
            "1000000000000",
            "--model",
            s(&model),
        ]);
        fails_with_all(
            &out,
            &["the solver's working vectors (8 × 1000000000000 floats) would take 58.2 TiB", "--n-features"],
        );
    }
    assert!(!model.exists());
}
