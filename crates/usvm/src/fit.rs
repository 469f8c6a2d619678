//! `fit`: the one entry point from [`MethodParams`] and a [`Dataset`] to a fitted [`Fit`], for every
//! method: validation once, at the top, then the method's own fit on the requested thread pool; a model
//! with a non-finite coefficient is an error, never a result.

use std::cell::RefCell;
use std::sync::Arc;

use rayon::ThreadPool;

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
        Some(threads) => pool(threads)?.install(run),
        None => run(),
    }
}

/// A pool of `threads` threads for a fit from this thread: the one its last fit used if that had as many,
/// else a new one, kept in its place. Building a pool for each fit cost 0.10–0.15 ms of thread starts and
/// joins (0.3 ms on a loaded machine), where handing work to a kept pool costs 5–15 µs: a fit of 40 rows on
/// 2 threads through Python, 0.26–0.28 → 0.11–0.16 ms (on 1 thread no gain shows: its one worker sleeps
/// between fits). One pool per calling thread, so that fits from several threads still run side by side;
/// never one made before a `fork` (in another process), whose threads the child does not have.
fn pool(threads: usize) -> Result<Arc<ThreadPool>> {
    thread_local! {
        /// (process id, threads, pool) of this thread's last fit.
        static LAST: RefCell<Option<(u32, usize, Arc<ThreadPool>)>> = const { RefCell::new(None) };
    }
    let pid = std::process::id();
    LAST.with_borrow_mut(|last| {
        if let Some((p, t, pool)) = last.as_ref()
            && (*p, *t) == (pid, threads)
        {
            return Ok(Arc::clone(pool));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|_| crate::error::invalid("threads", threads, "could not start a thread pool of this size"))?;
        let pool = Arc::new(pool);
        if let Some((p, _, inherited)) = last.replace((pid, threads, Arc::clone(&pool)))
            && p != pid
        {
            // Its threads stayed in the parent: nothing here to stop.
            std::mem::forget(inherited);
        }
        Ok(pool)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's fits share a pool while they ask for as many threads; another size replaces it; another
    /// thread has its own, so that fits from two threads do not queue on one pool.
    #[test]
    fn a_thread_keeps_its_last_pool() {
        let two = pool(2).unwrap();
        assert_eq!(two.current_num_threads(), 2);
        assert!(Arc::ptr_eq(&two, &pool(2).unwrap()));
        let three = pool(3).unwrap();
        assert_eq!(three.current_num_threads(), 3);
        assert!(!Arc::ptr_eq(&two, &three));
        assert!(!Arc::ptr_eq(&two, &pool(2).unwrap()), "the size changed twice: a new pool");
        let here = pool(1).unwrap();
        let there = std::thread::spawn(|| pool(1).unwrap()).join().unwrap();
        assert!(!Arc::ptr_eq(&here, &there));
        // A pool runs work while a pool of the same size runs on another thread's behalf.
        let outer = pool(1).unwrap();
        let inner = outer.install(|| std::thread::spawn(|| pool(1).unwrap().install(|| 7)).join().unwrap());
        assert_eq!(inner, 7);
    }
}
