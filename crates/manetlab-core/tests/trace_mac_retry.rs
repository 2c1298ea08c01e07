//! `D … MAC RET` trace lines of frames the 802.11 MAC gives up on (issue 10).
//!
//! ns-2.35's `Mac802_11::RetransmitRTS` discards the RTS and then the data frame
//! (`discard(…, DROP_MAC_RETRY_COUNT_EXCEEDED)`, mac-802_11.cc:1280–1295), and
//! `RetransmitDATA` the data frame (1378), each traced `D … MAC RET`, after the
//! routing agent's `xmit_failure_` callback has taken a copy of the packet back.
//! The data line shows the packet without its MAC header (the MAC subtracted it
//! before the callback) and the MAC header of the frame (duration SIFS + ACK,
//! receiver, transmitter, IP). Values below are those of ns-2.35 traces of the
//! same frames (`manetlab export-ns2` + `ns run.tcl`, 1 Mb/s, ns-2 defaults):
//! a 512-byte CBR packet is 532 B, its RTS announces 0x14ee µs, its frame 0x13a µs.
//! The ARP case has no ns-2 run (ns-2 has no link outage); its fields are those of
//! ns-2's `s MAC` ARP lines, which its discard does not change.

mod common;

use manetlab_core::RunResult;

fn run(name: &str, text: &str) -> (RunResult, Vec<String>) {
    common::traced::run_traced(&format!("macret-{name}"), text)
}

/// A 3-node chain 200 m apart whose relay leaves for good at 3 s (out of range
/// of both ends), CBR 0 -> 2, ns-2 traces at every level.
fn chain(routing: &str, mac: &str) -> String {
    format!(
        r#"
        duration_s = 6
        [nodes]
        count = 3
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        {routing}
        {mac}
        [mobility]
        model = "scripted"
        nodes = [ {{ node = 1, moves = [ {{ time_s = 3, dest_m = [200, 900], speed_mps = 2000 }} ] }} ]
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 2
        packet_size_bytes = 512
        interval_s = 0.05
        [outputs]
        trace = "old"
        trace_levels = ["agt", "rtr", "ifq", "mac"]
        "#
    )
}

fn fields(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn is_ret(line: &str) -> bool {
    let f = fields(line);
    f[0] == "D" && f[3] == "MAC" && f[4] == "RET"
}

/// The line's text from the level on (what does not depend on the time).
fn from_level(line: &str) -> String {
    fields(line)[3..].join(" ")
}

#[test]
fn an_rts_give_up_handed_to_aodv_writes_the_rts_and_the_data_line_as_ns2() {
    let (r, lines) = run("aodv", &chain("[routing]\nprotocol = \"aodv\"", ""));
    let failed: u64 = r.nodes.iter().map(|n| n.mac_frames_failed).sum();
    assert!(
        failed > 0,
        "the relay's departure makes node 0's MAC give up"
    );
    let ret: Vec<usize> = (0..lines.len()).filter(|&i| is_ret(&lines[i])).collect();
    let rts: Vec<usize> = ret
        .iter()
        .copied()
        .filter(|&i| fields(&lines[i])[6] == "RTS")
        .collect();
    let data: Vec<usize> = ret
        .iter()
        .copied()
        .filter(|&i| fields(&lines[i])[6] != "RTS")
        .collect();
    // One data line per frame given up (the MAC counter), each after its RTS line:
    // every give-up here is an RTS that found no CTS.
    assert_eq!(data.len() as u64, failed);
    assert_eq!(rts.len(), data.len());
    for (&a, &b) in rts.iter().zip(&data) {
        assert!(a < b);
        let (fa, fb) = (fields(&lines[a]), fields(&lines[b]));
        assert_eq!((fa[1], fa[2]), (fb[1], fb[2]), "same time, same node");
        // The RTS is traced as sent: uid 0, 44 B, its duration, RA, TA, no ether type.
        let node = fa[2].trim_matches('_');
        let ra = fields(&lines[b])[9];
        assert_eq!(
            from_level(&lines[a]),
            format!("MAC RET 0 RTS 44 [14ee {ra} {node} 0]")
        );
        assert!(
            lines[a].ends_with("] "),
            "ns-2's trailing space after a MAC header"
        );
    }
    // The first give-up is node 0's frame to relay 1: the packet at 532 B (no
    // MAC header), the data frame's header, IP 0 -> 2 via 1, CBR seq, 0 hops.
    let first = fields(&lines[data[0]]);
    assert_eq!(first[2], "_0_");
    let uid = first[5];
    let tail = first[6..].join(" ");
    assert!(
        tail.starts_with("cbr 532 [13a 1 0 800] ------- [0:"),
        "{tail}"
    );
    assert!(tail.contains(" 2:") && tail.ends_with("] 0 0"), "{tail}");
    let ip: Vec<&str> = first[13..17].to_vec();
    // TTL 30: ns-2's AODV gives the unicast packets it originates NETWORK_DIAMETER.
    assert_eq!(
        (ip[2], ip[3].trim_end_matches(']')),
        ("30", "1"),
        "TTL and next hop: {ip:?}"
    );
    // ns-2's order: the RTS line, then routing's callback (AODV drops the packet
    // `CBK`, or repairs), then the data line; no second line for the packet at RET.
    let same: Vec<&String> = lines
        .iter()
        .filter(|l| fields(l)[5] == uid && fields(l)[0] == "D")
        .collect();
    assert_eq!(same.iter().filter(|l| is_ret(l)).count(), 1, "{same:?}");
    // The summary counts ends only: AODV (ns-2's rules) ends what the MAC hands
    // back as `rtr.CBK`, never `mac.RET`; the trace's RET lines are not ends.
    assert!(r
        .nodes
        .iter()
        .all(|n| n.drops.get("mac.RET").copied().unwrap_or(0) == 0));
    let cbk: u64 = r
        .nodes
        .iter()
        .map(|n| n.drops.get("rtr.CBK").copied().unwrap_or(0))
        .sum();
    assert!(cbk > 0);
}

#[test]
fn a_data_give_up_without_rts_writes_exactly_one_line_which_static_routing_ends() {
    // No RTS (threshold above the frame): the data frame itself runs out of retries.
    let (r, lines) = run("static", &chain("", "[mac]\nrts_threshold_bytes = 3000"));
    let failed: u64 = r.nodes.iter().map(|n| n.mac_frames_failed).sum();
    assert!(failed > 0);
    let ret: Vec<&String> = lines.iter().filter(|l| is_ret(l)).collect();
    assert_eq!(
        ret.len() as u64,
        failed,
        "one line per frame given up, no RTS line"
    );
    for l in &ret {
        let f = fields(l);
        assert_eq!(f[2], "_0_");
        assert!(
            f[6..]
                .join(" ")
                .starts_with("cbr 532 [13a 1 0 800] ------- [0:"),
            "{l}"
        );
    }
    // Static routing drops what the MAC hands back, so here each line is a packet's
    // end: the summary's `mac.RET` drops are exactly the trace's lines.
    let ends: u64 = r
        .nodes
        .iter()
        .map(|n| n.drops.get("mac.RET").copied().unwrap_or(0))
        .sum();
    assert_eq!(ends, failed);
}

#[test]
fn without_the_mac_trace_no_ret_line_is_written() {
    // ns-2 gives the MAC a drop trace only with `macTrace ON`.
    let text = chain("[routing]\nprotocol = \"aodv\"", "")
        .replace(r#"["agt", "rtr", "ifq", "mac"]"#, r#"["agt", "rtr"]"#);
    let (r, lines) = run("nomac", &text);
    assert!(r.nodes.iter().map(|n| n.mac_frames_failed).sum::<u64>() > 0);
    assert!(!lines.iter().any(|l| fields(l)[3] == "MAC"));
}

#[test]
fn an_arp_reply_given_up_is_traced_whole_and_ends_nothing() {
    // Node 1 answers node 0's ARP request, but the link fails just before its
    // reply's RTS: seven RTS, then the RTS and the reply are discarded. ns-2's ARP
    // sets no routing callback, so its MAC keeps the header on the frame (86 B).
    let text = two_nodes(2.0, "", "down_s = 1.0009, up_s = 1.5");
    let (r, lines) = run("arp", &text);
    let ret: Vec<String> = lines
        .iter()
        .filter(|l| is_ret(l))
        .map(|l| format!("{} {}", fields(l)[2], from_level(l)))
        .collect();
    assert_eq!(
        ret,
        [
            "_1_ MAC RET 0 RTS 44 [52e 0 1 0]",
            "_1_ MAC RET 0 ARP 86 [13a 0 1 806] ------- [REPLY 1/1 0/0]"
        ]
    );
    assert_eq!(r.nodes[1].mac_frames_failed, 1);
    // An ARP message is no packet: nothing ends at node 1.
    assert_eq!(r.nodes[1].drops.values().sum::<u64>(), 0);
    assert_eq!(r.nodes[1].dropped_packets, 0);
}

/// Two nodes, AODV: node 0's request reaches node 1, node 1 resolves node 0 with
/// ARP, and the link fails right after the ARP reply, before node 1's route reply
/// goes out; the MAC gives the reply up (7 RTS without CTS).
fn reply_lost(rules: &str) -> (RunResult, Vec<String>) {
    let text = two_nodes(
        1.4,
        &format!("[routing]\nprotocol = \"aodv\"\n{rules}"),
        "down_s = 1.0041",
    );
    run(&format!("rrep{}", rules.len()), &text)
}

/// Two nodes 200 m apart, CBR 0 → 1 from 1 s (512 B every 0.5 s), the link
/// between them out as `outage` says, every trace level; `routing`: extra
/// sections (none: static routes).
fn two_nodes(duration_s: f64, routing: &str, outage: &str) -> String {
    format!(
        r#"
        duration_s = {duration_s}
        [nodes]
        count = 2
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        {routing}
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 1
        packet_size_bytes = 512
        interval_s = 0.5
        start_s = 1.0
        [faults]
        link_outages = [{{ a = 0, b = 1, {outage} }}]
        [outputs]
        trace = "old"
        trace_levels = ["agt", "rtr", "ifq", "mac"]
    "#
    )
}

#[test]
fn an_aodv_reply_given_up_ends_at_the_mac_as_in_ns2() {
    // ns-2's AODV sets the `xmit_failure_` callback only on data (`rt_resolve`),
    // so its reply given up by the MAC is the MAC's `RET` line (the whole frame,
    // 44 + 58 B) and nothing more: no `CBK` line from routing, and in our
    // accounting the packet ends once, as `mac.RET`.
    let (r, lines) = reply_lost("");
    let ret: Vec<String> = lines
        .iter()
        .filter(|l| is_ret(l) && fields(l)[2] == "_1_")
        .map(|l| from_level(l))
        .collect();
    let replies: Vec<&String> = ret.iter().filter(|l| l.contains(" AODV ")).collect();
    assert!(!replies.is_empty(), "{ret:?}");
    for l in &replies {
        assert!(
            l.contains(" AODV 102 [13a 0 1 800] ") && l.ends_with("(REPLY)"),
            "{l}"
        );
    }
    assert_eq!(
        ret.len(),
        2 * replies.len(),
        "an RTS line before each reply line: {ret:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| fields(l)[0] == "D" && fields(l)[4] == "CBK"),
        "no routing drop line"
    );
    let n1 = &r.nodes[1];
    assert_eq!(
        n1.ctrl_drops.get("mac.RET").copied().unwrap_or(0),
        replies.len() as u64,
        "{:?}",
        n1.ctrl_drops
    );
    assert_eq!(
        n1.ctrl_drops.values().sum::<u64>(),
        replies.len() as u64,
        "one end per reply: {:?}",
        n1.ctrl_drops
    );
    assert_eq!(n1.mac_frames_failed, replies.len() as u64);
    // Nothing else ends there (no data reached node 1's queue).
    assert_eq!(n1.dropped_packets, 0);
}

#[test]
fn under_rfc_rules_the_reply_goes_back_to_aodv_which_ends_it_at_the_retry_limit() {
    // RFC 3561 rules hand every frame back to routing; AODV drops a control packet
    // it cannot send as `RET` (one end per packet, no second trace line).
    let (r, lines) = reply_lost("[routing.aodv]\nrules = \"rfc3561\"");
    let replies = lines
        .iter()
        .filter(|l| is_ret(l) && fields(l)[2] == "_1_" && fields(l)[6] == "AODV")
        .count() as u64;
    assert!(replies > 0);
    assert!(!lines
        .iter()
        .any(|l| fields(l)[0] == "D" && fields(l)[4] == "CBK"));
    assert_eq!(
        r.nodes[1].ctrl_drops.get("mac.RET").copied().unwrap_or(0),
        replies
    );
    assert_eq!(r.nodes[1].ctrl_drops.values().sum::<u64>(), replies);
}
