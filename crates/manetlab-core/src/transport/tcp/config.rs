//! `flows[].tcp` — the TCP parameter table of a scenario (docs/tcp.md).
//!
//! Strict: unknown keys are errors. Every field has a unit and an ns-2 default
//! (MODEL_DEFAULTS.md, ns-2.35 `tcl/lib/ns-default.tcl`).

use crate::sim::num;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Maximum window, segments: the receiver advertises window_pkts · mss_bytes and the
    /// sender never has more outstanding (ns-2 `window_` = 20).
    pub window_pkts: u32,
    /// Segment payload, bytes (ns-2 `packetSize_` = 1000).
    pub mss_bytes: u32,
    /// Initial congestion window, segments (ns-2 `windowInit_` = 2).
    pub initial_window_pkts: u32,
    /// Duplicate ACKs that trigger fast retransmit (ns-2 `numdupacks_` = 3).
    pub dupack_threshold: u32,
    /// Receiver delays ACKs (every 2nd segment or the timeout); ns-2 `TCPSink/DelAck`. Default false.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout, seconds (ns-2 `DelAckSink interval_` = 0.1).
    pub delayed_ack_timeout_s: f64,
    /// Sender offers SACK. Default: true for `sack` and `fack`, false otherwise.
    pub sack: Option<bool>,
    /// RTO lower bound, seconds (ns-2 `minrto_` = 0.2).
    pub min_rto_s: f64,
    /// RTO upper bound, seconds (ns-2 `maxrto_` = 60).
    pub max_rto_s: f64,
    /// RTO before the first RTT sample, seconds (ns-2 `rtxcur_init_` = 3).
    pub initial_rto_s: f64,
    /// Timer granularity, seconds (ns-2 `tcpTick_` = 0.01).
    pub clock_tick_s: f64,
    /// Record the cwnd/ssthresh/RTO/SRTT/seq/ACK time series in the results.
    pub trace: bool,
    /// Full TCP connection management: SYN → SYN-ACK → ACK with MSS/SACK-permitted
    /// options, FIN → FIN+ACK → ACK. Default false: ns-2's one-way `Agent/TCP` — a
    /// 40-byte SYN-like first packet acknowledged by a plain ACK, no FIN.
    pub handshake: bool,
    /// Vegas α, segments (Brakmo & Peterson: 1). Only with transport = "vegas".
    pub vegas_alpha_pkts: Option<f64>,
    /// Vegas β, segments (3). Only with "vegas".
    pub vegas_beta_pkts: Option<f64>,
    /// Vegas γ, segments (1). Only with "vegas".
    pub vegas_gamma_pkts: Option<f64>,
    /// Vegas segments count their 40 bytes of TCP/IP header on the air. Default
    /// false, as ns-2.35: `VegasTcpAgent::output` sends `packetSize_` bytes without
    /// `headersize()` (a 1000-byte segment is 1000 B, not 1040). Only with "vegas".
    pub vegas_counts_headers: Option<bool>,
    /// Vegas's window may fall to 0 after a timeout, as ns-2.35 (`v_newcwnd_ = 0` in
    /// `timeout()`, applied by the next new ACK after more than three duplicates; only
    /// the RTO reopens it). Default true; false keeps cwnd ≥ 1. Only with "vegas".
    pub vegas_zero_window_after_timeout: Option<bool>,
    /// ABRA initial min_srtt, seconds (paper 000: 0.1). Only with "abra".
    pub abra_min_srtt_s: Option<f64>,
    /// ABRA initial max_srtt, seconds (paper 000: 0.6). Only with "abra".
    pub abra_max_srtt_s: Option<f64>,
    /// TCP-AP: EWMA weight of the old four-hop-delay estimate, in [0, 1) (0.7, the
    /// published ns-2 module's `alpha_`). Only with "tcp-ap".
    pub tcpap_alpha: Option<f64>,
    /// TCP-AP: four-hop-delay samples over which the deviation is computed, >= 2 (50, ns-2 `history_`). Only with "tcp-ap".
    pub tcpap_history_samples: Option<u32>,
    /// TCP-AP: hops of channel reuse, FHD = delay over min(h, this) hops (4, ElRakabawy et al.). Only with "tcp-ap".
    pub tcpap_span_hops: Option<u32>,
    /// MPR / TCP-PR α: decay of the maximum-RTT estimate per window, in (0, 1] (paper 002: 0.99). Only with "mpr".
    pub mpr_alpha: Option<f64>,
    /// MPR / TCP-PR β: mxrtt = β · ewrtt, >= 1 (paper 002: 3.0). Only with "mpr".
    pub mpr_beta: Option<f64>,
    /// ELFN probe interval while frozen, seconds (2, Holland & Vaidya 1999). Only with "elfn".
    pub elfn_probe_interval_s: Option<f64>,
    /// FACK's rules: "ns2" (default, ns-2.35 `Agent/TCP/Fack`) or "mathis" (the
    /// published algorithm, Mathis & Mahdavi 1996, with RFC 6675's pipe). Only with "fack".
    pub fack_rules: Option<String>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            window_pkts: 20,
            mss_bytes: 1000,
            initial_window_pkts: 2,
            dupack_threshold: 3,
            delayed_ack: false,
            delayed_ack_timeout_s: 0.1,
            sack: None,
            min_rto_s: 0.2,
            max_rto_s: 60.0,
            initial_rto_s: 3.0,
            clock_tick_s: 0.01,
            trace: false,
            handshake: false,
            vegas_alpha_pkts: None,
            vegas_beta_pkts: None,
            vegas_gamma_pkts: None,
            vegas_counts_headers: None,
            vegas_zero_window_after_timeout: None,
            abra_min_srtt_s: None,
            abra_max_srtt_s: None,
            tcpap_alpha: None,
            tcpap_history_samples: None,
            tcpap_span_hops: None,
            mpr_alpha: None,
            mpr_beta: None,
            elfn_probe_interval_s: None,
            fack_rules: None,
        }
    }
}

impl TcpConfig {
    /// Semantic checks; `Err((key, message))` names the key below `flows[i].tcp`.
    pub fn check(&self, variant: &str, needs_sack: bool) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        for (k, v, lo, hi) in [
            ("window_pkts", self.window_pkts, 1, 1_000_000),
            ("mss_bytes", self.mss_bytes, 1, 65_495),
            (
                "initial_window_pkts",
                self.initial_window_pkts,
                1,
                1_000_000,
            ),
            ("dupack_threshold", self.dupack_threshold, 1, 1000),
        ] {
            if !(lo..=hi).contains(&v) {
                return e(k, format!("{v} is out of range (allowed: {lo}..={hi})"));
            }
        }
        if u64::from(self.window_pkts) * u64::from(self.mss_bytes) > u64::from(u32::MAX) / 2 {
            return e(
                "window_pkts",
                format!(
                    "window_pkts · mss_bytes = {} bytes is too large (allowed: < 2^31)",
                    u64::from(self.window_pkts) * u64::from(self.mss_bytes)
                ),
            );
        }
        for (k, v) in [
            ("delayed_ack_timeout_s", self.delayed_ack_timeout_s),
            ("min_rto_s", self.min_rto_s),
            ("max_rto_s", self.max_rto_s),
            ("initial_rto_s", self.initial_rto_s),
            ("clock_tick_s", self.clock_tick_s),
        ] {
            // 1 µs .. 10⁶ s: a timer of 0 ns would fire forever at one instant, one
            // beyond 10⁶ s could leave simulated time (a panic at run time, issue 34).
            if !(v.is_finite() && (1e-6..=1e6).contains(&v)) {
                return e(
                    k,
                    format!(
                        "{} is out of range (allowed: 1e-6 <= seconds <= 1000000)",
                        num(v)
                    ),
                );
            }
        }
        if self.max_rto_s < self.min_rto_s {
            return e(
                "max_rto_s",
                format!(
                    "{} is below min_rto_s = {}",
                    num(self.max_rto_s),
                    num(self.min_rto_s)
                ),
            );
        }
        if needs_sack && self.sack == Some(false) {
            return e(
                "sack",
                format!("transport \"{variant}\" needs SACK (leave sack out or set it true)"),
            );
        }
        for (k, v, owner) in [
            ("vegas_alpha_pkts", self.vegas_alpha_pkts, "vegas"),
            ("vegas_beta_pkts", self.vegas_beta_pkts, "vegas"),
            ("vegas_gamma_pkts", self.vegas_gamma_pkts, "vegas"),
            ("abra_min_srtt_s", self.abra_min_srtt_s, "abra"),
            ("abra_max_srtt_s", self.abra_max_srtt_s, "abra"),
            ("tcpap_alpha", self.tcpap_alpha, "tcp-ap"),
            (
                "tcpap_history_samples",
                self.tcpap_history_samples.map(f64::from),
                "tcp-ap",
            ),
            (
                "tcpap_span_hops",
                self.tcpap_span_hops.map(f64::from),
                "tcp-ap",
            ),
            ("mpr_alpha", self.mpr_alpha, "mpr"),
            ("mpr_beta", self.mpr_beta, "mpr"),
            ("elfn_probe_interval_s", self.elfn_probe_interval_s, "elfn"),
        ] {
            if let Some(v) = v {
                if variant != owner {
                    return e(k, format!("only applies to transport = \"{owner}\" (this flow uses \"{variant}\")"));
                }
                if !(v.is_finite() && v >= 0.0) {
                    return e(
                        k,
                        format!("{} is out of range (allowed: a finite number >= 0)", num(v)),
                    );
                }
            }
        }
        for (k, set) in [
            ("vegas_counts_headers", self.vegas_counts_headers.is_some()),
            (
                "vegas_zero_window_after_timeout",
                self.vegas_zero_window_after_timeout.is_some(),
            ),
        ] {
            if set && variant != "vegas" {
                return e(
                    k,
                    format!("only applies to transport = \"vegas\" (this flow uses \"{variant}\")"),
                );
            }
        }
        if let Some(r) = self.fack_rules.as_deref() {
            if variant != "fack" {
                return e(
                    "fack_rules",
                    format!("only applies to transport = \"fack\" (this flow uses \"{variant}\")"),
                );
            }
            if r != "ns2" && r != "mathis" {
                return e(
                    "fack_rules",
                    format!("\"{r}\" is not allowed (allowed: \"ns2\", \"mathis\")"),
                );
            }
        }
        // The variant's own checks of its parameters (its file, `Variant::check`).
        if let Some(v) = super::variants::find(super::variants::REGISTRY, variant) {
            (v.check)(self)?;
        }
        Ok(())
    }
}
