//! Every reader behind one entry point, for the fuzz targets (`fuzz/`) and the replay of their corpus in
//! `cargo test` (`tests/fuzz_corpus.rs`): `read(target, bytes)` must return, never panic or abort. An
//! input made of several files separates them by NUL bytes (which no text format contains).

use super::{
    ReadOptions, read_csv, read_csv_with_variances, read_libsvm, read_libsvm_precomputed, read_libsvm_with_variances,
    read_svmgsu, read_svmgsu_model,
};
use crate::model::ModelFile;

/// The fuzz targets: one per reader, by the name of its corpus folder.
pub const TARGETS: [&str; 7] =
    ["libsvm", "libsvm_variances", "csv", "csv_variances", "svmgsu", "precomputed", "model_file"];

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
            for low_rank in [false, true] {
                let mut cov = file(2);
                let cov: Option<(&mut dyn std::io::BufRead, &str)> =
                    if files.len() > 2 { Some((&mut cov, "cov")) } else { None };
                let options = ReadOptions { low_rank, ..ReadOptions::default() };
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
        _ => panic!("unknown fuzz target {target:?}; the targets are {TARGETS:?}"),
    }
}
