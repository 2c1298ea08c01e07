//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on
//! a Global Internet", IEEE JSAC 13(8), 1995; ns-2 `Agent/TCP/Vegas`). Reno recovery.
//!
//! * Congestion avoidance once per RTT: with BaseRTT the smallest RTT seen and
//!   RTT the smallest sample of the last round, Diff = cwnd · (1 − BaseRTT/RTT)
//!   segments (= (Expected − Actual) · BaseRTT); Diff < α → cwnd + 1,
//!   Diff > β → cwnd − 1, otherwise unchanged. α = 1, β = 3.
//! * Modified slow start: grow exponentially only every other RTT, and leave slow
//!   start when Diff > γ = 1 (cwnd is then capped at the target + 1, as Linux).
//! * Fine-grained retransmission: on a duplicate ACK, or on the first or second
//!   new ACK after a retransmission, retransmit at once if the oldest segment
//!   was sent more than the fine-grained timeout (SRTT + 4·RTTVAR, unrounded,
//!   no minimum) ago.
//! * The window is cut only for losses of segments sent after the last cut.
//!
//! Deviations: the cut itself is Reno's (ssthresh = FlightSize/2, as Linux
//! tcp_vegas) rather than the paper's smaller reduction; a round needs at least
//! 3 RTT samples, otherwise Reno's growth applies (Linux's rule).

use crate::sim::SimTime;
use crate::transport::tcp::cc::{reno_cong_avoid, reno_slow_start, reno_ssthresh, CcState, CongestionControl, Recovery};

pub struct Vegas {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    base_rtt_s: f64,
    round_min_rtt_s: f64,
    round_samples: u32,
    /// The round ends when the ACK passes this segment.
    round_end: u64,
    /// Slow start grows in alternate rounds.
    grow_round: bool,
    last_cut: Option<SimTime>,
    /// New ACKs after a retransmission still to be checked (B&P: the first two).
    check_acks: u32,
}

impl Vegas {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            base_rtt_s: f64::INFINITY,
            round_min_rtt_s: f64::INFINITY,
            round_samples: 0,
            round_end: 0,
            grow_round: true,
            last_cut: None,
            check_acks: 0,
        }
    }

    /// Diff = cwnd · (1 − BaseRTT / RTT), in segments.
    pub fn diff(cwnd: f64, base_rtt_s: f64, rtt_s: f64) -> f64 {
        cwnd * (1.0 - base_rtt_s / rtt_s)
    }

    fn fine_timeout_expired(&self, s: &CcState) -> bool {
        match (s.srtt_s, s.una_sent_at) {
            (Some(srtt), Some(sent)) => s.now.since(sent).as_secs_f64() > srtt + 4.0 * s.rttvar_s,
            _ => false,
        }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
    fn on_rtt_sample(&mut self, _s: &CcState, rtt_s: f64) {
        self.base_rtt_s = self.base_rtt_s.min(rtt_s);
        self.round_min_rtt_s = self.round_min_rtt_s.min(rtt_s);
        self.round_samples += 1;
    }
    fn cong_avoid(&mut self, s: &mut CcState, acked: u64) {
        if s.in_slow_start() && self.grow_round {
            reno_slow_start(s, acked);
        }
        if s.snd_una < self.round_end {
            return;
        }
        // One round (RTT) is over.
        self.round_end = s.snd_max;
        if self.round_samples < 3 {
            if !s.in_slow_start() {
                reno_cong_avoid(s, acked);
            }
        } else {
            let rtt = self.round_min_rtt_s;
            let diff = Self::diff(s.cwnd, self.base_rtt_s, rtt);
            if s.in_slow_start() {
                if diff > self.gamma {
                    let target = s.cwnd * self.base_rtt_s / rtt;
                    s.cwnd = s.cwnd.min(target.floor() + 1.0).max(2.0);
                    s.ssthresh = s.cwnd;
                }
                self.grow_round = !self.grow_round;
            } else if diff < self.alpha {
                s.cwnd += 1.0;
            } else if diff > self.beta {
                s.cwnd = (s.cwnd - 1.0).max(2.0);
            }
        }
        self.round_min_rtt_s = f64::INFINITY;
        self.round_samples = 0;
    }
    fn on_dup_ack(&mut self, s: &CcState, dupacks: u32) -> bool {
        dupacks == s.dupthresh || (dupacks < s.dupthresh && self.fine_timeout_expired(s))
    }
    fn enter_recovery(&mut self, s: &mut CcState, _kind: Recovery) {
        let cut = match (self.last_cut, s.una_sent_at) {
            (Some(cut), Some(sent)) => sent > cut,
            _ => true,
        };
        if cut {
            s.ssthresh = reno_ssthresh(s);
            self.last_cut = Some(s.now);
        } else {
            s.ssthresh = s.cwnd.floor().max(2.0);
        }
        // Inflate by the duplicate ACKs actually seen (fewer than 3 on a fine-grained retransmit).
        s.cwnd = s.ssthresh + f64::from(s.dupacks);
        self.check_acks = 2;
    }
    fn on_timeout(&mut self, s: &mut CcState) {
        if s.consecutive_timeouts <= 1 {
            s.ssthresh = reno_ssthresh(s);
        }
        s.cwnd = 1.0;
        self.last_cut = Some(s.now);
        self.check_acks = 2;
    }
    fn retransmit_on_new_ack(&mut self, s: &CcState) -> bool {
        if self.check_acks == 0 {
            return false;
        }
        self.check_acks -= 1;
        self.fine_timeout_expired(s)
    }
}
