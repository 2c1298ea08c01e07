//! Simulated time as integer nanoseconds.
//!
//! Floats never order events: a `SimTime` is a `u64` count of nanoseconds since the
//! start of the run (enough for 584 years), a `SimDuration` the difference of two.
//! Conversions from seconds round to the nearest nanosecond.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

const NS_PER_S: f64 = 1e9;

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime(secs_to_ns(s))
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        u64_to_f64(self.0) / NS_PER_S
    }
    /// Time elapsed since `earlier`; panics if `earlier` is later (a broken invariant).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(
            self.0
                .checked_sub(earlier.0)
                .expect("SimTime::since: earlier instant is in the future"),
        )
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub fn from_secs_f64(s: f64) -> SimDuration {
        SimDuration(secs_to_ns(s))
    }
    /// Whether every `s` in `[0, s_max]` converts by [`from_secs_f64_small`](Self::from_secs_f64_small).
    pub fn small_up_to(s_max: f64) -> bool {
        (0.0..SMALL_NS).contains(&(s_max * NS_PER_S))
    }
    /// [`from_secs_f64`](Self::from_secs_f64) without any range check: the
    /// same value (the channel converts a propagation delay per receiver).
    ///
    /// # Safety
    /// `0 ≤ s ≤ s_max` for an `s_max` with [`small_up_to`](Self::small_up_to)
    /// true: `s · 1e9` then lies in `[0, 2⁵²)` (the product rounds monotonically).
    #[inline]
    pub unsafe fn from_secs_f64_small(s: f64) -> SimDuration {
        // SAFETY: the caller's bound, above.
        SimDuration(unsafe { round_small_unchecked(s * NS_PER_S) })
    }
    pub fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000)
    }
    pub fn from_micros(us: u64) -> SimDuration {
        SimDuration(us * 1_000)
    }
    pub fn from_nanos(ns: u64) -> SimDuration {
        SimDuration(ns)
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        u64_to_f64(self.0) / NS_PER_S
    }
    /// Time to serialise `bytes` at `bits_per_s`, rounded up to whole nanoseconds
    /// so that a transmitter is never free before the last bit has left.
    pub fn transmission(bytes: u32, bits_per_s: f64) -> SimDuration {
        let ns = (bytes as f64 * 8.0 * NS_PER_S / bits_per_s).ceil();
        SimDuration(ns as u64)
    }
}

#[inline]
fn secs_to_ns(s: f64) -> u64 {
    assert!(
        s.is_finite() && s >= 0.0,
        "time in seconds must be finite and >= 0, got {s}"
    );
    let ns = s * NS_PER_S;
    round_half_away_small(ns).unwrap_or_else(|| ns.round() as u64)
}

/// `x.round() as u64` for 0 ≤ x < 2⁵² without the library call for `round`
/// (x86-64's baseline has no rounding instruction; the channel converts a
/// propagation delay per receiver): truncate, then compare the remainder, which
/// is exact in that range, with one half. `None` outside it (and for NaN).
#[inline]
fn round_half_away_small(x: f64) -> Option<u64> {
    if !(0.0..SMALL_NS).contains(&x) {
        return None;
    }
    // SAFETY: 0 ≤ x < 2⁵², checked just above (NaN excluded).
    Some(unsafe { round_small_unchecked(x) })
}

/// 2⁵²: below it, a nanosecond count's fraction is exact and rounding is by truncation.
const SMALL_NS: f64 = 4_503_599_627_370_496.0;

/// `x.round() as u64`: truncate, then compare the remainder (exact) with one half.
///
/// # Safety
/// `0 ≤ x < 2⁵²`: then `x` truncates to an i64 that exists (the saturating `as`
/// would add the NaN/overflow selects; signed conversions are single instructions).
#[inline]
unsafe fn round_small_unchecked(x: f64) -> u64 {
    debug_assert!((0.0..SMALL_NS).contains(&x));
    let i: i64 = unsafe { x.to_int_unchecked() };
    if x - i as f64 >= 0.5 {
        i as u64 + 1
    } else {
        i as u64
    }
}

/// `x as f64`, by the signed conversion (one instruction on x86-64's baseline)
/// when `x` fits: the same correctly rounded value.
#[inline]
fn u64_to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(i) => i as f64,
        Err(_) => x as f64,
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.checked_add(d.0).expect("SimTime overflow"))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.since(earlier)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0 + d.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip_to_the_nanosecond() {
        assert_eq!(SimTime::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(SimDuration::from_secs_f64(0.000_000_001).as_nanos(), 1);
        assert_eq!(SimTime::from_secs_f64(0.1).as_secs_f64(), 0.1);
    }

    #[test]
    fn transmission_time_rounds_up() {
        // 1000 bytes at 1 Mb/s = 8 ms exactly.
        assert_eq!(SimDuration::transmission(1000, 1e6).as_nanos(), 8_000_000);
        // 1 byte at 3 b/s = 2.666..s -> rounded up.
        assert_eq!(SimDuration::transmission(1, 3.0).as_nanos(), 2_666_666_667);
    }

    #[test]
    fn fast_rounding_matches_round() {
        let mut xs: Vec<f64> = vec![
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            1e19,
        ];
        for k in 0..5000u64 {
            let h = k as f64 + 0.5;
            xs.extend([
                h,
                h.next_up(),
                h.next_down(),
                k as f64,
                (k as f64).next_down(),
            ]);
        }
        for x in xs.into_iter().filter(|&x| x >= 0.0) {
            let want = x.round() as u64;
            let fast = round_half_away_small(x);
            assert_eq!(fast.unwrap_or(want), want, "{x}");
            assert_eq!(fast.is_some(), x < 4_503_599_627_370_496.0, "{x}");
            assert_eq!(
                SimDuration::from_secs_f64(x / NS_PER_S).0,
                (x / NS_PER_S * NS_PER_S).round() as u64,
                "{x}"
            );
        }
        assert_eq!(round_half_away_small(-0.1), None);
        assert_eq!(round_half_away_small(f64::NAN), None);
        assert_eq!(round_half_away_small(4_503_599_627_370_496.0), None);
        // Propagation delays as the channel computes them (d / c seconds).
        let mut d: f64 = 0.0;
        let s_max = 1e7 / 299_792_458.0;
        assert!(SimDuration::small_up_to(s_max));
        while d < 1e7 {
            let s = d / 299_792_458.0;
            assert_eq!(
                SimDuration::from_secs_f64(s).0,
                (s * NS_PER_S).round() as u64,
                "{d} m"
            );
            // SAFETY: 0 ≤ s ≤ s_max, and small_up_to(s_max) holds.
            assert_eq!(
                unsafe { SimDuration::from_secs_f64_small(s) },
                SimDuration::from_secs_f64(s),
                "{d} m"
            );
            d = d * 1.0003 + 0.0137;
        }
        assert!(!SimDuration::small_up_to(4_503_599.627_370_496));
        assert!(!SimDuration::small_up_to(f64::NAN));
        assert!(!SimDuration::small_up_to(-1e-9));
    }

    #[test]
    fn signed_conversion_matches_unsigned() {
        for x in [
            0u64,
            1,
            (1 << 53) + 1,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX,
            123_456_789_012_345_678,
        ] {
            assert_eq!(u64_to_f64(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
    }

    #[test]
    #[should_panic]
    fn negative_seconds_are_rejected() {
        SimTime::from_secs_f64(-1.0);
    }
}
