//! TCP: one sender/receiver engine with pluggable congestion control.
//!
//! * [`sender`] — handshake, segmentation, RFC 6298 timer, SACK scoreboard, the
//!   loss-recovery algorithms (Tahoe, Reno, NewReno, SACK, FACK).
//! * [`receiver`] — cumulative/delayed ACKs, out-of-order buffer, SACK blocks.
//! * [`cc`] — the [`cc::CongestionControl`] trait and the Reno helpers.
//! * [`rto`] — the RTO estimator.
//! * [`variants`] — one file per variant (with its parameters), the registry.
//! * [`config`] — the `flows[].tcp` scenario table.
//!
//! The engine is driven by explicit calls with `now` and queues its output; the
//! simulator (world/tcp.rs) moves segments through the network and runs timers
//! at `poll_at()`. See docs/tcp.md.

pub mod cc;
pub mod config;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod sender;
pub mod variants;

pub use cc::{CcState, CongestionControl, EngineOptions, Recovery};
pub use config::TcpConfig;
pub use receiver::{Delivery, TcpReceiver};
pub use sender::TcpSender;
pub use variants::{by_name, variant_names};

use crate::wire::TcpHeader;
use serde::Serialize;

/// A segment the engine wants sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub hdr: TcpHeader,
    pub payload_bytes: u32,
    /// Data segment number (0-based, in MSS units) for data segments.
    pub data_seg: Option<u64>,
    pub retransmission: bool,
}

/// Map a 32-bit wire sequence number to the 64-bit value nearest `reference`
/// (RFC 9293 sequence arithmetic: within 2^31 of the reference).
pub fn unwrap_seq(wire: u32, reference: u64) -> u64 {
    let d = wire.wrapping_sub(reference as u32) as i32;
    (reference as i64 + i64::from(d)).max(0) as u64
}

/// Sender time series, one row per event that can change them (ACK, timeout,
/// send). Column-oriented so it becomes a DataFrame directly.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TcpTrace {
    pub t_s: Vec<f64>,
    pub cwnd_segs: Vec<f64>,
    pub ssthresh_segs: Vec<f64>,
    pub rto_s: Vec<f64>,
    pub srtt_s: Vec<Option<f64>>,
    /// RTO backoff multiplier (ns-2 `t_backoff_`): 1, doubled per timeout.
    pub backoff: Vec<f64>,
    /// One past the highest data segment sent (ns-2 `t_seqno_`/`maxseq_`).
    pub seq_segs: Vec<u64>,
    /// Cumulative ACK in segments.
    pub ack_segs: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_across_the_32_bit_boundary() {
        assert_eq!(unwrap_seq(5, 3), 5);
        assert_eq!(unwrap_seq(1, 5), 1);
        let big = (1u64 << 32) + 10;
        assert_eq!(unwrap_seq(20, big), big + 10);
        assert_eq!(unwrap_seq(u32::MAX - 5, big), (1u64 << 32) - 6);
    }
}
