//! How a protocol's message or per-packet extension renders itself: its size,
//! its part of an ns-2 trace line and its bytes in a pcap file. The trace and
//! pcap writers (`crate::trace`) call these through [`WireFormat`] and never
//! match on a protocol's messages, so a new protocol brings its rendering with
//! its message type (docs/architecture.md).

use crate::ids::NodeId;

/// Which of ns-2's two wireless trace formats a line is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2Style {
    /// The old (CMU) format: bracketed fields in awk columns.
    Old,
    /// The new format: `-P proto -Px value` tagged fields.
    New,
}

/// What follows the IP header (or precedes the transport header, for an
/// extension) in a pcap file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PcapBody {
    /// A UDP datagram from and to `port` with this body (the writer adds the
    /// UDP header and its checksum).
    Udp { port: u16, body: Vec<u8> },
    /// A header of IP protocol `proto`, as bytes.
    Ip { proto: u8, bytes: Vec<u8> },
    /// Not in a capture (an extension whose bytes ns-2 counts elsewhere).
    None,
}

/// A protocol's control message or per-packet extension as it appears on the
/// wire and in traces.
pub trait WireFormat: std::fmt::Debug {
    /// Bytes after the IP header, as ns-2 counts them (what costs air time).
    fn size_bytes(&self) -> u32;
    /// ns-2's packet type name in trace lines (`AODV`, `DSR`, `message`, ...).
    fn ns2_ptype(&self) -> &'static str;
    /// The message's part of an ns-2 trace line, after the IP part (ns-2's
    /// `format_<proto>`); nothing for a protocol ns-2 prints none for.
    fn ns2_trace_fields(&self, _style: Ns2Style, _out: &mut String) {}
    /// The bytes of the message (or extension) in a pcap file: the protocol's
    /// own encoding, so Wireshark's dissectors read it. `ip_src` is the packet's
    /// IP source, `next_header` the IP protocol of what follows an extension.
    fn pcap_bytes(&self, ip_src: NodeId, next_header: u8) -> PcapBody;
    /// ns-2 quirk: the IP destination its trace prints, when not the packet's.
    fn ns2_ip_dst(&self) -> Option<NodeId> {
        None
    }
    /// ns-2 quirk: a forwarder's trace shows the IP source the message had when
    /// received (ns-2 forwards it as received), not the forwarder's own.
    fn ns2_keeps_received_src(&self) -> bool {
        false
    }
    /// ns-2 quirk: whether ns-2's agent sets the `xmit_failure_` callback on
    /// the packets carrying this message (its MAC then hands them back after
    /// the retry limit and traces them without the MAC header).
    fn ns2_calls_back(&self) -> bool {
        true
    }
}

/// An IP address as ns-2 prints it: the node id, or -1 for the broadcast address.
pub fn ns2_addr(n: NodeId) -> i64 {
    if n == super::IP_BROADCAST {
        -1
    } else {
        i64::from(n.0)
    }
}

/// A node's IPv4 address in pcap files: 10.0.0.0 + id + 1 (node 0 is 10.0.0.1),
/// 255.255.255.255 for the broadcast address.
pub fn pcap_addr(n: NodeId) -> [u8; 4] {
    if n == super::IP_BROADCAST {
        return [255; 4];
    }
    0x0A00_0000u32
        .wrapping_add(n.0)
        .wrapping_add(1)
        .to_be_bytes()
}

pub(crate) fn put_addr(b: &mut Vec<u8>, n: NodeId) {
    b.extend_from_slice(&pcap_addr(n));
}

pub(crate) fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}
