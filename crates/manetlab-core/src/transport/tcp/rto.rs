//! Retransmission timer estimator: ns-2.35 `TcpAgent` (`tcp.cc`: `rtt_init`,
//! `rtt_update`, `rtt_timeout`, `rtt_backoff`), which is RFC 6298's algorithm in
//! scaled integer clock ticks.
//!
//! * A sample is measured in ticks of `tcpTick_` (10 ms) of a clock whose phase is
//!   random per agent (ns-2 `boot_time_ = uniform(tcpTick_)`): the number of tick
//!   boundaries between the send and now, at least 1 (`rtt_update`, no timestamps).
//! * SRTT and RTTVAR are integers in ticks with 3 and 2 fractional bits. The first
//!   sample gives SRTT = R, RTTVAR = R/2; later ones SRTT += (R − SRTT)/8,
//!   RTTVAR += (|R − SRTT| − RTTVAR)/4 (RFC 6298 §2.3 with ns-2's truncations).
//! * RTO = ⌊SRTT + 4·RTTVAR⌋ ticks (no G term: ns-2 has none) — `t_rtxcur_`.
//! * The RTO in force with backoff b: `minrto_`·b if the RTO is below `minrto_`
//!   (RFC 2988 clamping before the backoff), else RTO·b; at most `maxrto_`, at
//!   least two ticks (`rtt_timeout`).
//! * Backoff doubles while below 64 or while the RTO in force is below `maxrto_`;
//!   once it exceeds 8, SRTT is folded into RTTVAR and cleared, so the next sample
//!   restarts the estimator as a first sample (`rtt_backoff`).
//! * Before any sample the RTO is `rtxcur_init_` = 3 s.

/// RTO parameters (all in seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoParams {
    /// Clock granularity (ns-2 `tcpTick_` = 0.01 s).
    pub tick_s: f64,
    /// Lower bound (ns-2 `minrto_` = 0.2 s; RFC 6298 says 1 s).
    pub min_s: f64,
    /// Upper bound (ns-2 `maxrto_` = 60 s, RFC 6298 §2.5).
    pub max_s: f64,
    /// RTO before the first sample (ns-2 `rtxcur_init_` = 3 s).
    pub initial_s: f64,
}

impl Default for RtoParams {
    fn default() -> Self {
        RtoParams {
            tick_s: 0.01,
            min_s: 0.2,
            max_s: 60.0,
            initial_s: 3.0,
        }
    }
}

/// Backoff below which doubling is unconditional (ns-2 `rtt_backoff`: 64); above it,
/// doubling continues only while the RTO in force is below the maximum RTO.
pub const MAX_BACKOFF: f64 = 64.0;

/// Backoff above which ns-2 clears SRTT (`rtt_backoff`: `t_backoff_ > 8`).
pub const CLEAR_SRTT_BACKOFF: f64 = 8.0;

/// ns-2 `rttvar_init_` (12 s): RTTVAR before the first sample. Invisible unless
/// SRTT is cleared by a deep backoff (then RTTVAR absorbs it) — kept for fidelity.
const RTTVAR_INIT_S: f64 = 12.0;

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    pub params: RtoParams,
    tick_ns: u64,
    /// Clock phase (ns-2 `boot_time_`), ns in [0, tick).
    phase_ns: u64,
    /// SRTT in ticks · 8 (0 = no estimate).
    t_srtt: i64,
    /// RTTVAR in ticks · 4.
    t_rttvar: i64,
    /// RTO before backoff and clamping (s) — ns-2 `t_rtxcur_`.
    rtxcur_s: f64,
    /// Any sample ever taken (ns-2 reports SRTT 0 after clearing; we report None).
    sampled: bool,
}

impl RtoEstimator {
    pub fn new(params: RtoParams) -> Self {
        let tick_ns = ((params.tick_s * 1e9).round() as u64).max(1);
        RtoEstimator {
            params,
            tick_ns,
            phase_ns: 0,
            t_srtt: 0,
            t_rttvar: ((RTTVAR_INIT_S / params.tick_s) as i64) << 2,
            rtxcur_s: params.initial_s,
            sampled: false,
        }
    }

    /// Set the clock phase (seconds, reduced modulo one tick).
    pub fn set_phase_s(&mut self, phase_s: f64) {
        self.phase_ns = ((phase_s.max(0.0) * 1e9).round() as u64) % self.tick_ns;
    }

    /// The sample, in ticks, of a segment sent at `sent_ns` and acknowledged at `now_ns`.
    pub fn ticks(&self, sent_ns: u64, now_ns: u64) -> i64 {
        let tao = now_ns.saturating_sub(sent_ns);
        let tickoff = (sent_ns + self.phase_ns) % self.tick_ns;
        (((tao + tickoff) / self.tick_ns) as i64).max(1)
    }

    /// Feed one measurement: the timed segment was sent at `sent_ns`, its ACK came at `now_ns`.
    pub fn sample(&mut self, sent_ns: u64, now_ns: u64) {
        let r = self.ticks(sent_ns, now_ns);
        self.sample_ticks(r);
    }

    /// Feed one measurement already in ticks.
    pub fn sample_ticks(&mut self, r: i64) {
        if self.t_srtt != 0 {
            let mut delta = r - (self.t_srtt >> 3);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> 2);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = r << 3;
            self.t_rttvar = r << 1;
        }
        self.sampled = true;
        self.rtxcur_s = (((self.t_rttvar << 3) + self.t_srtt) >> 3) as f64 * self.params.tick_s;
    }

    /// Double `backoff` as ns-2 `rtt_backoff` does, clearing SRTT past 8. Returns the new backoff.
    pub fn backoff(&mut self, backoff: f64) -> f64 {
        let b = if backoff < MAX_BACKOFF || self.rto_s(backoff) < self.params.max_s {
            backoff * 2.0
        } else {
            backoff
        };
        self.after_backoff(b);
        b
    }

    /// ns-2's SRTT clearing for a backoff `b` reached by any rule (variants may back off differently).
    pub fn after_backoff(&mut self, b: f64) {
        if b > CLEAR_SRTT_BACKOFF {
            self.t_rttvar += self.t_srtt >> 3;
            self.t_srtt = 0;
        }
    }

    pub fn srtt_s(&self) -> Option<f64> {
        (self.sampled && self.t_srtt != 0).then(|| self.t_srtt as f64 / 8.0 * self.params.tick_s)
    }
    pub fn rttvar_s(&self) -> f64 {
        self.t_rttvar as f64 / 4.0 * self.params.tick_s
    }
    /// RTO before backoff (s), not clamped (ns-2 `t_rtxcur_`).
    pub fn base_s(&self) -> f64 {
        self.rtxcur_s
    }
    /// The RTO in force with backoff multiplier `backoff` (s): ns-2 `rtt_timeout`.
    pub fn rto_s(&self, backoff: f64) -> f64 {
        let p = &self.params;
        let t = if self.rtxcur_s < p.min_s {
            p.min_s * backoff
        } else {
            self.rtxcur_s * backoff
        };
        t.min(p.max_s).max(2.0 * p.tick_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }
    const MS: u64 = 1_000_000;

    #[test]
    fn initial_rto_then_ns2_integer_updates() {
        let mut e = RtoEstimator::new(RtoParams::default());
        assert!(close(e.rto_s(1.0), 3.0));
        // First sample 100 ms = 10 ticks: t_srtt = 80, t_rttvar = 20 (5 ticks);
        // t_rtxcur = ((20 << 3) + 80) >> 3 = 30 ticks = 0.3 s.
        e.sample(100 * MS, 200 * MS);
        assert!(close(e.srtt_s().unwrap(), 0.1));
        assert!(close(e.rttvar_s(), 0.05));
        assert!(close(e.rto_s(1.0), 0.3));
        // Second sample 20 ticks: delta = 20 − 10 = 10 → t_srtt = 90; |10| − (20 >> 2) = 5 →
        // t_rttvar = 25; t_rtxcur = (200 + 90) >> 3 = 36 ticks (truncated from 36.25).
        e.sample(300 * MS, 500 * MS);
        assert!(close(e.srtt_s().unwrap(), 0.1125));
        assert!(close(e.rttvar_s(), 0.0625));
        assert!(close(e.rto_s(1.0), 0.36));
        // Backoff multiplies; clamped to maxrto_.
        assert!(close(e.rto_s(2.0), 0.72));
        assert!(close(e.rto_s(1024.0), 60.0));
    }

    #[test]
    fn ticks_count_clock_boundaries_with_the_phase() {
        let mut e = RtoEstimator::new(RtoParams::default());
        // Phase 0: 4 ms inside one tick → 0 boundaries → at least 1 tick.
        assert_eq!(e.ticks(0, 4 * MS), 1);
        // 26 ms from 0: 2 boundaries (10, 20 ms) — truncation, not rounding.
        assert_eq!(e.ticks(0, 26 * MS), 2);
        // Sent at 8 ms, 5 ms later: crosses the 10 ms boundary → 1; 15 ms later → 2.
        assert_eq!(e.ticks(8 * MS, 13 * MS), 1);
        assert_eq!(e.ticks(8 * MS, 23 * MS), 2);
        // A phase of 3 ms moves the boundaries to 7, 17, ... ms.
        e.set_phase_s(0.003);
        assert_eq!(e.ticks(0, 26 * MS), 2);
        assert_eq!(e.ticks(0, 27 * MS), 3);
    }

    #[test]
    fn min_rto_applies_before_the_backoff() {
        let mut e = RtoEstimator::new(RtoParams::default());
        // 1 tick: t_rtxcur = (8·... ) = 1 + 4·0.5 → ((2 << 3) + 8) >> 3 = 3 ticks = 30 ms < minrto.
        e.sample(0, 10 * MS);
        assert!(close(e.base_s(), 0.03));
        assert!(close(e.rto_s(1.0), 0.2));
        // RFC 2988 clamping: minrto_ · backoff, not max(minrto_, 30 ms · backoff).
        assert!(close(e.rto_s(4.0), 0.8));
    }

    #[test]
    fn backoff_beyond_64_until_max_rto_and_srtt_cleared_past_8() {
        let mut e = RtoEstimator::new(RtoParams::default());
        e.sample(0, 100 * MS); // RTO 0.3 s
        let mut b = 1.0;
        for _ in 0..3 {
            b = e.backoff(b);
        }
        assert_eq!(b, 8.0);
        assert!(e.srtt_s().is_some(), "8 is not past 8");
        b = e.backoff(b);
        assert_eq!(b, 16.0);
        assert!(e.srtt_s().is_none(), "backoff 16 > 8 clears SRTT");
        // RTTVAR absorbed SRTT: 20 + 80 >> 3 = 30 (7.5 ticks); the RTO in force is unchanged
        // until the next sample (ns-2 recomputes t_rtxcur_ only in rtt_update).
        assert!(close(e.rttvar_s(), 0.075));
        assert!(close(e.rto_s(16.0), 4.8));
        // 0.3 · 64 = 19.2 < 60: doubling continues past 64 (ns-2 rfc2988_), then sticks.
        for _ in 0..2 {
            b = e.backoff(b);
        }
        assert_eq!(b, 64.0);
        b = e.backoff(b);
        assert_eq!(b, 128.0);
        assert!(close(e.rto_s(b), 38.4));
        b = e.backoff(b);
        assert_eq!(b, 256.0);
        assert!(close(e.rto_s(b), 60.0));
        assert_eq!(
            e.backoff(b),
            256.0,
            "RTO at maxrto_ and backoff >= 64: no more doubling"
        );
        // The next sample restarts the estimator: 50 ms → SRTT 0.05, RTTVAR 0.025.
        e.sample(0, 50 * MS);
        assert!(close(e.srtt_s().unwrap(), 0.05));
        assert!(close(e.rttvar_s(), 0.025));
        assert!(close(e.base_s(), 0.15));
    }
}
