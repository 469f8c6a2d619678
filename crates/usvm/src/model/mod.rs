//! Fitted models: decision functions and predictions, and the JSON model file of DESIGN 6.

mod file;
mod linear;

pub use file::{Coef, Intercept, ModelFile, Platt};
pub use linear::LinearModel;
