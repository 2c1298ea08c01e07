//! `[[traffic.cbrgen]]` and ns-2 traffic files' `shutdown`/`startup` lines,
//! end to end: generated flows run exactly as the same flows written by hand,
//! and ns-2.35's cbr-10-1-10-20 (with its node switches) runs unchanged.

use manetlab_core::{run, Scenario};

const BASE: &str = "name = \"x\"\nseed = 3\nduration_s = 60\n[area]\nwidth_m = 600\nheight_m = 600\n\
    [nodes]\ncount = 8\nplacement = { kind = \"grid\", columns = 4, spacing_m = 180 }\n[radio]\n[routing]\nprotocol = \"aodv\"\n";

#[test]
fn generated_flows_run_as_the_same_flows_written_by_hand() {
    for gen in [
        "[traffic]\n[[traffic.cbrgen]]\nconnections = 5\nrate_pkts_per_s = 8\nstart_s = [0, 30]\n",
        "[traffic]\n[[traffic.cbrgen]]\nconnections = 3\ntransport = \"tcp\"\ntcp_variant = \"newreno\"\nstart_s = [5, 10]\n\
         [[traffic.cbrgen]]\nconnections = 4\npairs = \"cbrgen\"\nrate_pkts_per_s = 2\nrandom = false\nstart_s = [0, 20]\n",
    ] {
        let generated = Scenario::from_toml_str(&format!("{BASE}{gen}")).unwrap();
        assert!(generated.flows.len() >= 4, "{gen}");
        // The same flows as [[flows]] tables, from the normalised scenario.
        let mut by_hand: serde_json::Value = serde_json::from_str(&generated.to_json()).unwrap();
        by_hand.as_object_mut().unwrap().remove("traffic");
        let by_hand = Scenario::from_value(by_hand).unwrap();
        assert!(by_hand.traffic.is_none());
        assert_eq!(run(&generated).to_json(), run(&by_hand).to_json(), "{gen}");
    }
}

#[test]
fn generated_flows_are_listed_in_the_summary_by_name() {
    let s = Scenario::from_toml_str(&format!(
        "{BASE}[[flows]]\nkind = \"ftp\"\nsrc = 0\ndst = 7\n[traffic]\n[[traffic.cbrgen]]\nconnections = 3\nrate_pkts_per_s = 4\nstart_s = [0, 10]\nname = \"cross\"\n"
    ))
    .unwrap();
    let r = run(&s);
    let names: Vec<&str> = r.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["flow0", "cross.cbr_(0)", "cross.cbr_(1)", "cross.cbr_(2)"]
    );
    for f in &r.flows[1..] {
        assert!(f.tx_packets > 0 && f.start_s < 10.0, "{f:?}");
    }
}

fn shutdown_scenario() -> Scenario {
    Scenario::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/ns2_scene/ns2_shutdown.toml"
    ))
    .expect("ns-2.35's cbr-10-1-10-20 reads unchanged")
}

#[test]
fn debian_cbr_10_1_10_20_runs_unchanged_with_its_node_switches() {
    let s = shutdown_scenario();
    assert_eq!(s.flows.len(), 10);
    let sw: Vec<(u32, f64, Option<f64>)> = s
        .faults
        .as_ref()
        .unwrap()
        .node_switches
        .iter()
        .map(|w| (w.node, w.off_s, w.on_s))
        .collect();
    // Nodes 0 and 1 start on (shutdown and startup at 0 cancel); the last
    // shutdowns at 900 s are at the end of the run and change nothing.
    assert_eq!(sw.len(), 26, "{sw:?}");
    assert!(sw.contains(&(0, 90.0, Some(450.0))) && sw.contains(&(0, 540.0, None)));
    assert!(sw.contains(&(2, 0.0, Some(90.0))) && sw.contains(&(9, 450.0, Some(810.0))));
    assert!(!sw.iter().any(|w| w.1 >= 900.0));
    let r = run(&s);
    for (k, f) in r.flows.iter().enumerate() {
        // 20 packets/s for 90 s between two neighbours, everyone else off.
        assert_eq!(f.name, format!("cbr_({k})"));
        assert!((1750..=1850).contains(&f.tx_packets), "{f:?}");
        assert!(
            f.delivered_packets as f64 >= 0.99 * f.tx_packets as f64,
            "{f:?}"
        );
    }
    // The switches are in the run's fault log.
    assert_eq!(
        r.faults.len(),
        26 + sw.iter().filter(|w| w.2.is_some()).count()
    );
}

#[test]
fn a_switched_off_node_neither_sends_nor_receives() {
    // Nodes 0 and 1 are off from 90 s to 450 s: a flow between them then delivers nothing.
    let mut v: serde_json::Value = serde_json::from_str(&shutdown_scenario().to_json()).unwrap();
    let extra = serde_json::json!({"name": "late", "kind": "cbr", "src": 0, "dst": 1, "start_s": 100.0,
        "stop_s": 400.0, "interval_s": 0.5});
    v["flows"].as_array_mut().unwrap().insert(0, extra);
    let r = run(&Scenario::from_value(v).unwrap());
    let late = &r.flows[0];
    assert_eq!(late.name, "late");
    assert_eq!(late.delivered_packets, 0, "{late:?}");
}
