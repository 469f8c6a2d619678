//! k-medoids on a dissimilarity matrix (alternating "Voronoi iteration", Park & Jun 2009), seeded by
//! k-medoids++ (D² sampling as in k-means++).
//!
//! Minimises `Σ_i d(i, m(i))` over `k` medoids, `m(i)` the medoid nearest to `i`: assign every point to its
//! nearest medoid, move each medoid to the member of its cluster with the smallest total dissimilarity to
//! the cluster, repeat until the medoids stop changing. Every step does not increase the cost. `d` need not
//! be a metric (BE-SVM's kernel distances from indefinite similarities are not).

use ndarray::ArrayView2;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The result of [`kmedoids`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMedoids {
    /// Indices of the `k` medoids, in the order they were first chosen.
    pub medoids: Vec<usize>,
    /// Cluster (position in `medoids`) of every point.
    pub assignment: Vec<usize>,
    /// `Σ_i d(i, m(i))`.
    pub cost: f64,
    /// Alternating iterations run.
    pub n_iter: usize,
    /// Whether the assignment stopped changing before the iteration limit.
    pub converged: bool,
}

/// `k` medoids of the `n × n` dissimilarity matrix `d` (`1 ≤ k ≤ n`, entries ≥ 0, zero diagonal). Seeded:
/// same seed, same medoids.
pub fn kmedoids(d: ArrayView2<f64>, k: usize, seed: u64, max_iter: usize) -> KMedoids {
    let n = d.nrows();
    assert!(k >= 1 && k <= n && d.ncols() == n, "1 ≤ k ≤ n and a square matrix");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    // k-medoids++: the first uniformly, then each with probability ∝ (distance to the nearest chosen)².
    let mut medoids = vec![rng.random_range(0..n)];
    let mut nearest: Vec<f64> = (0..n).map(|i| d[[i, medoids[0]]]).collect();
    while medoids.len() < k {
        let weights: Vec<f64> = nearest.iter().map(|&v| v * v).collect();
        let total: f64 = weights.iter().sum();
        let next = if total > 0.0 {
            let mut u = rng.random::<f64>() * total;
            let mut pick = None;
            for (i, &w) in weights.iter().enumerate() {
                if w > 0.0 {
                    pick = Some(i);
                    if u < w {
                        break;
                    }
                    u -= w;
                }
            }
            pick.expect("a positive weight exists")
        } else {
            // Every point coincides with a medoid: take the first point not yet chosen.
            (0..n).find(|i| !medoids.contains(i)).expect("k ≤ n")
        };
        medoids.push(next);
        nearest.iter_mut().enumerate().for_each(|(i, v)| *v = v.min(d[[i, next]]));
    }
    let assign = |medoids: &[usize]| -> (Vec<usize>, f64) {
        let mut cost = 0.0;
        let assignment = (0..n)
            .map(|i| {
                let mut best = 0;
                for c in 1..medoids.len() {
                    if d[[i, medoids[c]]] < d[[i, medoids[best]]] {
                        best = c;
                    }
                }
                cost += d[[i, medoids[best]]];
                best
            })
            .collect();
        (assignment, cost)
    };
    let (mut assignment, mut cost) = assign(&medoids);
    let mut n_iter = 0;
    let mut converged = false;
    while n_iter < max_iter {
        n_iter += 1;
        let mut members = vec![Vec::new(); k];
        for (i, &c) in assignment.iter().enumerate() {
            members[c].push(i);
        }
        let mut changed = false;
        for (c, group) in members.iter().enumerate() {
            // The member with the smallest total dissimilarity to its cluster (the old medoid on ties).
            let total = |m: usize| group.iter().map(|&j| d[[m, j]]).sum::<f64>();
            let mut best = medoids[c];
            let mut best_total = total(best);
            for &m in group {
                let t = total(m);
                if t < best_total {
                    best = m;
                    best_total = t;
                }
            }
            if best != medoids[c] {
                medoids[c] = best;
                changed = true;
            }
        }
        if !changed {
            converged = true;
            break;
        }
        (assignment, cost) = assign(&medoids);
    }
    KMedoids { medoids, assignment, cost, n_iter, converged }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn finds_the_centres_of_separated_clusters_and_is_seeded() {
        // Three tight groups on a line: 0..5 near 0, 5..10 near 10, 10..15 near 20.
        let x: Vec<f64> = (0..15).map(|i| 10.0 * (i / 5) as f64 + (i % 5) as f64 * 0.1).collect();
        let d = Array2::from_shape_fn((15, 15), |(i, j)| (x[i] - x[j]).abs());
        for seed in 0..5 {
            let r = kmedoids(d.view(), 3, seed, 100);
            assert!(r.converged);
            let mut m = r.medoids.clone();
            m.sort();
            assert_eq!(m, vec![2, 7, 12], "seed {seed}");
            assert_eq!(r, kmedoids(d.view(), 3, seed, 100));
        }
        let all = kmedoids(d.view(), 15, 1, 100);
        assert_eq!(all.cost, 0.0);
    }
}
