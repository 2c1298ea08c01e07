//! One node's half-duplex radio: which signals are on the air here, whether the
//! carrier is busy, and whether the frame being received survives.
//!
//! ns-2 CMU semantics (`Mac802_11::recv`, `capture`, `collision`):
//! * signals below CSThresh never reach the radio (the channel filters them);
//! * an idle radio locks onto the first arriving signal; one below RXThresh is
//!   locked but undecodable, so it ends as an error (and the MAC defers EIFS);
//! * a newcomer while locked is *captured* (ignored) if the locked frame is at
//!   least CPThresh× stronger, otherwise both collide; the lock then follows the
//!   frame that ends last, as ns-2 does, so the error covers the whole overlap;
//! * a transmitting radio receives nothing: arrivals during a transmission, and a
//!   reception under way when the radio starts to transmit, end in error.
//! The carrier is busy while the radio transmits or any signal ≥ CSThresh is on
//! the air (ns-2 tracks only the locked frame; we count captured ones too, which
//! is the physical behaviour and differs only when a captured frame outlasts the
//! locked one).

use super::{RadioParams, Reception};
use crate::sim::SimTime;

/// Index of a transmission in the simulator's slab.
pub type TxId = u32;

#[derive(Clone, Copy, Debug)]
struct Signal {
    tx: TxId,
    power_w: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxFailure {
    /// Overlapped by a signal too strong to capture against (ns-2 `COL`).
    Collision,
    /// Power below RXThresh: sensed, not decodable.
    BelowThreshold,
    /// Arrived or continued while this radio was transmitting.
    HalfDuplex,
}

#[derive(Clone, Copy, Debug)]
struct Lock {
    tx: TxId,
    power_w: f64,
    end: SimTime,
    failure: Option<RxFailure>,
}

/// What a signal's end means for the MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxResult {
    /// The signal was not the one being received.
    NotLocked,
    Decoded(TxId),
    Failed(TxId, RxFailure),
}

#[derive(Default)]
pub struct Radio {
    transmitting: bool,
    signals: Vec<Signal>,
    lock: Option<Lock>,
}

impl Radio {
    pub fn new() -> Self {
        Self::default()
    }

    /// Carrier busy: transmitting, or any sensed signal on the air.
    #[inline]
    pub fn busy(&self) -> bool {
        self.transmitting || !self.signals.is_empty()
    }

    /// Physical carrier sense from other transmitters (what the MAC's CCA reports;
    /// the MAC knows about its own transmissions).
    #[inline]
    pub fn sensing(&self) -> bool {
        !self.signals.is_empty()
    }

    pub fn transmitting(&self) -> bool {
        self.transmitting
    }

    /// A signal of `power_w` (≥ CSThresh) starts arriving; it ends at `end`.
    /// Returns true when it was captured: the radio stays locked on a frame at
    /// least `capture_threshold`× stronger and treats the newcomer as noise (the
    /// MAC then defers as ns-2's `Mac802_11::capture` does).
    #[inline]
    pub fn signal_start(&mut self, p: &RadioParams, tx: TxId, power_w: f64, end: SimTime) -> bool {
        self.signals.push(Signal { tx, power_w });
        match self.lock.as_mut() {
            None => {
                let failure = if self.transmitting {
                    Some(RxFailure::HalfDuplex)
                } else if power_w < p.rx_threshold_w {
                    Some(RxFailure::BelowThreshold)
                } else {
                    None
                };
                self.lock = Some(Lock { tx, power_w, end, failure });
            }
            Some(lock) => match p.reception {
                Reception::Capture { capture_threshold } => {
                    if lock.power_w >= capture_threshold * power_w {
                        return true; // captured: the newcomer is only noise
                    }
                    lock.failure.get_or_insert(RxFailure::Collision);
                    if end > lock.end {
                        *lock = Lock { tx, power_w, end, failure: Some(RxFailure::Collision) };
                    }
                }
                Reception::Sinr { .. } => {}
            },
        }
        self.check_sinr(p);
        false
    }

    /// A signal ends. Returns what became of it if it was the locked frame.
    #[inline]
    pub fn signal_end(&mut self, p: &RadioParams, tx: TxId) -> RxResult {
        if let Some(i) = self.signals.iter().position(|s| s.tx == tx) {
            self.signals.swap_remove(i);
        }
        match self.lock {
            Some(lock) if lock.tx == tx => {
                self.lock = None;
                match lock.failure {
                    None => RxResult::Decoded(tx),
                    Some(f) => RxResult::Failed(tx, f),
                }
            }
            _ => {
                self.check_sinr(p);
                RxResult::NotLocked
            }
        }
    }

    /// The radio starts transmitting: anything being received is lost.
    pub fn start_tx(&mut self) {
        self.transmitting = true;
        if let Some(lock) = self.lock.as_mut() {
            lock.failure.get_or_insert(RxFailure::HalfDuplex);
        }
    }

    pub fn end_tx(&mut self) {
        self.transmitting = false;
    }

    /// SINR mode: the locked frame fails as soon as its SINR drops below threshold.
    fn check_sinr(&mut self, p: &RadioParams) {
        let Reception::Sinr { sinr_threshold, noise_w } = p.reception else { return };
        let Some(lock) = self.lock.as_mut() else { return };
        if lock.failure.is_some() {
            return;
        }
        let interference: f64 = self.signals.iter().filter(|s| s.tx != lock.tx).map(|s| s.power_w).sum();
        if lock.power_w < sinr_threshold * (noise_w + interference) {
            lock.failure = Some(RxFailure::Collision);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> SimTime {
        SimTime(us * 1000)
    }
    const STRONG: f64 = 1e-8;

    #[test]
    fn lone_frame_is_decoded_and_carrier_follows_it() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        assert!(!r.busy());
        r.signal_start(&p, 1, STRONG, t(100));
        assert!(r.busy());
        assert_eq!(r.signal_end(&p, 1), RxResult::Decoded(1));
        assert!(!r.busy());
    }

    #[test]
    fn equal_powers_collide() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        r.signal_start(&p, 1, STRONG, t(100));
        r.signal_start(&p, 2, STRONG, t(100));
        assert_eq!(r.signal_end(&p, 1), RxResult::Failed(1, RxFailure::Collision));
        assert_eq!(r.signal_end(&p, 2), RxResult::NotLocked);
    }

    #[test]
    fn ten_times_stronger_locked_frame_captures() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        r.signal_start(&p, 1, 10.0 * STRONG, t(100));
        r.signal_start(&p, 2, STRONG, t(150));
        assert_eq!(r.signal_end(&p, 1), RxResult::Decoded(1));
        assert!(r.busy(), "captured frame still occupies the carrier");
        assert_eq!(r.signal_end(&p, 2), RxResult::NotLocked);
    }

    #[test]
    fn collision_lock_follows_the_later_end() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        r.signal_start(&p, 1, STRONG, t(100));
        r.signal_start(&p, 2, STRONG, t(300));
        assert_eq!(r.signal_end(&p, 1), RxResult::NotLocked);
        assert_eq!(r.signal_end(&p, 2), RxResult::Failed(2, RxFailure::Collision));
    }

    #[test]
    fn weak_frame_is_sensed_not_decoded() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        r.signal_start(&p, 1, p.rx_threshold_w * 0.5, t(100));
        assert!(r.busy());
        assert_eq!(r.signal_end(&p, 1), RxResult::Failed(1, RxFailure::BelowThreshold));
    }

    #[test]
    fn half_duplex_both_ways() {
        let p = RadioParams::default();
        let mut r = Radio::new();
        r.signal_start(&p, 1, STRONG, t(100));
        r.start_tx();
        assert_eq!(r.signal_end(&p, 1), RxResult::Failed(1, RxFailure::HalfDuplex));
        r.signal_start(&p, 2, STRONG, t(200));
        r.end_tx();
        assert_eq!(r.signal_end(&p, 2), RxResult::Failed(2, RxFailure::HalfDuplex));
    }

    #[test]
    fn sinr_mode_sums_interference() {
        let p = RadioParams { reception: Reception::Sinr { sinr_threshold: 10.0, noise_w: 0.0 }, ..RadioParams::default() };
        let mut r = Radio::new();
        // Two interferers each 1/15 of the frame: SINR 7.5 < 10 although each alone would be captured.
        r.signal_start(&p, 1, 15.0 * STRONG, t(100));
        r.signal_start(&p, 2, STRONG, t(100));
        r.signal_start(&p, 3, STRONG, t(100));
        assert_eq!(r.signal_end(&p, 1), RxResult::Failed(1, RxFailure::Collision));
        let mut r = Radio::new();
        r.signal_start(&p, 1, 15.0 * STRONG, t(100));
        r.signal_start(&p, 2, STRONG, t(100));
        assert_eq!(r.signal_end(&p, 2), RxResult::NotLocked);
        assert_eq!(r.signal_end(&p, 1), RxResult::Decoded(1));
    }
}
