//! CLOCK_MONOTONIC, the clock every component of a trial shares (CONTRACTS §1), and the
//! comparison of wake-up times that the link and both engines' stepping loops share.

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The earlier of two optional wake-up times (None = never). Written out rather than as a
/// flattened iterator: the simulator asks for wake-ups after every packet, and the iterator
/// form did not compile down to plain comparisons.
#[inline]
pub fn earliest<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::earliest;

    #[test]
    fn earliest_takes_the_smaller_time_and_none_means_never() {
        assert_eq!(earliest(Some(3u64), Some(2)), Some(2));
        assert_eq!(earliest(Some(2u64), Some(3)), Some(2));
        assert_eq!(earliest(Some(5u64), None), Some(5));
        assert_eq!(earliest(None, Some(7u64)), Some(7));
        assert_eq!(earliest::<u64>(None, None), None);
    }
}
