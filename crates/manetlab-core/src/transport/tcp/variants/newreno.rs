//! TCP NewReno (RFC 6582; ns-2 `Agent/TCP/Newreno`).
//!
//! Reno's fast recovery, but a partial ACK (below `recover`, the highest segment
//! sent when recovery began) retransmits the next hole, deflates cwnd by the
//! amount acked and adds one segment, and recovery ends only at a full ACK
//! (cwnd = ssthresh, §3.2 step 6 option 2 as ns-2). Slow-but-Steady: the timer
//! is reset on every partial ACK (§4). The `recover` guard (§3.2 step 1) stops
//! a second fast retransmit for losses from the same window.
//! Deviation: a new fast retransmit is allowed once the ACK reaches `recover`
//! (RFC: strictly beyond it), since no segment of the old window is then outstanding.

use crate::transport::tcp::cc::{CongestionControl, Recovery};
use crate::transport::tcp::variants::Variant;

/// Registry entry (no parameters).
pub const VARIANT: Variant = Variant::new("newreno", |_| Box::new(NewReno));

pub struct NewReno;

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
}
