//! The fuzz corpus (`fuzz/corpus/<target>/`: the test fixtures, every crash the fuzzers or users found, and
//! what the long runs added) replayed on stable: every reader returns on every input, none panics.

use std::path::Path;

#[test]
fn every_reader_returns_on_every_corpus_input() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for target in usvm::io::fuzz::TARGETS {
        let dir = corpus.join(target);
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let run = std::panic::catch_unwind(|| usvm::io::fuzz::read(target, &bytes));
            assert!(run.is_ok(), "{target}: {} panicked", path.display());
            n += 1;
        }
        assert!(n > 0, "{target}: empty corpus");
    }
}
