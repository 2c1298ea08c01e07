//! FRN (paper 003) end to end: slotted MAC with echo acknowledgement, lifetime,
//! link-failure detection and multi-route routing over the radio (docs/frn.md).

use manetlab_core::world::Simulator;
use manetlab_core::Scenario;

/// A 10 ms slot: slot index of a log time.
fn slot(t: manetlab_core::sim::SimTime) -> u64 {
    t.as_nanos() / 10_000_000
}

fn sim(toml: &str) -> Simulator {
    let s = Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    Simulator::new(&s)
}

/// FRN over `nodes` placed as given; `extra` adds sections.
fn frn(positions: &str, count: u32, flows: &str, extra: &str, mac_frn: &str) -> String {
    format!(
        "seed = 3\nduration_s = 20\n[nodes]\ncount = {count}\nplacement = {{ kind = \"explicit\", positions_m = {positions} }}\n\
         [radio]\n[mac]\nkind = \"frn\"\n[mac.frn]\n{mac_frn}\n[routing]\nprotocol = \"frn\"\n{flows}\n{extra}"
    )
}

const CHAIN4: &str = "[[0, 0], [200, 0], [400, 0], [600, 0]]";

fn cbr(src: u32, dst: u32, start_s: f64, n: u32) -> String {
    format!("[[flows]]\nkind = \"cbr\"\nsrc = {src}\ndst = {dst}\nstart_s = {start_s}\ninterval_s = 0.5\nmax_packets = {n}\n")
}

#[test]
fn static_chain_delivers_with_one_echo_per_hop() {
    let mut s = sim(&frn(CHAIN4, 4, &cbr(0, 3, 3.0, 5), "", ""));
    s.run_to_end();
    let r = s.results();
    let f = &r.flows[0];
    assert_eq!((f.tx_packets, f.rx_packets, f.dropped_packets), (5, 5, 0), "{f:?}");
    // 0 and 1 hear their packet relayed (echo); 2 gets the destination's link ACK.
    let m = |n| s.frn_mac(n).unwrap();
    assert_eq!((m(0).echoes, m(1).echoes, m(2).echoes), (5, 5, 0));
    assert_eq!(m(2).link_acks, 5);
    for n in 0..4 {
        assert_eq!(m(n).duplicates, 0, "node {n} saw a resend");
    }
    assert!(r.nodes.iter().all(|n| n.mac_retries == 0), "no resends on a clean chain");
}
