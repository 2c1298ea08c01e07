//! ns-2 wireless trace lines as ns-2.35's `CMUTrace` writes them (`trace/cmu-trace.cc`),
//! in the old (CMU) format and the new (`-t -Hs -Hd -Ni ...`) format, byte for byte
//! in layout (trailing spaces included), so that existing awk scripts and parsers
//! read our traces as theirs.
//!
//! Old format, field by field (awk `$1`…): event (`s` `r` `f` `D`), time (`%.9f`),
//! `_node_`, level (`AGT` `RTR` `IFQ` `MAC`, width 3), reason (`---` or a drop code,
//! width 4), uid, packet type (`cbr` `tcp` `ack` `AODV` `ARP` `RTS` `CTS` `ACK` ...),
//! size, then the MAC header ` [duration receiver transmitter ethertype] ` in hex,
//! then by packet type: IP packets `------- [src:sport dst:dport ttl nexthop] ` and
//! their transport/routing part (`[seq] fwd opt` CBR, `[seq ack] fwd opt` TCP,
//! `[0x2 hops id [dst dseq] [src sseq]] (REQUEST)` AODV ...); ARP
//! `------- [REQUEST sha/spa tha/tpa]`; nothing more for RTS/CTS/ACK.
//! Broadcast IP addresses print as -1 (`-1:255`, `-Id -1.255`), the MAC broadcast
//! as `ffffffff`. The size is the packet's size at that point of ns-2's stack: the
//! world's hooks (`world/trace.rs`) compute it.

use crate::ids::NodeId;
use crate::sim::SimTime;
use crate::wire::{Ns2Style, WireFormat};
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
    fn tagged(self) -> char {
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

/// ns-2's "no next hop yet" (`hdr_cmn::next_hop_` of a packet no router has handled).
pub const NO_NEXT_HOP: i64 = -2;

/// An IP address as ns-2 prints it: the node id, or -1 for the broadcast address.
pub use crate::wire::render::ns2_addr as ip_addr;

/// The part of a line after the IP header, by packet type.
#[derive(Clone, Copy, Debug)]
pub enum AppPart<'a> {
    /// `[seqno] fwd opt` (ns-2 `format_rtp`).
    Cbr { seq: u64 },
    /// `[seqno ackno] fwd opt` (ns-2 `format_tcp`).
    Tcp { seq: i64, ack: i64 },
    /// A routing protocol's message, which writes its own fields
    /// ([`WireFormat::ns2_trace_fields`]: AODV's `format_aodv`, DSR's
    /// `format_dsr`; nothing for DSDV's `message` packets).
    Routing(&'a dyn WireFormat),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpPart {
    /// Source and destination as ns-2 prints them (-1 = broadcast).
    pub src: i64,
    pub sport: u16,
    pub dst: i64,
    pub dport: u16,
    pub ttl: u8,
}

/// An ARP message (ns-2 `format_arp`): MAC and IP address of sender and target
/// (a request's target MAC address is unknown: 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpPart {
    pub request: bool,
    pub sha: u32,
    pub spa: u32,
    pub tha: u32,
    pub tpa: u32,
}

/// What follows the MAC header.
#[derive(Clone, Copy, Debug)]
pub enum Body<'a> {
    /// An IP packet with its transport or routing part.
    Ip {
        ip: IpPart,
        app: AppPart<'a>,
    },
    Arp(ArpPart),
    /// An 802.11 control frame (RTS, CTS, ACK): the MAC header only.
    None,
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
    /// MAC header: duration (µs), receiver, transmitter, ether type (0x800 IP,
    /// 0x806 ARP); all zero for a packet no MAC has handled yet.
    pub mac: [u32; 4],
    /// ns-2's `next_hop_` (`-Hd`, and the last field of the old format's IP part,
    /// where negative prints as 0): [`NO_NEXT_HOP`] until a router chose one.
    pub next_hop: i64,
    pub body: Body<'a>,
    /// Hops travelled so far (ns-2 `num_forwards`).
    pub forwards: u32,
}

/// Append the old-format line (with its newline) to `out`.
pub fn write_old(r: &Record, out: &mut String) {
    let why = r.reason.unwrap_or("---");
    let _ = write!(
        out,
        "{} {:.9} _{}_ {:>3} {:>4} {} {} {}",
        r.event.old(),
        r.t.as_secs_f64(),
        r.node,
        r.level.name(),
        why,
        r.uid,
        r.ptype,
        r.size
    );
    let _ = write!(
        out,
        " [{:x} {:x} {:x} {:x}] ",
        r.mac[0], r.mac[1], r.mac[2], r.mac[3]
    );
    match r.body {
        Body::None => {}
        Body::Arp(a) => {
            let _ = write!(
                out,
                "------- [{} {}/{} {}/{}]",
                arp_op(a),
                a.sha,
                a.spa,
                a.tha,
                a.tpa
            );
        }
        Body::Ip { ip, app } => {
            let nh = r.next_hop.max(0);
            let _ = write!(
                out,
                "------- [{}:{} {}:{} {} {}] ",
                ip.src, ip.sport, ip.dst, ip.dport, ip.ttl, nh
            );
            match app {
                AppPart::Cbr { seq } => {
                    let _ = write!(out, "[{seq}] {} 0", r.forwards);
                }
                AppPart::Tcp { seq, ack } => {
                    let _ = write!(out, "[{seq} {ack}] {} 0", r.forwards);
                }
                AppPart::Routing(m) => m.ns2_trace_fields(Ns2Style::Old, out),
            }
        }
    }
    out.push('\n');
}

fn arp_op(a: ArpPart) -> &'static str {
    if a.request {
        "REQUEST"
    } else {
        "REPLY"
    }
}

/// Append the new-format line (with its newline) to `out`.
pub fn write_new(r: &Record, out: &mut String) {
    let _ = write!(
        out,
        "{} -t {:.9} -Hs {} -Hd {} -Ni {} -Nx {:.2} -Ny {:.2} -Nz 0.00 -Ne -1.000000 -Nl {:>3} -Nw {} ",
        r.event.tagged(),
        r.t.as_secs_f64(),
        r.node,
        r.next_hop,
        r.node,
        r.position_m[0],
        r.position_m[1],
        r.level.name(),
        r.reason.unwrap_or("---")
    );
    let _ = write!(
        out,
        "-Ma {:x} -Md {:x} -Ms {:x} -Mt {:x} ",
        r.mac[0], r.mac[1], r.mac[2], r.mac[3]
    );
    match r.body {
        Body::None => {}
        Body::Arp(a) => {
            let _ = write!(
                out,
                "-P arp -Po {} -Pms {} -Ps {} -Pmd {} -Pd {} ",
                arp_op(a),
                a.sha,
                a.spa,
                a.tha,
                a.tpa
            );
        }
        Body::Ip { ip, app } => {
            let _ = write!(
                out,
                "-Is {}.{} -Id {}.{} -It {} -Il {} -If 0 -Ii {} -Iv {} ",
                ip.src, ip.sport, ip.dst, ip.dport, r.ptype, r.size, r.uid, ip.ttl
            );
            match app {
                AppPart::Cbr { seq } => {
                    let _ = write!(out, "-Pn cbr -Pi {seq} -Pf {} -Po 0 ", r.forwards);
                }
                AppPart::Tcp { seq, ack } => {
                    let _ = write!(out, "-Pn tcp -Ps {seq} -Pa {ack} -Pf {} -Po 0 ", r.forwards);
                }
                AppPart::Routing(m) => m.ns2_trace_fields(Ns2Style::New, out),
            }
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::aodv::{AodvMessage, Rrep, Rreq};

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
            next_hop: 3,
            body: Body::Ip {
                ip: IpPart {
                    src: 0,
                    sport: 0,
                    dst: 3,
                    dport: 0,
                    ttl: 29,
                },
                app: AppPart::Cbr { seq: 7 },
            },
            forwards: 3,
        }
    }

    #[test]
    fn old_format_fields_are_where_awk_expects_them() {
        let mut s = String::new();
        write_old(&cbr_recv(), &mut s);
        assert_eq!(
            s,
            "r 10.500000000 _3_ AGT  --- 42 cbr 512 [13a 3 2 800] ------- [0:0 3:0 29 3] [7] 3 0\n"
        );
        let f: Vec<&str> = s.split_whitespace().collect();
        assert_eq!((f[0], f[3], f[6], f[7]), ("r", "AGT", "cbr", "512"));
    }

    #[test]
    fn control_frames_end_after_the_mac_header_with_ns2s_trailing_space() {
        let mut r = cbr_recv();
        r.event = Event::Drop;
        r.level = Level::Mac;
        r.reason = Some("COL");
        r.ptype = "RTS";
        r.size = 44;
        r.uid = 0;
        r.mac = [0x58e, 0, 1, 0];
        r.next_hop = NO_NEXT_HOP;
        r.body = Body::None;
        let mut s = String::new();
        write_old(&r, &mut s);
        // ns-2.35, 3-node chain: `D 1.484246227 _0_ MAC  COL 0 RTS 44 [58e 0 1 0] `
        assert_eq!(s, "D 10.500000000 _3_ MAC  COL 0 RTS 44 [58e 0 1 0] \n");
        s.clear();
        write_new(&r, &mut s);
        assert_eq!(s, "d -t 10.500000000 -Hs 3 -Hd -2 -Ni 3 -Nx 600.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl MAC -Nw COL -Ma 58e -Md 0 -Ms 1 -Mt 0 \n");
    }

    #[test]
    fn aodv_lines_carry_ns2s_suffix() {
        // ns-2.35: `s 0.500000000 _0_ RTR  --- 0 AODV 48 [0 0 0 0] ------- [0:255 -1:255 30 0] [0x2 1 1 [2 0] [0 4]] (REQUEST)`
        let mut r = cbr_recv();
        r.event = Event::Send;
        r.level = Level::Rtr;
        r.node = NodeId(0);
        r.position_m = [0.0, 0.0];
        r.t = SimTime::from_secs_f64(0.5);
        r.uid = 0;
        r.ptype = "AODV";
        r.size = 48;
        r.mac = [0; 4];
        r.next_hop = NO_NEXT_HOP;
        // hop counts as ns-2 prints them: manetlab's + 1.
        let req = AodvMessage::Rreq(Rreq {
            gratuitous: false,
            destination_only: false,
            unknown_seq: false,
            hop_count: 0,
            id: 1,
            dst: NodeId(2),
            dst_seq: 0,
            originator: NodeId(0),
            originator_seq: 4,
            timestamp_ns: 0,
        });
        r.body = Body::Ip {
            ip: IpPart {
                src: 0,
                sport: 255,
                dst: -1,
                dport: 255,
                ttl: 30,
            },
            app: AppPart::Routing(&req),
        };
        let mut s = String::new();
        write_old(&r, &mut s);
        assert_eq!(s, "s 0.500000000 _0_ RTR  --- 0 AODV 48 [0 0 0 0] ------- [0:255 -1:255 30 0] [0x2 1 1 [2 0] [0 4]] (REQUEST)\n");
        s.clear();
        write_new(&r, &mut s);
        assert_eq!(
            s,
            "s -t 0.500000000 -Hs 0 -Hd -2 -Ni 0 -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl RTR -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 \
             -Is 0.255 -Id -1.255 -It AODV -Il 48 -If 0 -Ii 0 -Iv 30 -P aodv -Pt 0x2 -Ph 1 -Pb 1 -Pd 2 -Pds 0 -Ps 0 -Pss 4 -Pc REQUEST \n"
        );
        // ns-2.35: `f 0.507946227 _1_ RTR  --- 0 AODV 44 [13a 1 2 800] ------- [2:255 0:255 29 0] [0x4 2 [2 4] 10.000000] (REPLY)`
        r.event = Event::Forward;
        r.node = NodeId(1);
        r.size = 44;
        r.mac = [0x13a, 1, 2, 0x800];
        r.next_hop = 0;
        let rep = AodvMessage::Rrep(Rrep {
            hop_count: 1,
            dst: NodeId(2),
            dst_seq: 4,
            originator: NodeId(0),
            lifetime_ns: 10_000_000_000,
            timestamp_ns: 0,
        });
        r.body = Body::Ip {
            ip: IpPart {
                src: 2,
                sport: 255,
                dst: 0,
                dport: 255,
                ttl: 29,
            },
            app: AppPart::Routing(&rep),
        };
        s.clear();
        write_old(&r, &mut s);
        assert_eq!(s, "f 0.500000000 _1_ RTR  --- 0 AODV 44 [13a 1 2 800] ------- [2:255 0:255 29 0] [0x4 2 [2 4] 10.000000] (REPLY)\n");
        s.clear();
        write_new(&r, &mut s);
        assert!(s.ends_with("-Is 2.255 -Id 0.255 -It AODV -Il 44 -If 0 -Ii 0 -Iv 29 -P aodv -Pt 0x4 -Ph 2 -Pd 2 -Pds 4 -Pl 10.000000 -Pc REPLY \n"), "{s}");
    }

    #[test]
    fn arp_lines_as_ns2_prints_them() {
        // ns-2.35: `s 0.503353560 _2_ MAC  --- 0 ARP 86 [0 ffffffff 2 806] ------- [REQUEST 2/2 0/1]`
        let mut r = cbr_recv();
        r.event = Event::Send;
        r.level = Level::Mac;
        r.node = NodeId(2);
        r.uid = 0;
        r.ptype = "ARP";
        r.size = 86;
        r.mac = [0, u32::MAX, 2, 0x806];
        r.next_hop = NO_NEXT_HOP;
        r.body = Body::Arp(ArpPart {
            request: true,
            sha: 2,
            spa: 2,
            tha: 0,
            tpa: 1,
        });
        let mut s = String::new();
        write_old(&r, &mut s);
        assert_eq!(
            s,
            "s 10.500000000 _2_ MAC  --- 0 ARP 86 [0 ffffffff 2 806] ------- [REQUEST 2/2 0/1]\n"
        );
        s.clear();
        write_new(&r, &mut s);
        assert!(
            s.ends_with(
                "-Ma 0 -Md ffffffff -Ms 2 -Mt 806 -P arp -Po REQUEST -Pms 2 -Ps 2 -Pmd 0 -Pd 1 \n"
            ),
            "{s}"
        );
    }

    #[test]
    fn new_format_has_the_tagged_fields() {
        let mut s = String::new();
        write_new(&cbr_recv(), &mut s);
        assert_eq!(
            s,
            "r -t 10.500000000 -Hs 3 -Hd 3 -Ni 3 -Nx 600.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- \
             -Ma 13a -Md 3 -Ms 2 -Mt 800 -Is 0.0 -Id 3.0 -It cbr -Il 512 -If 0 -Ii 42 -Iv 29 -Pn cbr -Pi 7 -Pf 3 -Po 0 \n"
        );
    }
}
