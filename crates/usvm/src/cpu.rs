//! CPU state that numerical kernels leave behind.

/// Clears the upper halves of the vector registers (`vzeroupper`) on x86-64 CPUs with AVX; a no-op
/// elsewhere.
///
/// faer's matrix products run AVX-512 kernels selected at run time and can return with the upper
/// vector state dirty. The rest of the crate is compiled for baseline x86-64 (SSE2), and SSE code that
/// runs on a thread with dirty upper state pays for it on every instruction: measured on the 2-core AMD
/// EPYC (AVX-512) benchmark machine, an SMO fit ran 2.2x slower (3.0 s → 6.6 s) on a thread that had
/// computed a large Gram block, and ran at full speed again after this call (bench/RESULTS.md). Call it
/// after faer products and at the entry of the solvers' hot loops.
#[inline]
pub fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx")]
        fn vzeroupper() {
            std::arch::x86_64::_mm256_zeroupper();
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked at run time), the only requirement of `vzeroupper`.
            unsafe { vzeroupper() }
        }
    }
}
