//! A node's pcap holds the datagrams that left or reached its interface, not
//! the ones it queued (issue 16): on a point-to-point chain whose middle queue
//! overflows, node 1's file holds each packet it forwarded or originated once
//! when sent and each packet from node 0 once when it arrived, and none of the
//! packets its queue dropped. Checked against the ns-2 trace of the same run.

use manetlab_core::{run_with_outputs, Scenario};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// (IP identification, UDP source port) of each record.
fn pcap_records(path: &Path) -> Vec<(u16, u16)> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        u32::from_le_bytes(b[20..24].try_into().unwrap()),
        228,
        "LINKTYPE_IPV4"
    );
    let mut at = 24;
    let mut out = Vec::new();
    while at < b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(b[at + 12..at + 16].try_into().unwrap()) as usize;
        assert_eq!(caplen, len, "whole datagrams");
        let ip = &b[at + 16..at + 16 + caplen];
        assert_eq!(ip[9], 17, "UDP");
        out.push((
            u16::from_be_bytes([ip[4], ip[5]]),
            u16::from_be_bytes([ip[20], ip[21]]),
        ));
        at += 16 + caplen;
    }
    out
}

#[test]
fn queued_and_dropped_packets_are_not_in_the_pcap() {
    let dir = std::env::temp_dir().join(format!("manetlab-pcap-iface-{}", std::process::id()));
    let mut text = String::from("duration_s = 6\n[nodes]\ncount = 3\n");
    text += "[[links]]\na = 0\nb = 1\nbandwidth_mbps = 2.0\ndelay_ms = 5\n";
    text += "[[links]]\na = 1\nb = 2\nbandwidth_mbps = 1.0\ndelay_ms = 5\nqueue_limit_pkts = 5\n";
    // 0 -> 2 through 1, and 1 -> 2: together 1.2 Mb/s into node 1's 1 Mb/s link.
    text +=
        "[[flows]]\nkind = \"cbr\"\nsrc = 0\ndst = 2\npacket_size_bytes = 512\nrate_kbps = 600\n";
    text +=
        "[[flows]]\nkind = \"cbr\"\nsrc = 1\ndst = 2\npacket_size_bytes = 512\nrate_kbps = 600\n";
    text += "[outputs]\ntrace = \"old\"\ntrace_levels = [\"agt\", \"ifq\"]\npcap_nodes = [1]\n";
    let r = run_with_outputs(&Scenario::from_toml_str(&text).unwrap(), Some(&dir)).unwrap();
    let queue_drops: u64 = r.flows.iter().map(|f| f.drops.values().sum::<u64>()).sum();
    assert!(queue_drops > 50, "node 1's queue overflows: {queue_drops}");

    // From the ns-2 trace: uids node 1 dropped at its queue, uids of flow 1 it originated.
    let trace = std::fs::read_to_string(dir.join("trace.tr")).unwrap();
    let (mut dropped, mut originated) = (BTreeSet::new(), BTreeSet::new());
    for line in trace.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let uid = (f[5].parse::<u64>().unwrap() & 0xffff) as u16;
        match (f[0], f[2], f[3]) {
            ("D", "_1_", "IFQ") => {
                dropped.insert(uid);
            }
            ("s", "_1_", "AGT") => {
                originated.insert(uid);
            }
            _ => {}
        }
    }
    let mut times: BTreeMap<u16, usize> = BTreeMap::new();
    let mut ports: BTreeMap<u16, u16> = BTreeMap::new();
    for (id, port) in pcap_records(&dir.join("node1.pcap")) {
        *times.entry(id).or_default() += 1;
        ports.insert(id, port);
    }
    // Packets still waiting in node 1's queue when the run ends were neither sent nor dropped.
    let mut still_queued = 0;
    for (&id, &n) in &times {
        let own = ports[&id] == 50_001;
        assert_eq!(
            own,
            originated.contains(&id),
            "flow 1 (port 50001) is node 1's own"
        );
        match (own, dropped.contains(&id), n) {
            (true, false, 1) => {}  // sent
            (false, false, 2) => {} // arrived, then sent on
            (false, true, 1) => {}  // arrived, then dropped at the queue
            (false, false, 1) => still_queued += 1,
            other => panic!("uid {id}: (own, dropped, records) = {other:?}"),
        }
    }
    still_queued += originated
        .iter()
        .filter(|u| !dropped.contains(u) && !times.contains_key(u))
        .count();
    assert!(
        still_queued <= 5,
        "only what the 5-packet queue holds at the end is unaccounted: {still_queued}"
    );
    assert!(times.len() > 500);
    std::fs::remove_dir_all(&dir).unwrap();
}
