//! The DSDV routing-information packet (Perkins & Bhagwat 1994, §3) and its
//! size on the wire.
//!
//! An update lists, for each destination it advertises, the destination's
//! address, the metric (hops) and the destination's sequence number. The paper
//! distinguishes a *full dump* (every entry of the table) from an *incremental*
//! update (only what changed since the last full dump); both have the same
//! format — the receiver cannot tell them apart and handles them alike. We keep
//! the kind only for the per-type counters.
//!
//! Size: ns-2 (`dsdv.cc`, `makeUpdate`) charges 12 bytes per entry plus the IP
//! header (`size_ = change_count * 12 + IP_HDR_LEN`: a 4-byte address, a 4-byte
//! sequence number and the metric padded to 4 bytes; the one-byte entry count
//! it writes is not counted). We count the same, so the routing overhead in
//! bytes matches ns-2's.

use super::render::{put_addr, put_u32, PcapBody, WireFormat};
use crate::ids::NodeId;

/// Bytes per advertised destination (ns-2 `makeUpdate`: `change_count * 12`).
pub const ENTRY_BYTES: u32 = 12;

/// The infinite metric of an unreachable destination (ns-2 `rtable.h`: `BIG`
/// 250; the paper's ∞). Metrics are carried in one byte, as in ns-2.
pub const INFINITY: u8 = 250;

/// One advertised destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advert {
    pub dst: NodeId,
    /// Hops from the sender to `dst`; [`INFINITY`] for a broken route.
    pub metric: u8,
    /// The destination's sequence number: even when originated by `dst`
    /// itself, odd when a node advertises a broken route (paper §3).
    pub seq: u32,
}

/// Whether an update carries the whole table or only recent changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    FullDump,
    Incremental,
}

/// A DSDV routing-information packet (always a one-hop broadcast).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DsdvMessage {
    pub kind: UpdateKind,
    pub entries: Vec<Advert>,
}

impl DsdvMessage {
    /// Message bytes after the IP header, as ns-2 counts them.
    pub fn size_bytes(&self) -> u32 {
        ENTRY_BYTES * self.entries.len() as u32
    }

    /// Key of the per-type counters (`routing_sent_FULL_DUMP`, ...).
    pub fn kind(&self) -> &'static str {
        match self.kind {
            UpdateKind::FullDump => "FULL_DUMP",
            UpdateKind::Incremental => "INCREMENTAL",
        }
    }
}

/// Every message kind, for counters that list all of them.
pub const KINDS: [&str; 2] = ["FULL_DUMP", "INCREMENTAL"];

// ---- rendering: ns-2 trace fields and pcap bytes ------------------------------

/// DSDV's UDP port in our pcap files: IANA-unassigned (dynamic range) and
/// claimed by no Wireshark 4.0 dissector, so the body shows as plain data.
pub const DSDV_UDP_PORT: u16 = 65_000;

/// The DSDV body: per advertised destination its address, its sequence number
/// and the metric as a 32-bit number (250 = infinity), 12 bytes as ns-2 counts.
pub fn dsdv_body(m: &DsdvMessage) -> Vec<u8> {
    let mut b = Vec::with_capacity(12 * m.entries.len());
    for e in &m.entries {
        put_addr(&mut b, e.dst);
        put_u32(&mut b, e.seq);
        put_u32(&mut b, u32::from(e.metric));
    }
    b
}

impl WireFormat for DsdvMessage {
    fn size_bytes(&self) -> u32 {
        DsdvMessage::size_bytes(self)
    }

    /// ns-2's DSDV agent sends PT_MESSAGE packets, traced without a routing part.
    fn ns2_ptype(&self) -> &'static str {
        "message"
    }

    fn pcap_bytes(&self, _ip_src: NodeId, _next_header: u8) -> PcapBody {
        PcapBody::Udp {
            port: DSDV_UDP_PORT,
            body: dsdv_body(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::RoutingMessage;
    use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_BROADCAST, IP_HEADER_BYTES};

    #[test]
    fn size_is_twelve_bytes_per_entry_plus_ip_as_in_ns2() {
        let m = DsdvMessage {
            kind: UpdateKind::Incremental,
            entries: vec![
                Advert {
                    dst: NodeId(1),
                    metric: 0,
                    seq: 2,
                },
                Advert {
                    dst: NodeId(2),
                    metric: INFINITY,
                    seq: 7,
                },
            ],
        };
        let pkt = Packet {
            uid: 0,
            ip: IpHeader::new(NodeId(1), IP_BROADCAST, 1, IpProto::Manet),
            transport: TransportHeader::Routing(RoutingMessage::Dsdv(m.clone())),
            payload_bytes: 0,
            tag: None,
            source_route: None,
            frn: None,
        };
        assert_eq!(m.size_bytes(), 24);
        assert_eq!(
            pkt.size_bytes(),
            IP_HEADER_BYTES + 24,
            "ns-2: change_count * 12 + IP_HDR_LEN"
        );
        assert!(pkt.is_routing());
        assert_eq!(m.kind(), "INCREMENTAL");
    }
}
