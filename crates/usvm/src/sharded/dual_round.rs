//! A shard's side of the distributed dual method and of the exact finish ([`super::cocoa`]): partial sums
//! over its own rows, and coordinate descent on its own multipliers.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::protocol::{BINS, DualAnswer, DualRound, MarginAnswer};
use crate::data::{CsrMatrix, Features, axpy, dot};

/// The rows of one binary problem: features, `±1` labels, weights; for the exact finish's questions,
/// Power SVM's moved rows as the shard's own and their [`Shift`].
pub(super) struct Rows<'a> {
    pub x: &'a Features<'a>,
    pub y: &'a [f64],
    pub c: Option<&'a [f64]>,
    pub fit_intercept: bool,
    pub shift: Option<Shift<'a>>,
}

/// Power SVM's rows moved for the direction of `along`, `x_i + a_i along` (`a_i = y_i r_i/‖along‖`), kept
/// as the rows and `a` rather than formed: `(x_i + a_i v)ᵀu = x_iᵀu + a_i vᵀu`.
pub(super) struct Shift<'a> {
    pub along: &'a [f64],
    pub by: &'a [f64],
}

impl Rows<'_> {
    fn weight(&self, i: usize) -> f64 {
        self.c.map_or(1.0, |c| c[i])
    }

    /// `x_iᵀu`, of the moved row with a [`Shift`] (`along_u = alongᵀu`).
    fn row_dot(&self, i: usize, u: &[f64], along_u: f64) -> f64 {
        let dot = self.x.row_dot(i, u);
        self.shift.as_ref().map_or(dot, |s| dot + s.by[i] * along_u)
    }

    /// `alongᵀu` (0 without a [`Shift`]).
    fn along(&self, u: &[f64]) -> f64 {
        self.shift.as_ref().map_or(0.0, |s| dot(s.along, u))
    }

    /// `(w, b)` of `θ = [w; b]` (`b = 0` without intercept).
    fn split<'t>(&self, theta: &'t [f64]) -> (&'t [f64], f64) {
        let n = self.x.n_features();
        (&theta[..n], if self.fit_intercept { theta[n] } else { 0.0 })
    }

    /// One round ([`DualRound`]) from the multipliers `alpha` (updated in place): first the certificate's
    /// sums at `alpha` and the round's `w`, then `passes` passes of coordinate descent on the local
    /// subproblem of CoCoA+ (Ma et al. 2015) over the shard's updates `Δα`, with `u = Σ Δα_i y_i x_i` and
    /// `τ = Σ Δα_i y_i` over its rows,
    ///
    /// `min -Σ Δα_i + wᵀu + (σ'/2)‖u‖² + b̂τ + (σ'ρ/2)τ²` over `0 ≤ α_i + Δα_i ≤ C c_i`,
    ///
    /// whose coordinate `i` has gradient `G_i = y_i((w + σ'u)ᵀx_i + b̂ + σ'ρτ) - 1` and curvature
    /// `σ'(‖x_i‖² + ρ)`: the clipped Newton step of [`crate::solver::dual_cd`] with `w + σ'u` for `w`. With
    /// `σ' = K` shards the shards' updates may be added (CoCoA+'s safe choice).
    pub fn dual_round(&self, q: &DualRound, alpha: &mut [f64]) -> DualAnswer {
        debug_assert!(self.shift.is_none(), "the dual method's rounds are on formed rows");
        let (x, y) = (self.x, self.y);
        let (l, n) = (x.n_samples(), x.n_features());
        let (w, bias) = self.split(&q.at.theta);
        let reach = q.offsets.iter().fold(0.0f64, |m, o| m.max(o.abs()));
        let mut class_sums = [vec![0.0; n], vec![0.0; n]];
        let mut class_alpha = [0.0; 2];
        let mut hinge = vec![0.0; q.offsets.len()];
        let (mut linear_value, mut linear_slope) = (0.0, 0.0);
        let mut histogram = vec![0u64; BINS];
        for i in 0..l {
            let c = self.weight(i);
            if c == 0.0 {
                continue;
            }
            let k = usize::from(y[i] < 0.0);
            class_alpha[k] += alpha[i];
            if alpha[i] != 0.0 {
                x.row_axpy(i, alpha[i], &mut class_sums[k]);
            }
            let d = 1.0 - y[i] * (x.row_dot(i, w) + bias);
            histogram[bin(d.abs())] += 1;
            // At `b̂ + δ`: `d_i - y_i δ`; beyond every offset the hinge is linear (or zero) in `δ`.
            if d > reach {
                linear_value += c * d;
                linear_slope += c * y[i];
            } else if d >= -reach {
                for (h, &o) in hinge.iter_mut().zip(&q.offsets) {
                    *h += c * (d - y[i] * o).max(0.0);
                }
            }
        }
        for (h, &o) in hinge.iter_mut().zip(&q.offsets) {
            *h += linear_value - linear_slope * o;
        }

        let start = alpha.to_vec();
        let (sigma, rho) = (q.sigma, q.rho);
        let mut v = w.to_vec();
        let mut local_bias = bias;
        let mut order: Vec<usize> = (0..l).filter(|&i| self.weight(i) > 0.0).collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(q.solve.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ q.round);
        for _ in 0..q.passes {
            order.shuffle(&mut rng);
            for &i in &order {
                let (m, norm) = x.row_dot_norm2(i, &v);
                let curvature = sigma * (norm + rho);
                if curvature <= 0.0 {
                    continue;
                }
                let g = y[i] * (m + local_bias) - 1.0;
                let upper = q.upper * self.weight(i);
                let new = (alpha[i] - g / curvature).clamp(0.0, upper);
                let step = new - alpha[i];
                if step != 0.0 {
                    alpha[i] = new;
                    x.row_axpy(i, sigma * step * y[i], &mut v);
                    local_bias += sigma * rho * step * y[i];
                }
            }
        }
        let mut delta_w = vec![0.0; n];
        let mut delta_t = 0.0;
        for i in 0..l {
            let step = alpha[i] - start[i];
            if step != 0.0 {
                x.row_axpy(i, step * y[i], &mut delta_w);
                delta_t += step * y[i];
            }
        }
        DualAnswer { class_sums, class_alpha, hinge, histogram, delta_w, delta_t }
    }

    /// The answer to [`super::Question::Margin`] at `theta`; with `also` (the shift of another target of the
    /// same rows), that target's hinge too: `d_i` moves by `-y_i (a'_i v'ᵀw - a_i vᵀw)`.
    pub fn margin(
        &self,
        theta: &[f64],
        band: f64,
        max_rows: usize,
        origin: &[f64],
        steps: &[f64],
        also: Option<&Shift<'_>>,
    ) -> MarginAnswer {
        let (x, y) = (self.x, self.y);
        let n = x.n_features();
        let (w, b) = self.split(theta);
        let along_w = self.along(w);
        let also_w = also.map(|s| dot(s.along, w));
        let mut also_hinge = 0.0;
        let (w0, b0) = if origin.is_empty() { (w, b) } else { self.split(origin) };
        let along_w0 = self.along(w0);
        let mut hinge = 0.0;
        let mut line = vec![0.0; if origin.is_empty() { 0 } else { steps.len() }];
        let mut near: Vec<(f64, usize)> = Vec::new();
        // Per class: `Σ c_i x_i` and `Σ c_i` over the rows beyond the band, and `Σ c_i a_i` of a shift.
        let mut active_sums = [vec![0.0; n], vec![0.0; n]];
        let mut active_weights = [0.0; 2];
        let mut active_shifts = [0.0; 2];
        let mut add_active = |i: usize, c: f64, sums: &mut [Vec<f64>; 2]| {
            let k = usize::from(y[i] < 0.0);
            x.row_axpy(i, c, &mut sums[k]);
            active_weights[k] += c;
            if let Some(s) = &self.shift {
                active_shifts[k] += c * s.by[i];
            }
        };
        for (i, &yi) in y.iter().enumerate() {
            let c = self.weight(i);
            if c == 0.0 {
                continue;
            }
            let d = 1.0 - yi * (self.row_dot(i, w, along_w) + b);
            hinge += c * d.max(0.0);
            if let (Some(s), Some(also_w)) = (also, also_w) {
                let own = self.shift.as_ref().map_or(0.0, |t| t.by[i] * along_w);
                also_hinge += c * (d - yi * (s.by[i] * also_w - own)).max(0.0);
            }
            if !line.is_empty() {
                let d0 = 1.0 - yi * (self.row_dot(i, w0, along_w0) + b0);
                for (h, &tau) in line.iter_mut().zip(steps) {
                    *h += c * (d0 + tau * (d - d0)).max(0.0);
                }
            }
            if d.abs() <= band {
                near.push((d, i));
            } else if d > band {
                add_active(i, c, &mut active_sums);
            }
        }
        if near.len() > max_rows {
            // The nearest `max_rows`; the others keep their side (`d > 0`: on the loss' linear side).
            near.select_nth_unstable_by(max_rows, |a, b| a.0.abs().total_cmp(&b.0.abs()));
            for &(d, i) in &near[max_rows..] {
                if d > 0.0 {
                    add_active(i, self.weight(i), &mut active_sums);
                }
            }
            near.truncate(max_rows);
        }
        let mut kept: Vec<usize> = near.iter().map(|&(_, i)| i).collect();
        kept.sort_unstable();
        let rows = match &self.shift {
            None => x.select_rows(&kept),
            Some(s) => {
                for (sums, &shift) in active_sums.iter_mut().zip(&active_shifts) {
                    axpy(shift, s.along, sums);
                }
                // Only the gathered rows are formed (dense, as moved rows are).
                let mut moved = ndarray::Array2::zeros((kept.len(), n));
                for (mut out, &i) in moved.rows_mut().into_iter().zip(&kept) {
                    let out = out.as_slice_mut().expect("a fresh array's rows are contiguous");
                    x.row_axpy(i, 1.0, out);
                    axpy(s.by[i], s.along, out);
                }
                Features::dense(moved)
            }
        };
        MarginAnswer {
            hinge,
            line,
            rows,
            y: kept.iter().map(|&i| y[i]).collect(),
            c: kept.iter().map(|&i| self.weight(i)).collect(),
            active_sums,
            active_weights,
            also_hinge,
        }
    }
}

/// The histogram bin of `|d|`: `k` for `16·2^-(k+1) ≤ |d| < 16·2^-k` (`k = 0` for every `|d| ≥ 8`), the last
/// bin for everything smaller.
fn bin(magnitude: f64) -> usize {
    if magnitude >= 8.0 {
        return 0;
    }
    if magnitude <= 0.0 {
        return BINS - 1;
    }
    let k = (16.0 / magnitude).log2().ceil() as isize - 1;
    k.clamp(0, BINS as isize - 1) as usize
}

/// The upper edge `16·2^-k` of bin `k`.
pub(super) fn bin_edge(k: usize) -> f64 {
    16.0 * (-(k as f64)).exp2()
}

/// Stacks gathered rows (in order) with extra dense rows: dense if every part is, else sparse (a sparse
/// row's entries copied as stored, a dense row's non-zeros; never a dense copy of a wide sparse row).
pub(super) fn stack(parts: &[&Features<'_>], extra: &[Vec<f64>], n: usize) -> Features<'static> {
    if parts.iter().all(|p| matches!(p, Features::Dense(_))) {
        let total = parts.iter().map(|p| p.n_samples()).sum::<usize>() + extra.len();
        let mut a = ndarray::Array2::zeros((total, n));
        let rows =
            parts.iter().flat_map(|p| (0..p.n_samples()).map(move |i| p.row_dense(i))).chain(extra.iter().cloned());
        for (mut out, row) in a.rows_mut().into_iter().zip(rows) {
            out.assign(&ndarray::ArrayView1::from(&row));
        }
        return Features::dense(a);
    }
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    for p in parts {
        for i in 0..p.n_samples() {
            match p {
                Features::Sparse(m) => {
                    let (idx, val) = m.row(i);
                    indices.extend_from_slice(idx);
                    values.extend_from_slice(val);
                }
                Features::Dense(_) => push_dense(&p.row_dense(i), &mut indices, &mut values),
            }
            indptr.push(indices.len());
        }
    }
    for e in extra {
        push_dense(e, &mut indices, &mut values);
        indptr.push(indices.len());
    }
    Features::Sparse(CsrMatrix::new(n, indptr, indices, values))
}

/// Appends the non-zeros of a dense row.
fn push_dense(row: &[f64], indices: &mut Vec<u32>, values: &mut Vec<f64>) {
    for (j, &v) in row.iter().enumerate().filter(|(_, v)| **v != 0.0) {
        indices.push(j as u32);
        values.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacked_rows_keep_their_values_whatever_the_storage() {
        let dense = Features::dense(ndarray::array![[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]);
        let sparse = Features::Sparse(CsrMatrix::from_rows(3, &[vec![(1, 4.0)], vec![]]).unwrap());
        let extra = vec![vec![0.5, 0.0, -1.0]];
        let expected = ndarray::array![[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [0.0, 4.0, 0.0], [0.0; 3], [0.5, 0.0, -1.0]];
        let mixed = stack(&[&dense, &sparse], &extra, 3);
        assert!(matches!(mixed, Features::Sparse(_)));
        assert_eq!(mixed.to_dense(), expected);
        let all_dense = stack(&[&dense, &dense], &extra, 3);
        assert!(matches!(all_dense, Features::Dense(_)));
        assert_eq!(all_dense.n_samples(), 5);
        assert_eq!(all_dense.row_dense(4), extra[0]);
    }

    #[test]
    fn bins_halve_from_sixteen() {
        assert_eq!(bin(100.0), 0);
        assert_eq!(bin(8.0), 0);
        assert_eq!(bin(7.9), 1);
        assert_eq!(bin(4.0), 1);
        assert_eq!(bin(3.9), 2);
        assert_eq!(bin(0.0), BINS - 1);
        assert_eq!(bin(1e-300), BINS - 1);
        for k in 1..BINS - 1 {
            let edge = bin_edge(k);
            assert_eq!(bin(edge * 0.99), k, "just below edge {k}");
            assert_eq!(bin(edge), k - 1, "at edge {k}");
        }
    }
}
