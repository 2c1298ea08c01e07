//! 802.11 frames and DCF timing (IEEE 802.11-1999 §9.2, DSSS PHY §15), sized and
//! timed as ns-2.35's `Mac802_11` (`mac-802_11.h`, `mac-802_11.cc`).
//!
//! Sizes: RTS 20 B, CTS and ACK 14 B (`sizeof` of ns-2's frame structs), data MAC
//! header + FCS 34 B: ns-2's `hdr_mac802_11` carries all four addresses (`dh_4a`)
//! even between stations, so `offsetof(dh_body) + FCS = 2+2+4·6+2+4 = 34`; the
//! standard's three-address header is 28 B (`[mac] data_header_bytes`). Every
//! frame is preceded by the PLCP preamble and header (144 + 48 bits at 1 Mb/s =
//! 192 µs). Control frames and broadcast data go at the basic rate (§9.6, ns-2
//! `sendDATA`), unicast data at the data rate.

use super::arp::ArpMsg;
use crate::ids::NodeId;
use crate::param::{Fidelity, ParamChoice};
use crate::sim::SimDuration;
use crate::wire::Packet;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

pub const RTS_BYTES: u32 = 20;
pub const CTS_BYTES: u32 = 14;
pub const ACK_BYTES: u32 = 14;
/// Data frame MAC header (four addresses, as ns-2) + FCS.
pub const DATA_HEADER_BYTES: u32 = 34;
/// ns-2 counts the PLCP preamble + header as 24 bytes of every frame's size
/// (`getPLCPhdrLen`); it matters only where ns-2 compares sizes (RTS threshold).
pub const PLCP_BYTES: u32 = 24;
/// ns-2's `DSSS_MaxPropagationDelay` (2 µs), added twice to response timeouts.
pub const MAX_PROPAGATION: SimDuration = SimDuration(2_000);

/// How the MAC defers after a frame it could not decode (`[mac] eifs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EifsMode {
    /// ns-2: the NAV is set to EIFS when the errored frame ends, and the backoff
    /// resumes DIFS after that (EIFS + DIFS in all); a captured frame sets the NAV
    /// to its end + EIFS.
    Ns2,
    /// IEEE 802.11 §9.2.3.4: EIFS replaces DIFS; a captured frame is only noise.
    Standard,
}
crate::param_choice!(EifsMode, ["ns2", "standard"]);

crate::params! {
    /// DCF parameters, declared once (crate::param): `Default` is ns-2's
    /// `Mac/802_11` (MODEL_DEFAULTS.md), the `standard` profile
    /// ([`MacParams::standard`]) switches ns-2's departures to the standard's.
    #[derive(Clone, Copy, Debug)]
    pub struct MacParams {
        /// Data rate of unicast data frames (much of the literature sets 2 Mb/s).
        pub data_rate_bps: f64 = 1e6,
            { key: "data_rate_mbps", unit: MBPS, allowed: Real { lo: 1e-3, hi: 1e5 },
              source: "ns-2.35 mac-802_11.cc", ns2: "Mac/802_11 dataRate_" },
        /// Basic rate: RTS, CTS, ACK and broadcast data (§9.6).
        pub basic_rate_bps: f64 = 1e6,
            { key: "basic_rate_mbps", unit: MBPS, allowed: Real { lo: 1e-3, hi: 1e5 },
              source: "ns-2.35 mac-802_11.cc", ns2: "Mac/802_11 basicRate_" },
        /// RTS/CTS precedes unicast frames whose size, counted as ns-2 does
        /// (MSDU + data header + 24 B PLCP), is at least this; 0 = always.
        pub rts_threshold_bytes: u32 = 0,
            { key: "rts_threshold_bytes", unit: BYTES, allowed: Int { lo: 0, hi: u32::MAX as u64 },
              source: "ns-2 mac-802_11.cc sendRTS", ns2: "Mac/802_11 RTSThreshold_" },
        /// Station short retry limit (RTS attempts).
        pub short_retry_limit: u32 = 7,
            { key: "short_retry_limit", unit: ATTEMPTS, allowed: Int { lo: 1, hi: u32::MAX as u64 },
              source: "802.11 §9.2.5.3; ns-2", ns2: "Mac/802_11 ShortRetryLimit_" },
        /// Station long retry limit (DATA attempts after RTS/CTS).
        pub long_retry_limit: u32 = 4,
            { key: "long_retry_limit", unit: ATTEMPTS, allowed: Int { lo: 1, hi: u32::MAX as u64 },
              source: "802.11 §9.2.5.3; ns-2", ns2: "Mac/802_11 LongRetryLimit_" },
        /// Smallest contention window (slots, 2^k − 1).
        pub cw_min: u32 = 31,
            { key: "cw_min", unit: SLOTS, allowed: Int { lo: 0, hi: u32::MAX as u64 },
              source: "802.11 §15 DSSS; ns-2", ns2: "Mac/802_11 CWMin_" },
        /// Largest contention window (slots, 2^k − 1, >= cw_min).
        pub cw_max: u32 = 1023,
            { key: "cw_max", unit: SLOTS, allowed: Int { lo: 0, hi: u32::MAX as u64 },
              source: "802.11 §15 DSSS; ns-2", ns2: "Mac/802_11 CWMax_" },
        /// Slot time (DSSS PHY).
        pub slot: SimDuration = SimDuration::from_micros(20),
            { key: "slot_us", unit: US, allowed: Real { lo: 1e-3, hi: 1e6 },
              source: "802.11 §15 DSSS; ns-2", ns2: "Mac/802_11 SlotTime_" },
        /// SIFS; DIFS = SIFS + 2·slot.
        pub sifs: SimDuration = SimDuration::from_micros(10),
            { key: "sifs_us", unit: US, allowed: Real { lo: 1e-3, hi: 1e6 },
              source: "802.11 §15 DSSS; ns-2", ns2: "Mac/802_11 SIFS_" },
        /// PLCP preamble + header duration (sent at the PLCP rate): ns-2
        /// `PreambleLength_` 144 + `PLCPHeaderLength_` 48 bits at
        /// `PLCPDataRate_` 1 Mb/s.
        pub plcp: SimDuration = SimDuration::from_micros(192),
            { key: "plcp_us", unit: US, allowed: Real { lo: 0.0, hi: 1e6 },
              source: "802.11 §15.2.2; ns-2 mac-802_11.h" },
        /// ns-2 `LL` delay: before a packet reaches the interface queue, and before a
        /// received packet reaches the network layer (`LL::sendUp`).
        pub ll_delay: SimDuration = SimDuration::from_micros(25),
            { key: "ll_delay_us", unit: US, allowed: Real { lo: 0.0, hi: 1e6 },
              source: "ns-2 ll.cc", ns2: "LL delay_" },
        /// MAC header + FCS of data frames: 34 = ns-2's `hdr_mac802_11` with
        /// four addresses; the standard's three-address header is 28.
        pub data_header_bytes: u32 = DATA_HEADER_BYTES,
            { key: "data_header_bytes", unit: BYTES, allowed: Int { lo: 0, hi: 100 },
              source: "ns-2 mac-802_11.h hdr_mac802_11; 802.11 §7.2.2" },
        /// A frame that finds the medium idle for DIFS is sent at once (§9.2.5.1);
        /// ns-2 (`bugFix_timer_`) always defers DIFS plus a random backoff.
        pub immediate_access: bool = false,
            { key: "immediate_access", unit: NONE, allowed: Any,
              source: "802.11 §9.2.5.1; ns-2 mac-802_11.cc bugFix_timer_" },
        /// After a frame received in error: `"ns2"` sets the NAV to EIFS and then
        /// waits DIFS, and a captured frame sets the NAV to its end + EIFS;
        /// `"standard"`: EIFS replaces DIFS (§9.2.3.4).
        pub eifs_mode: EifsMode = EifsMode::Ns2,
            { key: "eifs", unit: NONE, allowed: Choice(EifsMode::CHOICES),
              source: "802.11 §9.2.3.4; ns-2 mac-802_11.cc recv_timer, capture" },
        /// ACK (and deliver) a unicast data frame that did not follow our own CTS
        /// (§9.2.8); ns-2 discards it (`recvDATA`, `DROP_MAC_BUSY`).
        pub ack_data_without_cts: bool = false,
            { key: "ack_data_without_cts", unit: NONE, allowed: Any,
              source: "802.11 §9.2.8; ns-2 mac-802_11.cc recvDATA" },
        /// Draw backoffs from 0..=CW (§9.2.4); ns-2 draws `Random::random() % cw`,
        /// i.e. 0..=CW−1.
        pub backoff_includes_cw: bool = false,
            { key: "backoff_includes_cw", unit: NONE, allowed: Any,
              source: "802.11 §9.2.4; ns-2 mac-802_11.h BackoffTimer" },
        /// ns-2's ARP (`mac/arp.cc`) resolves each next hop before its first
        /// packet (off by default with `[mac] kind = "frn"`).
        pub arp: bool = true,
            { key: "arp", unit: NONE, allowed: Any, source: "ns-2 mac/arp.cc" },
    }
    profile(f) = match f {
        Fidelity::Ns2 => MacParams::default(),
        Fidelity::Standard => MacParams::standard(),
    };
}

impl MacParams {
    /// The standard's behaviour where ns-2 differs (used by the Bianchi validation).
    pub fn standard() -> Self {
        MacParams {
            immediate_access: true,
            eifs_mode: EifsMode::Standard,
            ack_data_without_cts: true,
            backoff_includes_cw: true,
            ..Self::default()
        }
    }
    pub fn difs(&self) -> SimDuration {
        self.sifs + self.slot + self.slot
    }
    /// EIFS = SIFS + ACK at the basic rate (with PLCP) + DIFS (802.11 §9.2.3.4;
    /// ns-2 `getEIFS`, which times the ACK at the PLCP rate).
    pub fn eifs(&self) -> SimDuration {
        self.sifs + self.ctrl_airtime(ACK_BYTES) + self.difs()
    }
    pub fn ctrl_airtime(&self, bytes: u32) -> SimDuration {
        self.plcp + SimDuration::transmission(bytes, self.basic_rate_bps)
    }
    /// Air time of a unicast data frame carrying an MSDU of `msdu_bytes`.
    pub fn data_airtime(&self, msdu_bytes: u32) -> SimDuration {
        self.plcp
            + SimDuration::transmission(msdu_bytes + self.data_header_bytes, self.data_rate_bps)
    }
    /// Air time of a broadcast data frame (basic rate, §9.6).
    pub fn broadcast_airtime(&self, msdu_bytes: u32) -> SimDuration {
        self.plcp
            + SimDuration::transmission(msdu_bytes + self.data_header_bytes, self.basic_rate_bps)
    }
    /// ns-2's size of a data frame (what it compares with the RTS threshold).
    pub fn ns2_frame_bytes(&self, msdu_bytes: u32) -> u32 {
        msdu_bytes + self.data_header_bytes + PLCP_BYTES
    }
    /// Whether a unicast MSDU of this size is preceded by RTS/CTS (ns-2 `sendRTS`).
    pub fn uses_rts(&self, msdu_bytes: u32) -> bool {
        self.ns2_frame_bytes(msdu_bytes) >= self.rts_threshold_bytes
    }
}

/// A duration as ns-2 puts it in a Duration field: whole microseconds, rounded.
pub fn duration_field(d: SimDuration) -> SimDuration {
    SimDuration::from_micros((d.0 + 500) / 1000)
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
    /// The network packet (data frames carrying IP), shared with the sender's
    /// MAC, which keeps it for retries: a transmission copies no packet.
    pub pkt: Option<Rc<Packet>>,
    /// The ARP message (data frames carrying ARP).
    pub arp: Option<ArpMsg>,
    pub airtime: SimDuration,
}

impl Frame {
    /// Bytes on the air after the PLCP (for traces).
    pub fn mac_bytes(&self) -> u32 {
        match self.kind {
            FrameKind::Rts => RTS_BYTES,
            FrameKind::Cts => CTS_BYTES,
            FrameKind::Ack => ACK_BYTES,
            FrameKind::Data => {
                DATA_HEADER_BYTES
                    + self.pkt.as_ref().map_or(0, |p| p.size_bytes())
                    + self.arp.map_or(0, |_| super::arp::ARP_BYTES)
            }
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
        // ACK: 192 µs PLCP + 14·8 µs = 304 µs; EIFS = 10 + 304 + 50 = 364 µs (ns-2 getEIFS).
        assert_eq!(p.ctrl_airtime(ACK_BYTES).as_nanos(), 304_000);
        assert_eq!(p.eifs().as_nanos(), 364_000);
        // A 1040-byte TCP segment (1000 + 40): 192 + (1040+34)·8 = 8784 µs at 1 Mb/s,
        // what ns-2's txtime gives for ch->size() = 1040 + 58.
        assert_eq!(p.data_airtime(1040).as_nanos(), 8_784_000);
    }

    #[test]
    fn broadcast_goes_at_the_basic_rate() {
        let p = MacParams {
            data_rate_bps: 2e6,
            ..MacParams::default()
        };
        assert_eq!(p.data_airtime(100).as_nanos(), (192 + (134 * 8) / 2) * 1000);
        assert_eq!(p.broadcast_airtime(100).as_nanos(), (192 + 134 * 8) * 1000);
    }

    /// A frame is a few words (its packet is shared, not copied), and the
    /// MAC's actions stay small: the simulator moves both on every transmission.
    #[test]
    fn frames_and_actions_stay_small() {
        assert!(
            std::mem::size_of::<Frame>() <= 56,
            "{}",
            std::mem::size_of::<Frame>()
        );
        assert!(std::mem::size_of::<super::super::MacAction>() <= 24);
    }

    #[test]
    fn rts_threshold_counts_ns2_frame_size() {
        // ns-2 compares ch->size() = MSDU + 58 with RTSThreshold_: "< threshold" → no RTS.
        let p = MacParams {
            rts_threshold_bytes: 100,
            ..MacParams::default()
        };
        assert!(!p.uses_rts(41));
        assert!(p.uses_rts(42));
    }
}

/// What a MAC's actions hand over that is not `Copy` (`MacAction` is): the
/// frame of the last `Transmit`, and the packets of the parcel-carrying actions
/// (`Deliver`, `TxFailed`, `Overheard`) in the order they were pushed. The
/// simulator takes each while it carries out its action.
#[derive(Debug, Default)]
pub struct Outbox {
    frame: Option<Frame>,
    parcels: std::collections::VecDeque<std::rc::Rc<crate::wire::Packet>>,
}

impl Outbox {
    #[inline]
    pub fn put_frame(&mut self, f: Frame) {
        self.frame = Some(f);
    }
    /// The frame of the `Transmit` action just reported.
    #[inline]
    pub fn take_frame(&mut self) -> Frame {
        self.frame.take().expect("a Transmit action's frame")
    }
    #[inline]
    pub fn push_parcel(&mut self, p: std::rc::Rc<crate::wire::Packet>) {
        self.parcels.push_back(p);
    }
    /// The packet of the oldest parcel-carrying action not yet carried out.
    #[inline]
    pub fn take_parcel(&mut self) -> std::rc::Rc<crate::wire::Packet> {
        self.parcels.pop_front().expect("an action's parcel")
    }
    /// The packet of the newest parcel-carrying action (tests).
    pub fn last_parcel(&self) -> Option<&std::rc::Rc<crate::wire::Packet>> {
        self.parcels.back()
    }
}
