//! `besvm`: BE-SVM, a squared-hinge linear SVM on normalised similarities to a basis
//! ([`crate::besvm::BeSvmParams`]); indefinite measures allowed.

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, Regularization, positive};
use crate::besvm::{
    BasisExpansionParams, BasisSelection, BasisSize, BeSvmParams, Normalisation, SquaredHingeSvmParams,
};
use crate::data::Dataset;
use crate::error::{Error, Result, invalid};
use crate::kernel::Kernel;
use crate::kernel::similarity::{Grid, Invariant, Measure, gamma_scale};
use crate::model::Model;

/// How the basis is chosen (random and k-medoids are seeded by [`FitOptions::seed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BasisSelectionKind {
    /// Uniformly at random.
    Random,
    /// Evenly spaced training indices.
    Index,
    /// Kernel k-medoids on the similarity (`O(ℓ²)` similarities).
    Kmedoids,
    /// Evenly spaced indices with the Nyström normalisation `K_BB^{-1/2}`, for comparison.
    Nystroem,
}

/// BE-SVM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Besvm {
    /// `C` (default 1, the paper's choice) or `λ`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// Newton's stopping rule `‖∇J‖ ≤ tol·‖∇J(0)‖`.
    pub tol: f64,
    /// Maximum Newton iterations (and k-medoids iterations).
    pub max_iter: usize,
    /// Similarity measures, maps concatenated: `linear`, `rbf[:GAMMA]` (default `γ = 1/(d·Var x)`),
    /// `rigid[:H]`, `deformable[:H[:HL]]`.
    pub similarity: Vec<String>,
    /// Default global shift range `H` (cells) of rigid and deformable.
    pub shift: usize,
    /// Default local shift range `HL` (cells) of deformable.
    pub local_shift: usize,
    /// Grid shape `HxWxC` (or `HxW`) of each input, needed by rigid and deformable.
    pub shape: Option<String>,
    /// Basis size: a count `N`, a fraction in `(0, 1]`, or `P%` (default: all).
    pub basis_size: Option<String>,
    /// Basis selection.
    pub basis_selection: BasisSelectionKind,
}

impl Default for Besvm {
    fn default() -> Self {
        Besvm {
            regularization: Regularization::C(1.0),
            fit_intercept: true,
            tol: 1e-6,
            max_iter: 1000,
            similarity: vec!["rbf".into()],
            shift: 1,
            local_shift: 1,
            shape: None,
            basis_size: None,
            basis_selection: BasisSelectionKind::Random,
        }
    }
}

fn bad(name: &'static str, text: &str, why: &'static str) -> Error {
    invalid(name, text, why)
}

/// `HxW` or `HxWxC`.
pub fn parse_grid(text: &str) -> Result<Grid> {
    let why = "expected HxWxC with every dimension at least 1, e.g. 8x8x1";
    let nums = text
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad("shape", text, why))?;
    let grid = match nums[..] {
        [h, w] => Grid { height: h, width: w, channels: 1 },
        [h, w, c] => Grid { height: h, width: w, channels: c },
        _ => return Err(bad("shape", text, why)),
    };
    if grid.height == 0 || grid.width == 0 || grid.channels == 0 {
        return Err(bad("shape", text, why));
    }
    Ok(grid)
}

/// `N`, a fraction in `(0, 1]`, or `P%`.
pub fn parse_basis_size(text: &str) -> Result<BasisSize> {
    let err = || bad("basis_size", text, "expected a count N ≥ 1, a fraction in (0, 1] or P%");
    let size = if let Some(p) = text.strip_suffix('%') {
        BasisSize::Fraction(p.trim().parse::<f64>().map_err(|_| err())? / 100.0)
    } else if text.contains('.') || text.contains('e') {
        BasisSize::Fraction(text.parse::<f64>().map_err(|_| err())?)
    } else {
        BasisSize::Count(text.parse::<usize>().map_err(|_| err())?)
    };
    match size {
        BasisSize::Fraction(f) if !(f > 0.0 && f <= 1.0) => Err(err()),
        BasisSize::Count(0) => Err(err()),
        _ => Ok(size),
    }
}

impl Besvm {
    /// One similarity item; RBF without `γ` gets `default_gamma`.
    fn measure(&self, text: &str, grid: Option<Grid>, default_gamma: f64) -> Result<Measure> {
        let parts: Vec<&str> = text.trim().split(':').collect();
        let err = |why| bad("similarity", text, why);
        let num = |s: &str| s.parse::<usize>().map_err(|_| err("shift ranges are non-negative integers"));
        let need_grid = || grid.ok_or_else(|| err("rigid and deformable need a shape HxWxC"));
        Ok(match parts[..] {
            ["linear"] => Measure::Kernel(Kernel::Linear),
            ["rbf"] => Measure::Kernel(Kernel::Rbf { gamma: default_gamma }),
            ["rbf", g] => {
                let gamma = g.parse::<f64>().map_err(|_| err("γ must be a number"))?;
                positive("gamma", gamma).map_err(|_| err("γ must be positive and finite"))?;
                Measure::Kernel(Kernel::Rbf { gamma })
            }
            ["rigid"] => Measure::Invariant(Invariant::Rigid { grid: need_grid()?, shift: self.shift }),
            ["rigid", h] => Measure::Invariant(Invariant::Rigid { grid: need_grid()?, shift: num(h)? }),
            ["deformable"] => Measure::Invariant(Invariant::Deformable {
                grid: need_grid()?,
                shift: self.shift,
                local_shift: self.local_shift,
            }),
            ["deformable", h] => Measure::Invariant(Invariant::Deformable {
                grid: need_grid()?,
                shift: num(h)?,
                local_shift: self.local_shift,
            }),
            ["deformable", h, hl] => {
                Measure::Invariant(Invariant::Deformable { grid: need_grid()?, shift: num(h)?, local_shift: num(hl)? })
            }
            _ => return Err(err("expected linear, rbf[:GAMMA], rigid[:H] or deformable[:H[:HL]]")),
        })
    }

    /// The solver settings for `n_samples` examples; `default_gamma` resolves `rbf` without `γ`.
    fn params(&self, n_samples: usize, default_gamma: f64, seed: u64) -> Result<BeSvmParams> {
        let grid = self.shape.as_deref().map(parse_grid).transpose()?;
        let measures =
            self.similarity.iter().map(|s| self.measure(s, grid, default_gamma)).collect::<Result<Vec<_>>>()?;
        if measures.is_empty() {
            return Err(invalid("similarity", "[]", "needs at least one measure"));
        }
        let basis_size = self.basis_size.as_deref().map(parse_basis_size).transpose()?.unwrap_or(BasisSize::All);
        if let BasisSize::Count(b) = basis_size
            && b > n_samples
        {
            return Err(invalid("basis_size", b, "exceeds the number of training examples"));
        }
        let (selection, normalisation) = match self.basis_selection {
            BasisSelectionKind::Random => (BasisSelection::Random { seed }, Normalisation::BeSvm),
            BasisSelectionKind::Index => (BasisSelection::Index, Normalisation::BeSvm),
            BasisSelectionKind::Kmedoids => {
                (BasisSelection::KMedoids { seed, max_iter: self.max_iter }, Normalisation::BeSvm)
            }
            BasisSelectionKind::Nystroem => (BasisSelection::Index, Normalisation::Nystroem),
        };
        let svm = SquaredHingeSvmParams {
            c: self.regularization.c(n_samples)?,
            fit_intercept: self.fit_intercept,
            tol: self.tol,
            max_iter: self.max_iter,
            ..Default::default()
        };
        svm.validate()?;
        Ok(BeSvmParams { expansion: BasisExpansionParams { measures, basis_size, selection, normalisation }, svm })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.params(n_samples, 1.0, 0).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let params = self.params(data.n_samples(), gamma_scale(&data.features), opts.seed)?;
        let start = match opts.start {
            Some(Model::BasisExpansion(m)) => Some(m),
            _ => None,
        };
        let fit = params.fit_monitored(data, start, opts.monitor())?;
        Ok(Fit::new(Model::BasisExpansion(fit.model), fit.reports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_grids_sizes_and_measures() {
        assert_eq!(parse_grid("8x8").unwrap(), Grid { height: 8, width: 8, channels: 1 });
        assert_eq!(parse_grid("4x6x31").unwrap(), Grid { height: 4, width: 6, channels: 31 });
        assert!(parse_grid("8x").is_err() && parse_grid("0x8").is_err() && parse_grid("1x2x3x4").is_err());
        assert_eq!(parse_basis_size("100").unwrap(), BasisSize::Count(100));
        assert_eq!(parse_basis_size("0.25").unwrap(), BasisSize::Fraction(0.25));
        assert_eq!(parse_basis_size("10%").unwrap(), BasisSize::Fraction(0.1));
        assert!(parse_basis_size("0").is_err() && parse_basis_size("150%").is_err() && parse_basis_size("x").is_err());
        let p = Besvm { shift: 2, local_shift: 1, ..Besvm::default() };
        let grid = Grid { height: 8, width: 8, channels: 1 };
        let g = Some(grid);
        assert_eq!(
            p.measure("deformable", g, 1.0).unwrap(),
            Measure::Invariant(Invariant::Deformable { grid, shift: 2, local_shift: 1 })
        );
        assert_eq!(p.measure("rigid:3", g, 1.0).unwrap(), Measure::Invariant(Invariant::Rigid { grid, shift: 3 }));
        assert_eq!(p.measure("rbf:0.5", None, 1.0).unwrap(), Measure::Kernel(Kernel::Rbf { gamma: 0.5 }));
        assert_eq!(p.measure("rbf", None, 0.2).unwrap(), Measure::Kernel(Kernel::Rbf { gamma: 0.2 }));
        for bad in ["rigid", "rbf:-1", "cosine"] {
            match p.measure(bad, None, 1.0) {
                Err(Error::InvalidParameter { name: "similarity", .. }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
