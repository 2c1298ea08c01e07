//! TCP over point-to-point paths through the whole simulator: handshake and
//! file transfer, Floyd & Fall (1996) scripted drops, the Mathis et al. (1997)
//! throughput formula under random loss, fairness, traces and determinism.

use manetlab_core::metrics::FlowSummary;
use manetlab_core::{run, Scenario};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn flow0(text: &str) -> FlowSummary {
    run(&scenario(text)).flows.remove(0)
}

#[test]
fn handshake_then_file_transfer_completes() {
    let f = flow0(
        r#"
duration_s = 20
[nodes]
count = 2
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
kind = "ftp"
src = 0
dst = 1
start_s = 1
file_bytes = 100500
"#,
    );
    let t = f.tcp.as_ref().unwrap();
    assert_eq!(t.variant, "newreno");
    // ns-2 one-way agent: the SYN-like first packet and its ACK are 40 bytes: 2 · (320 µs + 10 ms).
    let est = t.established_s.unwrap() - 1.0;
    assert!(
        (est - 2.0 * (40.0 * 8.0 / 1e6 + 0.010)).abs() < 1e-9,
        "{est}"
    );
    assert_eq!(f.rx_bytes, 100_500);
    assert_eq!(f.tx_bytes, 100_500);
    assert_eq!(f.tx_packets, 101, "100 full segments and one of 500 bytes");
    assert_eq!(f.rx_packets, 101);
    assert_eq!((t.retransmissions, t.timeouts), (0, 0));
    assert_eq!(t.highest_ack_segs, 101);
    assert_eq!(t.highest_ack_bytes, 100_500);
    assert!(t.completion_s.unwrap() > 1.0 && t.completion_s.unwrap() < 3.0);
    // One ACK per segment plus the ACK of the first packet (ns-2 TCPSink acknowledges it too).
    assert_eq!(t.acks_sent, 102);
}

#[test]
fn handshake_switch_gives_syn_options_and_fin() {
    let f = flow0(
        r#"
duration_s = 20
[nodes]
count = 2
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
kind = "ftp"
src = 0
dst = 1
start_s = 1
file_bytes = 100500
tcp = { handshake = true }
"#,
    );
    let t = f.tcp.as_ref().unwrap();
    // SYN and SYN-ACK are 20 (IP) + 20 (TCP) + 4 (MSS option) = 44 bytes: 2 · (352 µs + 10 ms).
    let est = t.established_s.unwrap() - 1.0;
    assert!(
        (est - 2.0 * (44.0 * 8.0 / 1e6 + 0.010)).abs() < 1e-9,
        "{est}"
    );
    assert_eq!(f.rx_bytes, 100_500);
    assert_eq!((t.retransmissions, t.timeouts), (0, 0));
    // One ACK per segment; the handshake ACK is the sender's, the FIN gets FIN+ACK (not counted).
    assert_eq!(t.acks_sent, 101);
}

/// Floyd & Fall's setting, scaled: a fast access link into a 0.8 Mb/s, 50 ms
/// bottleneck; a 60-segment file; the listed segments are dropped once on the bottleneck.
fn ff(variant: &str, drops: &[u64]) -> FlowSummary {
    let drops: Vec<String> = drops.iter().map(|d| d.to_string()).collect();
    flow0(&format!(
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
    ))
}

#[test]
fn floyd_fall_drop_scenarios() {
    let mut table = Vec::new();
    for v in ["tahoe", "reno", "newreno", "sack", "fack"] {
        for n in 1..=4usize {
            let drops: Vec<u64> = [30, 32, 34, 36][..n].to_vec();
            let f = ff(v, &drops);
            let t = f.tcp.clone().unwrap();
            assert_eq!(f.rx_bytes, 60_000, "{v} with {n} drops delivers the file");
            table.push((
                v,
                n,
                t.timeouts,
                t.fast_retransmits,
                t.retransmissions,
                t.completion_s.unwrap(),
            ));
        }
    }
    for row in &table {
        println!("{row:?}");
    }
    let get = |v: &str, n: usize| *table.iter().find(|r| r.0 == v && r.1 == n).unwrap();
    for n in 1..=4 {
        // SACK and FACK recover every pattern with one fast retransmit and no timeout.
        for v in ["sack", "fack"] {
            let r = get(v, n);
            assert_eq!((r.2, r.3), (0, 1), "{v}, {n} drops: {r:?}");
        }
        // NewReno: one fast retransmit, one RTT per hole. ns-2's default restarts the timer
        // on the first partial ACK only (`newreno_changes1_` = 1, RFC 6582's "Impatient"
        // variant), so with 3 or 4 holes (3–4 RTTs > RTO) the timer expires once.
        let r = get("newreno", n);
        assert_eq!(
            (r.2, r.3),
            (u64::from(n >= 3), 1),
            "newreno, {n} drops: {r:?}"
        );
        // SACK/FACK retransmit only the dropped segments.
        assert_eq!(get("sack", n).4, n as u64);
        assert_eq!(get("fack", n).4, n as u64);
    }
    // One drop: everyone recovers without a timeout.
    for v in ["tahoe", "reno"] {
        assert_eq!(get(v, 1).2, 0, "{v}");
    }
    // Reno with three or four drops in one window times out (Floyd & Fall §4).
    assert!(get("reno", 3).2 >= 1);
    assert!(get("reno", 4).2 >= 1);
    // NewReno needs one RTT per hole; SACK/FACK repair several holes per RTT.
    assert!(get("sack", 4).5 < get("newreno", 4).5);
    assert!(get("fack", 4).5 < get("newreno", 4).5);
    assert!(get("newreno", 3).5 < get("reno", 3).5);
    // Tahoe goes back N: it resends segments that were not lost.
    assert!(get("tahoe", 2).4 > 2);
}

fn mathis_run(p: f64) -> (f64, f64) {
    let f = flow0(&format!(
        r#"
seed = 7
duration_s = 400
[nodes]
count = 2
[[links]]
a = 0
b = 1
bandwidth_mbps = 20
delay_ms = 50
queue_limit_pkts = 1000
error_rate = {p}
[[flows]]
kind = "ftp"
src = 0
dst = 1
tcp = {{ window_pkts = 10000 }}
"#
    ));
    let rtt = 2.0 * 0.050 + (1040.0 + 40.0) * 8.0 / 20e6;
    let mathis_kbps = 1000.0 * 8.0 / rtt * (1.5f64).sqrt() / p.sqrt() / 1000.0;
    (f.throughput_kbps, mathis_kbps)
}

#[test]
fn newreno_throughput_follows_mathis_under_random_loss() {
    for p in [0.001, 0.01, 0.03] {
        let (got, mathis) = mathis_run(p);
        let rel = got / mathis;
        println!("p = {p}: {got:.1} kbit/s vs Mathis {mathis:.1} (ratio {rel:.3})");
        assert!(
            (0.75..=1.25).contains(&rel),
            "p = {p}: {got} vs {mathis} kbit/s"
        );
    }
}

/// Two NewReno flows with slightly different access delays share a 5 Mb/s,
/// 10 ms bottleneck (queue 50) for 200 s; windows (100) do not limit them.
/// Note: with drop-tail and window-limited flows a deterministic simulator
/// shows Floyd & Jacobson's (1992) phase effects (one flow locked out); ns-2
/// breaks them with a random sender `overhead_`, which we do not model yet.
#[test]
fn two_newreno_flows_share_a_bottleneck_fairly() {
    let r = run(&scenario(
        r#"
duration_s = 200
[nodes]
count = 4
[[links]]
a = 0
b = 2
bandwidth_mbps = 10
delay_ms = 1
[[links]]
a = 1
b = 2
bandwidth_mbps = 10
delay_ms = 2
[[links]]
a = 2
b = 3
bandwidth_mbps = 5
delay_ms = 10
queue_limit_pkts = 50
[[flows]]
kind = "ftp"
src = 0
dst = 3
tcp = { window_pkts = 100 }
[[flows]]
kind = "ftp"
src = 1
dst = 3
start_s = 0.5
tcp = { window_pkts = 100 }
"#,
    ));
    let x: Vec<f64> = r.flows.iter().map(|f| f.throughput_kbps).collect();
    let jain = (x[0] + x[1]).powi(2) / (2.0 * (x[0] * x[0] + x[1] * x[1]));
    println!("throughputs {x:?} kbit/s, Jain {jain:.4}");
    assert!(jain >= 0.95, "Jain index {jain} for {x:?}");
    // Together they nearly fill the bottleneck (payload share of 5 Mb/s is 1000/1040).
    assert!(x[0] + x[1] > 0.9 * 5000.0 * 1000.0 / 1040.0, "{x:?}");
    assert!(
        r.flows
            .iter()
            .all(|f| f.tcp.as_ref().unwrap().fast_retransmits > 0),
        "the flows do congest the queue"
    );
}

#[test]
fn traces_are_recorded_when_asked_and_runs_are_deterministic() {
    let text = r#"
duration_s = 10
[nodes]
count = 2
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 20
error_rate = 0.02
[[flows]]
kind = "ftp"
src = 0
dst = 1
transport = "sack"
tcp = { trace = true, delayed_ack = true }
"#;
    let a = run(&scenario(text));
    let b = run(&scenario(text));
    assert_eq!(a.to_json(), b.to_json(), "same seed, same bytes");
    let tr = a.flows[0].tcp.as_ref().unwrap().trace.as_ref().unwrap();
    let n = tr.t_s.len();
    assert!(n > 100);
    assert!([
        tr.cwnd_segs.len(),
        tr.ssthresh_segs.len(),
        tr.rto_s.len(),
        tr.srtt_s.len(),
        tr.backoff.len(),
        tr.seq_segs.len(),
        tr.ack_segs.len()
    ]
    .iter()
    .all(|&l| l == n));
    assert!(tr.t_s.windows(2).all(|w| w[0] <= w[1]));
    assert!(
        tr.ack_segs.windows(2).all(|w| w[0] <= w[1]),
        "cumulative ACK never goes back"
    );
    assert!(a.to_json().contains("\"cwnd_segs\""));
    assert!(a.flows[0].tcp.as_ref().unwrap().retransmissions > 0);
}

#[test]
fn stop_s_ends_the_file_and_the_connection_closes() {
    let f = flow0(
        r#"
duration_s = 20
[nodes]
count = 2
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
kind = "ftp"
src = 0
dst = 1
transport = "reno"
stop_s = 5
"#,
    );
    let t = f.tcp.as_ref().unwrap();
    assert!(f.tx_bytes > 100_000);
    assert_eq!(
        f.rx_bytes, f.tx_bytes,
        "everything handed down before stop_s arrives"
    );
    let done = t.completion_s.unwrap();
    assert!((5.0..5.5).contains(&done), "completion {done}");
    assert_eq!(t.highest_ack_bytes, f.tx_bytes);
}
