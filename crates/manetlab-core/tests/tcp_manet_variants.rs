//! The MANET-specific TCP variants through the whole simulator: TCP-AP paced on a
//! static 802.11 chain, MPR recovering scripted drops without duplicate-ACK
//! retransmissions, ELFN frozen across a route outage by injected notices.

use manetlab_core::ids::NodeId;
use manetlab_core::metrics::FlowSummary;
use manetlab_core::sim::SimTime;
use manetlab_core::transport::TransportNotice;
use manetlab_core::{run, Scenario, Simulator};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))
}

/// A static 802.11 chain of `hops` hops (200 m spacing, ns-2 defaults), one FTP flow end to end.
fn chain(hops: u32, variant: &str, duration_s: f64) -> Scenario {
    scenario(&format!(
        r#"
duration_s = {duration_s}
[nodes]
count = {}
placement = {{ kind = "chain", spacing_m = 200 }}
[radio]
[[flows]]
kind = "ftp"
src = 0
dst = {hops}
transport = "{variant}"
"#,
        hops + 1
    ))
}

#[test]
fn tcp_ap_is_paced_on_a_static_chain() {
    let mut sim = Simulator::new(&chain(4, "tcp-ap", 30.0));
    sim.run_to_end();
    let r = sim.results();
    let f = &r.flows[0];
    let s = sim.tcp_sender(0).unwrap();
    // The ACKs came over three relays: DEFAULT_TTL − 29 + 1 = 4 hops.
    assert_eq!(s.path_hops(), Some(4));
    let gap = s.pacing_gap_s().unwrap();
    let srtt = s.srtt_s().unwrap();
    println!(
        "tcp-ap 4 hops: goodput {:.1} kbit/s, gap {gap:.4} s, srtt {srtt:.4} s, holds {}, {:?}",
        f.throughput_kbps,
        s.stats.paced_holds,
        f.tcp.as_ref().map(|t| (t.retransmissions, t.timeouts))
    );
    assert!(
        f.throughput_kbps > 50.0,
        "the flow runs: {} kbit/s",
        f.throughput_kbps
    );
    // On 4 hops FHD = 4·RTT/8 = RTT/2: the gap is about half an RTT, widened by covRTT.
    assert!(
        gap > 0.3 * srtt && gap < 2.0 * srtt,
        "gap {gap} vs srtt {srtt}"
    );
    assert!(
        s.stats.paced_holds > 100,
        "pacing held segments back: {}",
        s.stats.paced_holds
    );
    // Paced: at most one new segment per gap on average.
    let sent = f.tcp.as_ref().unwrap().data_segments_sent as f64;
    assert!(
        sent <= 30.0 / (0.5 * gap),
        "{sent} segments in 30 s with a gap of {gap} s"
    );
}

#[test]
fn tcp_ap_and_newreno_on_a_seven_hop_chain() {
    // Not a reproduction (paper 001 uses AODV and mobility): both run, TCP-AP paced.
    let ap = run(&chain(7, "tcp-ap", 60.0)).flows.remove(0);
    let nr = run(&chain(7, "newreno", 60.0)).flows.remove(0);
    println!(
        "7 hops, 60 s: tcp-ap {:.1} kbit/s drops {:?}; newreno {:.1} kbit/s drops {:?}",
        ap.throughput_kbps, ap.drops, nr.throughput_kbps, nr.drops
    );
    assert!(ap.throughput_kbps > 20.0 && nr.throughput_kbps > 20.0);
}

/// Floyd & Fall's scaled path (tests/tcp_p2p.rs) with scripted drops.
fn ff(variant: &str, drops: &[u64]) -> FlowSummary {
    let drops: Vec<String> = drops.iter().map(|d| d.to_string()).collect();
    let s = scenario(&format!(
        r#"
duration_s = 30
[nodes]
count = 3
[[links]]
a = 0
b = 1
bandwidth_mbps = 10
delay_ms = 1
[[links]]
a = 1
b = 2
bandwidth_mbps = 0.8
delay_ms = 50
drop_tcp_segments = [{}]
[[flows]]
kind = "ftp"
src = 0
dst = 2
transport = "{variant}"
file_bytes = 60000
"#,
        drops.join(", ")
    ));
    run(&s).flows.remove(0)
}

#[test]
fn mpr_recovers_scripted_drops_by_timer_only() {
    let clean = ff("mpr", &[]);
    let t = clean.tcp.as_ref().unwrap();
    assert_eq!(clean.rx_bytes, 60_000);
    assert_eq!(
        (t.retransmissions, t.timeouts, t.fast_retransmits),
        (0, 0, 0),
        "no spurious drops on a clean path"
    );
    for n in 1..=4usize {
        let drops: Vec<u64> = [30, 32, 34, 36][..n].to_vec();
        let f = ff("mpr", &drops);
        let t = f.tcp.as_ref().unwrap();
        println!(
            "mpr, {n} drops: retx {} timeouts {} completion {:?} final cwnd {}",
            t.retransmissions, t.timeouts, t.completion_s, t.final_cwnd_segs
        );
        assert_eq!(f.rx_bytes, 60_000, "{n} drops: the file arrives");
        assert_eq!(
            t.fast_retransmits, 0,
            "duplicate ACKs never trigger a retransmission"
        );
        assert!(t.retransmissions >= n as u64);
        assert_eq!(
            t.timeouts, 0,
            "{n} drops: each segment is resent once and gets through"
        );
        // The clean run's completion plus roughly one mxrtt of waiting.
        assert!(t.completion_s.unwrap() < clean.tcp.as_ref().unwrap().completion_s.unwrap() + 5.0);
    }
}

#[test]
fn elfn_freezes_across_a_route_outage_and_resumes_at_once() {
    // 0 —— 1 —— 2: the relay walks out of range at 5 s and back at 12 s. A routing
    // protocol would raise the notices; here the test does, 0.1 s after each move.
    let run_one = |variant: &str| {
        let mut sim = Simulator::new(&chain(2, variant, 30.0));
        sim.run_until(SimTime::from_secs_f64(5.0));
        sim.move_node(1, [200.0, 900.0]);
        sim.run_until(SimTime::from_secs_f64(5.1));
        sim.notify_route(0, TransportNotice::RouteFailed { dst: NodeId(2) });
        sim.run_until(SimTime::from_secs_f64(12.0));
        let at_12 = sim.results().flows[0].rx_bytes;
        sim.move_node(1, [200.0, 0.0]);
        sim.run_until(SimTime::from_secs_f64(12.1));
        sim.notify_route(0, TransportNotice::RouteReestablished { dst: NodeId(2) });
        sim.run_until(SimTime::from_secs_f64(13.0));
        let at_13 = sim.results().flows[0].rx_bytes;
        sim.run_to_end();
        let s = sim.tcp_sender(0).unwrap();
        let stats = s.stats.clone();
        assert!(!s.frozen());
        (sim.results().flows.remove(0), at_12, at_13, stats)
    };
    let (elfn, e12, e13, es) = run_one("elfn");
    let (newreno, n12, n13, ns) = run_one("newreno");
    println!(
        "elfn: rx {} ({e12} at 12 s, {e13} at 13 s) {es:?}",
        elfn.rx_bytes
    );
    println!(
        "newreno: rx {} ({n12} at 12 s, {n13} at 13 s) {ns:?}",
        newreno.rx_bytes
    );
    // ELFN: frozen, no RTO expiry; probes at 7.1, 9.1, 11.1 s.
    assert_eq!((es.route_freezes, es.probes, es.timeouts), (1, 3, 0));
    // NewReno ignores the notices and backs its RTO off through the outage.
    assert_eq!((ns.route_freezes, ns.probes), (0, 0));
    assert!(ns.timeouts >= 3, "{ns:?}");
    // ELFN resumes with its frozen window as soon as the route is back; NewReno waits
    // for its backed-off RTO and restarts from one segment.
    assert!(e13 > e12 + 40_000, "elfn resumed: {e12} → {e13}");
    assert!(
        e13 - e12 > 2 * (n13 - n12),
        "elfn {e12} → {e13}, newreno {n12} → {n13}"
    );
    assert_eq!(
        es.fast_retransmits, 0,
        "resending the window after the outage starts no fast retransmit"
    );
    assert!(elfn.rx_bytes > newreno.rx_bytes);
}
