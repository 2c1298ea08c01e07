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
//!
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
    /// The link from its sender is failed as a lossy link (faults, `effect =
    /// "undecodable"`): sensed and interfering like any signal, never decoded.
    LinkFailed,
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
    Decoded,
    Failed(RxFailure),
}

/// What capture mode reads of [`RadioParams`] at a signal's start, taken
/// once per transmission ([`Radio::capture_start`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CaptureParams {
    pub rx_threshold_w: f64,
    pub capture_threshold: f64,
}

impl CaptureParams {
    /// `p`'s, in capture mode.
    pub fn of(p: &RadioParams) -> Option<CaptureParams> {
        match p.reception {
            Reception::Capture { capture_threshold } => Some(CaptureParams {
                rx_threshold_w: p.rx_threshold_w,
                capture_threshold,
            }),
            Reception::Sinr { .. } => None,
        }
    }
}

/// What every signal start and end reads, in 32 bytes with no pointer to
/// follow: a frame is heard by every node in carrier-sense range (~35 on the
/// benchmarks), and with 1000 nodes each receiver's state is usually out of
/// cache when its signal starts or ends. The simulator keeps it in the same
/// cache line as the MAC's held-back NAV arming, next to the MAC's own first
/// line. What only SINR mode and switched-off nodes need is a [`RadioExtra`]
/// kept apart, which the general path ([`Radio::signal_start`]) is handed.
#[repr(C)]
#[derive(Default)]
pub struct Radio {
    lock: Option<Lock>,
    /// Signals on the air here (noted by `signal_start`, not yet ended).
    /// Capture mode needs no more than their number: which one is locked is
    /// `lock`'s, and a signal's end always belongs to a noted start, except
    /// those in [`RadioExtra::missed`].
    signals: u32,
    transmitting: bool,
}

/// A radio's state beyond [`Radio`]'s: empty in capture mode with every node on.
#[derive(Default)]
pub struct RadioExtra {
    /// Signals whose start found the node switched off ([`Radio::signal_missed`]):
    /// their ends are not counted. Empty unless faults switch nodes off.
    missed: Vec<TxId>,
    /// SINR mode: every signal with its power, in the order the interference
    /// sum adds them (unused in capture mode).
    sinr_signals: Vec<Signal>,
}

impl Radio {
    pub fn new() -> Self {
        Self::default()
    }

    /// Carrier busy: transmitting, or any sensed signal on the air.
    #[inline]
    pub fn busy(&self) -> bool {
        self.transmitting || self.sensing()
    }

    /// Whether this radio is sending (a frame that arrives then is not decodable).
    pub fn is_transmitting(&self) -> bool {
        self.transmitting
    }

    /// The frame the radio is locked on and why it already fails, if it does
    /// (read by the trace around a signal start: which frame a collision drops).
    pub fn lock_view(&self) -> Option<(TxId, Option<RxFailure>)> {
        self.lock.as_ref().map(|l| (l.tx, l.failure))
    }

    /// Physical carrier sense from other transmitters (what the MAC's CCA reports;
    /// the MAC knows about its own transmissions).
    #[inline]
    pub fn sensing(&self) -> bool {
        self.signals != 0
    }

    /// Note a signal of transmission `tx` on the air.
    #[inline]
    fn add(&mut self, x: &mut RadioExtra, p: &RadioParams, tx: TxId, power_w: f64) {
        self.signals += 1;
        if let Reception::Sinr { .. } = p.reception {
            x.sinr_signals.push(Signal { tx, power_w });
        }
    }

    /// Forget transmission `tx`'s signal, unless its start was missed.
    #[inline]
    fn remove(&mut self, x: &mut RadioExtra, p: &RadioParams, tx: TxId) {
        if !x.missed.is_empty() {
            if let Some(i) = x.missed.iter().position(|&t| t == tx) {
                x.missed.swap_remove(i);
                return;
            }
        }
        self.signals -= 1;
        if let Reception::Sinr { .. } = p.reception {
            let i = x
                .sinr_signals
                .iter()
                .position(|s| s.tx == tx)
                .expect("a noted signal");
            x.sinr_signals.swap_remove(i);
        }
    }

    /// Transmission `tx`'s signal starts while the node is switched off: it
    /// is not noted (no carrier, no reception), and its end is ignored.
    pub fn signal_missed(&mut self, x: &mut RadioExtra, tx: TxId) {
        x.missed.push(tx);
    }

    pub fn transmitting(&self) -> bool {
        self.transmitting
    }

    /// A signal of `power_w` (≥ CSThresh) starts arriving; it ends at `end`.
    /// Returns true when it was captured: the radio stays locked on a frame at
    /// least `capture_threshold`× stronger and treats the newcomer as noise (the
    /// MAC then defers as ns-2's `Mac802_11::capture` does).
    #[inline]
    pub fn signal_start(
        &mut self,
        x: &mut RadioExtra,
        p: &RadioParams,
        tx: TxId,
        power_w: f64,
        end: SimTime,
    ) -> bool {
        self.general_start(x, p, tx, power_w, end, false)
    }

    /// [`Radio::signal_start`] of a signal over a failed lossy link: it
    /// occupies the carrier, interferes and may hold the lock like any other,
    /// but ends as [`RxFailure::LinkFailed`] (or an earlier failure) when locked.
    pub fn signal_start_undecodable(
        &mut self,
        x: &mut RadioExtra,
        p: &RadioParams,
        tx: TxId,
        power_w: f64,
        end: SimTime,
    ) -> bool {
        self.general_start(x, p, tx, power_w, end, true)
    }

    #[inline(always)]
    fn general_start(
        &mut self,
        x: &mut RadioExtra,
        p: &RadioParams,
        tx: TxId,
        power_w: f64,
        end: SimTime,
        undecodable: bool,
    ) -> bool {
        self.add(x, p, tx, power_w);
        let capture = match p.reception {
            Reception::Capture { capture_threshold } => Some(capture_threshold),
            Reception::Sinr { .. } => None,
        };
        if self.lock_start(p.rx_threshold_w, capture, tx, power_w, end, undecodable) {
            return true;
        }
        self.check_sinr(x, p);
        false
    }

    /// [`Radio::signal_start`] in capture mode with no missed starts
    /// ([`CaptureParams`]; the [`RadioExtra`] is empty then): the simulator's
    /// signal walks check both once per transmission, not at every receiver.
    #[inline(always)]
    pub fn capture_start(
        &mut self,
        c: CaptureParams,
        tx: TxId,
        power_w: f64,
        end: SimTime,
    ) -> bool {
        self.signals += 1;
        self.lock_start(
            c.rx_threshold_w,
            Some(c.capture_threshold),
            tx,
            power_w,
            end,
            false,
        )
    }

    /// The lock's part of a signal start (`capture`: the capture threshold in
    /// capture mode; `undecodable`: over a failed lossy link); returns whether
    /// the newcomer was captured.
    #[inline(always)]
    fn lock_start(
        &mut self,
        rx_threshold_w: f64,
        capture: Option<f64>,
        tx: TxId,
        power_w: f64,
        end: SimTime,
        undecodable: bool,
    ) -> bool {
        match self.lock.as_mut() {
            None => {
                let failure = if self.transmitting {
                    Some(RxFailure::HalfDuplex)
                } else if undecodable {
                    Some(RxFailure::LinkFailed)
                } else if power_w < rx_threshold_w {
                    Some(RxFailure::BelowThreshold)
                } else {
                    None
                };
                self.lock = Some(Lock {
                    tx,
                    power_w,
                    end,
                    failure,
                });
            }
            Some(lock) => {
                if let Some(capture_threshold) = capture {
                    if lock.power_w >= capture_threshold * power_w {
                        return true; // captured: the newcomer is only noise
                    }
                    lock.failure.get_or_insert(RxFailure::Collision);
                    if end > lock.end {
                        // The newcomer outlasts the lock and is followed to its end; a
                        // signal that was never decodable stays so (ns-2 keeps its error
                        // flag, and `discard` frees it without a `COL` line).
                        let failure = if self.transmitting {
                            RxFailure::HalfDuplex
                        } else if undecodable {
                            RxFailure::LinkFailed
                        } else if power_w < rx_threshold_w {
                            RxFailure::BelowThreshold
                        } else {
                            RxFailure::Collision
                        };
                        *lock = Lock {
                            tx,
                            power_w,
                            end,
                            failure: Some(failure),
                        };
                    }
                }
            }
        }
        false
    }

    /// A signal ends. Returns what became of it if it was the locked frame.
    #[inline]
    pub fn signal_end(&mut self, x: &mut RadioExtra, p: &RadioParams, tx: TxId) -> RxResult {
        self.remove(x, p, tx);
        let result = self.lock_end(tx);
        if result == RxResult::NotLocked {
            self.check_sinr(x, p);
        }
        result
    }

    /// [`Radio::signal_end`] in capture mode with no missed starts (as
    /// [`Radio::capture_start`]).
    #[inline(always)]
    pub fn capture_end(&mut self, tx: TxId) -> RxResult {
        self.signals -= 1;
        self.lock_end(tx)
    }

    #[inline(always)]
    fn lock_end(&mut self, tx: TxId) -> RxResult {
        match self.lock {
            Some(lock) if lock.tx == tx => {
                self.lock = None;
                match lock.failure {
                    None => RxResult::Decoded,
                    Some(f) => RxResult::Failed(f),
                }
            }
            _ => RxResult::NotLocked,
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
    fn check_sinr(&mut self, x: &RadioExtra, p: &RadioParams) {
        let Reception::Sinr {
            sinr_threshold,
            noise_w,
        } = p.reception
        else {
            return;
        };
        let Some(lock) = self.lock.as_mut() else {
            return;
        };
        if lock.failure.is_some() {
            return;
        }
        let interference: f64 = x
            .sinr_signals
            .iter()
            .filter(|s| s.tx != lock.tx)
            .map(|s| s.power_w)
            .sum();
        if lock.power_w < sinr_threshold * (noise_w + interference) {
            lock.failure = Some(RxFailure::Collision);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_every_signal_reads_fits_in_half_a_line() {
        assert!(
            std::mem::size_of::<Radio>() <= 32,
            "{}",
            std::mem::size_of::<Radio>()
        );
    }

    fn t(us: u64) -> SimTime {
        SimTime(us * 1000)
    }
    const STRONG: f64 = 1e-8;

    #[test]
    fn lone_frame_is_decoded_and_carrier_follows_it() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        assert!(!r.busy());
        r.signal_start(&mut x_r, &p, 1, STRONG, t(100));
        assert!(r.busy());
        assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::Decoded);
        assert!(!r.busy());
    }

    #[test]
    fn equal_powers_collide() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, STRONG, t(100));
        r.signal_start(&mut x_r, &p, 2, STRONG, t(100));
        assert_eq!(
            r.signal_end(&mut x_r, &p, 1),
            RxResult::Failed(RxFailure::Collision)
        );
        assert_eq!(r.signal_end(&mut x_r, &p, 2), RxResult::NotLocked);
    }

    #[test]
    fn ten_times_stronger_locked_frame_captures() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, 10.0 * STRONG, t(100));
        r.signal_start(&mut x_r, &p, 2, STRONG, t(150));
        assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::Decoded);
        assert!(r.busy(), "captured frame still occupies the carrier");
        assert_eq!(r.signal_end(&mut x_r, &p, 2), RxResult::NotLocked);
    }

    #[test]
    fn collision_lock_follows_the_later_end() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, STRONG, t(100));
        r.signal_start(&mut x_r, &p, 2, STRONG, t(300));
        assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::NotLocked);
        assert_eq!(
            r.signal_end(&mut x_r, &p, 2),
            RxResult::Failed(RxFailure::Collision)
        );
    }

    #[test]
    fn an_undecodable_frame_that_outlasts_a_collision_stays_undecodable() {
        // ns-2 (`Mac802_11::collision`): the frame that lasts longer becomes
        // `pktRx_`; one below RXThresh keeps its error flag and is freed at its end
        // without a `COL` line (`discard`). Only a decodable one is a collision.
        let p = RadioParams::default();
        let weak = p.rx_threshold_w / 2.0;
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, 1.5 * weak, t(100));
        r.signal_start(&mut x_r, &p, 2, weak, t(300));
        assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::NotLocked);
        assert_eq!(
            r.signal_end(&mut x_r, &p, 2),
            RxResult::Failed(RxFailure::BelowThreshold)
        );
        // A decodable one that outlasts a weak lock is a collision.
        r.signal_start(&mut x_r, &p, 3, weak, t(400));
        r.signal_start(&mut x_r, &p, 4, STRONG / 5.0, t(600));
        assert!(STRONG / 5.0 >= p.rx_threshold_w);
        assert_eq!(r.signal_end(&mut x_r, &p, 3), RxResult::NotLocked);
        assert_eq!(
            r.signal_end(&mut x_r, &p, 4),
            RxResult::Failed(RxFailure::Collision)
        );
    }

    #[test]
    fn a_frame_over_a_failed_lossy_link_is_sensed_interferes_and_fails() {
        let p = RadioParams::default();
        let (mut r, mut x) = (Radio::new(), RadioExtra::default());
        r.signal_start_undecodable(&mut x, &p, 1, STRONG, t(100));
        assert!(r.busy(), "still sensed");
        assert_eq!(
            r.signal_end(&mut x, &p, 1),
            RxResult::Failed(RxFailure::LinkFailed)
        );
        // It interferes: a decodable frame of equal power that overlaps it collides.
        r.signal_start_undecodable(&mut x, &p, 2, STRONG, t(100));
        r.signal_start(&mut x, &p, 3, STRONG, t(300));
        assert_eq!(r.signal_end(&mut x, &p, 2), RxResult::NotLocked);
        assert_eq!(
            r.signal_end(&mut x, &p, 3),
            RxResult::Failed(RxFailure::Collision)
        );
        // And a ten times stronger lossy frame captures a weaker newcomer, which is lost.
        r.signal_start_undecodable(&mut x, &p, 4, 10.0 * STRONG, t(100));
        assert!(r.signal_start(&mut x, &p, 5, STRONG, t(150)));
        assert_eq!(
            r.signal_end(&mut x, &p, 4),
            RxResult::Failed(RxFailure::LinkFailed)
        );
        assert_eq!(r.signal_end(&mut x, &p, 5), RxResult::NotLocked);
        assert!(!r.busy());
    }

    #[test]
    fn weak_frame_is_sensed_not_decoded() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, p.rx_threshold_w * 0.5, t(100));
        assert!(r.busy());
        assert_eq!(
            r.signal_end(&mut x_r, &p, 1),
            RxResult::Failed(RxFailure::BelowThreshold)
        );
    }

    #[test]
    fn half_duplex_both_ways() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, STRONG, t(100));
        r.start_tx();
        assert_eq!(
            r.signal_end(&mut x_r, &p, 1),
            RxResult::Failed(RxFailure::HalfDuplex)
        );
        r.signal_start(&mut x_r, &p, 2, STRONG, t(200));
        r.end_tx();
        assert_eq!(
            r.signal_end(&mut x_r, &p, 2),
            RxResult::Failed(RxFailure::HalfDuplex)
        );
    }

    #[test]
    fn the_carrier_stays_busy_until_the_last_signal_ends() {
        let p = RadioParams::default();
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        for tx in 1..=7 {
            r.signal_start(&mut x_r, &p, tx, STRONG, t(100));
        }
        // A signal that started while the node was off was never noted.
        r.signal_missed(&mut x_r, 99);
        for tx in [3, 7, 1, 5, 2, 6] {
            r.signal_end(&mut x_r, &p, tx);
            assert!(r.busy(), "signal 4 is still on the air");
        }
        assert_eq!(r.signal_end(&mut x_r, &p, 99), RxResult::NotLocked);
        assert!(r.busy());
        r.signal_end(&mut x_r, &p, 4);
        assert!(!r.busy());
        r.signal_start(&mut x_r, &p, 8, STRONG, t(200));
        assert_eq!(r.signal_end(&mut x_r, &p, 8), RxResult::Decoded);
    }

    #[test]
    fn a_missed_start_leaves_the_other_signals_counted() {
        for p in [
            RadioParams::default(),
            RadioParams {
                reception: Reception::Sinr {
                    sinr_threshold: 10.0,
                    noise_w: 0.0,
                },
                ..RadioParams::default()
            },
        ] {
            let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
            r.signal_missed(&mut x_r, 1);
            r.signal_start(&mut x_r, &p, 2, STRONG, t(100));
            assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::NotLocked);
            assert!(r.busy(), "signal 2 is on the air");
            assert_eq!(r.signal_end(&mut x_r, &p, 2), RxResult::Decoded);
            assert!(!r.busy());
        }
    }

    /// The walks' capture-mode path gives what the general one gives, over
    /// overlapping signals of mixed powers (captures, collisions, weak frames,
    /// half duplex).
    #[test]
    fn capture_path_equals_the_general_one() {
        let p = RadioParams::default();
        let c = CaptureParams::of(&p).expect("capture mode");
        let (mut general, mut fast, mut x_general) =
            (Radio::new(), Radio::new(), RadioExtra::default());
        let powers = [
            STRONG,
            20.0 * STRONG,
            p.rx_threshold_w * 0.5,
            STRONG,
            0.05 * STRONG,
            3.0 * STRONG,
        ];
        // (start, end) of each signal in µs; ends are walked in time order.
        let spans = [
            (0u64, 300u64),
            (10, 200),
            (20, 250),
            (400, 500),
            (410, 700),
            (600, 650),
        ];
        let mut ev: Vec<(u64, bool, usize)> = spans
            .iter()
            .enumerate()
            .flat_map(|(i, &(s, e))| [(s, true, i), (e, false, i)])
            .collect();
        ev.sort();
        for (k, &(at, start, i)) in ev.iter().enumerate() {
            if k == 5 {
                general.start_tx();
                fast.start_tx();
            }
            if k == 8 {
                general.end_tx();
                fast.end_tx();
            }
            let tx = i as TxId;
            if start {
                let end = t(spans[i].1);
                assert_eq!(
                    general.signal_start(&mut x_general, &p, tx, powers[i], end),
                    fast.capture_start(c, tx, powers[i], end),
                    "start {i} at {at}"
                );
            } else {
                assert_eq!(
                    general.signal_end(&mut x_general, &p, tx),
                    fast.capture_end(tx),
                    "end {i} at {at}"
                );
            }
            assert_eq!(general.busy(), fast.busy());
        }
    }

    #[test]
    fn sinr_mode_sums_interference() {
        let p = RadioParams {
            reception: Reception::Sinr {
                sinr_threshold: 10.0,
                noise_w: 0.0,
            },
            ..RadioParams::default()
        };
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        // Two interferers each 1/15 of the frame: SINR 7.5 < 10 although each alone would be captured.
        r.signal_start(&mut x_r, &p, 1, 15.0 * STRONG, t(100));
        r.signal_start(&mut x_r, &p, 2, STRONG, t(100));
        r.signal_start(&mut x_r, &p, 3, STRONG, t(100));
        assert_eq!(
            r.signal_end(&mut x_r, &p, 1),
            RxResult::Failed(RxFailure::Collision)
        );
        let (mut r, mut x_r) = (Radio::new(), RadioExtra::default());
        r.signal_start(&mut x_r, &p, 1, 15.0 * STRONG, t(100));
        r.signal_start(&mut x_r, &p, 2, STRONG, t(100));
        assert_eq!(r.signal_end(&mut x_r, &p, 2), RxResult::NotLocked);
        assert_eq!(r.signal_end(&mut x_r, &p, 1), RxResult::Decoded);
    }
}
