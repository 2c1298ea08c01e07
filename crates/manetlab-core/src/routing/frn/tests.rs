use super::*;
use crate::mac::frn::{FrnParams, FrnShared};
use crate::sim::stream;
use crate::sim::Component;
use crate::wire::test_support;

/// FRN routing at every node of `links` (undirected), tables converged by
/// exchanging configuration packets directly.
fn converged(n: usize, links: &[(u32, u32)]) -> (Vec<FrnRouting>, FrnHandle) {
    let shared = FrnShared::new(n, FrnParams::default());
    let mut r: Vec<FrnRouting> = (0..n)
        .map(|i| {
            FrnRouting::new(
                NodeId(i as u32),
                Params::default(),
                shared.clone(),
                stream(1, i as u64, Component::Routing),
            )
        })
        .collect();
    let mut uid = 1000;
    for _ in 0..n + 1 {
        for &(a, b) in links {
            for (x, y) in [(a, b), (b, a)] {
                let entries = r[x as usize]
                    .table
                    .iter()
                    .map(|(&d, (h, hops))| (d, *h, hops.clone()))
                    .collect();
                let pkt = control(0, NodeId(x), IP_BROADCAST, FrnMessage::Config { entries });
                let mut actions = Vec::new();
                let mut ctx = RoutingCtx {
                    now: SimTime::ZERO,
                    node: NodeId(y),
                    actions: &mut actions,
                    next_uid: &mut uid,
                };
                r[y as usize].recv_control(&mut ctx, pkt, NodeId(x));
            }
        }
    }
    (r, shared)
}

fn data(src: u32, dst: u32) -> Packet {
    test_support::udp_ns2(7, src, dst, 100).with_tag(test_support::tag(0, 0))
}

/// Route `pkt` at `node` having come from `prev` (as the MAC notes it in the
/// copy's header): the next hop and the header; `pkt` becomes the copy sent on.
fn step(
    r: &mut [FrnRouting],
    node: u32,
    prev: Option<u32>,
    pkt: &mut Packet,
) -> (NodeId, FrnHeader) {
    if let (Some(p), Some(h)) = (prev, pkt.frn.as_mut()) {
        h.prev = Some(NodeId(p));
    }
    let (mut actions, mut uid) = (Vec::new(), 5000);
    let mut ctx = RoutingCtx {
        now: SimTime::ZERO,
        node: NodeId(node),
        actions: &mut actions,
        next_uid: &mut uid,
    };
    r[node as usize].route(&mut ctx, pkt.clone());
    let sent = actions.into_iter().find_map(|a| match a {
        RoutingAction::Forward { next_hop, pkt } => Some((next_hop, pkt)),
        _ => None,
    });
    let (hop, sent) = sent.unwrap_or_else(|| panic!("node {node} did not forward"));
    *pkt = sent;
    (hop, (**pkt.frn.as_ref().expect("an FRN header")).clone())
}

fn fail(shared: &FrnHandle, a: u32, b: u32) {
    shared.borrow_mut().links[a as usize]
        .entry(NodeId(b))
        .or_default()
        .failed = true;
}

#[test]
fn routes_are_classified_forward_sideward_backward() {
    // 0 1 2 over 3 4 5 (grid): towards 2, node 1 has 2 forward; 4 is backward
    // (two hops via 5) with checkpoint 5; 0's only route is through 1.
    let (r, _) = converged(6, &[(0, 1), (1, 2), (3, 4), (4, 5), (0, 3), (1, 4), (2, 5)]);
    let c = r[1].candidates(NodeId(2), None, SimTime::ZERO);
    assert_eq!(c[0], (RouteClass::Forward, NodeId(2), None));
    assert!(
        c.contains(&(RouteClass::Backward, NodeId(4), Some(NodeId(5)))),
        "{c:?}"
    );
    // From 4 towards 2: 1 and 5 forward; 3 is backward (its forward hop 0 ≠ 4).
    let c4 = r[4].candidates(NodeId(2), None, SimTime::ZERO);
    assert_eq!(c4.iter().filter(|c| c.0 == RouteClass::Forward).count(), 2);
    // A sideward route in a ring of 5.
    let (ring, _) = converged(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]);
    // From 0 towards 2 (2 hops via 1): 4 is 2 hops from 2 (4-3-2): a sideward route.
    let c0 = ring[0].candidates(NodeId(2), None, SimTime::ZERO);
    assert_eq!(
        c0,
        vec![
            (RouteClass::Forward, NodeId(1), None),
            (RouteClass::Sideward, NodeId(4), None)
        ]
    );
}

#[test]
fn the_checkpoint_keeps_a_backward_detour_from_bouncing() {
    let (mut r, sh) = converged(6, &[(0, 1), (1, 2), (3, 4), (4, 5), (0, 3), (1, 4), (2, 5)]);
    let mut pkt = data(0, 2);
    let (h0, _) = step(&mut r, 0, None, &mut pkt);
    assert_eq!(h0, NodeId(1));
    fail(&sh, 1, 2);
    let (h1, hdr) = step(&mut r, 1, Some(0), &mut pkt);
    assert_eq!(
        (h1, hdr.checkpoint),
        (NodeId(4), Some(NodeId(5))),
        "backward via 4, checkpoint 5"
    );
    let (h4, hdr) = step(&mut r, 4, Some(1), &mut pkt);
    assert_eq!(
        (h4, hdr.checkpoint),
        (NodeId(5), Some(NodeId(5))),
        "4 goes to the checkpoint (cleared there)"
    );
    // Without the checkpoint 4's first shortest route leads straight back to 1.
    let mut other = test_support::udp_ns2(8, 0, 2, 100).with_tag(test_support::tag(0, 1));
    other.frn = Some(Box::new(FrnHeader {
        expires_slot: 1000,
        prev: Some(NodeId(1)),
        ..FrnHeader::default()
    }));
    let (bounce, _) = step(&mut r, 4, Some(1), &mut other);
    assert_eq!(bounce, NodeId(1), "ping-pong without a checkpoint");
}

#[test]
fn an_erdn_walks_back_to_the_first_node_with_a_detour() {
    // Chain 0-1-2-3 and a longer way round 0-5-6-7-3 (a sideward route of 0's):
    // after 2–3 fails, 2 and 1 have no route left (their other neighbour is
    // where the packet came from, and 0 has no shortest route but through 1).
    let (mut r, sh) = converged(8, &[(0, 1), (1, 2), (2, 3), (0, 5), (5, 6), (6, 7), (7, 3)]);
    let mut pkt = data(0, 3);
    assert_eq!(step(&mut r, 0, None, &mut pkt).0, NodeId(1));
    assert_eq!(step(&mut r, 1, Some(0), &mut pkt).0, NodeId(2));
    fail(&sh, 2, 3);
    let (h, hdr) = step(&mut r, 2, Some(1), &mut pkt);
    assert_eq!(
        (h, hdr.erdn),
        (NodeId(1), true),
        "2 returns it with an ERDN"
    );
    let (h, hdr) = step(&mut r, 1, Some(2), &mut pkt);
    assert_eq!(
        (h, hdr.erdn),
        (NodeId(0), true),
        "1 has no detour either: ERDN on"
    );
    let (h, hdr) = step(&mut r, 0, Some(1), &mut pkt);
    assert_eq!((h, hdr.erdn), (NodeId(5), false), "0 takes its detour");
    assert_eq!(
        r[0].best_class(NodeId(3), SimTime::ZERO),
        Some((RouteClass::Sideward, NodeId(5)))
    );
    assert_eq!((r[2].erdns, r[1].erdns, r[0].erdns), (1, 1, 0));
}

#[test]
fn the_source_without_a_route_waits_and_tells_tcp() {
    let (mut r, sh) = converged(3, &[(0, 1), (1, 2)]);
    fail(&sh, 0, 1);
    let (mut actions, mut uid) = (Vec::new(), 0);
    let mut ctx = RoutingCtx {
        now: SimTime::ZERO,
        node: NodeId(0),
        actions: &mut actions,
        next_uid: &mut uid,
    };
    r[0].route(&mut ctx, data(0, 2));
    assert!(
        matches!(
            actions[..],
            [RoutingAction::Notify(TransportNotice::RouteFailed {
                dst: NodeId(2)
            })]
        ),
        "{actions:?}"
    );
    assert_eq!(r[0].parked.len(), 1);
    sh.borrow_mut().links[0].clear();
    let mut actions = Vec::new();
    let mut ctx = RoutingCtx {
        now: SimTime::ZERO,
        node: NodeId(0),
        actions: &mut actions,
        next_uid: &mut uid,
    };
    r[0].release_parked(&mut ctx);
    assert!(matches!(
        actions[0],
        RoutingAction::Forward {
            next_hop: NodeId(1),
            ..
        }
    ));
    assert!(matches!(
        actions[1],
        RoutingAction::Notify(TransportNotice::RouteReestablished { dst: NodeId(2) })
    ));
}
