//! Medium access control: IEEE 802.11 DCF (`dcf.rs`) with its frames and timing,
//! and ns-2's ARP (`arp.rs`).

pub mod arp;
pub mod dcf;
pub mod frame;

pub use arp::{ArpMsg, ArpOp, ArpTable};
pub use dcf::{Dcf, MacAction, MacTimer};
pub use frame::{EifsMode, Frame, FrameKind, MacParams};
pub mod frn;

pub use frn::{FrnHandle, FrnMac, FrnParams, FrnShared};

use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime, TimerToken};
use crate::wire::Packet;

/// A wireless interface's MAC: the 802.11 DCF or FRN's slotted MAC, behind
/// the handlers the simulator calls (`[mac] kind`).
// The DCF stays inline: it is on every frame's path, and a box would cost a
// pointer chase per event; the rarer FRN MAC is boxed.
#[allow(clippy::large_enum_variant)]
pub enum WifiMac {
    Dcf(Dcf),
    Frn(Box<FrnMac>),
}

impl WifiMac {
    pub fn dcf(&self) -> Option<&Dcf> {
        match self {
            WifiMac::Dcf(d) => Some(d),
            WifiMac::Frn(_) => None,
        }
    }
    pub fn frn(&self) -> Option<&FrnMac> {
        match self {
            WifiMac::Dcf(_) => None,
            WifiMac::Frn(f) => Some(f),
        }
    }
    /// Every packet the MAC holds (the DCF one at most).
    pub fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        match self {
            WifiMac::Dcf(d) => {
                if let Some(p) = d.current_packet() {
                    f(p)
                }
            }
            WifiMac::Frn(m) => m.for_each_packet(f),
        }
    }
    /// Whether a `FrameDone` about to be reported concerns an application
    /// packet; `held_app` is what the DCF held before the handler ran.
    pub fn done_is_app(&self, held_app: bool) -> bool {
        match self {
            WifiMac::Dcf(_) => held_app,
            WifiMac::Frn(m) => m.last_done_app,
        }
    }
    pub fn held_app(&self) -> bool {
        match self {
            WifiMac::Dcf(d) => d.current_packet().is_some_and(|p| p.tag.is_some()),
            WifiMac::Frn(_) => false,
        }
    }
    /// The frame of the `Transmit` action just reported.
    pub fn take_frame(&mut self) -> Frame {
        match self {
            WifiMac::Dcf(d) => d.take_frame(),
            WifiMac::Frn(m) => m.take_frame(),
        }
    }
    /// The frame of the oldest `Discard` action not yet carried out and its
    /// ns-2 drop code (the DCF's only).
    pub fn take_discarded(&mut self) -> (Frame, &'static str) {
        match self {
            WifiMac::Dcf(d) => d.take_discarded(),
            WifiMac::Frn(_) => unreachable!("the FRN MAC discards no frame for the trace"),
        }
    }
    /// The packet of the oldest parcel-carrying action not yet carried out ([`MacAction`]).
    pub fn take_parcel(&mut self) -> std::rc::Rc<Packet> {
        match self {
            WifiMac::Dcf(d) => d.take_parcel(),
            WifiMac::Frn(m) => m.take_parcel(),
        }
    }
    pub fn is_free(&self) -> bool {
        match self {
            WifiMac::Dcf(d) => d.is_free(),
            WifiMac::Frn(m) => m.is_free(),
        }
    }
    pub fn switch_off(&mut self) -> Vec<Packet> {
        match self {
            WifiMac::Dcf(d) => d.switch_off().into_iter().collect(),
            WifiMac::Frn(m) => m.switch_off(),
        }
    }
    pub fn switch_on(&mut self, now: SimTime) {
        if let WifiMac::Dcf(d) = self {
            d.switch_on(now)
        }
    }
    pub fn carrier(&mut self, now: SimTime, busy: bool, out: &mut Vec<MacAction>) {
        match self {
            WifiMac::Dcf(d) => d.carrier(now, busy, out),
            WifiMac::Frn(m) => m.carrier(busy),
        }
    }
    pub fn tx_end(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        match self {
            WifiMac::Dcf(d) => d.tx_end(now, out),
            WifiMac::Frn(m) => m.tx_end(),
        }
    }
    pub fn rx_error(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if let WifiMac::Dcf(d) = self {
            d.rx_error(now, out)
        }
    }
    pub fn rx_captured(&mut self, now: SimTime, airtime: SimDuration, out: &mut Vec<MacAction>) {
        if let WifiMac::Dcf(d) = self {
            d.rx_captured(now, airtime, out)
        }
    }
    pub fn rx_ok(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        match self {
            WifiMac::Dcf(d) => d.rx_ok(now, f, out),
            WifiMac::Frn(m) => m.rx_ok(now, f, out),
        }
    }
    pub fn enqueue(
        &mut self,
        now: SimTime,
        pkt: std::rc::Rc<Packet>,
        next_hop: Option<NodeId>,
        out: &mut Vec<MacAction>,
    ) {
        match self {
            WifiMac::Dcf(d) => d.enqueue(now, pkt, next_hop, out),
            WifiMac::Frn(m) => m.enqueue(now, std::rc::Rc::unwrap_or_clone(pkt), next_hop, out),
        }
    }
    pub fn enqueue_arp(
        &mut self,
        now: SimTime,
        m: ArpMsg,
        next_hop: Option<NodeId>,
        out: &mut Vec<MacAction>,
    ) {
        match self {
            WifiMac::Dcf(d) => d.enqueue_arp(now, m, next_hop, out),
            // FRN runs without ARP (validation turns it off).
            WifiMac::Frn(_) => unreachable!("FRN has no ARP"),
        }
    }
    pub fn timer(
        &mut self,
        now: SimTime,
        which: MacTimer,
        tok: TimerToken,
        out: &mut Vec<MacAction>,
    ) {
        match self {
            WifiMac::Dcf(d) => d.timer(now, which, tok, out),
            WifiMac::Frn(m) => m.timer(now, tok, out),
        }
    }
    /// Whether the event of timer `which` carrying `tok` is the live arming (profiling).
    pub fn timer_is_live(&self, which: MacTimer, tok: TimerToken) -> bool {
        match self {
            WifiMac::Dcf(d) => d.timer_is_live(which, tok),
            WifiMac::Frn(m) => m.timer_is_live(tok),
        }
    }
    pub fn duplicates(&self) -> u64 {
        match self {
            WifiMac::Dcf(d) => d.duplicates,
            WifiMac::Frn(m) => m.duplicates,
        }
    }
    pub fn set_pacing(&mut self, on: bool) {
        if let WifiMac::Dcf(d) = self {
            d.pacing = on
        }
    }
    /// Start keeping the MAC's event log (tests and MAC traces).
    pub fn enable_log(&mut self) {
        match self {
            WifiMac::Dcf(d) => d.enable_log(),
            WifiMac::Frn(m) => m.log = Some(Vec::new()),
        }
    }
    pub fn log(&self) -> Option<&[(SimTime, String)]> {
        match self {
            WifiMac::Dcf(d) => d.log(),
            WifiMac::Frn(m) => m.log.as_deref(),
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::sim::{stream, Component};

    /// The signal walks match on a receiver's MAC: the variant must be told by
    /// the DCF's `niche` field in its first line (offset 0, where `Here` is 0
    /// and `Frn` the first invalid value), not by a tag deep in the DCF.
    #[test]
    fn the_variant_is_told_by_the_dcfs_first_field() {
        assert_eq!(std::mem::size_of::<WifiMac>(), std::mem::size_of::<Dcf>());
        let shared = frn::FrnShared::new(2, frn::FrnParams::default());
        let m = WifiMac::Frn(Box::new(FrnMac::new(
            NodeId(0),
            MacParams::default(),
            shared,
            stream(1, 0, Component::Mac),
        )));
        // SAFETY: reads the eight bytes at the start of `m`, which hold the
        // variant's niche value when the layout is as this test expects.
        let niche = unsafe { (&m as *const WifiMac as *const u64).read() };
        assert_eq!(niche, 1);
    }
}
