//! TCP Reno (RFC 5681 §3.2; ns-2 `Agent/TCP/Reno`).
//!
//! Fast retransmit and fast recovery: ssthresh = max(FlightSize/2, 2),
//! cwnd = ssthresh + 3, +1 per further duplicate ACK, and the first new ACK —
//! partial or not — ends recovery with cwnd = ssthresh. With several losses in
//! one window Reno halves again or times out (Floyd & Fall 1996).
//! Deviation: none beyond FlightSize (see tahoe.rs); no `recover` guard after a
//! fast retransmit (only after a timeout), so a second fast retransmit in one
//! window is possible, as in classic Reno.

use crate::transport::tcp::cc::{CongestionControl, Recovery};
use crate::transport::tcp::variants::Variant;

/// Registry entry (no parameters).
pub const VARIANT: Variant = Variant::new("reno", |_| Box::new(Reno));

pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
}
