//! The protocol of paper 004's Table 1: SVM, RSVM-RHHQ, SVM+, L2-SVM+ and R-SVM+ trained on clean
//! examples, every hyper-parameter chosen by accuracy on a noisy validation set, accuracy reported on a
//! test set corrupted by the same white Gaussian noise (SNR 4, 6, 8, 10, 15 dB, and clean).
//!
//! **Where the noise goes.** MNIST+ features are L1-normalised pixels, `x/‖x‖₁`. The protocol adds the noise
//! to the *raw* pixels and normalises afterwards ([`NoiseStage::Raw`], the default): `(x + e)/‖x + e‖₁`.
//! The noise then reaches every pixel, the background included, and `‖x + e‖₁` grows with it, so a noisy
//! test vector is both distorted and shrunk towards the origin relative to the clean training vectors —
//! the train/test shift Table 1 is about, and the one R-SVM+'s flat decision function (its regulariser
//! `λ Σ_s ‖∇f(x_s)‖²`) is built to survive. Adding the noise after the normalisation
//! ([`NoiseStage::Preprocessed`]) is `x/‖x‖₁ + e'` with `e'` at the same SNR: equivalent to dividing the noisy
//! raw vector by the clean norm, a pure distortion without the shrinkage, which every method tolerates about
//! equally. Features that are not normalised ([`Preprocess::None`], the synthetic task) make both stages
//! the same.
//!
//! **Kernels and grids (paper 004, section 4.2).** Gaussian kernels throughout. SVM+, L2-SVM+ and R-SVM+
//! use `γ = 1/D` (`D` the mean squared distance of the training examples; `γ* = 1/D*` on `x*`); SVM and
//! RSVM-RHHQ choose `γ` from a grid. [`Grid::paper`] is the paper's: `C, ρ ∈ 10^{-2..2}`,
//! `γ ∈ 10^{-3..3}`, `η ∈ {0.01, 0.1, 0.5, 1, 2, 3, 10, 100}`, `σ' ∈ {5, 10, 50, 100}`,
//! `λ ∈ 10^{-5..1}`. Each model is fitted once per trial; per noise level, each method's model with the
//! best validation accuracy (the first in grid order on ties) is scored on the test set.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

use usvm::svm::{KernelSvmParams, L2SvmPlusParams, LupiMethod, RescaledHingeParams, SvmPlusParams};
use usvm::{Dataset, Features, FitReport, Kernel, KernelModel, Result, Termination};

use crate::stats::{Resampling, holm, mean_sd, paired_t_test};

use super::add_white_noise;

/// The methods of Table 1, in its column order.
pub const METHODS: [&str; 5] = ["SVM", "RSVM-RHHQ", "SVM+", "L2-SVM+", "R-SVM+"];

/// Per-example preprocessing of the regular features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preprocess {
    /// The features as measured.
    None,
    /// `x/‖x‖₁` (MNIST+); an all-zero row stays zero.
    L1,
}

impl Preprocess {
    /// Applies the preprocessing to every row of `x`.
    pub fn apply(self, mut x: Array2<f64>) -> Array2<f64> {
        if self == Preprocess::L1 {
            for mut row in x.rows_mut() {
                let norm: f64 = row.iter().map(|v| v.abs()).sum();
                if norm > 0.0 {
                    row.mapv_inplace(|v| v / norm);
                }
            }
        }
        x
    }
}

/// Where the validation and test noise is added (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoiseStage {
    /// To the raw features, before the preprocessing (paper 004's Table 1).
    #[default]
    Raw,
    /// To the preprocessed features.
    Preprocessed,
}

/// The hyper-parameter grids.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// `C`, every method.
    pub c: Vec<f64>,
    /// `γ` of SVM and RSVM-RHHQ.
    pub gamma: Vec<f64>,
    /// `η` of RSVM-RHHQ.
    pub eta: Vec<f64>,
    /// `ρ` of SVM+, L2-SVM+ and R-SVM+.
    pub rho: Vec<f64>,
    /// `σ'` of R-SVM+.
    pub sigma_prime: Vec<f64>,
    /// `λ` of R-SVM+.
    pub lambda: Vec<f64>,
}

fn powers_of_ten(lo: i32, hi: i32) -> Vec<f64> {
    (lo..=hi).map(|k| 10f64.powi(k)).collect()
}

impl Grid {
    /// Paper 004's grids (1,065 models per trial).
    pub fn paper() -> Grid {
        Grid {
            c: powers_of_ten(-2, 2),
            gamma: powers_of_ten(-3, 3),
            eta: vec![0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0],
            rho: powers_of_ten(-2, 2),
            sigma_prime: vec![5.0, 10.0, 50.0, 100.0],
            lambda: powers_of_ten(-5, 1),
        }
    }

    /// A small grid for tests and quick looks (three values where the paper has five or more).
    pub fn small() -> Grid {
        Grid {
            c: vec![0.1, 1.0, 10.0],
            gamma: vec![0.01, 0.1, 1.0],
            eta: vec![0.1, 1.0],
            rho: vec![0.1, 1.0, 10.0],
            sigma_prime: vec![5.0, 50.0],
            lambda: vec![1e-3, 1e-1],
        }
    }
}

/// One trial's data, with the regular features raw (before [`Preprocess`]).
#[derive(Debug, Clone)]
pub struct Split {
    /// The clean training examples with their privileged features.
    pub train: Dataset<'static>,
    /// The validation examples and labels.
    pub validation: (Array2<f64>, Vec<i64>),
    /// The test examples and labels.
    pub test: (Array2<f64>, Vec<i64>),
}

/// The protocol's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// The preprocessing of the regular features.
    pub preprocess: Preprocess,
    /// Where the noise goes.
    pub noise: NoiseStage,
    /// The noise levels (SNR in dB; `None`: clean).
    pub snrs: Vec<Option<f64>>,
    /// The grids.
    pub grid: Grid,
}

/// One trial's result.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialResult {
    /// Test accuracy (%) of each method ([`METHODS`] order), one row per noise level.
    pub accuracy: Vec<[f64; 5]>,
    /// Models fitted, per method.
    pub fits: [usize; 5],
    /// Fits whose solver did not meet its stopping rule, per method.
    pub not_converged: [usize; 5],
    /// Fits reported degenerate (one class predicted on the training set), per method.
    pub degenerate: [usize; 5],
}

/// The models of one grid that share a kernel, as coefficients over the training rows.
struct Group {
    kernel: Kernel,
    /// `n_train × models`: column `m` is model `m`'s `α∘y` scattered onto the training rows.
    coef: Array2<f64>,
    intercept: Vec<f64>,
}

/// Every fitted model of a trial: kernel groups, and for each method the (group, column) of its models
/// in grid order.
struct Fitted {
    groups: Vec<Group>,
    models: [Vec<(usize, usize)>; 5],
    classes: Vec<i64>,
    fits: [usize; 5],
    not_converged: [usize; 5],
    degenerate: [usize; 5],
}

impl Fitted {
    /// Adds a fitted model with (whether it converged, whether it is degenerate).
    fn add(&mut self, method: usize, fit: (KernelModel, (bool, bool)), train: ArrayView2<f64>) {
        let (model, (converged, degenerate)) = fit;
        assert_eq!(model.classes, self.classes, "a binary model over the training classes");
        let g = match self.groups.iter().position(|g| g.kernel == model.kernel) {
            Some(g) => g,
            None => {
                let n = train.nrows();
                self.groups.push(Group { kernel: model.kernel, coef: Array2::zeros((n, 0)), intercept: Vec::new() });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        let mut column = vec![0.0; train.nrows()];
        for (i, c) in support_rows(&model.support.to_dense(), train).into_iter().zip(model.coef.row(0)) {
            column[i] += c;
        }
        group.coef.push_column(ndarray::ArrayView1::from(&column)).expect("one row per training example");
        group.intercept.push(model.intercept[0]);
        self.models[method].push((g, group.intercept.len() - 1));
        self.fits[method] += 1;
        self.not_converged[method] += usize::from(!converged);
        self.degenerate[method] += usize::from(degenerate);
    }

    /// The accuracy of every model on `(x, labels)`, indexed like `groups`.
    fn accuracies(&self, train: &Features, x: &Features, labels: &[i64]) -> Result<Vec<Vec<f64>>> {
        self.groups
            .iter()
            .map(|g| {
                let mut f = g.kernel.cross_gram(x, train)?.dot(&g.coef);
                f += &ndarray::ArrayView1::from(&g.intercept);
                Ok(f.axis_iter(Axis(1))
                    .map(|col| {
                        let hits = col.iter().zip(labels).filter(|&(&v, y)| self.classes[usize::from(v > 0.0)] == *y);
                        hits.count() as f64 / labels.len() as f64
                    })
                    .collect())
            })
            .collect()
    }
}

/// The training rows of a model's support vectors: `KernelModel::from_training` keeps the rows with a
/// nonzero coefficient in training order, so the support is a subsequence of the training rows (equal
/// rows have equal kernel columns, so matching the first equal row is exact).
fn support_rows(support: &Array2<f64>, train: ArrayView2<f64>) -> Vec<usize> {
    let mut next = 0;
    support
        .rows()
        .into_iter()
        .map(|s| {
            let i = (next..train.nrows()).find(|&i| train.row(i) == s).expect("support vectors are training rows");
            next = i + 1;
            i
        })
        .collect()
}

/// (Whether every binary problem converged, whether one is degenerate.)
fn status(reports: &[FitReport]) -> (bool, bool) {
    (reports.iter().all(|r| r.converged()), reports.iter().any(|r| r.degenerate))
}

/// Fits every model of the grid on the (preprocessed) training set.
fn fit_grid(train: &Dataset, grid: &Grid) -> Result<Fitted> {
    let x = train.features.to_dense();
    let mut out = Fitted {
        groups: Vec::new(),
        models: Default::default(),
        classes: train.classes(),
        fits: [0; 5],
        not_converged: [0; 5],
        degenerate: [0; 5],
    };
    for &c in &grid.c {
        for &gamma in &grid.gamma {
            let kernel = Kernel::Rbf { gamma };
            let svm = KernelSvmParams { kernel, c, ..KernelSvmParams::default() }.fit(train)?;
            let converged = svm.reports.iter().all(|r| r.termination == Termination::Converged);
            out.add(0, (svm.model, (converged, false)), x.view());
            for &eta in &grid.eta {
                let r = RescaledHingeParams { kernel, c, eta, ..RescaledHingeParams::default() }.fit(train)?;
                out.add(1, (r.model, status(&r.reports)), x.view());
            }
        }
        for &rho in &grid.rho {
            let plus = SvmPlusParams { c, rho, ..SvmPlusParams::default() };
            let f = plus.fit(train)?;
            out.add(2, (f.model, status(&f.reports)), x.view());
            let f = L2SvmPlusParams { c, rho, ..L2SvmPlusParams::default() }.fit(train)?;
            out.add(3, (f.model, status(&f.reports)), x.view());
            for &sigma_prime in &grid.sigma_prime {
                for &lambda in &grid.lambda {
                    let robust = SvmPlusParams { method: LupiMethod::Robust { lambda, sigma_prime }, ..plus.clone() };
                    let f = robust.fit(train)?;
                    out.add(4, (f.model, status(&f.reports)), x.view());
                }
            }
        }
    }
    Ok(out)
}

/// Runs one trial: fits the grid on the preprocessed clean training set, then per noise level scores
/// each method's best-on-validation model on the test set. `seed` drives the noise.
pub fn run_trial(split: &Split, protocol: &Protocol, seed: u64) -> Result<TrialResult> {
    let pre = protocol.preprocess;
    let x_train = pre.apply(split.train.features.to_dense());
    let train = Dataset { features: Features::dense(x_train), ..split.train.clone() };
    let fitted = fit_grid(&train, &protocol.grid)?;
    let corrupt = |x: &Array2<f64>, snr: Option<f64>, seed: u64| -> Features<'static> {
        Features::dense(match (snr, protocol.noise) {
            (None, _) => pre.apply(x.clone()),
            (Some(s), NoiseStage::Raw) => pre.apply(add_white_noise(x.view(), s, seed)),
            (Some(s), NoiseStage::Preprocessed) => add_white_noise(pre.apply(x.clone()).view(), s, seed),
        })
    };
    let accuracy = protocol
        .snrs
        .par_iter()
        .enumerate()
        .map(|(k, &snr)| {
            let seed = seed.wrapping_mul(1000).wrapping_add(2 * k as u64);
            let (xv, yv) = &split.validation;
            let (xt, yt) = &split.test;
            let val = fitted.accuracies(&train.features, &corrupt(xv, snr, seed), yv)?;
            let test = fitted.accuracies(&train.features, &corrupt(xt, snr, seed + 1), yt)?;
            let mut row = [0.0; 5];
            for (method, models) in fitted.models.iter().enumerate() {
                // The first model with the best validation accuracy.
                let best = models.iter().fold(None, |best: Option<(f64, (usize, usize))>, &(g, m)| match best {
                    Some((v, _)) if v >= val[g][m] => best,
                    _ => Some((val[g][m], (g, m))),
                });
                row[method] = best.map_or(f64::NAN, |(_, (g, m))| 100.0 * test[g][m]);
            }
            Ok(row)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(TrialResult { accuracy, fits: fitted.fits, not_converged: fitted.not_converged, degenerate: fitted.degenerate })
}

/// The table: per noise level, each method's mean ± sd over trials, then R-SVM+ − SVM+ and SVM+ − SVM
/// paired over trials (mean ± sd of the differences) with the p-value of the t-test for `design`,
/// Holm-adjusted over the table's differences (two per noise level).
pub fn format_table(protocol: &Protocol, trials: &[TrialResult], design: Resampling) -> String {
    let mut out = format!("{:>8}", "SNR dB");
    for m in METHODS {
        out += &format!(" {m:>14}");
    }
    out += &format!(" {:>26} {:>26}\n", "R-SVM+ - SVM+ (Holm p)", "SVM+ - SVM (Holm p)");
    let pairs = [(4, 2), (2, 0)];
    let differences: Vec<Vec<f64>> = (0..protocol.snrs.len())
        .flat_map(|s| pairs.map(|(a, b)| trials.iter().map(|t| t.accuracy[s][a] - t.accuracy[s][b]).collect()))
        .collect();
    let tests: Vec<_> = differences.iter().map(|d| paired_t_test(d, design)).collect();
    let adjusted = holm(&tests.iter().map(|t| t.map_or(1.0, |t| t.p_value)).collect::<Vec<_>>());
    for (s, snr) in protocol.snrs.iter().enumerate() {
        out += &format!("{:>8}", snr.map_or("clean".to_string(), |v| format!("{v}")));
        let column = |k: usize| trials.iter().map(|t| t.accuracy[s][k]).collect::<Vec<_>>();
        for k in 0..5 {
            let (m, sd) = mean_sd(&column(k));
            out += &format!(" {:>14}", format!("{m:.2} ± {sd:.2}"));
        }
        for k in 2 * s..2 * s + 2 {
            let (m, sd) = mean_sd(&differences[k]);
            let p = if tests[k].is_some() { format!("{:.3}", adjusted[k]) } else { "-".to_string() };
            out += &format!(" {:>26}", format!("{m:+.2} ± {sd:.2} ({p})"));
        }
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lupi::LupiTask;

    /// The grouped, gathered decision values score every model exactly as `KernelModel::predict` does.
    #[test]
    fn grouped_scores_equal_the_models_own_predictions() {
        let split = LupiTask { n: 40, ..LupiTask::default() }.split(3);
        let grid = Grid::small();
        let fitted = fit_grid(&split.train, &grid).unwrap();
        let x = Features::dense(split.validation.0.clone());
        let y = &split.validation.1;
        let acc = fitted.accuracies(&split.train.features, &x, y).unwrap();
        let own = |m: KernelModel| {
            let p = m.predict(&x).unwrap();
            p.iter().zip(y).filter(|(a, b)| a == b).count() as f64 / y.len() as f64
        };
        // The first models of the grid, refitted and scored by themselves.
        let (c, gamma, rho) = (grid.c[0], grid.gamma[0], grid.rho[0]);
        let svm = KernelSvmParams { kernel: Kernel::Rbf { gamma }, c, ..KernelSvmParams::default() };
        let rhhq = RescaledHingeParams { kernel: Kernel::Rbf { gamma }, c, eta: grid.eta[0], ..Default::default() };
        let plus = SvmPlusParams { c, rho, ..SvmPlusParams::default() };
        let robust = LupiMethod::Robust { lambda: grid.lambda[0], sigma_prime: grid.sigma_prime[0] };
        let expected = [
            own(svm.fit(&split.train).unwrap().model),
            own(rhhq.fit(&split.train).unwrap().model),
            own(plus.fit(&split.train).unwrap().model),
            own(L2SvmPlusParams { c, rho, ..Default::default() }.fit(&split.train).unwrap().model),
            own(SvmPlusParams { method: robust, ..plus.clone() }.fit(&split.train).unwrap().model),
        ];
        for (method, e) in expected.iter().enumerate() {
            let (g, m) = fitted.models[method][0];
            assert_eq!(acc[g][m], *e, "{}", METHODS[method]);
        }
        let per_c = grid.gamma.len();
        assert_eq!(
            fitted.fits,
            [
                grid.c.len() * per_c,
                grid.c.len() * per_c * grid.eta.len(),
                grid.c.len() * grid.rho.len(),
                grid.c.len() * grid.rho.len(),
                grid.c.len() * grid.rho.len() * grid.sigma_prime.len() * grid.lambda.len(),
            ]
        );
    }

    #[test]
    fn l1_preprocessing_normalises_rows_and_keeps_zero_rows() {
        let x = Preprocess::L1.apply(ndarray::array![[1.0, -3.0], [0.0, 0.0]]);
        assert_eq!(x, ndarray::array![[0.25, -0.75], [0.0, 0.0]]);
        assert_eq!(Preprocess::None.apply(ndarray::array![[2.0]]), ndarray::array![[2.0]]);
    }

    /// Noise before the L1 normalisation shrinks the noisy vectors along the clean ones: the signed sum
    /// of a row is `Σ(x + e)/‖x + e‖₁ < 1` once noise makes entries negative, while noise after it keeps
    /// the sum at 1 on average.
    #[test]
    fn the_noise_stage_decides_the_scale_of_noisy_pixels() {
        let x = crate::lupi::digits_plus::DigitsPlus::load().pooled;
        let mean_sum = |x: &Array2<f64>| x.sum() / x.nrows() as f64;
        let raw = mean_sum(&Preprocess::L1.apply(add_white_noise(x.view(), 4.0, 1)));
        let after = mean_sum(&add_white_noise(Preprocess::L1.apply(x.clone()).view(), 4.0, 1));
        assert!(raw < 0.9, "noise before normalising: mean row sum {raw}");
        assert!((after - 1.0).abs() < 0.02, "noise after normalising: mean row sum {after}");
    }

    #[test]
    fn a_trial_is_deterministic_and_scores_every_level() {
        let split = LupiTask { n: 30, ..LupiTask::default() }.split(0);
        let protocol = Protocol {
            preprocess: Preprocess::None,
            noise: NoiseStage::Raw,
            snrs: vec![Some(4.0), None],
            grid: Grid {
                c: vec![1.0],
                gamma: vec![0.1],
                eta: vec![1.0],
                rho: vec![1.0],
                sigma_prime: vec![5.0],
                lambda: vec![0.01],
            },
        };
        let a = run_trial(&split, &protocol, 5).unwrap();
        assert_eq!(a, run_trial(&split, &protocol, 5).unwrap());
        assert_eq!(a.accuracy.len(), 2);
        assert!(a.accuracy.iter().flatten().all(|v| (0.0..=100.0).contains(v)));
        assert_ne!(a.accuracy[0], run_trial(&split, &protocol, 6).unwrap().accuracy[0], "the seed drives the noise");
    }
}
