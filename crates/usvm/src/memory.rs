//! Bounded allocations: a dense array whose size grows with the data — a Gram matrix (`ℓ × ℓ`), full
//! covariances (`ℓ × n × n`), a basis map (`ℓ × B`) — is checked against the memory available before it is
//! allocated, so that a request beyond it is an error that states its size ([`Error::TooLarge`]) instead
//! of an abort. The size is `8 · Π dims` bytes with overflow checks (an overflow is the same error). The
//! memory available is Linux's `MemAvailable` from `/proc/meminfo` (the one thing the core reads from the
//! system); where that is unreadable only the address-space limit `isize::MAX` applies.
//!
//! ```
//! use usvm::memory::reserve;
//! assert!(reserve("a 100 × 100 matrix", "", &[100, 100]).is_ok());
//! let err = reserve("the kernel matrix", "use fewer rows", &[1 << 30, 1 << 30]).unwrap_err();
//! assert!(err.to_string().starts_with("the kernel matrix (1073741824 × 1073741824 floats) would take 8.00 EiB"));
//! ```

pub use crate::error::Bytes;
use crate::error::{Error, Result};

/// Requests below this many bytes (64 MiB) are not checked: reading the system's counter costs more than
/// they risk.
pub const UNCHECKED_BYTES: u64 = 1 << 26;

/// `8 · Π dims`, the bytes of an `f64` array of shape `dims`; `None` on overflow.
pub fn f64_bytes(dims: &[usize]) -> Option<u64> {
    dims.iter().try_fold(8u64, |bytes, &d| bytes.checked_mul(u64::try_from(d).ok()?))
}

/// Checks that an `f64` array of shape `dims` (several arrays: their count as the first factor) fits in the
/// memory available; otherwise [`Error::TooLarge`] naming `what` and `remedy`.
pub fn reserve(what: &'static str, remedy: &'static str, dims: &[usize]) -> Result<()> {
    let bytes = f64_bytes(dims);
    if bytes.is_some_and(|b| b < UNCHECKED_BYTES) {
        return Ok(());
    }
    let limit = limit();
    match bytes {
        Some(b) if b <= limit => Ok(()),
        _ => Err(Error::TooLarge { what, shape: dims.to_vec(), bytes, available: limit, remedy }),
    }
}

/// Whether an `f64` array of shape `dims` fits in the memory available ([`reserve`] without the error).
pub fn fits(dims: &[usize]) -> bool {
    f64_bytes(dims).is_some_and(|b| b < UNCHECKED_BYTES || b <= limit())
}

/// The largest allocation allowed: [`available`] memory, at most `isize::MAX` bytes.
pub fn limit() -> u64 {
    available().unwrap_or(u64::MAX).min(isize::MAX as u64)
}

/// `MemAvailable` in bytes, or `None` where `/proc/meminfo` is unreadable (not Linux).
pub fn available() -> Option<u64> {
    mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// The `MemAvailable:` line of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let mut fields = line.split_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    match fields.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_overflow_into_an_error_not_a_wrap() {
        assert_eq!(f64_bytes(&[3, 4]), Some(96));
        assert_eq!(f64_bytes(&[]), Some(8));
        assert_eq!(f64_bytes(&[1 << 60]), Some(1 << 63));
        assert_eq!(f64_bytes(&[1 << 61]), None);
        assert_eq!(f64_bytes(&[1 << 32, 1 << 32]), None);
        let err = reserve("the Gram matrix", "use fewer rows", &[1 << 32, 1 << 32]).unwrap_err();
        assert!(matches!(err, Error::TooLarge { bytes: None, what: "the Gram matrix", .. }), "{err:?}");
        assert!(err.to_string().contains("would take more than 16 EiB of memory"), "{err}");
    }

    #[test]
    fn small_requests_pass_and_huge_ones_fail_naming_what_size_and_remedy() {
        assert!(reserve("a matrix", "", &[1000, 1000]).is_ok());
        assert!(reserve("nothing", "", &[0, usize::MAX]).is_ok());
        // 2^57 floats = 2^60 bytes (1 EiB): beyond any machine's memory, within 64 bits.
        let err = reserve("full covariances", "use the low-rank form", &[1 << 27, 1 << 15, 1 << 15]).unwrap_err();
        let Error::TooLarge { bytes, available, .. } = &err else { panic!("{err:?}") };
        assert_eq!(*bytes, Some(1 << 60));
        assert!(*available < 1 << 60);
        let text = err.to_string();
        for needle in
            ["full covariances (134217728 × 32768 × 32768 floats)", "would take 1.00 EiB", "use the low-rank form"]
        {
            assert!(text.contains(needle), "{text:?} lacks {needle:?}");
        }
    }

    #[test]
    fn mem_available_parses_kilobytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(mem_available(text), Some(22_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: 5 MB\n"), None);
        #[cfg(target_os = "linux")]
        assert!(available().is_some_and(|b| b > 0));
    }

    #[test]
    fn bytes_read_in_binary_units() {
        let text = |b| Bytes(Some(b)).to_string();
        assert_eq!(text(0), "0 bytes");
        assert_eq!(text(1023), "1023 bytes");
        assert_eq!(text(1536), "1.50 KiB");
        assert_eq!(text(80_000_000_000), "74.5 GiB");
        assert_eq!(text(u64::MAX), "16.0 EiB");
        assert_eq!(Bytes(None).to_string(), "more than 16 EiB");
    }
}
