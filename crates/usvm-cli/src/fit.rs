//! One entry point from the command-line hyper-parameters to a fitted model, for every method: `train`,
//! `cv` and Platt scaling all go through [`fit`]. A method family adds one arm here and keeps its own
//! flags and parameter mapping in its own module.

use anyhow::{Context, Result};
use usvm::svm::FitReport;
use usvm::{Dataset, Model};

use crate::train::{HyperArgs, Method};

/// A fitted model with what the report and the model file need.
pub struct Fitted {
    pub model: Model,
    /// One solver report per binary problem (one per class for one-vs-rest).
    pub reports: Vec<FitReport>,
    /// The library parameters, as stored in the model file's "hyperparameters".
    pub hyperparameters: serde_json::Value,
}

/// The method's name in model files and reports (the `--method` value).
pub fn method_name(method: Method) -> String {
    clap::ValueEnum::to_possible_value(&method).expect("no skipped variants").get_name().to_string()
}

/// Checks the hyper-parameters for a training set of `n_samples` examples without fitting (so that `cv`
/// can reject a bad grid point before the long run).
pub fn check(hyper: &HyperArgs, n_samples: usize) -> Result<()> {
    match hyper.method {
        Method::Gsu | Method::Hinge | Method::Iso | Method::Sampling | Method::Power => {
            hyper.params(n_samples).map(|_| ())
        }
        Method::Svm => crate::svm::check(hyper, n_samples),
        Method::KsvmIgsu => crate::ksvm_igsu::params(hyper, n_samples, 1).map(|_| ()),
        Method::SqhingeGsu => crate::sqhinge::params(hyper, n_samples).map(|_| ()),
        Method::Besvm => crate::besvm::check(hyper, n_samples),
        Method::Svmplus | Method::Rsvmplus => crate::svm_plus::check(hyper, n_samples),
        Method::Tsvc => crate::tsvc::check(hyper, n_samples),
    }
}

/// Fits the method chosen by `hyper` on `data`.
pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    match hyper.method {
        Method::Gsu | Method::Hinge | Method::Iso | Method::Sampling | Method::Power => {
            let params = hyper.params(data.n_samples())?;
            let fit = params.fit(data).context("training failed")?;
            Ok(Fitted {
                model: Model::Linear(fit.model),
                reports: fit.reports,
                hyperparameters: serde_json::to_value(&params)?,
            })
        }
        Method::Svm => crate::svm::fit(hyper, data),
        Method::KsvmIgsu => crate::ksvm_igsu::fit(hyper, data),
        Method::SqhingeGsu => crate::sqhinge::fit(hyper, data),
        Method::Besvm => crate::besvm::fit(hyper, data),
        Method::Svmplus | Method::Rsvmplus => crate::svm_plus::fit(hyper, data),
        Method::Tsvc => crate::tsvc::fit(hyper, data),
    }
}

/// [`fit`] as a model-valued closure for the library's cross-validation routines.
pub fn fit_model(hyper: &HyperArgs) -> impl Fn(&Dataset) -> Result<Model> + Sync + '_ {
    move |data| fit(hyper, data).map(|f| f.model)
}
