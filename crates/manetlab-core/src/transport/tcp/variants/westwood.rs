//! TCP Westwood and Westwood+ — bandwidth-estimate-driven ssthresh. NewReno recovery.
//!
//! * Westwood (Mascolo, Casetti, Gerla, Sanadidi, Wang, MobiCom 2001): a sample
//!   b_k = d_k / Δ_k on every ACK (d_k the segments it acknowledges, a duplicate
//!   ACK counting as one), filtered with the paper's discrete Tustin filter
//!   bwe_k = α_k·bwe_{k−1} + (1 − α_k)·(b_k + b_{k−1})/2, α_k = (2τ − Δ_k)/(2τ + Δ_k).
//! * Westwood+ (Grieco & Mascolo, CCR 34(2), 2004; "WestwoodNR" in paper 002):
//!   one sample per RTT, b = data acked in the RTT / its duration, smoothed by two
//!   cascaded EWMAs of gain 1/8 (as Linux `tcp_westwood.c`).
//! * After three duplicate ACKs ssthresh = max(BWE · RTTmin / MSS, 2) and cwnd =
//!   min(cwnd, ssthresh) — never raised (the UCLA ns-2 module and Linux
//!   `tcp_westwood`); the engine adds NewReno's dupwnd inflation. After a timeout
//!   the same ssthresh and cwnd = 1.
//!
//! Westwood is not in ns-2.35 mainline; we follow the papers and the contributed
//! module's conventions. Our choices: τ = 0.5 s for Westwood's filter (the paper
//! treats it as a design constant); when ACKs are more than τ/2 apart the filter
//! first takes virtual zero samples every τ/2 (Casetti, Gerla, Mascolo et al.,
//! Wireless Networks 8, 2002: "virtual null samples"), so the weight
//! α = (2τ − Δ)/(2τ + Δ) never goes negative and the estimate decays toward 0 over
//! a silence instead of flipping sign; a Westwood+ round lasts max(SRTT, 50 ms)
//! (Linux); Linux's delayed/cumulative ACK accounting keeps dup ACKs from being
//! counted twice. Before the first estimate ssthresh falls back to Reno's.

use crate::sim::SimTime;
use crate::transport::tcp::cc::{reno_ssthresh, CcState, CongestionControl, Recovery};
use crate::transport::tcp::variants::Variant;

/// Registry entries (no parameters): Westwood and Westwood+.
pub const VARIANT: Variant = Variant::new("westwood", |_| Box::new(Westwood::new(false)));
pub const VARIANT_PLUS: Variant = Variant::new("westwood+", |_| Box::new(Westwood::new(true)));

/// Westwood's filter time constant τ (s).
pub const WESTWOOD_TAU_S: f64 = 0.5;

pub struct Westwood {
    plus: bool,
    /// Bandwidth estimate (segments/s).
    pub bwe: f64,
    bw_ns_est: f64,
    last_sample: f64,
    last_ack_at: Option<SimTime>,
    round_start: Option<SimTime>,
    round_acked: u64,
    /// Segments already credited to duplicate ACKs (Linux `accounted`).
    accounted: u64,
    pub rtt_min_s: f64,
}

impl Westwood {
    pub fn new(plus: bool) -> Self {
        Westwood {
            plus,
            bwe: 0.0,
            bw_ns_est: 0.0,
            last_sample: 0.0,
            last_ack_at: None,
            round_start: None,
            round_acked: 0,
            accounted: 0,
            rtt_min_s: f64::INFINITY,
        }
    }

    /// Segments this ACK delivered, crediting duplicate ACKs once (Linux accounting).
    fn delivered(&mut self, acked: u64) -> u64 {
        if acked == 0 {
            self.accounted += 1;
            return 1;
        }
        if acked > 1 {
            if self.accounted >= acked {
                self.accounted -= acked;
                return 1;
            }
            let d = acked - self.accounted;
            self.accounted = 0;
            return d;
        }
        acked
    }
}

impl Westwood {
    /// One step of the Tustin filter with sample `b` after `dt` seconds (dt ≤ 2τ).
    fn filter(&mut self, b: f64, dt: f64) {
        let a = (2.0 * WESTWOOD_TAU_S - dt) / (2.0 * WESTWOOD_TAU_S + dt);
        self.bwe = a * self.bwe + (1.0 - a) * (b + self.last_sample) / 2.0;
        self.last_sample = b;
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        if self.plus {
            "westwood+"
        } else {
            "westwood"
        }
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_rtt_sample(&mut self, _s: &CcState, rtt_s: f64) {
        self.rtt_min_s = self.rtt_min_s.min(rtt_s);
    }
    fn pkts_acked(&mut self, s: &CcState, acked: u64) {
        let d = self.delivered(acked);
        if self.plus {
            let start = *self.round_start.get_or_insert(s.now);
            self.round_acked += d;
            let span = s.now.since(start).as_secs_f64();
            if span > s.srtt_s.unwrap_or(0.0).max(0.05) {
                let b = self.round_acked as f64 / span;
                if self.bwe == 0.0 {
                    self.bw_ns_est = b;
                    self.bwe = b;
                } else {
                    self.bw_ns_est = (7.0 * self.bw_ns_est + b) / 8.0;
                    self.bwe = (7.0 * self.bwe + self.bw_ns_est) / 8.0;
                }
                self.round_start = Some(s.now);
                self.round_acked = 0;
            }
        } else {
            if let Some(prev) = self.last_ack_at {
                let mut dt = s.now.since(prev).as_secs_f64();
                if dt > 0.0 {
                    // The real sample is the segments over the whole gap; virtual null
                    // samples every τ/2 fill the silence before it.
                    let b = d as f64 / dt;
                    let step = WESTWOOD_TAU_S / 2.0;
                    while dt > step {
                        self.filter(0.0, step);
                        dt -= step;
                    }
                    self.filter(b, dt);
                }
            }
            self.last_ack_at = Some(s.now);
        }
    }
    fn enter_recovery(&mut self, s: &mut CcState) {
        s.ssthresh = self.ssthresh(s);
        s.cwnd = s.cwnd.min(s.ssthresh).max(1.0);
    }
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        if self.bwe > 0.0 && self.rtt_min_s.is_finite() {
            (self.bwe * self.rtt_min_s).floor().max(2.0)
        } else {
            reno_ssthresh(s)
        }
    }
}
