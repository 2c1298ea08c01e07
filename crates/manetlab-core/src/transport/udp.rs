//! UDP (RFC 768): connectionless datagrams with an 8-byte header. Ports are
//! derived from the flow id so each flow is its own socket pair in traces.

use crate::ids::{FlowId, NodeId};
use crate::packet::{AppTag, IpHeader, IpProto, Packet, TransportHeader, UdpHeader, DEFAULT_TTL};
use crate::sim::SimTime;

/// First port number given to flows (flow f uses port UDP_BASE_PORT + f at both ends).
pub const UDP_BASE_PORT: u16 = 5000;

/// Build the datagram carrying one application payload of flow `flow`.
pub fn datagram(uid: u64, flow: FlowId, src: NodeId, dst: NodeId, payload_bytes: u32, seq: u64, now: SimTime) -> Packet {
    let port = UDP_BASE_PORT.wrapping_add(flow.0 as u16);
    Packet {
        uid,
        ip: IpHeader { src, dst, ttl: DEFAULT_TTL, proto: IpProto::Udp },
        transport: TransportHeader::Udp(UdpHeader { src_port: port, dst_port: port }),
        payload_bytes,
        tag: Some(AppTag { flow, seq, created: now }),
        source_route: None,
    }
}
