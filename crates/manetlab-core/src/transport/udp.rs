//! UDP (RFC 768): connectionless datagrams. Ports are derived from the flow id so
//! each flow is its own socket pair in traces. The 8-byte header costs air time
//! only when asked (`on_wire`): ns-2's `Agent/UDP`, which the papers' CBR flows
//! ran on, sends the payload with an IP header and no UDP header.

use crate::ids::{FlowId, NodeId};
use crate::packet::{AppTag, IpHeader, IpProto, Packet, TransportHeader, UdpHeader, DEFAULT_TTL};
use crate::sim::SimTime;

/// First port number given to flows (flow f uses port UDP_BASE_PORT + f at both ends).
pub const UDP_BASE_PORT: u16 = 5000;

/// Build the datagram carrying one application payload of flow `flow`.
pub fn datagram(uid: u64, flow: FlowId, src: NodeId, dst: NodeId, payload_bytes: u32, on_wire: bool, seq: u64, now: SimTime) -> Packet {
    let port = UDP_BASE_PORT.wrapping_add(flow.0 as u16);
    Packet {
        uid,
        ip: IpHeader { src, dst, ttl: DEFAULT_TTL, proto: IpProto::Udp },
        transport: TransportHeader::Udp(UdpHeader { src_port: port, dst_port: port, on_wire }),
        payload_bytes,
        tag: Some(AppTag { flow, seq, created: now }),
        source_route: None, frn: None,
    }
}
