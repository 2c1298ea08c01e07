//! DSR over the 802.11 model (MANET routing issue, "Must show"): discovery on
//! static chains and grids, buffered packets, replies from caches, route errors
//! and repair after a relay becomes unreachable, salvaging, no loops,
//! determinism, TCP over a 4-hop chain.

use manetlab_core::metrics::{RoutingSummary, RunResult};
use manetlab_core::sim::{SimDuration, SimTime};
use manetlab_core::{Scenario, Simulator};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn rt(r: &RunResult, n: usize) -> &RoutingSummary {
    r.nodes[n]
        .routing
        .as_ref()
        .expect("DSR nodes report routing counters")
}

fn drops(r: &RunResult, key: &str) -> u64 {
    r.nodes
        .iter()
        .map(|n| n.drops.get(key).copied().unwrap_or(0))
        .sum()
}

fn ctrl_sent_total(r: &RunResult) -> u64 {
    (0..r.nodes.len()).map(|i| rt(r, i).ctrl_sent_pkts()).sum()
}

fn forwarded_total(r: &RunResult) -> u64 {
    r.nodes.iter().map(|n| n.forwarded_packets).sum()
}

fn cbr(src: u32, dst: u32, start_s: f64, interval_s: f64, max_packets: u64) -> String {
    format!(
        "[[flows]]\nkind = \"cbr\"\nsrc = {src}\ndst = {dst}\nstart_s = {start_s}\npacket_size_bytes = 512\ninterval_s = {interval_s}\nmax_packets = {max_packets}\n"
    )
}

/// `rows × columns` grid, 200 m apart (4-neighbour: diagonals are 283 m, beyond the 250 m range).
fn grid(rows: u32, columns: u32, seed: u64, flows: &str, duration_s: f64) -> String {
    format!(
        "seed = {seed}\nduration_s = {duration_s}\n[nodes]\ncount = {}\nplacement = {{ kind = \"grid\", columns = {columns}, spacing_m = 200 }}\n[radio]\n[routing]\nprotocol = \"dsr\"\n{flows}",
        rows * columns
    )
}

#[test]
fn chain_first_packet_triggers_discovery_and_buffered_packets_are_delivered() {
    // 0-1-2-3-4, 200 m apart: 4 hops. Packets every 50 ms from t = 1 s.
    let text = format!(
        "duration_s = 10\n[nodes]\ncount = 5\nplacement = {{ kind = \"chain\", spacing_m = 200 }}\n[radio]\n[routing]\nprotocol = \"dsr\"\n{}",
        cbr(0, 4, 1.0, 0.05, 40)
    );
    let mut sim = Simulator::new(&scenario(&text));
    sim.run_until(SimTime::from_secs_f64(0.999));
    assert_eq!(
        ctrl_sent_total(&sim.results()),
        0,
        "no routing traffic before the first data packet"
    );
    sim.run_to_end();
    let r = sim.results();
    let src = rt(&r, 0);
    assert_eq!(
        src.routing_discoveries, 1,
        "one discovery for the whole flow"
    );
    assert_eq!(src.routing_routes_found, 1);
    assert_eq!(
        src.routing_route_hops_mean,
        Some(4.0),
        "the route has the shortest hop count"
    );
    // Node 1 has no route to 4: the non-propagating request fails, the
    // propagating one 30 ms later finds the route.
    assert_eq!(src.routing_request_retries, 1);
    assert_eq!(src.sent("RREQ"), 2);
    assert_eq!(
        rt(&r, 4).sent("RREP"),
        1,
        "the target replied once (one copy of the request reached it)"
    );
    for relay in 1..=3 {
        assert_eq!(
            rt(&r, relay).sent("RREQ"),
            1,
            "node {relay} rebroadcast the propagating request once"
        );
        assert_eq!(
            rt(&r, relay).sent("RREP"),
            1,
            "node {relay} relayed the reply"
        );
    }
    let f = &r.flows[0];
    assert_eq!(f.tx_packets, 40);
    assert_eq!(
        f.rx_packets,
        40,
        "buffered packets are delivered, not dropped: {:?}",
        r.nodes.iter().map(|n| &n.drops).collect::<Vec<_>>()
    );
    assert_eq!(
        forwarded_total(&r),
        3 * 40,
        "every packet crossed the 3 relays once"
    );
    let disc = src.routing_discovery_time_mean_s.unwrap();
    println!("DSR chain: discovery {disc:.3} s");
    assert!(disc > 0.03 && disc < 0.1, "discovery took {disc} s");
    assert!(
        f.delay_max_s.unwrap() >= disc,
        "the first packet waited for the route"
    );
}

#[test]
fn grid_routes_are_shortest_and_requests_are_handled_once() {
    // 4 × 4 grid: corner to corner is 6 hops.
    let flows = cbr(0, 15, 1.0, 0.2, 40) + &cbr(3, 12, 1.3, 0.2, 40);
    let r = Simulator::new(&scenario(&grid(4, 4, 1, &flows, 15.0))).run();
    for (src, f) in [(0, 0), (3, 1)] {
        let s = rt(&r, src);
        assert_eq!(s.routing_discoveries, 1, "node {src}");
        assert_eq!(
            s.routing_route_hops_mean,
            Some(6.0),
            "node {src}: shortest path in the grid is 6 hops"
        );
        assert_eq!(
            r.flows[f].rx_packets, 40,
            "flow {f}: {:?}",
            r.flows[f].drops
        );
    }
    // Every delivered packet crossed exactly 5 relays: the routes in use are shortest.
    assert_eq!(forwarded_total(&r), 5 * 80);
    // Each node rebroadcasts each request at most once.
    let originated: u64 = (0..16)
        .map(|i| rt(&r, i).routing_discoveries + rt(&r, i).routing_request_retries)
        .sum();
    let mut duplicates = 0;
    for i in 0..16 {
        let s = rt(&r, i);
        assert!(
            s.sent("RREQ") <= originated,
            "node {i} sent {} requests",
            s.sent("RREQ")
        );
        duplicates += s.routing_duplicate_requests;
    }
    assert!(
        duplicates > 0,
        "in a grid every node hears requests more than once"
    );
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}

#[test]
fn an_intermediate_node_answers_a_second_discovery_from_its_cache() {
    // Chain 0-1-2-3-4 carries 0 → 4; node 5 hears only node 1.
    let text = |dsr: &str| {
        format!(
            // ARP off: with it, node 1's cache reply to node 5 waits for an ARP
            // exchange and arrives just after the 30 ms non-propagating timeout.
            "duration_s = 10\n[nodes]\ncount = 6\nplacement = {{ kind = \"explicit\", positions_m = [[0, 0], [200, 0], [400, 0], [600, 0], [800, 0], [200, 200]] }}\n[radio]\n[mac]\narp = false\n[routing]\nprotocol = \"dsr\"\n{dsr}\n{}{}",
            cbr(0, 4, 1.0, 0.1, 50),
            cbr(5, 4, 3.0, 0.1, 40)
        )
    };
    // Without the tap: when 5 needs a route to 4, its non-propagating request
    // reaches node 1, which has learned 1-2-3-4 from the source routes it
    // forwards, and replies from its cache.
    let r = Simulator::new(&scenario(&text("dsr = { promiscuous = false }"))).run();
    let s5 = rt(&r, 5);
    assert_eq!(s5.routing_discoveries, 1);
    assert_eq!(
        s5.routing_request_retries, 0,
        "the non-propagating request was enough"
    );
    assert_eq!(s5.routing_route_hops_mean, Some(4.0), "5-1-2-3-4");
    assert!(
        rt(&r, 1).routing_replies_from_cache >= 1,
        "node 1 answered from its cache"
    );
    assert_eq!(
        rt(&r, 4).sent("RREP"),
        1,
        "the target only answered node 0's discovery"
    );
    assert_eq!(r.flows[1].rx_packets, 40);
    assert_eq!(r.flows[0].rx_packets, 50);
    // With the tap (ns-2's default), node 5 has already overheard node 1
    // sending 0's packets to 2 and cached 5-1-2-3-4: no discovery at all.
    let r = Simulator::new(&scenario(&text(""))).run();
    assert_eq!(rt(&r, 5).routing_discoveries, 0);
    assert_eq!(rt(&r, 5).routing_request_retries, 0);
    assert_eq!(r.flows[1].rx_packets, 40);
    assert_eq!(
        r.nodes[1].forwarded_packets,
        50 + 40,
        "5's packets went through node 1"
    );
}

/// 0 - 1 - {2 | 3} - 4: two 3-hop paths that differ in the third node.
const DIAMOND: &str = r#"
    duration_s = 30
    [nodes]
    count = 5
    placement = { kind = "explicit", positions_m = [[0, 0], [200, 0], [400, 60], [400, -60], [600, 0]] }
    [radio]
    [routing]
    protocol = "dsr"
    [[flows]]
    kind = "cbr"
    src = 0
    dst = 4
    start_s = 1.0
    packet_size_bytes = 512
    interval_s = 0.1
"#;

/// Run `text` to 10 s, move the relay (2 or 3) that carries the flow out of
/// range, and return the simulator at the first delivery after the move, the
/// repair time, and the (used, other) relays.
fn break_relay(text: &str) -> (Simulator, f64, usize, usize) {
    let mut sim = Simulator::new(&scenario(text));
    let t_move = SimTime::from_secs_f64(10.0);
    sim.run_until(t_move);
    let before = sim.results();
    let (used, other) = if before.nodes[2].forwarded_packets > before.nodes[3].forwarded_packets {
        (2, 3)
    } else {
        (3, 2)
    };
    assert!(before.nodes[used].forwarded_packets > 50);
    assert!(before.nodes[other].forwarded_packets <= 1);
    let rx_at_move = before.flows[0].rx_packets;
    sim.move_node(used as u32, [400.0, 5000.0]);
    let mut t = t_move;
    let mut repaired_at = None;
    while t < SimTime::from_secs_f64(20.0) {
        t += SimDuration::from_millis(1);
        sim.run_until(t);
        if sim.results().flows[0].rx_packets > rx_at_move {
            repaired_at = Some(t);
            break;
        }
    }
    let repaired_at = repaired_at.expect("delivery resumes");
    (sim, repaired_at.since(t_move).as_secs_f64(), used, other)
}

#[test]
fn relay_made_unreachable_mid_flow_route_error_reaches_the_source_and_a_new_route_is_used() {
    // ARP off: with ns-2's ARP (the default) node 1 has not resolved the source
    // yet when the two route replies reach it, so the second replaces the first
    // in the ARP hold (`ifq.ARP`) and the source caches only one route.
    let (mut sim, repair_s, _used, other) =
        break_relay(&format!("{DIAMOND}\n[mac]\narp = false\n"));
    println!("DSR repair time after the relay left (route error, then the source's second cached route): {repair_s:.3} s");
    sim.run_to_end();
    let r = sim.results();
    let src = rt(&r, 0);
    assert_eq!(src.routing_route_hops_mean, Some(3.0));
    // Node 1's MAC gave up on the lost relay; node 1 had no other route, so it
    // dropped the packet and sent a route error back to the source.
    assert!(rt(&r, 1).routing_route_breaks >= 1);
    // It could not salvage the packet whose link failed: as ns-2
    // (NEW_SALVAGE_LOGIC) it kept it and sent one non-propagating request.
    assert!(
        rt(&r, 1).sent("RREQ") >= 1,
        "node 1 asked its neighbours for a route"
    );
    assert!(rt(&r, 1).sent("RERR") >= 1);
    assert!(
        src.received("RERR") >= 1,
        "the route error reached the source"
    );
    // The target answered both copies of the request, so the source had the
    // second route cached and switched to it without a new discovery.
    assert_eq!(src.routing_discoveries, 1);
    assert!(
        r.nodes[other].forwarded_packets > 150,
        "traffic moved to node {other}"
    );
    assert!(repair_s < 1.0, "repair took {repair_s} s");
    let lost = r.flows[0].tx_packets - r.flows[0].rx_packets;
    assert!(
        lost <= 5,
        "lost {lost} packets around the break: {:?}",
        r.flows[0].drops
    );
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}

#[test]
fn relay_switched_off_without_a_cached_alternative_is_rediscovered() {
    // The target answers every copy of a request, so to leave the source
    // without a second route, node 3 is off during the first discovery (on at
    // 5 s); the relay in use, node 2, is switched off at 10 s.
    let text = format!("{DIAMOND}\n[faults]\nnode_switches = [{{ node = 3, off_s = 0, on_s = 5 }}, {{ node = 2, off_s = 10 }}]\n");
    let mut sim = Simulator::new(&scenario(&text));
    let t_off = SimTime::from_secs_f64(10.0);
    sim.run_until(t_off);
    let rx = sim.results().flows[0].rx_packets;
    let mut t = t_off;
    while sim.results().flows[0].rx_packets == rx && t < SimTime::from_secs_f64(20.0) {
        t += SimDuration::from_millis(1);
        sim.run_until(t);
    }
    let repair_s = t.since(t_off).as_secs_f64();
    println!("DSR repair time after the relay was switched off (route error, new discovery): {repair_s:.3} s");
    sim.run_to_end();
    let r = sim.results();
    assert!(
        rt(&r, 0).received("RERR") >= 1,
        "the route error reached the source"
    );
    assert_eq!(rt(&r, 0).routing_discoveries, 2, "the source rediscovered");
    assert_eq!(rt(&r, 0).routing_route_hops_mean, Some(3.0));
    assert!(
        r.nodes[3].forwarded_packets > 150,
        "the new route goes through node 3"
    );
    assert!(repair_s < 1.5, "repair took {repair_s} s");
}

#[test]
fn a_relay_with_another_cached_route_salvages_the_packets() {
    // Node 1 first finds its own routes to 4 (the target answers both request
    // copies, so it caches 1-2-4 and 1-3-4); then node 0's non-propagating
    // request is answered from node 1's cache. When the relay in use leaves,
    // node 1 salvages the packets on its other route.
    // Without the tap: with it, node 0 would overhear node 1's own packet and
    // learn the route without asking.
    let text = DIAMOND.replace(
        "protocol = \"dsr\"",
        "protocol = \"dsr\"\ndsr = { promiscuous = false }",
    );
    let text = text.replace("[[flows]]", &format!("{}[[flows]]", cbr(1, 4, 0.5, 0.1, 1)));
    let mut sim = Simulator::new(&scenario(&text));
    sim.run_until(SimTime::from_secs_f64(10.0));
    let before = sim.results();
    assert!(
        rt(&before, 1).routing_replies_from_cache >= 1,
        "node 1 answered node 0 from its cache"
    );
    let used = if before.nodes[2].forwarded_packets > before.nodes[3].forwarded_packets {
        2
    } else {
        3
    };
    let other = 5 - used;
    sim.move_node(used as u32, [400.0, 5000.0]);
    sim.run_to_end();
    let r = sim.results();
    assert!(rt(&r, 1).routing_salvaged >= 1, "node 1 salvaged");
    assert!(r.nodes[other].forwarded_packets > 150);
    let f = &r.flows[1];
    let lost = f.tx_packets - f.rx_packets;
    println!(
        "DSR salvaging: {} packets salvaged by node 1, {lost} lost",
        rt(&r, 1).routing_salvaged
    );
    assert!(lost <= 3, "lost {lost}: {:?}", f.drops);
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}

#[test]
fn no_routing_loops_in_a_static_grid_under_several_seeds() {
    let flows = cbr(0, 24, 1.0, 0.5, 40)
        + &cbr(24, 0, 1.1, 0.5, 40)
        + &cbr(4, 20, 1.2, 0.5, 40)
        + &cbr(10, 14, 1.3, 0.5, 40)
        + &cbr(22, 2, 1.4, 0.5, 40);
    for seed in 1..=5 {
        let r = Simulator::new(&scenario(&grid(5, 5, seed, &flows, 25.0))).run();
        assert_eq!(
            drops(&r, "rtr.TTL"),
            0,
            "seed {seed}: TTL expiry means a loop"
        );
        assert_eq!(drops(&r, "rtr.LOOP"), 0, "seed {seed}");
        let rx: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
        let tx: u64 = r.flows.iter().map(|f| f.tx_packets).sum();
        println!(
            "DSR 5x5 grid seed {seed}: delivered {rx}/{tx}, {} control packets",
            ctrl_sent_total(&r)
        );
        assert!(
            rx as f64 >= 0.95 * tx as f64,
            "seed {seed}: delivered {rx}/{tx}"
        );
    }
}

#[test]
fn dsr_runs_are_deterministic() {
    let a = Simulator::new(&scenario(DIAMOND)).run().to_json();
    let b = Simulator::new(&scenario(DIAMOND)).run().to_json();
    assert_eq!(a, b);
}

#[test]
fn tcp_newreno_over_a_4_hop_chain_runs_100_s_without_stalling() {
    let text = r#"
        duration_s = 100
        [nodes]
        count = 5
        placement = { kind = "chain", spacing_m = 200 }
        [radio]
        [routing]
        protocol = "dsr"
        [[flows]]
        kind = "ftp"
        transport = "newreno"
        src = 0
        dst = 4
        start_s = 1.0
    "#;
    let mut sim = Simulator::new(&scenario(text));
    let mut acked = Vec::new();
    for t in (10..=100).step_by(10) {
        sim.run_until(SimTime::from_secs_f64(t as f64));
        acked.push(
            sim.results().flows[0]
                .tcp
                .as_ref()
                .unwrap()
                .highest_ack_segs,
        );
    }
    let r = sim.results();
    let tcp = r.flows[0].tcp.as_ref().unwrap();
    println!(
        "TCP NewReno over DSR, 4-hop chain, 100 s: goodput {:.1} kbit/s, {} segments acked, {} retransmissions, {} timeouts, discoveries {}, breaks {:?}, salvaged {:?}",
        tcp.goodput_kbps,
        tcp.highest_ack_segs,
        tcp.retransmissions,
        tcp.timeouts,
        rt(&r, 0).routing_discoveries,
        (0..5).map(|i| rt(&r, i).routing_route_breaks).collect::<Vec<_>>(),
        (0..5).map(|i| rt(&r, i).routing_salvaged).collect::<Vec<_>>()
    );
    for w in acked.windows(2) {
        assert!(w[1] > w[0], "acked segments per 10 s: {acked:?}");
    }
    // ns-2.35 on this chain (manetlab crosscheck, seeds 1-2): 55.6 kbit/s; the
    // MAC's false link breaks cost a route discovery each, and the next cycle
    // waits 2 s (BackOffTest).
    assert!(
        tcp.goodput_kbps > 40.0,
        "goodput {} kbit/s",
        tcp.goodput_kbps
    );
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}
