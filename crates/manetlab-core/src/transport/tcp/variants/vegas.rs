//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on
//! a Global Internet", IEEE JSAC 13(8), 1995) as ns-2.35 `Agent/TCP/Vegas`
//! (`tcp-vegas.cc`, the USC/Arizona port). The engine runs Reno-style recovery (timer,
//! Karn, the `recover` guard); this file decides each duplicate ACK and the window.
//!
//! Once per round (when the ACK passes the segment that was next to send at the
//! start of the last round):
//! * rtt = the **mean** of the round's fine-grained RTT samples (ns-2 `v_sumRTT_ /
//!   v_cntRTT_`; with none, the round's duration); BaseRTT = min(BaseRTT, rtt), or
//!   rtt itself when at most one segment was sent in the round;
//! * expected = (segments outstanding + 1)/BaseRTT (ns-2 `t_seqno_ − last_ack_`),
//!   actual = segments sent in the round / rtt, Δ = ⌊(expected − actual)·BaseRTT + ½⌋;
//! * slow start (cwnd < ssthresh): grow only every other round (+1 per ACK); in a
//!   growing round, Δ > γ leaves slow start: ssthresh = 2, cwnd −= cwnd/8 (≥ 2);
//! * congestion avoidance: Δ > β → cwnd − 1 (≥ 2) and no growth; Δ < α → +1/cwnd
//!   per ACK during the next round; else unchanged.
//!   Growth is applied only while cwnd − outstanding ≤ 2 (ns-2's "keep up" rule).
//!   Every segment's RTT sample also updates BaseRTT.
//!
//! Loss (ns-2 `recv`: Vegas decides every duplicate ACK itself, in and out of
//! recovery — the `vegas-ns2` recovery scheme, `recovery/vegas.rs` — with its own count, ns-2 `dupacks_`):
//! * a duplicate ACK retransmits the oldest segment when it has been out for the
//!   fine-grained timeout (ns-2 `v_timeout_`: its own SRTT/mean-deviation estimator,
//!   (SA/4 + SD)/2 · 17/16) or when it is the third; inside recovery too, so an
//!   expired retransmission is retransmitted again (tcp-vegas.cc 354-355);
//! * the window is cut only if it has not changed since that segment was sent:
//!   win = ⌊min(cwnd, window)⌋ (cwnd possibly inflated) ≤ 3 → 2, a retransmitted segment
//!   → win/2, otherwise win − ⌊win/4⌋ (¾); ssthresh is left alone; only with a cut is
//!   cwnd itself inflated: cwnd = that + the duplicates so far (379-392; no cut, no
//!   inflation); the fine-grained timeout ×2 (retransmitted segment) or ×9/8; the
//!   retransmission timer restarts with its backoff doubled (ns-2 `reset_rtx_timer(1)`:
//!   the `backoff` argument defaults to 1, where Reno passes 0);
//! * after retransmitting a segment sent once the duplicate count becomes 3 (401-402),
//!   so the next duplicate inflates and no third-duplicate retransmission follows;
//! * the first one or two new ACKs after a retransmission (ns-2 `v_worried_` =
//!   MIN(2, `t_seqno_ − last_ack_`)) check the fine-grained timeout again and
//!   retransmit an expired oldest segment, setting the duplicate count to 3 (337-350);
//! * a duplicate that neither retransmits nor is held back adds 1 to cwnd past the
//!   third (404-405); an expired or third one held back by the `recover` guard (after a
//!   timeout) changes nothing; the sender may send when the count is 0 or ≥ 3 (417);
//! * the first new ACK after more than three duplicates — ending recovery or not —
//!   sets cwnd to the window saved at the last cut (if cwnd is above it) and ssthresh 2;
//! * timeout: ssthresh = ⌊min(cwnd, window)/2⌋ ≥ 2 and cwnd = 2 (`v_slowstart_`); the
//!   saved window becomes 0 (ns-2 `v_newcwnd_ = 0`). So the new ACK that follows late
//!   duplicates of the timed-out segments sets cwnd to 0: the window ⌊cwnd⌋ is 0 and
//!   nothing is sent until the RTO (re-armed on that ACK, ns-2 `newtimer`'s `cwnd_ < 1`)
//!   fires. This is ns-2.35's behaviour, arguably a bug; with
//!   `flows[].tcp.vegas_zero_window_after_timeout = false` that cut stops at 1 segment.
//!
//! Size: ns-2.35's `VegasTcpAgent::output` sends `packetSize_` bytes without adding
//! the 40-byte TCP/IP header every other agent adds, so by default a data segment
//! counts its payload only on the air (`flows[].tcp.vegas_counts_headers = true`
//! counts the header).
//!
//! RTT samples and "retransmitted" come from ns-2's per-slot arrays (`v_sendtime_`,
//! `v_transmits_`; slot = segment mod `window_`, reset whenever segment 0 is sent): a
//! new ACK samples its newest segment if that slot holds one transmission (a segment
//! sent once before a timeout included), after the round-end section, and then clears
//! the acknowledged slots with ns-2's loop, which clears nothing for a range that wraps
//! past a multiple of the window — the next segment in such a slot counts as sent twice
//! (no sample; a halving cut, a doubled `v_timeout_`, no count reset if it is lost).
//!
//! Deviation (docs/tcp.md): the estimator starts from the SYN-like first packet's
//! sample (ns-2 Vegas sends data segment 0 first and starts from its ACK).

use crate::sim::num;
use crate::sim::SimTime;
use crate::transport::tcp::cc::{
    reno_ssthresh, CcState, CongestionControl, EngineOptions, OwnDupAck, Recovery,
};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::variants::{KeyResult, Variant};

/// Registry entry.
pub const VARIANT: Variant = Variant::new("vegas", |cfg| {
    Box::new(Vegas::with_params(&VegasParams::from_config(cfg)))
})
.checked(VegasParams::check);

/// Vegas's parameters (scenario keys `flows[].tcp.vegas_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct VegasParams {
    /// α, segments: below α extra segments queued, grow by one per RTT (Brakmo &
    /// Peterson; ns-2 `v_alpha_`). Default 1. Key `vegas_alpha_pkts`.
    pub alpha_pkts: f64,
    /// β, segments: above β, shrink by one per RTT (ns-2 `v_beta_`). Default 3, ≥ α.
    /// Key `vegas_beta_pkts`.
    pub beta_pkts: f64,
    /// γ, segments: above γ, leave slow start (ns-2 `v_gamma_`). Default 1.
    /// Key `vegas_gamma_pkts`.
    pub gamma_pkts: f64,
    /// Data segments count their 40 bytes of TCP/IP header on the air. Default false,
    /// as ns-2.35's `VegasTcpAgent::output`. Key `vegas_counts_headers`.
    pub counts_headers: bool,
    /// The window may fall to 0 after a timeout (ns-2.35 `v_newcwnd_ = 0`); false keeps
    /// cwnd ≥ 1. Default true. Key `vegas_zero_window_after_timeout`.
    pub zero_window_after_timeout: bool,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams {
            alpha_pkts: 1.0,
            beta_pkts: 3.0,
            gamma_pkts: 1.0,
            counts_headers: false,
            zero_window_after_timeout: true,
        }
    }
}

impl VegasParams {
    /// The flow's values, defaults where a key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        let d = VegasParams::default();
        VegasParams {
            alpha_pkts: cfg.vegas_alpha_pkts.unwrap_or(d.alpha_pkts),
            beta_pkts: cfg.vegas_beta_pkts.unwrap_or(d.beta_pkts),
            gamma_pkts: cfg.vegas_gamma_pkts.unwrap_or(d.gamma_pkts),
            counts_headers: cfg.vegas_counts_headers.unwrap_or(d.counts_headers),
            zero_window_after_timeout: cfg
                .vegas_zero_window_after_timeout
                .unwrap_or(d.zero_window_after_timeout),
        }
    }
    /// α ≤ β (each is already a finite number ≥ 0).
    pub fn check(cfg: &TcpConfig) -> KeyResult {
        let p = VegasParams::from_config(cfg);
        if p.alpha_pkts > p.beta_pkts {
            return Err((
                "vegas_beta_pkts".to_string(),
                format!(
                    "{} must be >= vegas_alpha_pkts = {}",
                    num(p.beta_pkts),
                    num(p.alpha_pkts)
                ),
            ));
        }
        Ok(())
    }
}

pub struct Vegas {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Smallest round RTT / sample seen (s), ns-2 `v_baseRTT_`.
    pub base_rtt_s: f64,
    sum_rtt_s: f64,
    cnt_rtt: u32,
    /// The round ends when the ACK passes this segment (ns-2 `v_begseq_`).
    beg_seq: u64,
    beg_time: SimTime,
    /// Slow start grows in alternate rounds (ns-2 `v_inc_flag_`).
    inc_flag: bool,
    /// Per-ACK increment decided at the last round end (ns-2 `v_incr_`).
    incr: f64,
    /// Fine-grained timeout estimator (ns-2 `v_sa_`, `v_sd_`, `v_timeout_`), seconds.
    sa: f64,
    sd: f64,
    pub v_timeout_s: f64,
    /// When cwnd was last cut (ns-2 `t_cwnd_changed_`).
    cwnd_changed: Option<SimTime>,
    /// The window after the last cut (ns-2 `v_newcwnd_`).
    new_cwnd: Option<f64>,
    /// Duplicate ACKs since the last new ACK.
    dups: u32,
    /// Per-slot last send time and transmission count, slot = segment mod the window
    /// (ns-2 `v_sendtime_`, `v_transmits_`, `v_maxwnd_` = `window_`).
    slots: Vec<(SimTime, u32)>,
    /// New ACKs still to check after a retransmission (ns-2 `v_worried_`).
    worried: u32,
    /// Data segments count their TCP/IP header (false: ns-2.35's 1000-byte
    /// segments without it, `flows[].tcp.vegas_counts_headers`).
    counts_headers: bool,
    /// The cut after a timeout may reach 0 (ns-2.35); false: at least 1 segment
    /// (`flows[].tcp.vegas_zero_window_after_timeout`).
    zero_window: bool,
}

impl Vegas {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            base_rtt_s: f64::INFINITY,
            sum_rtt_s: 0.0,
            cnt_rtt: 0,
            beg_seq: 0,
            beg_time: SimTime::ZERO,
            inc_flag: true,
            incr: 0.0,
            sa: 0.0,
            sd: 0.0,
            v_timeout_s: f64::INFINITY,
            cwnd_changed: None,
            new_cwnd: None,
            dups: 0,
            slots: Vec::new(),
            worried: 0,
            counts_headers: true,
            zero_window: true,
        }
    }

    /// A Vegas with the given parameters.
    pub fn with_params(p: &VegasParams) -> Self {
        Vegas::new(p.alpha_pkts, p.beta_pkts, p.gamma_pkts)
            .counting_headers(p.counts_headers)
            .zero_window_after_timeout(p.zero_window_after_timeout)
    }

    /// Whether data segments count their 40 bytes of TCP/IP header on the air.
    pub fn counting_headers(mut self, on: bool) -> Self {
        self.counts_headers = on;
        self
    }

    /// Whether the window may collapse to 0 after a timeout (ns-2.35, default).
    pub fn zero_window_after_timeout(mut self, on: bool) -> Self {
        self.zero_window = on;
        self
    }

    /// The window to go back to after inflation: the saved window, at least 1 segment
    /// unless the zero window is allowed.
    fn saved_window(&self) -> Option<f64> {
        self.new_cwnd
            .map(|w| if self.zero_window { w } else { w.max(1.0) })
    }

    /// ns-2's Δ = ⌊(expected − actual)·BaseRTT + ½⌋ in segments.
    pub fn delta(
        outstanding_plus_one: f64,
        sent_in_round: f64,
        base_rtt_s: f64,
        rtt_s: f64,
    ) -> i64 {
        let expect = outstanding_plus_one / base_rtt_s;
        let actual = sent_in_round / rtt_s;
        ((expect - actual) * base_rtt_s + 0.5) as i64
    }

    /// ns-2 `recv` 314-332: one fine-grained sample into the round sum and the
    /// `v_timeout_` estimator.
    fn apply_sample(&mut self, rtt_s: f64) {
        self.sum_rtt_s += rtt_s;
        self.cnt_rtt += 1;
        if rtt_s > 0.0 {
            self.base_rtt_s = self.base_rtt_s.min(rtt_s);
            let mut n = rtt_s - self.sa / 8.0;
            self.sa += n;
            n = n.abs() - self.sd / 4.0;
            self.sd += n;
            self.v_timeout_s = (self.sa / 4.0 + self.sd) / 2.0;
            self.v_timeout_s += self.v_timeout_s / 16.0;
        }
    }

    /// ns-2 `recv` 304-314 for a new ACK of `acked` segments: the newest acknowledged
    /// segment's slot gives a sample if it holds one transmission; then the acknowledged
    /// slots are cleared — by ns-2's loop, which clears nothing when the range wraps
    /// past a multiple of the window, so those slots count on.
    fn ack_sample(&mut self, s: &CcState, acked: u64) -> Option<f64> {
        if acked == 0 || self.slots.is_empty() {
            return None;
        }
        let n = self.slots.len() as i64;
        let seqno = s.snd_una as i64 - 1; // ns-2 seqno: the newest acknowledged
        let oldack = seqno - acked as i64;
        let (sent, transmits) = self.slots[(seqno % n) as usize];
        let mut k = (oldack + 1).rem_euclid(n);
        let mut range = seqno - oldack;
        while k <= seqno % n && range > 0 {
            self.slots[k as usize] = (SimTime::ZERO, 0);
            k = (k + 1) % n;
            range -= 1;
        }
        (transmits == 1).then(|| s.now.since(sent).as_secs_f64())
    }

    /// The oldest segment's slot holds more than one transmission (ns-2 `transmits > 1`).
    fn una_resent(&self, s: &CcState) -> bool {
        if self.slots.is_empty() {
            return s.una_retransmitted;
        }
        self.slots[(s.snd_una % self.slots.len() as u64) as usize].1 > 1
    }

    fn expired(&self, s: &CcState) -> bool {
        s.una_sent_at
            .is_some_and(|sent| s.now.since(sent).as_secs_f64() >= self.v_timeout_s)
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn recovery(&self) -> Recovery {
        Recovery::VegasNs2
    }
    fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            zero_window: self.zero_window,
            headerless_data_segments: !self.counts_headers,
            ..EngineOptions::default()
        }
    }
    fn on_rtt_sample(&mut self, _s: &CcState, rtt_s: f64) {
        // Only the first sample initialises here; later samples come from the
        // send-time array (`ack_sample`), as ns-2.
        if !self.v_timeout_s.is_finite() {
            // ns-2 initialises from the first ACK: SA = 8·rtt, SD = rtt.
            self.sa = 8.0 * rtt_s;
            self.sd = rtt_s;
            self.v_timeout_s = (self.sa / 4.0 + self.sd) / 2.0;
            self.base_rtt_s = rtt_s;
        }
    }
    fn on_transmit(&mut self, s: &CcState, seg: u64, now: SimTime) {
        if seg == 0 {
            // ns-2 `output` (re)allocates the arrays whenever segment 0 goes out.
            self.slots = vec![(SimTime::ZERO, 0); (s.max_window as usize).max(1)];
        }
        let n = self.slots.len() as u64;
        let slot = &mut self.slots[(seg % n) as usize];
        slot.0 = now;
        slot.1 += 1;
    }
    fn pkts_acked(&mut self, _s: &CcState, acked: u64) {
        if acked == 0 {
            self.dups += 1;
        }
    }
    fn cong_avoid(&mut self, s: &mut CcState, acked: u64) {
        // ns-2 `recv`, before `newack`: more than dupthresh duplicates inflated cwnd (in
        // or, after a timeout, outside recovery): back to the saved window, slow start off.
        if self.dups > s.dupthresh {
            if let Some(w) = self.saved_window() {
                if s.cwnd > w {
                    s.cwnd = w;
                    s.ssthresh = 2.0;
                }
            }
        }
        self.dups = 0;
        // ns-2 numbers are one ahead of ours: t_seqno_ = nxt + 1, last_ack_ = una.
        let in_flight_plus_one = (s.snd_nxt + 1 - s.snd_una) as f64;
        if s.snd_una >= self.beg_seq {
            let rtt = if self.cnt_rtt > 0 {
                self.sum_rtt_s / f64::from(self.cnt_rtt)
            } else {
                s.now.since(self.beg_time).as_secs_f64()
            };
            self.sum_rtt_s = 0.0;
            self.cnt_rtt = 0;
            let sent_in_round = (s.snd_nxt + 1).saturating_sub(self.beg_seq) as f64;
            if rtt > 0.0 {
                if rtt < self.base_rtt_s || sent_in_round <= 1.0 {
                    self.base_rtt_s = rtt;
                }
                let delta =
                    Self::delta(in_flight_plus_one, sent_in_round, self.base_rtt_s, rtt) as f64;
                if s.cwnd < s.ssthresh {
                    self.inc_flag = !self.inc_flag;
                    if !self.inc_flag {
                        self.incr = 0.0;
                    } else if delta > self.gamma {
                        s.ssthresh = 2.0;
                        s.cwnd = (s.cwnd - s.cwnd / 8.0).max(2.0);
                        self.incr = 0.0;
                    } else {
                        self.incr = 1.0;
                    }
                } else if delta > self.beta {
                    s.cwnd = (s.cwnd - 1.0).max(2.0);
                    self.incr = 0.0;
                } else if delta < self.alpha {
                    self.incr = 1.0 / s.cwnd;
                } else {
                    self.incr = 0.0;
                }
            }
            // The next round starts with the next segment to send (ns-2 `v_begseq_ = t_seqno_`).
            self.beg_seq = s.snd_nxt + 1;
            self.beg_time = s.now;
        }
        if self.incr == 1.0 && s.cwnd >= s.ssthresh {
            self.incr = 0.0;
        }
        if self.incr > 0.0 && s.cwnd - (in_flight_plus_one - 1.0) <= 2.0 {
            s.cwnd += self.incr;
        }
        // ns-2 takes the ACK's sample after its round-end section (tcp-vegas.cc 304-332
        // follow 209-278): the ACK that ends a round counts in the next one.
        if let Some(r) = self.ack_sample(s, acked) {
            self.apply_sample(r);
        }
    }
    fn own_dup_ack(&mut self, s: &mut CcState, guard_ok: bool) -> OwnDupAck {
        // ns-2 `recv`, duplicate branch (tcp-vegas.cc 351-405), in and out of recovery
        // alike: `dups` (already counted by `pkts_acked`) is ns-2's `dupacks_`.
        let mut retransmit = false;
        if self.expired(s) || self.dups == s.dupthresh {
            // An expired or third duplicate held back by the `bugFix_` guard changes nothing.
            if guard_ok {
                let first_send = !self.una_resent(s);
                self.enter_recovery(s);
                // ns-2 402: after retransmitting a segment sent once, dupacks_ = numdupacks_
                // (so the next duplicate inflates, and no third-duplicate retransmit follows).
                if first_send {
                    self.dups = s.dupthresh;
                }
                retransmit = true;
            }
        } else if self.dups > s.dupthresh {
            s.cwnd += 1.0;
        }
        // ns-2 417: send when dupacks_ is 0 or at least numdupacks_.
        OwnDupAck {
            retransmit,
            send: self.dups == 0 || self.dups >= s.dupthresh,
        }
    }
    fn enter_recovery(&mut self, s: &mut CcState) {
        // ns-2 `recv` 364-392, for an expired or third duplicate that passed the guard.
        let retx = self.una_resent(s);
        // ns-2 `MIN(2, t_seqno_ - last_ack_)`: last_ack_ is our una − 1.
        self.worried = ((s.snd_nxt + 1).saturating_sub(s.snd_una) as u32).min(2);
        if retx {
            self.v_timeout_s *= 2.0;
        } else {
            self.v_timeout_s += self.v_timeout_s / 8.0;
        }
        // Cut only if cwnd has not changed since the oldest segment was sent; only then
        // is cwnd inflated (by the duplicates so far). Without a cut cwnd stays as it is.
        let cut = match (self.cwnd_changed, s.una_sent_at) {
            (Some(c), Some(sent)) => c < sent,
            _ => true,
        };
        if cut {
            // ns-2 `window()`: min(cwnd_, wnd_), cwnd_ possibly inflated already.
            let win = (s.cwnd.floor().min(s.max_window)) as i64;
            let w = if win <= 3 {
                2
            } else if retx {
                win >> 1
            } else {
                win - (win >> 2)
            };
            self.new_cwnd = Some(w as f64);
            s.cwnd = w as f64 + f64::from(self.dups);
            self.cwnd_changed = Some(s.now);
        }
    }
    fn on_timeout(&mut self, s: &mut CcState) {
        s.ssthresh = reno_ssthresh(s);
        s.cwnd = 2.0; // ns-2 `v_slowstart_`
        self.new_cwnd = Some(0.0); // ns-2 `v_newcwnd_ = 0`
        self.cwnd_changed = Some(s.now);
        self.dups = 0;
    }
    fn retransmit_on_new_ack(&mut self, s: &CcState) -> bool {
        if self.worried == 0 {
            return false;
        }
        self.worried -= 1;
        if self.expired(s) {
            // ns-2 346: dupacks_ = numdupacks_ before the retransmission.
            self.dups = s.dupthresh;
            true
        } else {
            self.worried = 0;
            false
        }
    }
}
