//! ELFN — Explicit Link Failure Notification (Holland & Vaidya, "Analysis of TCP
//! performance over mobile ad hoc networks", MobiCom 1999, §5; paper 003's
//! ERDN/ERSN, Fig. 3). Built on NewReno (Holland & Vaidya used Reno).
//!
//! When the network layer reports that the route to the receiver failed (ERDN),
//! the sender enters stand-by: its retransmission timer is disabled and cwnd,
//! ssthresh and the RTO (with its backoff) are frozen; every probe interval it
//! sends a probe. When the route is reported back (ERSN) or an ACK arrives (a
//! probe got through), it leaves stand-by and continues with the frozen state.
//! The freeze itself is engine behaviour (sender.rs); this variant only asks for
//! it by returning its probe interval.
//!
//! Our choices: the probe is the oldest unacknowledged segment (or, with nothing
//! outstanding, the next new one) — Holland & Vaidya send "a packet"; the probe
//! interval defaults to 2 s (our reading of their base configuration; scenario key
//! `elfn_probe_interval_s`); on leaving stand-by the sender goes back to the
//! oldest unacknowledged segment with the frozen window (what was in flight was
//! lost with the route, and waiting for an RTO would cut cwnd to 1 — what ELFN
//! exists to avoid) and restarts the RTO at its frozen value. Notices before the
//! connection is established are ignored. Routing protocols raise the notices
//! (`RoutingAction::Notify`); static routing never does.

use crate::sim::num;
use crate::transport::tcp::cc::{CongestionControl, EngineOptions, Recovery};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::variants::{out_of_range, KeyResult, Variant};

/// Registry entry.
pub const VARIANT: Variant = Variant::new("elfn", |cfg| {
    Box::new(Elfn {
        probe_interval_s: ElfnParams::from_config(cfg).probe_interval_s,
    })
})
.checked(ElfnParams::check);

/// ELFN's parameters (scenario key `flows[].tcp.elfn_probe_interval_s`).
#[derive(Clone, Debug, PartialEq)]
pub struct ElfnParams {
    /// Probe interval while frozen, seconds, 0.001..=3600 (2, Holland & Vaidya 1999).
    pub probe_interval_s: f64,
}

impl Default for ElfnParams {
    fn default() -> Self {
        ElfnParams {
            probe_interval_s: 2.0,
        }
    }
}

impl ElfnParams {
    /// The flow's value, the default where the key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        ElfnParams {
            probe_interval_s: cfg
                .elfn_probe_interval_s
                .unwrap_or(ElfnParams::default().probe_interval_s),
        }
    }
    /// The range above.
    pub fn check(cfg: &TcpConfig) -> KeyResult {
        let s = ElfnParams::from_config(cfg).probe_interval_s;
        if !(1e-3..=3600.0).contains(&s) {
            return out_of_range("elfn_probe_interval_s", num(s), "0.001 <= seconds <= 3600");
        }
        Ok(())
    }
}

pub struct Elfn {
    /// Probe interval while frozen (s).
    pub probe_interval_s: f64,
}

impl CongestionControl for Elfn {
    fn name(&self) -> &'static str {
        "elfn"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            route_failure_probe_s: Some(self.probe_interval_s),
            ..EngineOptions::default()
        }
    }
}
