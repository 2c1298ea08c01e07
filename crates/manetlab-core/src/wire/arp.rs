//! The ARP message format (RFC 826 as ns-2.35's `hdr_arp` counts it). Resolution
//! itself — the table, held packets, request counting — is the link layer's
//! (`mac/arp`).

use crate::ids::NodeId;

/// ARP message size (ns-2 `ARP_HDR_LEN`); no IP header.
pub const ARP_BYTES: u32 = 28;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArpOp {
    Request,
    Reply,
}

/// An ARP message on the air (addresses are node ids: MAC address = IP address = id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpMsg {
    pub op: ArpOp,
    pub sender: NodeId,
    pub target: NodeId,
}
