//! Small dense vector kernels shared by every layer: `dot`, `axpy`, `norm2`.

/// `aᵀb` over the common length.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
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

/// `y ← y + αx`.
#[inline]
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `‖a‖₂`.
#[inline]
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}
