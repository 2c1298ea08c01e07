//! FRN's messages (paper 003, Sugano & Murata; docs/frn.md): the configuration,
//! probe and ERSN control messages of `routing::frn`, and the per-packet FRN
//! header that the FRN MAC (`mac::frn`) and routing both read and write.

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
