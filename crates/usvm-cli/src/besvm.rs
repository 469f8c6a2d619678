//! `--method besvm`: BE-SVM's flags and their mapping to [`usvm::besvm::BeSvmParams`].

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use usvm::besvm::{BasisExpansionParams, BasisSelection, BasisSize, BeSvmParams, Normalisation, SquaredHingeSvmParams};
use usvm::kernel::similarity::{Grid, Invariant, Measure, gamma_scale};
use usvm::{Dataset, Kernel, Model};

use crate::fit::Fitted;
use crate::train::HyperArgs;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectionKind {
    /// Uniformly at random (seeded by --seed)
    Random,
    /// Evenly spaced training indices
    Index,
    /// Kernel k-medoids on the similarity (seeded by --seed; O(ℓ²) similarities)
    Kmedoids,
    /// Evenly spaced indices with the Nyström normalisation K_BB^{-1/2} (spectrum clipped), for comparison
    Nystroem,
}

/// BE-SVM's flags (used with --method besvm; C defaults to 1 as in the paper).
#[derive(Args, Debug, Clone)]
pub struct BeSvmArgs {
    /// besvm: similarity measure(s), repeatable or comma-separated, maps concatenated: linear, rbf[:GAMMA]
    /// (default γ = 1/(d·Var x)), rigid[:H], deformable[:H[:HL]] (H global, HL local shift in cells)
    #[arg(long, value_name = "S", value_delimiter = ',', default_value = "rbf")]
    pub similarity: Vec<String>,
    /// besvm: default global shift range H (cells) of rigid and deformable
    #[arg(long, value_name = "H", default_value_t = 1)]
    pub shift: usize,
    /// besvm: default local shift range HL (cells) of deformable
    #[arg(long = "local-shift", value_name = "HL", default_value_t = 1)]
    pub local_shift: usize,
    /// besvm: grid shape of each input, HxWxC cells × channels, row-major, channels innermost (HxW: one
    /// channel); needed by rigid/deformable (named --shape since `cv --grid` is the hyper-parameter grid)
    #[arg(long = "shape", value_name = "HxWxC")]
    pub shape: Option<String>,
    /// besvm: number of basis vectors: N, a fraction F in (0, 1], or P% of the training set (default: all)
    #[arg(long = "basis-size", value_name = "N|F|P%")]
    pub basis_size: Option<String>,
    /// besvm: basis selection
    #[arg(long = "basis-selection", value_enum, default_value_t = SelectionKind::Random)]
    pub basis_selection: SelectionKind,
}

fn parse_grid(text: &str) -> Result<Grid> {
    let parts: Vec<&str> = text.split(['x', 'X']).collect();
    let nums: Vec<usize> = parts
        .iter()
        .map(|p| p.trim().parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .with_context(|| format!("invalid value '{text}' for '--shape': expected HxWxC, e.g. 8x8x1"))?;
    let grid = match nums[..] {
        [h, w] => Grid { height: h, width: w, channels: 1 },
        [h, w, c] => Grid { height: h, width: w, channels: c },
        _ => bail!("invalid value '{text}' for '--shape': expected HxWxC, e.g. 8x8x1"),
    };
    if grid.height == 0 || grid.width == 0 || grid.channels == 0 {
        bail!("invalid value '{text}' for '--shape': every dimension must be at least 1");
    }
    Ok(grid)
}

fn parse_basis_size(text: &str) -> Result<BasisSize> {
    let bad = || format!("invalid value '{text}' for '--basis-size': expected a count N, a fraction in (0, 1] or P%");
    let size = if let Some(p) = text.strip_suffix('%') {
        BasisSize::Fraction(p.trim().parse::<f64>().with_context(bad)? / 100.0)
    } else if text.contains('.') || text.contains('e') {
        BasisSize::Fraction(text.parse::<f64>().with_context(bad)?)
    } else {
        BasisSize::Count(text.parse::<usize>().with_context(bad)?)
    };
    match size {
        BasisSize::Fraction(f) if !(f > 0.0 && f <= 1.0) => bail!("{}", bad()),
        BasisSize::Count(0) => bail!("{}", bad()),
        _ => Ok(size),
    }
}

/// One `--similarity` item; RBF without γ gets `default_gamma` (None: resolved from the data later).
fn parse_measure(text: &str, args: &BeSvmArgs, grid: Option<Grid>, default_gamma: Option<f64>) -> Result<Measure> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    let bad = |why: &str| anyhow::anyhow!("invalid value '{text}' for '--similarity': {why}");
    let num = |s: &str| s.parse::<usize>().map_err(|_| bad("shift ranges are non-negative integers"));
    let need_grid = || grid.ok_or_else(|| bad("rigid and deformable need --shape HxWxC"));
    Ok(match parts[..] {
        ["linear"] => Measure::Kernel(Kernel::Linear),
        ["rbf"] => Measure::Kernel(Kernel::Rbf { gamma: default_gamma.unwrap_or(1.0) }),
        ["rbf", g] => {
            let gamma = g.parse::<f64>().map_err(|_| bad("γ must be a number"))?;
            if !(gamma > 0.0 && gamma.is_finite()) {
                return Err(bad("γ must be positive and finite"));
            }
            Measure::Kernel(Kernel::Rbf { gamma })
        }
        ["rigid"] => Measure::Invariant(Invariant::Rigid { grid: need_grid()?, shift: args.shift }),
        ["rigid", h] => Measure::Invariant(Invariant::Rigid { grid: need_grid()?, shift: num(h)? }),
        ["deformable"] => Measure::Invariant(Invariant::Deformable {
            grid: need_grid()?,
            shift: args.shift,
            local_shift: args.local_shift,
        }),
        ["deformable", h] => Measure::Invariant(Invariant::Deformable {
            grid: need_grid()?,
            shift: num(h)?,
            local_shift: args.local_shift,
        }),
        ["deformable", h, hl] => {
            Measure::Invariant(Invariant::Deformable { grid: need_grid()?, shift: num(h)?, local_shift: num(hl)? })
        }
        _ => return Err(bad("expected linear, rbf[:GAMMA], rigid[:H] or deformable[:H[:HL]]")),
    })
}

/// The library parameters; `data` (when given) resolves the default RBF γ.
pub fn params(hyper: &HyperArgs, n_samples: usize, data: Option<&Dataset>) -> Result<BeSvmParams> {
    let args = &hyper.besvm;
    let c = match (hyper.lambda, hyper.c) {
        (Some(l), _) => {
            if !(l > 0.0 && l.is_finite()) {
                bail!("invalid value '{l}' for '--lambda': must be positive and finite");
            }
            1.0 / (l * n_samples as f64)
        }
        (None, Some(c)) => c,
        (None, None) => 1.0,
    };
    let grid = args.shape.as_deref().map(parse_grid).transpose()?;
    let gamma = data.map(|d| gamma_scale(&d.features));
    let measures = args.similarity.iter().map(|s| parse_measure(s, args, grid, gamma)).collect::<Result<Vec<_>>>()?;
    if measures.is_empty() {
        bail!("--similarity needs at least one measure");
    }
    let basis_size = args.basis_size.as_deref().map(parse_basis_size).transpose()?.unwrap_or(BasisSize::All);
    if let BasisSize::Count(b) = basis_size
        && b > n_samples
    {
        bail!("invalid value '{b}' for '--basis-size': the training set has {n_samples} examples");
    }
    let (selection, normalisation) = match args.basis_selection {
        SelectionKind::Random => (BasisSelection::Random { seed: hyper.seed }, Normalisation::BeSvm),
        SelectionKind::Index => (BasisSelection::Index, Normalisation::BeSvm),
        SelectionKind::Kmedoids => {
            (BasisSelection::KMedoids { seed: hyper.seed, max_iter: hyper.max_iter }, Normalisation::BeSvm)
        }
        SelectionKind::Nystroem => (BasisSelection::Index, Normalisation::Nystroem),
    };
    let svm = SquaredHingeSvmParams {
        c,
        fit_intercept: !hyper.no_intercept,
        tol: hyper.tol,
        max_iter: hyper.max_iter,
        ..Default::default()
    };
    svm.validate()?;
    Ok(BeSvmParams { expansion: BasisExpansionParams { measures, basis_size, selection, normalisation }, svm })
}

/// Checks the flags for a training set of `n_samples` examples.
pub fn check(hyper: &HyperArgs, n_samples: usize) -> Result<()> {
    params(hyper, n_samples, None).map(|_| ())
}

pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    let params = params(hyper, data.n_samples(), Some(data))?;
    let fit = params.fit(data).context("training failed")?;
    Ok(Fitted {
        model: Model::BasisExpansion(fit.model),
        reports: fit.reports,
        hyperparameters: serde_json::to_value(&params)?,
    })
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
        let args = BeSvmArgs {
            similarity: vec![],
            shift: 2,
            local_shift: 1,
            shape: None,
            basis_size: None,
            basis_selection: SelectionKind::Random,
        };
        let grid = Grid { height: 8, width: 8, channels: 1 };
        let g = Some(grid);
        assert_eq!(
            parse_measure("deformable", &args, g, None).unwrap(),
            Measure::Invariant(Invariant::Deformable { grid, shift: 2, local_shift: 1 })
        );
        assert_eq!(
            parse_measure("rigid:3", &args, g, None).unwrap(),
            Measure::Invariant(Invariant::Rigid { grid, shift: 3 })
        );
        assert_eq!(parse_measure("rbf:0.5", &args, None, None).unwrap(), Measure::Kernel(Kernel::Rbf { gamma: 0.5 }));
        assert_eq!(parse_measure("rbf", &args, None, Some(0.2)).unwrap(), Measure::Kernel(Kernel::Rbf { gamma: 0.2 }));
        assert!(parse_measure("rigid", &args, None, None).is_err());
        assert!(parse_measure("rbf:-1", &args, None, None).is_err());
        assert!(parse_measure("cosine", &args, None, None).is_err());
    }
}
