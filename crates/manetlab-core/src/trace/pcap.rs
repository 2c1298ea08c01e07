//! pcap files with real IPv4/UDP/TCP headers (RFC 791, 768, 793), correct
//! checksums (RFC 1071) and nanosecond timestamps in simulated time.
//!
//! Link type 228 (`LINKTYPE_IPV4`): each record is a bare IPv4 datagram (the IP
//! capture, `outputs.pcap = true` or `"ip"`). The MAC capture (`outputs.pcap =
//! "mac"`, [`dot11`]) writes the 802.11 frames around these datagrams instead. Node `i` has address
//! 10.0.0.0 + i + 1 (node 0 is 10.0.0.1); the IP broadcast is 255.255.255.255.
//! Application payload bytes are zeros. TCP windows above 65535 bytes are
//! clamped (no window-scale option is modelled). Routing control is encoded as
//! the real protocols (AODV on UDP 654, DSR's options header, DSDV in our own
//! documented layout): `control.rs`. A data packet on a DSR source route carries
//! the DSR header (IP protocol 48) in front of its TCP/UDP header.
//!
//! Records are written where a datagram leaves or reaches a node's interface:
//! the first transmission of its 802.11 data frame (not MAC retries), its
//! delivery by the receiving MAC, and its hand-over to a point-to-point link.

pub mod control;
pub mod dot11;

use crate::ids::NodeId;
use crate::sim::SimTime;
use crate::wire::dsr::IPPROTO_NONE;
use crate::wire::{IpProto, Packet, PcapBody, TcpHeader, TransportHeader};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// pcap magic for nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_IPV4: u32 = 228;

/// IPv4 address of a node ([`crate::wire::IP_BROADCAST`] is 255.255.255.255).
pub use crate::wire::render::pcap_addr as node_addr;

/// RFC 1071 ones'-complement sum, folded.
fn ones_sum(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

fn checksum(acc: u32, bytes: &[u8]) -> u16 {
    !(ones_sum(acc, bytes) as u16)
}

fn tcp_bytes(h: &TcpHeader) -> Vec<u8> {
    // The capture holds real options even where the simulation counts SACK blocks
    // as ns-2 does (`ns2_sack_bytes`).
    let len = TcpHeader {
        ns2_sack_bytes: false,
        ..*h
    }
    .size_bytes() as usize;
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&h.src_port.to_be_bytes());
    b.extend_from_slice(&h.dst_port.to_be_bytes());
    b.extend_from_slice(&h.seq.to_be_bytes());
    b.extend_from_slice(&h.ack.to_be_bytes());
    let flags = (h.flags.fin as u8) | ((h.flags.syn as u8) << 1) | ((h.flags.ack as u8) << 4);
    b.push(((len / 4) as u8) << 4);
    b.push(flags);
    b.extend_from_slice(&(h.window.min(65_535) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0]); // checksum (filled later), urgent pointer
    if let Some(mss) = h.mss {
        b.extend_from_slice(&[2, 4]);
        b.extend_from_slice(&mss.to_be_bytes());
    }
    if h.sack_permitted {
        b.extend_from_slice(&[4, 2]);
    }
    if h.sack_len > 0 {
        b.extend_from_slice(&[5, 2 + 8 * h.sack_len]);
        for (l, r) in h.sack_blocks() {
            b.extend_from_slice(&l.to_be_bytes());
            b.extend_from_slice(&r.to_be_bytes());
        }
    }
    b.resize(len, 1); // pad options with NOP (kind 1) to a 32-bit boundary
    b
}

fn udp_bytes(src_port: u16, dst_port: u16, body: &[u8], payload_bytes: usize) -> Vec<u8> {
    let len = 8 + body.len() + payload_bytes;
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&src_port.to_be_bytes());
    b.extend_from_slice(&dst_port.to_be_bytes());
    b.extend_from_slice(&(len as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(body);
    b.resize(len, 0);
    b
}

/// Fill in the TCP or UDP checksum of `l4` (RFC 793/768 pseudo-header).
fn set_l4_checksum(l4: &mut [u8], proto: u8, src: [u8; 4], dst: [u8; 4]) {
    let at = if proto == IpProto::Tcp as u8 { 16 } else { 6 };
    let mut pseudo = [0u8; 12];
    pseudo[..4].copy_from_slice(&src);
    pseudo[4..8].copy_from_slice(&dst);
    pseudo[9] = proto;
    pseudo[10..].copy_from_slice(&(l4.len() as u16).to_be_bytes());
    let mut c = checksum(ones_sum(0, &pseudo), l4);
    if c == 0 && proto == IpProto::Udp as u8 {
        c = 0xffff; // RFC 768: a computed 0 is sent as all ones
    }
    l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// The IPv4 datagram of `pkt` as bytes.
pub fn datagram_bytes(pkt: &Packet) -> Vec<u8> {
    let (src, dst) = (node_addr(pkt.ip.src), node_addr(pkt.ip.dst));
    let payload = pkt.payload_bytes as usize;
    // The transport part (with its checksum) and its IP protocol number.
    let (mut proto, mut l4, summed) = match &pkt.transport {
        TransportHeader::Udp(u) => (
            IpProto::Udp as u8,
            udp_bytes(u.src_port, u.dst_port, &[], payload),
            true,
        ),
        TransportHeader::Tcp(h) => {
            let mut b = tcp_bytes(h);
            b.resize(b.len() + payload, 0);
            (IpProto::Tcp as u8, b, true)
        }
        // The protocol's own encoding (wire/<protocol>.rs).
        TransportHeader::Routing(m) => match m.wire().pcap_bytes(pkt.ip.src, IPPROTO_NONE) {
            PcapBody::Udp { port, body } => (
                IpProto::Udp as u8,
                udp_bytes(port, port, &body, payload),
                true,
            ),
            PcapBody::Ip { proto, bytes } => (proto, bytes, false),
            PcapBody::None => (IPPROTO_NONE, Vec::new(), false),
        },
    };
    if summed {
        set_l4_checksum(&mut l4, proto, src, dst);
    }
    // Per-packet extensions (a DSR source route) sit between IP and the transport
    // header, each naming what follows it.
    for ext in pkt.extensions() {
        let next = if proto == IpProto::Tcp as u8 {
            IpProto::Tcp
        } else {
            IpProto::Udp
        };
        if let PcapBody::Ip { proto: p, bytes } = ext.pcap_bytes(pkt.ip.src, next as u8) {
            let mut b = bytes;
            b.extend_from_slice(&l4);
            (proto, l4) = (p, b);
        }
    }

    let total = 20 + l4.len();
    let mut ip = Vec::with_capacity(total);
    ip.extend_from_slice(&[0x45, 0]);
    ip.extend_from_slice(&(total as u16).to_be_bytes());
    ip.extend_from_slice(&((pkt.uid & 0xffff) as u16).to_be_bytes());
    ip.extend_from_slice(&[0x40, 0]); // don't fragment
    ip.push(pkt.ip.ttl);
    ip.push(proto);
    ip.extend_from_slice(&[0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let hc = checksum(0, &ip);
    ip[10..12].copy_from_slice(&hc.to_be_bytes());
    ip.extend_from_slice(&l4);
    ip
}

/// The 24-byte pcap file header of an IP capture.
fn file_header() -> [u8; 24] {
    file_header_of(LINKTYPE_IPV4)
}

/// The 24-byte pcap file header for records of `link_type`.
fn file_header_of(link_type: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone and sigfigs stay 0.
    h[16..20].copy_from_slice(&65_535u32.to_le_bytes()); // snaplen
    h[20..24].copy_from_slice(&link_type.to_le_bytes());
    h
}

/// Append the record of `pkt` seen at `t` to `out`.
fn push_record(out: &mut Vec<u8>, t: SimTime, pkt: &Packet) {
    push_bytes(out, t, &datagram_bytes(pkt));
}

/// Append a record of `bytes` seen at `t` to `out`.
fn push_bytes(out: &mut Vec<u8>, t: SimTime, bytes: &[u8]) {
    let ns = t.as_nanos();
    out.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A pcap file being written.
pub struct PcapWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    pub packets: u64,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&file_header())?;
        Ok(PcapWriter {
            out,
            buf: Vec::with_capacity(128),
            packets: 0,
        })
    }

    /// Append `pkt` as seen at `t`.
    pub fn write(&mut self, t: SimTime, pkt: &Packet) -> io::Result<()> {
        self.buf.clear();
        push_record(&mut self.buf, t, pkt);
        self.out.write_all(&self.buf)?;
        self.packets += 1;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Bytes a node's records are gathered into before they are appended to its
/// file. A file is open only while its buffer is written out, so a run holds
/// at most one pcap file open however many nodes are traced (one file per node
/// at once failed with "too many open files" above ~1000 nodes), and memory is
/// bounded by this size per node that has sent or received something.
pub const PCAP_BUFFER_BYTES: usize = 32 * 1024;

struct NodeFile {
    path: PathBuf,
    buf: Vec<u8>,
}

/// What a capture's records are: IP datagrams (link type 228) or 802.11 frames
/// with radiotap headers (link type 127, [`dot11`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaptureLayer {
    #[default]
    Ip,
    Mac,
}

impl CaptureLayer {
    pub fn link_type(self) -> u32 {
        match self {
            CaptureLayer::Ip => LINKTYPE_IPV4,
            CaptureLayer::Mac => dot11::LINKTYPE_IEEE802_11_RADIOTAP,
        }
    }
}

/// One pcap file per traced node (`node<N>.pcap`), without an open file per node.
pub struct PcapFiles {
    /// `files[node]`, `None` for untraced nodes.
    files: Vec<Option<NodeFile>>,
}

impl PcapFiles {
    /// Create (truncate) the file of each node in `traced`, with its header.
    pub fn create(
        dir: &Path,
        nodes: usize,
        traced: &[NodeId],
        layer: CaptureLayer,
        name: impl Fn(NodeId) -> String,
    ) -> io::Result<PcapFiles> {
        let mut files: Vec<Option<NodeFile>> = (0..nodes).map(|_| None).collect();
        for &n in traced {
            let path = dir.join(name(n));
            File::create(&path)?.write_all(&file_header_of(layer.link_type()))?;
            files[n.index()] = Some(NodeFile {
                path,
                buf: Vec::new(),
            });
        }
        Ok(PcapFiles { files })
    }

    pub fn is_traced(&self, n: NodeId) -> bool {
        self.files.get(n.index()).is_some_and(|f| f.is_some())
    }

    /// Record `pkt` in node `n`'s file (if traced) at time `t`.
    pub fn write(&mut self, n: NodeId, t: SimTime, pkt: &Packet) -> io::Result<()> {
        let Some(Some(f)) = self.files.get_mut(n.index()) else {
            return Ok(());
        };
        push_record(&mut f.buf, t, pkt);
        if f.buf.len() >= PCAP_BUFFER_BYTES {
            Self::flush_one(f)?;
        }
        Ok(())
    }

    /// Record the 802.11 frame `f` sent at `rate_bps` in node `n`'s file (if
    /// traced) at time `t` ([`dot11::record_bytes`]).
    pub fn write_frame(
        &mut self,
        n: NodeId,
        t: SimTime,
        f: &crate::mac::Frame,
        rate_bps: f64,
    ) -> io::Result<()> {
        let Some(Some(file)) = self.files.get_mut(n.index()) else {
            return Ok(());
        };
        push_bytes(&mut file.buf, t, &dot11::record_bytes(f, rate_bps));
        if file.buf.len() >= PCAP_BUFFER_BYTES {
            Self::flush_one(file)?;
        }
        Ok(())
    }

    fn flush_one(f: &mut NodeFile) -> io::Result<()> {
        if !f.buf.is_empty() {
            OpenOptions::new()
                .append(true)
                .open(&f.path)?
                .write_all(&f.buf)?;
            f.buf.clear();
        }
        Ok(())
    }

    /// Write out every buffer; returns the nodes traced, in node order.
    pub fn finish(mut self) -> io::Result<Vec<NodeId>> {
        let mut nodes = Vec::new();
        for (i, f) in self.files.iter_mut().enumerate() {
            if let Some(f) = f {
                Self::flush_one(f)?;
                nodes.push(NodeId(i as u32));
            }
        }
        Ok(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::test_support;
    use crate::wire::*;

    fn udp() -> Packet {
        let mut p = test_support::udp(7, 0, 3, 11);
        p.transport = TransportHeader::Udp(UdpHeader {
            src_port: 5000,
            dst_port: 5000,
            on_wire: true,
        });
        p
    }

    #[test]
    fn ip_and_udp_checksums_verify() {
        let b = datagram_bytes(&udp());
        assert_eq!(b.len(), 20 + 8 + 11);
        assert_eq!(&b[12..16], &[10, 0, 0, 1]);
        assert_eq!(&b[16..20], &[10, 0, 0, 4]);
        // A correct header sums to 0xffff (checksum field included).
        assert_eq!(ones_sum(0, &b[..20]), 0xffff);
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 4, 0, 17];
        pseudo.extend_from_slice(&((b.len() - 20) as u16).to_be_bytes());
        assert_eq!(ones_sum(ones_sum(0, &pseudo), &b[20..]), 0xffff);
    }

    #[test]
    fn tcp_options_are_laid_out_and_padded() {
        let mut sack = [(0u32, 0u32); TCP_MAX_SACK_BLOCKS];
        sack[0] = (1000, 2000);
        let h = TcpHeader {
            src_port: 1,
            dst_port: 2,
            seq: 1,
            ack: 1001,
            flags: TcpFlags {
                ack: true,
                ..TcpFlags::default()
            },
            window: 100_000,
            mss: None,
            sack_permitted: false,
            sack,
            sack_len: 1,
            headerless: false,
            ns2_sack_bytes: false,
            ts_echo: crate::sim::SimTime::ZERO,
        };
        let mut p = udp();
        p.ip.proto = IpProto::Tcp;
        p.transport = TransportHeader::Tcp(h);
        p.payload_bytes = 0;
        let b = datagram_bytes(&p);
        let tcp = &b[20..];
        assert_eq!(tcp.len() as u32, h.size_bytes());
        assert_eq!(tcp[12] >> 4, (h.size_bytes() / 4) as u8, "data offset");
        assert_eq!(tcp[13], 0x10, "ACK flag");
        assert_eq!(
            u16::from_be_bytes([tcp[14], tcp[15]]),
            65_535,
            "window clamped"
        );
        assert_eq!(&tcp[20..22], &[5, 10], "SACK option kind and length");
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 4, 0, 6];
        pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
        assert_eq!(ones_sum(ones_sum(0, &pseudo), tcp), 0xffff);
        // Counting SACK blocks as ns-2 does (8 B each) changes the simulated size only:
        // the capture still holds the real, padded option.
        let h2 = TcpHeader {
            ns2_sack_bytes: true,
            ..h
        };
        assert_eq!(h2.size_bytes(), 28);
        let mut p2 = p.clone();
        p2.transport = TransportHeader::Tcp(h2);
        assert_eq!(datagram_bytes(&p2), b);
    }

    #[test]
    fn source_routed_data_carries_the_dsr_header_before_udp() {
        use crate::wire::dsr::SourceRoute;
        let path = vec![NodeId(0), NodeId(1), NodeId(2), NodeId(3)];
        let mut p = udp();
        p.source_route = Some(Box::new(SourceRoute {
            path,
            next: 1,
            salvaged: 0,
            flow: Default::default(),
        }));
        let b = datagram_bytes(&p);
        assert_eq!(b[9], 48, "IP protocol: DSR");
        assert_eq!(
            usize::from(u16::from_be_bytes([b[2], b[3]])),
            b.len(),
            "IP total length counts the DSR header"
        );
        let dsr = &b[20..];
        assert_eq!(dsr[0], 17, "next header UDP");
        let opt_len = usize::from(u16::from_be_bytes([dsr[2], dsr[3]]));
        assert_eq!(
            opt_len,
            2 + 2 + 8,
            "one source route option, two intermediate nodes"
        );
        assert_eq!(&dsr[4..6], &[96, 10]);
        let udp = &dsr[4 + opt_len..];
        assert_eq!(udp.len(), 8 + 11);
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]), 19, "UDP length");
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 4, 0, 17];
        pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
        assert_eq!(
            ones_sum(ones_sum(0, &pseudo), udp),
            0xffff,
            "UDP checksum over its own pseudo-header"
        );
        assert_eq!(ones_sum(0, &b[..20]), 0xffff);
    }

    #[test]
    fn aodv_goes_out_on_udp_654_to_the_broadcast_address() {
        use crate::wire::aodv::{AodvMessage, Hello};
        use crate::wire::RoutingMessage;
        let p = test_support::control(
            7,
            4,
            IP_BROADCAST,
            1,
            RoutingMessage::Aodv(AodvMessage::Hello(Hello {
                node: NodeId(4),
                seq: 2,
                lifetime_ns: 0,
            })),
        );
        let b = datagram_bytes(&p);
        assert_eq!(b[9], 17, "UDP");
        assert_eq!(&b[16..20], &[255, 255, 255, 255]);
        assert_eq!(&b[20..24], &[2, 142, 2, 142], "ports 654 -> 654");
        assert_eq!(b.len(), 20 + 8 + 20, "RFC 3561 RREP (HELLO) body");
        let mut pseudo = vec![10, 0, 0, 5, 255, 255, 255, 255, 0, 17];
        pseudo.extend_from_slice(&((b.len() - 20) as u16).to_be_bytes());
        assert_eq!(ones_sum(ones_sum(0, &pseudo), &b[20..]), 0xffff);
        assert_eq!(
            node_addr(NodeId(u32::MAX - 1)),
            [9, 255, 255, 255],
            "wraps, never panics"
        );
    }

    #[test]
    fn file_header_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(SimTime(1_500_000_123), &udp()).unwrap();
        let b = w.into_inner();
        assert_eq!(&b[..4], &MAGIC_NS.to_le_bytes());
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 228);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(b[28..32].try_into().unwrap()),
            500_000_123
        );
        assert_eq!(b.len(), 24 + 16 + 39);
    }

    #[test]
    fn pcap_files_match_the_streaming_writer_and_flush_in_chunks() {
        let dir = std::env::temp_dir().join(format!("manetlab-pcap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut set = PcapFiles::create(&dir, 3, &[NodeId(0), NodeId(2)], CaptureLayer::Ip, |n| {
            format!("node{n}.pcap")
        })
        .unwrap();
        let mut reference = PcapWriter::new(Vec::new()).unwrap();
        // Enough records to cross the buffer size several times.
        let records = 3 * PCAP_BUFFER_BYTES / (16 + 39) + 7;
        for i in 0..records {
            let t = SimTime(i as u64 * 1_000);
            set.write(NodeId(2), t, &udp()).unwrap();
            set.write(NodeId(1), t, &udp()).unwrap(); // untraced: ignored
            reference.write(t, &udp()).unwrap();
        }
        assert!(!set.is_traced(NodeId(1)));
        assert_eq!(set.finish().unwrap(), vec![NodeId(0), NodeId(2)]);
        assert_eq!(
            std::fs::read(dir.join("node2.pcap")).unwrap(),
            reference.into_inner()
        );
        assert_eq!(
            std::fs::read(dir.join("node0.pcap")).unwrap(),
            file_header(),
            "header only"
        );
        assert!(!dir.join("node1.pcap").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
