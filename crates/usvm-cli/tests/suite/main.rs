//! The integration tests of the `usvm` command-line tool, one module per file.
//!
//! One test binary per crate: one link and one instantiation of the generic code for all of them
//! (run one file's tests with `cargo test -p usvm-cli --test suite <file>::`).

#[path = "../common/mod.rs"]
mod common;

mod besvm;
mod cli;
mod commit;
mod demo;
mod finite_or_loud;
mod ksvm_igsu;
mod lowrank;
mod lupi_baselines;
mod memory;
mod plot;
mod readme;
mod registry;
mod sqhinge;
mod svm;
mod svm_plus;
mod tsvc;
mod uncertainty;
mod weight_col;
