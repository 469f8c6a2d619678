//! MNIST+ (Vapnik and Vashist 2009), as paper 004 uses it: digits 5 and 8 resized to 10 × 10 pixels (the
//! regular features), a 21-dimensional holistic ("poetic") description of each training image (the
//! privileged features), split into 100 training, 4,002 validation and 1,866 test images. Each trial
//! trains on 80 of the 100 training images drawn at random.
//!
//! The data are not bundled: the user supplies a directory of four CSV files, each with a header row and
//! the label in the column named `label` (the CSV reader of `usvm train --csv`):
//!
//! | file | rows | columns |
//! |---|---|---|
//! | `train.csv` | 100 | `label`, then the 100 raw pixels (row-major 10 × 10, any non-negative scale) |
//! | `train_privileged.csv` | 100, in `train.csv`'s order | `label` (equal to `train.csv`'s), then the 21 description features |
//! | `validation.csv` | 4,002 | as `train.csv` |
//! | `test.csv` | 1,866 | as `train.csv` |
//!
//! Pixels are raw (not normalised): the protocol normalises them after adding the noise
//! ([`super::table1::NoiseStage::Raw`]). Row counts other than the paper's are accepted and printed.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use ndarray::Array2;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use usvm::io::read_csv;
use usvm::{Dataset, Features};

use super::table1::Split;

/// The four files of the layout above.
#[derive(Debug, Clone)]
pub struct MnistPlus {
    /// The training images with their privileged features.
    pub train: Dataset<'static>,
    /// The validation images.
    pub validation: Dataset<'static>,
    /// The test images.
    pub test: Dataset<'static>,
}

/// Paper 004's training-set size per trial.
pub const PAPER_TRAINING_SIZE: usize = 80;

fn read(dir: &Path, name: &str) -> Result<Dataset<'static>, String> {
    let path = dir.join(name);
    let source = path.display().to_string();
    let file = File::open(&path).map_err(|e| format!("{source}: {e}"))?;
    read_csv(BufReader::new(file), &source, Some("label")).map_err(|e| e.to_string())
}

impl MnistPlus {
    /// Reads the directory `dir` (module docs), checking that the views agree.
    pub fn load(dir: &Path) -> Result<MnistPlus, String> {
        let train = read(dir, "train.csv")?;
        let privileged = read(dir, "train_privileged.csv")?;
        let (validation, test) = (read(dir, "validation.csv")?, read(dir, "test.csv")?);
        if privileged.labels != train.labels {
            return Err(format!(
                "{}: the labels differ from train.csv's (the rows must be in the same order)",
                dir.join("train_privileged.csv").display()
            ));
        }
        let d = train.n_features();
        for (name, set) in [("validation.csv", &validation), ("test.csv", &test)] {
            if set.n_features() != d {
                return Err(format!(
                    "{}: {} pixel columns, train.csv has {d}",
                    dir.join(name).display(),
                    set.n_features()
                ));
            }
        }
        let classes = train.classes();
        if classes.len() != 2 {
            return Err(format!(
                "{}: {} classes, MNIST+ has two (5 and 8)",
                dir.join("train.csv").display(),
                classes.len()
            ));
        }
        Ok(MnistPlus { train: train.with_privileged(privileged.features), validation, test })
    }

    /// Trial `t`: `n_train` training images drawn without replacement (seeded by `t`), the whole
    /// validation and test sets.
    pub fn split(&self, n_train: usize, t: u64) -> Split {
        let mut idx: Vec<usize> = (0..self.train.n_samples()).collect();
        idx.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(7000 + t));
        idx.truncate(n_train.min(idx.len()));
        idx.sort_unstable();
        let dense = |d: &Dataset| -> (Array2<f64>, Vec<i64>) { (d.features.to_dense(), d.labels.to_vec()) };
        let train = self.train.select(&idx);
        let train = Dataset { features: Features::dense(train.features.to_dense()), ..train };
        Split { train, validation: dense(&self.validation), test: dense(&self.test) }
    }
}
