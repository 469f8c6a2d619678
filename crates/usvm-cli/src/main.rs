//! `usvm`: the command-line interface of the usvm library: `train`, `predict`, `cv` and `demo`.

mod cv;
mod demo;
mod fit;
mod input;
mod kernel_args;
mod output;
mod predict;
mod svm;
mod train;
mod tsvc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "usvm", version, about = "Max-margin learning from uncertain data (LSVM-GSU and baselines)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a linear classifier and write a JSON model file
    Train(train::TrainArgs),
    /// Score examples with a model (usvm JSON or svm-gsu linear model file)
    Predict(predict::PredictArgs),
    /// Stratified k-fold cross-validation over a grid of hyper-parameters
    Cv(cv::CvArgs),
    /// Reproduce the WDBC experiment (thesis Table 3.2) on the embedded breast-cancer data
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to stdout as usual; usage errors are reduced to their first line.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid arguments"));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Train(args) => train::run(&args),
        Command::Predict(args) => predict::run(&args),
        Command::Cv(args) => cv::run(&args),
        Command::Demo(args) => demo::run(&args),
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
