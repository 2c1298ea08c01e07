//! ns-2 wireless trace lines (CMU `cmu-trace.cc`), in the old format and the new
//! (`-t -Hs -Hd -Ni ...`) format, so that existing awk scripts work unchanged.
//!
//! Old format, field by field (awk `$1`…): event (`s` `r` `f` `D`), time (`%.9f`),
//! `_node_`, level (`AGT` `RTR` `IFQ` `MAC`, width 3), reason (`---` or a drop code,
//! width 4), uid, packet type (`cbr` `tcp` `ack` `RTS` `CTS` `ACK` ...), size, then
//! `[duration dst src type]` in hex, then for IP packets `------- [src:sport dst:dport
//! ttl nexthop]` and the transport part (`[seq] fwd opt` for CBR, `[seq ack] fwd opt`
//! for TCP). Sizes follow ns-2: at AGT a CBR packet is its payload and a TCP segment
//! payload + 40; RTR and IFQ add the 20-byte IP header ns-2's routing agents add; at
//! MAC a data frame is the IP packet plus the 28-byte 802.11 header and FCS.

use crate::ids::NodeId;
use crate::sim::SimTime;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Send,
    Recv,
    Forward,
    Drop,
}

impl Event {
    fn old(self) -> char {
        match self {
            Event::Send => 's',
            Event::Recv => 'r',
            Event::Forward => 'f',
            Event::Drop => 'D',
        }
    }
    fn new(self) -> char {
        match self {
            Event::Drop => 'd',
            e => e.old(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Agt,
    Rtr,
    Ifq,
    Mac,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Agt => "AGT",
            Level::Rtr => "RTR",
            Level::Ifq => "IFQ",
            Level::Mac => "MAC",
        }
    }
}

/// The part of a line after the IP header, by packet type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppPart {
    /// `[seqno] fwd opt` (ns-2 `format_rtp`).
    Cbr { seq: u64 },
    /// `[seqno ackno] fwd opt` in segments (ns-2 `format_tcp`).
    Tcp { seq: i64, ack: i64 },
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpPart {
    pub src: NodeId,
    pub sport: u16,
    pub dst: NodeId,
    pub dport: u16,
    pub ttl: u8,
    /// Next hop (−1 … as ns-2 prints 0 when unset in the old format).
    pub next_hop: Option<NodeId>,
}

/// One trace event.
#[derive(Clone, Debug)]
pub struct Record<'a> {
    pub event: Event,
    pub t: SimTime,
    pub node: NodeId,
    pub position_m: [f64; 2],
    pub level: Level,
    /// ns-2 drop code (`COL`, `RET`, `IFQ`, `NRTE`, `TTL`, ...) or `None` for `---`.
    pub reason: Option<&'a str>,
    pub uid: u64,
    pub ptype: &'a str,
    pub size: u32,
    /// MAC header: duration (µs), receiver, transmitter, ether type (0x800 = IP); zeros above the MAC.
    pub mac: [u32; 4],
    pub ip: Option<IpPart>,
    pub app: AppPart,
    /// Hops travelled so far (ns-2 `num_forwards`).
    pub forwards: u32,
}

/// Append the old-format line (with its newline) to `out`.
pub fn write_old(r: &Record, out: &mut String) {
    let why = r.reason.unwrap_or("---");
    let _ = write!(out, "{} {:.9} _{}_ {:>3} {:>4} {} {} {}", r.event.old(), r.t.as_secs_f64(), r.node, r.level.name(), why, r.uid, r.ptype, r.size);
    let _ = write!(out, " [{:x} {:x} {:x} {:x}] ", r.mac[0], r.mac[1], r.mac[2], r.mac[3]);
    if let Some(ip) = r.ip {
        let nh = ip.next_hop.map_or(0, |n| n.0);
        let _ = write!(out, "------- [{}:{} {}:{} {} {}] ", ip.src, ip.sport, ip.dst, ip.dport, ip.ttl, nh);
        match r.app {
            AppPart::Cbr { seq } => {
                let _ = write!(out, "[{seq}] {} 0", r.forwards);
            }
            AppPart::Tcp { seq, ack } => {
                let _ = write!(out, "[{seq} {ack}] {} 0", r.forwards);
            }
            AppPart::None => {}
        }
    }
    // ns-2 leaves the trailing space of the last field; awk does not care, we trim it.
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

/// Append the new-format line (with its newline) to `out`.
pub fn write_new(r: &Record, out: &mut String) {
    let next = r.ip.and_then(|ip| ip.next_hop).map_or(-1, |n| n.0 as i64);
    let _ = write!(
        out,
        "{} -t {:.9} -Hs {} -Hd {} -Ni {} -Nx {:.2} -Ny {:.2} -Nz 0.00 -Ne -1.000000 -Nl {:>3} -Nw {} ",
        r.event.new(),
        r.t.as_secs_f64(),
        r.node,
        next,
        r.node,
        r.position_m[0],
        r.position_m[1],
        r.level.name(),
        r.reason.unwrap_or("---")
    );
    let _ = write!(out, "-Ma {:x} -Md {:x} -Ms {:x} -Mt {:x} ", r.mac[0], r.mac[1], r.mac[2], r.mac[3]);
    if let Some(ip) = r.ip {
        let _ = write!(out, "-Is {}.{} -Id {}.{} -It {} -Il {} -If 0 -Ii {} -Iv {} ", ip.src, ip.sport, ip.dst, ip.dport, r.ptype, r.size, r.uid, ip.ttl);
        match r.app {
            AppPart::Cbr { seq } => {
                let _ = write!(out, "-Pn cbr -Pi {seq} -Pf {} -Po 0 ", r.forwards);
            }
            AppPart::Tcp { seq, ack } => {
                let _ = write!(out, "-Pn tcp -Ps {seq} -Pa {ack} -Pf {} -Po 0 ", r.forwards);
            }
            AppPart::None => {}
        }
    }
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cbr_recv() -> Record<'static> {
        Record {
            event: Event::Recv,
            t: SimTime::from_secs_f64(10.5),
            node: NodeId(3),
            position_m: [600.0, 0.0],
            level: Level::Agt,
            reason: None,
            uid: 42,
            ptype: "cbr",
            size: 512,
            mac: [0x13a, 3, 2, 0x800],
            ip: Some(IpPart { src: NodeId(0), sport: 0, dst: NodeId(3), dport: 0, ttl: 29, next_hop: Some(NodeId(3)) }),
            app: AppPart::Cbr { seq: 7 },
            forwards: 3,
        }
    }

    #[test]
    fn old_format_fields_are_where_awk_expects_them() {
        let mut s = String::new();
        write_old(&cbr_recv(), &mut s);
        assert_eq!(s, "r 10.500000000 _3_ AGT  --- 42 cbr 512 [13a 3 2 800] ------- [0:0 3:0 29 3] [7] 3 0\n");
        let f: Vec<&str> = s.split_whitespace().collect();
        assert_eq!((f[0], f[3], f[6], f[7]), ("r", "AGT", "cbr", "512"));
    }

    #[test]
    fn drop_line_carries_the_reason_and_mac_frames_have_no_ip_part() {
        let mut r = cbr_recv();
        r.event = Event::Drop;
        r.level = Level::Mac;
        r.reason = Some("COL");
        r.ptype = "RTS";
        r.size = 44;
        r.ip = None;
        let mut s = String::new();
        write_old(&r, &mut s);
        assert_eq!(s, "D 10.500000000 _3_ MAC  COL 42 RTS 44 [13a 3 2 800]\n");
        r.level = Level::Rtr;
        r.reason = Some("NRTE");
        s.clear();
        write_old(&r, &mut s);
        assert!(s.starts_with("D 10.500000000 _3_ RTR NRTE 42"), "{s}");
    }

    #[test]
    fn new_format_has_the_tagged_fields() {
        let mut s = String::new();
        write_new(&cbr_recv(), &mut s);
        assert_eq!(
            s,
            "r -t 10.500000000 -Hs 3 -Hd 3 -Ni 3 -Nx 600.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- \
             -Ma 13a -Md 3 -Ms 2 -Mt 800 -Is 0.0 -Id 3.0 -It cbr -Il 512 -If 0 -Ii 42 -Iv 29 -Pn cbr -Pi 7 -Pf 3 -Po 0\n"
        );
    }
}
