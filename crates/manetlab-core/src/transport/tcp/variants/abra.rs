//! ABRA — Adaptive Backoff and Response Approach (Ghanem, Elkilani, Hadhood,
//! Mansoura Engineering Journal 33(1), 2008; paper 000 §3). Built on NewReno.
//!
//! * When the retransmission timer expires, save cwnd, ssthresh and SRTT as
//!   last_cwnd, last_ssthr, last_srtt.
//! * Instead of doubling, multiply the RTO by
//!   backoff_new = 1 + (last_srtt − min_srtt) / (max_srtt − min_srtt),
//!   where min_srtt / max_srtt are the smallest / largest SRTT seen so far,
//!   initialised to 0.1 s / 0.6 s.
//! * On the ACK that covers the retransmitted segment, return to the state
//!   before the timeout with cwnd = last_cwnd / 2 and ssthresh = last_ssthr / 4,
//!   and the RTO without backoff.
//!
//! Our choices (the paper is silent): the state is saved at the first of a run
//! of consecutive timeouts (later expiries would save the post-timeout cwnd of
//! 1); backoff_new is clamped to [1, 2] (SRTT outside [min, max] cannot happen
//! once min/max track it, but the first timeout may precede any sample: then
//! last_srtt is unknown and we double, as NewReno); cwnd ≥ 1 and ssthresh ≥ 2
//! segments after the response.

use crate::sim::num;
use crate::transport::tcp::cc::{CcState, CongestionControl, Recovery};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::rto::MAX_BACKOFF;
use crate::transport::tcp::variants::{KeyResult, Variant};

/// Registry entry.
pub const VARIANT: Variant = Variant::new("abra", |cfg| {
    let p = AbraParams::from_config(cfg);
    Box::new(Abra::new(p.min_srtt_s, p.max_srtt_s))
})
.checked(AbraParams::check);

/// ABRA's parameters (scenario keys `flows[].tcp.abra_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct AbraParams {
    /// Initial min_srtt, seconds (paper 000: 0.1). Key `abra_min_srtt_s`.
    pub min_srtt_s: f64,
    /// Initial max_srtt, seconds (paper 000: 0.6), > min_srtt_s. Key `abra_max_srtt_s`.
    pub max_srtt_s: f64,
}

impl Default for AbraParams {
    fn default() -> Self {
        AbraParams {
            min_srtt_s: 0.1,
            max_srtt_s: 0.6,
        }
    }
}

impl AbraParams {
    /// The flow's values, defaults where a key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        let d = AbraParams::default();
        AbraParams {
            min_srtt_s: cfg.abra_min_srtt_s.unwrap_or(d.min_srtt_s),
            max_srtt_s: cfg.abra_max_srtt_s.unwrap_or(d.max_srtt_s),
        }
    }
    /// min_srtt_s < max_srtt_s (each is already a finite number ≥ 0).
    pub fn check(cfg: &TcpConfig) -> KeyResult {
        let p = AbraParams::from_config(cfg);
        if p.min_srtt_s >= p.max_srtt_s {
            return Err((
                "abra_max_srtt_s".to_string(),
                format!(
                    "{} must be > abra_min_srtt_s = {}",
                    num(p.max_srtt_s),
                    num(p.min_srtt_s)
                ),
            ));
        }
        Ok(())
    }
}

pub struct Abra {
    pub min_srtt_s: f64,
    pub max_srtt_s: f64,
    /// (last_cwnd, last_ssthr, last_srtt) saved at the timeout.
    saved: Option<(f64, f64, Option<f64>)>,
}

impl Abra {
    pub fn new(min_srtt_s: f64, max_srtt_s: f64) -> Self {
        Abra {
            min_srtt_s,
            max_srtt_s,
            saved: None,
        }
    }

    /// backoff_new for a given last_srtt (paper 000, §3), clamped to [1, 2].
    pub fn backoff_factor(&self, last_srtt_s: f64) -> f64 {
        let span = self.max_srtt_s - self.min_srtt_s;
        if span <= 0.0 {
            return 2.0;
        }
        (1.0 + (last_srtt_s - self.min_srtt_s) / span).clamp(1.0, 2.0)
    }
}

impl CongestionControl for Abra {
    fn name(&self) -> &'static str {
        "abra"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_rtt_sample(&mut self, s: &CcState, _rtt_s: f64) {
        if let Some(srtt) = s.srtt_s {
            self.min_srtt_s = self.min_srtt_s.min(srtt);
            self.max_srtt_s = self.max_srtt_s.max(srtt);
        }
    }
    fn on_timeout(&mut self, s: &mut CcState) {
        if self.saved.is_none() {
            self.saved = Some((s.cwnd, s.ssthresh, s.srtt_s));
        }
        // NewReno's (ns-2) response to every timeout.
        s.ssthresh = self.ssthresh(s);
        s.cwnd = 1.0;
    }
    fn backoff_rto(&mut self, s: &mut CcState) -> bool {
        let factor = match self.saved {
            Some((_, _, Some(srtt))) => self.backoff_factor(srtt),
            _ => 2.0,
        };
        s.backoff = (s.backoff * factor).min(MAX_BACKOFF);
        true
    }
    fn on_ack_after_timeout(&mut self, s: &mut CcState) {
        if let Some((cwnd, ssthresh, _)) = self.saved.take() {
            s.cwnd = (cwnd / 2.0).max(1.0);
            s.ssthresh = (ssthresh / 4.0).max(2.0);
            s.backoff = 1.0;
        }
    }
}
