//! 802.11 frames and DCF timing (IEEE 802.11-1999 §9.2, DSSS PHY §15).
//!
//! Sizes follow ns-2's `mac-802_11.h`: RTS 20 B, CTS and ACK 14 B, data MAC
//! header + FCS 28 B. Every frame is preceded by the PLCP preamble and header
//! (144 + 48 bits at 1 Mb/s = 192 µs). Control frames go at the basic rate, data
//! frames (unicast and broadcast, as ns-2 does) at the data rate.

use crate::ids::NodeId;
use crate::packet::Packet;
use crate::sim::SimDuration;

pub const RTS_BYTES: u32 = 20;
pub const CTS_BYTES: u32 = 14;
pub const ACK_BYTES: u32 = 14;
/// Data frame MAC header (24 B) + FCS (4 B).
pub const DATA_HEADER_BYTES: u32 = 28;

/// DCF parameters (ns-2 `Mac/802_11` defaults; MODEL_DEFAULTS.md).
#[derive(Clone, Copy, Debug)]
pub struct MacParams {
    pub cw_min: u32,
    pub cw_max: u32,
    pub slot: SimDuration,
    pub sifs: SimDuration,
    /// PLCP preamble + header duration (sent at the PLCP rate).
    pub plcp: SimDuration,
    pub basic_rate_bps: f64,
    pub data_rate_bps: f64,
    /// Unicast frames larger than this (MSDU bytes) use RTS/CTS; 0 = always.
    pub rts_threshold_bytes: u32,
    pub short_retry_limit: u32,
    pub long_retry_limit: u32,
    /// ns-2 `LL` delay before a packet reaches the interface queue.
    pub ll_delay: SimDuration,
}

impl Default for MacParams {
    fn default() -> Self {
        MacParams {
            cw_min: 31,
            cw_max: 1023,
            slot: SimDuration::from_micros(20),
            sifs: SimDuration::from_micros(10),
            plcp: SimDuration::from_micros(192),
            basic_rate_bps: 1e6,
            data_rate_bps: 1e6,
            rts_threshold_bytes: 0,
            short_retry_limit: 7,
            long_retry_limit: 4,
            ll_delay: SimDuration::from_micros(25),
        }
    }
}

impl MacParams {
    pub fn difs(&self) -> SimDuration {
        self.sifs + self.slot + self.slot
    }
    /// EIFS = SIFS + ACK at the basic rate (with PLCP) + DIFS (802.11 §9.2.3.4).
    pub fn eifs(&self) -> SimDuration {
        self.sifs + self.ctrl_airtime(ACK_BYTES) + self.difs()
    }
    pub fn ctrl_airtime(&self, bytes: u32) -> SimDuration {
        self.plcp + SimDuration::transmission(bytes, self.basic_rate_bps)
    }
    /// Air time of a data frame carrying an MSDU (network packet) of `msdu_bytes`.
    pub fn data_airtime(&self, msdu_bytes: u32) -> SimDuration {
        self.plcp + SimDuration::transmission(msdu_bytes + DATA_HEADER_BYTES, self.data_rate_bps)
    }
    /// How long to wait after our frame ends for the response to have arrived:
    /// SIFS + response air time + one slot of slack for propagation (ns-2 adds
    /// 2·DSSS_MaxPropagationDelay; one slot covers round trips up to 3 km).
    pub fn response_timeout(&self, response_bytes: u32) -> SimDuration {
        self.sifs + self.ctrl_airtime(response_bytes) + self.slot
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    Rts,
    Cts,
    Data,
    Ack,
}

impl FrameKind {
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Rts => "RTS",
            FrameKind::Cts => "CTS",
            FrameKind::Data => "DATA",
            FrameKind::Ack => "ACK",
        }
    }
}

/// A frame on the air.
#[derive(Clone, Debug)]
pub struct Frame {
    pub kind: FrameKind,
    /// Transmitter address.
    pub src: NodeId,
    /// Receiver address; `None` = broadcast.
    pub dst: Option<NodeId>,
    /// Duration field (NAV) in the header.
    pub nav: SimDuration,
    /// Sequence number (data frames).
    pub seq: u16,
    pub retry: bool,
    /// The network packet (data frames).
    pub pkt: Option<Packet>,
    pub airtime: SimDuration,
}

impl Frame {
    /// Bytes on the air after the PLCP (for traces).
    pub fn mac_bytes(&self) -> u32 {
        match self.kind {
            FrameKind::Rts => RTS_BYTES,
            FrameKind::Cts => CTS_BYTES,
            FrameKind::Ack => ACK_BYTES,
            FrameKind::Data => DATA_HEADER_BYTES + self.pkt.as_ref().map_or(0, |p| p.size_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns2_timing() {
        let p = MacParams::default();
        assert_eq!(p.difs().as_nanos(), 50_000);
        // ACK: 192 µs PLCP + 14·8 µs = 304 µs; EIFS = 10 + 304 + 50 = 364 µs.
        assert_eq!(p.ctrl_airtime(ACK_BYTES).as_nanos(), 304_000);
        assert_eq!(p.eifs().as_nanos(), 364_000);
        // A 1040-byte TCP segment (1000 + 40): 192 + (1040+28)·8 = 8736 µs at 1 Mb/s.
        assert_eq!(p.data_airtime(1040).as_nanos(), 8_736_000);
    }
}
