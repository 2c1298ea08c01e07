//! ns-2.35's own scenario files (Debian `ns2-examples`, copied unchanged into
//! tests/fixtures/ns2_scene/) read as they are, checked against what real ns-2.35
//! computes for them.

use manetlab_core::mobility::read_ns2_movement;
use manetlab_core::sim::SimTime;

const SCEN: &str = include_str!("fixtures/ns2_scene/scen-670x670-50-600-20-0");
/// Made by fixtures/ns2_scene/positions.tcl with /usr/bin/ns (ns-2.35).
const NS2_POSITIONS: &str = include_str!("fixtures/ns2_scene/scen-670x670-50-600-20-0.positions");

#[test]
fn ns2_scenario_file_positions_match_ns2_at_ten_times() {
    let m = read_ns2_movement(SCEN).expect("ns-2.35's own movement file reads unchanged");
    assert_eq!(m.node_count(), 50);
    // `set god_ [God instance]` plus every `$god_ set-dist` line, direct or scheduled.
    assert_eq!(m.god_lines, SCEN.lines().filter(|l| l.contains("god_")).count());
    let tr = m.trajectories(50).unwrap();
    let mut times = Vec::new();
    let mut worst = 0.0f64;
    for line in NS2_POSITIONS.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (t, node): (f64, usize) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let want = [f[2].parse::<f64>().unwrap(), f[3].parse::<f64>().unwrap()];
        let got = tr[node].position_at(SimTime::from_secs_f64(t));
        let err = (got[0] - want[0]).hypot(got[1] - want[1]);
        // ns-2 printed %.6f; our times are whole nanoseconds (at 20 m/s, 0.5 ns = 1e-8 m).
        assert!(err < 1e-5, "t = {t} s, node {node}: ns-2 {want:?}, ours {got:?} ({err} m apart)");
        worst = worst.max(err);
        if times.last() != Some(&t) {
            times.push(t);
        }
    }
    assert_eq!(times.len(), 10, "ten sampled times");
    assert_eq!(NS2_POSITIONS.lines().count(), 500, "50 nodes at each time");
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn ns2_three_node_scenario_file_reads_unchanged() {
    let text = include_str!("fixtures/ns2_scene/scen-3-test");
    let m = read_ns2_movement(text).unwrap();
    assert_eq!(m.node_count(), 3);
    assert_eq!(m.god_lines, 4);
    assert_eq!(m.initial_m[2], [591.256560093833, 199.373306816804]);
}
