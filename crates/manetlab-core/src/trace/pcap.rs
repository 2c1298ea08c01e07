//! pcap files with real IPv4/UDP/TCP headers (RFC 791, 768, 793), correct
//! checksums (RFC 1071) and nanosecond timestamps in simulated time.
//!
//! Link type 228 (`LINKTYPE_IPV4`): each record is a bare IPv4 datagram, since our
//! 802.11 frames carry no byte-level MAC header. Node `i` has address
//! 10.0.0.0 + i + 1 (node 0 is 10.0.0.1). Application payload bytes are zeros.
//! TCP windows above 65535 bytes are clamped (no window-scale option is modelled).
//! Routing control packets (AODV) go out as IP protocol 138 (`manet`) carrying
//! zero bytes of their counted size: their fields are not encoded yet.

use crate::ids::NodeId;
use crate::packet::{IpProto, Packet, TcpHeader, TransportHeader};
use crate::sim::SimTime;
use std::io::{self, Write};

/// pcap magic for nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_IPV4: u32 = 228;

/// IPv4 address of a node.
pub fn node_addr(n: NodeId) -> [u8; 4] {
    (0x0A00_0000u32 + n.0 + 1).to_be_bytes()
}

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
    let len = h.size_bytes() as usize;
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

/// The IPv4 datagram of `pkt` as bytes.
pub fn datagram_bytes(pkt: &Packet) -> Vec<u8> {
    let (src, dst) = (node_addr(pkt.ip.src), node_addr(pkt.ip.dst));
    let mut l4 = match &pkt.transport {
        TransportHeader::Udp(u) => {
            let len = (8 + pkt.payload_bytes) as u16;
            let mut b = Vec::with_capacity(len as usize);
            b.extend_from_slice(&u.src_port.to_be_bytes());
            b.extend_from_slice(&u.dst_port.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&[0, 0]);
            b
        }
        TransportHeader::Tcp(h) => tcp_bytes(h),
        TransportHeader::Routing(m) => vec![0; m.size_bytes() as usize],
    };
    let csum_at = match pkt.transport {
        TransportHeader::Udp(_) => Some(6),
        TransportHeader::Tcp(_) => Some(16),
        TransportHeader::Routing(_) => None,
    };
    l4.resize(l4.len() + pkt.payload_bytes as usize, 0);
    let proto = pkt.ip.proto as u8;
    // Pseudo-header: source, destination, zero, protocol, transport length.
    let mut pseudo = Vec::with_capacity(12);
    pseudo.extend_from_slice(&src);
    pseudo.extend_from_slice(&dst);
    pseudo.extend_from_slice(&[0, proto]);
    pseudo.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    if let Some(at) = csum_at {
        let mut c = checksum(ones_sum(0, &pseudo), &l4);
        if c == 0 && pkt.ip.proto == IpProto::Udp {
            c = 0xffff; // RFC 768: a computed 0 is sent as all ones
        }
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
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

/// A pcap file being written.
pub struct PcapWriter<W: Write> {
    out: W,
    pub packets: u64,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&MAGIC_NS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&65_535u32.to_le_bytes())?; // snaplen
        out.write_all(&LINKTYPE_IPV4.to_le_bytes())?;
        Ok(PcapWriter { out, packets: 0 })
    }

    /// Append `pkt` as seen at `t`.
    pub fn write(&mut self, t: SimTime, pkt: &Packet) -> io::Result<()> {
        let bytes = datagram_bytes(pkt);
        let ns = t.as_nanos();
        self.out.write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&(bytes.len() as u32).to_le_bytes())?;
        self.out.write_all(&(bytes.len() as u32).to_le_bytes())?;
        self.out.write_all(&bytes)?;
        self.packets += 1;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::*;

    fn udp() -> Packet {
        Packet {
            uid: 7,
            ip: IpHeader { src: NodeId(0), dst: NodeId(3), ttl: 32, proto: IpProto::Udp },
            transport: TransportHeader::Udp(UdpHeader { src_port: 5000, dst_port: 5000 }),
            payload_bytes: 11,
            tag: None,
            source_route: None,
        }
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
            flags: TcpFlags { ack: true, ..TcpFlags::default() },
            window: 100_000,
            mss: None,
            sack_permitted: false,
            sack,
            sack_len: 1,
        };
        let p = Packet { transport: TransportHeader::Tcp(h), ip: IpHeader { proto: IpProto::Tcp, ..udp().ip }, payload_bytes: 0, ..udp() };
        let b = datagram_bytes(&p);
        let tcp = &b[20..];
        assert_eq!(tcp.len() as u32, h.size_bytes());
        assert_eq!(tcp[12] >> 4, (h.size_bytes() / 4) as u8, "data offset");
        assert_eq!(tcp[13], 0x10, "ACK flag");
        assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), 65_535, "window clamped");
        assert_eq!(&tcp[20..22], &[5, 10], "SACK option kind and length");
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 4, 0, 6];
        pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
        assert_eq!(ones_sum(ones_sum(0, &pseudo), tcp), 0xffff);
    }

    #[test]
    fn file_header_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(SimTime(1_500_000_123), &udp()).unwrap();
        let b = w.into_inner();
        assert_eq!(&b[..4], &MAGIC_NS.to_le_bytes());
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 228);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 500_000_123);
        assert_eq!(b.len(), 24 + 16 + 39);
    }
}
