//! TCP-AP — TCP with Adaptive Pacing (ElRakabawy, Klemm, Lindemann, "TCP with
//! adaptive pacing for multihop wireless networks", MobiHoc 2005; as paper 001
//! uses it). Built on NewReno.
//!
//! Rate-based scheduling inside the congestion window: a new segment leaves no
//! sooner than
//!
//! ```text
//! gap = (1 + 2·covRTT) · FHD
//! ```
//!
//! after the previous one, where FHD is the estimated four-hop propagation delay
//! (an 802.11 chain reuses the channel only every four hops, so one packet per
//! four-hop delay is the rate a chain can carry) and covRTT the coefficient of
//! variation of recent RTT samples (contention shows up as RTT variance first).
//!
//! Our reading, per RTT sample R on a path of h hops:
//! * one-hop delay d = R / (2h) (R spans h data hops and h ACK hops, weighted
//!   equally);
//! * FHD sample = min(h, 4) · d (a path shorter than four hops shares one
//!   contention region, so its whole length is the spacing);
//! * FHD ← α·FHD + (1 − α)·sample with α = 0.7 (the first sample initialises);
//! * covRTT = σ/μ (population standard deviation over the mean) of the last 50
//!   RTT samples.
//!
//! The engine's pacing timer enforces the gap for new data only; retransmissions
//! (fast retransmit on duplicate ACKs, NewReno partial ACKs, go-back-N after a
//! timeout) are not paced, as the published ns-2 module bypasses pacing for them.
//!
//! Hop count: the simulator measures h from the IP TTL of each segment arriving at
//! the sender (`DEFAULT_TTL − ttl + 1`: the ACK's own path), like the ns-2 module's
//! `num_forwards()` of the ACK; with symmetric routes this is the data path. An
//! unknown hop count counts as one hop.
//!
//! Deviations from the published ns-2 module (`tcp-ap.cc`, read for understanding
//! only): it splits the RTT by packet sizes at an assumed 2 Mb/s link rate and
//! discards samples above 0.5 s; it paces paths shorter than four hops by one hop
//! delay; it uses the mean absolute deviation of the n-hop-delay samples instead of
//! covRTT; and it does not back the RTO off. We follow the paper's formula with
//! NewReno's RTO unchanged. α, the history length and the four-hop span are
//! scenario parameters (`tcpap_alpha`, `tcpap_history_samples`, `tcpap_span_hops`).

use crate::transport::tcp::cc::{CcState, CongestionControl, Recovery};
use std::collections::VecDeque;

pub struct TcpAp {
    /// EWMA weight of the old FHD estimate (0.7).
    pub alpha: f64,
    /// RTT samples kept for covRTT (50).
    pub history: usize,
    /// Hops over which the channel is reused (4).
    pub span_hops: u32,
    /// Smoothed four-hop delay (s), None before the first sample.
    pub fhd_s: Option<f64>,
    rtts: VecDeque<f64>,
}

impl TcpAp {
    pub fn new(alpha: f64, history: usize, span_hops: u32) -> Self {
        TcpAp { alpha, history: history.max(1), span_hops: span_hops.max(1), fhd_s: None, rtts: VecDeque::new() }
    }

    /// The FHD sample of one RTT sample on a path of `hops` hops.
    pub fn fhd_sample(&self, rtt_s: f64, hops: u32) -> f64 {
        let h = hops.max(1);
        f64::from(h.min(self.span_hops)) * rtt_s / (2.0 * f64::from(h))
    }

    /// Coefficient of variation σ/μ of the RTT history (0 with fewer than two samples).
    pub fn cov_rtt(&self) -> f64 {
        let n = self.rtts.len() as f64;
        if self.rtts.len() < 2 {
            return 0.0;
        }
        let mean = self.rtts.iter().sum::<f64>() / n;
        if mean <= 0.0 {
            return 0.0;
        }
        let var = self.rtts.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
        var.sqrt() / mean
    }
}

impl CongestionControl for TcpAp {
    fn name(&self) -> &'static str {
        "tcp-ap"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_rtt_sample(&mut self, s: &CcState, rtt_s: f64) {
        let sample = self.fhd_sample(rtt_s, s.path_hops.unwrap_or(1));
        self.fhd_s = Some(match self.fhd_s {
            None => sample,
            Some(f) => self.alpha * f + (1.0 - self.alpha) * sample,
        });
        if self.rtts.len() == self.history {
            self.rtts.pop_front();
        }
        self.rtts.push_back(rtt_s);
    }
    fn pacing_gap_s(&self, _s: &CcState) -> Option<f64> {
        self.fhd_s.map(|fhd| (1.0 + 2.0 * self.cov_rtt()) * fhd)
    }
}
