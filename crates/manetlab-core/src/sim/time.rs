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
        self.0 as f64 / NS_PER_S
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
        self.0 as f64 / NS_PER_S
    }
    /// Time to serialise `bytes` at `bits_per_s`, rounded up to whole nanoseconds
    /// so that a transmitter is never free before the last bit has left.
    pub fn transmission(bytes: u32, bits_per_s: f64) -> SimDuration {
        let ns = (bytes as f64 * 8.0 * NS_PER_S / bits_per_s).ceil();
        SimDuration(ns as u64)
    }
}

fn secs_to_ns(s: f64) -> u64 {
    assert!(s.is_finite() && s >= 0.0, "time in seconds must be finite and >= 0, got {s}");
    (s * NS_PER_S).round() as u64
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
    #[should_panic]
    fn negative_seconds_are_rejected() {
        SimTime::from_secs_f64(-1.0);
    }
}
