//! The integration tests of the `usvm` library, one module per file.
//!
//! One test binary per crate: one link and one instantiation of the generic code for all of them
//! (run one file's tests with `cargo test -p usvm --test suite <file>::`).

#[path = "../common/mod.rs"]
mod common;

mod besvm;
mod dual_cd;
mod errors;
mod fuzz_corpus;
mod kernel_igsu;
mod kernel_svm;
mod loss;
mod lupi_baselines;
mod memory;
mod model_file;
mod objective;
mod progress;
mod registry;
mod robustness;
mod sharded;
mod solvers;
mod sparse;
mod squared_hinge_gsu;
mod svm_plus;
mod tsvc;
mod weights;
