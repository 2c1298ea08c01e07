//! FRN's messages (paper 003, Sugano & Murata; docs/frn.md): the configuration,
//! probe and ERSN control messages of `routing::frn`, and the per-packet FRN
//! header that the FRN MAC (`mac::frn`) and routing both read and write.

use super::render::{put_addr, PcapBody, WireFormat};
use crate::ids::NodeId;

/// The FRN header of a data packet, carried in `Packet::frn` (each copy its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrnHeader {
    /// The slot in which the lifetime reaches 0. Slots are a run-wide grid, so
    /// "decrement every slot" is the same as this absolute deadline.
    pub expires_slot: u64,
    /// Backward route: the node the packet must reach first (§II, Fig. 2).
    pub checkpoint: Option<NodeId>,
    /// The packet is coming back with an ERDN (§III-A, Fig. 4).
    pub erdn: bool,
    /// Nodes that forwarded it, in order (where an ERDN walks back to).
    pub trail: Vec<NodeId>,
    /// The neighbour the packet last came from.
    pub prev: Option<NodeId>,
}

/// FRN control messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrnMessage {
    /// Distances and forward next hops: (destination, hops, next hops).
    Config {
        entries: Vec<(NodeId, u8, Vec<NodeId>)>,
    },
    /// Probe of a link judged failed (unicast to the neighbour).
    Probe,
    /// Explicit Route Successful Notification (§III-A, Fig. 3): the sender,
    /// which returned packets with an ERDN, has a route again.
    Ersn,
}

impl FrnMessage {
    pub fn size_bytes(&self) -> u32 {
        match self {
            // 4 B header; per entry: 4 B address, 1 B hops, 1 B count, 4 B per hop.
            FrnMessage::Config { entries } => {
                4 + entries
                    .iter()
                    .map(|(_, _, h)| 6 + 4 * h.len() as u32)
                    .sum::<u32>()
            }
            FrnMessage::Probe | FrnMessage::Ersn => 4,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            FrnMessage::Config { .. } => "CONFIG",
            FrnMessage::Probe => "PROBE",
            FrnMessage::Ersn => "ERSN",
        }
    }
}

// ---- rendering: ns-2 trace fields and pcap bytes ------------------------------

/// FRN's UDP port in our pcap files (unassigned, no dissector), as DSDV's.
pub const FRN_UDP_PORT: u16 = 65_001;

/// An FRN control message: a 4-byte header (type 1 configuration, 2 probe,
/// 3 ERSN; 3 bytes zero), then per configuration entry the destination's
/// address, its hop count, the number of next hops and their addresses.
pub fn frn_body(m: &FrnMessage) -> Vec<u8> {
    let mut b = Vec::with_capacity(m.size_bytes() as usize);
    let kind = match m {
        FrnMessage::Config { .. } => 1,
        FrnMessage::Probe => 2,
        FrnMessage::Ersn => 3,
    };
    b.extend_from_slice(&[kind, 0, 0, 0]);
    if let FrnMessage::Config { entries } = m {
        for (dst, hops, next) in entries {
            put_addr(&mut b, *dst);
            b.push(*hops);
            b.push(next.len() as u8);
            for &n in next {
                put_addr(&mut b, n);
            }
        }
    }
    b
}

impl WireFormat for FrnMessage {
    fn size_bytes(&self) -> u32 {
        FrnMessage::size_bytes(self)
    }

    /// FRN control has no ns-2 counterpart: traced without a routing part, as DSDV's.
    fn ns2_ptype(&self) -> &'static str {
        "FRN"
    }

    fn pcap_bytes(&self, _ip_src: NodeId, _next_header: u8) -> PcapBody {
        PcapBody::Udp {
            port: FRN_UDP_PORT,
            body: frn_body(self),
        }
    }
}

impl WireFormat for FrnHeader {
    /// Not counted at the network layer: its bytes are the FRN MAC's `header_bytes`.
    fn size_bytes(&self) -> u32 {
        0
    }

    fn ns2_ptype(&self) -> &'static str {
        "FRN"
    }

    /// Not in captures (the MAC's header, below IP).
    fn pcap_bytes(&self, _ip_src: NodeId, _next_header: u8) -> PcapBody {
        PcapBody::None
    }
}
