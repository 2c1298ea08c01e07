//! SACK-based loss recovery (RFC 6675 with RFC 2018 options; ns-2 `Agent/TCP/Sack1`).
//!
//! On entering recovery ssthresh = cwnd = max(FlightSize/2, 2); then, on every
//! ACK, while cwnd − pipe ≥ 1 segment, send NextSeg(): the lowest lost
//! segment (IsLost: at least DupThresh SACKed segments above it), else new data,
//! else an unSACKed segment below the highest SACK. Recovery ends when the ACK
//! reaches `recover`; cwnd = ssthresh.
//! Deviations: ns-2 Sack1 estimates pipe as maxseq − highest_ack − sacked +
//! retransmitted, and enters recovery on dup ACKs only; we follow RFC 6675's
//! SetPipe/IsLost. No rescue retransmission (NextSeg rule 4). The scoreboard
//! works in whole segments (our sender never re-segments).

use crate::transport::tcp::cc::{CongestionControl, Recovery};
use crate::transport::tcp::variants::Variant;

/// Registry entry (no parameters).
pub const VARIANT: Variant = Variant::new("sack", |_| Box::new(Sack));

pub struct Sack;

impl CongestionControl for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Sack
    }
}
