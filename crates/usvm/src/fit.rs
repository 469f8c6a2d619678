//! `fit`: the one entry point from [`MethodParams`] and a [`Dataset`] to a fitted [`Fit`], for every
//! method: validation once, at the top, then the method's own fit on the requested thread pool; a model
//! with a non-finite coefficient is an error, never a result.

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::methods::{Fit, FitOptions, Progress, Regularization};
use crate::params::MethodParams;
use crate::progress::{Iteration, Quantity};

/// Fits `params` on `data`: binary for two classes (the larger label positive), one-vs-rest otherwise.
///
/// Weights and the regularisation: given as `λ`, the data term is the weighted mean `(1/Σc) Σ c_i L_i`
/// (the weights are rescaled to mean one, so a weight of 2 is a repeated example and scaling every weight
/// changes nothing); given as `C`, it is the weighted sum `C Σ c_i L_i` (LIBSVM's and LIBLINEAR's).
pub fn fit(params: &MethodParams, data: &Dataset, options: &FitOptions) -> Result<Fit> {
    options.emit(Progress::Phase("validating"));
    data.validate_checking(!params.checks_dense_values(data))?;
    params.validate(data.n_samples())?;
    let reweighted = match params.regularization() {
        Regularization::Lambda(_) => data.mean_one_weights().map(|w| data.reweighted(w)),
        Regularization::C(_) => None,
    };
    let data = reweighted.as_ref().unwrap_or(data);
    // Every solver keeps a few dense vectors of `n` values (iterate, gradient, direction, ...): a stated
    // dimension beyond the memory is an error here, not an abort inside the solver.
    crate::memory::reserve(
        "the solver's working vectors",
        "read fewer features (--n-features) or select features first",
        &[8, data.n_features()],
    )?;
    let run = || {
        options.emit(Progress::Phase("fitting"));
        let fit = match params {
            MethodParams::Gsu(p) => p.fit(data, options),
            MethodParams::Hinge(p) => p.fit_as(crate::svm::LinearMethod::Hinge, 0, data, options),
            MethodParams::Iso(p) => p.fit_as(crate::svm::LinearMethod::Iso, 0, data, options),
            MethodParams::Sampling(p) => p.fit(data, options),
            MethodParams::Power(p) => p.fit(data, options),
            MethodParams::Svm(p) => p.fit(data, options),
            MethodParams::KsvmIgsu(p) => p.fit(data, options),
            MethodParams::SqhingeGsu(p) => p.fit(data, options),
            MethodParams::Besvm(p) => p.fit(data, options),
            MethodParams::Svmplus(p) => p.fit(data, options),
            MethodParams::Rsvmplus(p) => p.fit(data, options),
            MethodParams::L2svmplus(p) => p.fit(data, options),
            MethodParams::RsvmRhhq(p) => p.fit(data, options),
            MethodParams::Tsvc(p) => p.fit(data, options),
            MethodParams::Logistic(p) => p.fit(data, options),
        }?;
        if options.monitor().stopped() {
            return Err(Error::Interrupted);
        }
        if !fit.model.is_finite() {
            return Err(Error::SolverFailure {
                solver: params.name(),
                detail: "the fitted model has non-finite coefficients (an overflow: rescale the features, or use \
                         the exact solver)"
                    .into(),
            });
        }
        // Each binary problem's last event states its report: the sequence of objectives ends there.
        let of = fit.reports.len();
        for (k, r) in fit.reports.iter().enumerate() {
            options.emit(Progress::Iteration(Iteration {
                problem: (k, of),
                iteration: r.n_iter,
                objective: r.objective,
                residual: r.gradient_norm,
                quantity: Quantity::Final,
            }));
        }
        options.emit(Progress::Done(&fit.reports));
        Ok(fit)
    };
    match options.threads {
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|_| crate::error::invalid("threads", threads, "could not start a thread pool of this size"))?
            .install(run),
        None => run(),
    }
}
