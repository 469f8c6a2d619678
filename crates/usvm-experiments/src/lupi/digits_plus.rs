//! A stand-in for MNIST+ that ships: the digits 5 and 8 of the 8 × 8 digits (UCI; 182 and 174 images,
//! embedded from `crates/usvm/data/digits.csv`). As in MNIST+ the regular features are raw pixels of a
//! reduced image — here the 8 × 8 image average-pooled to 4 × 4 (16 features) — and the privileged view is
//! what a teacher sees in training only: the full 8 × 8 image (64 features, scaled to [0, 1]; the
//! super-resolution variant of Vapnik and Vashist 2009). Each trial draws the training examples at random
//! and splits the rest evenly into validation and test sets.

use ndarray::Array2;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use usvm::{Dataset, Features};

use super::table1::Split;

const DIGITS: &str = include_str!("../../../usvm/data/digits.csv");

/// The 5s and 8s of the digits.
#[derive(Debug, Clone)]
pub struct DigitsPlus {
    /// `n × 16` raw 4 × 4 pixels (0..16, the mean of each 2 × 2 block).
    pub pooled: Array2<f64>,
    /// `n × 64` full images scaled to [0, 1].
    pub full: Array2<f64>,
    /// 5 or 8.
    pub labels: Vec<i64>,
}

impl DigitsPlus {
    /// Parses the embedded digits and keeps the 5s and 8s.
    pub fn load() -> DigitsPlus {
        let (mut pooled, mut full, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for line in DIGITS.lines().filter(|l| !l.trim().is_empty()) {
            let v: Vec<f64> =
                line.split(',').map(|t| t.trim().parse().expect("the embedded digits are numbers")).collect();
            let label = v[64] as i64;
            if label != 5 && label != 8 {
                continue;
            }
            full.extend(v[..64].iter().map(|p| p / 16.0));
            pooled.extend((0..16).map(|k| {
                let (r, c) = (2 * (k / 4), 2 * (k % 4));
                (v[8 * r + c] + v[8 * r + c + 1] + v[8 * r + c + 8] + v[8 * r + c + 9]) / 4.0
            }));
            labels.push(label);
        }
        let n = labels.len();
        DigitsPlus {
            pooled: Array2::from_shape_vec((n, 16), pooled).expect("16 pooled pixels per image"),
            full: Array2::from_shape_vec((n, 64), full).expect("64 pixels per image"),
            labels,
        }
    }

    /// Trial `t`: `n_train` training images drawn at random (seeded by `t`), the rest split evenly into
    /// validation and test.
    pub fn split(&self, n_train: usize, t: u64) -> Split {
        let mut idx: Vec<usize> = (0..self.labels.len()).collect();
        idx.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(8000 + t));
        let n_train = n_train.min(idx.len() - 2);
        let (train, rest) = idx.split_at(n_train);
        let (validation, test) = rest.split_at(rest.len() / 2);
        let rows = |x: &Array2<f64>, i: &[usize]| x.select(ndarray::Axis(0), i);
        let labels = |i: &[usize]| i.iter().map(|&k| self.labels[k]).collect::<Vec<_>>();
        Split {
            train: Dataset::dense(rows(&self.pooled, train), labels(train))
                .with_privileged(Features::dense(rows(&self.full, train))),
            validation: (rows(&self.pooled, validation), labels(validation)),
            test: (rows(&self.pooled, test), labels(test)),
        }
    }
}
