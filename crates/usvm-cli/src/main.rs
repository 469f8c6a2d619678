//! `usvm`: the command-line interface of the usvm library: `train`, `predict`, `cv`, `demo` and `plot`.

// Doc comments on the argument structs are `--help` texts (`rbf[:GAMMA]` is syntax, not a link).
#![allow(rustdoc::broken_intra_doc_links)]

mod commit;
mod cv;
mod demo;
mod input;
mod method_args;
mod plot;
mod predict;
mod privileged;
mod progress;
mod train;
mod uncertainty;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "usvm",
    version,
    about = "Max-margin learning from uncertain data (Gaussian, bounded, privileged and similarity-based examples)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a classifier (any --method) and write a JSON model file
    #[command(after_long_help = method_args::defaults_help())]
    Train(train::TrainArgs),
    /// Score examples with a model (usvm JSON or svm-gsu linear model file)
    ///
    /// Data with more features than the model: for linear models the extra features count as zero
    /// coefficients (LIBLINEAR's rule); for kernel models the support vectors are zero there (LIBSVM's
    /// rule: no change for the linear kernel, the values enter ‖x‖ for RBF/polynomial); explicit
    /// feature-map and BE-SVM models refuse such data. Fewer features read as zero-padded.
    Predict(predict::PredictArgs),
    /// Stratified k-fold cross-validation over a grid of hyper-parameters
    #[command(after_long_help = method_args::defaults_help())]
    Cv(cv::CvArgs),
    /// Reproduce the WDBC experiment (thesis Table 3.2) on the embedded breast-cancer data
    Demo(demo::DemoArgs),
    /// Build uncertain inputs (means + covariances) from repeated observations, images, standard errors, series or feature maps
    Uncertainty(uncertainty::UncertaintyArgs),
    /// Draw a figure (PNG or SVG): decision boundaries, precision-recall curves, sampling angle
    Plot(plot::PlotArgs),
}

fn main() -> ExitCode {
    // Help and version go to stdout; a usage error prints clap's whole message and exits with 2.
    let cli = Cli::parse();
    commit::remove_temporaries_on_signal();
    let result = match cli.command {
        Command::Train(args) => train::run(&args),
        Command::Predict(args) => predict::run(&args),
        Command::Cv(args) => cv::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Uncertainty(args) => uncertainty::run(&args),
        Command::Plot(args) => plot::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the whole context chain on one line.
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}
