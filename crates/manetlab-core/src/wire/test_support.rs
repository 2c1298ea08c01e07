//! Packet builders shared by the unit tests of every layer (they used to be
//! copied into each protocol's tests). Test-only: `#[cfg(test)]`.

use super::{
    AppTag, IpHeader, IpProto, Packet, RoutingMessage, TcpFlags, TcpHeader, TransportHeader,
    UdpHeader, DEFAULT_TTL,
};
use crate::ids::{FlowId, NodeId};
use crate::sim::SimTime;

/// A UDP datagram of `payload_bytes` from `src` to `dst`: TTL 32, ports 1, the
/// 8-byte header on the wire, no application tag.
pub(crate) fn udp(uid: u64, src: u32, dst: u32, payload_bytes: u32) -> Packet {
    Packet::new(
        uid,
        IpHeader::new(NodeId(src), NodeId(dst), DEFAULT_TTL, IpProto::Udp),
        TransportHeader::Udp(UdpHeader {
            src_port: 1,
            dst_port: 1,
            on_wire: true,
        }),
        payload_bytes,
    )
}

/// As [`udp`], but as ns-2's `Agent/UDP` sends it: no UDP header on the wire, ports 0.
pub(crate) fn udp_ns2(uid: u64, src: u32, dst: u32, payload_bytes: u32) -> Packet {
    let mut p = udp(uid, src, dst, payload_bytes);
    p.transport = TransportHeader::Udp(UdpHeader {
        src_port: 0,
        dst_port: 0,
        on_wire: false,
    });
    p
}

/// [`udp`] as a relay sees it: TTL `ttl`, the hops so far (`forwards`) being
/// what the TTL lost from the default.
pub(crate) fn relayed_udp(uid: u64, src: u32, dst: u32, ttl: u8, payload_bytes: u32) -> Packet {
    let mut p = udp(uid, src, dst, payload_bytes);
    p.ip.ttl = ttl;
    p.ip.forwards = DEFAULT_TTL.saturating_sub(ttl);
    p
}

/// A TCP ACK-flagged segment (ports 1, sequence and ACK 0, no options) with
/// `payload_bytes` of data, from `src` to `dst`, TTL 32.
pub(crate) fn tcp(uid: u64, src: u32, dst: u32, payload_bytes: u32) -> Packet {
    let h = TcpHeader::for_tests(TcpFlags {
        ack: true,
        ..TcpFlags::default()
    });
    Packet::new(
        uid,
        IpHeader::new(NodeId(src), NodeId(dst), DEFAULT_TTL, IpProto::Tcp),
        TransportHeader::Tcp(h),
        payload_bytes,
    )
}

/// The same packet as TCP: `p`'s IP header (TTL and hops kept) with protocol
/// TCP, carrying [`tcp`]'s header and `payload_bytes`.
pub(crate) fn as_tcp(mut p: Packet, payload_bytes: u32) -> Packet {
    let t = tcp(p.uid, p.ip.src.0, p.ip.dst.0, payload_bytes);
    p.ip.proto = IpProto::Tcp;
    p.transport = t.transport;
    p.payload_bytes = payload_bytes;
    p
}

/// A routing control packet carrying `msg` from `src` to `dst` with TTL `ttl`.
pub(crate) fn control(uid: u64, src: u32, dst: NodeId, ttl: u8, msg: RoutingMessage) -> Packet {
    Packet::control(
        uid,
        IpHeader::new(NodeId(src), dst, ttl, IpProto::Manet),
        msg,
    )
}

/// Application bookkeeping of flow `flow`'s packet `seq`, created at time 0.
pub(crate) fn tag(flow: u32, seq: u64) -> AppTag {
    AppTag {
        flow: FlowId(flow),
        seq,
        created: SimTime::ZERO,
    }
}
