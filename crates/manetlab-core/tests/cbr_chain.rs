//! CBR over a chain of point-to-point links: throughput and delay against the
//! values computed from the link parameters (issue 2, "Must show").

use manetlab_core::wire::{IP_HEADER_BYTES, UDP_HEADER_BYTES};
use manetlab_core::{run, Scenario};

/// On the wire a CBR packet is its payload plus the IP header: ns-2's `Agent/UDP`
/// sends no UDP header (`udp_header = true` adds it).
const HEADERS: f64 = IP_HEADER_BYTES as f64;

fn chain(bw_mbps: f64, delay_ms: f64, flow: &str, duration_s: f64) -> Scenario {
    let mut text = format!("duration_s = {duration_s}\n[nodes]\ncount = 4\n");
    for (a, b) in [(0, 1), (1, 2), (2, 3)] {
        text += &format!(
            "[[links]]\na = {a}\nb = {b}\nbandwidth_mbps = {bw_mbps}\ndelay_ms = {delay_ms}\n"
        );
    }
    text += &format!("[[flows]]\nkind = \"cbr\"\nsrc = 0\ndst = 3\n{flow}\n");
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn below_capacity_throughput_equals_offered_load() {
    // 512 B every 10 ms = 409.6 kbit/s of payload on a 1 Mb/s chain (532 B on the wire: 425.6 kbit/s).
    let r = run(&chain(
        1.0,
        10.0,
        "packet_size_bytes = 512\ninterval_s = 0.01\nstop_s = 9.0",
        10.0,
    ));
    let f = &r.flows[0];
    assert_eq!(f.tx_packets, 900);
    assert_eq!(f.rx_packets, 900, "nothing lost below capacity");
    let offered_kbps = 512.0 * 8.0 / 0.01 / 1000.0;
    assert!(
        (f.throughput_kbps - offered_kbps).abs() < 1e-9,
        "{} vs {offered_kbps}",
        f.throughput_kbps
    );
    // Over the whole 10 s run the same bytes count for 9/10 of the offered load.
    assert!(
        (f.throughput_run_kbps - offered_kbps * 0.9).abs() < 1e-9,
        "{}",
        f.throughput_run_kbps
    );
    assert_eq!(f.dropped_packets, 0);
    assert!(
        f.drops.values().all(|&n| n == 0),
        "every key present, all 0"
    );
}

#[test]
fn above_capacity_throughput_equals_link_capacity_minus_headers() {
    // Offer 2 Mb/s of 1000-byte payloads into a 1 Mb/s chain for 100 s.
    let r = run(&chain(
        1.0,
        5.0,
        "packet_size_bytes = 1000\nrate_kbps = 2000",
        100.0,
    ));
    let f = &r.flows[0];
    let capacity_payload_kbps = 1000.0 * (1000.0 / (1000.0 + HEADERS));
    let rel = (f.throughput_kbps - capacity_payload_kbps).abs() / capacity_payload_kbps;
    // The only shortfall is the pipeline fill at the start (3 hops · (8.2 ms + 5 ms)) over 100 s.
    assert!(
        rel < 0.005,
        "throughput {} kbit/s vs capacity {capacity_payload_kbps}",
        f.throughput_kbps
    );
    assert!(
        f.drops.get("ifq.IFQ").copied().unwrap_or(0) > 0,
        "overload must overflow the first queue"
    );
    assert_eq!(
        r.nodes[0].drops.get("ifq.IFQ"),
        f.drops.get("ifq.IFQ"),
        "drops happen at the source's queue"
    );
    assert!(r.links[0].utilization > 0.99);
    assert_eq!(r.links[0].max_queue_pkts, 50, "default queue limit");
}

#[test]
fn empty_network_delay_is_sum_of_transmission_and_propagation() {
    let r = run(&chain(
        2.0,
        7.0,
        "packet_size_bytes = 300\ninterval_s = 1\nmax_packets = 1",
        5.0,
    ));
    let f = &r.flows[0];
    assert_eq!(f.rx_packets, 1);
    let per_hop = (300.0 + HEADERS) * 8.0 / 2e6 + 0.007;
    let expected = 3.0 * per_hop;
    assert!(
        (f.delay_mean_s.unwrap() - expected).abs() < 3e-9,
        "{} vs {expected}",
        f.delay_mean_s.unwrap()
    );
    assert_eq!(f.jitter_mean_s, None, "one packet: no jitter sample");
}

#[test]
fn lossy_link_drops_its_share() {
    let mut s = chain(
        10.0,
        1.0,
        "packet_size_bytes = 100\ninterval_s = 0.001",
        50.0,
    );
    s.links[1].error_rate = 0.1;
    let r = run(&s);
    let f = &r.flows[0];
    let errors = f.drops["link.ERR"];
    let loss = errors as f64 / f.tx_packets as f64;
    // 50 000 Bernoulli(0.1) trials: σ ≈ 0.0013.
    assert!((loss - 0.1).abs() < 0.006, "loss {loss}");
    // Everything not received was either dropped by the error model or still in
    // flight at the end (3 hops of ~1.1 ms at one packet per ms).
    let in_flight = f.tx_packets - f.rx_packets - errors;
    assert!(in_flight <= 4, "{in_flight} packets unaccounted for");
}

#[test]
fn unreachable_destination_is_a_no_route_drop() {
    let text = "duration_s = 2\n[nodes]\ncount = 3\n[[links]]\na = 0\nb = 1\nbandwidth_mbps = 1\ndelay_ms = 1\n\
                [[flows]]\nkind = \"cbr\"\nsrc = 0\ndst = 2\ninterval_s = 0.5\n";
    let r = run(&Scenario::from_toml_str(text).unwrap());
    assert_eq!(r.flows[0].rx_packets, 0);
    assert_eq!(r.flows[0].drops["rtr.NRTE"], 4);
}

#[test]
fn the_udp_header_costs_air_time_only_when_asked() {
    // Saturated 1 Mb/s chain: goodput is capacity x payload / (payload + headers).
    let flow = "packet_size_bytes = 512\ninterval_s = 0.001";
    let ns2 = run(&chain(1.0, 10.0, flow, 20.0));
    let rfc = run(&chain(
        1.0,
        10.0,
        &format!("{flow}\nudp_header = true"),
        20.0,
    ));
    let ratio = rfc.flows[0].throughput_kbps / ns2.flows[0].throughput_kbps;
    let expected = (512.0 + HEADERS) / (512.0 + HEADERS + UDP_HEADER_BYTES as f64);
    assert!((ratio - expected).abs() < 0.002, "{ratio} vs {expected}");
}
