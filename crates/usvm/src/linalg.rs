//! Dense linear algebra: the small vector kernels every layer shares (`dot`, `axpy`, `norm2`), and the only
//! calls into faer — matrix products, Cholesky and LU solves, the symmetric eigen-decomposition — each of
//! which restores the vector state on exit.
//!
//! faer's kernels run AVX/AVX-512 code selected at run time and can return with the upper halves of the
//! vector registers dirty. The rest of the crate is compiled for baseline x86-64 (SSE2), and SSE code that
//! runs on a thread with dirty upper state pays for it on every instruction: on the 2-core AMD EPYC
//! (AVX-512) benchmark machine an SMO fit ran 2.2x slower (3.0 s → 6.6 s) on a thread that had computed a
//! large Gram block (bench/RESULTS.md). So every function here that calls faer ends with `vzeroupper`
//! (a `VectorState` guard, dropped on every exit path), and no other module calls faer.

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::features::Features;

/// `aᵀb` over the common length. From 16 entries on, a vector kernel chosen once at run time (the crate is
/// built for baseline x86-64) runs instead: AVX2 + FMA (four 4-wide fused multiply-add accumulators) or,
/// when asked, AVX-512F (four 8-wide accumulators, the tail by a masked load); see [`simd_level`]. Every path is
/// deterministic for a given CPU and level; they differ in rounding only.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    #[cfg(target_arch = "x86_64")]
    if n >= SIMD_MIN_LEN {
        match simd_level() {
            // SAFETY: the CPU has the level's features (checked at run time), each kernel's only requirement.
            SimdLevel::Avx512 => return unsafe { avx512::dot(&a[..n], &b[..n]) },
            SimdLevel::Avx2 => return unsafe { avx2::dot(&a[..n], &b[..n]) },
            SimdLevel::Portable => {}
        }
    }
    dot_portable(&a[..n], &b[..n])
}

/// [`dot`] without the vector kernel.
#[inline]
fn dot_portable(a: &[f64], b: &[f64]) -> f64 {
    // Four independent accumulators let the compiler vectorise without reassociating a single sum.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let chunks = n / 4;
    for k in 0..chunks {
        for l in 0..4 {
            acc[l] += a[4 * k + l] * b[4 * k + l];
        }
    }
    let mut tail = 0.0;
    for k in 4 * chunks..n {
        tail += a[k] * b[k];
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `aᵀb` of two `f32` vectors over the common length, each product and the sum in `f64` (exact products:
/// the only rounding is the summation's, as in [`dot`]). Half the memory traffic of [`dot`] for the same
/// entries; from 16 entries on an AVX2 + FMA kernel (four 4-wide accumulators of widened values).
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len().min(b.len());
    #[cfg(target_arch = "x86_64")]
    if n >= SIMD_MIN_LEN && simd_level() != SimdLevel::Portable {
        // SAFETY: AVX2 and FMA are present at both vector levels (checked at run time).
        return unsafe { avx2::dot_f32(&a[..n], &b[..n]) };
    }
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let (a4, a_tail) = a.as_chunks::<4>();
    let (b4, b_tail) = b.as_chunks::<4>();
    for (x, y) in a4.iter().zip(b4) {
        for l in 0..4 {
            acc[l] += x[l] as f64 * y[l] as f64;
        }
    }
    let tail: f64 = a_tail.iter().zip(b_tail).map(|(&x, &y)| x as f64 * y as f64).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Whether every `|v| ≤ limit` (false for NaN), in blocks of 64 as [`all_finite`].
#[inline]
pub fn all_within(values: &[f64], limit: f64) -> bool {
    values.chunks(64).all(|block| block.iter().fold(true, |ok, v| ok & (v.abs() <= limit)))
}

/// Whether every entry is finite, in blocks of 64 without an early exit inside a block (the compiler
/// vectorises the block; `Iterator::all` alone stops at every entry).
#[inline]
pub fn all_finite(values: &[f64]) -> bool {
    values.chunks(64).all(|block| block.iter().fold(true, |ok, v| ok & v.is_finite()))
}

/// Writes the non-zeros of `row` (every `v != 0`: NaN kept, `±0` left out) and their columns, in order, to
/// the front of `indices` and `values`, and returns how many: a dense row compressed. Both need room for
/// `row.len() + 4` entries (the vector kernel stores 4 at a time); `row` has at most 2³² entries.
///
/// With AVX2 (see [`simd_level`]) 4 entries at a time, without a branch: the non-zero lanes' mask picks
/// a permutation that moves them to the front, stored whole at the next free slot, which then advances by
/// the mask's count. 5,000 MNIST rows (784 entries, 19 % non-zero): 3.1 → 2.6 ms, where a pass that only
/// reads them takes 1.9 ms.
pub(crate) fn compact_nonzeros(row: &[f64], indices: &mut [u32], values: &mut [f64]) -> usize {
    let n = row.len();
    assert!(indices.len() >= n + 4 && values.len() >= n + 4, "room for the row and 4 more");
    assert!(n as u64 <= 1 << 32, "column indices are u32");
    #[cfg(target_arch = "x86_64")]
    if simd_level() != SimdLevel::Portable {
        // SAFETY: AVX2 is present at both vector levels (checked at run time); the buffers' room is asserted.
        return unsafe { avx2::compact_nonzeros(row, indices, values) };
    }
    compact_tail(row, 0, indices, values, 0)
}

/// [`compact_nonzeros`] from entry `j` of `row` and slot `k`, one entry at a time without a branch: every
/// entry is written at the next free slot, which advances only past a non-zero (a branch on `v != 0`
/// mispredicts at every other entry of 19 %-filled rows). Returns the next free slot.
fn compact_tail(row: &[f64], from: usize, indices: &mut [u32], values: &mut [f64], mut k: usize) -> usize {
    for (j, &v) in row.iter().enumerate().skip(from) {
        indices[k] = j as u32;
        values[k] = v;
        k += usize::from(v != 0.0);
    }
    k
}

/// `Σ_k values_k · w[indices_k]`, a sparse row times a dense vector, with four independent accumulators: the
/// gathers are independent, and one running sum would chain every addition behind the previous one (a
/// 30-entry row: 30 dependent additions). Panics if an index is out of `w`'s range.
#[inline]
pub fn gather_dot(indices: &[u32], values: &[f64], w: &[f64]) -> f64 {
    gather_dot_with(indices, values, |j| w[j])
}

/// [`gather_dot`] without a bounds check per entry.
///
/// # Safety
/// Every index must be below `w.len()`.
#[inline]
pub(crate) unsafe fn gather_dot_unchecked(indices: &[u32], values: &[f64], w: &[f64]) -> f64 {
    // SAFETY: the caller's promise.
    gather_dot_with(indices, values, |j| unsafe { *w.get_unchecked(j) })
}

/// `Σ_k values_k · w(indices_k)` with four accumulators.
#[inline(always)]
fn gather_dot_with(indices: &[u32], values: &[f64], w: impl Fn(usize) -> f64) -> f64 {
    let n = indices.len().min(values.len());
    let (indices, values) = (&indices[..n], &values[..n]);
    let mut acc = [0.0; 4];
    let (idx4, idx_tail) = indices.as_chunks::<4>();
    let (val4, val_tail) = values.as_chunks::<4>();
    for (i, v) in idx4.iter().zip(val4) {
        for l in 0..4 {
            acc[l] += v[l] * w(i[l] as usize);
        }
    }
    let mut tail = 0.0;
    for (&j, &v) in idx_tail.iter().zip(val_tail) {
        tail += v * w(j as usize);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `out[indices_k] += alpha · values_k` without a bounds check per entry.
///
/// # Safety
/// Every index must be below `out.len()`.
#[inline]
pub(crate) unsafe fn scatter_axpy_unchecked(indices: &[u32], values: &[f64], alpha: f64, out: &mut [f64]) {
    for (&j, &v) in indices.iter().zip(values) {
        // SAFETY: the caller's promise.
        unsafe { *out.get_unchecked_mut(j as usize) += alpha * v };
    }
}

/// `(aᵀb, aᵀa)` over the common length in one pass over `a`; each equal to [`dot`]'s value bit for bit.
#[inline]
pub fn dot_norm2(a: &[f64], b: &[f64]) -> (f64, f64) {
    let n = a.len().min(b.len());
    #[cfg(target_arch = "x86_64")]
    if n >= SIMD_MIN_LEN {
        match simd_level() {
            // SAFETY: as in `dot`.
            SimdLevel::Avx512 => return unsafe { avx512::dot_norm2(&a[..n], &b[..n]) },
            SimdLevel::Avx2 => return unsafe { avx2::dot_norm2(&a[..n], &b[..n]) },
            SimdLevel::Portable => {}
        }
    }
    (dot_portable(&a[..n], &b[..n]), dot_portable(&a[..n], &a[..n]))
}

/// `y ← y + αx` (over the common length; the vector kernels as in [`dot`]).
#[inline]
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if x.len().min(y.len()) >= SIMD_MIN_LEN {
        match simd_level() {
            // SAFETY: as in `dot`.
            SimdLevel::Avx512 => return unsafe { avx512::axpy(alpha, x, y) },
            SimdLevel::Avx2 => return unsafe { avx2::axpy(alpha, x, y) },
            SimdLevel::Portable => {}
        }
    }
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// A `dim × dim` matrix, column-major into `out`, from its products `product(e_j, column_j)` with the
/// unit vectors.
pub(crate) fn columns_from_products(dim: usize, out: &mut [f64], mut product: impl FnMut(&[f64], &mut [f64])) {
    let mut e = vec![0.0; dim];
    for (j, column) in out.chunks_mut(dim).enumerate() {
        e[j] = 1.0;
        product(&e, column);
        e[j] = 0.0;
    }
}

/// Below this length the vector kernels' call does not pay.
const SIMD_MIN_LEN: usize = 16;

/// The vector kernels [`dot`], [`dot_norm2`] and [`axpy`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdLevel {
    /// Baseline x86-64 (SSE2) or another architecture: plain loops the compiler vectorises.
    Portable,
    /// AVX2 and FMA: 4 lanes.
    Avx2,
    /// AVX-512F: 8 lanes.
    Avx512,
}

/// The level this process runs, decided once: AVX2 + FMA when the CPU has them, else portable. The
/// environment variable `USVM_SIMD` chooses another (`portable`, `avx2`, or `avx512` on CPUs with
/// AVX-512F), e.g. to compare levels on one machine; a value that is not a level, or a level the CPU lacks,
/// is reported on stderr (once) and the default runs. AVX-512 is not the default: on the benchmark machine
/// (AMD EPYC with AVX-512) its 8-lane kernels were no faster than AVX2's on vectors in cache and 10–25 %
/// slower over a 50,000 × 100 matrix (`examples/bench_simd.rs`, bench/RESULTS.md).
#[inline]
pub fn simd_level() -> SimdLevel {
    // Inlined into every kernel call: one relaxed load (the solvers call `dot` per coordinate on short rows).
    match SIMD_LEVEL.load(std::sync::atomic::Ordering::Relaxed) {
        0 => SimdLevel::Portable,
        1 => SimdLevel::Avx2,
        2 => SimdLevel::Avx512,
        _ => first_simd_level(),
    }
}

/// [`simd_level`]'s choice as 0, 1, 2 (`Portable`, `Avx2`, `Avx512`); `u8::MAX` before the first call.
static SIMD_LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(u8::MAX);

#[cold]
#[inline(never)]
fn first_simd_level() -> SimdLevel {
    let level = detect_simd_level();
    let code = match level {
        SimdLevel::Portable => 0,
        SimdLevel::Avx2 => 1,
        SimdLevel::Avx512 => 2,
    };
    SIMD_LEVEL.store(code, std::sync::atomic::Ordering::Relaxed);
    level
}

fn detect_simd_level() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    let (avx2, avx512) = {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx2") && has!("fma");
        (avx2, avx2 && has!("avx512f"))
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (avx2, avx512) = (false, false);
    let requested = std::env::var("USVM_SIMD").ok();
    let (level, warning) = choose_simd_level(requested.as_deref(), avx2, avx512);
    if let Some(warning) = warning {
        // Once per process: the level is decided once.
        eprintln!("usvm: {warning}");
    }
    level
}

/// The level for a `USVM_SIMD` value (`None`: unset) on a CPU with or without AVX2 + FMA and AVX-512F, and
/// what to tell the user when the value is not a level or the CPU lacks the level asked for.
fn choose_simd_level(requested: Option<&str>, avx2: bool, avx512: bool) -> (SimdLevel, Option<String>) {
    let best = if avx2 { SimdLevel::Avx2 } else { SimdLevel::Portable };
    match requested {
        None | Some("avx2") if avx2 => (SimdLevel::Avx2, None),
        None => (best, None),
        Some("portable") => (SimdLevel::Portable, None),
        Some("avx512") if avx512 => (SimdLevel::Avx512, None),
        Some(level @ ("avx2" | "avx512")) => {
            (best, Some(format!("USVM_SIMD={level}: this CPU does not have it; running {best:?} kernels")))
        }
        Some(other) => (
            best,
            Some(format!("USVM_SIMD={other:?} is not a level (portable, avx2 or avx512); running {best:?} kernels")),
        ),
    }
}

/// AVX2 + FMA kernels for [`dot`], [`dot_norm2`], [`axpy`] and [`compact_nonzeros`]. LLVM ends each with
/// `vzeroupper` (see the module documentation on the vector state).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `aᵀb` for `a.len() == b.len()`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len();
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_pd(); 4];
        let mut k = 0;
        // SAFETY (every load): k + 16 ≤ n, resp. k + 4 ≤ n, and both slices have n entries.
        unsafe {
            while k + 16 <= n {
                for (l, s) in acc.iter_mut().enumerate() {
                    let o = k + 4 * l;
                    *s = _mm256_fmadd_pd(_mm256_loadu_pd(pa.add(o)), _mm256_loadu_pd(pb.add(o)), *s);
                }
                k += 16;
            }
            while k + 4 <= n {
                acc[0] = _mm256_fmadd_pd(_mm256_loadu_pd(pa.add(k)), _mm256_loadu_pd(pb.add(k)), acc[0]);
                k += 4;
            }
        }
        let mut sum = reduce(acc);
        for j in k..n {
            sum = a[j].mul_add(b[j], sum);
        }
        sum
    }

    /// `aᵀb` in `f64` for `f32` slices with `a.len() == b.len()`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot_f32(a: &[f32], b: &[f32]) -> f64 {
        let n = a.len();
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_pd(); 4];
        let mut k = 0;
        // SAFETY (every load): k + 16 ≤ n, resp. k + 4 ≤ n, and both slices have n entries.
        unsafe {
            while k + 16 <= n {
                for (l, s) in acc.iter_mut().enumerate() {
                    let o = k + 4 * l;
                    let (x, y) = (_mm256_cvtps_pd(_mm_loadu_ps(pa.add(o))), _mm256_cvtps_pd(_mm_loadu_ps(pb.add(o))));
                    *s = _mm256_fmadd_pd(x, y, *s);
                }
                k += 16;
            }
            while k + 4 <= n {
                let (x, y) = (_mm256_cvtps_pd(_mm_loadu_ps(pa.add(k))), _mm256_cvtps_pd(_mm_loadu_ps(pb.add(k))));
                acc[0] = _mm256_fmadd_pd(x, y, acc[0]);
                k += 4;
            }
        }
        let mut sum = reduce(acc);
        for j in k..n {
            sum = (a[j] as f64).mul_add(b[j] as f64, sum);
        }
        sum
    }

    /// `(aᵀb, aᵀa)` for `a.len() == b.len()`, each summed exactly as [`dot`] sums it.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot_norm2(a: &[f64], b: &[f64]) -> (f64, f64) {
        let n = a.len();
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let (mut ab, mut aa) = ([_mm256_setzero_pd(); 4], [_mm256_setzero_pd(); 4]);
        let mut k = 0;
        // SAFETY (every load): k + 16 ≤ n, resp. k + 4 ≤ n, and both slices have n entries.
        unsafe {
            while k + 16 <= n {
                for l in 0..4 {
                    let o = k + 4 * l;
                    let va = _mm256_loadu_pd(pa.add(o));
                    ab[l] = _mm256_fmadd_pd(va, _mm256_loadu_pd(pb.add(o)), ab[l]);
                    aa[l] = _mm256_fmadd_pd(va, va, aa[l]);
                }
                k += 16;
            }
            while k + 4 <= n {
                let va = _mm256_loadu_pd(pa.add(k));
                ab[0] = _mm256_fmadd_pd(va, _mm256_loadu_pd(pb.add(k)), ab[0]);
                aa[0] = _mm256_fmadd_pd(va, va, aa[0]);
                k += 4;
            }
        }
        let (mut sab, mut saa) = (reduce(ab), reduce(aa));
        for j in k..n {
            sab = a[j].mul_add(b[j], sab);
            saa = a[j].mul_add(a[j], saa);
        }
        (sab, saa)
    }

    /// `((s₀ + s₁) + (s₂ + s₃))` summed lane-wise, then `(l₀ + l₁) + (l₂ + l₃)`.
    #[target_feature(enable = "avx2,fma")]
    fn reduce(acc: [__m256d; 4]) -> f64 {
        let s = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
        let mut lanes = [0.0; 4];
        // SAFETY: `lanes` holds four f64.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), s) };
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    }

    /// `y ← y + αx` over the common length.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
        let n = x.len().min(y.len());
        let (px, py) = (x.as_ptr(), y.as_mut_ptr());
        let a = _mm256_set1_pd(alpha);
        let mut k = 0;
        // SAFETY: k + 4 ≤ n and both slices have at least n entries; `y` is borrowed mutably once.
        unsafe {
            while k + 4 <= n {
                let v = _mm256_fmadd_pd(a, _mm256_loadu_pd(px.add(k)), _mm256_loadu_pd(py.add(k)));
                _mm256_storeu_pd(py.add(k), v);
                k += 4;
            }
        }
        for j in k..n {
            y[j] = alpha.mul_add(x[j], y[j]);
        }
    }

    /// For each mask `m` of 4 lanes: the `u32` lanes that move its set `f64` lanes to the front, in order
    /// (`_mm256_permutevar8x32_epi32`), those lanes' offsets, and their count.
    struct Compaction {
        permutations: [[u32; 8]; 16],
        offsets: [[u32; 4]; 16],
        counts: [u8; 16],
    }

    const COMPACTION: Compaction = {
        let mut t = Compaction { permutations: [[0; 8]; 16], offsets: [[0; 4]; 16], counts: [0; 16] };
        let mut m = 0;
        while m < 16 {
            let (mut front, mut lane) = (0, 0);
            while lane < 4 {
                if m & (1 << lane) != 0 {
                    t.permutations[m][2 * front] = 2 * lane as u32;
                    t.permutations[m][2 * front + 1] = 2 * lane as u32 + 1;
                    t.offsets[m][front] = lane as u32;
                    front += 1;
                }
                lane += 1;
            }
            t.counts[m] = front as u8;
            m += 1;
        }
        t
    };

    /// [`super::compact_nonzeros`], 4 entries at a time (the buffers have room for `row.len() + 4`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compact_nonzeros(row: &[f64], indices: &mut [u32], values: &mut [f64]) -> usize {
        static TABLE: Compaction = COMPACTION;
        let n = row.len();
        let (pr, pi, pv) = (row.as_ptr(), indices.as_mut_ptr(), values.as_mut_ptr());
        let (mut j, mut k) = (0, 0);
        // SAFETY: every load reads row[j..j + 4] with j + 4 ≤ n; every store writes slots k..k + 4 with
        // k ≤ j ≤ n - 4 (k counts kept entries), within the n + 4 slots of each buffer; the tables are
        // indexed by a 4-bit mask.
        unsafe {
            while j + 4 <= n {
                let v = _mm256_loadu_pd(pr.add(j));
                // `v != 0` lane-wise, true for NaN (unordered), as `f64`'s `!=`.
                let m = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_NEQ_UQ>(v, _mm256_setzero_pd())) as usize;
                let permutation = _mm256_loadu_si256(TABLE.permutations[m].as_ptr().cast());
                _mm256_storeu_si256(pv.add(k).cast(), _mm256_permutevar8x32_epi32(_mm256_castpd_si256(v), permutation));
                let offsets = _mm_loadu_si128(TABLE.offsets[m].as_ptr().cast());
                // (Wrapping add: the columns, below 2³², are the same bits as i32.)
                _mm_storeu_si128(pi.add(k).cast(), _mm_add_epi32(offsets, _mm_set1_epi32(j as i32)));
                k += TABLE.counts[m] as usize;
                j += 4;
            }
        }
        super::compact_tail(row, j, indices, values, k)
    }
}

/// AVX-512F kernels for [`dot`], [`dot_norm2`] and [`axpy`]: 8 lanes, the last `< 8` entries by a masked
/// load (masked-off lanes read nothing and add zero). LLVM ends each with `vzeroupper`.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// The mask of the first `r < 8` lanes.
    #[inline]
    fn first(r: usize) -> __mmask8 {
        ((1u16 << r) - 1) as __mmask8
    }

    /// `aᵀb` for `a.len() == b.len()`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dot(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len();
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm512_setzero_pd(); 4];
        let mut k = 0;
        // SAFETY (every load): k + 32 ≤ n, resp. k + 8 ≤ n, and both slices have n entries; the masked
        // loads read only the n - k < 8 entries left.
        unsafe {
            while k + 32 <= n {
                for (l, s) in acc.iter_mut().enumerate() {
                    let o = k + 8 * l;
                    *s = _mm512_fmadd_pd(_mm512_loadu_pd(pa.add(o)), _mm512_loadu_pd(pb.add(o)), *s);
                }
                k += 32;
            }
            while k + 8 <= n {
                acc[0] = _mm512_fmadd_pd(_mm512_loadu_pd(pa.add(k)), _mm512_loadu_pd(pb.add(k)), acc[0]);
                k += 8;
            }
            if k < n {
                let m = first(n - k);
                let (va, vb) = (_mm512_maskz_loadu_pd(m, pa.add(k)), _mm512_maskz_loadu_pd(m, pb.add(k)));
                acc[1] = _mm512_fmadd_pd(va, vb, acc[1]);
            }
        }
        reduce(acc)
    }

    /// `(aᵀb, aᵀa)` for `a.len() == b.len()`, each summed exactly as [`dot`] sums it.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dot_norm2(a: &[f64], b: &[f64]) -> (f64, f64) {
        let n = a.len();
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let (mut ab, mut aa) = ([_mm512_setzero_pd(); 4], [_mm512_setzero_pd(); 4]);
        let mut k = 0;
        // SAFETY: as in `dot`.
        unsafe {
            while k + 32 <= n {
                for l in 0..4 {
                    let o = k + 8 * l;
                    let va = _mm512_loadu_pd(pa.add(o));
                    ab[l] = _mm512_fmadd_pd(va, _mm512_loadu_pd(pb.add(o)), ab[l]);
                    aa[l] = _mm512_fmadd_pd(va, va, aa[l]);
                }
                k += 32;
            }
            while k + 8 <= n {
                let va = _mm512_loadu_pd(pa.add(k));
                ab[0] = _mm512_fmadd_pd(va, _mm512_loadu_pd(pb.add(k)), ab[0]);
                aa[0] = _mm512_fmadd_pd(va, va, aa[0]);
                k += 8;
            }
            if k < n {
                let m = first(n - k);
                let (va, vb) = (_mm512_maskz_loadu_pd(m, pa.add(k)), _mm512_maskz_loadu_pd(m, pb.add(k)));
                ab[1] = _mm512_fmadd_pd(va, vb, ab[1]);
                aa[1] = _mm512_fmadd_pd(va, va, aa[1]);
            }
        }
        (reduce(ab), reduce(aa))
    }

    /// `(s₀ + s₁) + (s₂ + s₃)` lane-wise, then the eight lanes summed (in `_mm512_reduce_add_pd`'s
    /// fixed order).
    #[target_feature(enable = "avx512f")]
    fn reduce(acc: [__m512d; 4]) -> f64 {
        _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(acc[0], acc[1]), _mm512_add_pd(acc[2], acc[3])))
    }

    /// `y ← y + αx` over the common length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
        let n = x.len().min(y.len());
        let (px, py) = (x.as_ptr(), y.as_mut_ptr());
        let a = _mm512_set1_pd(alpha);
        let mut k = 0;
        // SAFETY: k + 8 ≤ n and both slices have at least n entries, resp. the masked load and store touch
        // only the n - k < 8 entries left; `y` is borrowed mutably once.
        unsafe {
            while k + 8 <= n {
                let v = _mm512_fmadd_pd(a, _mm512_loadu_pd(px.add(k)), _mm512_loadu_pd(py.add(k)));
                _mm512_storeu_pd(py.add(k), v);
                k += 8;
            }
            if k < n {
                let m = first(n - k);
                let v = _mm512_fmadd_pd(a, _mm512_maskz_loadu_pd(m, px.add(k)), _mm512_maskz_loadu_pd(m, py.add(k)));
                _mm512_mask_storeu_pd(py.add(k), m, v);
            }
        }
    }
}

/// `‖a‖₂`.
#[inline]
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// The blocks of rows whose products [`Cholesky::normal`] sums: two (in parallel where there are two
/// threads) where the product costs at least 2²⁶ multiply-adds and a second `p × p` matrix at most 8 MB,
/// else one. A fixed number, not one per thread, so that the sum is the same on every machine. (The QP
/// route on 5,000 MNIST images, `p = 780`: product and factorisation 26 → 17 ms per iteration on two
/// cores, with the buffers of [`NormalPlan`].)
fn normal_blocks(m: usize, p: usize) -> usize {
    if p * p <= 1 << 20 && m.saturating_mul(p * p) >= 1 << 26 { 2 } else { 1 }
}

/// The cost of a multiply-add of [`Cholesky::normal`]'s parts in those of its dense product: in a
/// contiguous `axpy` of a scaled row ...
const AXPY_COST: usize = 6;
/// ... and scattered by a row's non-zeros.
const SCATTER_COST: usize = 32;

/// How [`Cholesky::normal`] forms `Aᵀ diag(θ) A` for one `A` (`m × p`), chosen once from its non-zeros.
/// Sparse rows split the columns: a block of the `t` with the most non-zeros, whose product is dense
/// (`m t²/2` multiply-adds), and the others, each non-zero of which adds its row's scaled block to the
/// cross product by one `axpy` (`t` each) and pairs with the row's other non-zeros outside the block by
/// scattered multiply-adds (`s_i²/2` for `s_i` of them in row `i`); `t` minimises the sum of the three,
/// weighted by [`AXPY_COST`] and [`SCATTER_COST`]. (MNIST images: 663 columns in use, 19 % non-zero,
/// 314 in the block.) Dense rows keep every column in the block. The plan also holds the buffers of the
/// block's scaled rows, one per [`normal_blocks`] block, kept between calls (a fresh 30 MB buffer per
/// call cost a fifth of an interior-point iteration in page faults).
#[derive(Default)]
pub(crate) struct NormalPlan {
    split: Option<Split>,
    buffers: Vec<Array2<f64>>,
}

/// The columns of a [`NormalPlan`] that splits them.
struct Split {
    /// The block's columns, ascending, and their entries in every row (`m × t`).
    block: Vec<usize>,
    block_rows: Array2<f64>,
    /// The others (those with non-zeros), ascending, and each column's number among them.
    others: Vec<usize>,
    number: Vec<usize>,
    /// Each row's non-zeros `(column, value)` outside the block, in column order.
    indptr: Vec<usize>,
    entries: Vec<(usize, f64)>,
}

impl NormalPlan {
    /// The plan for the rows of `A` as `stored` (compressed where that pays, see
    /// `hinge_qp::passes_over`).
    pub(crate) fn new(stored: &Features<'_>) -> Self {
        let Features::Sparse(rows) = stored else {
            return NormalPlan::default();
        };
        let (m, p) = (rows.n_rows(), stored.n_features());
        // Each column's rows, and the columns with non-zeros by their count, most first.
        let mut count = vec![0usize; p];
        (0..m).for_each(|i| rows.row(i).0.iter().for_each(|&j| count[j as usize] += 1));
        let mut start: Vec<usize> = std::iter::once(0)
            .chain(count.iter().scan(0, |a, &c| {
                *a += c;
                Some(*a)
            }))
            .collect();
        let mut column_rows = vec![0usize; start[p]];
        for i in 0..m {
            for &j in rows.row(i).0 {
                column_rows[start[j as usize]] = i;
                start[j as usize] += 1;
            }
        }
        let starts = |j: usize| start[j] - count[j]..start[j];
        let mut order: Vec<usize> = (0..p).filter(|&j| count[j] > 0).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(count[j]));
        // The cost with the first t of `order` in the block, t = 0, 1, …: s_i, Σ s_i and Σ s_i² updated as
        // each column joins.
        let mut outside: Vec<usize> = (0..m).map(|i| rows.row(i).0.len()).collect();
        let (mut sum, mut squares) = (outside.iter().sum::<usize>(), outside.iter().map(|s| s * s).sum::<usize>());
        let cost =
            |t: usize, sum: usize, squares: usize| m * t * t / 2 + AXPY_COST * t * sum + SCATTER_COST * squares / 2;
        let (mut best, mut best_cost) = (0, cost(0, sum, squares));
        for (t, &j) in order.iter().enumerate() {
            for &i in &column_rows[starts(j)] {
                squares -= 2 * outside[i] - 1;
                sum -= 1;
                outside[i] -= 1;
            }
            if cost(t + 1, sum, squares) < best_cost {
                (best, best_cost) = (t + 1, cost(t + 1, sum, squares));
            }
        }
        if best == order.len() {
            return NormalPlan::default();
        }
        let mut in_block = vec![false; p];
        order[..best].iter().for_each(|&j| in_block[j] = true);
        let block: Vec<usize> = (0..p).filter(|&j| in_block[j]).collect();
        let others: Vec<usize> = (0..p).filter(|&j| !in_block[j] && count[j] > 0).collect();
        let mut number = vec![usize::MAX; p];
        others.iter().enumerate().for_each(|(q, &j)| number[j] = q);
        let (mut indptr, mut entries) = (vec![0], Vec::new());
        for i in 0..m {
            let (idx, val) = rows.row(i);
            entries.extend(idx.iter().zip(val).map(|(&j, &v)| (j as usize, v)).filter(|&(j, _)| !in_block[j]));
            indptr.push(entries.len());
        }
        let mut block_rows = Array2::zeros((m, block.len()));
        for (i, mut out) in block_rows.rows_mut().into_iter().enumerate() {
            let (idx, val) = rows.row(i);
            for (&j, &v) in idx.iter().zip(val).filter(|(j, _)| in_block[**j as usize]) {
                out[block.partition_point(|&k| k < j as usize)] = v;
            }
        }
        let split = Split { block, block_rows, others, number, indptr, entries };
        NormalPlan { split: Some(split), buffers: Vec::new() }
    }

    /// The lower half of `Aᵀ diag(θ) A` over the rows `rows` of `a` (the upper half zero), with `buffer`
    /// for the block's scaled rows.
    fn lower_gram(
        &self,
        a: ArrayView2<'_, f64>,
        theta: &[f64],
        rows: std::ops::Range<usize>,
        buffer: &mut Array2<f64>,
    ) -> faer::Mat<f64> {
        let Some(split) = &self.split else {
            return lower_weighted_gram(a.slice(ndarray::s![rows.clone(), ..]), &theta[rows], buffer);
        };
        let (p, t) = (a.ncols(), split.block.len());
        let part = split.block_rows.slice(ndarray::s![rows.clone(), ..]);
        let inner = lower_weighted_gram(part, &theta[rows.clone()], buffer);
        let mut matrix = faer::Mat::<f64>::zeros(p, p);
        for (c, &jc) in split.block.iter().enumerate() {
            let column = matrix.col_as_slice_mut(jc);
            for (r, &jr) in split.block.iter().enumerate().skip(c) {
                column[jr] = inner[(r, c)];
            }
        }
        // cross[q] = Σ_i θ_i a_ij a_i,block for the q-th column j outside, from the scaled rows √θ_i a_i,block;
        // the pairs outside the block, j ≥ k, at (j, k).
        let mut cross = vec![0.0; split.others.len() * t];
        // (`lower_weighted_gram` makes `buffer` a standard-layout array.)
        let scaled_rows = buffer.as_slice().expect("the scaled rows are contiguous");
        for (r, i) in rows.enumerate() {
            let scaled = &scaled_rows[r * t..(r + 1) * t];
            let entries = &split.entries[split.indptr[i]..split.indptr[i + 1]];
            let root = theta[i].sqrt();
            for (at, &(j, v)) in entries.iter().enumerate() {
                let q = split.number[j];
                axpy(root * v, scaled, &mut cross[q * t..(q + 1) * t]);
                let tv = theta[i] * v;
                for &(k, u) in &entries[..=at] {
                    matrix.col_as_slice_mut(k)[j] += tv * u;
                }
            }
        }
        for (q, &j) in split.others.iter().enumerate() {
            for (&k, &v) in split.block.iter().zip(&cross[q * t..(q + 1) * t]) {
                let (r, c) = if j > k { (j, k) } else { (k, j) };
                matrix.col_as_slice_mut(c)[r] += v;
            }
        }
        matrix
    }
}

/// The lower half of `Aᵀ diag(θ) A` (the upper half zero), by one sequential product of `diag(√θ) A`,
/// formed in `scaled` (resized to `A`'s shape if it is not).
fn lower_weighted_gram(a: ArrayView2<'_, f64>, theta: &[f64], scaled: &mut Array2<f64>) -> faer::Mat<f64> {
    let _state = VectorState;
    if scaled.dim() != a.dim() {
        *scaled = Array2::zeros(a.dim());
    }
    for ((mut out, row), &t) in scaled.rows_mut().into_iter().zip(a.rows()).zip(theta) {
        let root = t.sqrt();
        out.zip_mut_with(&row, |o, &v| *o = root * v);
    }
    let view = scaled.view();
    let b = faer_ref(&view);
    // Only the lower half, which the factorisation reads: half the flops of the full product.
    let mut matrix = faer::Mat::<f64>::zeros(b.ncols(), b.ncols());
    faer::linalg::matmul::triangular::matmul(
        matrix.as_mut(),
        faer::linalg::matmul::triangular::BlockStructure::TriangularLower,
        faer::Accum::Replace,
        b.transpose(),
        faer::linalg::matmul::triangular::BlockStructure::Rectangular,
        b,
        faer::linalg::matmul::triangular::BlockStructure::Rectangular,
        1.0,
        faer::Par::Seq,
    );
    matrix
}

/// Clears the upper halves of the vector registers (`vzeroupper`) when dropped, on x86-64 CPUs with AVX;
/// a no-op elsewhere. Held by every function that calls faer (or another library with AVX kernels).
pub(crate) struct VectorState;

impl Drop for VectorState {
    #[inline]
    fn drop(&mut self) {
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
}

/// `a` as a faer matrix, in whatever layout and strides `a` has.
fn faer_ref<'a>(a: &'a ArrayView2<'_, f64>) -> faer::MatRef<'a, f64> {
    let (rs, cs) = (a.strides()[0], a.strides()[1]);
    // SAFETY: `a` is a valid ndarray view: every `ptr + i·rs + j·cs` (i < nrows, j < ncols) is an element
    // it borrows, immutably, for as long as the returned reference lives.
    unsafe { faer::MatRef::from_raw_parts(a.as_ptr(), a.nrows(), a.ncols(), rs, cs) }
}

fn copy_into(m: &faer::Mat<f64>, out: &mut ArrayViewMut2<'_, f64>) {
    for (i, mut row) in out.rows_mut().into_iter().enumerate() {
        row.iter_mut().enumerate().for_each(|(j, v)| *v = m[(i, j)]);
    }
}

/// `out = A Bᵀ` for row-major `A` (`m × k`) and `B` (`n × k`), sequential (callers parallelise over blocks).
pub(crate) fn mul_transposed_into(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>, out: &mut ArrayViewMut2<'_, f64>) {
    let _state = VectorState;
    copy_into(&(faer_ref(&a) * faer_ref(&b).transpose()), out);
}

/// `A Bᵀ` (see [`mul_transposed_into`]).
pub(crate) fn mul_transposed(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Array2<f64> {
    let mut out = Array2::zeros((a.nrows(), b.nrows()));
    mul_transposed_into(a, b, &mut out.view_mut());
    out
}

/// `out = A B` for row-major `A` (`m × k`) and `B` (`k × n`), sequential.
pub(crate) fn mul_into(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>, out: &mut ArrayViewMut2<'_, f64>) {
    let _state = VectorState;
    copy_into(&(faer_ref(&a) * faer_ref(&b)), out);
}

/// `A -= B Bᵀ` on the lower half of the column-major `m × m` matrix `a`, `B` column-major `m × k`, by
/// matrix products on column panels of `panel` columns, in parallel.
pub(crate) fn lower_rank_k_update(a: &mut [f64], m: usize, b: &[f64], k: usize, panel: usize) {
    use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
    use faer::{Accum, MatRef, Par};
    if m == 0 || k == 0 {
        return;
    }
    let bm = MatRef::from_column_major_slice(b, m, k);
    a.par_chunks_mut(m * panel).enumerate().for_each(|(blk, chunk)| {
        let _state = VectorState;
        let c0 = blk * panel;
        let w = chunk.len() / m;
        let mut cols = faer::MatMut::from_column_major_slice_mut(chunk, m, w);
        let rows = bm.subrows(c0, w);
        let (diag_block, below) = cols.as_mut().split_at_row_mut(c0 + w);
        let diag_block = diag_block.subrows_mut(c0, w);
        tri_matmul(
            diag_block,
            BlockStructure::TriangularLower,
            Accum::Add,
            rows,
            BlockStructure::Rectangular,
            rows.transpose(),
            BlockStructure::Rectangular,
            -1.0,
            Par::Seq,
        );
        if c0 + w < m {
            faer::linalg::matmul::matmul(
                below,
                Accum::Add,
                bm.subrows(c0 + w, m - c0 - w),
                rows.transpose(),
                -1.0,
                Par::Seq,
            );
        }
    });
}

/// Solves `M x = r` for the symmetric positive definite `dim × dim` matrix `M[i, j] = entry(i, j)` by
/// Cholesky (lower triangle); `None` if the factorisation fails.
pub(crate) fn cholesky_solve(
    dim: usize,
    entry: impl Fn(usize, usize) -> f64,
    r: impl Fn(usize) -> f64,
) -> Option<Vec<f64>> {
    use faer::linalg::solvers::Solve;
    let _state = VectorState;
    let matrix = faer::Mat::<f64>::from_fn(dim, dim, entry);
    let llt = matrix.llt(faer::Side::Lower).ok()?;
    let x = llt.solve(faer::Mat::<f64>::from_fn(dim, 1, |i, _| r(i)));
    Some((0..dim).map(|i| x[(i, 0)]).collect())
}

/// `M⁻¹B` for a symmetric positive definite `M` (`n × n`, lower triangle read) and `B` (`n × k`), both
/// row-major, by one Cholesky factorisation; `None` if the factorisation fails.
pub(crate) fn cholesky_solve_columns(m: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Option<Array2<f64>> {
    use faer::linalg::solvers::Solve;
    let _state = VectorState;
    let (m, b) = (m.as_standard_layout(), b.as_standard_layout());
    let llt = faer_ref(&m.view()).llt(faer::Side::Lower).ok()?;
    let x = llt.solve(faer_ref(&b.view()));
    let mut out = Array2::zeros((b.nrows(), b.ncols()));
    copy_into(&x, &mut out.view_mut());
    Some(out)
}

/// A Cholesky factorisation `M = LLᵀ`, for several solves with one symmetric positive definite matrix.
pub(crate) struct Cholesky {
    llt: faer::linalg::solvers::Llt<f64>,
    size: usize,
}

impl Cholesky {
    /// Factors the normal matrix `diag(ridge) + Aᵀ diag(θ) A` of a row-major `A` (`m × p`, `θ_i ≥ 0`) by the
    /// plan made for it; `None` if it is not numerically positive definite. The product is summed over
    /// [`normal_blocks`] blocks of rows, in parallel and always in the same order: the same floats whatever
    /// the threads.
    pub(crate) fn normal(a: ArrayView2<'_, f64>, theta: &[f64], ridge: &[f64], plan: &mut NormalPlan) -> Option<Self> {
        let (m, p) = a.dim();
        let blocks = normal_blocks(m, p);
        let ranges: Vec<std::ops::Range<usize>> = (0..blocks).map(|k| k * m / blocks..(k + 1) * m / blocks).collect();
        let mut buffers = std::mem::take(&mut plan.buffers);
        buffers.resize_with(blocks, || Array2::zeros((0, 0)));
        let plan_ref = &*plan;
        let parts: Vec<faer::Mat<f64>> = ranges
            .into_par_iter()
            .zip(buffers.par_iter_mut())
            .map(|(rows, buffer)| plan_ref.lower_gram(a, theta, rows, buffer))
            .collect();
        plan.buffers = buffers;
        let mut parts = parts.into_iter();
        let mut matrix = parts.next()?;
        for part in parts {
            matrix += part;
        }
        for (j, &r) in ridge.iter().enumerate() {
            matrix[(j, j)] += r;
        }
        let _state = VectorState;
        Some(Cholesky { llt: matrix.llt(faer::Side::Lower).ok()?, size: p })
    }

    /// `x` with `M x = r`.
    pub(crate) fn solve(&self, r: &[f64]) -> Vec<f64> {
        use faer::linalg::solvers::Solve;
        let _state = VectorState;
        let x = self.llt.solve(faer::Mat::<f64>::from_fn(self.size, 1, |i, _| r[i]));
        (0..self.size).map(|i| x[(i, 0)]).collect()
    }
}

/// An LU factorisation, for several solves with one matrix: partially pivoted, or fully pivoted for
/// possibly ill-conditioned ones.
pub(crate) enum Lu {
    Partial(faer::linalg::solvers::PartialPivLu<f64>),
    Full(faer::linalg::solvers::FullPivLu<f64>),
}

impl Lu {
    /// Factors the `size × size` matrix `M[i, j] = entry(i, j)` with partial pivoting.
    pub(crate) fn partial(size: usize, entry: impl Fn(usize, usize) -> f64) -> Self {
        let _state = VectorState;
        Lu::Partial(faer::Mat::<f64>::from_fn(size, size, entry).partial_piv_lu())
    }

    /// Factors the `size × size` matrix `M[i, j] = entry(i, j)` with full pivoting.
    pub(crate) fn full(size: usize, entry: impl Fn(usize, usize) -> f64) -> Self {
        let _state = VectorState;
        Lu::Full(faer::Mat::<f64>::from_fn(size, size, entry).full_piv_lu())
    }

    /// `x` with `M x = r`.
    pub(crate) fn solve(&self, r: impl Fn(usize) -> f64) -> Vec<f64> {
        use faer::linalg::solvers::{ShapeCore, Solve};
        let _state = VectorState;
        let size = match self {
            Lu::Partial(lu) => lu.nrows(),
            Lu::Full(lu) => lu.nrows(),
        };
        if size == 0 {
            return Vec::new();
        }
        let rhs = faer::Mat::<f64>::from_fn(size, 1, |i, _| r(i));
        let x = match self {
            Lu::Partial(lu) => lu.solve(rhs),
            Lu::Full(lu) => lu.solve(rhs),
        };
        (0..size).map(|i| x[(i, 0)]).collect()
    }
}

/// Eigenvalues (descending) and eigenvectors (columns, same order) of the symmetric part of `a`;
/// [`Error::TooLarge`] when the three `n × n` matrices it holds (the copy, faer's eigenvectors, ours) do
/// not fit in memory.
pub(crate) fn symmetric_eigen(a: ArrayView2<'_, f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    let _state = VectorState;
    let n = a.nrows();
    crate::memory::reserve("an eigen-decomposition", "use a low-rank or diagonal form, or fewer features", &[3, n, n])?;
    let m = faer::Mat::<f64>::from_fn(n, n, |r, c| 0.5 * (a[[r, c]] + a[[c, r]]));
    let evd = m
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::SolverFailure { solver: "eigen-decomposition", detail: format!("{e:?}") })?;
    let (s, u) = (evd.S(), evd.U());
    // faer sorts ascending; reverse to descending.
    let values: Vec<f64> = (0..n).rev().map(|k| s[k]).collect();
    let vectors = Array2::from_shape_fn((n, n), |(r, c)| u[(r, n - 1 - c)]);
    Ok((values, vectors))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A` (`m × p`) with entries where `pattern(i, j, u)` is true for a uniform `u`, the entries uniform
    /// in `[-0.3, 0.7)`, and its CSR copy.
    fn sparse_rows(
        m: usize,
        p: usize,
        pattern: impl Fn(usize, usize, f64) -> bool,
    ) -> (Array2<f64>, Features<'static>) {
        use crate::features::CsrMatrix;
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut a = Array2::<f64>::zeros((m, p));
        for i in 0..m {
            for j in 0..p {
                if pattern(i, j, uniform()) {
                    a[(i, j)] = uniform() - 0.3;
                }
            }
        }
        let rows: Vec<Vec<(usize, f64)>> = a
            .rows()
            .into_iter()
            .map(|r| r.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, &v)| (j, v)).collect())
            .collect();
        let stored = Features::Sparse(CsrMatrix::from_rows(p, &rows).unwrap());
        (a, stored)
    }

    /// The columns in `plan`'s block, after checking that it forms the lower half of `Aᵀ diag(θ) A` as
    /// one dense product does, to round-off, over all rows and over parts of them.
    fn block_of_checked_plan(a: &Array2<f64>, theta: &[f64], plan: &NormalPlan) -> usize {
        let (m, p) = a.dim();
        let mut buffer = Array2::zeros((0, 0));
        let whole = lower_weighted_gram(a.view(), theta, &mut buffer);
        for rows in [0..m, 0..m / 3, m / 3..m] {
            let split = plan.lower_gram(a.view(), theta, rows.clone(), &mut buffer);
            let part = a.slice(ndarray::s![rows.clone(), ..]);
            let reference = lower_weighted_gram(part, &theta[rows], &mut Array2::zeros((0, 0)));
            for c in 0..p {
                for r in 0..p {
                    let scale = (whole[(r, r)] * whole[(c, c)]).sqrt().max(1e-300);
                    let expected = if r >= c { reference[(r, c)] } else { 0.0 };
                    let found = split[(r, c)];
                    assert!((found - expected).abs() <= 1e-13 * scale, "({r}, {c}): {found} against {expected}");
                }
            }
        }
        plan.split.as_ref().expect("these rows split").block.len()
    }

    /// A split [`NormalPlan`] (a dense block of the busiest columns, the others by their non-zeros) forms
    /// the same normal matrix as one dense product: on rows whose columns run from non-zero in every row to
    /// a few in a million (a tenth of the rows only in the sparsest 80, some weights zero), and on rows of
    /// two non-zeros each, where the block is empty.
    #[test]
    fn a_split_normal_matrix_is_the_dense_product() {
        let (m, p) = (3000, 120);
        let (a, stored) = sparse_rows(m, p, |i, j, u| (i % 10 != 0 || j >= 40) && u < 0.9f64.powi(j as i32));
        let theta: Vec<f64> =
            (0..m).map(|i| if i % 7 == 0 { 0.0 } else { 10f64.powf((i % 13) as f64 / 3.0 - 2.0) }).collect();
        let block = block_of_checked_plan(&a, &theta, &NormalPlan::new(&stored));
        assert!(block > 5 && block < 100, "{block} columns in the block");
        let (pairs, pairs_stored) = sparse_rows(m, 300, |i, j, _| j == i % 300 || j == (7 * i + 3) % 300);
        assert_eq!(block_of_checked_plan(&pairs, &theta, &NormalPlan::new(&pairs_stored)), 0);
        // The factorisation through the plan solves like the dense one.
        let ridge = vec![1e-3; p];
        let rhs: Vec<f64> = (0..p).map(|j| (j as f64).sin()).collect();
        let x_split = Cholesky::normal(a.view(), &theta, &ridge, &mut NormalPlan::new(&stored)).unwrap().solve(&rhs);
        let x_dense = Cholesky::normal(a.view(), &theta, &ridge, &mut NormalPlan::default()).unwrap().solve(&rhs);
        let size = x_dense.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        assert!(x_split.iter().zip(&x_dense).all(|(u, v)| (u - v).abs() <= 1e-9 * size));
    }

    /// The vector compaction keeps exactly the entries `!= 0` (NaN and ±∞ kept, ±0 left out) with their
    /// columns, in order, as the scalar one, for every length around its blocks of 4.
    #[test]
    fn compaction_keeps_the_non_zeros_in_order() {
        let special = [0.0, -0.0, f64::NAN, f64::INFINITY, -1e-300, 5e-324, 1e300, -2.5];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for n in 0..=21 {
            for round in 0..40 {
                let row: Vec<f64> = (0..n)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let pick = (state >> 33) as usize;
                        if round % 3 == 0 || pick.is_multiple_of(3) { special[pick % special.len()] } else { 0.0 }
                    })
                    .collect();
                let expected: Vec<(u32, u64)> =
                    (0..n).filter(|&j| row[j] != 0.0).map(|j| (j as u32, row[j].to_bits())).collect();
                let (mut idx, mut val) = (vec![u32::MAX; n + 4], vec![7.0; n + 4]);
                let got = |m: usize, idx: &[u32], val: &[f64]| -> Vec<(u32, u64)> {
                    (0..m).map(|k| (idx[k], val[k].to_bits())).collect()
                };
                let m = compact_nonzeros(&row, &mut idx, &mut val);
                assert_eq!(got(m, &idx, &val), expected, "{row:?}");
                let m = compact_tail(&row, 0, &mut idx, &mut val, 0);
                assert_eq!(got(m, &idx, &val), expected, "{row:?}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 is present; the buffers have n + 4 slots.
                    let m = unsafe { avx2::compact_nonzeros(&row, &mut idx, &mut val) };
                    assert_eq!(got(m, &idx, &val), expected, "{row:?}");
                }
            }
        }
    }

    /// `USVM_SIMD`: unset gives the best default level; a level the CPU lacks, or a value that is not a
    /// level, falls back to that default with a message saying so.
    #[test]
    fn simd_level_choice_says_when_it_cannot_follow_usvm_simd() {
        use SimdLevel::*;
        let quiet = |r, a2, a5| choose_simd_level(r, a2, a5);
        assert_eq!(quiet(None, true, true), (Avx2, None));
        assert_eq!(quiet(None, false, false), (Portable, None));
        assert_eq!(quiet(Some("portable"), true, true), (Portable, None));
        assert_eq!(quiet(Some("avx2"), true, false), (Avx2, None));
        assert_eq!(quiet(Some("avx512"), true, true), (Avx512, None));
        for (requested, avx2, avx512, level) in [
            (Some("avx512"), true, false, Avx2),
            (Some("avx2"), false, false, Portable),
            (Some("AVX2"), true, true, Avx2),
        ] {
            let (chosen, warning) = choose_simd_level(requested, avx2, avx512);
            assert_eq!(chosen, level);
            let warning = warning.expect("a message");
            assert!(warning.contains("USVM_SIMD") && warning.contains(&format!("{level:?}")), "{warning}");
        }
    }

    /// Entries that are multiples of 1/8 in [-4, 4): every product and partial sum is exact in f64, so
    /// every kernel, whatever its order of summation, must return the exact value.
    fn vectors(n: usize) -> (Vec<f64>, Vec<f64>) {
        let a = (0..n).map(|k| ((k * 37 + 11) % 64) as f64 / 8.0 - 4.0).collect();
        let b = (0..n).map(|k| ((k * 53 + 5) % 64) as f64 / 8.0 - 4.0).collect();
        (a, b)
    }

    fn exact(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// `dot_f32` on every length to 80 (each tail), both paths: exact inputs give the exact value.
    #[test]
    fn dot_f32_is_exact_on_exact_inputs() {
        for n in 0..80 {
            let (a, b) = vectors(n);
            let (a32, b32): (Vec<f32>, Vec<f32>) =
                (a.iter().map(|&v| v as f32).collect(), b.iter().map(|&v| v as f32).collect());
            assert_eq!(dot_f32(&a32, &b32), exact(&a, &b), "length {n}");
            #[cfg(target_arch = "x86_64")]
            if n > 0 && std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has AVX2 and FMA (checked above).
                assert_eq!(unsafe { avx2::dot_f32(&a32, &b32) }, exact(&a, &b), "AVX2, length {n}");
            }
        }
    }

    /// Each level's `dot`, `dot_norm2` and `axpy` (those the CPU has) on every length to 80, so that
    /// every tail (scalar, 4-wide, masked 8-wide) is taken; `dot_norm2` equals `dot` bit for bit.
    #[test]
    fn every_vector_kernel_is_exact_on_exact_inputs_and_dot_norm2_is_two_dots() {
        struct Kernels {
            dot: unsafe fn(&[f64], &[f64]) -> f64,
            dot_norm2: unsafe fn(&[f64], &[f64]) -> (f64, f64),
            axpy: unsafe fn(f64, &[f64], &mut [f64]),
        }
        let mut levels: Vec<(&str, Kernels)> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("fma") {
                levels.push(("avx2", Kernels { dot: avx2::dot, dot_norm2: avx2::dot_norm2, axpy: avx2::axpy }));
            }
            if has!("avx512f") {
                levels.push(("avx512", Kernels { dot: avx512::dot, dot_norm2: avx512::dot_norm2, axpy: avx512::axpy }));
            }
        }
        assert!(!levels.is_empty() || !cfg!(target_arch = "x86_64") || simd_level() == SimdLevel::Portable);
        for n in 0..80 {
            let (a, b) = vectors(n);
            assert_eq!(dot_portable(&a, &b), exact(&a, &b), "portable, n = {n}");
            assert_eq!(dot(&a, &b), exact(&a, &b), "dispatched, n = {n}");
            for (name, k) in &levels {
                // SAFETY: the CPU has the level's features (checked above).
                let (d, (e, s)) = unsafe { ((k.dot)(&a, &b), (k.dot_norm2)(&a, &b)) };
                assert_eq!(d, exact(&a, &b), "{name} dot, n = {n}");
                assert_eq!((e.to_bits(), s.to_bits()), (d.to_bits(), unsafe { (k.dot)(&a, &a) }.to_bits()), "{name}");
                let mut y = b.clone();
                // SAFETY: as above.
                unsafe { (k.axpy)(-0.5, &a, &mut y[..]) };
                let expected: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - 0.5 * x).collect();
                assert_eq!(y, expected, "{name} axpy, n = {n}");
            }
        }
        // A longer y than x: only the common length is updated.
        let (a, b) = vectors(21);
        let mut y = vec![1.0; 40];
        axpy(2.0, &a, &mut y);
        assert!(y[..21].iter().zip(&a).all(|(y, x)| *y == 1.0 + 2.0 * x) && y[21..].iter().all(|&v| v == 1.0));
        assert_eq!(dot(&a, &b[..10]), exact(&a[..10], &b[..10]));
    }
}
