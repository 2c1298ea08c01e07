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
