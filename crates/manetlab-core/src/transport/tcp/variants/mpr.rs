//! MPR — Modified Packet Reordering (paper 002, §II), a TCP-PR derivative
//! (Bohacek, Hespanha, Lee, Lim, Obraczka, "TCP-PR: TCP for persistent packet
//! reordering", ICDCS 2003; "A new TCP for persistent packet reordering", IEEE/ACM
//! ToN 14(2), 2006). Engine: [`Recovery::Timestamp`] (`recovery/timestamp.rs`).
//!
//! What paper 002 says, and how we read it:
//! * "Technique has used two lists: 1. To-be-ack 2. To-be-sent … When the
//!   congestion window allows it, the packet is sent … and moved to the to-be-ack
//!   list" — the engine's window counts the to-be-ack list; the to-be-sent list is
//!   the dropped segments (resent first, oldest first) followed by new data.
//! * "Drops are always detected through timers … whenever a packet is sent … a
//!   timestamp is saved … it assumed that a packet was dropped at time when
//!   exceeds the packet's timestamp in the to-be-ack list plus an estimated maximum
//!   possible round-trip time mxrtt" — per-segment timestamps (reset when the
//!   segment is resent); no duplicate-ACK retransmission at all.
//! * "As data packets are sent and ACKs received, the estimate mxrtt … is
//!   continuously updated"; the pseudo-code initialises alpha = 0.99, beta = 3.0.
//!   The update is TCP-PR's: on every RTT sample (Karn's rule applied)
//!   ewrtt ← max(α^(1/⌊cwnd⌋) · ewrtt, sample), mxrtt = β · ewrtt — a maximum that
//!   decays by α per window of samples (≈ per RTT). The first sample (normally
//!   the handshake's) initialises ewrtt; before it the engine uses its RTO.
//!   Paper 002 also lists "mxrtt = 0, srtt = 6.0", which we do not use: mxrtt = 0
//!   would declare every segment dropped at once.
//! * Drop of segment n (lines 8–14, garbled): "remove(to-be-ack, n);
//!   add(to-be-sent, n); if not is-in(memorize, n) then /*new drop*/
//!   memorize = to-be-ack; cwnd = cwnd(n)/2 else remove(memorize, n)" — the first
//!   drop of a window halves the window that was in force when n was sent
//!   (cwnd(n)) and remembers the to-be-ack list; later drops of remembered
//!   segments only leave the list. So cwnd halves once per window of drops.
//!   We take ssthresh = the halved cwnd (TCP-PR; the paper omits it, but its
//!   "cwnd < ssthresh" slow-start test needs one), never let the halving raise
//!   cwnd (min with the current cwnd), and floor cwnd at 1, ssthresh at 2 segments.
//! * "New ack received: if (cwnd < ssthresh) cwnd = cwnd + 1 else
//!   cwnd = cwnd + 1/cwnd" — Reno's growth (the default hook).
//! * "Timeout: ssthresh = cwnd/2; cwnd = 1" — the paper does not say when it
//!   fires and TCP-PR drops the coarse timer. Our choice: a Timeout is the drop of
//!   a segment that had been dropped before (its retransmission was lost too — what
//!   the RTO catches in standard TCP); the to-be-ack list is remembered so the
//!   rest of that window does not react again (one reaction per window, whether a
//!   halving or a Timeout). The engine waits 2^k · mxrtt before
//!   declaring a segment dropped for the (k+1)-th time (k ≤ 6): the exponential
//!   backoff that keeps a broken route from being flooded. Results count every
//!   repeated drop in `timeouts` (and never a fast retransmit).
//! * Without SACK, segments above a hole stay in the to-be-ack list until the
//!   cumulative ACK passes them, so they expire too and are resent (TCP-PR's
//!   known cost without SACK); being in the memorize list, they do not cut cwnd.

use crate::sim::num;
use crate::transport::tcp::cc::{CcState, CongestionControl, LostSegment, Recovery};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::variants::{out_of_range, KeyResult, Variant};
use std::collections::BTreeSet;

/// Registry entry.
pub const VARIANT: Variant = Variant::new("mpr", |cfg| {
    let p = MprParams::from_config(cfg);
    Box::new(Mpr::new(p.alpha, p.beta))
})
.checked(MprParams::check);

/// MPR's parameters (scenario keys `flows[].tcp.mpr_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct MprParams {
    /// TCP-PR α: decay of the maximum-RTT estimate per window, in (0, 1] (paper 002:
    /// 0.99). Key `mpr_alpha`.
    pub alpha: f64,
    /// TCP-PR β: mxrtt = β · ewrtt, 1..=1000 (paper 002: 3.0). Key `mpr_beta`.
    pub beta: f64,
}

impl Default for MprParams {
    fn default() -> Self {
        MprParams {
            alpha: 0.99,
            beta: 3.0,
        }
    }
}

impl MprParams {
    /// The flow's values, defaults where a key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        let d = MprParams::default();
        MprParams {
            alpha: cfg.mpr_alpha.unwrap_or(d.alpha),
            beta: cfg.mpr_beta.unwrap_or(d.beta),
        }
    }
    /// The ranges above.
    pub fn check(cfg: &TcpConfig) -> KeyResult {
        let p = MprParams::from_config(cfg);
        if !(p.alpha > 0.0 && p.alpha <= 1.0) {
            return out_of_range("mpr_alpha", num(p.alpha), "0 < value <= 1");
        }
        if !(p.beta >= 1.0 && p.beta <= 1000.0) {
            return out_of_range("mpr_beta", num(p.beta), "1 <= value <= 1000");
        }
        Ok(())
    }
}

pub struct Mpr {
    /// Decay of ewrtt per window of samples (0.99).
    pub alpha: f64,
    /// mxrtt = beta · ewrtt (3.0).
    pub beta: f64,
    /// Decaying maximum RTT (s), None before the first sample.
    pub ewrtt_s: Option<f64>,
    /// The "memorize" list: the to-be-ack list at the last window halving.
    pub memorize: BTreeSet<u64>,
}

impl Mpr {
    pub fn new(alpha: f64, beta: f64) -> Self {
        Mpr {
            alpha,
            beta,
            ewrtt_s: None,
            memorize: BTreeSet::new(),
        }
    }
    /// mxrtt (s).
    pub fn mxrtt_s(&self) -> Option<f64> {
        self.ewrtt_s.map(|e| self.beta * e)
    }
}

impl CongestionControl for Mpr {
    fn name(&self) -> &'static str {
        "mpr"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Timestamp
    }
    fn on_rtt_sample(&mut self, s: &CcState, rtt_s: f64) {
        let w = s.cwnd.floor().max(1.0);
        self.ewrtt_s = Some(match self.ewrtt_s {
            None => rtt_s,
            Some(e) => (self.alpha.powf(1.0 / w) * e).max(rtt_s),
        });
    }
    fn loss_timeout_s(&self, _s: &CcState) -> Option<f64> {
        self.mxrtt_s()
    }
    fn on_segment_lost(&mut self, s: &mut CcState, lost: &LostSegment) {
        let una = s.snd_una;
        self.memorize.retain(|&k| k >= una);
        if self.memorize.remove(&lost.seg) {
            return; // a further drop of the window already answered
        }
        self.memorize = lost.to_be_ack.iter().copied().collect();
        if lost.earlier_drops > 0 {
            // "Timeout: ssthresh = cwnd/2; cwnd = 1".
            s.ssthresh = (s.cwnd / 2.0).max(2.0);
            s.cwnd = 1.0;
        } else {
            // A new drop: halve cwnd(n) once for this window.
            s.cwnd = (lost.cwnd_when_sent / 2.0).min(s.cwnd).max(1.0);
            s.ssthresh = s.cwnd.max(2.0);
        }
    }
}
