//! The papers' experiment protocols (DESIGN section 8) on the usvm library, on data embedded here (nothing
//! is read from disk): WDBC (thesis Table 3.2), the toy sampling angle (thesis Fig. 3.4), the synthetic LUPI
//! task (paper 004) and TSVC's Table 1 (paper 003).

pub mod lupi;
pub mod toy_sampling;
pub mod tsvc_synthetic;
pub mod wdbc;
