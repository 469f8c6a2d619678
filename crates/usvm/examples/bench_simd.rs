//! The vector kernels at the level this process runs (`usvm::linalg::simd_level`, chosen by `USVM_SIMD`):
//! `dot`, `dot_norm2` and `axpy` on vectors that stay in L1 (n = 20, 100, 1000: compute-bound) and one pass
//! of `row_dot` + `row_axpy` over a 50,000 × 100 row-major matrix (memory-bound), each the best of 5 runs.
//!
//! Run paired, e.g. `for l in avx2 avx512 avx2 avx512; do USVM_SIMD=$l cargo run --release -p usvm
//! --example bench_simd; done` (the level is chosen once per process).

use std::hint::black_box;

use ndarray::Array2;
use usvm::Features;
use usvm::linalg::{axpy, dot, dot_norm2, simd_level};

#[path = "shared/timing.rs"]
mod timing;

fn best(f: impl FnMut()) -> f64 {
    timing::best_of(5, f)
}

fn main() {
    println!("level {:?}", simd_level());
    for n in [20, 100, 1000] {
        let a: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..n).map(|k| (k as f64 * 0.11).cos()).collect();
        let reps = 20_000_000 / n;
        let t_dot = best(|| {
            let mut s = 0.0;
            for _ in 0..reps {
                s += dot(black_box(&a), black_box(&b));
            }
            black_box(s);
        });
        let t_dn = best(|| {
            let mut s = 0.0;
            for _ in 0..reps {
                s += dot_norm2(black_box(&a), black_box(&b)).1;
            }
            black_box(s);
        });
        let mut y = b.clone();
        let t_axpy = best(|| {
            for _ in 0..reps {
                axpy(black_box(1e-9), black_box(&a), &mut y);
            }
            black_box(&y);
        });
        let per = |t: f64| t / (reps * n) as f64 * 1e9;
        println!("n = {n:5}: dot {:.3} ns/entry, dot_norm2 {:.3}, axpy {:.3}", per(t_dot), per(t_dn), per(t_axpy));
    }
    let (l, n) = (50_000, 100);
    let x = Features::dense(Array2::from_shape_fn((l, n), |(i, j)| ((i * 31 + j * 17) % 101) as f64 / 50.0 - 1.0));
    let w: Vec<f64> = (0..n).map(|j| (j as f64 * 0.3).sin()).collect();
    let mut g = vec![0.0; n];
    let t_pass = best(|| {
        for i in 0..l {
            let m = x.row_dot(i, &w);
            x.row_axpy(i, 1e-6 * m, &mut g);
        }
        black_box(&g);
    });
    println!("pass over 50,000 × 100 (row_dot + row_axpy): {:.3} ms", t_pass * 1e3);
}
