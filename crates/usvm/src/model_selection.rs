//! Seeded, stratified splits and cross-validation.
//!
//! Every split is stratified (each class is shuffled on its own and dealt out in proportion) and seeded:
//! same seed, same indices. Cross-validation runs its folds in parallel and returns results in fold order.
//!
//! ```
//! use usvm::model_selection::stratified_k_fold;
//! let labels = vec![0, 0, 0, 0, 1, 1, 1, 1];
//! let folds = stratified_k_fold(&labels, 4, 7);
//! assert_eq!(folds.len(), 4);
//! assert!(folds.iter().all(|f| f.len() == 2 && labels[f[0]] != labels[f[1]]));
//! ```

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::data::Dataset;
use crate::error::{Error, Result, invalid};
use crate::model::Model;
use crate::svm::{LinearFit, LinearSvmParams};

/// Indices of each class, in class order, each shuffled with one seeded generator.
fn shuffled_by_class(labels: &[i64], seed: u64) -> Vec<Vec<usize>> {
    let mut classes: Vec<i64> = labels.to_vec();
    classes.sort_unstable();
    classes.dedup();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    classes
        .iter()
        .map(|&c| {
            let mut idx: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == c).collect();
            idx.shuffle(&mut rng);
            idx
        })
        .collect()
}

/// `k` disjoint test folds covering every example; each class is spread over the folds as evenly as
/// possible (fold sizes differ by at most one per class). Indices within a fold are sorted.
pub fn stratified_k_fold(labels: &[i64], k: usize, seed: u64) -> Vec<Vec<usize>> {
    let k = k.max(1);
    let mut folds = vec![Vec::new(); k];
    let mut next = 0;
    for class in shuffled_by_class(labels, seed) {
        for i in class {
            folds[next % k].push(i);
            next += 1;
        }
    }
    folds.iter_mut().for_each(|f| f.sort_unstable());
    folds
}

/// A stratified `(train, test)` split with `round(test_fraction · n_c)` test examples of each class `c`
/// (at least one of a class with two or more examples, and never all of them).
pub fn stratified_split(labels: &[i64], test_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for class in shuffled_by_class(labels, seed) {
        let n = class.len();
        let t = ((test_fraction * n as f64).round() as usize).clamp(usize::from(n >= 2), n.saturating_sub(1));
        test.extend_from_slice(&class[..t]);
        train.extend_from_slice(&class[t..]);
    }
    train.sort_unstable();
    test.sort_unstable();
    (train, test)
}

/// The complement of `test` in `0..n` (sorted).
pub fn complement(n: usize, test: &[usize]) -> Vec<usize> {
    let mut in_test = vec![false; n];
    test.iter().for_each(|&i| in_test[i] = true);
    (0..n).filter(|&i| !in_test[i]).collect()
}

/// The result of one cross-validation fold.
#[derive(Debug, Clone)]
pub struct FoldResult {
    /// The held-out examples.
    pub test: Vec<usize>,
    /// The model fitted on the others.
    pub model: Model,
    /// Decision values of the held-out examples (`test.len() × K`).
    pub decision: ndarray::Array2<f64>,
    /// Accuracy on the held-out examples.
    pub accuracy: f64,
}

/// Fits `params` on each fold's complement and evaluates on the fold, in parallel, in fold order.
pub fn cross_validate(params: &LinearSvmParams, data: &Dataset, k: usize, seed: u64) -> Result<Vec<FoldResult>> {
    cross_validate_with(data, k, seed, |train, _| Ok(Model::Linear(params.fit(train)?.model)))
}

/// Fits any method (`fit(train, rows)` maps a training set, and the rows of `data` it holds, to a model) on
/// each fold's complement and evaluates it on the fold, in parallel, in fold order.
/// The error type is the closure's, so that callers keep their own errors.
pub fn cross_validate_with<F, E>(data: &Dataset, k: usize, seed: u64, fit: F) -> std::result::Result<Vec<FoldResult>, E>
where
    F: Fn(&Dataset, &[usize]) -> std::result::Result<Model, E> + Sync,
    E: From<Error> + Send,
{
    cross_validate_folds_with(data, k, seed, &(0..k).collect::<Vec<_>>(), fit)
}

/// [`cross_validate_with`] for the folds `which` only (indices into the `k` stratified folds), in that
/// order: one part of a cross-validation split over several processes or machines.
pub fn cross_validate_folds_with<F, E>(
    data: &Dataset,
    k: usize,
    seed: u64,
    which: &[usize],
    fit: F,
) -> std::result::Result<Vec<FoldResult>, E>
where
    F: Fn(&Dataset, &[usize]) -> std::result::Result<Model, E> + Sync,
    E: From<Error> + Send,
{
    if k < 2 || k > data.n_samples() {
        return Err(invalid("folds", k, "must be at least 2 and at most the number of examples").into());
    }
    if let Some(&f) = which.iter().find(|&&f| f >= k) {
        return Err(invalid("fold", f, "must be below the number of folds").into());
    }
    let folds = stratified_k_fold(&data.labels, k, seed);
    which
        .par_iter()
        .map(|&f| {
            let test = folds[f].clone();
            let train = complement(data.n_samples(), &test);
            let held_out = data.select(&test);
            let model = fit(&data.select(&train), &train)?;
            let decision = model.decision_function(&held_out.features)?;
            let predicted = model.predict_from(&decision);
            let correct = predicted.iter().zip(held_out.labels.iter()).filter(|(p, y)| p == y).count();
            Ok(FoldResult { accuracy: correct as f64 / test.len() as f64, test, model, decision })
        })
        .collect()
}

/// Cross-validation accuracy (correct held-out predictions over all examples) for each λ in `lambdas`,
/// in that order. Each fold walks the λ path from the largest to the smallest value, warm-starting every
/// fit from the previous solution; folds run in parallel.
pub fn cross_validate_path(
    params: &LinearSvmParams,
    lambdas: &[f64],
    data: &Dataset,
    k: usize,
    seed: u64,
    on_fit: &(dyn Fn() + Sync),
) -> Result<Vec<f64>> {
    if k < 2 || k > data.n_samples() {
        return Err(invalid("folds", k, "must be at least 2 and at most the number of examples"));
    }
    let mut order: Vec<usize> = (0..lambdas.len()).collect();
    order.sort_by(|&a, &b| lambdas[b].total_cmp(&lambdas[a]));
    let per_fold: Vec<Vec<usize>> = stratified_k_fold(&data.labels, k, seed)
        .into_par_iter()
        .map(|test| {
            let (train, held_out) = (data.select(&complement(data.n_samples(), &test)), data.select(&test));
            let mut correct = vec![0; lambdas.len()];
            let mut previous: Option<LinearFit> = None;
            for &j in &order {
                let p = LinearSvmParams { lambda: lambdas[j], ..params.clone() };
                let fit = p.fit_from(&train, previous.as_ref().map(|f| &f.model))?;
                let predicted = fit.model.predict(&held_out.features)?;
                correct[j] = predicted.iter().zip(held_out.labels.iter()).filter(|(p, y)| p == y).count();
                previous = Some(fit);
                on_fit();
            }
            Ok(correct)
        })
        .collect::<Result<_>>()?;
    Ok((0..lambdas.len())
        .map(|j| per_fold.iter().map(|c| c[j]).sum::<usize>() as f64 / data.n_samples() as f64)
        .collect())
}

/// Out-of-fold decision values of a binary problem, in example order (for Platt scaling, which must
/// not be fitted on training scores).
pub fn cross_val_decision(params: &LinearSvmParams, data: &Dataset, k: usize, seed: u64) -> Result<Vec<f64>> {
    cross_val_decision_with(data, k, seed, |train, _| Ok(Model::Linear(params.fit(train)?.model)))
}

/// [`cross_val_decision`] for any method (`fit(train, rows)` as for [`cross_validate_with`]).
pub fn cross_val_decision_with<F, E>(data: &Dataset, k: usize, seed: u64, fit: F) -> std::result::Result<Vec<f64>, E>
where
    F: Fn(&Dataset, &[usize]) -> std::result::Result<Model, E> + Sync,
    E: From<Error> + Send,
{
    Ok(cross_val_decisions_with(data, k, seed, fit)?.column(0).to_vec())
}

/// Out-of-fold decision values of every output (`n × outputs`, in example order), for any method.
pub fn cross_val_decisions_with<F, E>(
    data: &Dataset,
    k: usize,
    seed: u64,
    fit: F,
) -> std::result::Result<ndarray::Array2<f64>, E>
where
    F: Fn(&Dataset, &[usize]) -> std::result::Result<Model, E> + Sync,
    E: From<Error> + Send,
{
    let folds = cross_validate_with(data, k, seed, fit)?;
    let outputs = folds.first().map_or(1, |f| f.decision.ncols());
    let mut values = ndarray::Array2::zeros((data.n_samples(), outputs));
    for fold in folds {
        for (r, &i) in fold.test.iter().enumerate() {
            values.row_mut(i).assign(&fold.decision.row(r));
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_partition_and_stratify() {
        let labels: Vec<i64> = (0..103).map(|i| if i % 3 == 0 { 5 } else { -1 }).collect();
        let folds = stratified_k_fold(&labels, 10, 3);
        let mut all: Vec<usize> = folds.concat();
        all.sort_unstable();
        assert_eq!(all, (0..103).collect::<Vec<_>>());
        for f in &folds {
            let pos = f.iter().filter(|&&i| labels[i] == 5).count();
            assert!((3..=4).contains(&pos), "{pos}");
        }
        assert_eq!(folds, stratified_k_fold(&labels, 10, 3));
        assert_ne!(folds, stratified_k_fold(&labels, 10, 4));
    }

    #[test]
    fn split_is_stratified_and_disjoint() {
        let labels: Vec<i64> = (0..569).map(|i| i64::from(i < 212)).collect();
        let (train, test) = stratified_split(&labels, 0.1, 0);
        assert_eq!(train.len() + test.len(), 569);
        assert_eq!(test.iter().filter(|&&i| labels[i] == 1).count(), 21);
        assert_eq!(test.iter().filter(|&&i| labels[i] == 0).count(), 36);
        assert_eq!(complement(569, &test), train);
    }
}
