//! Issue 6: the 50-node scenario of Broch et al. (MobiCom 1998) at pause 900 s
//! delivers at least 95% of CBR packets with AODV and with DSR. The full table
//! (three protocols, pause 0/300/900 s) is docs/validation/routing.md.

mod common;

use common::broch;
use manetlab_core::{run, Scenario};

fn pdr(protocol: &str) -> f64 {
    let s = Scenario::from_toml_str(&broch::scenario(protocol, 900.0, 1, 900.0)).unwrap();
    let r = run(&s);
    let (tx, rx) = r.flows.iter().fold((0u64, 0u64), |(a, b), f| {
        (a + f.tx_packets, b + f.rx_packets)
    });
    assert!(tx > 25_000, "10 flows × 4 packets/s for ~800 s: {tx}");
    rx as f64 / tx as f64
}

#[test]
fn aodv_delivers_at_least_95_percent() {
    let p = pdr("aodv");
    println!("AODV PDR at pause 900 s: {p:.4}");
    assert!(p >= 0.95, "{p}");
}

#[test]
fn dsr_delivers_at_least_95_percent() {
    let p = pdr("dsr");
    println!("DSR PDR at pause 900 s: {p:.4}");
    assert!(p >= 0.95, "{p}");
}
