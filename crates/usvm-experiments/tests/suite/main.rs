//! The integration tests of the papers' protocols, one module per file.
//!
//! One test binary per crate: one link and one instantiation of the generic code for all of them
//! (run one file's tests with `cargo test -p usvm-experiments --test suite <file>::`).

mod lupi;
mod lupi_table1;
mod rhhq_start;
mod toy_sampling;
mod tsvc_circle;
mod tsvc_synthetic;
