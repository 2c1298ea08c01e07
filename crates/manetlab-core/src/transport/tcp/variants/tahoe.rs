//! TCP Tahoe (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988; ns-2 `Agent/TCP`).
//!
//! Slow start, congestion avoidance, fast retransmit; on three duplicate ACKs
//! ssthresh = max(FlightSize/2, 2) and cwnd = 1 segment, then slow start with
//! go-back-N from the lost segment — no fast recovery.
//! Deviation: ssthresh uses RFC 5681's FlightSize where ns-2 uses min(cwnd, window).

use crate::transport::tcp::cc::{CongestionControl, Recovery};
use crate::transport::tcp::variants::Variant;

/// Registry entry (no parameters).
pub const VARIANT: Variant = Variant::new("tahoe", |_| Box::new(Tahoe));

pub struct Tahoe;

impl CongestionControl for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Tahoe
    }
}
