//! `D … MAC DUP` trace lines of data frames received twice (issue 10).
//!
//! When a receiver's ACK is lost, the sender retransmits a data frame the
//! receiver already has. ns-2.35's `Mac802_11::recvDATA` acknowledges it again,
//! then finds its sequence number in the per-sender cache and discards it,
//! `discard(p, DROP_MAC_DUPLICATE)` (mac-802_11.cc:1956–1958), traced
//! `D … MAC DUP`. By then `recvDATA` has taken the MAC header off and counted the
//! hop, so the line shows the frame as its `r … MAC` line does. ns-2 trace of the
//! 4-hop chain below (AODV, no RTS, `manetlab export-ns2` + `ns run.tcl`, seed 1):
//! `D 0.097810829 _4_ MAC  DUP 2 tcp 1040 [13a 4 3 800] ------- [0:0 4:0 27 4] [1 0] 4 0`
//! next to its `r 0.078812163 _4_ MAC  --- 2 tcp 1040 [13a 4 3 800] …`.
//! Measured over seeds 1–10 (`manetlab crosscheck … --mac-trace`): 199.6 `DUP`
//! lines per run in ours, 204.7 in ns-2.

mod common;

use manetlab_core::{RunResult, Scenario};

fn run(name: &str, text: &str) -> (RunResult, Vec<String>) {
    common::traced::run_traced(&format!("macdup-{name}"), text)
}

/// A 5-node chain 200 m apart, one TCP flow end to end, no RTS (hidden
/// terminals lose ACKs), MAC traced.
fn chain(rts_threshold_bytes: u32) -> String {
    untraced(rts_threshold_bytes) + "\n[outputs]\ntrace = \"old\"\ntrace_levels = [\"mac\"]\n"
}

fn untraced(rts_threshold_bytes: u32) -> String {
    format!(
        r#"
        duration_s = 10
        seed = 1
        [nodes]
        count = 5
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        [mac]
        rts_threshold_bytes = {rts_threshold_bytes}
        [routing]
        protocol = "aodv"
        [[flows]]
        kind = "ftp"
        src = 0
        dst = 4
        transport = "newreno"
        "#
    )
}

fn fields(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn is_dup(line: &str) -> bool {
    let f = fields(line);
    f[0] == "D" && f[3] == "MAC" && f[4] == "DUP"
}

#[test]
fn a_data_frame_received_twice_is_traced_dup_as_ns2s_received_line() {
    let (r, lines) = run("norts", &chain(3000));
    let dups: u64 = r.nodes.iter().map(|n| n.mac_duplicates).sum();
    assert!(
        dups > 0,
        "lost ACKs on a chain without RTS bring retransmitted duplicates"
    );
    let dup_lines: Vec<&String> = lines.iter().filter(|l| is_dup(l)).collect();
    // One line per duplicate the MAC counted, at the node that received it.
    assert_eq!(dup_lines.len() as u64, dups);
    for n in &r.nodes {
        let tag = format!("_{}_", n.node);
        assert_eq!(
            dup_lines.iter().filter(|l| fields(l)[2] == tag).count() as u64,
            n.mac_duplicates,
            "node {}",
            n.node
        );
    }
    for d in &dup_lines {
        let f = fields(d);
        // The same frame was received before at the same node: its `r … MAC`
        // line reads the same from the packet type on (MSDU size, MAC header,
        // IP and TCP fields), as ns-2 prints both after `recvDATA`'s strip.
        let uid = f[5];
        let earlier = lines
            .iter()
            .take_while(|l| !std::ptr::eq(*l, *d))
            .filter(|l| {
                let g = fields(l);
                g[0] == "r" && g[2] == f[2] && g[3] == "MAC" && g[5] == uid
            })
            .last()
            .unwrap_or_else(|| panic!("no earlier reception of {d}"));
        assert_eq!(fields(earlier)[6..], f[6..], "{d} vs {earlier}");
        assert!(
            f[6] == "tcp" || f[6] == "ack" || f[6] == "AODV" || f[6] == "ARP",
            "{d}"
        );
    }
}

#[test]
fn dup_lines_are_trace_only() {
    // The same run untraced gives the same results: a DUP line changes nothing.
    let (traced, _) = run("traced", &chain(3000));
    let plain = manetlab_core::run(
        &Scenario::from_toml_str(&untraced(3000)).unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(format!("{:?}", traced.flows), format!("{:?}", plain.flows));
    assert_eq!(format!("{:?}", traced.nodes), format!("{:?}", plain.nodes));
}
