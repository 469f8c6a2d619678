//! When [`super`] certifies: a running guess of the duality gap.

use super::{FIRST_CALIBRATION, Setup, relative_gap};
use crate::data::dot;

/// A running guess of the relative duality gap, which decides when a certificate (about an epoch's work)
/// is worth computing; it certifies nothing. `‖w‖²`, `Σ α_i` and `Σ D_ii α_i²` are kept up to date at every
/// coordinate step (`‖w + δx_i‖² = ‖w‖² + 2δ x_iᵀw + δ²‖x_i‖²`), and each example's loss `C c_i ξ(d_i)` at the
/// margin it had when last visited. So the primal `½‖w‖² + Σ C c_i ξ(d_i)` is stale (each margin is from its
/// visit, with that visit's bias estimate), and the dual `Σ α_i - |yᵀα| - ½‖w‖² - ½ Σ D_ii α_i²` leaves out
/// how scaling a class to `yᵀα = 0` changes `‖w‖²`. Measured, the guess runs 2× (λ ≤ 1e-4) to 200× (at
/// the first epochs, λ = 1e-2) above the certified gap on the sparse problem of `bench/linear_peers.py`; it
/// is scaled by 1/4 until the first certificate, and after each by that certificate's gap over its guess.
pub(super) struct GapEstimate {
    w_norm2: f64,
    alpha_sum: f64,
    diag_sum: f64,
    /// `C c_i ξ(d_i)` at the last visit (before any, `ξ(1)`: the margin at `θ = 0`).
    losses: Vec<f64>,
    loss_sum: f64,
    /// The last certificate's gap over its raw guess, in `[0.01, 100]` (before any, `FIRST_CALIBRATION`).
    calibration: f64,
    /// Whether the last certificate's gap was within a factor 2 of the guess (none yet: false).
    agreed: bool,
}

impl GapEstimate {
    pub(super) fn new(setup: &Setup<'_>, alpha: &[f64], w: &[f64]) -> Self {
        let losses: Vec<f64> = (0..alpha.len()).map(|i| setup.cost(i) * setup.loss_at(1.0)).collect();
        let alpha_sum = alpha.iter().sum();
        let diag_sum = (0..alpha.len()).filter(|&i| alpha[i] > 0.0).map(|i| setup.diag(i) * alpha[i] * alpha[i]).sum();
        let calibration = FIRST_CALIBRATION;
        GapEstimate {
            w_norm2: dot(w, w),
            alpha_sum,
            diag_sum,
            loss_sum: losses.iter().sum(),
            losses,
            calibration,
            agreed: false,
        }
    }

    /// Example `i` was visited and has loss `loss` now.
    #[inline]
    pub(super) fn visit(&mut self, i: usize, loss: f64) {
        self.loss_sum += loss - self.losses[i];
        self.losses[i] = loss;
    }

    /// `α_i` went from `old` to `new`, `w` by `δ x_i` (`δ = (new - old) y_i`), with `x_iᵀw = f` before the
    /// step, `‖x_i‖² = norm` and `D_ii = diag`.
    #[inline]
    pub(super) fn step(&mut self, old: f64, new: f64, delta: f64, f: f64, norm: f64, diag: f64) {
        self.w_norm2 += delta * (2.0 * f + delta * norm);
        self.alpha_sum += new - old;
        if diag > 0.0 {
            self.diag_sum += diag * (new * new - old * old);
        }
    }

    /// `‖w‖²` afresh (after a certificate recomputed `w`: no drift).
    pub(super) fn recompute_norm(&mut self, w: &[f64]) {
        self.w_norm2 = dot(w, w);
    }

    /// The guess at `yᵀα = ya`; infinite (no guess) when the stale primal is not above the dual.
    pub(super) fn gap(&self, ya: f64, fit_intercept: bool) -> f64 {
        let primal = 0.5 * self.w_norm2 + self.loss_sum;
        let infeasible = if fit_intercept { ya.abs() } else { 0.0 };
        let dual = self.alpha_sum - infeasible - 0.5 * self.w_norm2 - 0.5 * self.diag_sum;
        let raw = relative_gap(primal, dual);
        if raw > 0.0 { self.calibration * raw } else { f64::INFINITY }
    }

    /// Whether the last certificate found the gap within a factor 2 of the guess: then the guess is trusted
    /// after epochs over the shrunk set too (whose losses at shrunk examples are from older visits).
    pub(super) fn agreed(&self) -> bool {
        self.agreed
    }

    /// A certificate found `gap` where the guess was `guess`.
    pub(super) fn calibrate(&mut self, guess: f64, gap: f64) {
        self.agreed = (0.5 * guess..=2.0 * guess).contains(&gap);
        if guess.is_finite() {
            self.calibration = (gap / (guess / self.calibration)).clamp(0.01, 100.0);
        }
    }
}
