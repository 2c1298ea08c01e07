//! Packets as typed structs with per-header on-the-wire sizes.
//!
//! Headers are Rust structs, not byte buffers; a trace or pcap writer serialises
//! them only when asked. `size_bytes()` is what a link or radio transmits, so the
//! sizes below are the ones that cost air time.

use crate::ids::{FlowId, NodeId};
use crate::sim::SimTime;

/// IPv4 header without options.
pub const IP_HEADER_BYTES: u32 = 20;
/// UDP header.
pub const UDP_HEADER_BYTES: u32 = 8;
/// Default TTL of originated packets (ns-2 `IP_DEF_TTL`).
pub const DEFAULT_TTL: u8 = 32;

/// IP protocol numbers of the payloads we model (IANA values, used in pcap output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpProto {
    Udp = 17,
    /// MANET routing control (IANA protocol 138, RFC 5498).
    Manet = 138,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpHeader {
    pub src: NodeId,
    pub dst: NodeId,
    pub ttl: u8,
    pub proto: IpProto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    pub src_port: u16,
    pub dst_port: u16,
}

/// The transport header carried by a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportHeader {
    Udp(UdpHeader),
}

impl TransportHeader {
    pub fn size_bytes(&self) -> u32 {
        match self {
            TransportHeader::Udp(_) => UDP_HEADER_BYTES,
        }
    }
}

/// Bookkeeping that travels with a data packet so the receiver can measure delay
/// and attribute it to its flow. Not on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppTag {
    pub flow: FlowId,
    /// Application sequence number (0, 1, 2, ... per flow).
    pub seq: u64,
    /// When the application handed the packet to the transport.
    pub created: SimTime,
}

/// A network-layer packet.
#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// Unique per run, in creation order (ns-2's `uid`): used by traces.
    pub uid: u64,
    pub ip: IpHeader,
    pub transport: TransportHeader,
    /// Application payload bytes.
    pub payload_bytes: u32,
    pub tag: Option<AppTag>,
}

impl Packet {
    /// Bytes on the wire at the network layer: IP + transport headers + payload.
    pub fn size_bytes(&self) -> u32 {
        IP_HEADER_BYTES + self.transport.size_bytes() + self.payload_bytes
    }

    /// Routing-protocol control traffic (served first by PriQueue).
    pub fn is_routing(&self) -> bool {
        self.ip.proto == IpProto::Manet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_packet_size_counts_both_headers() {
        let p = Packet {
            uid: 0,
            ip: IpHeader { src: NodeId(0), dst: NodeId(1), ttl: DEFAULT_TTL, proto: IpProto::Udp },
            transport: TransportHeader::Udp(UdpHeader { src_port: 1, dst_port: 1 }),
            payload_bytes: 512,
            tag: None,
        };
        assert_eq!(p.size_bytes(), 540);
    }
}
