//! Saturation throughput of n stations in range against Bianchi's model (issue 3).
//! The model assumes the standard DCF, so the runs switch ns-2's departures off
//! (`STANDARD_MAC_KEYS`); ns-2's own behaviour is compared in
//! docs/validation/wireless.md.

mod common;

use common::bianchi::{saturation, saturation_scenario};
use manetlab_core::mac::MacParams;
use manetlab_core::phy::SPEED_OF_LIGHT_MPS;
use manetlab_core::wire::IP_HEADER_BYTES;
use manetlab_core::{run, Scenario};

const PAYLOAD: u32 = 1000;

fn simulated_bps(n: u32, rts_cts: bool) -> f64 {
    let duration_s = 200.0;
    let s = Scenario::from_toml_str(&saturation_scenario(
        n, rts_cts, PAYLOAD, duration_s, 1, true,
    ))
    .unwrap();
    let r = run(&s);
    r.flows.iter().map(|f| f.rx_bytes as f64 * 8.0).sum::<f64>() / duration_s
}

fn check(rts_cts: bool) {
    let mac = MacParams::standard();
    let msdu = PAYLOAD + IP_HEADER_BYTES; // ns-2's Agent/UDP: no UDP header on the wire
    for n in [5, 10, 20, 50] {
        let model = saturation(n, &mac, rts_cts, msdu, PAYLOAD, 5.0 / SPEED_OF_LIGHT_MPS);
        let sim = simulated_bps(n, rts_cts);
        let err = (sim - model.throughput_bps) / model.throughput_bps;
        println!("rts_cts={rts_cts} n={n}: sim {:.1} kbit/s, Bianchi {:.1} kbit/s (τ = {:.4}, p = {:.3}), error {:+.2}%", sim / 1e3, model.throughput_bps / 1e3, model.tau, model.p, 100.0 * err);
        assert!(err.abs() < 0.03, "n={n}: {sim} vs {}", model.throughput_bps);
    }
}

#[test]
fn basic_access_matches_bianchi_within_3_percent() {
    check(false);
}

#[test]
fn rts_cts_matches_bianchi_within_3_percent() {
    check(true);
}
