//! Retransmission timer estimator: RFC 6298 with ns-2's knobs.
//!
//! RFC 6298 §2: the first sample R gives SRTT = R, RTTVAR = R/2; later samples
//! RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|, SRTT ← 7/8·SRTT + 1/8·R (RTTVAR first);
//! RTO = SRTT + max(G, 4·RTTVAR), clamped to [min RTO, max RTO] (§2.4, §2.5).
//! Before any sample the RTO is the initial 3 s (§2.1; RFC 6298 says 1 s, ns-2
//! `rtxcur_init_` and RFC 2988 say 3 s).
//!
//! ns-2 choices we follow (`tcp.cc`, `rtt_update`): a sample is measured in clock
//! ticks (`tcpTick_`, 10 ms), rounded to the nearest tick and at least one tick;
//! G is one tick. The exponential backoff is a separate multiplier (ns-2
//! `t_backoff_`) so that a variant can replace the doubling (ABRA multiplies by a
//! factor in [1, 2]); the RTO in force is `min(max RTO, base RTO · backoff)`.
//!
//! Deviation: ns-2 keeps SRTT/RTTVAR as scaled integers (3 and 2 fractional
//! bits); we keep them as f64 seconds, so values differ below a tick.

/// RTO parameters (all in seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoParams {
    /// Clock granularity G and sample rounding (ns-2 `tcpTick_` = 0.01 s).
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
        RtoParams { tick_s: 0.01, min_s: 0.2, max_s: 60.0, initial_s: 3.0 }
    }
}

/// Largest backoff multiplier (ns-2 `maxbackoff_` = 64).
pub const MAX_BACKOFF: f64 = 64.0;

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    pub params: RtoParams,
    srtt_s: Option<f64>,
    rttvar_s: f64,
    /// RTO before backoff (s).
    base_s: f64,
}

impl RtoEstimator {
    pub fn new(params: RtoParams) -> Self {
        RtoEstimator { params, srtt_s: None, rttvar_s: 0.0, base_s: params.initial_s }
    }

    /// Feed one RTT measurement (seconds, before rounding to ticks).
    pub fn sample(&mut self, rtt_s: f64) {
        let g = self.params.tick_s;
        let r = ((rtt_s / g).round()).max(1.0) * g;
        match self.srtt_s {
            None => {
                self.srtt_s = Some(r);
                self.rttvar_s = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar_s = 0.75 * self.rttvar_s + 0.25 * (srtt - r).abs();
                self.srtt_s = Some(0.875 * srtt + 0.125 * r);
            }
        }
        let srtt = self.srtt_s.unwrap();
        self.base_s = (srtt + g.max(4.0 * self.rttvar_s)).clamp(self.params.min_s, self.params.max_s);
    }

    pub fn srtt_s(&self) -> Option<f64> {
        self.srtt_s
    }
    pub fn rttvar_s(&self) -> f64 {
        self.rttvar_s
    }
    /// RTO before backoff (s).
    pub fn base_s(&self) -> f64 {
        self.base_s
    }
    /// The RTO in force with backoff multiplier `backoff` (s).
    pub fn rto_s(&self, backoff: f64) -> f64 {
        (self.base_s * backoff).clamp(self.params.min_s, self.params.max_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn initial_rto_then_rfc6298_updates() {
        let mut e = RtoEstimator::new(RtoParams::default());
        assert!(close(e.rto_s(1.0), 3.0));
        // First sample 0.1 s: SRTT 0.1, RTTVAR 0.05, RTO = 0.1 + 4·0.05 = 0.3.
        e.sample(0.1);
        assert!(close(e.srtt_s().unwrap(), 0.1));
        assert!(close(e.rttvar_s(), 0.05));
        assert!(close(e.rto_s(1.0), 0.3));
        // Second sample 0.2 s: RTTVAR = 0.75·0.05 + 0.25·0.1 = 0.0625; SRTT = 0.0875 + 0.025 = 0.1125;
        // RTO = 0.1125 + 0.25 = 0.3625.
        e.sample(0.2);
        assert!(close(e.rttvar_s(), 0.0625));
        assert!(close(e.srtt_s().unwrap(), 0.1125));
        assert!(close(e.rto_s(1.0), 0.3625));
        // Backoff doubles, clamped to max.
        assert!(close(e.rto_s(2.0), 0.725));
        assert!(close(e.rto_s(1024.0), 60.0));
    }

    #[test]
    fn samples_round_to_ticks_and_min_rto_applies() {
        let mut e = RtoEstimator::new(RtoParams::default());
        // 4 ms rounds to 0 ticks -> at least 1 tick (10 ms); RTO = 0.01 + 0.02 -> min 0.2.
        e.sample(0.004);
        assert!(close(e.srtt_s().unwrap(), 0.01));
        assert!(close(e.rto_s(1.0), 0.2));
        // 26 ms rounds to 30 ms.
        let mut e = RtoEstimator::new(RtoParams::default());
        e.sample(0.026);
        assert!(close(e.srtt_s().unwrap(), 0.03));
    }
}
