//! Tests of the parameter declarations (crate::param) on real models' `Params`:
//! they live above the models (here, in the scenario layer), since `param` sits
//! at the bottom of the stack and may not name a model (tests/layers.rs).

use crate::mac::MacParams;
use crate::param::*;
use crate::routing::aodv;
use crate::sim::SimDuration;
use serde_json::Value;

#[test]
fn set_converts_units_and_checks_ranges() {
    let mut p = aodv::Params::default();
    p.set("node_traversal_time_ms", &Value::from(40)).unwrap();
    assert_eq!(p.node_traversal_time, SimDuration::from_millis(40));
    assert_eq!(p.get("node_traversal_time_ms"), Some(Value::from(40.0)));
    let e = p.set("release_spacing_ms", &Value::from(-1)).unwrap_err();
    assert_eq!(e, "-1 is out of range (allowed: 0 <= value <= 1e9)", "{e}");
    let e = p.set("net_diameter_hops", &Value::from(0)).unwrap_err();
    assert_eq!(e, "0 is out of range (allowed: 1..=255 hops)");
    let e = p.set("send_buffer_pkts", &Value::from(0)).unwrap_err();
    assert_eq!(e, "0 is out of range (allowed: >= 1)");
    let e = p.set("ttl_start", &Value::from("x")).unwrap_err();
    assert!(
        e.starts_with("invalid type: string \"x\", expected u8"),
        "{e}"
    );
    let e = p.set("rules", &Value::from("ns3")).unwrap_err();
    assert!(e.starts_with("unknown variant `ns3`"), "{e}");
    let mut m = MacParams::default();
    m.set("data_rate_mbps", &Value::from(2)).unwrap();
    assert_eq!(m.data_rate_bps, 2e6);
    assert_eq!(m.get("data_rate_mbps"), Some(Value::from(2.0)));
}

#[test]
fn every_key_is_unique_documented_and_reads_back_its_default() {
    fn check<P: ParamSet>() {
        let mut seen = std::collections::BTreeSet::new();
        for i in P::INFO {
            assert!(seen.insert(i.key), "{} twice", i.key);
            assert!(!i.doc.trim().is_empty(), "{} has no doc", i.key);
            assert!(!i.source.is_empty(), "{} has no source", i.key);
            for f in Fidelity::ALL {
                let d = P::profile(f);
                let v = d.get(i.key).unwrap();
                let mut q = P::default();
                q.set(i.key, &v)
                    .unwrap_or_else(|e| panic!("{}: {e}", i.key));
                assert_eq!(q.get(i.key).unwrap(), v, "{} round trip", i.key);
            }
        }
    }
    check::<aodv::Params>();
    check::<MacParams>();
    check::<crate::routing::dsdv::Params>();
    check::<crate::routing::dsr::Params>();
}

#[test]
fn overrides_apply_over_a_base_and_serialise_what_was_given() {
    let o: Overrides<aodv::Params> = serde_json::from_value(serde_json::json!({
        "preset": "rfc3561", "ttl_start": 3, "link_detection": "hello"
    }))
    .unwrap();
    assert_eq!(o.profile, Some(Fidelity::Standard));
    assert!(o.given("ttl_start") && !o.given("ttl_threshold"));
    let p = o.apply(aodv::Params::rfc3561());
    assert_eq!((p.ttl_start, p.net_diameter), (3, 35));
    assert_eq!(p.link_detection, aodv::LinkDetection::Hello);
    assert_eq!(
        serde_json::to_string(&o).unwrap(),
        r#"{"preset":"rfc3561","ttl_start":3,"link_detection":"hello"}"#
    );
    let e = serde_json::from_value::<Overrides<aodv::Params>>(serde_json::json!({"ttl": 3}))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unknown field `ttl`, expected one of `preset`, `rules`"),
        "{e}"
    );
}

#[test]
fn regenerate_replaces_only_the_marked_blocks() {
    let sections = [Section::of::<aodv::Params>("routing.aodv")];
    let text = format!("a\n{BEGIN}routing.aodv -->\nold\n{END}\nb\n");
    let new = regenerate(&text, &sections).unwrap();
    assert!(new.starts_with("a\n") && new.ends_with(&format!("{END}\nb\n")));
    assert!(
        new.contains("| `active_route_timeout_s` | s | 10 | 3 |"),
        "{new}"
    );
    assert_eq!(regenerate(&new, &sections).unwrap(), new);
    let bad = format!("{BEGIN}nope -->\n{END}");
    assert!(regenerate(&bad, &sections).is_err());
}
