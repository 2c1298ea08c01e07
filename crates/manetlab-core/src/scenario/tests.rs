//! Malformed scenarios: each must give one line naming the key path.

use super::*;

const BASE: &str = r#"
seed = 3
duration_s = 10
[nodes]
count = 4
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
kind = "cbr"
src = 0
dst = 1
interval_s = 0.1
"#;

fn err(toml_text: &str) -> ScenarioError {
    Scenario::from_toml_str(toml_text).expect_err("scenario should be rejected")
}

/// The base scenario with its flow turned into FTP plus `extra` keys.
fn ftp(extra: &str) -> String {
    variant("kind = \"cbr\"", "kind = \"ftp\"").replacen("interval_s = 0.1", extra, 1)
}

/// Replace `old` with `new` in the base scenario (which must contain `old`).
fn variant(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "fixture does not contain {old:?}");
    BASE.replacen(old, new, 1)
}

#[test]
fn base_is_valid() {
    let s = Scenario::from_toml_str(BASE).unwrap();
    assert_eq!(s.seed, 3);
    assert_eq!(s.flows[0].cbr_packet_bytes(), DEFAULT_CBR_PACKET_BYTES);
}

#[test]
fn malformed_scenarios_name_the_key() {
    let cases: Vec<(String, &str, &str)> = vec![
        (variant("seed = 3", "seeds = 3"), "seeds", "unknown key"),
        (variant("count = 4", "count = 4\ncolour = 1"), "nodes.colour", "unknown key"),
        (variant("duration_s = 10", "duration_s = -1"), "duration_s", "out of range"),
        (variant("duration_s = 10", "duration_s = 0"), "duration_s", "out of range"),
        (variant("dst = 1", "dst = 31"), "flows[0].dst", "node 31 does not exist (nodes 0..3)"),
        (variant("b = 1", "b = 0"), "links[0].b", "two different nodes"),
        (variant("bandwidth_mbps = 1", "bandwidth_mbps = \"fast\""), "links[0].bandwidth_mbps", "expected a number"),
        (variant("src = 0", "src = \"zero\""), "flows[0].src", "expected an integer in 0..=4294967295"),
        (variant("src = 0", "src = -2"), "flows[0].src", "out of range"),
        (variant("src = 0", "src = 5000000000"), "flows[0].src", "expected an integer in 0..=4294967295"),
        (variant("seed = 3", "seed = 1.5"), "seed", "expected an integer in 0..="),
        (variant("interval_s = 0.1", "interval_s = 1e-10"), "flows[0].interval_s", "allowed: 1e-6 <= value"),
        (variant("interval_s = 0.1", "rate_kbps = 1e300"), "flows[0].rate_kbps", "1e300 is out of range"),
        (variant("delay_ms = 10", "delay_ms = 1e300"), "links[0].delay_ms", "1e300 is out of range"),
        (variant("bandwidth_mbps = 1", "bandwidth_mbps = 1e-300"), "links[0].bandwidth_mbps", "1e-300 is out of range"),
        (variant("duration_s = 10", "duration_s = 1e-10"), "duration_s", "1e-10 is out of range"),
        (variant("seed = 3\n", ""), "", ""), // seed is optional: valid
        (variant("duration_s = 10\n", ""), "duration_s", "required key is missing"),
        (variant("kind = \"cbr\"", "kind = \"video\""), "flows[0].kind", "allowed: \"cbr\" or \"ftp\""),
        (variant("interval_s = 0.1", "interval_s = 0.1\nrate_kbps = 5"), "flows[0].rate_kbps", "not both"),
        (variant("interval_s = 0.1", ""), "flows[0].interval_s", "needs interval_s or rate_kbps"),
        (variant("delay_ms = 10", "delay_ms = 10\nerror_rate = 1.5"), "links[0].error_rate", "out of range"),
        (format!("{BASE}\n[radio]\nrange_m = 250\n"), "radio.range_m", "unknown key"),
        (format!("{BASE}\n[mobility]\nmodel = \"rwp\"\n"), "mobility.model", "\"rwp\" is not allowed"),
        (format!("{BASE}\n[outputs]\ntrace = true\n"), "outputs.trace", "true is not allowed (allowed: \"old\", \"new\", or false for no trace)"),
        (format!("{BASE}\n[outputs]\ntrace = \"xml\"\n"), "outputs.trace", "allowed: \"old\", \"new\", or false"),
        (format!("{BASE}\n[outputs]\ntrace = false\n"), "", ""),
        (format!("{BASE}\n[outputs]\npcap_nodes = [9]\n"), "outputs.pcap_nodes[0]", "node 9 does not exist"),
        (format!("{BASE}\n[outputs]\ntrace_levels = [\"mac\"]\n"), "outputs.trace_levels", "only applies with a trace format"),
        (format!("{BASE}\n[outputs]\ntrace = \"old\"\ntrace_levels = [\"phy\"]\n"), "outputs.trace_levels[0]", "is not allowed"),
        (format!("{BASE}\n[outputs]\npcap = true\nmovement = true\ntrace = \"new\"\n"), "", ""),
        (format!("{BASE}\n[mac]\ncw_min = 31\n"), "mac", "needs a [radio] section"),
        (format!("{BASE}\n[radio]\n[mac]\ncw_min = 30\n"), "mac.cw_min", "2^k"),
        (format!("{BASE}\n[radio]\n[mac]\neifs = \"ieee\"\n"), "mac.eifs", "allowed: \"ns2\" or \"standard\""),
        (format!("{BASE}\n[radio]\n[mac]\ndata_header_bytes = 200\n"), "mac.data_header_bytes", "out of range"),
        (format!("{BASE}\n[radio]\n[mac]\narp = 1\n"), "mac.arp", "wrong type"),
        (format!("{BASE}\n[radio]\n[mac]\narp = false\nimmediate_access = true\nbackoff_includes_cw = true\neifs = \"standard\"\nack_data_without_cts = true\ndata_header_bytes = 28\n"), "", ""),
        (format!("{BASE}\n[radio]\ncs_threshold_w = 1e-9\n"), "radio.cs_threshold_w", "above the receive threshold"),
        (format!("{BASE}\n[radio]\nshadowing_sigma_db = 4\n"), "radio.shadowing_sigma_db", "only applies"),
        (variant("kind = \"cbr\"", "kind = \"ftp\""), "flows[0].interval_s", "applies to CBR flows only"),
        (ftp("transport = \"cubic\""), "flows[0].transport", "is not a TCP variant (allowed: tahoe, reno"),
        (ftp("transport = \"elfn\""), "", ""),
        (ftp("transport = \"tcp-ap\"\ntcp = { tcpap_alpha = 0.5, tcpap_history_samples = 20, tcpap_span_hops = 3 }"), "", ""),
        (ftp("transport = \"mpr\"\ntcp = { mpr_alpha = 0.999, mpr_beta = 2 }"), "", ""),
        (ftp("transport = \"elfn\"\ntcp = { elfn_probe_interval_s = 1 }"), "", ""),
        (ftp("tcp = { elfn_probe_interval_s = 1 }"), "flows[0].tcp.elfn_probe_interval_s", "only applies to transport = \"elfn\""),
        (ftp("transport = \"elfn\"\ntcp = { elfn_probe_interval_s = 0 }"), "flows[0].tcp.elfn_probe_interval_s", "out of range"),
        (ftp("transport = \"tcp-ap\"\ntcp = { tcpap_alpha = 1 }"), "flows[0].tcp.tcpap_alpha", "out of range"),
        (ftp("transport = \"tcp-ap\"\ntcp = { tcpap_history_samples = 1 }"), "flows[0].tcp.tcpap_history_samples", "out of range"),
        (ftp("transport = \"tcp-ap\"\ntcp = { tcpap_span_hops = 0 }"), "flows[0].tcp.tcpap_span_hops", "out of range"),
        (ftp("transport = \"mpr\"\ntcp = { mpr_alpha = 0 }"), "flows[0].tcp.mpr_alpha", "out of range"),
        (ftp("transport = \"mpr\"\ntcp = { mpr_beta = 0.5 }"), "flows[0].tcp.mpr_beta", "out of range"),
        (ftp("transport = \"mpr\"\ntcp = { mpr_beta = 2, vegas_alpha_pkts = 1 }"), "flows[0].tcp.vegas_alpha_pkts", "only applies"),
        (ftp("tcp = { windw_pkts = 3 }"), "flows[0].tcp.windw_pkts", "unknown key (allowed here: window_pkts"),
        (ftp("tcp = { window_pkts = 0 }"), "flows[0].tcp.window_pkts", "out of range"),
        (ftp("tcp = { mss_bytes = \"big\" }"), "flows[0].tcp.mss_bytes", "expected an integer in 0..=4294967295"),
        (ftp("tcp = { min_rto_s = -1 }"), "flows[0].tcp.min_rto_s", "out of range"),
        (ftp("tcp = 5"), "flows[0].tcp", "expected a table"),
        (ftp("transport = \"sack\"\ntcp = { sack = false }"), "flows[0].tcp.sack", "needs SACK"),
        (ftp("tcp = { vegas_alpha_pkts = 2 }"), "flows[0].tcp.vegas_alpha_pkts", "only applies to transport = \"vegas\""),
        (ftp("tcp = { vegas_counts_headers = true }"), "flows[0].tcp.vegas_counts_headers", "only applies to transport = \"vegas\""),
        (ftp("transport = \"vegas\"\ntcp = { vegas_counts_headers = true }"), "", ""),
        (ftp("tcp = { vegas_zero_window_after_timeout = false }"), "flows[0].tcp.vegas_zero_window_after_timeout", "only applies to transport = \"vegas\""),
        (ftp("transport = \"vegas\"\ntcp = { vegas_zero_window_after_timeout = false }"), "", ""),
        (ftp("transport = \"fack\"\ntcp = { fack_rules = \"mathis\" }"), "", ""),
        (ftp("transport = \"fack\"\ntcp = { fack_rules = \"rfc\" }"), "flows[0].tcp.fack_rules", "\"rfc\" is not allowed (allowed: \"ns2\", \"mathis\")"),
        (ftp("tcp = { fack_rules = \"ns2\" }"), "flows[0].tcp.fack_rules", "only applies to transport = \"fack\""),
        (ftp("transport = \"abra\"\ntcp = { abra_min_srtt_s = 0.7 }"), "flows[0].tcp.abra_max_srtt_s", "must be > abra_min_srtt_s"),
        (ftp("file_bytes = 0"), "flows[0].file_bytes", "out of range"),
        (ftp("transport = \"vegas\"\ntcp = { vegas_alpha_pkts = 2, delayed_ack = true, trace = true }"), "", ""),
        (variant("count = 4", "count = 0"), "nodes.count", "out of range"),
        (variant("count = 4", "count = 4\nplacement = { kind = \"line\" }"), "nodes.placement.kind", "allowed"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ periodic_update_interval_s = 5, min_update_periods = 2, initial_settling_time_s = 0, settling_alpha = 0.5, link_layer_detection = true, trigger_on_new_seq = true, queue_pkts = 10, broadcast_jitter_ms = 0 }}\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ perup = 5 }}\n"), "routing.dsdv.perup", "unknown key (allowed here: periodic_update_interval_s"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\ndsdv = {{ queue_pkts = 5 }}\n"), "routing.dsdv", "only applies with protocol = \"dsdv\""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ periodic_update_interval_s = 0 }}\n"), "routing.dsdv.periodic_update_interval_s", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ settling_alpha = 1.5 }}\n"), "routing.dsdv.settling_alpha", "allowed: 0 <= value <= 1"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ min_update_periods = 0 }}\n"), "routing.dsdv.min_update_periods", "allowed: 1..=1000"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ queue_pkts = 0 }}\n"), "routing.dsdv.queue_pkts", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ startup_jitter_s = -1 }}\n"), "routing.dsdv.startup_jitter_s", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsdv\"\ndsdv = {{ link_layer_detection = 1 }}\n"), "routing.dsdv.link_layer_detection", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ request_period_ms = 250, salvage = false, promiscuous = false }}\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ cache_size = 3 }}\n"), "routing.dsr.cache_size", "unknown key (allowed here: send_buffer_pkts"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\ndsr = {{ salvage = true }}\n"), "routing.dsr", "only applies with protocol = \"dsr\""),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ request_period_ms = -1 }}\n"), "routing.dsr.request_period_ms", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ max_route_len = 1 }}\n"), "routing.dsr.max_route_len", "allowed: 2..=255"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ buffer_poll_ms = -5 }}\n"), "routing.dsr.buffer_poll_ms", "out of range (allowed: 0 <= value"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ salvage = false, max_salvage_count = 3 }}\n"), "routing.dsr.max_salvage_count", "only applies with salvage = true"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ salvage_requests = 16 }}\n"), "routing.dsr.salvage_requests", "16 is out of range (allowed: 0..=15)"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ salvage = false, salvage_requests = 1 }}\n"), "routing.dsr.salvage_requests", "only applies with salvage = true"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ salvage = false, error_keeps_salvage_count = false }}\n"), "routing.dsr.error_keeps_salvage_count", "only applies with salvage = true"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ promiscuous = false, gratuitous_replies = true }}\n"), "routing.dsr.gratuitous_replies", "needs promiscuous = true"),
        (format!("{BASE}\n[routing]\nprotocol = \"dsr\"\ndsr = {{ max_route_len = 300 }}\n"), "routing.dsr.max_route_len", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ preset = \"rfc3561\", ttl_start = 3, gratuitous_rrep = true, link_detection = \"hello\", hello_interval_s = 2 }}\n"), "", ""),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ ttl_begin = 3 }}\n"), "routing.aodv.ttl_begin", "unknown key (allowed here: preset"),
        (format!("{BASE}\n[routing]\nprotocol = \"static\"\naodv = {{ ttl_start = 3 }}\n"), "routing.aodv", "only applies with protocol = \"aodv\""),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ ttl_start = 40 }}\n"), "routing.aodv.ttl_start", "allowed: 1..=30"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ active_route_timeout_s = 0 }}\n"), "routing.aodv.active_route_timeout_s", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ hello_interval_s = 1 }}\n"), "routing.aodv.hello_interval_s", "only applies with link_detection = \"hello\""),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ link_detection = \"beacon\" }}\n"), "routing.aodv.link_detection", "is not allowed (allowed: \"mac\" or \"hello\")"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ send_buffer_pkts = 0 }}\n"), "routing.aodv.send_buffer_pkts", "out of range"),
        (format!("{BASE}\n[routing]\nprotocol = \"aodv\"\naodv = {{ preset = \"ns3\" }}\n"), "routing.aodv.preset", "is not allowed"),
        (variant("[nodes]", "nodes = 4\n[nodesx]"), "nodes", "wrong type"),
        ("".to_string(), "duration_s", "required key is missing"),
        ("\u{0}\u{1}garbage".to_string(), "(file)", "not valid TOML"),
    ];
    for (text, path, needle) in cases {
        if path.is_empty() {
            Scenario::from_toml_str(&text).expect("optional key may be left out");
            continue;
        }
        let e = err(&text);
        let line = e.to_string();
        println!("{line}");
        assert_eq!(e.path, path, "wrong path for {line:?}");
        assert!(line.contains(needle), "{line:?} should contain {needle:?}");
        assert!(!line.contains('\n'), "one line: {line:?}");
    }
}

#[test]
fn non_object_top_level_is_rejected() {
    let e = Scenario::from_json_str("[1, 2]").unwrap_err();
    assert_eq!(e.path, "(top level)");
    assert!(e.message.contains("a list"));
}

#[test]
fn unknown_key_lists_what_is_allowed() {
    let e = err(&variant("delay_ms = 10", "delay_s = 0.01"));
    assert_eq!(e.path, "links[0].delay_s");
    assert!(e.message.contains("delay_ms"), "{e}");
}

#[test]
fn json_and_toml_give_the_same_scenario() {
    let t = Scenario::from_toml_str(BASE).unwrap();
    let j = Scenario::from_json_str(&t.to_json()).unwrap();
    assert_eq!(t.to_json(), j.to_json());
}

#[test]
fn mobility_and_faults_round_trip_through_json() {
    let text = r#"
        seed = 5
        duration_s = 50
        [area]
        width_m = 800
        height_m = 400
        [nodes]
        count = 4
        [radio]
        [mobility]
        model = "random_waypoint"
        max_speed_mps = 20
        min_speed_mps = 1
        init = "steady_state"
        [faults]
        node_switches = [{ node = 3, off_s = 10.0, on_s = 20.0 }]
        link_outages = [{ a = 0, b = 1, down_s = 5.0 }]
        [faults.random_link_failures]
        rate_per_s = 0.01
        mean_duration_s = 10
    "#;
    let t = Scenario::from_toml_str(text).unwrap();
    let j = Scenario::from_json_str(&t.to_json()).unwrap();
    assert_eq!(t.to_json(), j.to_json());
    assert!(t.has_mobility());
    assert_eq!(t.trajectories().unwrap().len(), 4);
    assert!(t.fault_schedule().unwrap().events().len() >= 2);
}

#[test]
fn aodv_table_defaults_and_presets() {
    use crate::routing::aodv::Params;
    let with = |extra: &str| {
        Scenario::from_toml_str(&format!("{BASE}\n[routing]\nprotocol = \"aodv\"\n{extra}"))
            .unwrap()
    };
    let s = with("");
    assert_eq!(s.aodv_params(), Params::default());
    let s = with("aodv = { preset = \"rfc3561\" }");
    assert_eq!(s.aodv_params(), Params::rfc3561());
    let s = with("aodv = { node_traversal_time_ms = 40, broadcast_jitter_ms = 0, send_buffer_timeout_s = 5 }");
    let p = s.aodv_params();
    assert_eq!(p.node_traversal_time.as_nanos(), 40_000_000);
    assert_eq!(p.broadcast_jitter.as_nanos(), 0);
    assert_eq!(p.send_buffer_timeout.as_nanos(), 5_000_000_000);
    assert_eq!(p.net_diameter, 30, "unset keys keep the ns-2 value");
}

// --- issue 34: times, names, bounded messages, files a scenario names -------

/// A negative, non-finite or out-of-range end time of a fault is an error
/// naming the key, never a panic (reproducer 00_panic_negative_on_s.toml).
#[test]
fn fault_end_times_out_of_range_name_the_key() {
    let base = "duration_s = 10\n[nodes]\ncount = 2\n[[links]]\na = 0\nb = 1\nbandwidth_mbps = 1\ndelay_ms = 1\n[faults]\n";
    for (faults, key) in [
        (
            "node_switches = [{ node = 1, off_s = 5.0, on_s = -1.0 }]",
            "faults.node_switches[0].on_s",
        ),
        (
            "node_switches = [{ node = 1, off_s = 5.0, on_s = -1e300 }]",
            "faults.node_switches[0].on_s",
        ),
        (
            "node_switches = [{ node = 1, off_s = 5.0, on_s = 1e300 }]",
            "faults.node_switches[0].on_s",
        ),
        (
            "node_switches = [{ node = 1, off_s = 5.0, on_s = 4.0 }]",
            "faults.node_switches[0].on_s",
        ),
        (
            "node_switches = [{ node = 1, off_s = -5.0 }]",
            "faults.node_switches[0].off_s",
        ),
        (
            "link_outages = [{ a = 0, b = 1, down_s = 1.0, up_s = -1.0 }]",
            "faults.link_outages[0].up_s",
        ),
        (
            "link_outages = [{ a = 0, b = 1, down_s = 1.0, up_s = -0.0000000001 }]",
            "faults.link_outages[0].up_s",
        ),
        (
            "link_outages = [{ a = 0, b = 1, down_s = -1.0 }]",
            "faults.link_outages[0].down_s",
        ),
        (
            "random_link_failures = { rate_per_s = 0.1, mean_duration_s = 1, start_s = -1 }",
            "faults.random_link_failures.start_s",
        ),
        (
            "random_link_failures = { rate_per_s = -0.1, mean_duration_s = 1 }",
            "faults.random_link_failures.rate_per_s",
        ),
        (
            "random_link_failures = { rate_per_s = 0.1, mean_duration_s = -1 }",
            "faults.random_link_failures.mean_duration_s",
        ),
    ] {
        let e = err(&format!("{base}{faults}\n"));
        assert_eq!(e.path, key, "{faults}: {e}");
        assert!(e.message.len() < 200, "{e}");
    }
}

#[test]
fn names_refuse_control_and_format_characters() {
    let named = |name: &str| {
        let v = serde_json::json!({"name": name, "duration_s": 1, "nodes": {"count": 2},
            "flows": [{"name": name, "kind": "cbr", "src": 0, "dst": 1, "interval_s": 0.1}]});
        Scenario::from_value(v)
    };
    // Everything other formats treat specially is a fine name (writers escape it).
    let ok = "chain <b>&amp;\"'[x]{y}$z\\;=+-@ <!--<script> ümlaut 日本 🙂";
    let s = named(ok).unwrap();
    assert_eq!(
        (s.name.as_deref(), s.flows[0].name.as_deref()),
        (Some(ok), Some(ok))
    );
    named(&"n".repeat(MAX_NAME_CHARS)).unwrap();
    for (bad, what) in [
        ("chain\nexec touch PWNED\n#", "U+000A at character 6"),
        ("tab\there", "U+0009"),
        ("esc\x1b[31m", "U+001B"),
        ("bidi\u{202e}txt", "U+202E"),
        ("zero\u{200b}width", "U+200B"),
        ("line\u{2028}sep", "U+2028"),
        ("para\u{2029}sep", "U+2029"),
        ("del\u{7f}", "U+007F"),
        ("tag\u{e0041}", "U+E0041"),
    ] {
        let e = named(bad).unwrap_err();
        assert_eq!(e.path, "name", "{e}");
        assert!(
            e.message.contains(what) && e.message.contains("allowed: printable Unicode"),
            "{e}"
        );
        assert!(
            !e.to_string().chars().any(is_control_or_format),
            "one escaped line: {e:?}"
        );
        // The flow's name is checked too.
        let v = serde_json::json!({"duration_s": 1, "nodes": {"count": 2},
            "flows": [{"name": bad, "kind": "cbr", "src": 0, "dst": 1, "interval_s": 0.1}]});
        assert_eq!(Scenario::from_value(v).unwrap_err().path, "flows[0].name");
    }
    let e = named(&"n".repeat(MAX_NAME_CHARS + 1)).unwrap_err();
    assert!(
        e.path == "name" && e.message.contains("is 201 characters long") && e.message.len() < 300,
        "{e}"
    );
    // A description may span lines, but holds no other control characters.
    let d = |text: &str| {
        Scenario::from_value(
            serde_json::json!({"description": text, "duration_s": 1, "nodes": {"count": 2}}),
        )
    };
    d("two\nlines\tand a tab").unwrap();
    assert_eq!(d("esc\x1b]0;title\x07").unwrap_err().path, "description");
}

#[test]
fn messages_quote_a_bounded_escaped_excerpt() {
    // Reproducer 17_error_message_echo.json.
    let e = Scenario::from_json_str(
        r#"{"duration_s": 10, "nodes": {"count": 2}, "routing": {"protocol": "a\nb"}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "routing.protocol");
    assert!(
        e.message.starts_with(r#""a\nb" is not allowed (allowed: "#),
        "{e}"
    );
    let long = "x".repeat(70_000);
    for v in [
        serde_json::json!({"duration_s": 10, "nodes": {"count": 2}, "routing": {"protocol": long}}),
        serde_json::json!({"duration_s": long, "nodes": {"count": 2}}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "flows": [{"kind": "ftp", "src": 0, "dst": 1, "transport": long}]}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "flows": [{"kind": "cbr", "src": 0, "dst": 1, "interval_s": 0.1, "port": long}]}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "outputs": {"trace": long}}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "traffic": {"ns2_file": long, "ns2_text": format!("set {long}\n")}}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, "radio": {}, "mobility": {"model": "ns2_file", "ns2_text": format!("\x1b[2J{long}\n")}}),
        serde_json::json!({"duration_s": 1, "nodes": {"count": 2}, long.clone(): 1}),
    ] {
        let e = Scenario::from_value(v).unwrap_err().to_string();
        assert!(e.chars().count() < 600, "{} chars: {}", e.len(), &e[..200]);
        assert!(e.contains('…'), "{e}");
        assert!(!e.chars().any(is_control_or_format), "{e:?}");
    }
    assert_eq!(quote("a\"b\\c\x1b\u{202e}"), r#""a\"b\\c\x1b\u{202e}""#);
    assert_eq!(excerpt(&"é".repeat(61)), format!("{}…", "é".repeat(60)));
}

#[cfg(unix)]
mod files {
    use super::super::load::{read_named_file, MAX_REFERENCED_FILE_BYTES};
    use super::super::*;
    use std::path::{Path, PathBuf};

    /// A fresh folder under the system's temporary folder.
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("manetlab-load-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("inside/sub")).unwrap();
        d
    }

    const MOVES: &str = "$node_(0) set X_ 1.0\n$node_(0) set Y_ 2.0\n";

    fn scenario_naming(dir: &Path, movement: &str) -> PathBuf {
        let s = dir.join("inside/s.toml");
        std::fs::write(&s, format!("duration_s = 1\n[nodes]\ncount = 2\n[radio]\n[mobility]\nmodel = \"ns2_file\"\npath = {movement:?}\n")).unwrap();
        s
    }

    #[test]
    fn named_files_stay_inside_the_folder_tree() {
        let d = scratch("tree");
        std::fs::write(d.join("inside/sub/m.tcl"), MOVES).unwrap();
        std::fs::write(d.join("outside.tcl"), MOVES).unwrap();
        std::os::unix::fs::symlink(d.join("inside/sub/m.tcl"), d.join("inside/in-link")).unwrap();
        std::os::unix::fs::symlink(d.join("outside.tcl"), d.join("inside/out-link")).unwrap();
        Scenario::from_file(scenario_naming(&d, "sub/m.tcl")).unwrap();
        Scenario::from_file(scenario_naming(&d, "in-link")).unwrap();
        for name in [
            "../outside.tcl",
            "out-link",
            d.join("outside.tcl").to_str().unwrap(),
            "/etc/passwd",
        ] {
            let e = Scenario::from_file(scenario_naming(&d, name)).unwrap_err();
            assert_eq!(e.path, "mobility.path");
            assert!(
                e.message
                    .contains("is outside the folder of the file that names it"),
                "{e}"
            );
            if name != "/etc/passwd" {
                Scenario::from_file_with(scenario_naming(&d, name), true).unwrap();
            }
        }
        let e = Scenario::from_file(scenario_naming(&d, "nope.tcl")).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_at_once() {
        let d = scratch("special");
        let fifo = d.join("inside/fifo");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        let base = d.join("inside");
        if ok {
            // Would block in open() forever without a writer if opened as a plain file.
            let e = read_named_file(&base, "fifo", false).unwrap_err();
            assert!(e.contains("a FIFO (named pipe), not a regular file"), "{e}");
            let e = read_named_file(&base, "fifo", true).unwrap_err();
            assert!(e.contains("FIFO"), "{e}");
        }
        assert!(read_named_file(&base, "sub", false)
            .unwrap_err()
            .contains("a directory, not a regular file"));
        assert!(read_named_file(&base, "/dev/zero", true)
            .unwrap_err()
            .contains("a character device"));
        assert!(read_named_file(&base, "/dev/zero", false)
            .unwrap_err()
            .contains("outside"));
        let e = Scenario::from_file("/dev/zero").unwrap_err();
        assert!(
            e.path == "(file)" && e.message.contains("a character device"),
            "{e}"
        );
        assert_eq!(MAX_REFERENCED_FILE_BYTES, 64 << 20);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// Found by the boundary sweep (tests/test_security_input.py): values that passed
/// validation and then panicked (a TCP clock tick of 1e300 s left simulated time)
/// or never let time advance (a purge period of 1e-300 s is 0 ns).
#[test]
fn timer_values_that_broke_runs_are_rejected() {
    for (extra, key) in [
        (
            "tcp = { clock_tick_s = 1e300 }",
            "flows[0].tcp.clock_tick_s",
        ),
        ("tcp = { min_rto_s = 1e-300 }", "flows[0].tcp.min_rto_s"),
    ] {
        let e = err(&ftp(extra));
        assert_eq!(e.path, key, "{e}");
        assert!(
            e.message.contains("allowed: 1e-6 <= seconds <= 1000000") && e.message.len() < 120,
            "{e}"
        );
    }
    let radio = "duration_s = 1\n[nodes]\ncount = 2\n[radio]\n[routing]\n";
    for (table, key) in [
        (
            "protocol = \"aodv\"\naodv = { route_purge_interval_s = 1e-300 }",
            "routing.aodv.route_purge_interval_s",
        ),
        (
            "protocol = \"dsdv\"\ndsdv = { periodic_update_interval_s = 1e-300 }",
            "routing.dsdv.periodic_update_interval_s",
        ),
        (
            "protocol = \"dsr\"\ndsr = { request_period_ms = 1e-300 }",
            "routing.dsr.request_period_ms",
        ),
    ] {
        let e = err(&format!("{radio}{table}\n"));
        assert_eq!(e.path, key, "{e}");
        assert!(e.message.contains("is out of range (allowed: "), "{e}");
    }
}

#[test]
fn fidelity_sets_every_layers_defaults_and_each_key_still_wins() {
    use crate::mac::{EifsMode, MacParams};
    use crate::param::Fidelity;
    use crate::routing::{aodv, dsdv, dsr};
    let radio = "duration_s = 1\n[nodes]\ncount = 2\n[radio]\n";
    let s = Scenario::from_toml_str(radio).unwrap();
    assert_eq!(s.fidelity, Fidelity::Ns2);
    assert!(
        !s.to_json().contains("fidelity"),
        "the default is not written"
    );
    assert_eq!(s.aodv_params(), aodv::Params::default());
    assert!(!s.mac_params().immediate_access);
    let std = |extra: &str| {
        Scenario::from_toml_str(&format!("fidelity = \"standard\"\n{radio}{extra}")).unwrap()
    };
    let s = std("");
    assert!(s.to_json().contains(r#""fidelity":"standard""#));
    assert_eq!(s.aodv_params(), aodv::Params::rfc3561());
    let m = s.mac_params();
    let w = MacParams::standard();
    assert_eq!(
        (
            m.immediate_access,
            m.eifs_mode,
            m.backoff_includes_cw,
            m.ack_data_without_cts
        ),
        (w.immediate_access, EifsMode::Standard, true, true)
    );
    assert_eq!(
        s.dsr_params(),
        dsr::Params::for_fidelity(Fidelity::Standard)
    );
    assert!(!s.dsr_params().request_size_bug && !s.dsdv_params().stale_advert_bug);
    assert_eq!(
        dsdv::Params::for_fidelity(Fidelity::Ns2),
        dsdv::Params::default()
    );
    // A key set on its own wins over the profile; AODV's preset over fidelity.
    let s = std("[mac]\neifs = \"ns2\"\n[routing]\nprotocol = \"aodv\"\n[routing.aodv]\npreset = \"ns2\"\nttl_start = 3\n");
    assert_eq!(s.mac_params().eifs_mode, EifsMode::Ns2);
    assert!(s.mac_params().immediate_access);
    let p = s.aodv_params();
    assert_eq!(
        (p.rules, p.ttl_start, p.net_diameter),
        (aodv::Rules::Ns2, 3, 30)
    );
    let s = std("[routing]\nprotocol = \"dsr\"\n[routing.dsr]\nrequest_size_bug = true\n");
    assert!(s.dsr_params().request_size_bug && !s.dsr_params().grat_holdoff_bug);
    let e = Scenario::from_toml_str(&format!("fidelity = \"ns3\"\n{radio}"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        r#"fidelity: "ns3" is not allowed (allowed: "ns2-2.35" or "standard")"#
    );
}

#[test]
fn declared_parameters_give_one_line_errors_naming_key_value_and_range() {
    let radio = "duration_s = 1\n[nodes]\ncount = 2\n[radio]\n";
    let err = |extra: &str| {
        Scenario::from_toml_str(&format!("{radio}{extra}"))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("[mac]\ndata_rate_mbps = 0"),
        "mac.data_rate_mbps: 0 is out of range (allowed: 0.001 <= value <= 100000)"
    );
    assert_eq!(
        err("[mac]\ndata_header_bytes = 101"),
        "mac.data_header_bytes: 101 is out of range (allowed: 0..=100 bytes)"
    );
    assert_eq!(
        err("[mac]\neifs = \"ieee\""),
        r#"mac.eifs: "ieee" is not allowed (allowed: "ns2" or "standard")"#
    );
    assert_eq!(
        err("[mac]\ncw_min = 1.5"),
        "mac.cw_min: wrong type: got floating point `1.5`, expected an integer in 0..=4294967295"
    );
    let e = err("[mac]\nslot = 20");
    assert!(
        e.starts_with("mac.slot: unknown key (allowed here: kind, frn, data_rate_mbps,"),
        "{e}"
    );
    assert_eq!(
        err("[routing]\nprotocol = \"aodv\"\n[routing.aodv]\nactive_route_timeout_s = 0"),
        "routing.aodv.active_route_timeout_s: 0 is out of range (allowed: 1e-6 <= value <= 1000000)"
    );
    assert_eq!(
        err("[routing]\nprotocol = \"aodv\"\n[routing.aodv]\npreset = \"rfc\""),
        r#"routing.aodv.preset: "rfc" is not allowed (allowed: "ns2" or "rfc3561")"#
    );
}
