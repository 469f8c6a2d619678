//! The papers' experiment protocols (DESIGN section 8) on the usvm library, on embedded data: WDBC (thesis
//! Table 3.2), the toy sampling angle (thesis Fig. 3.4), paper 004's LUPI Table 1 protocol on a synthetic
//! task and on the 8×8 digits (and on MNIST+ files the user supplies, the one protocol that reads from disk)
//! and TSVC's Table 1 (paper 003).

pub mod lupi;
pub mod stats;
pub mod toy_sampling;
pub mod tsvc_synthetic;
pub mod wdbc;
