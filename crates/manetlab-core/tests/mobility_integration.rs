//! Mobility and faults inside runs (issue 5, "Must show"): switched-off nodes
//! carry nothing and come back, failed links carry nothing, trajectories do not
//! depend on the flows (common random numbers), random waypoint runs are
//! deterministic, an ns-2 movement text drives positions, and bad `[mobility]` /
//! `[faults]` keys are reported with their key paths.

use manetlab_core::phy::RadioParams;
use manetlab_core::sim::SimTime;
use manetlab_core::{run, Scenario, Simulator};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn s(x: f64) -> SimTime {
    SimTime::from_secs_f64(x)
}

/// Received packets of flow `f` so far.
fn rx(sim: &Simulator, f: usize) -> u64 {
    sim.results().flows[f].rx_packets
}

fn drops(r: &manetlab_core::RunResult, node: usize, key: &str) -> u64 {
    r.nodes[node].drops.get(key).copied().unwrap_or(0)
}

/// Three nodes 200 m apart (each hears only its neighbours at 250 m range):
/// flow 0 goes 0 → 1 → 2 at 20 packets/s; flow 1 originates at the relay.
const CHAIN: &str = r#"
seed = 4
duration_s = 20
[nodes]
count = 3
placement = { kind = "chain", spacing_m = 200 }
[radio]
[[flows]]
kind = "cbr"
src = 0
dst = 2
start_s = 1.0
interval_s = 0.05
[[flows]]
kind = "cbr"
src = 1
dst = 2
start_s = 1.0
interval_s = 0.5
"#;

#[test]
fn a_switched_off_relay_carries_nothing_and_resumes_when_switched_on() {
    let text =
        format!("{CHAIN}\n[faults]\nnode_switches = [{{ node = 1, off_s = 6.0, on_s = 12.0 }}]\n");
    let mut sim = Simulator::new(&scenario(&text));
    sim.run_until(s(6.0));
    let before = rx(&sim, 0);
    assert!(
        before >= 95,
        "the chain works before the fault: {before} packets in 5 s"
    );
    sim.run_until(s(11.9));
    assert!(!sim.is_node_on(1));
    let during = rx(&sim, 0) - before;
    // At most a frame already in flight at 6 s gets through.
    assert!(during <= 1, "{during} packets crossed a switched-off relay");
    sim.run_until(s(12.0));
    assert!(sim.is_node_on(1));
    let at_on = rx(&sim, 0);
    sim.run_to_end();
    let r = sim.results();
    let after = r.flows[0].rx_packets - at_on;
    // 8 s at 20 packets/s = 160 offered after the relay is back.
    assert!(after >= 150, "deliveries resume after switch-on: {after}");
    assert_eq!(
        r.flows[1].rx_packets,
        r.flows[1].tx_packets - 12,
        "the relay's own packets are lost while it is off only"
    );

    // The sender's MAC gets no ACK from the off relay: retry-limit drops upstream.
    assert!(drops(&r, 0, "mac.RET") > 0, "{:?}", r.nodes[0].drops);
    // The relay's own traffic while off: dropped with the OFF code (12 packets in 6 s).
    assert_eq!(
        r.flows[1].drops.get("node.OFF"),
        Some(&12),
        "{:?}",
        r.flows[1].drops
    );
    assert!(drops(&r, 1, "node.OFF") >= 12);

    // The fault log and the connectivity report.
    let log: Vec<(f64, &str, Vec<u32>)> = serde_json::from_str::<serde_json::Value>(&r.to_json())
        .unwrap()["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["time_s"].as_f64().unwrap(),
                if e["kind"] == "node_off" { "off" } else { "on" },
                vec![e["nodes"][0].as_u64().unwrap() as u32],
            )
        })
        .collect();
    assert_eq!(log, vec![(6.0, "off", vec![1]), (12.0, "on", vec![1])]);
    let c = r
        .connectivity
        .as_ref()
        .expect("faults give a connectivity report");
    assert_eq!(c.link_changes, 0, "nobody moves");
    assert_eq!(c.link_changes_with_faults, 4, "two links down, two up");
    // Flow 0 is active over [1, 20) and partitioned for 6 s of it.
    assert!(
        (c.flows[0].connected_fraction - 13.0 / 19.0).abs() < 1e-9,
        "{:?}",
        c.flows[0]
    );
    assert_eq!(c.flows[0].mean_hops, Some(2.0));
}

#[test]
fn a_flushed_queue_counts_off_drops_at_the_relay() {
    // Overload the relay (200 packets/s each way through it): its queue holds packets when it goes off.
    let reverse =
        "\n[[flows]]\nkind = \"cbr\"\nsrc = 2\ndst = 0\nstart_s = 1.0\ninterval_s = 0.005\n";
    let text = CHAIN.replace("interval_s = 0.05", "interval_s = 0.005")
        + reverse
        + "\n[faults]\nnode_switches = [{ node = 1, off_s = 3.0 }]\n";
    let r = run(&scenario(&text));
    let off = drops(&r, 1, "node.OFF");
    // Flow 1's 33 packets while off (3 s to 20 s, every 0.5 s) plus the flushed queue.
    assert!(
        off > r.flows[1].drops.get("node.OFF").copied().unwrap_or(0),
        "queue was flushed: {:?}",
        r.nodes[1].drops
    );
    assert!(r.flows[0].rx_packets > 0);
    assert_eq!(r.faults.len(), 1, "stays off: one event");
}

#[test]
fn a_failed_radio_link_carries_nothing_and_recovers() {
    // Two nodes 100 m apart; their link is down from 4 s to 8 s.
    let text = r#"
        duration_s = 12
        [nodes]
        count = 2
        placement = { kind = "explicit", positions_m = [[0, 0], [100, 0]] }
        [radio]
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 1
        start_s = 1.0
        interval_s = 0.1
        [faults]
        link_outages = [{ a = 1, b = 0, down_s = 4.0, up_s = 8.0 }]
    "#;
    let mut sim = Simulator::new(&scenario(text));
    sim.run_until(s(4.0));
    let before = rx(&sim, 0);
    sim.run_until(s(7.95));
    assert!(rx(&sim, 0) - before <= 1);
    sim.run_to_end();
    let r = sim.results();
    assert!(
        r.flows[0].rx_packets - before >= 35,
        "resumes at 8 s: {}",
        r.flows[0].rx_packets
    );
    assert!(drops(&r, 0, "mac.RET") > 0);
    assert_eq!(r.faults.len(), 2);
    assert_eq!(r.connectivity.as_ref().unwrap().link_changes_with_faults, 2);
}

#[test]
fn a_failed_wired_link_drops_with_lnk() {
    let text = r#"
        duration_s = 10
        [nodes]
        count = 2
        [[links]]
        a = 0
        b = 1
        bandwidth_mbps = 1
        delay_ms = 1
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 1
        interval_s = 0.1
        [faults]
        link_outages = [{ a = 0, b = 1, down_s = 2.0, up_s = 4.0 }]
    "#;
    let r = run(&scenario(text));
    assert_eq!(
        r.flows[0].drops.get("link.LNK"),
        Some(&20),
        "{:?}",
        r.flows[0].drops
    );
    assert_eq!(r.flows[0].rx_packets, r.flows[0].tx_packets - 20);
    assert!(
        r.connectivity.is_none(),
        "wired-only runs report no radio connectivity"
    );
}

fn rwp(seed: u64, extra_flow: bool) -> Scenario {
    let mut text = format!(
        r#"
        seed = {seed}
        duration_s = 30
        [area]
        width_m = 1000
        height_m = 750
        [nodes]
        count = 20
        [radio]
        [mobility]
        model = "random_waypoint"
        max_speed_mps = 10
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 7
        interval_s = 0.25
        "#
    );
    if extra_flow {
        text +=
            "[[flows]]\nkind = \"cbr\"\nsrc = 3\ndst = 12\ninterval_s = 0.05\njitter_s = 0.01\n";
    }
    scenario(&text)
}

#[test]
fn same_seed_same_trajectories_whatever_the_flows() {
    let mut one = Simulator::new(&rwp(9, false));
    let mut two = Simulator::new(&rwp(9, true));
    let mut moved = 0.0f64;
    for t in [0.0, 2.5, 7.25, 15.0, 29.9] {
        one.run_until(s(t));
        two.run_until(s(t));
        for n in 0..20 {
            assert_eq!(
                one.position_at(n, s(t)),
                two.position_at(n, s(t)),
                "node {n} at {t} s"
            );
            moved = moved
                .max((one.position_at(n, s(t))[0] - one.position_at(n, SimTime::ZERO)[0]).abs());
        }
    }
    assert!(moved > 10.0, "nodes do move");
    one.run_to_end();
    two.run_to_end();
    let (c1, c2) = (
        one.results().connectivity.unwrap(),
        two.results().connectivity.unwrap(),
    );
    assert!(c1.link_changes > 0);
    assert_eq!(c1.link_changes, c2.link_changes);
    assert_eq!(c1.flows[0], c2.flows[0]);
    // The extra flow did change the traffic.
    assert_ne!(one.results().events, two.results().events);
}

#[test]
fn random_waypoint_runs_are_deterministic_and_depend_on_the_seed() {
    let a = run(&rwp(21, true)).to_json();
    let b = run(&rwp(21, true)).to_json();
    assert_eq!(a, b);
    let c = run(&rwp(22, true)).to_json();
    assert_ne!(a, c);
    let r = run(&rwp(21, true));
    assert!(r.flows[1].rx_packets > 0);
    // Start positions are in the per-node table, inside the area.
    assert!(r
        .nodes
        .iter()
        .all(|n| (0.0..=1000.0).contains(&n.x_m) && (0.0..=750.0).contains(&n.y_m)));
}

#[test]
fn an_ns2_movement_text_drives_positions_and_breaks_the_link_on_time() {
    // Node 1 leaves 100 m from node 0 at 5 s, at 10 m/s straight away from it.
    let movement = r#"
# nodes: 2, pause: 0.00, max speed: 10.00, max x: 1000.00, max y: 300.00
$node_(0) set X_ 100.000000000000
$node_(0) set Y_ 100.000000000000
$node_(0) set Z_ 0.000000000000
$node_(1) set X_ 200.000000000000
$node_(1) set Y_ 100.000000000000
$node_(1) set Z_ 0.000000000000
$god_ set-dist 0 1 1
$ns_ at 5.000000000000 "$node_(1) setdest 900.000000000000 100.000000000000 10.000000000000"
$ns_ at 5.000000000000 "$god_ set-dist 0 1 16777215"
"#;
    let text = format!(
        r#"
        duration_s = 30
        [area]
        width_m = 1000
        height_m = 300
        [nodes]
        count = 2
        [radio]
        [mobility]
        model = "ns2_file"
        path = "two-nodes.tcl"
        ns2_text = '''{movement}'''
        [[flows]]
        kind = "cbr"
        src = 0
        dst = 1
        start_s = 1.0
        interval_s = 0.1
        "#
    );
    let sc = scenario(&text);
    let mut sim = Simulator::new(&sc);
    assert_eq!(sim.position_at(1, s(3.0)), [200.0, 100.0]);
    let p10 = sim.position_at(1, s(10.0));
    assert!((p10[0] - 250.0).abs() < 1e-9 && p10[1] == 100.0, "{p10:?}");
    assert_eq!(sim.position_at(1, s(200.0)), [900.0, 100.0]);
    let p = RadioParams::default();
    let range_m = p
        .propagation
        .range_m(&p.antennas, p.tx_power_w, p.rx_threshold_w);
    let t_break = 5.0 + (range_m - 100.0) / 10.0;
    sim.run_until(s(t_break - 0.3));
    let at_break = rx(&sim, 0);
    // Everything sent up to 10 ms before then (a delivery takes a few ms) arrived.
    let sent = ((t_break - 0.3 - 0.01 - 1.0) / 0.1).floor() as u64 + 1;
    assert!(
        at_break == sent || at_break == sent + 1,
        "all delivered while in range: {at_break} of {sent}"
    );
    sim.run_to_end();
    let r = sim.results();
    let late = r.flows[0].rx_packets - at_break;
    assert!(
        late <= 6,
        "{late} packets delivered later than 0.3 s before the link breaks at {t_break:.2} s"
    );
    let c = r.connectivity.unwrap();
    assert_eq!(c.link_changes, 1);
    assert!(
        (c.flows[0].connected_fraction - (t_break - 1.0) / 29.0).abs() < 1e-6,
        "{:?}",
        c.flows[0]
    );
}

#[test]
fn scripted_moves_start_from_the_placement() {
    let text = r#"
        duration_s = 10
        [nodes]
        count = 2
        placement = { kind = "chain", spacing_m = 100 }
        [radio]
        [mobility]
        model = "scripted"
        [[mobility.nodes]]
        node = 1
        moves = [{ time_s = 1.0, dest_m = [100.0, 50.0], speed_mps = 5.0 }]
    "#;
    let sim = Simulator::new(&scenario(text));
    assert_eq!(sim.position_at(0, s(5.0)), [0.0, 0.0]);
    assert_eq!(sim.position_at(1, s(0.5)), [100.0, 0.0]);
    assert_eq!(sim.position_at(1, s(6.0)), [100.0, 25.0]);
    assert_eq!(sim.position_at(1, s(20.0)), [100.0, 50.0]);
}

#[test]
fn bad_mobility_and_faults_keys_name_the_key() {
    let base = r#"
duration_s = 10
[area]
width_m = 500
height_m = 500
[nodes]
count = 3
[radio]
"#;
    let rwp = "[mobility]\nmodel = \"random_waypoint\"\nmax_speed_mps = 10\n";
    let scripted = "placement = { kind = \"chain\", spacing_m = 100 }\n[radio]\n[mobility]\nmodel = \"scripted\"\n[[mobility.nodes]]\nnode = 1\nmoves = [{ time_s = 1.0, dest_m = [10.0, 10.0], speed_mps = 5.0 }]\n";
    let with_scripted = |old: &str, new: &str| {
        let t = base.replace("[radio]\n", scripted);
        assert!(t.contains(old), "{old}");
        t.replacen(old, new, 1)
    };
    let cases: Vec<(String, &str, &str)> = vec![
        (format!("{base}{}", rwp.replace("= 10", "= -1")), "mobility.max_speed_mps", "-1 is out of range (allowed:"),
        (format!("{base}[mobility]\nmodel = \"random_waypoint\"\n"), "mobility.max_speed_mps", "required key is missing"),
        (format!("{base}{rwp}min_speed_mps = 12\n"), "mobility.min_speed_mps", "12 is out of range"),
        (format!("{base}{rwp}init = \"steady_state\"\n"), "mobility.min_speed_mps", "steady_state"),
        (format!("{base}{rwp}init = \"warm\"\n"), "mobility.init", "\"warm\" is not allowed"),
        (format!("{base}{rwp}pause_s = -2\n"), "mobility.pause_s", "out of range"),
        (format!("{base}{rwp}speed = 2\n"), "mobility.speed", "unknown key"),
        (format!("{base}{rwp}nodes = [{{ node = 1, moves = [] }}]\n"), "mobility.nodes", "only applies with model = \"scripted\""),
        (format!("{}{rwp}", base.replace("[area]\nwidth_m = 500\nheight_m = 500\n", "")), "area", "required by mobility.model"),
        (format!("{}{rwp}", base.replace("[radio]\n", "")), "mobility.model", "add a [radio] section"),
        (format!("{}{rwp}", base.replace("count = 3\n", "count = 3\nplacement = { kind = \"chain\", spacing_m = 10 }\n")), "nodes.placement", "not used with"),
        (with_scripted("node = 1", "node = 5"), "mobility.nodes[0].node", "node 5 does not exist"),
        (with_scripted("time_s = 1.0", "time_s = 10.0"), "mobility.nodes[0].moves[0].time_s", "not before the end of the run"),
        (with_scripted("speed_mps = 5.0", "speed_mps = -5.0"), "mobility.nodes[0].moves[0].speed_mps", "out of range"),
        (with_scripted("dest_m = [10.0, 10.0]", "dest_m = [10.0, 900.0]"), "mobility.nodes[0].moves[0].dest_m", "outside the area"),
        (with_scripted("speed_mps = 5.0", "speed_mps = 5.0, pause_s = 1"), "mobility.nodes[0].moves[0].pause_s", "unknown key"),
        (with_scripted("model = \"scripted\"", "model = \"scripted\"\npause_s = 1"), "mobility.pause_s", "only applies with model = \"random_waypoint\""),
        (format!("{base}[mobility]\nmodel = \"ns2_file\"\npath = \"scen-1\"\n"), "mobility.path", "not read"),
        (format!("{base}[mobility]\nmodel = \"ns2_file\"\nns2_text = \"$node_(0) set X_ 1\\nputs hello\\n\"\n"), "mobility.ns2_text", "line 2"),
        (format!("{base}[mobility]\nmodel = \"ns2_file\"\nns2_text = \"$node_(7) set X_ 1\\n\"\n"), "mobility.ns2_text", "moves node 7 but nodes.count = 3"),
        (format!("{base}[faults]\nnode_switches = [{{ node = 7, off_s = 1 }}]\n"), "faults.node_switches[0].node", "node 7 does not exist"),
        (format!("{base}[faults]\nnode_switches = [{{ node = 1, off_s = 50 }}]\n"), "faults.node_switches[0].off_s", "not before the end of the run"),
        (format!("{base}[faults]\nnode_switches = [{{ node = 1, off_s = 5, on_s = 4 }}]\n"), "faults.node_switches[0].on_s", "must be after off_s = 5"),
        (format!("{base}[faults]\nnode_switches = [{{ node = 1, off_s = 5, on_s = 40 }}]\n"), "faults.node_switches[0].on_s", "after the end of the run"),
        (format!("{base}[faults]\nlink_outages = [{{ a = 1, b = 1, down_s = 1 }}]\n"), "faults.link_outages[0].b", "two different nodes"),
        (format!("{base}[faults]\nlink_outages = [{{ a = 1, b = 2, down_s = -1 }}]\n"), "faults.link_outages[0].down_s", "out of range"),
        (format!("{base}[faults.random_link_failures]\nrate_per_s = -0.1\nmean_duration_s = 10\n"), "faults.random_link_failures.rate_per_s", "out of range"),
        (format!("{base}[faults.random_link_failures]\nrate_per_s = 0.01\nmean_duration_s = 0\n"), "faults.random_link_failures.mean_duration_s", "out of range"),
        (format!("{base}[faults.random_link_failures]\nrate_per_s = 0.01\nmean_duration_s = 5\nlinks = [[0, 9]]\n"), "faults.random_link_failures.links[0][1]", "node 9 does not exist"),
        (format!("{base}[faults]\ncolour = 1\n"), "faults.colour", "unknown key"),
        (format!("{base}[faults]\nnode_switches = [{{ node = 1, of_s = 5 }}]\n"), "faults.node_switches[0].of_s", "unknown key"),
    ];
    for (text, path, needle) in cases {
        let e = Scenario::from_toml_str(&text).expect_err(path);
        let line = e.to_string();
        assert_eq!(e.path, path, "wrong path for {line:?}");
        assert!(line.contains(needle), "{line:?} should contain {needle:?}");
        assert!(!line.contains('\n'), "one line: {line:?}");
    }
    // The valid forms parse.
    scenario(&format!(
        "{base}{rwp}min_speed_mps = 1\npause_s = 2\ninit = \"steady_state\"\n"
    ));
    scenario(&with_scripted("", ""));
    scenario(&format!("{base}[mobility]\nmodel = \"static\"\n[faults]\nnode_switches = [{{ node = 1, off_s = 5, on_s = 10 }}]\n"));
}

#[test]
fn scenario_files_inline_their_movement_file() {
    let dir = std::env::temp_dir().join(format!("manetlab-mobint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("moves.tcl"),
        "$node_(1) set X_ 50.0\n$ns_ at 1.0 \"$node_(1) setdest 60.0 0.0 5.0\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "duration_s = 5\n[nodes]\ncount = 2\n[radio]\n[mobility]\nmodel = \"ns2_file\"\npath = \"moves.tcl\"\n",
    )
    .unwrap();
    let sc = Scenario::from_file(dir.join("s.toml")).unwrap();
    assert!(sc
        .mobility
        .as_ref()
        .unwrap()
        .ns2_text
        .as_deref()
        .unwrap()
        .contains("setdest"));
    let sim = Simulator::new(&sc);
    assert_eq!(sim.position_at(1, s(2.0)), [55.0, 0.0]);
    std::fs::write(dir.join("s.toml"), "duration_s = 5\n[nodes]\ncount = 2\n[radio]\n[mobility]\nmodel = \"ns2_file\"\npath = \"nope.tcl\"\n").unwrap();
    assert_eq!(
        Scenario::from_file(dir.join("s.toml")).unwrap_err().path,
        "mobility.path"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
