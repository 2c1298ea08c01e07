//! Unit tests of the AODV handlers, driven without the simulator: each test
//! feeds messages and timer firings to one node and inspects what it asks for.

use super::*;
use crate::sim::{stream, Component};
use crate::wire::{test_support, DEFAULT_TTL};

/// One node's AODV with an outbox.
struct Node {
    aodv: Aodv,
    actions: Vec<RoutingAction>,
    uid: u64,
    now: SimTime,
}

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// ns-2's constants under RFC 3561's rules (what the tests below the ns-2
/// section check).
fn rfc_rules() -> Params {
    Params {
        max_repair_ttl: 9,
        ..Params::default()
    }
    .with_rfc_rules()
}

impl Node {
    fn new(me: u32) -> Self {
        Self::with(me, rfc_rules())
    }
    fn with(me: u32, p: Params) -> Self {
        Node {
            aodv: Aodv::new(NodeId(me), p, stream(1, me as u64, Component::Routing)),
            actions: Vec::new(),
            uid: 1000,
            now: SimTime::from_secs_f64(1.0),
        }
    }
    fn run(&mut self, f: impl FnOnce(&mut Aodv, &mut RoutingCtx)) -> Vec<RoutingAction> {
        let mut ctx = RoutingCtx {
            now: self.now,
            node: self.aodv.me,
            actions: &mut self.actions,
            next_uid: &mut self.uid,
        };
        f(&mut self.aodv, &mut ctx);
        std::mem::take(&mut self.actions)
    }
    fn route(&mut self, pkt: Packet) -> Vec<RoutingAction> {
        self.run(|a, ctx| a.route(ctx, pkt))
    }
    fn recv(&mut self, msg: AodvMessage, from: u32, ttl: u8) -> Vec<RoutingAction> {
        let pkt = test_support::control(1, from, IP_BROADCAST, ttl, RoutingMessage::Aodv(msg));
        self.run(|a, ctx| a.recv_control(ctx, pkt, NodeId(from)))
    }
    fn fire(&mut self, set: &RoutingAction) -> Vec<RoutingAction> {
        let RoutingAction::SetTimer { at, key, token } = *set else {
            panic!("not a timer: {set:?}")
        };
        self.now = at;
        self.run(|a, ctx| a.timer(ctx, key, token))
    }
}

fn data(src: u32, dst: u32, ttl: u8) -> Packet {
    test_support::relayed_udp(7, src, dst, ttl, 512)
}

fn msg(a: &RoutingAction) -> Option<&AodvMessage> {
    let pkt = match a {
        RoutingAction::Forward { pkt, .. } | RoutingAction::Broadcast { pkt, .. } => pkt,
        _ => return None,
    };
    match &pkt.transport {
        TransportHeader::Routing(RoutingMessage::Aodv(m)) => Some(m),
        _ => None,
    }
}

fn rreqs(actions: &[RoutingAction]) -> Vec<(Rreq, u8)> {
    actions
        .iter()
        .filter_map(|a| match (a, msg(a)) {
            (RoutingAction::Broadcast { pkt, .. }, Some(AodvMessage::Rreq(r))) => {
                Some((*r, pkt.ip.ttl))
            }
            _ => None,
        })
        .collect()
}

fn rreps(actions: &[RoutingAction]) -> Vec<(Rrep, NodeId)> {
    actions
        .iter()
        .filter_map(|a| match (a, msg(a)) {
            (RoutingAction::Forward { next_hop, .. }, Some(AodvMessage::Rrep(r))) => {
                Some((*r, *next_hop))
            }
            _ => None,
        })
        .collect()
}

fn rerrs(actions: &[RoutingAction]) -> Vec<Rerr> {
    actions
        .iter()
        .filter_map(|a| match msg(a) {
            Some(AodvMessage::Rerr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

fn timers(actions: &[RoutingAction]) -> Vec<&RoutingAction> {
    actions
        .iter()
        .filter(|a| matches!(a, RoutingAction::SetTimer { .. }))
        .collect()
}

fn forwards(actions: &[RoutingAction]) -> Vec<(u64, NodeId)> {
    actions
        .iter()
        .filter_map(|a| match a {
            RoutingAction::Forward { pkt, next_hop } if !pkt.is_routing() => {
                Some((pkt.uid, *next_hop))
            }
            _ => None,
        })
        .collect()
}

fn drops(actions: &[RoutingAction]) -> Vec<DropReason> {
    actions
        .iter()
        .filter_map(|a| match a {
            RoutingAction::Drop { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

fn rreq(orig: u32, id: u32, dst: u32, dst_seq: Option<u32>, hop_count: u8) -> AodvMessage {
    AodvMessage::Rreq(Rreq {
        gratuitous: false,
        destination_only: false,
        unknown_seq: dst_seq.is_none(),
        hop_count,
        id,
        dst: NodeId(dst),
        dst_seq: dst_seq.unwrap_or(0),
        originator: NodeId(orig),
        originator_seq: 1,
        timestamp_ns: 0,
    })
}

fn rrep(dst: u32, dst_seq: u32, hop_count: u8, orig: u32) -> AodvMessage {
    AodvMessage::Rrep(Rrep {
        hop_count,
        dst: NodeId(dst),
        dst_seq,
        originator: NodeId(orig),
        lifetime_ns: SimDuration::from_secs_f64(10.0).0,
        timestamp_ns: 0,
    })
}

#[test]
fn first_packet_starts_an_expanding_ring_search_with_backoff_then_gives_up() {
    let mut n = Node::new(0);
    let a = n.route(data(0, 9, DEFAULT_TTL));
    assert!(forwards(&a).is_empty(), "no route yet: the packet waits");
    assert_eq!(n.aodv.buffered(), 1);
    // ns-2 rings: TTL 5, 7, then the diameter (30), 1 + RREQ_RETRIES times.
    // Waits: 2·TTL·30 ms for rings; 1.8 s doubling per network-wide retry, capped at 10 s.
    let expect = [
        (5, ms(300)),
        (7, ms(420)),
        (30, ms(1800)),
        (30, ms(3600)),
        (30, ms(7200)),
        (30, ms(10_000)),
    ];
    let mut a = a;
    let mut ids = Vec::new();
    for (i, (ttl, wait)) in expect.iter().enumerate() {
        let rq = rreqs(&a);
        assert_eq!(rq.len(), 1, "attempt {i}: {a:?}");
        assert_eq!(rq[0].1, *ttl, "attempt {i}: TTL");
        assert!(rq[0].0.unknown_seq);
        ids.push(rq[0].0.id);
        let t = timers(&a);
        let RoutingAction::SetTimer { at, .. } = t[t.len() - 1] else {
            unreachable!()
        };
        assert_eq!(*at - n.now, *wait, "attempt {i}: wait");
        // A second packet meanwhile does not start another discovery.
        if i == 0 {
            let b = n.route(data(0, 9, DEFAULT_TTL));
            assert!(rreqs(&b).is_empty());
        }
        let timer = t[t.len() - 1].clone_timer();
        a = n.fire(&timer);
    }
    ids.dedup();
    assert_eq!(ids.len(), expect.len(), "every request has a new id");
    // Gave up: both buffered packets are dropped as "no route".
    assert!(rreqs(&a).is_empty());
    assert_eq!(drops(&a), vec![DropReason::NoRoute, DropReason::NoRoute]);
    let c = n.aodv.counters().unwrap();
    assert_eq!(
        (c.discoveries, c.discoveries_failed, c.request_retries),
        (1, 1, 5)
    );
    // Hold-down: a new packet waits without a new request until it ends.
    let b = n.route(data(0, 9, DEFAULT_TTL));
    assert!(rreqs(&b).is_empty());
    let hold = timers(&a)[0];
    let c = n.fire(hold);
    assert_eq!(
        rreqs(&c).len(),
        1,
        "after MAX_RREQ_TIMEOUT the waiting packet starts a new discovery"
    );
}

#[test]
fn a_request_is_rebroadcast_once_and_its_duplicates_are_suppressed() {
    let mut n = Node::new(5);
    let a = n.recv(rreq(0, 1, 9, None, 2), 3, 4);
    let fwd = rreqs(&a);
    assert_eq!(fwd.len(), 1);
    assert_eq!(fwd[0].0.hop_count, 3, "hop count incremented");
    assert_eq!(fwd[0].1, 3, "TTL decremented");
    assert!(
        matches!(a.iter().find(|x| matches!(x, RoutingAction::Broadcast { .. })), Some(RoutingAction::Broadcast { delay, .. }) if *delay < ms(10))
    );
    // Reverse route to the originator through the neighbour it came from.
    let r = n.aodv.table().get(NodeId(0)).unwrap();
    assert_eq!((r.next_hop, r.hops, r.seq), (NodeId(3), 3, 1));
    // The same request via another neighbour: nothing sent.
    let b = n.recv(rreq(0, 1, 9, None, 1), 4, 5);
    assert!(rreqs(&b).is_empty());
    assert_eq!(n.aodv.counters().unwrap().duplicate_requests, 1);
    // A request whose TTL is used up is handled but not rebroadcast.
    let c = n.recv(rreq(0, 2, 9, None, 2), 3, 1);
    assert!(rreqs(&c).is_empty());
    // A node ignores its own request echoed back.
    let mut o = Node::new(0);
    assert!(rreqs(&o.recv(rreq(0, 1, 9, None, 1), 3, 4)).is_empty());
}

#[test]
fn the_destination_replies_with_a_fresh_sequence_number() {
    let mut n = Node::new(9);
    let a = n.recv(rreq(0, 1, 9, Some(6), 3), 8, 2);
    let rp = rreps(&a);
    assert_eq!(rp.len(), 1);
    let (r, next) = rp[0];
    assert_eq!(next, NodeId(8), "unicast back along the reverse route");
    assert_eq!(
        (r.hop_count, r.dst, r.originator),
        (0, NodeId(9), NodeId(0))
    );
    assert_eq!(
        r.dst_seq, 6,
        "§6.6.1: at least the number the requester asked for"
    );
    assert_eq!(n.aodv.seq(), 6);
    assert!(rreqs(&a).is_empty(), "the destination does not rebroadcast");
}

#[test]
fn intermediate_nodes_reply_only_with_a_fresh_enough_route() {
    let mut n = Node::new(5);
    // Learn a route to 9 (seq 5, 2 hops via 6) from a reply.
    n.recv(rrep(9, 5, 1, 5), 6, 30);
    assert_eq!(n.aodv.table().get(NodeId(9)).unwrap().hops, 2);
    // A request that wants seq >= 6: our route is too old, forward it.
    let a = n.recv(rreq(0, 1, 9, Some(6), 1), 3, 10);
    assert!(rreps(&a).is_empty());
    assert_eq!(rreqs(&a).len(), 1);
    // A request that accepts seq 5: reply with our route; precursors recorded.
    let b = n.recv(rreq(0, 2, 9, Some(5), 1), 3, 10);
    let rp = rreps(&b);
    assert_eq!(rp.len(), 1);
    assert_eq!(
        (rp[0].0.hop_count, rp[0].0.dst_seq, rp[0].1),
        (2, 5, NodeId(3))
    );
    assert!(rreqs(&b).is_empty());
    assert_eq!(
        n.aodv.table().get(NodeId(9)).unwrap().precursors,
        vec![NodeId(3)]
    );
    assert_eq!(
        n.aodv.table().get(NodeId(0)).unwrap().precursors,
        vec![NodeId(6)]
    );
    // The forwarded request carried the freshest number known on the way.
    let mut m = Node::new(5);
    m.recv(rrep(9, 8, 1, 5), 6, 30);
    let c = m.recv(rreq(0, 1, 9, Some(9), 1), 3, 10);
    assert_eq!(rreqs(&c)[0].0.dst_seq, 9);
    let d = m.recv(rreq(0, 2, 9, None, 1), 3, 10);
    assert!(
        rreps(&d).len() == 1,
        "unknown number: any valid route may answer"
    );
}

#[test]
fn gratuitous_rrep_tells_the_destination_about_the_originator() {
    let mut n = Node::new(5);
    n.recv(rrep(9, 5, 1, 5), 6, 30);
    let mut q = rreq(0, 1, 9, Some(5), 2);
    if let AodvMessage::Rreq(r) = &mut q {
        r.gratuitous = true;
    }
    let a = n.recv(q, 3, 10);
    let rp = rreps(&a);
    assert_eq!(rp.len(), 2);
    let g = rp
        .iter()
        .find(|(r, _)| r.dst == NodeId(0))
        .expect("gratuitous RREP");
    assert_eq!(
        (g.0.originator, g.0.hop_count, g.1),
        (NodeId(9), 3, NodeId(6))
    );
}

#[test]
fn replies_install_routes_release_buffered_packets_and_stale_ones_are_not_forwarded() {
    // Source: a reply ends the discovery and releases the buffer.
    let mut s = Node::new(0);
    s.route(data(0, 9, DEFAULT_TTL));
    s.route(data(0, 9, DEFAULT_TTL));
    let a = s.recv(rrep(9, 3, 3, 0), 1, 20);
    assert_eq!(forwards(&a), vec![(7, NodeId(1)), (7, NodeId(1))]);
    assert_eq!(s.aodv.buffered(), 0);
    let c = s.aodv.counters().unwrap();
    assert_eq!((c.routes_found, c.route_hops_sum), (1, 4));

    // Relay: forwards a reply that updated its route, towards the originator.
    let mut r = Node::new(5);
    r.recv(rreq(0, 1, 9, None, 1), 3, 10); // reverse route to 0 via 3
    let b = r.recv(rrep(9, 4, 1, 0), 6, 20);
    let rp = rreps(&b);
    assert_eq!(rp.len(), 1);
    assert_eq!((rp[0].0.hop_count, rp[0].1), (2, NodeId(3)));
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().precursors,
        vec![NodeId(3)]
    );
    // A stale reply (older number) neither changes the route nor travels on.
    let c = r.recv(rrep(9, 3, 0, 0), 7, 20);
    assert!(rreps(&c).is_empty());
    assert_eq!(r.aodv.table().get(NodeId(9)).unwrap().next_hop, NodeId(6));
}

/// Node 5 forwarding 0 → 9 through next hop 6, with node 3 upstream (a precursor).
fn relay() -> Node {
    let mut r = Node::new(5);
    r.recv(rreq(0, 1, 9, None, 1), 3, 10);
    r.recv(rrep(9, 4, 1, 0), 6, 20);
    r
}

#[test]
fn a_break_near_the_source_invalidates_routes_and_sends_a_rerr_to_precursors() {
    let mut r = relay();
    // The packet has travelled 2 hops (TTL 30) and has 2 to go: no local repair.
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 2), NodeId(6)));
    let e = rerrs(&a);
    assert_eq!(e.len(), 1);
    // §6.11: the neighbour itself and every destination through it, numbers incremented.
    assert_eq!(e[0].unreachable, vec![(NodeId(6), 1), (NodeId(9), 5)]);
    assert!(a
        .iter()
        .any(|x| matches!(x, RoutingAction::ReclaimQueued { next_hop } if *next_hop == NodeId(6))));
    assert_eq!(drops(&a), vec![DropReason::RetryLimit]);
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!((rt.state, rt.seq), (RouteState::Invalid, 5));
    assert_eq!(r.aodv.counters().unwrap().route_breaks, 1);
    // Data for 9 that still arrives: RERR again, drop as "no route".
    let b = r.route(data(0, 9, 29));
    assert_eq!(rerrs(&b).len(), 1);
    assert_eq!(drops(&b), vec![DropReason::NoRoute]);
}

#[test]
fn a_break_near_the_destination_is_repaired_locally() {
    let mut r = relay();
    // Travelled 3 hops, 2 to go: repair.
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    assert!(rerrs(&a).is_empty(), "no RERR while repairing");
    let rq = rreqs(&a);
    assert_eq!(rq.len(), 1);
    assert_eq!(
        rq[0].0.dst_seq, 5,
        "§6.12: asks for a newer number than the broken route's"
    );
    assert_eq!(
        rq[0].1,
        2 + 2,
        "TTL = max(hops to dst, half the hops from the source) + LOCAL_ADD_TTL"
    );
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Repairing
    );
    assert_eq!(r.aodv.buffered(), 1);
    // Packets queued for the dead neighbour come back and wait too.
    let b = r.run(|a, ctx| a.reclaimed(ctx, data(0, 9, 29), NodeId(6)));
    assert!(drops(&b).is_empty());
    // More data meanwhile waits as well.
    r.route(data(0, 9, 29));
    assert_eq!(r.aodv.buffered(), 3);
    // A reply through node 7 repairs the route and releases the packets.
    let c = r.recv(rrep(9, 5, 0, 5), 7, 20);
    assert_eq!(forwards(&c).len(), 3);
    assert!(forwards(&c).iter().all(|(_, nh)| *nh == NodeId(7)));
    assert_eq!(r.aodv.counters().unwrap().local_repairs, 1);

    // Failed repair: the route goes down and the precursors hear of it.
    let mut f = relay();
    let a = f.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    let t = timers(&a);
    let b = f.fire(t[t.len() - 1]);
    assert_eq!(drops(&b), vec![DropReason::NoRoute]);
    assert_eq!(rerrs(&b).len(), 1);
    assert_eq!(f.aodv.counters().unwrap().local_repairs_failed, 1);
}

#[test]
fn rerr_invalidates_routes_through_its_sender_and_propagates_to_precursors() {
    let mut r = relay();
    // From a node that is not our next hop: ignored.
    let a = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 5)],
        }),
        7,
        1,
    );
    assert!(rerrs(&a).is_empty());
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );
    // From our next hop: route down, number taken, passed upstream (jittered).
    let b = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 5), (NodeId(4), 1)],
        }),
        6,
        1,
    );
    let e = rerrs(&b);
    assert_eq!(e.len(), 1);
    assert_eq!(
        e[0].unreachable,
        vec![(NodeId(9), 5)],
        "only destinations we routed through the sender"
    );
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!((rt.state, rt.seq), (RouteState::Invalid, 5));
    // A node without precursors for it (the source) does not propagate.
    let mut s = Node::new(0);
    s.recv(rrep(9, 3, 2, 0), 1, 20);
    let c = s.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 4)],
        }),
        1,
        1,
    );
    assert!(rerrs(&c).is_empty());
    assert!(s.aodv.table().get(NodeId(9)).unwrap().state == RouteState::Invalid);
    // The next packet rediscovers, asking for the number from the RERR.
    let d = s.route(data(0, 9, DEFAULT_TTL));
    assert_eq!(rreqs(&d)[0].0.dst_seq, 4);
    assert_eq!(
        rreqs(&d)[0].1,
        5,
        "TTL from the last hop count (3) + TTL_INCREMENT"
    );
}

#[test]
fn routes_expire_without_use_and_are_refreshed_by_data() {
    let mut s = Node::new(0);
    s.recv(rrep(9, 3, 2, 0), 1, 20); // lifetime 10 s from t = 1 s
    s.now = SimTime::from_secs_f64(9.0);
    assert_eq!(
        forwards(&s.route(data(0, 9, DEFAULT_TTL))),
        vec![(7, NodeId(1))]
    );
    // Used at 9 s: good until 9 + ACTIVE_ROUTE_TIMEOUT = 19 s.
    s.now = SimTime::from_secs_f64(18.9);
    assert_eq!(forwards(&s.route(data(0, 9, DEFAULT_TTL))).len(), 1);
    s.now = SimTime::from_secs_f64(29.0);
    let a = s.route(data(0, 9, DEFAULT_TTL));
    assert!(forwards(&a).is_empty(), "expired after 10 s without use");
    assert_eq!(rreqs(&a)[0].0.dst_seq, 4, "expiry bumps the number");
}

#[test]
fn send_buffer_times_out_and_overflows() {
    let p = Params {
        send_buffer_pkts: 2,
        send_buffer_timeout: SimDuration::from_secs_f64(0.5),
        ..rfc_rules()
    };
    let mut s = Node::with(0, p);
    let a = s.route(data(0, 9, DEFAULT_TTL));
    s.route(data(0, 9, DEFAULT_TTL));
    let c = s.route(data(0, 9, DEFAULT_TTL));
    assert_eq!(drops(&c), vec![DropReason::SendBufferFull]);
    let buffer_timer = timers(&a)
        .into_iter()
        .find(|t| matches!(t, RoutingAction::SetTimer { key, .. } if *key == KEY_BUFFER))
        .unwrap();
    // The two remaining packets were buffered at the same instant: one timer for both.
    let d = s.fire(buffer_timer);
    assert_eq!(
        drops(&d),
        vec![DropReason::SendBufferTimeout, DropReason::SendBufferTimeout]
    );
    assert_eq!(s.aodv.buffered(), 0);
}

#[test]
fn hello_mode_detects_silent_neighbours() {
    let p = Params {
        link_detection: LinkDetection::Hello,
        ..rfc_rules()
    };
    let mut r = Node::with(5, p);
    let start = r.run(|a, ctx| a.start(ctx));
    assert_eq!(timers(&start).len(), 1);
    // Neighbour 6 says hello; a route to 9 goes through it; 3 is upstream.
    r.recv(
        AodvMessage::Hello(Hello {
            node: NodeId(6),
            seq: 2,
            lifetime_ns: SimDuration::from_secs_f64(3.0).0,
        }),
        6,
        1,
    );
    assert_eq!(r.aodv.table().get(NodeId(6)).unwrap().hops, 1);
    r.recv(rreq(0, 1, 9, None, 1), 3, 10);
    r.recv(rrep(9, 4, 1, 0), 6, 20);
    // MAC failures do not count in HELLO mode.
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, 30), NodeId(6)));
    assert_eq!(drops(&a), vec![DropReason::RetryLimit]);
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );
    // Ticks: HELLOs go out; after ALLOWED_HELLO_LOSS · HELLO_INTERVAL of silence the link is lost.
    let mut t = timers(&start)[0].clone_timer();
    let mut saw_rerr = false;
    for _ in 0..6 {
        let out = r.fire(&t);
        assert!(out
            .iter()
            .any(|x| matches!(msg(x), Some(AodvMessage::Hello(h)) if h.node == NodeId(5))));
        saw_rerr |= !rerrs(&out).is_empty();
        t = timers(&out)[timers(&out).len() - 1].clone_timer();
    }
    assert!(saw_rerr);
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Invalid
    );
    assert_eq!(r.aodv.counters().unwrap().route_breaks, 1);
}

trait CloneTimer {
    fn clone_timer(&self) -> RoutingAction;
}

impl CloneTimer for RoutingAction {
    fn clone_timer(&self) -> RoutingAction {
        match self {
            RoutingAction::SetTimer { at, key, token } => RoutingAction::SetTimer {
                at: *at,
                key: *key,
                token: *token,
            },
            a => panic!("not a timer: {a:?}"),
        }
    }
}

// ---- ns-2.35 rules (the default), checked against aodv.cc ---------------------

fn ns2(me: u32) -> Node {
    Node::with(me, Params::default())
}

fn ns2_relay(p: Params) -> Node {
    // Node 5 on 0-3-5-6-…-9: reverse route to 0 via 3, route to 9 via 6 (2 hops).
    let mut r = Node::with(5, p);
    r.recv(rreq(0, 1, 9, None, 1), 3, 10);
    r.recv(rrep(9, 4, 1, 0), 6, 20);
    r
}

fn ns2_purge(n: &mut Node, at_s: f64) -> Vec<RoutingAction> {
    n.now = SimTime::from_secs_f64(at_s);
    n.run(|a, ctx| a.ns2_purge(ctx))
}

fn forwards_after(actions: &[RoutingAction]) -> Vec<(NodeId, SimDuration)> {
    actions
        .iter()
        .filter_map(|a| match a {
            RoutingAction::Forward { pkt, next_hop } if !pkt.is_routing() => {
                Some((*next_hop, SimDuration::ZERO))
            }
            RoutingAction::ForwardAfter {
                next_hop, delay, ..
            } => Some((*next_hop, *delay)),
            _ => None,
        })
        .collect()
}

#[test]
fn ns2_first_request_is_network_wide_and_retries_come_from_packets_or_the_purge_timer() {
    let mut n = ns2(0);
    // aodv_rt_entry starts with rt_last_hop_count = INFINITY2: sendRequest goes
    // straight to NETWORK_DIAMETER (TTL_START is never used).
    let a = n.route(data(0, 9, DEFAULT_TTL));
    let rq = rreqs(&a);
    assert_eq!(rq.len(), 1);
    assert_eq!(rq[0].1, 30);
    assert_eq!(
        rq[0].0.originator_seq, 4,
        "own number starts at 2, +2 per request"
    );
    assert!(
        timers(&a)
            .iter()
            .all(|t| matches!(t, RoutingAction::SetTimer { key, .. } if *key == KEY_BUFFER)),
        "no reply timer: ns-2 polls"
    );
    // Wait 2·30·30 ms = 1.8 s: a packet or a purge before then sends nothing.
    n.now = SimTime::from_secs_f64(2.7);
    assert!(rreqs(&n.route(data(0, 9, DEFAULT_TTL))).is_empty());
    assert!(rreqs(&ns2_purge(&mut n, 2.75)).is_empty());
    // At the deadline (1.0 + 1.8 s) the next packet sends the retry; waits grow
    // linearly with the number of network-wide requests: 3.6, 5.4, 7.2 s.
    n.now = SimTime::from_secs_f64(2.8);
    assert_eq!(
        rreqs(&n.route(data(0, 9, DEFAULT_TTL)))
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
        vec![30]
    );
    assert!(rreqs(&ns2_purge(&mut n, 6.3)).is_empty(), "6.3 < 2.8 + 3.6");
    assert_eq!(rreqs(&ns2_purge(&mut n, 6.5)).len(), 1);
    assert!(
        rreqs(&ns2_purge(&mut n, 11.5)).is_empty(),
        "11.5 < 6.5 + 5.4"
    );
    assert_eq!(rreqs(&ns2_purge(&mut n, 12.0)).len(), 1);
    assert!(
        rreqs(&ns2_purge(&mut n, 19.0)).is_empty(),
        "19.0 < 12.0 + 7.2"
    );
    // RREQ_RETRIES (3) retries used: the buffered packets go, and the
    // destination is left alone for MAX_RREQ_TIMEOUT.
    let g = ns2_purge(&mut n, 19.5);
    assert!(rreqs(&g).is_empty());
    assert_eq!(drops(&g), vec![DropReason::NoRoute; 3]);
    let c = n.aodv.counters().unwrap();
    assert_eq!(
        (c.discoveries, c.discoveries_failed, c.request_retries),
        (1, 1, 3)
    );
    n.now = SimTime::from_secs_f64(20.0);
    assert!(rreqs(&n.route(data(0, 9, DEFAULT_TTL))).is_empty());
    assert!(rreqs(&ns2_purge(&mut n, 29.0)).is_empty());
    assert_eq!(
        rreqs(&ns2_purge(&mut n, 29.5))
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
        vec![30],
        "then a new discovery"
    );
}

#[test]
fn ns2_with_the_first_request_fix_the_expanding_ring_starts_at_ttl_start() {
    let mut n = Node::with(
        0,
        Params {
            first_request_network_wide: false,
            ..Params::default()
        },
    );
    assert_eq!(rreqs(&n.route(data(0, 9, DEFAULT_TTL)))[0].1, 5);
    // 2·5·30 ms = 0.3 s, then TTL 7 (0.42 s), then the diameter.
    assert_eq!(rreqs(&ns2_purge(&mut n, 1.3))[0].1, 7);
    assert!(rreqs(&ns2_purge(&mut n, 1.7)).is_empty());
    assert_eq!(rreqs(&ns2_purge(&mut n, 1.75))[0].1, 30);
}

#[test]
fn ns2_after_a_break_the_ring_starts_above_the_last_hop_count_with_the_measured_per_hop_time() {
    let mut n = ns2(0);
    n.route(data(0, 9, DEFAULT_TTL));
    // The reply to that request (sent at 1.0 s) arrives 40 ms later over 2 hops:
    // 20 ms per hop.
    n.now = SimTime::from_secs_f64(1.04);
    let rp = Rrep {
        hop_count: 1,
        dst: NodeId(9),
        dst_seq: 4,
        originator: NodeId(0),
        lifetime_ns: 10_000_000_000,
        timestamp_ns: SimTime::from_secs_f64(1.0).0,
    };
    let a = n.recv(AodvMessage::Rrep(rp), 1, 20);
    assert_eq!(forwards(&a), vec![(7, NodeId(1))]);
    let c = n.aodv.counters().unwrap();
    assert_eq!((c.routes_found, c.route_hops_sum), (1, 2));
    // The source's MAC gives up on node 1: route down, RERR (ns-2 sends it even
    // though nobody uses us as a precursor), the queue for node 1 emptied.
    n.now = SimTime::from_secs_f64(2.0);
    let b = n.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL), NodeId(1)));
    assert_eq!(rerrs(&b).len(), 1);
    assert_eq!(rerrs(&b)[0].unreachable, vec![(NodeId(9), 5)]);
    assert!(b
        .iter()
        .any(|x| matches!(x, RoutingAction::ReclaimQueued { next_hop } if *next_hop == NodeId(1))));
    assert_eq!(n.aodv.seq(), 6, "nb_delete: own number + 2");
    // Next packet: TTL = last hop count (2) + TTL_INCREMENT, wait 2·4·20 ms.
    let d = n.route(data(0, 9, DEFAULT_TTL));
    assert_eq!(rreqs(&d)[0].1, 4);
    assert!(rreqs(&ns2_purge(&mut n, 2.15)).is_empty());
    assert_eq!(rreqs(&ns2_purge(&mut n, 2.16))[0].1, 6);
}

#[test]
fn ns2_local_repair_keeps_the_route_in_repair_and_brings_it_down_silently_at_twice_the_time() {
    let mut r = ns2_relay(Params::default());
    // Travelled 3 hops, 2 to go: repair. No RERR, the queue for node 6 is left
    // alone, the route keeps its number.
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    assert!(rerrs(&a).is_empty());
    assert!(!a
        .iter()
        .any(|x| matches!(x, RoutingAction::ReclaimQueued { .. })));
    let rq = rreqs(&a);
    assert_eq!(
        (rq[0].0.dst_seq, rq[0].1),
        (4, 30),
        "same number; never down before, so network-wide"
    );
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Repairing
    );
    // The repair timer gets the absolute deadline (1.0 + 1.8 s) as its delay.
    let t = a.iter().find(|x| matches!(x, RoutingAction::SetTimer { key, .. } if key & !0xffff_ffff == KEY_REPAIR)).unwrap();
    let RoutingAction::SetTimer { at, .. } = t else {
        unreachable!()
    };
    assert_eq!(*at, SimTime::from_secs_f64(1.0 + 2.8));
    // Data meanwhile waits; the purge timer re-requests (wait 2 × 1.8 s).
    r.now = SimTime::from_secs_f64(2.0);
    assert!(drops(&r.route(data(0, 9, 29))).is_empty());
    assert_eq!(r.aodv.buffered(), 2);
    assert_eq!(rreqs(&ns2_purge(&mut r, 3.0)).len(), 1);
    // The timer fires: route down without a RERR; the packets still wait.
    let b = r.fire(&RoutingAction::SetTimer {
        at: *at,
        key: KEY_REPAIR | 9,
        token: TimerToken(0),
    });
    assert!(rerrs(&b).is_empty() && drops(&b).is_empty());
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Invalid
    );
    assert_eq!(r.aodv.counters().unwrap().local_repairs_failed, 1);
    // Now forwarded data for 9 gets a RERR and is dropped.
    let c = r.route(data(0, 9, 29));
    assert_eq!((rerrs(&c).len(), drops(&c)), (1, vec![DropReason::NoRoute]));

    // Without the bug the timer is at the deadline itself.
    let mut f = ns2_relay(Params {
        repair_timer_bug: false,
        ..Params::default()
    });
    let a = f.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    assert!(a.iter().any(|x| matches!(x, RoutingAction::SetTimer { at, key, .. } if key & !0xffff_ffff == KEY_REPAIR && *at == SimTime::from_secs_f64(2.8))));
}

#[test]
fn ns2_rerr_with_an_older_number_is_ignored_and_a_valid_one_empties_the_queue_for_its_sender() {
    let mut r = ns2_relay(Params::default());
    let a = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 3)],
        }),
        6,
        1,
    );
    assert!(a.is_empty(), "{a:?}");
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );
    let b = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 5)],
        }),
        6,
        1,
    );
    assert!(b
        .iter()
        .any(|x| matches!(x, RoutingAction::ReclaimQueued { next_hop } if *next_hop == NodeId(6))));
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!(
        (rt.state, rt.seq, rt.last_hops),
        (RouteState::Invalid, 5, Some(2))
    );
    // Everything taken from the queue is dropped (ns-2 DROP_RTR_MAC_CALLBACK).
    let c = r.run(|a, ctx| a.reclaimed(ctx, data(0, 8, 29), NodeId(6)));
    assert_eq!(drops(&c), vec![DropReason::MacCallback]);
}

#[test]
fn ns2_buffered_packets_leave_arp_delay_apart_and_routes_expire_on_the_purge() {
    let mut n = ns2(0);
    for _ in 0..3 {
        n.route(data(0, 9, DEFAULT_TTL));
    }
    let a = n.recv(rrep(9, 4, 1, 0), 1, 20);
    assert_eq!(
        forwards_after(&a),
        vec![(NodeId(1), ms(0)), (NodeId(1), ms(10)), (NodeId(1), ms(20))]
    );
    // Used at 1.0 s: up until 11.0 s; the purge at 11.0 keeps it (not < now),
    // forwarding still works between purges, the purge at 11.5 takes it down.
    ns2_purge(&mut n, 11.0);
    assert_eq!(
        n.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );
    n.now = SimTime::from_secs_f64(11.2);
    assert_eq!(
        forwards(&n.route(data(0, 9, DEFAULT_TTL))).len(),
        1,
        "lifetime only checked by the purge"
    );
    ns2_purge(&mut n, 21.5);
    let rt = n.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!((rt.state, rt.seq), (RouteState::Invalid, 5));
}

#[test]
fn ns2_destination_always_takes_a_new_even_number_for_a_reply() {
    let mut d = ns2(9);
    let a = d.recv(rreq(0, 1, 9, Some(6), 1), 1, 10);
    assert_eq!(rreps(&a)[0].0.dst_seq, 8, "max(2, 6) + 1, made even");
    let b = d.recv(rreq(0, 2, 9, None, 1), 1, 10);
    assert_eq!(rreps(&b)[0].0.dst_seq, 10);
}

#[test]
fn ns2_a_route_under_repair_refuses_replies_with_its_number_and_as_many_hops() {
    // ns-2 `recvReply` takes a reply if rt_seqno < rp_dst_seqno, or equal and
    // rt_hops > rp_hop_count; a route in RTF_IN_REPAIR keeps its rt_hops.
    let mut r = ns2_relay(Params::default());
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    assert_eq!(
        rreqs(&a)[0].0.dst_seq,
        4,
        "the repair asks with the route's own number"
    );
    // Node 6 answers from its route (number 4, 2 hops from us, as before) and
    // node 3, whose route runs through us, too (number 4, 4 hops): both refused.
    let b = r.recv(rrep(9, 4, 1, 5), 6, 30);
    let c = r.recv(rrep(9, 4, 3, 5), 3, 30);
    assert!(forwards_after(&b).is_empty() && forwards_after(&c).is_empty());
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!(
        (rt.state, rt.hops, rt.next_hop),
        (RouteState::Repairing, 2, NodeId(6))
    );
    assert_eq!(r.aodv.buffered(), 1);
    // Only a newer number (here from the destination) repairs it and releases
    // the packet.
    let d = r.recv(rrep(9, 6, 1, 5), 6, 30);
    assert_eq!(forwards_after(&d), vec![(NodeId(6), ms(0))]);
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );

    // Once the repair timer has taken the route down (hop count INFINITY2), a
    // reply with the same number and any hop count is taken.
    let mut f = ns2_relay(Params::default());
    let a = f.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    let t = a.iter().find(|x| matches!(x, RoutingAction::SetTimer { key, .. } if key & !0xffff_ffff == KEY_REPAIR)).unwrap();
    f.fire(&t.clone_timer());
    assert_eq!(
        f.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Invalid
    );
    f.recv(rrep(9, 4, 3, 5), 3, 30);
    let rt = f.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!(
        (rt.state, rt.hops, rt.next_hop),
        (RouteState::Valid, 4, NodeId(3))
    );
}

#[test]
fn ns2_precursors_survive_a_route_going_down_and_are_emptied_when_a_rerr_is_passed_on() {
    let mut r = ns2_relay(Params::default());
    // Forwarding the reply made node 3 a precursor of the route to 9.
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().precursors,
        vec![NodeId(3)]
    );
    // A break nearer the source (travelled 1 hop, 2 to go): no repair, the route
    // goes down with number 5 (rt_down keeps the precursor list).
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 1), NodeId(6)));
    assert_eq!(rerrs(&a).len(), 1);
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!(
        (rt.state, rt.seq, rt.precursors.clone()),
        (RouteState::Invalid, 5, vec![NodeId(3)])
    );
    // Node 9's own request, heard from 6, brings the route back (rt_update
    // leaves the list alone).
    let AodvMessage::Rreq(mut q) = rreq(9, 1, 0, None, 1) else {
        unreachable!()
    };
    q.originator_seq = 8;
    r.recv(AodvMessage::Rreq(q), 6, 30);
    let rt = r.aodv.table().get(NodeId(9)).unwrap();
    assert_eq!(
        (rt.state, rt.seq, rt.precursors.clone()),
        (RouteState::Valid, 8, vec![NodeId(3)])
    );
    // A RERR from 6 for it is therefore passed on, and the list emptied (pc_delete).
    let c = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 9)],
        }),
        6,
        1,
    );
    assert_eq!(
        rerrs(&c)
            .iter()
            .map(|e| e.unreachable.clone())
            .collect::<Vec<_>>(),
        vec![vec![(NodeId(9), 9)]]
    );
    assert!(r.aodv.table().get(NodeId(9)).unwrap().precursors.is_empty());
}

#[test]
fn ns2_a_reply_gives_the_route_exactly_its_lifetime() {
    let mut n = ns2(0);
    n.route(data(0, 9, DEFAULT_TTL));
    n.recv(rrep(9, 4, 1, 0), 1, 20); // the buffered packet leaves: up until 11 s
    assert_eq!(
        n.aodv.table().get(NodeId(9)).unwrap().expires,
        SimTime::from_secs_f64(11.0)
    );
    // ns-2 `rt_update(.., CURRENT_TIME + rp_lifetime)`: a newer reply with a
    // 3 s lifetime shortens it.
    n.now = SimTime::from_secs_f64(2.0);
    let rp = Rrep {
        hop_count: 1,
        dst: NodeId(9),
        dst_seq: 6,
        originator: NodeId(0),
        lifetime_ns: SimDuration::from_secs_f64(3.0).0,
        timestamp_ns: 0,
    };
    n.recv(AodvMessage::Rrep(rp), 1, 20);
    assert_eq!(
        n.aodv.table().get(NodeId(9)).unwrap().expires,
        SimTime::from_secs_f64(5.0)
    );
}

#[test]
fn ns2_with_the_new_number_switch_a_repair_request_passes_the_neighbours_and_the_destination_repairs_it(
) {
    let mut r = ns2_relay(Params {
        local_repair_new_seq: true,
        ..Params::default()
    });
    let a = r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    let (q, _) = rreqs(&a)[0];
    assert_eq!(q.dst_seq, 5, "number + 1 (RFC §6.12)");
    // Node 6 still holds number 4: it cannot answer and passes the request on.
    let mut six = Node::with(6, Params::default());
    six.recv(rrep(9, 4, 0, 0), 9, 20);
    let b = six.recv(AodvMessage::Rreq(q), 5, 29);
    assert!(rreps(&b).is_empty());
    assert_eq!(rreqs(&b).len(), 1);
    // The destination's reply (max(own, 5) + 1, even: 6) repairs the route.
    let c = r.recv(rrep(9, 6, 1, 5), 6, 30);
    assert_eq!(forwards_after(&c), vec![(NodeId(6), ms(0))]);
}

#[test]
fn ns2_a_request_whose_ttl_is_used_up_is_dropped_as_ttl() {
    // ns-2 `recv` decrements the TTL, `recvRequest` rewrites the request for
    // forwarding, and `forward` drops it with DROP_RTR_TTL when the TTL is 0.
    let mut n = ns2(4);
    let a = n.recv(rreq(0, 1, 9, None, 3), 3, 1);
    assert!(rreqs(&a).is_empty());
    let dropped: Vec<(u8, u8, NodeId)> = a
        .iter()
        .filter_map(|x| match x {
            RoutingAction::Drop {
                pkt,
                reason: DropReason::TtlExpired,
            } => match &pkt.transport {
                TransportHeader::Routing(RoutingMessage::Aodv(AodvMessage::Rreq(q))) => {
                    Some((pkt.ip.ttl, q.hop_count, pkt.ip.src))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(dropped, vec![(0, 4, NodeId(4))]);
    // With TTL left it is rebroadcast; under the RFC rules the end of the ring is silent.
    assert_eq!(rreqs(&n.recv(rreq(0, 2, 9, None, 3), 3, 2)).len(), 1);
    let mut r = Node::new(4);
    let b = r.recv(rreq(0, 1, 9, None, 3), 3, 1);
    assert!(rreqs(&b).is_empty() && drops(&b).is_empty(), "{b:?}");
}

// ---- ns-2 lifetimes per entry state (aodv.cc recvRequest, recvReply, forward,
// sendRequest, rt_down, rt_purge) ------------------------------------------------

fn rreq_seq(
    orig: u32,
    id: u32,
    dst: u32,
    dst_seq: Option<u32>,
    hop_count: u8,
    orig_seq: u32,
) -> AodvMessage {
    let AodvMessage::Rreq(mut q) = rreq(orig, id, dst, dst_seq, hop_count) else {
        unreachable!()
    };
    q.originator_seq = orig_seq;
    AodvMessage::Rreq(q)
}

fn secs(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

#[test]
fn ns2_a_request_gives_its_reverse_route_max_of_its_lifetime_and_rev_route_life_in_every_state() {
    // aodv.cc recvRequest: rt0->rt_expire = max(rt0->rt_expire, now + REV_ROUTE_LIFE)
    // for any entry, then rt_update(.., max(rt0->rt_expire, now + REV_ROUTE_LIFE))
    // if the request is fresher.
    let mut r = ns2_relay(Params::default());
    let to0 = |r: &Node| r.aodv.table().get(NodeId(0)).unwrap().clone();
    // Forwarding the reply at 1.0 s used the reverse route: up until 11.0 s.
    assert_eq!(to0(&r).expires, secs(11.0));
    // Up, fresher request at 2.0 s: max(11, 2 + 6) = 11 (not 8).
    r.now = secs(2.0);
    r.recv(rreq_seq(0, 2, 8, None, 1, 3), 3, 10);
    assert_eq!((to0(&r).seq, to0(&r).expires), (3, secs(11.0)));
    // Up, fresher request at 6.0 s: max(11, 12) = 12.
    r.now = secs(6.0);
    r.recv(rreq_seq(0, 3, 8, None, 1, 5), 3, 10);
    assert_eq!(to0(&r).expires, secs(12.0));
    // Up, not fresher (same number, more hops) at 6.5 s: the route is kept but
    // its lifetime still moves to max(12, 12.5).
    r.now = secs(6.5);
    r.recv(rreq_seq(0, 4, 8, None, 3, 5), 4, 10);
    let rt = to0(&r);
    assert_eq!(
        (rt.state, rt.hops, rt.next_hop, rt.expires),
        (RouteState::Valid, 2, NodeId(3), secs(12.5))
    );
    // Down (a RERR from 3 with number 6): rt_down sets rt_expire = 0.
    r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(0), 6)],
        }),
        3,
        1,
    );
    let rt = to0(&r);
    assert_eq!((rt.state, rt.expires), (RouteState::Invalid, SimTime::ZERO));
    // Down, not fresher (older number): stays down with rt_expire = now + 6.
    r.now = secs(7.0);
    r.recv(rreq_seq(0, 5, 8, None, 1, 5), 3, 10);
    let rt = to0(&r);
    assert_eq!((rt.state, rt.expires), (RouteState::Invalid, secs(13.0)));
    // Down, fresher at 8.0 s: up with max(13, 14) = 14.
    r.now = secs(8.0);
    r.recv(rreq_seq(0, 6, 8, None, 1, 8), 3, 10);
    let rt = to0(&r);
    assert_eq!(
        (rt.state, rt.seq, rt.expires),
        (RouteState::Valid, 8, secs(14.0))
    );
}

#[test]
fn ns2_a_route_in_repair_has_lifetime_zero_and_its_replies_advertise_the_wrapped_difference() {
    // aodv.cc: local_rt_repair -> sendRequest sets rt_expire = 0; an
    // intermediate reply carries (u_int32_t)(rt_expire - now), which for
    // 0 - 1.25 is 2^32 - 1 s on ns-2.35's x86-64 build; a request from the
    // destination then sets max(0, now + REV_ROUTE_LIFE).
    let mut r = ns2_relay(Params::default());
    let to9 = |r: &Node| r.aodv.table().get(NodeId(9)).unwrap().clone();
    assert_eq!(to9(&r).expires, secs(11.0));
    r.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    assert_eq!(
        (to9(&r).state, to9(&r).expires),
        (RouteState::Repairing, SimTime::ZERO)
    );
    // Node 0 asks for 9 again (same numbers): we answer from the route in repair.
    r.now = secs(1.25);
    let a = r.recv(rreq(0, 2, 9, Some(4), 1), 3, 10);
    let rp = rreps(&a);
    assert_eq!(rp.len(), 1);
    assert_eq!(
        (rp[0].0.dst_seq, rp[0].0.hop_count, rp[0].0.lifetime_ns),
        (4, 2, 4_294_967_295 * 1_000_000_000)
    );
    // A request from 9 that is not fresher (its number 4, as many hops): the
    // route stays in repair, rt_expire = max(0, 1.5 + 6).
    r.now = secs(1.5);
    r.recv(rreq_seq(9, 1, 0, None, 1, 4), 6, 10);
    assert_eq!(
        (to9(&r).state, to9(&r).expires),
        (RouteState::Repairing, secs(7.5))
    );
    // A reply that is not fresher changes nothing (recvReply suppresses it).
    r.recv(rrep(9, 4, 1, 5), 6, 30);
    assert_eq!(
        (to9(&r).state, to9(&r).expires),
        (RouteState::Repairing, secs(7.5))
    );
    // The next reply from the route in repair: floor(7.5 - 2.0) = 5 s.
    r.now = secs(2.0);
    let b = r.recv(rreq(0, 3, 9, Some(4), 1), 3, 10);
    assert_eq!(rreps(&b)[0].0.lifetime_ns, 5_000_000_000);
    // Without the bug the negative difference gives 0.
    let mut f = ns2_relay(Params {
        reply_lifetime_wraps: false,
        ..Params::default()
    });
    f.run(|a, ctx| a.tx_failed(ctx, data(0, 9, DEFAULT_TTL - 3), NodeId(6)));
    f.now = secs(1.25);
    assert_eq!(
        rreps(&f.recv(rreq(0, 2, 9, Some(4), 1), 3, 10))[0]
            .0
            .lifetime_ns,
        0
    );
}

#[test]
fn ns2_forwarding_sets_the_lifetime_to_exactly_active_route_timeout() {
    // aodv.cc forward(): rt_expire = now + ACTIVE_ROUTE_TIMEOUT on the route
    // used, even if it had a later one (here the wrapped reply lifetime).
    let mut n = ns2(0);
    n.route(data(0, 9, DEFAULT_TTL));
    let long = Rrep {
        hop_count: 1,
        dst: NodeId(9),
        dst_seq: 4,
        originator: NodeId(0),
        lifetime_ns: 4_294_967_295 * 1_000_000_000,
        timestamp_ns: 0,
    };
    let mut m = ns2(0);
    // Without a buffered packet, the route keeps the advertised lifetime...
    m.recv(AodvMessage::Rrep(long), 1, 20);
    assert_eq!(
        m.aodv.table().get(NodeId(9)).unwrap().expires,
        secs(1.0 + 4_294_967_295.0)
    );
    // ...and the purge timer does not take it down.
    ns2_purge(&mut m, 100.0);
    assert_eq!(
        m.aodv.table().get(NodeId(9)).unwrap().state,
        RouteState::Valid
    );
    // Data forwarded on it at 100 s: exactly 110 s.
    m.now = secs(100.0);
    m.route(data(0, 9, DEFAULT_TTL));
    assert_eq!(m.aodv.table().get(NodeId(9)).unwrap().expires, secs(110.0));
    // The buffered packet released by the reply does the same at once.
    n.recv(AodvMessage::Rrep(long), 1, 20);
    assert_eq!(n.aodv.table().get(NodeId(9)).unwrap().expires, secs(11.0));
    // A reply forwarded back over a reverse route sets that route to now + 10 too.
    let mut r = ns2_relay(Params::default());
    r.now = secs(1.5);
    r.recv(rreq_seq(0, 2, 8, None, 1, 3), 3, 10);
    assert_eq!(
        r.aodv.table().get(NodeId(0)).unwrap().expires,
        secs(11.0),
        "max(11, 7.5)"
    );
    r.now = secs(1.6);
    r.recv(rrep(8, 4, 1, 0), 7, 20);
    assert_eq!(r.aodv.table().get(NodeId(0)).unwrap().expires, secs(11.6));
}

#[test]
fn ns2_expired_routes_go_down_on_the_purge_keep_their_precursors_and_are_never_deleted() {
    // aodv.cc rt_purge: an up route with rt_expire < now gets rt_seqno++ and
    // rt_down (precursors kept, rt_expire = 0); no entry is ever deleted
    // (rt_delete is never called: no DELETE_PERIOD).
    let mut r = ns2_relay(Params::default());
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().precursors,
        vec![NodeId(3)]
    );
    let n = r.aodv.table().len();
    ns2_purge(&mut r, 11.5);
    let rt = r.aodv.table().get(NodeId(9)).unwrap().clone();
    assert_eq!(
        (rt.state, rt.seq, rt.expires, rt.precursors.clone()),
        (RouteState::Invalid, 5, SimTime::ZERO, vec![NodeId(3)])
    );
    // Long after any RFC DELETE_PERIOD the entries are still there, down.
    ns2_purge(&mut r, 500.0);
    assert_eq!(r.aodv.table().len(), n);
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().seq,
        5,
        "down routes are not bumped again"
    );
    // A request from 9 brings the route up with its old precursors, so a
    // RERR for it is passed on to node 3.
    r.now = secs(500.0);
    r.recv(rreq_seq(9, 1, 0, None, 1, 6), 6, 10);
    let rt = r.aodv.table().get(NodeId(9)).unwrap().clone();
    assert_eq!(
        (rt.state, rt.expires, rt.precursors.clone()),
        (RouteState::Valid, secs(506.0), vec![NodeId(3)])
    );
    let c = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(9), 7)],
        }),
        6,
        1,
    );
    assert_eq!(rerrs(&c).len(), 1);
}

// ---- a whole local repair as ns-2.35 ran it ------------------------------------

/// Issue 10 (AODV route waits of TCP ACKs): node 3 of a 9-node chain (0 … 8,
/// 200 m apart) forwards CBR 8 → 0 when node 2 leaves at 20 s (ns-2.35 run of
/// that scenario, seed 3: the times below are its trace's, node 3's local
/// repair starting at 21.544624 s). The ACKs of the long-chain TCP runs wait at
/// node 3 through exactly this sequence: one network-wide repair request with
/// the route's own number, the neighbour's same-number reply refused, retries
/// only on the 0.5 s purge ticks once 1.8, 3.6 and 5.4 s have passed, the
/// buffered packets dropped on the tick after 7.2 s, and the repair timer
/// (absolute deadline taken as a delay) taking the route down at
/// 2 · 21.544624 + 1.8 s, after which the next packet gets a RERR.
#[test]
fn ns2_a_relay_repairs_and_gives_up_as_in_an_ns2_trace() {
    let mut n = ns2(3);
    // Node 0's request (own number 4) over 2 hops via 2: route to 0, 3 hops;
    // node 8's reply via 4: route to 8, 5 hops.
    n.recv(rreq_seq(0, 1, 8, None, 2, 4), 2, 28);
    n.recv(rrep(8, 2, 4, 0), 4, 26);
    n.now = secs(21.5);
    assert_eq!(
        forwards(&n.route(data(8, 0, DEFAULT_TTL - 4))),
        vec![(7, NodeId(2))]
    );
    // The MAC gives up on node 2 for a packet that travelled 5 hops (> 3 to go).
    n.now = secs(21.544624);
    let a = n.run(|a, ctx| a.tx_failed(ctx, data(8, 0, DEFAULT_TTL - 5), NodeId(2)));
    let rq = rreqs(&a);
    assert_eq!(
        (rq.len(), rq[0].1, rq[0].0.dst, rq[0].0.dst_seq, rq[0].0.id),
        (1, 30, NodeId(0), 4, 1)
    );
    assert!(rerrs(&a).is_empty() && drops(&a).is_empty());
    let repair_at = a
        .iter()
        .find_map(|x| match x {
            RoutingAction::SetTimer { at, key, .. } if key & !0xffff_ffff == KEY_REPAIR => {
                Some(*at)
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(repair_at, SimTime(2 * secs(21.544624).0 + secs(1.8).0));
    // Node 4 answers from its route through us (number 4, 5 hops): refused.
    n.now = secs(21.547678);
    assert!(forwards_after(&n.recv(rrep(0, 4, 4, 3), 4, 30)).is_empty());
    // The purge ticks from 22.0 to 44.5 s: requests at 23.5, 27.5 and 33.0 s
    // (ns-2's trace: ids 2, 3, 4), the buffered packets dropped at 40.5 s.
    // Packets arriving meanwhile (10 ms after some ticks) wait, without
    // requests of their own.
    let mut buffered = 1;
    let mut sent = Vec::new();
    let mut dropped = Vec::new();
    for k in 0..=45 {
        let t = 22.0 + 0.5 * k as f64;
        let p = ns2_purge(&mut n, t);
        sent.extend(rreqs(&p).iter().map(|(q, ttl)| (t, q.id, *ttl, q.dst_seq)));
        if !drops(&p).is_empty() {
            dropped.push((t, drops(&p)));
        }
        if [22.0, 25.0, 30.0, 35.0].contains(&t) {
            n.now = secs(t + 0.01);
            let b = n.route(data(8, 0, DEFAULT_TTL - 4));
            assert!(rreqs(&b).is_empty() && drops(&b).is_empty() && forwards_after(&b).is_empty());
            buffered += 1;
        }
    }
    assert_eq!(
        sent,
        vec![(23.5, 2, 30, 4), (27.5, 3, 30, 4), (33.0, 4, 30, 4)]
    );
    assert_eq!(dropped, vec![(40.5, vec![DropReason::NoRoute; buffered])]);
    assert_eq!(
        n.aodv.table().get(NodeId(0)).unwrap().state,
        RouteState::Repairing
    );
    // The repair timer: down, silently.
    let c = n.fire(&RoutingAction::SetTimer {
        at: repair_at,
        key: KEY_REPAIR,
        token: TimerToken(0),
    });
    assert!(rerrs(&c).is_empty() && drops(&c).is_empty());
    assert_eq!(
        n.aodv.table().get(NodeId(0)).unwrap().state,
        RouteState::Invalid
    );
    // ns-2: the next packet, at 44.910346 s, is dropped (NRTE) with a RERR.
    n.now = secs(44.910346);
    let d = n.route(data(8, 0, DEFAULT_TTL - 4));
    assert_eq!(drops(&d), vec![DropReason::NoRoute]);
    assert_eq!(
        rerrs(&d)
            .iter()
            .map(|e| e.unreachable.clone())
            .collect::<Vec<_>>(),
        vec![vec![(NodeId(0), 4)]]
    );
}

#[test]
fn ns2_a_forwarded_reply_adds_a_precursor_to_its_destination_route_only() {
    // ns-2 `recvReply` (aodv.cc:924): `rt->pc_insert(rt0->rt_nexthop)` for the
    // route to the reply's destination, nothing for the reverse route (rt0).
    // Node 5 relays node 9's reply to node 0's request: route to 9 gets 3.
    let mut r = ns2_relay(Params::default());
    assert_eq!(
        r.aodv.table().get(NodeId(9)).unwrap().precursors,
        vec![NodeId(3)]
    );
    assert!(r.aodv.table().get(NodeId(0)).unwrap().precursors.is_empty());
    // So a RERR from 3 breaking the route to 0 downs it silently (no RERR to 6),
    // and node 9's next packet for 0 is dropped here with a RERR (rt_resolve).
    let a = r.recv(
        AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(0), 3)],
        }),
        3,
        1,
    );
    assert_eq!(
        r.aodv.table().get(NodeId(0)).unwrap().state,
        RouteState::Invalid
    );
    assert!(rerrs(&a).is_empty());
    let b = r.route(data(9, 0, DEFAULT_TTL - 2));
    assert_eq!((rerrs(&b).len(), drops(&b)), (1, vec![DropReason::NoRoute]));
    // RFC rules: the reverse route records the reply's sender (6) and the RERR is passed on.
    let mut q = Node::with(5, Params::default().with_rfc_rules());
    q.recv(rreq(0, 1, 9, None, 1), 3, 10);
    q.recv(rrep(9, 4, 1, 0), 6, 20);
    assert_eq!(
        q.aodv.table().get(NodeId(0)).unwrap().precursors,
        vec![NodeId(6)]
    );
}

#[test]
fn ns2_a_reply_carries_no_link_failure_callback_data_does() {
    // ns-2 sets `xmit_failure_` only in `rt_resolve` (aodv.cc:446), i.e. on data:
    // a reply the MAC gives up ends there (`RET`), it never reaches `rt_ll_failed`.
    let reply = |rules: Params| {
        let mut n = Node::with(5, rules);
        let mut pkt = None;
        n.run(|a, ctx| pkt = Some(a.control(ctx, NodeId(3), 1, rrep(1, 9, 4, 0))));
        (
            n.aodv.failure_callback(&pkt.unwrap()),
            n.aodv.failure_callback(&data(0, 9, 30)),
        )
    };
    assert_eq!(reply(Params::default()), (false, true));
    // RFC rules hand every packet back (AODV then drops a control packet as `RET`).
    assert_eq!(reply(rfc_rules()), (true, true));
}

#[test]
fn ns2_data_leaves_its_source_with_ttl_30_and_a_relay_drops_it_on_its_30th_hop() {
    // ns-2 `recv` (aodv.cc:580–603): a unicast packet it originates gets TTL
    // NETWORK_DIAMETER = 30; each relay tests for a loop, then `--ttl == 0` drops
    // it (DROP_RTR_TTL), so the 29th relay forwards it and the 30th drops it.
    let sent_ttl = |p: Params| {
        let mut o = ns2_relay(p);
        let a = o.route(data(5, 9, DEFAULT_TTL));
        a.iter()
            .find_map(|x| match x {
                RoutingAction::Forward {
                    pkt,
                    next_hop: NodeId(6),
                } if !pkt.is_routing() => Some(pkt.ip.ttl),
                _ => None,
            })
            .expect("forwarded on the route")
    };
    assert_eq!(sent_ttl(Params::default()), 30);
    // The RFC rules keep the IP default.
    assert_eq!(sent_ttl(rfc_rules()), DEFAULT_TTL);
    // The world's forwarding step (`IpHeader::hop`, then a drop at 0): 29 relays
    // leave 1, the 30th leaves 0.
    let mut ip = IpHeader::new(NodeId(0), NodeId(9), 30, IpProto::Udp);
    assert_eq!((0..29).map(|_| ip.hop()).last(), Some(1));
    assert_eq!((ip.hop(), ip.forwards()), (0, 30));
    // The loop test comes first: our own packet back on its 30th hop (TTL 0,
    // which the world hands to routing at the source) is a loop.
    let mut s = ns2(0);
    let mut back = data(0, 9, 30);
    back.ip.ttl = 0;
    back.ip.forwards = 30;
    assert_eq!(drops(&s.route(back)), vec![DropReason::RouteLoop]);
}
