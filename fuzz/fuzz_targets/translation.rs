#![no_main]
//! `usvm::io::fuzz::read("translation", bytes)` must return on every input.

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| usvm::io::fuzz::read("translation", bytes));
