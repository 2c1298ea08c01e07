//! Packets as typed structs with per-header on-the-wire sizes.
//!
//! Headers are Rust structs, not byte buffers; a trace or pcap writer serialises
//! them only when asked. `size_bytes()` is what a link or radio transmits, so the
//! sizes below are the ones that cost air time.

use super::dsr::SourceRoute;
use super::frn::FrnHeader;
use super::RoutingMessage;
use crate::ids::{FlowId, NodeId};
use crate::sim::SimTime;

/// IPv4 header without options.
pub const IP_HEADER_BYTES: u32 = 20;
/// UDP header (RFC 768). ns-2's `Agent/UDP` puts none on the wire, so by default a
/// datagram carries it only with `flows[].udp_header = true` ([`UdpHeader::on_wire`]).
pub const UDP_HEADER_BYTES: u32 = 8;
/// Default TTL of originated packets (ns-2 `IP_DEF_TTL`).
pub const DEFAULT_TTL: u8 = 32;
/// The IP destination of link-local broadcasts (routing control such as AODV
/// RREQ/RERR/HELLO); never a node id.
pub const IP_BROADCAST: NodeId = NodeId(u32::MAX);

/// IP protocol numbers of the payloads we model (IANA values, used in pcap output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpProto {
    Tcp = 6,
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
    /// Bytes counted on the air beyond the 20-byte header. 0 except where an
    /// ns-2.35 size quirk is reproduced: its DSR and DSDV agents add
    /// `IP_HDR_LEN` to every packet they originate, TCP segments too, although
    /// ns-2's TCP already counts its IP header (docs/ns2-differences.md).
    pub extra_bytes: u8,
    /// Times the packet has been forwarded, each forwarder taking one off the TTL
    /// (ns-2 `num_forwards`). Kept apart from the TTL, which does not always start
    /// at [`DEFAULT_TTL`]: ns-2's AODV gives the data it originates TTL 30.
    pub forwards: u8,
}

impl IpHeader {
    /// A new header: TTL `ttl`, never forwarded, no extra bytes.
    pub fn new(src: NodeId, dst: NodeId, ttl: u8, proto: IpProto) -> Self {
        IpHeader {
            src,
            dst,
            ttl,
            proto,
            extra_bytes: 0,
            forwards: 0,
        }
    }

    /// Hops the packet has been forwarded (ns-2 `num_forwards`).
    #[inline]
    pub fn forwards(&self) -> u8 {
        self.forwards
    }

    /// One forwarder's step: one off the TTL, one more forward; the TTL left.
    #[inline]
    pub fn hop(&mut self) -> u8 {
        self.ttl = self.ttl.saturating_sub(1);
        self.forwards = self.forwards.saturating_add(1);
        self.ttl
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    /// Whether the 8 header bytes cost air time (false: ns-2's `Agent/UDP`, whose
    /// packets are the payload plus the IP header only).
    pub on_wire: bool,
}

/// TCP header without options (RFC 9293 §3.1).
pub const TCP_HEADER_BYTES: u32 = 20;
/// Most SACK blocks one segment carries (RFC 2018 allows 4 without timestamps; ns-2 sends 3).
pub const TCP_MAX_SACK_BLOCKS: usize = 3;

/// TCP control flags we model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFlags {
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
}

/// A TCP header. `seq`/`ack` are 32-bit byte sequence numbers as on the wire
/// (they wrap); the engine unwraps them against its own 64-bit byte counters.
///
/// Size on the wire: 20 bytes plus options, padded to a multiple of 4 (RFC 9293):
/// a SYN carries MSS (4 B) and, when offered, SACK-permitted (2 B) → 24 or 28 B;
/// a segment with n SACK blocks carries 2 + 8n bytes of option → 32, 40 or 48 B
/// (ns-2.35's accounting, 8n → 28, 36, 44 B, with `ns2_sack_bytes`).
/// Plain data and ACK segments are 20 B, so with IP a data segment of 1000 B is
/// 1040 B and a pure ACK 40 B, exactly what ns-2 counts (docs/tcp.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// Advertised receive window in bytes. We do not model the window-scale
    /// option: the field holds the unscaled value (docs/tcp.md).
    pub window: u32,
    /// MSS option (SYN only).
    pub mss: Option<u16>,
    /// SACK-permitted option (SYN only).
    pub sack_permitted: bool,
    /// SACK blocks `[left, right)` in wire sequence numbers; the first `sack_len` are valid.
    pub sack: [(u32, u32); TCP_MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// Not on the wire: the segment's header bytes are not counted on the air
    /// (ns-2.35 Vegas, whose data packets are `packetSize_` bytes only):
    /// [`Packet::size_bytes`] leaves out the 20-byte TCP and 20-byte IP headers.
    pub headerless: bool,
    /// Not on the wire: SACK blocks are counted as ns-2.35's `TCPSink/Sack1` counts
    /// them (`tcp-sink.cc`: 8 B per block, no option kind/length, no padding), so an
    /// ACK with n blocks is 40 + 8n B. Set by the one-way (ns-2) sink; false gives
    /// the real option (2 + 8n B padded to 4).
    pub ns2_sack_bytes: bool,
    /// Not on the wire (ns-2.35 carries it in `hdr_tcp` without the timestamp option):
    /// on an ACK, the send time the sink echoes (`ts_echo()` = `Acker::ts_to_echo_`,
    /// fixed when the ACK is made, so an ACK held up in the network echoes an old
    /// time). Only ns-2's FACK reads it (`FackTcpAgent::oldack`); zero on data.
    pub ts_echo: SimTime,
}

impl TcpHeader {
    /// A header without options: no MSS or SACK-permitted option, no SACK
    /// blocks, no timestamp echo, counted on the wire as ns-2 counts it. The
    /// sender, the receiver and tests set the options they use afterwards.
    #[inline]
    pub fn new(
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        flags: TcpFlags,
        window: u32,
    ) -> TcpHeader {
        TcpHeader {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            window,
            mss: None,
            sack_permitted: false,
            sack: [(0, 0); TCP_MAX_SACK_BLOCKS],
            sack_len: 0,
            headerless: false,
            ns2_sack_bytes: false,
            ts_echo: SimTime::ZERO,
        }
    }

    pub fn size_bytes(&self) -> u32 {
        let mut opt = 0;
        if self.mss.is_some() {
            opt += 4;
        }
        if self.sack_permitted {
            opt += 2;
        }
        if self.sack_len > 0 {
            if self.ns2_sack_bytes {
                opt += 8 * self.sack_len as u32;
            } else {
                opt += 2 + 8 * self.sack_len as u32;
            }
        }
        TCP_HEADER_BYTES + opt.div_ceil(4) * 4
    }

    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }
}

/// The transport header carried by a packet.
///
/// Not `Copy`: a routing message can carry a list (an AODV RERR's unreachable
/// destinations). Match on a reference, or bind the `Copy` TCP/UDP headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportHeader {
    Udp(UdpHeader),
    Tcp(TcpHeader),
    /// A routing protocol's control message (`ip.proto = Manet`). Like ns-2,
    /// its size is the message's own length on top of the IP header, with no
    /// UDP header (docs/routing.md).
    Routing(RoutingMessage),
}

impl TransportHeader {
    pub fn size_bytes(&self) -> u32 {
        match self {
            TransportHeader::Udp(u) => {
                if u.on_wire {
                    UDP_HEADER_BYTES
                } else {
                    0
                }
            }
            TransportHeader::Tcp(h) => h.size_bytes(),
            TransportHeader::Routing(m) => m.size_bytes(),
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

#[cfg(test)]
impl TcpHeader {
    /// A plain header for tests: ports 1, sequence and ACK 0, `flags`, no options.
    pub(crate) fn for_tests(flags: TcpFlags) -> TcpHeader {
        TcpHeader::new(1, 1, 0, 0, flags, 20_000)
    }
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
    /// A DSR source-route header (RFC 4728 §6.7) carried by a data packet
    /// between the IP header and the transport header; `None` for every other
    /// protocol. Boxed so that packets without one stay small.
    pub source_route: Option<Box<SourceRoute>>,
    /// The FRN header (paper 003: lifetime, checkpoint, ERDN flag, trail) of a
    /// data packet in an FRN run (`mac/frn`); `None` for every other protocol.
    /// Each copy carries its own, as on the air. Its bytes are the FRN MAC's
    /// `header_bytes`, not counted here.
    pub frn: Option<Box<FrnHeader>>,
}

impl Packet {
    /// A packet without an application tag and without per-packet extensions
    /// (no DSR source route, no FRN header). Every packet is built here or in
    /// [`Packet::control`], so a new per-packet extension is one field added in
    /// this file, not a field in every struct literal of the crate.
    #[inline]
    pub fn new(uid: u64, ip: IpHeader, transport: TransportHeader, payload_bytes: u32) -> Packet {
        Packet {
            uid,
            ip,
            transport,
            payload_bytes,
            tag: None,
            source_route: None,
            frn: None,
        }
    }

    /// A routing protocol's control packet: `msg` as the transport header, no payload.
    #[inline]
    pub fn control(uid: u64, ip: IpHeader, msg: RoutingMessage) -> Packet {
        Packet::new(uid, ip, TransportHeader::Routing(msg), 0)
    }

    /// The packet with its application bookkeeping set.
    #[inline]
    pub fn with_tag(mut self, tag: AppTag) -> Packet {
        self.tag = Some(tag);
        self
    }

    /// Bytes on the wire at the network layer: IP + source route (DSR) +
    /// transport headers + payload.
    pub fn size_bytes(&self) -> u32 {
        let sr = self.source_route.as_ref().map_or(0, |s| s.size_bytes());
        let headers = match &self.transport {
            TransportHeader::Tcp(h) if h.headerless => 0,
            t => IP_HEADER_BYTES + t.size_bytes(),
        };
        headers + self.ip.extra_bytes as u32 + sr + self.payload_bytes
    }

    /// The per-packet extensions this packet carries (DSR source route, FRN
    /// header), for writers that render them without knowing which they are.
    pub fn extensions(&self) -> impl Iterator<Item = &dyn super::WireFormat> {
        let sr = self
            .source_route
            .as_deref()
            .map(|s| s as &dyn super::WireFormat);
        let frn = self.frn.as_deref().map(|f| f as &dyn super::WireFormat);
        sr.into_iter().chain(frn)
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
            ip: IpHeader::new(NodeId(0), NodeId(1), DEFAULT_TTL, IpProto::Udp),
            transport: TransportHeader::Udp(UdpHeader {
                src_port: 1,
                dst_port: 1,
                on_wire: true,
            }),
            payload_bytes: 512,
            tag: None,
            source_route: None,
            frn: None,
        };
        assert_eq!(p.size_bytes(), 540);
    }

    #[test]
    fn tcp_sizes_match_ns2_and_count_options() {
        let mut h = TcpHeader::new(
            1,
            1,
            0,
            0,
            TcpFlags {
                ack: true,
                ..TcpFlags::default()
            },
            20_000,
        );
        let mut p = Packet {
            uid: 0,
            ip: IpHeader::new(NodeId(0), NodeId(1), DEFAULT_TTL, IpProto::Tcp),
            transport: TransportHeader::Tcp(h),
            payload_bytes: 1000,
            tag: None,
            source_route: None,
            frn: None,
        };
        assert_eq!(p.size_bytes(), 1040, "ns-2: 1000 B payload + 40 B TCP/IP");
        p.payload_bytes = 0;
        assert_eq!(p.size_bytes(), 40, "pure ACK");
        // ns-2.35 Vegas data: payload only; DSR/DSDV's second IP header still counts.
        let TransportHeader::Tcp(ref mut hh) = p.transport else {
            unreachable!()
        };
        hh.headerless = true;
        p.payload_bytes = 1000;
        assert_eq!(p.size_bytes(), 1000);
        p.ip.extra_bytes = 20;
        assert_eq!(p.size_bytes(), 1020);
        let TransportHeader::Tcp(ref mut hh) = p.transport else {
            unreachable!()
        };
        hh.headerless = false;
        p.ip.extra_bytes = 0;
        p.payload_bytes = 0;
        // SYN with MSS + SACK-permitted: 6 B of options padded to 8.
        h.mss = Some(1000);
        h.sack_permitted = true;
        assert_eq!(h.size_bytes(), 28);
        h.mss = None;
        h.sack_permitted = false;
        for (n, size) in [(1, 32), (2, 40), (3, 48)] {
            h.sack_len = n;
            assert_eq!(
                h.size_bytes(),
                size,
                "{n} SACK blocks: 2 + 8n option bytes, padded"
            );
        }
        // ns-2.35 TCPSink/Sack1 (`ch->size() += sack_index * 8`): 48, 56, 64 B ACKs with
        // IP, as its traces show.
        h.ns2_sack_bytes = true;
        p.transport = TransportHeader::Tcp(h);
        for (n, size) in [(0, 40), (1, 48), (2, 56), (3, 64)] {
            let TransportHeader::Tcp(ref mut hh) = p.transport else {
                unreachable!()
            };
            hh.sack_len = n;
            assert_eq!(
                p.size_bytes(),
                size,
                "ns-2: 40 + 8 B per SACK block ({n} blocks)"
            );
        }
    }
}
