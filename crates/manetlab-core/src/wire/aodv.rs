//! AODV message formats (RFC 3561 §5) and their sizes on the wire.
//!
//! Sizes are what ns-2's `aodv_packet.h` counts: the RFC's message plus one
//! 4-byte word for the timestamp ns-2 carries in requests and replies (to measure
//! the per-hop time): RREQ 28 B (`7*sizeof(u_int32_t)`, RFC 24), RREP 24 B
//! (`6*sizeof(u_int32_t)`, RFC 20), RERR 4 + 8·n B, HELLO (an RREP with the sender
//! as destination) 24 B. Like ns-2, the packet is charged the IP header (20 B) on
//! top but no UDP header: RFC 3561 runs over UDP port 654, which would add 8 B per
//! message (docs/routing.md).

use crate::ids::NodeId;

/// RREQ length: RFC 3561 §5.1's 24 B + ns-2's timestamp word.
pub const RREQ_BYTES: u32 = 28;
/// RREP length: RFC 3561 §5.2's 20 B + ns-2's timestamp word; HELLO is an RREP.
pub const RREP_BYTES: u32 = 24;
/// RERR fixed part: type, flags, reserved, DestCount (RFC 3561 §5.3).
pub const RERR_BASE_BYTES: u32 = 4;
/// Each unreachable destination in a RERR: address + sequence number.
pub const RERR_DEST_BYTES: u32 = 8;

/// Route Request (RFC 3561 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rreq {
    /// J, R: multicast flags, not modelled. G: gratuitous RREP wanted.
    pub gratuitous: bool,
    /// D: only the destination may reply.
    pub destination_only: bool,
    /// U: the destination sequence number is unknown.
    pub unknown_seq: bool,
    /// Hops from the originator to the node handling the request.
    pub hop_count: u8,
    /// RREQ ID: with `originator`, identifies the request.
    pub id: u32,
    pub dst: NodeId,
    pub dst_seq: u32,
    pub originator: NodeId,
    pub originator_seq: u32,
    /// When the originator sent the request (ns-2 `rq_timestamp`, echoed in the
    /// reply so the originator can measure discovery latency; not charged on
    /// the wire, as in ns-2's size).
    pub timestamp_ns: u64,
}

/// Route Reply (RFC 3561 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rrep {
    /// Hops from the node handling the reply to `dst`.
    pub hop_count: u8,
    /// The destination the route is for.
    pub dst: NodeId,
    pub dst_seq: u32,
    /// The node that asked for the route (the RREP travels towards it).
    pub originator: NodeId,
    /// How long the route may be used from receipt (ns).
    pub lifetime_ns: u64,
    /// The request's `timestamp_ns`, echoed (ns-2 `rp_timestamp`).
    pub timestamp_ns: u64,
}

/// Route Error (RFC 3561 §5.3): destinations that became unreachable, each with
/// its (incremented) sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerr {
    /// N: no-delete flag (local repair in progress). Not generated (docs/routing.md).
    pub no_delete: bool,
    pub unreachable: Vec<(NodeId, u32)>,
}

/// HELLO (RFC 3561 §6.9): an RREP with TTL 1 advertising the sender itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub node: NodeId,
    pub seq: u32,
    pub lifetime_ns: u64,
}

/// An AODV control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AodvMessage {
    Rreq(Rreq),
    Rrep(Rrep),
    Rerr(Rerr),
    Hello(Hello),
}

impl AodvMessage {
    /// Message bytes after the IP header.
    pub fn size_bytes(&self) -> u32 {
        match self {
            AodvMessage::Rreq(_) => RREQ_BYTES,
            AodvMessage::Rrep(_) | AodvMessage::Hello(_) => RREP_BYTES,
            AodvMessage::Rerr(e) => RERR_BASE_BYTES + RERR_DEST_BYTES * e.unreachable.len() as u32,
        }
    }

    /// The message type as RFC 3561 names it (keys of the per-type counters).
    pub fn kind(&self) -> &'static str {
        match self {
            AodvMessage::Rreq(_) => "RREQ",
            AodvMessage::Rrep(_) => "RREP",
            AodvMessage::Rerr(_) => "RERR",
            AodvMessage::Hello(_) => "HELLO",
        }
    }
}

/// Every message kind, for counters that list all of them.
pub const KINDS: [&str; 4] = ["RREQ", "RREP", "RERR", "HELLO"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::RoutingMessage;
    use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_HEADER_BYTES};

    #[test]
    fn sizes_match_rfc_and_ns2() {
        let rreq = AodvMessage::Rreq(Rreq {
            gratuitous: false,
            destination_only: false,
            unknown_seq: true,
            hop_count: 0,
            id: 1,
            dst: NodeId(3),
            dst_seq: 0,
            originator: NodeId(0),
            timestamp_ns: 0,
            originator_seq: 1,
        });
        let pkt = Packet {
            uid: 0,
            ip: IpHeader::new(NodeId(0), NodeId(0), 1, IpProto::Manet),
            transport: TransportHeader::Routing(RoutingMessage::Aodv(rreq)),
            payload_bytes: 0,
            tag: None,
            source_route: None,
            frn: None,
        };
        assert_eq!(
            pkt.size_bytes(),
            IP_HEADER_BYTES + 28,
            "ns-2: IP_HDR_LEN + 7*sizeof(u_int32_t)"
        );
        assert!(pkt.is_routing());
        let rerr = AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(1), 2), (NodeId(2), 3)],
        });
        assert_eq!(rerr.size_bytes(), 4 + 16);
        let hello = AodvMessage::Hello(Hello {
            node: NodeId(1),
            seq: 1,
            lifetime_ns: 0,
        });
        assert_eq!(hello.size_bytes(), 24, "ns-2: 6*sizeof(u_int32_t)");
    }
}
