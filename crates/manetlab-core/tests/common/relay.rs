//! The relay-outage scenario: a 3-node chain whose relay walks out of range at
//! 20 s and is back at about 31 s, one flow 0 → 2 (`flow`: the flow's TOML body
//! after `src` and `dst`), routed by `protocol`. Shared by the ELFN tests and the
//! TCP variants' golden numbers, which must keep running the same scenario.

pub fn relay_outage_toml(protocol: &str, flow: &str) -> String {
    format!(
        r#"
        duration_s = 60
        [nodes]
        count = 3
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        [routing]
        protocol = "{protocol}"
        [mobility]
        model = "scripted"
        [[mobility.nodes]]
        node = 1
        moves = [{{ time_s = 20, dest_m = [200, 900], speed_mps = 1000 }}, {{ time_s = 30, dest_m = [200, 0], speed_mps = 1000 }}]
        [[flows]]
        src = 0
        dst = 2
        {flow}
    "#
    )
}
