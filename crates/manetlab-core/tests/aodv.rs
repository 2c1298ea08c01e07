//! AODV over the 802.11 model (MANET routing issue, "Must show"): discovery on
//! static chains and grids, buffered packets, duplicate-request suppression, no
//! loops, repair after a relay becomes unreachable, TCP over a 4-hop chain.

use manetlab_core::metrics::{RoutingSummary, RunResult};
use manetlab_core::sim::SimTime;
use manetlab_core::{Scenario, Simulator};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn rt(r: &RunResult, n: usize) -> &RoutingSummary {
    r.nodes[n]
        .routing
        .as_ref()
        .expect("AODV nodes report routing counters")
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

/// `rows × columns` grid, 200 m apart (4-neighbour: diagonals are 283 m, beyond the 250 m range).
fn grid(rows: u32, columns: u32, seed: u64, flows: &str, duration_s: f64) -> String {
    format!(
        r#"
        seed = {seed}
        duration_s = {duration_s}
        [nodes]
        count = {}
        placement = {{ kind = "grid", columns = {columns}, spacing_m = 200 }}
        [radio]
        [routing]
        protocol = "aodv"
        {flows}
        "#,
        rows * columns
    )
}

fn cbr(src: u32, dst: u32, start_s: f64, interval_s: f64, max_packets: u64) -> String {
    format!(
        "[[flows]]\nkind = \"cbr\"\nsrc = {src}\ndst = {dst}\nstart_s = {start_s}\npacket_size_bytes = 512\ninterval_s = {interval_s}\nmax_packets = {max_packets}\n"
    )
}

#[test]
fn chain_first_packet_triggers_discovery_and_buffered_packets_are_delivered() {
    // 0-1-2-3-4, 200 m apart: 4 hops. Packets every 10 ms from t = 1 s: several
    // wait in the send buffer while the request travels.
    let text = format!(
        r#"
        duration_s = 10
        [nodes]
        count = 5
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        [routing]
        protocol = "aodv"
        {}"#,
        cbr(0, 4, 1.0, 0.05, 40)
    );
    let mut sim = Simulator::new(&scenario(&text));
    sim.run_until(SimTime::from_secs_f64(0.999));
    let before = sim.results();
    assert_eq!(
        ctrl_sent_total(&before),
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
    // Destination replied; relays forwarded the request and the reply once each.
    assert_eq!(rt(&r, 4).sent("RREP"), 1);
    for relay in 1..=3 {
        assert_eq!(rt(&r, relay).sent("RREQ"), 1, "node {relay}");
        assert_eq!(rt(&r, relay).sent("RREP"), 1, "node {relay}");
    }
    let f = &r.flows[0];
    assert_eq!(f.tx_packets, 40);
    assert_eq!(
        f.rx_packets,
        40,
        "buffered packets are delivered, not dropped: {:?}",
        r.nodes.iter().map(|n| &n.drops).collect::<Vec<_>>()
    );
    let disc = src.routing_discovery_time_mean_s.unwrap();
    assert!(disc > 0.0 && disc < 0.1, "discovery took {disc} s");
    // The first packet waited for the route: its delay includes the discovery.
    assert!(f.delay_max_s.unwrap() >= disc);
}

#[test]
fn grid_routes_are_shortest_and_requests_are_handled_once() {
    // 4 × 4 grid: corner to corner is 6 hops. ns-2 asks for a destination it
    // never had a route to with a network-wide request at once (its entries
    // start with an infinite last hop count), so one request per source.
    // Light load (5 packets/s each), so that no contention-induced MAC failure
    // breaks a route: every route is found once.
    let flows = cbr(0, 15, 1.0, 0.2, 40) + &cbr(3, 12, 1.3, 0.2, 40);
    let r = Simulator::new(&scenario(&grid(4, 4, 1, &flows, 15.0))).run();
    for (src, f) in [(0, 0), (3, 1)] {
        let s = rt(&r, src);
        assert_eq!(s.routing_routes_found, 1, "node {src}");
        assert_eq!(
            s.routing_route_hops_mean,
            Some(6.0),
            "node {src}: shortest path in the grid is 6 hops"
        );
        assert_eq!(
            s.routing_request_retries, 0,
            "node {src}: one network-wide request"
        );
        assert_eq!(
            r.flows[f].rx_packets, 40,
            "flow {f}: {:?}",
            r.flows[f].drops
        );
    }
    // Duplicate suppression: each node rebroadcasts each request at most once.
    // Two requests were originated in all (one per source); a node hears each
    // from several neighbours but forwards it once.
    let originated_rreqs: u64 = (0..16)
        .map(|i| rt(&r, i).routing_discoveries + rt(&r, i).routing_request_retries)
        .sum();
    assert_eq!(originated_rreqs, 2);
    let mut duplicates = 0;
    for i in 0..16 {
        let s = rt(&r, i);
        assert!(
            s.sent("RREQ") <= originated_rreqs,
            "node {i} rebroadcast {} requests",
            s.sent("RREQ")
        );
        assert!(s.received("RREQ") >= s.sent("RREQ"));
        duplicates += s.routing_duplicate_requests;
    }
    assert!(
        duplicates > 0,
        "in a grid every node hears requests more than once"
    );
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}

#[test]
fn no_routing_loops_in_a_static_grid_under_several_seeds() {
    // Crossing flows in both directions on a 5 × 5 grid (2 packets/s each: the
    // whole grid shares one carrier-sense domain, so heavier loads congest it).
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
        assert!(
            rx as f64 >= 0.95 * tx as f64,
            "seed {seed}: delivered {rx}/{tx}"
        );
    }
}

/// 0 - 1 - {2 | 3} - 4: two 3-hop paths that differ in the third node.
const DIAMOND: &str = r#"
    duration_s = 30
    [nodes]
    count = 5
    placement = { kind = "explicit", positions_m = [[0, 0], [200, 0], [400, 60], [400, -60], [600, 0]] }
    [radio]
    [routing]
    protocol = "aodv"
    [[flows]]
    kind = "cbr"
    src = 0
    dst = 4
    start_s = 1.0
    packet_size_bytes = 512
    interval_s = 0.1
"#;

/// Run DIAMOND (plus `extra` routing keys) to 10 s, move the relay in use out
/// of range, and return the simulator at the first delivery after the move,
/// the repair time, and the (used, other) relays.
fn break_relay(extra: &str) -> (Simulator, f64, usize, usize) {
    let text = DIAMOND.replace(
        "protocol = \"aodv\"",
        &format!("protocol = \"aodv\"\n{extra}"),
    );
    let mut sim = Simulator::new(&scenario(&text));
    let t_move = SimTime::from_secs_f64(10.0);
    sim.run_until(t_move);
    let before = sim.results();
    assert_eq!(rt(&before, 0).routing_route_hops_mean, Some(3.0));
    let (used, other) = if before.nodes[2].forwarded_packets > 0 {
        (2, 3)
    } else {
        (3, 2)
    };
    assert!(before.nodes[used].forwarded_packets > 50);
    assert!(
        before.flows[0].tx_packets - before.flows[0].rx_packets <= 1,
        "no loss before the move (one packet may be in flight)"
    );
    assert_eq!(before.nodes[other].forwarded_packets, 0);
    let rx_at_move = before.flows[0].rx_packets;

    // The relay walks out of everyone's range.
    sim.move_node(used as u32, [400.0, 5000.0]);
    let step = manetlab_core::sim::SimDuration::from_millis(1);
    let mut t = t_move;
    let mut repaired_at = None;
    while t < SimTime::from_secs_f64(20.0) {
        t += step;
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
fn relay_made_unreachable_mid_flow_is_repaired_through_the_other_path() {
    let (mut sim, repair_s, _used, other) = break_relay("");
    println!("AODV repair time after the relay left (MAC feedback): {repair_s:.3} s");
    sim.run_to_end();
    let r = sim.results();
    // Node 1 detected the break from MAC feedback (not a local repair: the
    // break is as close to the source as to the destination) and told node 0.
    assert!(rt(&r, 1).routing_route_breaks >= 1);
    // ns-2's rt_ll_failed drops the packet the MAC gave up on as `CBK`.
    assert!(
        r.nodes[1].drops.get("rtr.CBK").copied().unwrap_or(0) >= 1,
        "{:?}",
        r.nodes[1].drops
    );
    assert!(rt(&r, 1).sent("RERR") >= 1);
    assert!(
        rt(&r, 0).received("RERR") >= 1,
        "the RERR reached the source"
    );
    assert_eq!(
        rt(&r, 0).routing_discoveries,
        2,
        "the source rediscovered the route"
    );
    assert_eq!(rt(&r, 0).routing_routes_found, 2);
    assert_eq!(rt(&r, 0).routing_route_hops_mean, Some(3.0));
    assert!(
        r.nodes[other].forwarded_packets > 50,
        "traffic moved to node {other}"
    );
    // Repair within a second: a MAC failure (7 RTS attempts), a RERR, one discovery.
    assert!(repair_s < 1.0, "repair took {repair_s} s");
    let lost = r.flows[0].tx_packets - r.flows[0].rx_packets;
    assert!(lost <= 12, "lost {lost} packets around the break");
    assert_eq!(drops(&r, "rtr.TTL") + drops(&r, "rtr.LOOP"), 0);
}

#[test]
fn a_break_near_the_destination_is_repaired_locally_without_the_source_noticing() {
    // 0-1-2-3-{4|5}-6: the relay before the destination is lost; node 3 has
    // come 3 hops and has 2 to go, so it repairs the route itself (§6.12).
    let text = r#"
        duration_s = 20
        [nodes]
        count = 7
        placement = { kind = "explicit", positions_m = [[0, 0], [200, 0], [400, 0], [600, 0], [800, 60], [800, -60], [1000, 0]] }
        [radio]
        [routing]
        protocol = "aodv"
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 6
        start_s = 1.0
        packet_size_bytes = 512
        interval_s = 0.2
    "#;
    let mut sim = Simulator::new(&scenario(text));
    let t_move = SimTime::from_secs_f64(10.0);
    sim.run_until(t_move);
    let before = sim.results();
    let (used, other) = if before.nodes[4].forwarded_packets > 0 {
        (4, 5)
    } else {
        (5, 4)
    };
    let rx_at_move = before.flows[0].rx_packets;
    sim.move_node(used as u32, [800.0, 5000.0]);
    let mut t = t_move;
    while sim.results().flows[0].rx_packets == rx_at_move && t < SimTime::from_secs_f64(15.0) {
        t += manetlab_core::sim::SimDuration::from_millis(1);
        sim.run_until(t);
    }
    let repair_s = t.since(t_move).as_secs_f64();
    println!("AODV local repair time: {repair_s:.3} s");
    sim.run_to_end();
    let r = sim.results();
    assert_eq!(rt(&r, 3).routing_local_repairs, 1);
    assert_eq!(rt(&r, 3).routing_local_repairs_failed, 0);
    assert_eq!(
        rt(&r, 0).routing_discoveries,
        1,
        "the source never had to rediscover"
    );
    assert_eq!(rt(&r, 0).received("RERR"), 0);
    assert!(r.nodes[other].forwarded_packets > 20);
    assert!(repair_s < 0.5, "local repair took {repair_s} s");
    // The packet that hit the break waited for the repair: nothing lost but
    // what was already queued at the lost relay.
    let lost = r.flows[0].tx_packets - r.flows[0].rx_packets;
    assert!(lost <= 2, "lost {lost}: {:?}", r.flows[0].drops);
}

#[test]
fn hello_messages_detect_the_lost_relay() {
    let (mut sim, repair_s, _used, other) = break_relay("aodv = { link_detection = \"hello\" }");
    println!(
        "AODV repair time after the relay left (HELLO, 3 × 1 s allowed loss): {repair_s:.3} s"
    );
    sim.run_to_end();
    let r = sim.results();
    // The MAC's failures are not taken as breaks: the lost HELLOs are, after
    // ALLOWED_HELLO_LOSS · HELLO_INTERVAL = 3 s (plus up to one HELLO period).
    assert!((2.0..5.0).contains(&repair_s), "repair took {repair_s} s");
    assert!(rt(&r, 1).routing_route_breaks >= 1);
    assert!(rt(&r, 0).received("RERR") >= 1);
    assert!(r.nodes[other].forwarded_packets > 50);
    // Every node says hello about once a second for 30 s.
    for i in 0..5 {
        let h = rt(&r, i).sent("HELLO");
        assert!((22..=40).contains(&h), "node {i} sent {h} HELLOs");
    }
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
        protocol = "aodv"
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
        "TCP NewReno over AODV, 4-hop chain, 100 s: goodput {:.1} kbit/s, {} segments acked, {} retransmissions, {} timeouts, discoveries {}, breaks {:?}",
        tcp.goodput_kbps,
        tcp.highest_ack_segs,
        tcp.retransmissions,
        tcp.timeouts,
        rt(&r, 0).routing_discoveries,
        (0..5).map(|i| rt(&r, i).routing_route_breaks).collect::<Vec<_>>()
    );
    // Progress in every 10 s window: no stall.
    for w in acked.windows(2) {
        assert!(w[1] > w[0] + 50, "acked segments per 10 s: {acked:?}");
    }
    assert!(
        tcp.goodput_kbps > 100.0,
        "goodput {} kbit/s",
        tcp.goodput_kbps
    );
}

#[test]
fn aodv_runs_are_deterministic() {
    let a = Simulator::new(&scenario(DIAMOND)).run().to_json();
    let b = Simulator::new(&scenario(DIAMOND)).run().to_json();
    assert_eq!(a, b);
}

#[test]
fn survives_nodes_jumping_around_under_load() {
    // Robustness: 20 nodes, 5 CBR flows and a TCP flow, and every 0.5 s one node
    // jumps to a random spot (a harsher topology churn than any mobility model).
    // Routes keep being repaired, no stuck discoveries. ns-2's local repair asks
    // with the broken route's own number, so a node upstream may answer and
    // form a transient loop (packets dropped as rtr.TTL, as in ns-2); with
    // `local_repair_new_seq` (RFC §6.12) there are none.
    for (extra, loop_free) in [
        ("", false),
        ("[routing.aodv]\nlocal_repair_new_seq = true", true),
    ] {
        for seed in [1u64, 5] {
            let mut flows = String::new();
            for (i, (s, d)) in [(0, 19), (3, 11), (7, 15), (12, 2), (18, 5)]
                .iter()
                .enumerate()
            {
                flows += &cbr(*s, *d, 1.0 + i as f64 * 0.1, 0.25, 1_000_000);
            }
            flows += "[[flows]]\nkind = \"ftp\"\nsrc = 1\ndst = 17\nstart_s = 2.0\n";
            let text = format!(
            "seed = {seed}\nduration_s = 60\n[area]\nwidth_m = 1000\nheight_m = 500\n[nodes]\ncount = 20\nplacement = {{ kind = \"uniform\" }}\n[radio]\n[routing]\nprotocol = \"aodv\"\n{extra}\n{flows}"
        );
            let mut sim = Simulator::new(&scenario(&text));
            let mut x = seed.wrapping_mul(7919);
            let mut next = || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64
            };
            for k in 1..120 {
                sim.run_until(SimTime::from_secs_f64(k as f64 * 0.5));
                let n = ((next() * 20.0) as u32).min(19);
                let pos = [next() * 1000.0, next() * 500.0];
                sim.move_node(n, pos);
            }
            sim.run_to_end();
            let r = sim.results();
            let tx: u64 = r.flows[..5].iter().map(|f| f.tx_packets).sum();
            let rx: u64 = r.flows[..5].iter().map(|f| f.rx_packets).sum();
            let breaks: u64 = (0..20).map(|i| rt(&r, i).routing_route_breaks).sum();
            println!("churn {extra:?} seed {seed}: rtr.TTL {}, CBR delivery {rx}/{tx}, TCP {:.1} kbit/s, {breaks} breaks, {} control packets", drops(&r, "rtr.TTL"), r.flows[5].throughput_kbps, ctrl_sent_total(&r));
            assert!(breaks > 20, "the churn breaks routes");
            assert!(
                rx as f64 > 0.55 * tx as f64,
                "seed {seed}: delivered {rx}/{tx}"
            );
            assert!(r.flows[5].throughput_kbps > 20.0);
            if loop_free {
                assert_eq!(drops(&r, "rtr.TTL"), 0, "seed {seed}");
            }
        }
    }
}

/// A 20-node random-waypoint run (20 m/s, no pause) with three CBR flows and
/// one TCP flow, under the given `[routing.aodv]` keys.
fn rwp_golden(aodv_keys: &str) -> RunResult {
    let text = format!(
        r#"
        seed = 3
        duration_s = 120
        [area]
        width_m = 1000
        height_m = 500
        [nodes]
        count = 20
        [radio]
        [routing]
        protocol = "aodv"
        [routing.aodv]
        {aodv_keys}
        [mobility]
        model = "random_waypoint"
        max_speed_mps = 20
        pause_s = 0
        [[flows]]
        kind = "ftp"
        src = 1
        dst = 17
        start_s = 2.0
        {}{}"#,
        cbr(0, 19, 1.0, 0.25, 1_000_000),
        cbr(12, 2, 1.5, 0.25, 1_000_000) + &cbr(7, 15, 2.5, 0.5, 1_000_000)
    );
    Simulator::new(&scenario(&text)).run()
}

/// FNV-1a of the run's JSON summary: any change of any number shows.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Golden numbers of AODV under RFC 3561's rules (`benchmarks/identity.py`
/// covers ns-2's rules only), recorded on main before the rule sets moved
/// into `rules_ns2.rs` / `rules_rfc.rs`: that move must not change them.
#[test]
fn rfc_rules_golden_summary() {
    let mut results = Vec::new();
    for (keys, want) in [
        (
            "rules = \"rfc3561\"",
            (
                871u64,
                8170u64,
                1408u64,
                39u64,
                5u64,
                4008341427838650038u64,
            ),
        ),
        (
            "preset = \"rfc3561\"\nlink_detection = \"hello\"",
            (689, 8589, 3566, 263, 0, 8395014621563767293),
        ),
        // §6.6.3 gratuitous replies
        (
            "rules = \"rfc3561\"\ngratuitous_rrep = true",
            (876, 7661, 1232, 34, 3, 2929855740650664400),
        ),
    ] {
        let r = rwp_golden(keys);
        let rx: u64 = r.flows[1..].iter().map(|f| f.rx_packets).sum();
        let breaks: u64 = (0..20).map(|i| rt(&r, i).routing_route_breaks).sum();
        let repairs: u64 = (0..20).map(|i| rt(&r, i).routing_local_repairs).sum();
        let got = (
            rx,
            r.flows[0].rx_packets,
            ctrl_sent_total(&r),
            breaks,
            repairs,
            fnv1a(&r.to_json()),
        );
        println!("{keys:?}: {got:?}");
        results.push((keys, got, want));
    }
    for (keys, got, want) in results {
        assert_eq!(got, want, "{keys}");
    }
}
