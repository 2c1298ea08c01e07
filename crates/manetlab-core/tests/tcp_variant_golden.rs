//! Golden numbers per TCP variant (issue 33): the TCP refactor (recovery schemes
//! split from congestion control, per-variant parameters) must not move any
//! variant's results. `benchmarks/identity.py` runs NewReno only; this table pins
//! every registered variant (and each variant option) on two short scenarios with
//! losses: a 7-hop 802.11 chain with a competing reverse flow, and a 3-node AODV
//! chain whose relay leaves for 10 s (route failure: timeouts, ELFN freezes).
//!
//! The expected lines were computed before the refactor. A deliberate change of a
//! variant's behaviour updates its lines (the failure message prints the new table).

mod common;

use manetlab_core::{run, Scenario};

/// (case name, transport, extra `flows[].tcp` keys).
const CASES: &[(&str, &str, &str)] = &[
    ("tahoe", "tahoe", ""),
    ("reno", "reno", ""),
    ("newreno", "newreno", ""),
    ("sack", "sack", ""),
    ("fack", "fack", ""),
    ("fack-mathis", "fack", ", fack_rules = \"mathis\""),
    ("vegas", "vegas", ""),
    (
        "vegas-opts",
        "vegas",
        ", vegas_counts_headers = true, vegas_zero_window_after_timeout = false, vegas_alpha_pkts = 2, vegas_beta_pkts = 4",
    ),
    ("westwood", "westwood", ""),
    ("westwood+", "westwood+", ""),
    ("abra", "abra", ""),
    ("abra-opts", "abra", ", abra_min_srtt_s = 0.05, abra_max_srtt_s = 1.0"),
    ("fixed-rto", "fixed-rto", ""),
    ("tcp-ap", "tcp-ap", ""),
    ("mpr", "mpr", ""),
    ("mpr-opts", "mpr", ", mpr_alpha = 0.9, mpr_beta = 2.0"),
    ("elfn", "elfn", ""),
    ("elfn-opts", "elfn", ", elfn_probe_interval_s = 0.5"),
    ("reno-sack-da-hs", "reno", ", sack = true, delayed_ack = true, handshake = true"),
    ("sack-da-hs", "sack", ", delayed_ack = true, handshake = true"),
];

fn chain_with_reverse_flow(transport: &str, tcp: &str) -> String {
    format!(
        r#"
        duration_s = 30
        [nodes]
        count = 8
        placement = {{ kind = "chain", spacing_m = 200 }}
        [radio]
        [[flows]]
        kind = "ftp"
        src = 0
        dst = 7
        transport = "{transport}"
        tcp = {{ trace = true{tcp} }}
        [[flows]]
        kind = "ftp"
        src = 7
        dst = 0
        start_s = 1.3
        transport = "{transport}"
        tcp = {{ trace = true{tcp} }}
        "#
    )
}

fn relay_outage(transport: &str, tcp: &str) -> String {
    common::relay::relay_outage_toml(
        "aodv",
        &format!("kind = \"ftp\"\ntransport = \"{transport}\"\ntcp = {{ trace = true{tcp} }}"),
    )
}

/// FNV-1a over the bits of the sender's time series: any change of any cwnd,
/// ssthresh, RTO, sequence or ACK value at any event shows.
fn trace_hash(t: &manetlab_core::transport::tcp::TcpTrace) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for i in 0..t.t_s.len() {
        eat(t.t_s[i].to_bits());
        eat(t.cwnd_segs[i].to_bits());
        eat(t.ssthresh_segs[i].to_bits());
        eat(t.rto_s[i].to_bits());
        eat(t.srtt_s[i].map_or(u64::MAX, f64::to_bits));
        eat(t.backoff[i].to_bits());
        eat(t.seq_segs[i]);
        eat(t.ack_segs[i]);
    }
    h
}

fn lines() -> Vec<String> {
    let mut out = Vec::new();
    for &(case, transport, tcp) in CASES {
        for (where_, text) in [
            ("chain", chain_with_reverse_flow(transport, tcp)),
            ("relay", relay_outage(transport, tcp)),
        ] {
            let r = run(&Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}")));
            for f in &r.flows {
                let t = f.tcp.as_ref().expect("an FTP flow has TCP results");
                out.push(format!(
                    "{case} {where_} flow{}: sent {} retx {} to {} fr {} ack {} drops {} freezes {} probes {} cwnd {} trace {:016x}",
                    f.flow,
                    t.data_segments_sent,
                    t.retransmissions,
                    t.timeouts,
                    t.fast_retransmits,
                    t.highest_ack_segs,
                    t.drops_detected,
                    t.route_freezes,
                    t.route_probes,
                    t.final_cwnd_segs,
                    trace_hash(t.trace.as_ref().expect("trace = true")),
                ));
            }
        }
    }
    out
}

const EXPECTED: &str = "\
tahoe chain flow0: sent 236 retx 20 to 2 fr 9 ack 206 drops 0 freezes 0 probes 0 cwnd 9.36002938137635 trace 2460624b898f7702\n\
tahoe chain flow1: sent 248 retx 24 to 3 fr 9 ack 222 drops 0 freezes 0 probes 0 cwnd 2 trace 03b6a6df41db6721\n\
tahoe relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
reno chain flow0: sent 273 retx 16 to 3 fr 7 ack 249 drops 0 freezes 0 probes 0 cwnd 7.739436590732398 trace 73c100cb8cf7fa3a\n\
reno chain flow1: sent 215 retx 21 to 5 fr 6 ack 192 drops 0 freezes 0 probes 0 cwnd 2 trace f11ebf68dc9b4d2d\n\
reno relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
newreno chain flow0: sent 260 retx 21 to 1 fr 9 ack 223 drops 0 freezes 0 probes 0 cwnd 4.027774287292675 trace a3c810ee9856ad6a\n\
newreno chain flow1: sent 223 retx 24 to 4 fr 7 ack 197 drops 0 freezes 0 probes 0 cwnd 2 trace b8466954ba16b689\n\
newreno relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
sack chain flow0: sent 235 retx 21 to 3 fr 9 ack 209 drops 0 freezes 0 probes 0 cwnd 5.019022055240874 trace 73ad850cc5311121\n\
sack chain flow1: sent 256 retx 16 to 0 fr 10 ack 236 drops 0 freezes 0 probes 0 cwnd 4.021540987317683 trace af299c13bd131aaa\n\
sack relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
fack chain flow0: sent 222 retx 16 to 1 fr 9 ack 202 drops 0 freezes 0 probes 0 cwnd 4.164411216286025 trace 583ff12a1a75fd37\n\
fack chain flow1: sent 252 retx 17 to 1 fr 10 ack 233 drops 0 freezes 0 probes 0 cwnd 2 trace 587e7a3cc12aea3d\n\
fack relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
fack-mathis chain flow0: sent 300 retx 28 to 3 fr 9 ack 265 drops 0 freezes 0 probes 0 cwnd 7.164860059920472 trace 4f774ca09b674604\n\
fack-mathis chain flow1: sent 197 retx 17 to 2 fr 10 ack 177 drops 0 freezes 0 probes 0 cwnd 3.1610151650732714 trace b119564162107072\n\
fack-mathis relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace 4ccf87888562295d\n\
vegas chain flow0: sent 204 retx 9 to 2 fr 5 ack 193 drops 0 freezes 0 probes 0 cwnd 2.5 trace 3cf8d2e381391f23\n\
vegas chain flow1: sent 279 retx 14 to 2 fr 10 ack 261 drops 0 freezes 0 probes 0 cwnd 4 trace 0132d2f002b5856d\n\
vegas relay flow0: sent 1812 retx 13 to 6 fr 0 ack 1796 drops 0 freezes 0 probes 0 cwnd 3 trace 6b8750be9a039a86\n\
vegas-opts chain flow0: sent 242 retx 19 to 1 fr 12 ack 217 drops 0 freezes 0 probes 0 cwnd 6.333333333333334 trace 6f687c4e60b49114\n\
vegas-opts chain flow1: sent 263 retx 20 to 1 fr 15 ack 237 drops 0 freezes 0 probes 0 cwnd 6.000000000000001 trace 8e99d0fe7a627de8\n\
vegas-opts relay flow0: sent 1766 retx 14 to 6 fr 0 ack 1748 drops 0 freezes 0 probes 0 cwnd 4 trace 911fd104c5742b7b\n\
westwood chain flow0: sent 233 retx 27 to 4 fr 8 ack 202 drops 0 freezes 0 probes 0 cwnd 4.997532704493449 trace b5be9a14d17656e7\n\
westwood chain flow1: sent 262 retx 26 to 3 fr 9 ack 231 drops 0 freezes 0 probes 0 cwnd 5.053781049347505 trace 87446efdae879dce\n\
westwood relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace ffe5e96dadaa8d21\n\
westwood+ chain flow0: sent 235 retx 26 to 4 fr 9 ack 204 drops 0 freezes 0 probes 0 cwnd 5.754908962142979 trace 1e06535a6851808a\n\
westwood+ chain flow1: sent 251 retx 19 to 1 fr 8 ack 227 drops 0 freezes 0 probes 0 cwnd 5.390026771750771 trace 77c09420cef85ecf\n\
westwood+ relay flow0: sent 1672 retx 15 to 5 fr 0 ack 1637 drops 0 freezes 0 probes 0 cwnd 40.138120784286336 trace ffe5e96dadaa8d21\n\
abra chain flow0: sent 284 retx 30 to 4 fr 10 ack 249 drops 0 freezes 0 probes 0 cwnd 5.232141714579086 trace 56aae068cfc5c93a\n\
abra chain flow1: sent 207 retx 21 to 3 fr 9 ack 180 drops 0 freezes 0 probes 0 cwnd 1.76467838543222 trace 5f8ae68c9782b899\n\
abra relay flow0: sent 1692 retx 15 to 5 fr 0 ack 1657 drops 0 freezes 0 probes 0 cwnd 46.35113656424476 trace ca5bd97c0ac12cc2\n\
abra-opts chain flow0: sent 242 retx 36 to 7 fr 8 ack 199 drops 0 freezes 0 probes 0 cwnd 2.979383827016348 trace c6cb004c83edeb6d\n\
abra-opts chain flow1: sent 254 retx 15 to 0 fr 11 ack 236 drops 0 freezes 0 probes 0 cwnd 3.787422528143703 trace 110cb4fc419de9e2\n\
abra-opts relay flow0: sent 1689 retx 17 to 7 fr 0 ack 1652 drops 0 freezes 0 probes 0 cwnd 46.24311329258451 trace 1337b733c6c1f83a\n\
fixed-rto chain flow0: sent 260 retx 21 to 1 fr 9 ack 223 drops 0 freezes 0 probes 0 cwnd 4.027774287292675 trace a3c810ee9856ad6a\n\
fixed-rto chain flow1: sent 223 retx 24 to 4 fr 7 ack 197 drops 0 freezes 0 probes 0 cwnd 2 trace b8466954ba16b689\n\
fixed-rto relay flow0: sent 1695 retx 26 to 16 fr 0 ack 1649 drops 0 freezes 0 probes 0 cwnd 40.43607471272127 trace 0eef77470dfc4480\n\
tcp-ap chain flow0: sent 236 retx 3 to 0 fr 3 ack 230 drops 0 freezes 0 probes 0 cwnd 12.797224738005122 trace ec7caf83814fa1cd\n\
tcp-ap chain flow1: sent 230 retx 4 to 1 fr 2 ack 224 drops 0 freezes 0 probes 0 cwnd 16.053614719561867 trace 84426218faf5c35b\n\
tcp-ap relay flow0: sent 1758 retx 117 to 90 fr 0 ack 1638 drops 0 freezes 0 probes 0 cwnd 41.07422307619761 trace 7fc238d85ec91eca\n\
mpr chain flow0: sent 194 retx 23 to 0 fr 0 ack 168 drops 48 freezes 0 probes 0 cwnd 3.738827135139263 trace 21f9990a1e87d6e4\n\
mpr chain flow1: sent 167 retx 23 to 0 fr 0 ack 141 drops 41 freezes 0 probes 0 cwnd 3.954650781460696 trace b486d9641e81d45c\n\
mpr relay flow0: sent 1751 retx 32 to 21 fr 0 ack 1699 drops 41 freezes 0 probes 0 cwnd 41.6546016247007 trace a5ae2e5bdfd90bdc\n\
mpr-opts chain flow0: sent 322 retx 182 to 45 fr 0 ack 138 drops 184 freezes 0 probes 0 cwnd 2 trace 1512687f74391632\n\
mpr-opts chain flow1: sent 160 retx 18 to 0 fr 0 ack 137 drops 40 freezes 0 probes 0 cwnd 5.040913867844181 trace 7536f9f4322f5c02\n\
mpr-opts relay flow0: sent 1770 retx 33 to 22 fr 0 ack 1717 drops 42 freezes 0 probes 0 cwnd 42.08463033218307 trace 13ffe0ba62cf00c5\n\
elfn chain flow0: sent 260 retx 21 to 1 fr 9 ack 223 drops 0 freezes 0 probes 0 cwnd 4.027774287292675 trace a3c810ee9856ad6a\n\
elfn chain flow1: sent 223 retx 24 to 4 fr 7 ack 197 drops 0 freezes 0 probes 0 cwnd 2 trace b8466954ba16b689\n\
elfn relay flow0: sent 1670 retx 21 to 1 fr 0 ack 1629 drops 0 freezes 1 probes 9 cwnd 40.90734757514639 trace c9bc0e7a739a5d93\n\
elfn-opts chain flow0: sent 260 retx 21 to 1 fr 9 ack 223 drops 0 freezes 0 probes 0 cwnd 4.027774287292675 trace a3c810ee9856ad6a\n\
elfn-opts chain flow1: sent 223 retx 24 to 4 fr 7 ack 197 drops 0 freezes 0 probes 0 cwnd 2 trace b8466954ba16b689\n\
elfn-opts relay flow0: sent 1772 retx 47 to 1 fr 0 ack 1705 drops 0 freezes 1 probes 35 cwnd 42.72533885821063 trace 1605d0a801a5c2e5\n\
reno-sack-da-hs chain flow0: sent 329 retx 21 to 2 fr 11 ack 304 drops 0 freezes 0 probes 0 cwnd 4.095254632258779 trace 121f27bcd681ce32\n\
reno-sack-da-hs chain flow1: sent 166 retx 18 to 5 fr 7 ack 143 drops 0 freezes 0 probes 0 cwnd 5.0559149747937555 trace 13a500707440e86b\n\
reno-sack-da-hs relay flow0: sent 1918 retx 23 to 5 fr 0 ack 1875 drops 0 freezes 0 probes 0 cwnd 31.15791038109907 trace 3c21b02692c29e36\n\
sack-da-hs chain flow0: sent 277 retx 21 to 4 fr 8 ack 250 drops 0 freezes 0 probes 0 cwnd 6.877462178042702 trace d38becbcbd156e27\n\
sack-da-hs chain flow1: sent 224 retx 14 to 2 fr 8 ack 206 drops 0 freezes 0 probes 0 cwnd 4.106682310235737 trace 990537e8a0d9efb4\n\
sack-da-hs relay flow0: sent 1918 retx 23 to 5 fr 0 ack 1875 drops 0 freezes 0 probes 0 cwnd 31.15791038109907 trace a42a7bf75513a704
";

#[test]
fn every_variant_gives_its_pre_refactor_results() {
    let got = lines().join("\n");
    assert!(
        got == EXPECTED.trim(),
        "TCP variant results moved; the new table is:\n{got}"
    );
}
