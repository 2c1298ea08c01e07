//! Fuzz targets (proptest) for everything that reads user input: the scenario
//! loader (JSON values and TOML text), ns-2 movement files and ns-2 traffic
//! files. The property is the same for all: every input gives `Ok` or a
//! one-line error, never a panic; a scenario that validates also sets up and
//! runs (a bounded number of events) without a panic.
//!
//! `make test` runs a few hundred cases per target (`MANETLAB_FUZZ_CASES`
//! overrides it; `MANETLAB_FUZZ_EVENTS` caps the events of each accepted
//! scenario's run, default 20 000; inputs are the same every time unless
//! `MANETLAB_FUZZ_RANDOM` is set); docs/validation/fuzz.md records a run of
//! 10^6 inputs.

use manetlab_core::app::ns2_traffic::read_ns2_traffic;
use manetlab_core::mobility::read_ns2_movement;
use manetlab_core::sim::SimTime;
use manetlab_core::Scenario;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};

fn config() -> Config {
    let cases = std::env::var("MANETLAB_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(300);
    // No failure file: a failing input is printed (shrunk) and belongs in a named regression test.
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ------------------------------------------------------------------ corpus

const SCEN_FILE: &str = include_str!("fixtures/ns2_scene/scen-3-test");
const CBR_FILE: &str = include_str!("fixtures/ns2_scene/cbr-3-test");

/// Valid scenarios covering every section, and the robustness reproducers.
fn corpus() -> Vec<Value> {
    let toml_texts = [
        include_str!("../../../examples/cbr_chain.toml"),
        include_str!("../../../examples/rwp_20_nodes.toml"),
        include_str!("../../../examples/tcp_chain_80211.toml"),
        include_str!("../../../examples/default_study.toml"),
        include_str!("../../../benchmarks/scenarios/chain_4hop_tcp.toml"),
        include_str!("../../../tests/fixtures/robustness/panic_chain_spacing_overflow.toml"),
        include_str!("../../../tests/fixtures/robustness/panic_rate_kbps_tiny.toml"),
        include_str!("../../../tests/fixtures/robustness/mem_rwp_huge_speed.toml"),
    ];
    let mut out: Vec<Value> = toml_texts
        .iter()
        .map(|t| toml::from_str(t).expect("corpus file is TOML"))
        .collect();
    out.push(json!({
        "duration_s": 30, "area": {"width_m": 670, "height_m": 670}, "nodes": {"count": 3}, "radio": {},
        "routing": {"protocol": "dsr"},
        "mobility": {"model": "ns2_file", "path": "scen-3-test", "ns2_text": SCEN_FILE},
        "traffic": {"ns2_file": "cbr-3-test", "ns2_text": CBR_FILE},
        "queue": {"kind": "red", "min_th_pkts": 5, "max_th_pkts": 15},
    }));
    out.push(json!({
        "duration_s": 20, "area": {"width_m": 500, "height_m": 500}, "nodes": {"count": 4, "placement": {"kind": "grid", "columns": 2, "spacing_m": 100}},
        "radio": {}, "mac": {}, "routing": {"protocol": "dsdv"},
        "mobility": {"model": "scripted", "nodes": [{"node": 1, "moves": [{"time_s": 1, "dest_m": [400, 400], "speed_mps": 10}]}]},
        "faults": {"nodes": [{"node": 2, "off_s": 3, "on_s": 6}]},
        "flows": [{"kind": "ftp", "src": 0, "dst": 3, "transport": "sack", "tcp": {"window_pkts": 8}},
                  {"kind": "cbr", "src": 3, "dst": 0, "interval_s": 0.1, "jitter_s": 0.01, "max_packets": 50}],
    }));
    out
}

/// Values that have broken loaders before: extremes of every numeric type, wrong
/// types, deep nesting, and the strings the schema's enums use.
fn weird_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(-1)),
        Just(json!(u32::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(1u64 << 53)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(5e-324)),
        Just(json!(1e-308)),
        Just(json!(-0.0)),
        Just(json!(1e7)),
        Just(json!(1e9)),
        Just(json!(1_000_000)),
        Just(json!(0.5)),
        Just(json!(true)),
        Just(Value::Null),
        Just(json!("")),
        Just(json!("aodv")),
        Just(json!("dsr")),
        Just(json!("ns2_file")),
        Just(json!("random_waypoint")),
        Just(json!("chain")),
        Just(json!("red")),
        Just(json!("ftp")),
        Just(json!("cbr")),
        Just(json!("vegas")),
        Just(json!("new")),
        Just(json!(
            "set god_ [God instance]\n$node_(0) setdest 1e308 1 1"
        )),
        any::<i64>().prop_map(|v| json!(v)),
        any::<f64>()
            .prop_filter("JSON has no nan/inf", |v| v.is_finite())
            .prop_map(|v| json!(v)),
        (0.0f64..2000.0).prop_map(|v| json!(v)),
        "[a-z_]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            (1usize..300).prop_map(|d| (0..d).fold(json!(1), |v, _| json!([v]))),
        ]
    })
}

/// Every path (object keys, array indices) in `v`, in a fixed order.
fn paths(v: &Value, prefix: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                prefix.push(PathStep::Key(k.clone()));
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                prefix.push(PathStep::Index(i));
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, Value),
    Remove(usize),
    AddKey(usize, String, Value),
    Duplicate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let key = prop_oneof![
        "[a-z_]{1,12}",
        Just("ns2_text".to_string()),
        Just("traffic".to_string()),
        Just("placement".to_string()),
        Just("max_speed_mps".to_string()),
        Just("rate_kbps".to_string()),
        Just("count".to_string()),
        Just("spacing_m".to_string()),
        Just("outputs".to_string()),
        Just("faults".to_string()),
    ];
    prop_oneof![
        6 => (any::<usize>(), weird_value()).prop_map(|(p, v)| Mutation::Replace(p, v)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        2 => (any::<usize>(), key, weird_value()).prop_map(|(p, k, v)| Mutation::AddKey(p, k, v)),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
    ]
}

fn apply(v: &mut Value, m: &Mutation) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let pick = |i: usize| all[i % all.len()].clone();
    match m {
        Mutation::Replace(i, new) => *at(v, &pick(*i)) = new.clone(),
        Mutation::Remove(i) => {
            let p = pick(*i);
            if let Some((last, parent)) = p.split_last() {
                match (at(v, parent), last) {
                    (Value::Object(o), PathStep::Key(k)) => {
                        o.remove(k);
                    }
                    (Value::Array(a), PathStep::Index(j)) => {
                        a.remove(*j);
                    }
                    _ => {}
                }
            }
        }
        Mutation::AddKey(i, k, new) => {
            if let Value::Object(o) = at(v, &pick(*i)) {
                o.insert(k.clone(), new.clone());
            }
        }
        Mutation::Duplicate(i) => {
            if let Value::Array(a) = at(v, &pick(*i)) {
                if let Some(first) = a.first().cloned() {
                    a.push(first);
                }
            }
        }
    }
}

/// A scenario that validated: set it up and run a bounded number of events
/// (returns whether it ran).
fn run_briefly(s: &Scenario) -> bool {
    // Large node counts are valid but cost seconds to set up; validation is what is fuzzed there.
    if s.nodes.count > 300 {
        return false;
    }
    let dir = std::env::temp_dir().join(format!("manetlab-fuzz-{}", std::process::id()));
    let max_events: u64 = std::env::var("MANETLAB_FUZZ_EVENTS")
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(20_000);
    let mut check = |_: SimTime, events: u64| events < max_events;
    match manetlab_core::run_with_control(s, Some(&dir), &mut check) {
        Ok(_) => true,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "one-line error: {e}");
            false
        }
    }
}

/// An error names where (a key path, `(file)` or `(top level)`); its message is
/// one line apart from text quoted from the input (the CLI prints it on one line).
fn one_line(e: &manetlab_core::ScenarioError) {
    assert!(
        !e.path.is_empty() && !e.path.contains('\n'),
        "names a key: {e}"
    );
}

/// Outcomes of one target's inputs, printed at its end (`--nocapture` shows them).
#[derive(Default, Debug)]
struct Tally {
    inputs: u64,
    accepted: u64,
    rejected: u64,
    ran: u64,
    slowest_s: f64,
}

/// Run `cases` inputs from `strategy` through `body` (which returns whether
/// the input was accepted and whether it ran), then print the tally.
fn fuzz<S: Strategy>(name: &str, strategy: S, body: impl Fn(S::Value) -> (bool, bool))
where
    S::Value: std::fmt::Debug,
{
    let cfg = config();
    // Derandomised unless MANETLAB_FUZZ_RANDOM is set, so `make test` sees the same inputs every time.
    let mut runner = if std::env::var_os("MANETLAB_FUZZ_RANDOM").is_some() {
        proptest::test_runner::TestRunner::new(cfg)
    } else {
        let rng = proptest::test_runner::TestRng::deterministic_rng(cfg.rng_algorithm);
        proptest::test_runner::TestRunner::new_with_rng(cfg, rng)
    };
    let tally = std::cell::RefCell::new(Tally::default());
    let started = std::time::Instant::now();
    let result = runner.run(&strategy, |input| {
        let t0 = std::time::Instant::now();
        let (accepted, ran) = body(input);
        let mut t = tally.borrow_mut();
        t.inputs += 1;
        if accepted {
            t.accepted += 1
        } else {
            t.rejected += 1
        }
        t.ran += ran as u64;
        t.slowest_s = t.slowest_s.max(t0.elapsed().as_secs_f64());
        if t.inputs % 50_000 == 0 {
            println!(
                "fuzz {name}: {t:?} after {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    });
    let t = tally.into_inner();
    println!(
        "fuzz {name}: {t:?}, total {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Mutated scenarios (1 to 4 mutations of a corpus scenario) through the loader.
#[test]
fn fuzz_scenario_values() {
    let corpus = corpus();
    fuzz(
        "scenario values",
        (0usize..10, prop::collection::vec(mutation(), 1..5)),
        |(base, muts)| {
            let mut v = corpus[base % corpus.len()].clone();
            for m in &muts {
                apply(&mut v, m);
            }
            match Scenario::from_value(v) {
                Ok(s) => {
                    // The normalised form validates again, and the scenario sets up and runs.
                    let again = Scenario::from_json_str(&s.to_json());
                    assert!(again.is_ok(), "normalised form rejected: {:?}", again.err());
                    (true, run_briefly(&s))
                }
                Err(e) => {
                    one_line(&e);
                    (false, false)
                }
            }
        },
    );
}

/// Scenario TOML text with characters inserted, deleted or replaced.
#[test]
fn fuzz_scenario_toml_text() {
    let texts = [
        include_str!("../../../examples/cbr_chain.toml"),
        include_str!("../../../examples/rwp_20_nodes.toml"),
        include_str!("../../../examples/tcp_chain_80211.toml"),
        include_str!("../../../tests/fixtures/robustness/recursion_toml_deep_inline_table.toml"),
        include_str!(
            "../../../tests/fixtures/robustness/weak_msg_toml_depth200_says_not_valid_JSON.toml"
        ),
        include_str!("../../../tests/fixtures/robustness/panic_chain_spacing_overflow.toml"),
    ];
    let edits = prop::collection::vec((any::<usize>(), 0u8..3, any::<char>()), 1..8);
    fuzz("scenario TOML text", (0usize..6, edits), |(base, edits)| {
        let mut text: Vec<char> = texts[base % texts.len()].chars().collect();
        for (pos, op, c) in edits {
            let i = pos % (text.len() + 1);
            match op {
                0 => text.insert(i, c),
                1 if i < text.len() => {
                    text.remove(i);
                }
                _ if i < text.len() => text[i] = c,
                _ => {}
            }
        }
        let text: String = text.into_iter().collect();
        match Scenario::from_toml_str(&text) {
            Ok(s) => (true, run_briefly(&s)),
            Err(e) => {
                one_line(&e);
                (false, false)
            }
        }
    });
}

/// Movement files built from the statements ns-2 generators write, with
/// extreme numbers, wrong tokens and garbage lines mixed in.
#[test]
fn fuzz_ns2_movement() {
    fuzz(
        "ns-2 movement files",
        prop::collection::vec(movement_line(), 0..40),
        |lines| {
            let text = lines.join("\n");
            let Ok(m) = read_ns2_movement(&text) else {
                return (false, false);
            };
            if m.node_count() <= 1000 {
                if let Ok(tr) = m.trajectories(m.node_count()) {
                    for t in &tr {
                        for k in 0..20u64 {
                            let p = t.position_at(SimTime(k * 50_000_000_000));
                            assert!(!p[0].is_nan() && !p[1].is_nan());
                        }
                    }
                }
            }
            // And through a scenario: an error naming mobility, or a scenario that runs.
            let v = json!({"duration_s": 10, "area": {"width_m": 1000, "height_m": 1000}, "nodes": {"count": m.node_count().clamp(1, 400)},
                       "radio": {}, "mobility": {"model": "ns2_file", "ns2_text": text}});
            match Scenario::from_value(v) {
                Ok(s) => (true, run_briefly(&s)),
                Err(e) => {
                    one_line(&e);
                    (true, false)
                }
            }
        },
    );
}

/// Traffic files: real cbrgen and hand-written files with lines replaced,
/// inserted or deleted (statements from cbrgen's vocabulary, extreme numbers, garbage).
#[test]
fn fuzz_ns2_traffic() {
    const CBRGEN_TCP: &str = "set tcp_(0) [$ns_ create-connection  TCP $node_(1) TCPSink $node_(2) 0]\n$tcp_(0) set window_ 32\n\
        $tcp_(0) set packetSize_ 512\nset ftp_(0) [$tcp_(0) attach-source FTP]\n$ns_ at 2.5 \"$ftp_(0) start\"\n";
    let bases = [CBR_FILE, CBRGEN_TCP];
    let edit = (any::<usize>(), 0u8..3, traffic_line());
    fuzz(
        "ns-2 traffic files",
        (0usize..2, prop::collection::vec(edit, 0..6)),
        |(base, edits)| {
            let mut lines: Vec<String> = bases[base].lines().map(str::to_string).collect();
            for (pos, op, line) in edits {
                let i = pos % (lines.len() + 1);
                match op {
                    0 => lines.insert(i, line),
                    1 if i < lines.len() => {
                        lines.remove(i);
                    }
                    _ if i < lines.len() => lines[i] = line,
                    _ => {}
                }
            }
            let text = lines.join("\n");
            let parsed = read_ns2_traffic(&text);
            let v = json!({"duration_s": 200, "nodes": {"count": 4}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1},
                       {"a": 1, "b": 2, "bandwidth_mbps": 1, "delay_ms": 1}, {"a": 2, "b": 3, "bandwidth_mbps": 1, "delay_ms": 1}],
                       "traffic": {"ns2_file": "t", "ns2_text": text}});
            match Scenario::from_value(v) {
                Ok(s) => {
                    assert!(parsed.is_ok());
                    (true, run_briefly(&s))
                }
                Err(e) => {
                    one_line(&e);
                    (parsed.is_ok(), false)
                }
            }
        },
    );
}

fn num() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => (0.0f64..700.0).prop_map(|v| format!("{v:.12}")),
        30 => (0u32..5).prop_map(|v| v.to_string()),
        1 => Just("1e308".to_string()),
        1 => Just("-1e308".to_string()),
        1 => Just("nan".to_string()),
        1 => Just("inf".to_string()),
        1 => Just("-0".to_string()),
        1 => Just("5e-324".to_string()),
        1 => Just("1e-9".to_string()),
        1 => Just("99999999999999999999".to_string()),
        1 => Just("x".to_string()),
        1 => Just("4.0".to_string()),
        1 => Just("20ms".to_string()),
        1 => Just("64Kb".to_string()),
    ]
}

/// Mostly small integers (node indices, hop counts), sometimes not.
fn int() -> impl Strategy<Value = String> {
    prop_oneof![30 => (0u32..6).prop_map(|v| v.to_string()), 1 => Just("16777215".to_string()), 1 => num()]
}

fn node() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => (0u32..6).prop_map(|i| format!("$node_({i})")),
        1 => Just("$node_(1048576)".to_string()),
        1 => Just("$node_(-1)".to_string()),
        1 => Just("$node_(x".to_string()),
    ]
}

fn movement_line() -> impl Strategy<Value = String> {
    let coord = prop_oneof![10 => Just("X_"), 10 => Just("Y_"), 5 => Just("Z_"), 1 => Just("W_")];
    prop_oneof![
        30 => (node(), coord, num()).prop_map(|(n, c, v)| format!("{n} set {c} {v}")),
        40 => (num(), node(), num(), num(), num()).prop_map(|(t, n, x, y, v)| format!("$ns_ at {t} \"{n} setdest {x} {y} {v}\"")),
        5 => (node(), num(), num(), num()).prop_map(|(n, x, y, v)| format!("{n} setdest {x} {y} {v}")),
        10 => (int(), int(), int()).prop_map(|(a, b, d)| format!("$god_ set-dist {a} {b} {d}")),
        10 => (num(), int(), int(), int()).prop_map(|(t, a, b, d)| format!("$ns_ at {t} \"$god_ set-dist {a} {b} {d}\"")),
        3 => Just("set god_ [God instance]".to_string()),
        3 => Just("# comment".to_string()),
        1 => "[ -~]{0,40}",
        1 => Just("\u{feff}$ns_ at".to_string()),
    ]
}

fn agent() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("udp"),
        Just("null"),
        Just("tcp"),
        Just("sink"),
        Just("cbr"),
        Just("ftp"),
        Just("zz")
    ]
    .prop_flat_map(|n| (Just(n), 0u32..3))
    .prop_map(|(n, i)| format!("{n}_({i})"))
}

fn traffic_line() -> impl Strategy<Value = String> {
    let class = prop_oneof![
        Just("Agent/UDP"),
        Just("Agent/Null"),
        Just("Agent/LossMonitor"),
        Just("Agent/TCP"),
        Just("Agent/TCP/Sack1"),
        Just("Agent/TCP/Vegas"),
        Just("Agent/TCPSink"),
        Just("Agent/TCPSink/DelAck"),
        Just("Agent/CBR"),
        Just("Application/Traffic/CBR"),
        Just("Application/FTP"),
        Just("Agent/RTP"),
    ];
    let key = prop_oneof![
        Just("packetSize_"),
        Just("interval_"),
        Just("rate_"),
        Just("random_"),
        Just("maxpkts_"),
        Just("window_"),
        Just("class_"),
        Just("fid_"),
        Just("burst_"),
    ];
    prop_oneof![
        3 => (agent(), class).prop_map(|(a, c)| format!("set {a} [new {c}]")),
        3 => (node(), agent()).prop_map(|(n, a)| format!("$ns_ attach-agent {n} ${a}")),
        2 => (agent(), agent()).prop_map(|(a, b)| format!("${a} attach-agent ${b}")),
        2 => (agent(), agent()).prop_map(|(a, b)| format!("$ns_ connect ${a} ${b}")),
        3 => (agent(), key, num()).prop_map(|(a, k, v)| format!("${a} set {k} {v}")),
        2 => (agent(), prop_oneof![Just("TCP"), Just("CBR"), Just("UDP")], node(), prop_oneof![Just("TCPSink"), Just("LossMonitor"), Just("Null")], node())
            .prop_map(|(a, s, n1, k, n2)| format!("set {a} [$ns_ create-connection {s} {n1} {k} {n2} 0]")),
        1 => (agent(), agent()).prop_map(|(a, b)| format!("set {a} [${b} attach-source FTP]")),
        3 => (num(), agent(), prop_oneof![Just("start"), Just("stop"), Just("produce 3")]).prop_map(|(t, a, v)| format!("$ns_ at {t} \"${a} {v}\"")),
        1 => Just("# comment".to_string()),
        1 => "[ -~]{0,40}",
    ]
}
