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
    assert_eq!(
        m.god_lines,
        SCEN.lines().filter(|l| l.contains("god_")).count()
    );
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
        assert!(
            err < 1e-5,
            "t = {t} s, node {node}: ns-2 {want:?}, ours {got:?} ({err} m apart)"
        );
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

#[test]
fn ns2_example_movement_and_cbrgen_traffic_run_unchanged() {
    use manetlab_core::scenario::FlowKind;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ns2_scene");
    let s = manetlab_core::Scenario::from_file(dir.join("ns2_example.toml")).unwrap();
    // cbr-50-10-4-512: ten CBR/UDP flows named as in the file, 512 bytes every 4 s ± 2 s.
    assert_eq!(s.flows.len(), 10);
    let t = s.traffic.as_ref().unwrap();
    assert_eq!((t.flows_from_file, t.ns2_text.is_none()), (Some(10), true));
    let f0 = &s.flows[0];
    assert_eq!(
        (f0.name.as_deref(), f0.src, f0.dst, f0.start_s),
        (Some("cbr_(0)"), 1, 2, 176.70898653413587)
    );
    for f in &s.flows {
        assert_eq!(f.kind, FlowKind::Cbr);
        assert_eq!(
            (f.packet_size_bytes, f.interval_s, f.jitter_s, f.max_packets),
            (Some(512), Some(4.0), 2.0, Some(10000))
        );
    }
    // The normalised form reads back to the same flows (the file is not added twice).
    // (Compared by node and name: serde_json's float parsing may move a start time by an ulp.)
    let again = manetlab_core::Scenario::from_json_str(&s.to_json()).unwrap();
    let pairs = |s: &manetlab_core::Scenario| {
        s.flows
            .iter()
            .map(|f| (f.name.clone(), f.src, f.dst))
            .collect::<Vec<_>>()
    };
    assert_eq!(pairs(&again), pairs(&s));
    assert_eq!(again.traffic.as_ref().unwrap().flows_from_file, Some(10));

    let r = manetlab_core::run(&s);
    let (tx, rx) = r.flows.iter().fold((0u64, 0u64), |(a, b), f| {
        (a + f.tx_packets, b + f.rx_packets)
    });
    // Each flow sends one packet per 4 s on average from its start to 900 s.
    let expected: f64 = s.flows.iter().map(|f| (900.0 - f.start_s) / 4.0).sum();
    assert!(
        (tx as f64 - expected).abs() < 0.05 * expected,
        "tx {tx}, expected about {expected:.0}"
    );
    assert!(
        rx as f64 > 0.8 * tx as f64,
        "AODV delivers most of this light load: {rx}/{tx}"
    );
}

fn with_traffic(
    traffic: &str,
    nodes: u32,
) -> Result<manetlab_core::Scenario, manetlab_core::ScenarioError> {
    let v = serde_json::json!({
        "duration_s": 300, "nodes": {"count": nodes}, "area": {"width_m": 670, "height_m": 670}, "radio": {},
        "routing": {"protocol": "aodv"}, "traffic": {"ns2_file": "t.tcl", "ns2_text": traffic},
        "flows": [{"kind": "cbr", "src": 0, "dst": 1, "rate_kbps": 8}],
    });
    manetlab_core::Scenario::from_value(v)
}

#[test]
fn hand_written_tcp_traffic_file_becomes_an_ftp_flow() {
    let s = with_traffic(include_str!("fixtures/ns2_scene/cbr-3-test"), 3).unwrap();
    // The scenario's own flow first, then the file's: cbr_(0) 0 -> 2, then the FTP over Agent/TCP (Tahoe) 1 -> 2.
    assert_eq!(s.flows.len(), 3);
    assert_eq!(
        (s.flows[1].name.as_deref(), s.flows[1].src, s.flows[1].dst),
        (Some("cbr_(0)"), 0, 2)
    );
    let ftp = &s.flows[2];
    assert_eq!(
        (ftp.name.as_deref(), ftp.src, ftp.dst, ftp.start_s),
        (Some("ftp"), 1, 2, 150.0)
    );
    assert_eq!(ftp.transport.as_deref(), Some("tahoe"));
}

#[test]
fn traffic_errors_name_the_file_line_and_what_is_allowed() {
    let cbr = include_str!("fixtures/ns2_scene/cbr-3-test");
    // A node the scenario does not have: named with the file's line of the application.
    let e = with_traffic(cbr, 2).unwrap_err();
    assert_eq!(e.path, "traffic.ns2_file (\"t.tcl\")");
    assert!(
        e.message
            .starts_with("line 8: cbr_(0) (becomes flows[1].dst): node 2 does not exist"),
        "{e}"
    );
    // A start after the end of the run.
    let late = cbr.replace("at 127.93667922166023", "at 400");
    let e = with_traffic(&late, 3).unwrap_err();
    assert!(
        e.message
            .contains("cbr_(0) (becomes flows[1].start_s): 400 is not before the end of the run"),
        "{e}"
    );
    // A statement we do not model.
    let e = with_traffic(&format!("{cbr}\n$ns_ at 10 \"$ftp produce 100\"\n"), 3).unwrap_err();
    assert!(e.message.starts_with("line 26: not a traffic event"), "{e}");
    let e = with_traffic("# nothing\n", 3).unwrap_err();
    assert!(e.message.contains("defines no flows"), "{e}");
    let v =
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "traffic": {"ns2_file": "x"}});
    let e = manetlab_core::Scenario::from_value(v).unwrap_err();
    assert!(
        e.path == "traffic.ns2_file" && e.message.contains("was not read"),
        "{e}"
    );
    let v = serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "traffic": {"file": "x"}});
    let e = manetlab_core::Scenario::from_value(v).unwrap_err();
    assert_eq!(
        e.to_string(),
        "traffic.file: unknown key (allowed here: ns2_file, ns2_text, flows_from_file, node_switches_from_file, cbrgen, flows_generated)"
    );
    let v = serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "traffic": {"flows_from_file": 3}});
    let e = manetlab_core::Scenario::from_value(v).unwrap_err();
    assert!(
        e.path == "traffic.flows_from_file" && e.message.contains("3 is out of range"),
        "{e}"
    );
}

#[test]
fn an_odd_traffic_file_name_stays_on_one_line() {
    // Found by fuzzing: the file name is part of the error's key path, so it is escaped.
    let v = serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "traffic": {"ns2_file": "a\nb", "ns2_text": "# none\n"}});
    let e = manetlab_core::Scenario::from_value(v).unwrap_err();
    assert_eq!(e.path, "traffic.ns2_file (\"a\\nb\")");
    assert!(!e.to_string().contains('\n'), "{e}");
}
