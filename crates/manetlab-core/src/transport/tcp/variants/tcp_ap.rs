//! TCP-AP — TCP with Adaptive Pacing (ElRakabawy, Klemm, Lindemann, "TCP with
//! adaptive pacing for multihop wireless networks", MobiHoc 2005; as paper 001
//! uses it). Built on NewReno. We follow the authors' published ns-2 module
//! (`Agent/TCP/Newreno/AP`, read for understanding only).
//!
//! Rate-based scheduling inside the congestion window: a new segment leaves no
//! sooner than
//!
//! ```text
//! gap = (1 + 2·adev) · FHD
//! ```
//!
//! after the previous one, where FHD is the smoothed four-hop delay (802.11
//! reuses the channel only every four hops) and adev the relative mean absolute
//! deviation of recent four-hop-delay samples (the module's stand-in for the paper's
//! coefficient of variation of the RTT; contention shows up as variance first).
//!
//! Per RTT sample R on a path of h hops (the module's arithmetic):
//! * per-hop queueing delay q = ½·(R/h − (D + A)/B), with D = MSS + 112 and A = 112
//!   bytes of packet with all headers and B = 2 Mb/s the assumed link rate; a q above
//!   the 0.5 s delay bound is replaced by the running mean of q (EWMA ½);
//! * one-hop delay d = q + D/B; n-hop delay = 4·d when h ≥ 4, else d (a short path
//!   is paced by one hop's delay);
//! * a sample outside (0, 0.5 s) is discarded; otherwise FHD ← α·FHD + (1 − α)·sample
//!   (α = 0.7, the first sample initialises) and it enters the 50-sample history;
//! * adev = mean |sample − mean| / mean over the history.
//!
//! The engine's pacing timer enforces the gap for new data only; retransmissions
//! are not paced. As the module, TCP-AP does not back the RTO off after a timeout.
//!
//! Deviations from the module: samples are the engine's Karn-valid ones (the module
//! uses every ACK's echoed timestamp); the hop count comes from the IP TTL of the
//! arriving segment (the module's `num_forwards()` of the ACK).

use crate::sim::num;
use crate::transport::tcp::cc::{CcState, CongestionControl, Recovery};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::variants::{out_of_range, KeyResult, Variant};
use std::collections::VecDeque;

/// Registry entry.
pub const VARIANT: Variant = Variant::new("tcp-ap", |cfg| {
    let p = TcpApParams::from_config(cfg);
    Box::new(TcpAp::new(p.alpha, p.history_samples as usize, p.span_hops))
})
.checked(TcpApParams::check);

/// TCP-AP's parameters (scenario keys `flows[].tcp.tcpap_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpApParams {
    /// EWMA weight of the old four-hop-delay estimate, in [0, 1) (0.7, the published
    /// module's `alpha_`). Key `tcpap_alpha`.
    pub alpha: f64,
    /// Four-hop-delay samples over which the deviation is computed, 2..=100000 (50,
    /// ns-2 `history_`). Key `tcpap_history_samples`.
    pub history_samples: u32,
    /// Hops of channel reuse: FHD = delay over min(h, this) hops, 1..=1000 (4,
    /// ElRakabawy et al.). Key `tcpap_span_hops`.
    pub span_hops: u32,
}

impl Default for TcpApParams {
    fn default() -> Self {
        TcpApParams {
            alpha: 0.7,
            history_samples: 50,
            span_hops: 4,
        }
    }
}

impl TcpApParams {
    /// The flow's values, defaults where a key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        let d = TcpApParams::default();
        TcpApParams {
            alpha: cfg.tcpap_alpha.unwrap_or(d.alpha),
            history_samples: cfg.tcpap_history_samples.unwrap_or(d.history_samples),
            span_hops: cfg.tcpap_span_hops.unwrap_or(d.span_hops),
        }
    }
    /// The ranges above.
    pub fn check(cfg: &TcpConfig) -> KeyResult {
        let p = TcpApParams::from_config(cfg);
        if !(0.0..1.0).contains(&p.alpha) {
            return out_of_range("tcpap_alpha", num(p.alpha), "0 <= value < 1");
        }
        if !(2..=100_000).contains(&p.history_samples) {
            return out_of_range(
                "tcpap_history_samples",
                p.history_samples.to_string(),
                "2..=100000",
            );
        }
        if !(1..=1000).contains(&p.span_hops) {
            return out_of_range("tcpap_span_hops", p.span_hops.to_string(), "1..=1000");
        }
        Ok(())
    }
}

/// Per-packet header overhead the module assumes (TCP, IP, MAC), bytes.
pub const TCPAP_OVERHEAD_BYTES: f64 = 112.0;
/// Link rate the module assumes to split the RTT, bit/s.
pub const TCPAP_LINK_BPS: f64 = 2e6;
/// Samples at or above this delay are discarded (module `delaybound_`), s.
pub const TCPAP_DELAY_BOUND_S: f64 = 0.5;

pub struct TcpAp {
    /// EWMA weight of the old FHD estimate (0.7).
    pub alpha: f64,
    /// Four-hop-delay samples kept for adev (50).
    pub history: usize,
    /// Hops over which the channel is reused (4).
    pub span_hops: u32,
    /// Smoothed four-hop delay (s), None before the first accepted sample.
    pub fhd_s: Option<f64>,
    /// Running mean of the per-hop queueing delay (s).
    avg_queue_s: f64,
    samples: VecDeque<f64>,
    mss_bytes: f64,
}

impl TcpAp {
    pub fn new(alpha: f64, history: usize, span_hops: u32) -> Self {
        TcpAp {
            alpha,
            history: history.max(1),
            span_hops: span_hops.max(1),
            fhd_s: None,
            avg_queue_s: 0.0,
            samples: VecDeque::new(),
            mss_bytes: 1000.0,
        }
    }
    /// The n-hop-delay sample of one RTT sample on a path of `hops` hops (also updates
    /// the running queueing-delay mean, as the module does for every sample).
    pub fn fhd_sample(&mut self, rtt_s: f64, hops: u32) -> f64 {
        let h = f64::from(hops.max(1));
        let bw = TCPAP_LINK_BPS / 8.0;
        let data = self.mss_bytes + TCPAP_OVERHEAD_BYTES;
        let ack = TCPAP_OVERHEAD_BYTES;
        let mut q = 0.5 * (rtt_s / h - (data + ack) / bw);
        if q > TCPAP_DELAY_BOUND_S {
            q = self.avg_queue_s;
        }
        self.avg_queue_s = 0.5 * self.avg_queue_s + 0.5 * q;
        let one_hop = q + data / bw;
        if hops >= self.span_hops {
            one_hop * f64::from(self.span_hops)
        } else {
            one_hop
        }
    }
    /// Relative mean absolute deviation of the sample history (0 with fewer than two).
    pub fn adev(&self) -> f64 {
        let n = self.samples.len() as f64;
        if self.samples.len() < 2 {
            return 0.0;
        }
        let mean = self.samples.iter().sum::<f64>() / n;
        if mean <= 0.0 {
            return 0.0;
        }
        self.samples.iter().map(|x| (x - mean).abs()).sum::<f64>() / n / mean
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
        self.mss_bytes = f64::from(s.mss);
        let sample = self.fhd_sample(rtt_s, s.path_hops.unwrap_or(1));
        if !(sample > 0.0 && sample < TCPAP_DELAY_BOUND_S) {
            return;
        }
        self.fhd_s = Some(match self.fhd_s {
            None => sample,
            Some(f) => self.alpha * f + (1.0 - self.alpha) * sample,
        });
        if self.samples.len() == self.history {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }
    fn pacing_gap_s(&self, _s: &CcState) -> Option<f64> {
        self.fhd_s.map(|fhd| (1.0 + 2.0 * self.adev()) * fhd)
    }
    fn backoff_rto(&mut self, _s: &mut CcState) -> bool {
        true // the module's timeout calls reset_rtx_timer(0, 0): no backoff
    }
}
