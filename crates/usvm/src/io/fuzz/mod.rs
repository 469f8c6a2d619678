//! Every reader behind one entry point, for the fuzz targets (`fuzz/`) and the replay of their corpus in
//! `cargo test` (`tests/fuzz_corpus.rs`): `read(target, bytes)` must return, never panic or abort. An
//! input made of several files separates them by NUL bytes (which no text format contains).
//!
//! The `usvm uncertainty` targets ([`uncertainty`]) read a CSV and a line of settings, run the
//! subcommand's library calls and render every output format; `fit` ([`fit`]) decodes a small dataset
//! and a method from the bytes and fits it.

mod fit;
mod uncertainty;

use super::{
    ReadOptions, read_csv, read_csv_with_variances, read_libsvm, read_libsvm_precomputed, read_libsvm_with_variances,
    read_svmgsu, read_svmgsu_model,
};
use crate::model::ModelFile;

/// The fuzz targets: one per reader, by the name of its corpus folder.
pub const TARGETS: [&str; 13] = [
    "libsvm",
    "libsvm_variances",
    "csv",
    "csv_variances",
    "svmgsu",
    "precomputed",
    "model_file",
    "repeated",
    "translation",
    "se_to_var",
    "welch",
    "blocks",
    "fit",
];

/// The dimension the svm-gsu target reads covariances with when its input states a larger number: a
/// dense covariance line is an `n × n` matrix (factored to low rank by an eigen-decomposition), so that
/// one index such as `1,3000:1` would cost seconds per input.
const SVMGSU_DIMENSION: usize = 64;

/// Runs the reader of `target` on `bytes`; `Ok` or `Err` are both fine, a panic is the finding.
pub fn read(target: &str, bytes: &[u8]) {
    let files: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
    let file = |k: usize| files.get(k).copied().unwrap_or_default();
    match target {
        "libsvm" => drop(read_libsvm(file(0), "data", None)),
        "libsvm_variances" => drop(read_libsvm_with_variances(file(0), "data", file(1), "var", None)),
        "csv" => drop(read_csv(file(0), "data", None)),
        "csv_variances" => drop(read_csv_with_variances(file(0), "data", file(1), "var", None)),
        "svmgsu" => {
            // Inferred dimension without covariances; with them, at most SVMGSU_DIMENSION.
            drop(read_svmgsu((file(0), "means"), (file(1), "labels"), None, ReadOptions::default()));
            let n_features = (largest_integer(bytes) > SVMGSU_DIMENSION as u64).then_some(SVMGSU_DIMENSION);
            for low_rank in [false, true] {
                let mut cov = file(2);
                let cov: Option<(&mut dyn std::io::BufRead, &str)> =
                    if files.len() > 2 { Some((&mut cov, "cov")) } else { None };
                let options = ReadOptions { low_rank, n_features };
                drop(read_svmgsu((file(0), "means"), (file(1), "labels"), cov, options));
            }
        }
        "precomputed" => drop(read_libsvm_precomputed(file(0), "data")),
        "model_file" => {
            let text = String::from_utf8_lossy(file(0));
            if let Ok(model) = ModelFile::from_json(&text) {
                drop(model.to_model());
            }
            drop(read_svmgsu_model(&text, "model"));
        }
        "repeated" | "translation" | "se_to_var" | "welch" | "blocks" => {
            uncertainty::run(target, file(0), &String::from_utf8_lossy(file(1)));
        }
        "fit" => fit::run(bytes),
        _ => panic!("unknown fuzz target {target:?}; the targets are {TARGETS:?}"),
    }
}

/// The largest run of ASCII digits in `bytes`, as a number (saturating).
fn largest_integer(bytes: &[u8]) -> u64 {
    bytes
        .split(|b| !b.is_ascii_digit())
        .map(|run| run.iter().fold(0u64, |v, &d| v.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
        .max()
        .unwrap_or(0)
}
