//! 802.11 frames as our MAC sends them, for `outputs.pcap = "mac"` (link type 127,
//! `LINKTYPE_IEEE802_11_RADIOTAP`): a radiotap header, then the MAC frame with its
//! FCS (IEEE 802.11-2016 §9.2–9.3, radiotap.org).
//!
//! * Frame control: RTS, CTS, ACK (control, subtypes 11, 12, 13) and DATA (data,
//!   subtype 0) between stations of one IBSS (ToDS = FromDS = 0); the Retry bit
//!   on a data frame the MAC sends again after a missed ACK (control frames
//!   carry none, §9.2.4.1.4).
//! * Duration: the frame's Duration/ID (NAV) in µs, as the ns-2 MAC trace prints it.
//! * Addresses: node `n` is `02:00:` + its IPv4 address (node 0 is
//!   02:00:0a:00:00:01, a locally administered unicast address); broadcast is
//!   ff:ff:ff:ff:ff:ff; data frames carry the IBSS BSSID [`BSSID`] as address 3.
//!   ns-2 (and our air time) counts a four-address data header; the capture shows
//!   the standard three-address one (`[mac] data_header_bytes` is 28 for that).
//! * DATA body: an LLC/SNAP header (RFC 1042) with EtherType IPv4 or ARP, then the
//!   IP datagram exactly as the IP capture renders it ([`super::datagram_bytes`])
//!   or the ARP message (RFC 826). The 8 LLC/SNAP bytes are not simulated (ns-2
//!   sends none either).
//! * Radiotap: flags (FCS at end), rate (control frames and broadcasts at the
//!   basic rate, unicast data at the data rate, as the MAC times them) and a
//!   nominal channel (2412 MHz, CCK): the simulated carrier frequency only
//!   enters propagation and is no 802.11 channel.

use crate::ids::NodeId;
use crate::mac::arp::{ArpMsg, ArpOp};
use crate::mac::{Frame, FrameKind};
use crate::wire::render::pcap_addr;

pub const LINKTYPE_IEEE802_11_RADIOTAP: u32 = 127;

/// The IBSS's BSSID (locally administered, not a node's address).
pub const BSSID: [u8; 6] = [0x02, 0, 0, 0, 0, 0];
pub const BROADCAST: [u8; 6] = [0xff; 6];

/// Frame-control flag bits (second octet).
pub const FC_RETRY: u8 = 0x08;

/// Radiotap: version 0, length 14, present = flags | rate | channel.
const RADIOTAP_PRESENT: u32 = (1 << 1) | (1 << 2) | (1 << 3);
const RADIOTAP_LEN: u16 = 14;
/// Radiotap flags: the frame ends with its FCS.
const RADIOTAP_F_FCS: u8 = 0x10;
const CHANNEL_MHZ: u16 = 2412;
/// Radiotap channel flags: CCK | 2 GHz spectrum.
const CHANNEL_FLAGS: u16 = 0x0020 | 0x0080;

/// Node `n`'s MAC address: `02:00:` + its IPv4 address.
pub fn mac_addr(n: NodeId) -> [u8; 6] {
    let ip = pcap_addr(n);
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

/// The first frame-control octet (protocol version 0) of `kind`.
pub fn fc_type_subtype(kind: FrameKind) -> u8 {
    // (subtype << 4) | (type << 2): control = 1, data = 2.
    match kind {
        FrameKind::Rts => (11 << 4) | (1 << 2),
        FrameKind::Cts => (12 << 4) | (1 << 2),
        FrameKind::Ack => (13 << 4) | (1 << 2),
        FrameKind::Data => 2 << 2,
    }
}

/// The frame's Duration/ID field in µs (whole µs, as the MAC trace prints it;
/// bit 15 stays 0, so a value is at most 32767).
pub fn duration_us(f: &Frame) -> u16 {
    f.nav.as_nanos().div_ceil(1000).min(32_767) as u16
}

/// RFC 826 ARP over 802.11 (hardware type 1, Ethernet addresses): 28 bytes, as
/// ns-2 sizes it. A request does not know the target's hardware address (zeros).
pub fn arp_bytes(m: &ArpMsg) -> Vec<u8> {
    let mut b = Vec::with_capacity(28);
    b.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4]);
    b.extend_from_slice(&(if m.op == ArpOp::Request { 1u16 } else { 2 }).to_be_bytes());
    b.extend_from_slice(&mac_addr(m.sender));
    b.extend_from_slice(&pcap_addr(m.sender));
    match m.op {
        ArpOp::Request => b.extend_from_slice(&[0; 6]),
        ArpOp::Reply => b.extend_from_slice(&mac_addr(m.target)),
    }
    b.extend_from_slice(&pcap_addr(m.target));
    b
}

/// The 802.11 frame `f` (MAC header, body, FCS), without radiotap.
pub fn frame_bytes(f: &Frame) -> Vec<u8> {
    let mut b = Vec::with_capacity(64);
    let retry = f.kind == FrameKind::Data && f.retry;
    b.push(fc_type_subtype(f.kind));
    b.push(if retry { FC_RETRY } else { 0 });
    b.extend_from_slice(&duration_us(f).to_le_bytes());
    let ra = f.dst.map_or(BROADCAST, mac_addr);
    b.extend_from_slice(&ra);
    match f.kind {
        FrameKind::Cts | FrameKind::Ack => {}
        FrameKind::Rts => b.extend_from_slice(&mac_addr(f.src)),
        FrameKind::Data => {
            b.extend_from_slice(&mac_addr(f.src));
            b.extend_from_slice(&BSSID);
            // Sequence control: fragment 0, 12-bit sequence number.
            b.extend_from_slice(&((f.seq & 0x0fff) << 4).to_le_bytes());
            // LLC/SNAP (RFC 1042): DSAP, SSAP, UI, OUI 0, EtherType.
            b.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
            match (&f.pkt, &f.arp) {
                (Some(p), _) => {
                    b.extend_from_slice(&0x0800u16.to_be_bytes());
                    b.extend_from_slice(&super::datagram_bytes(p));
                }
                (None, Some(m)) => {
                    b.extend_from_slice(&0x0806u16.to_be_bytes());
                    b.extend_from_slice(&arp_bytes(m));
                }
                (None, None) => unreachable!("a data frame carries a packet or an ARP message"),
            }
        }
    }
    let fcs = crc32(&b);
    b.extend_from_slice(&fcs.to_le_bytes());
    b
}

/// Radiotap header + frame of `f` sent at `rate_bps`: one pcap record's bytes.
pub fn record_bytes(f: &Frame, rate_bps: f64) -> Vec<u8> {
    let body = frame_bytes(f);
    let mut b = Vec::with_capacity(RADIOTAP_LEN as usize + body.len());
    b.extend_from_slice(&[0, 0]); // version, pad
    b.extend_from_slice(&RADIOTAP_LEN.to_le_bytes());
    b.extend_from_slice(&RADIOTAP_PRESENT.to_le_bytes());
    b.push(RADIOTAP_F_FCS);
    // Rate in 500 kb/s units (1 Mb/s is 2).
    b.push((rate_bps / 500e3).round().clamp(1.0, 255.0) as u8);
    b.extend_from_slice(&CHANNEL_MHZ.to_le_bytes());
    b.extend_from_slice(&CHANNEL_FLAGS.to_le_bytes());
    b.extend_from_slice(&body);
    b
}

/// The rate `f` goes at: unicast data at the data rate, control frames and
/// broadcasts at the basic rate (§9.6; `MacParams::data_airtime`).
pub fn rate_bps(f: &Frame, basic_rate_bps: f64, data_rate_bps: f64) -> f64 {
    if f.kind == FrameKind::Data && f.dst.is_some() {
        data_rate_bps
    } else {
        basic_rate_bps
    }
}

/// CRC-32 (IEEE 802.3 polynomial, reflected), the 802.11 FCS.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = !0u32;
    for &x in bytes {
        c = TABLE[((c ^ x as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimDuration;
    use crate::wire::test_support;
    use std::rc::Rc;

    fn frame(kind: FrameKind) -> Frame {
        Frame {
            kind,
            src: NodeId(1),
            dst: Some(NodeId(2)),
            nav: SimDuration::from_micros(314),
            seq: 0x1234,
            retry: false,
            pkt: None,
            arp: None,
            airtime: SimDuration::ZERO,
        }
    }

    fn data(retry: bool) -> Frame {
        Frame {
            retry,
            pkt: Some(Rc::new(test_support::udp(7, 1, 2, 11))),
            ..frame(FrameKind::Data)
        }
    }

    const N1: [u8; 6] = [2, 0, 10, 0, 0, 2];
    const N2: [u8; 6] = [2, 0, 10, 0, 0, 3];

    #[test]
    fn crc32_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    fn assert_fcs(b: &[u8]) {
        let (body, fcs) = b.split_at(b.len() - 4);
        assert_eq!(crc32(body).to_le_bytes(), fcs, "FCS");
    }

    #[test]
    fn control_frames_have_their_type_subtype_duration_and_addresses() {
        let rts = frame_bytes(&frame(FrameKind::Rts));
        assert_eq!(rts.len(), 20, "RTS is 20 bytes with its FCS");
        assert_eq!(rts[0], 0xb4, "control, subtype 11");
        assert_eq!(rts[1], 0, "no flags");
        assert_eq!(u16::from_le_bytes([rts[2], rts[3]]), 314, "duration µs");
        assert_eq!(&rts[4..10], &N2, "receiver");
        assert_eq!(&rts[10..16], &N1, "transmitter");
        assert_fcs(&rts);

        for (kind, fc) in [(FrameKind::Cts, 0xc4), (FrameKind::Ack, 0xd4)] {
            let b = frame_bytes(&frame(kind));
            assert_eq!(b.len(), 14, "{kind:?} is 14 bytes with its FCS");
            assert_eq!(b[0], fc, "{kind:?}");
            assert_eq!(&b[4..10], &N2, "receiver only");
            assert_fcs(&b);
        }
        // The MAC never marks a control frame as a retry (§9.2.4.1.4).
        let again = Frame {
            retry: true,
            ..frame(FrameKind::Rts)
        };
        assert_eq!(frame_bytes(&again)[1], 0);
    }

    #[test]
    fn data_frames_carry_retry_sequence_llc_snap_and_the_ip_datagram() {
        let first = frame_bytes(&data(false));
        let again = frame_bytes(&data(true));
        assert_eq!(first[0], 0x08, "data, subtype 0");
        assert_eq!(
            first[1], 0,
            "first transmission: no retry, ToDS = FromDS = 0"
        );
        assert_eq!(again[1], FC_RETRY, "retransmission");
        assert_eq!(&first[4..10], &N2);
        assert_eq!(&first[10..16], &N1);
        assert_eq!(&first[16..22], &BSSID);
        assert_eq!(
            u16::from_le_bytes([first[22], first[23]]),
            0x234 << 4,
            "12-bit sequence number, fragment 0"
        );
        assert_eq!(&first[24..32], &[0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00]);
        let ip = super::super::datagram_bytes(data(false).pkt.as_ref().unwrap());
        assert_eq!(&first[32..first.len() - 4], &ip[..]);
        assert_eq!(first.len(), 24 + 8 + ip.len() + 4);
        assert_fcs(&first);
        assert_fcs(&again);
        // Everything but the retry bit (and so the FCS) is the same.
        assert_eq!(first[2..first.len() - 4], again[2..again.len() - 4]);
    }

    #[test]
    fn broadcast_arp_goes_to_ff_at_the_basic_rate() {
        let f = Frame {
            dst: None,
            nav: SimDuration::ZERO,
            arp: Some(ArpMsg {
                op: ArpOp::Request,
                sender: NodeId(1),
                target: NodeId(2),
            }),
            ..frame(FrameKind::Data)
        };
        assert_eq!(rate_bps(&f, 1e6, 2e6), 1e6);
        assert_eq!(rate_bps(&data(false), 1e6, 2e6), 2e6);
        assert_eq!(rate_bps(&frame(FrameKind::Ack), 1e6, 2e6), 1e6);
        let r = record_bytes(&f, 1e6);
        assert_eq!(
            &r[..8],
            &[0, 0, 14, 0, 0x0e, 0, 0, 0],
            "radiotap: flags, rate, channel"
        );
        assert_eq!(r[8], 0x10, "FCS at the end");
        assert_eq!(r[9], 2, "1 Mb/s in 500 kb/s units");
        assert_eq!(u16::from_le_bytes([r[10], r[11]]), 2412);
        let b = &r[14..];
        assert_eq!(u16::from_le_bytes([b[2], b[3]]), 0, "no NAV");
        assert_eq!(&b[4..10], &BROADCAST);
        assert_eq!(&b[30..32], &[0x08, 0x06], "EtherType ARP");
        let arp = &b[32..b.len() - 4];
        assert_eq!(arp.len(), 28);
        assert_eq!(&arp[6..8], &[0, 1], "request");
        assert_eq!(&arp[8..14], &N1);
        assert_eq!(&arp[14..18], &[10, 0, 0, 2]);
        assert_eq!(&arp[18..24], &[0; 6], "target hardware address unknown");
        assert_eq!(&arp[24..28], &[10, 0, 0, 3]);
        assert_fcs(b);
    }
}
