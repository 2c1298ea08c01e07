//! The recipe "add a routing protocol with its own messages" (docs/architecture.md),
//! compiled: a minimal protocol message type implements `wire::WireFormat` and
//! the ns-2 trace and pcap writers render it without knowing it. A real
//! protocol puts this in `src/wire/<protocol>.rs` and registers it with one
//! variant and one arm in `src/wire/routing.rs` plus `pub mod <protocol>;` in
//! `src/wire/mod.rs`.

use manetlab_core::ids::NodeId;
use manetlab_core::sim::SimTime;
use manetlab_core::trace::ns2::{self, AppPart, Body, Event, IpPart, Level, Record, NO_NEXT_HOP};
use manetlab_core::wire::render::{ns2_addr, pcap_addr};
use manetlab_core::wire::{Ns2Style, PcapBody, WireFormat};
use std::fmt::Write;

/// A "ping" protocol: one message naming the node it probes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ping {
    target: NodeId,
    seq: u16,
}

/// The UDP port of ping captures (unassigned, as DSDV's and FRN's).
const PING_UDP_PORT: u16 = 65_002;

impl WireFormat for Ping {
    /// 2 B sequence number + 2 B reserved + 4 B address.
    fn size_bytes(&self) -> u32 {
        8
    }

    fn ns2_ptype(&self) -> &'static str {
        "PING"
    }

    fn ns2_trace_fields(&self, style: Ns2Style, out: &mut String) {
        let _ = match style {
            Ns2Style::Old => write!(out, "[{} {}] (PING)", ns2_addr(self.target), self.seq),
            Ns2Style::New => write!(
                out,
                "-P ping -Pt {} -Ps {} ",
                ns2_addr(self.target),
                self.seq
            ),
        };
    }

    fn pcap_bytes(&self, _ip_src: NodeId, _next_header: u8) -> PcapBody {
        let mut body = self.seq.to_be_bytes().to_vec();
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&pcap_addr(self.target));
        PcapBody::Udp {
            port: PING_UDP_PORT,
            body,
        }
    }
}

fn record(app: AppPart<'_>) -> Record<'_> {
    Record {
        event: Event::Send,
        t: SimTime::from_secs_f64(1.0),
        node: NodeId(0),
        position_m: [0.0, 0.0],
        level: Level::Rtr,
        reason: None,
        uid: 5,
        ptype: "PING",
        size: 28,
        mac: [0; 4],
        next_hop: NO_NEXT_HOP,
        body: Body::Ip {
            ip: IpPart {
                src: 0,
                sport: 255,
                dst: -1,
                dport: 255,
                ttl: 1,
            },
            app,
        },
        forwards: 0,
    }
}

#[test]
fn a_new_message_type_renders_through_the_trait() {
    let ping = Ping {
        target: NodeId(3),
        seq: 7,
    };
    let m: &dyn WireFormat = &ping;
    assert_eq!(m.size_bytes(), 8);
    assert_eq!(m.ns2_ptype(), "PING");
    // The defaults: no ns-2 quirks.
    assert_eq!(m.ns2_ip_dst(), None);
    assert!(!m.ns2_keeps_received_src());
    assert!(m.ns2_calls_back());

    let mut old = String::new();
    ns2::write_old(&record(AppPart::Routing(m)), &mut old);
    assert_eq!(
        old,
        "s 1.000000000 _0_ RTR  --- 5 PING 28 [0 0 0 0] ------- [0:255 -1:255 1 0] [3 7] (PING)\n"
    );
    let mut new = String::new();
    ns2::write_new(&record(AppPart::Routing(m)), &mut new);
    assert!(
        new.ends_with("-It PING -Il 28 -If 0 -Ii 5 -Iv 1 -P ping -Pt 3 -Ps 7 \n"),
        "{new}"
    );

    let PcapBody::Udp { port, body } = m.pcap_bytes(NodeId(0), 0) else {
        panic!("a UDP body")
    };
    assert_eq!(port, PING_UDP_PORT);
    assert_eq!(body, vec![0, 7, 0, 0, 10, 0, 0, 4]);
    assert_eq!(body.len() as u32, m.size_bytes());
}
