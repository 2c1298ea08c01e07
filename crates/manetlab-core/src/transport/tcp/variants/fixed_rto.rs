//! Fixed RTO (Dyer & Boppana, "A Comparison of TCP Performance over Three
//! Routing Protocols for Mobile Ad Hoc Networks", MobiHoc 2001; as paper 000
//! uses it, on NewReno).
//!
//! Two consecutive timeouts are taken as a route failure: the first timeout
//! doubles the RTO as usual, from the second consecutive one on the RTO is not
//! doubled again — it stays fixed until the retransmitted segment is
//! acknowledged (then the next valid RTT sample clears the backoff, Karn).
//! Deviation: Dyer & Boppana built it on Reno; paper 000 (and we) on NewReno.

use crate::transport::tcp::cc::{CcState, CongestionControl, Recovery};
use crate::transport::tcp::rto::MAX_BACKOFF;
use crate::transport::tcp::variants::Variant;

/// Registry entry (no parameters).
pub const VARIANT: Variant = Variant::new("fixed-rto", |_| Box::new(FixedRto));

pub struct FixedRto;

impl CongestionControl for FixedRto {
    fn name(&self) -> &'static str {
        "fixed-rto"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn backoff_rto(&mut self, s: &mut CcState) -> bool {
        if s.consecutive_timeouts < 2 {
            s.backoff = (s.backoff * 2.0).min(MAX_BACKOFF);
        }
        true
    }
}
