//! The discrete-event kernel: simulated time, the event scheduler, cancellable
//! timers and independent random streams.
//!
//! Everything here is deterministic by construction: time is an integer number
//! of nanoseconds, events at equal times run in the order they were scheduled,
//! and every random draw comes from a stream keyed by (run seed, entity, component).

pub mod rng;
pub mod scheduler;
pub mod time;

pub use rng::{stream, Component, SimRng};
pub use scheduler::{Scheduler, Timer, TimerToken};
pub use time::{SimDuration, SimTime};

/// A number as a user would write it: plain for everyday magnitudes, scientific
/// otherwise (so 1e300 does not print 301 digits). Used in validation messages
/// by every layer, hence kept at the bottom of the stack.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || (1e-4..1e9).contains(&a) || !v.is_finite() {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}
