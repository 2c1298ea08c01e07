//! Random link failures as paper 003 means them (issue 37): links, not pairs.
//! The Must show: a 4 × 5 grid at 200 m with failures at 0.01/s of mean 10 s
//! for 300 s fails only nodes within reception range; `scope = "pairs"` gives
//! back the failures of the code before scopes (golden numbers taken from it).

use manetlab_core::faults::{FailureCause, FaultKind, LinkEffect};
use manetlab_core::metrics::RunResult;
use manetlab_core::phy::RadioParams;
use manetlab_core::{run, Scenario};

fn grid(failures: &str) -> RunResult {
    let toml = format!(
        "seed = 1\nduration_s = 300\n[nodes]\ncount = 20\n\
         placement = {{ kind = \"grid\", columns = 5, spacing_m = 200 }}\n[radio]\n\
         [routing]\nprotocol = \"aodv\"\n\
         [faults.random_link_failures]\nrate_per_s = 0.01\nmean_duration_s = 10.0\nstart_s = 10.0\n{failures}"
    );
    run(&Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}")))
}

fn distance_m(a: u32, b: u32) -> f64 {
    let p = |n: u32| ((n % 5) as f64 * 200.0, (n / 5) as f64 * 200.0);
    let ((xa, ya), (xb, yb)) = (p(a), p(b));
    (xa - xb).hypot(ya - yb)
}

#[test]
fn the_grid_fails_links_in_reception_range_only() {
    let range_m = RadioParams::default().rx_range_m();
    assert!((range_m - 250.0).abs() < 0.5, "ns-2's WaveLAN: {range_m}");
    let r = grid("");
    let failures = r
        .failures
        .as_ref()
        .expect("a run with [faults] has the table");
    // Paper 003's Fig. 7 numbers on seed 1: 99 of the 524 pair failures fall
    // on the grid's 31 links (the pairs 200 m apart).
    assert_eq!(failures.len(), 99);
    for f in failures {
        let (a, b) = (f.a.0, f.b.expect("a link").0);
        assert!(
            distance_m(a, b) <= range_m,
            "{a}–{b}: {} m",
            distance_m(a, b)
        );
        assert_eq!(
            (f.kind, f.cause, f.effect),
            (
                FaultKind::LinkDown,
                FailureCause::Random,
                LinkEffect::Blocked
            )
        );
    }
    // The table and the event log agree: one failure per link_down event.
    let downs: Vec<_> = r
        .faults
        .iter()
        .filter(|e| e.kind == FaultKind::LinkDown)
        .collect();
    assert_eq!(downs.len(), failures.len());
    assert!(downs
        .iter()
        .zip(failures)
        .all(|(e, f)| e.time == f.time && e.a == f.a && e.b == f.b));
}

#[test]
fn scope_pairs_gives_back_the_old_failures() {
    let r = grid("scope = \"pairs\"\n");
    let downs: Vec<_> = r
        .faults
        .iter()
        .filter(|e| e.kind == FaultKind::LinkDown)
        .collect();
    let ups = r.faults.iter().filter(|e| e.kind == FaultKind::LinkUp);
    // Golden numbers of the code before scopes (main at 1adf814, examples/frn_grid.toml's
    // faults on seed 1): 524 failures and 510 repairs, and the sums of their times.
    assert_eq!(downs.len(), 524);
    assert_eq!(
        downs.iter().map(|e| e.time.as_nanos()).sum::<u64>(),
        78_367_336_217_931
    );
    assert_eq!(ups.clone().count(), 510);
    assert_eq!(
        ups.map(|e| e.time.as_nanos()).sum::<u64>(),
        79_282_454_094_565
    );
    let in_range = downs
        .iter()
        .filter(|e| distance_m(e.a.0, e.b.unwrap().0) <= 250.0)
        .count();
    let mid = downs
        .iter()
        .filter(|e| (250.0..=550.0).contains(&distance_m(e.a.0, e.b.unwrap().0)))
        .count();
    assert_eq!((in_range, mid), (99, 213));
    assert_eq!(r.failures.as_ref().unwrap().len(), 524);
}

#[test]
fn a_failed_lossy_link_still_takes_the_carrier() {
    // A chain 0–1–2 at 200 m: flows 0→1 and 1→2, and link 0–1 failed all
    // run long. Blocked, 1 never hears 0, and 0's frames (sensed, not decodable,
    // at 400 m) hit 2 as a hidden terminal; undecodable, 1 senses 0 and defers
    // to it (as 0 does to 1), so 1→2 meets no collision. 0→1 delivers nothing either way.
    let run_with = |effect: &str| {
        let toml = format!(
            "seed = 4\nduration_s = 30\n[nodes]\ncount = 3\n\
             placement = {{ kind = \"chain\", spacing_m = 200 }}\n[radio]\n[mac]\narp = false\n\
             [routing]\nprotocol = \"static\"\n\
             [[flows]]\nkind = \"cbr\"\nsrc = 0\ndst = 1\nstart_s = 1\ninterval_s = 0.01\npacket_size_bytes = 1000\n\
             [[flows]]\nkind = \"cbr\"\nsrc = 1\ndst = 2\nstart_s = 1\ninterval_s = 0.01\npacket_size_bytes = 1000\n\
             [faults.random_link_failures]\nrate_per_s = 1000.0\nmean_duration_s = 1e6\nlinks = [[0, 1]]\neffect = \"{effect}\"\n"
        );
        run(&Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}")))
    };
    let (blocked, lossy) = (run_with("blocked"), run_with("undecodable"));
    for r in [&blocked, &lossy] {
        assert_eq!(r.flows[0].rx_packets, 0);
        assert_eq!(r.failures.as_ref().unwrap().len(), 1);
    }
    assert_eq!(
        lossy.failures.as_ref().unwrap()[0].effect,
        LinkEffect::Undecodable
    );
    let (b, l) = (blocked.flows[1].rx_packets, lossy.flows[1].rx_packets);
    // (collisions at 2, MAC retries of 1): seed 4 gives (60, 259) blocked.
    let c = |r: &RunResult| (r.nodes[2].mac_collisions, r.nodes[1].mac_retries);
    let (cb, cl) = (c(&blocked), c(&lossy));
    assert!(cb.0 > 0 && cb.1 > 0, "blocked: a hidden terminal {cb:?}");
    assert_eq!(cl, (0, 0), "undecodable: 0 and 1 hear each other's carrier");
    assert!(l > b, "blocked {b}, undecodable {l}");
}
