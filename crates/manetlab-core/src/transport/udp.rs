//! UDP (RFC 768): connectionless datagrams. Each flow has its own port
//! (`flows[].port`, default 50000 + the flow's index) at both ends, so each flow
//! is its own socket pair in traces. The 8-byte header costs air time
//! only when asked (`on_wire`): ns-2's `Agent/UDP`, which the papers' CBR flows
//! ran on, sends the payload with an IP header and no UDP header.

use crate::ids::{FlowId, NodeId};
use crate::sim::SimTime;
use crate::wire::{AppTag, IpHeader, IpProto, Packet, TransportHeader, UdpHeader, DEFAULT_TTL};

/// Build the datagram carrying one application payload of flow `flow`, from
/// and to `port`.
#[allow(clippy::too_many_arguments)]
pub fn datagram(
    uid: u64,
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    port: u16,
    payload_bytes: u32,
    on_wire: bool,
    seq: u64,
    now: SimTime,
) -> Packet {
    Packet::new(
        uid,
        IpHeader::new(src, dst, DEFAULT_TTL, IpProto::Udp),
        TransportHeader::Udp(UdpHeader {
            src_port: port,
            dst_port: port,
            on_wire,
        }),
        payload_bytes,
    )
    .with_tag(AppTag {
        flow,
        seq,
        created: now,
    })
}
