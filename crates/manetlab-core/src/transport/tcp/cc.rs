//! The congestion-control interface and the shared Reno helpers (the registry is
//! `variants::REGISTRY`).
//!
//! Modelled on Linux `struct tcp_congestion_ops` and ns-3 `TcpCongestionOps`: the
//! sender engine owns sequence state, the scoreboard and timers, the loss-recovery
//! scheme (`recovery/`, named by [`CongestionControl::recovery`]) decides what
//! duplicate and partial ACKs do, and a variant owns the window arithmetic. Every hook
//! has a Reno default, so a variant implements only what it changes (Vegas, Westwood,
//! ABRA, Fixed-RTO are each one small file in `variants/`). Hooks take and return
//! plain data ([`CcState`], numbers, [`LostSegment`]), so a variant can live outside
//! the engine.
//!
//! Units: `cwnd` and `ssthresh` are in segments (f64, as ns-2's `cwnd_`), times in
//! seconds unless typed `SimTime`.
//!
//! The Reno defaults are ns-2.35's `TcpAgent` (`tcp.cc`): `opencwnd` grows cwnd once
//! per new ACK (+1 in slow start, +1/cwnd in congestion avoidance: `wnd_option_` 1,
//! `increase_num_` 1, no `maxcwnd_` clamp — the usable window is clamped to `window_`
//! instead); `slowdown` sets ssthresh = ⌊min(cwnd, window_)/2⌋ ≥ 2 (`precision_reduce_`,
//! `decrease_num_` 0.5) on every loss, timeouts included, so repeated timeouts drive
//! it to 2.
//!
//! Hook order on one ACK (see `sender.rs` and `recovery/`):
//! transmit → `on_transmit`;
//! new ACK  → `on_rtt_sample` → `pkts_acked` →
//!            (the scheme's partial-ACK handling | `exit_recovery` + `cong_avoid` |
//!            `cong_avoid`) → `on_ack_after_timeout` → `retransmit_on_new_ack`;
//! dup ACK  → `pkts_acked(0)` → the scheme: fast retransmit (`enter_recovery`) at its
//!            trigger, or (ns-2 Vegas's scheme) `own_dup_ack`;
//! RTO      → `on_timeout` → `backoff_rto`.

use crate::sim::SimTime;

/// Which loss-recovery algorithm the engine runs for a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment with go-back-N (Jacobson 1988).
    Tahoe,
    /// Fast retransmit + fast recovery; any new ACK ends recovery (RFC 5681 §3.2).
    Reno,
    /// Reno with partial-ACK handling: stay in recovery until `recover` is acked (RFC 6582).
    NewReno,
    /// SACK scoreboard and pipe (RFC 6675).
    Sack,
    /// SACK with the forward-ACK loss rule and window estimate (Mathis & Mahdavi 1996).
    Fack,
    /// ns-2.35 `Agent/TCP/Fack` (`tcp-fack.cc` on `scoreboard.cc`): its own ACK
    /// processing, scoreboard and send loop (`recovery/fack_ns2.rs`).
    FackNs2,
    /// ns-2.35 Vegas's own duplicate-ACK rules (`recovery/vegas.rs`): the variant decides
    /// every duplicate ACK ([`CongestionControl::own_dup_ack`]); otherwise Reno.
    VegasNs2,
    /// Per-segment timestamps (TCP-PR, Bohacek et al. 2003; MPR, paper 002): a segment
    /// unacknowledged for longer than the variant's [`CongestionControl::loss_timeout_s`]
    /// is declared dropped and resent as the window allows; duplicate ACKs trigger nothing
    /// and the RFC 6298 timer is not used for data (see `sender.rs`).
    Timestamp,
}

impl Recovery {
    /// The scheme needs SACK.
    pub fn needs_sack(self) -> bool {
        super::recovery::scheme(self).needs_sack()
    }
}

/// The sender state a variant reads and may change. The engine refreshes the
/// read-only fields before each hook.
#[derive(Clone, Debug)]
pub struct CcState {
    pub now: SimTime,
    /// Congestion window (segments).
    pub cwnd: f64,
    /// Slow-start threshold (segments).
    pub ssthresh: f64,
    /// RTO backoff multiplier (1 = none); the RTO in force is base RTO · backoff.
    pub backoff: f64,
    /// Read-only: segments sent and not yet cumulatively acked (RFC 5681 FlightSize).
    pub flight: u64,
    /// Read-only: duplicate-ACK threshold (segments).
    pub dupthresh: u32,
    /// Read-only: the window limit `window_pkts` (ns-2 `wnd_`), segments.
    pub max_window: f64,
    /// Read-only: duplicate ACKs since the last new ACK.
    pub dupacks: u32,
    /// Read-only: timeouts since the last new ACK (1 in the first `on_timeout`).
    pub consecutive_timeouts: u32,
    /// Read-only: RFC 6298 SRTT / RTTVAR (s), None before the first sample.
    pub srtt_s: Option<f64>,
    pub rttvar_s: f64,
    /// Read-only: the RTO before backoff (s).
    pub base_rto_s: f64,
    /// Read-only: when the oldest unacknowledged segment was last sent.
    pub una_sent_at: Option<SimTime>,
    /// Read-only: maximum segment payload (bytes).
    pub mss: u32,
    /// Read-only: oldest unacknowledged segment, next segment to send, one past the
    /// highest sent.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Read-only: the oldest unacknowledged segment has been retransmitted.
    pub una_retransmitted: bool,
    /// Read-only: hops of the path, measured from the IP TTL of the last segment
    /// received from the peer (None until the simulator reports one; TCP-AP).
    pub path_hops: Option<u32>,
}

impl CcState {
    /// `max_window`: `window_pkts` (ns-2 `window_`), which is also the initial
    /// ssthresh (ns-2 `reset()`: `ssthresh_ = int(wnd_)`; the Tcl `ssthresh_ 0` is
    /// overwritten there).
    pub fn new(initial_cwnd: f64, mss: u32, dupthresh: u32, max_window: f64) -> Self {
        CcState {
            now: SimTime::ZERO,
            cwnd: initial_cwnd,
            ssthresh: max_window.floor(),
            backoff: 1.0,
            flight: 0,
            dupthresh,
            max_window,
            dupacks: 0,
            consecutive_timeouts: 0,
            srtt_s: None,
            rttvar_s: 0.0,
            base_rto_s: 3.0,
            una_sent_at: None,
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            una_retransmitted: false,
            path_hops: None,
        }
    }
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What a variant with its own duplicate-ACK rules ([`CongestionControl::own_dup_ack`])
/// asks of the engine for one duplicate ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnDupAck {
    /// Retransmit the oldest segment now as a fast retransmit (timer restarted, RTT
    /// timing stopped, `recover` = highest sent); the variant has already set cwnd.
    pub retransmit: bool,
    /// Then run the send loop.
    pub send: bool,
}

/// What a variant asks of the engine, fixed for a connection: plain data, read once.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EngineOptions {
    /// The usable window may be 0 (⌊cwnd⌋ with cwnd < 1, ns-2 `window()`): the engine
    /// then sends nothing and keeps the RTO armed (ns-2 `newtimer`'s `cwnd_ < 1`) so the
    /// timeout restarts sending. Default false: the window is at least 1 segment.
    /// ns-2.35 Vegas (`vegas_zero_window_after_timeout`).
    pub zero_window: bool,
    /// Data segments leave without their TCP/IP header bytes counted on the air
    /// (ns-2.35 Vegas's `output`, which skips `headersize()`). Default false.
    pub headerless_data_segments: bool,
    /// Route-failure notices (ELFN, Holland & Vaidya 1999): Some(probe interval, s)
    /// makes the engine freeze on `RouteFailed` and probe at that interval until the
    /// route is back; None (default, standard TCP) ignores notices.
    pub route_failure_probe_s: Option<f64>,
}

/// A congestion-control variant. All hooks but `name` and `recovery` default to Reno.
pub trait CongestionControl {
    /// The scenario name (`transport = "…"`).
    fn name(&self) -> &'static str;
    /// The loss-recovery algorithm the engine runs.
    fn recovery(&self) -> Recovery;
    /// What the variant asks of the engine for the whole connection (read once, when
    /// the sender is built). Default: nothing beyond standard TCP.
    fn engine_options(&self) -> EngineOptions {
        EngineOptions::default()
    }

    /// ssthresh after a loss (returned, ns-3 `GetSsThresh` style): RFC 5681 (4).
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        reno_ssthresh(s)
    }
    /// New cumulative ACK of `acked` segments outside recovery (and the ACK that ends
    /// Reno/NewReno recovery): grow cwnd.
    fn cong_avoid(&mut self, s: &mut CcState, acked: u64) {
        reno_cong_avoid(s, acked);
    }
    /// Every ACK that arrives, with the segments it newly acknowledges (0 for a duplicate).
    fn pkts_acked(&mut self, _s: &CcState, _acked: u64) {}
    /// Data segment `seg` was just transmitted (new or again). Default: nothing (ns-2
    /// Vegas keeps its own send-time and transmit-count arrays).
    fn on_transmit(&mut self, _s: &CcState, _seg: u64, _now: SimTime) {}
    /// A valid RTT sample (Karn's rule applied), seconds, unrounded.
    fn on_rtt_sample(&mut self, _s: &CcState, _rtt_s: f64) {}
    /// Every duplicate ACK, in or out of recovery, decided by the variant itself — called
    /// only by the [`Recovery::VegasNs2`] scheme (ns-2 Vegas's `recv`, which keeps its
    /// own duplicate count and inflates cwnd directly: the engine's dupwnd stays 0).
    /// `guard_ok`: the `recover` guard lets a fast retransmit through.
    fn own_dup_ack(&mut self, _s: &mut CcState, _guard_ok: bool) -> OwnDupAck {
        unreachable!("own_dup_ack outside the vegas-ns2 recovery scheme")
    }
    /// Fast retransmit: set ssthresh and cwnd (the recovery scheme then retransmits).
    /// ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`: cwnd = min(cwnd, window_)/2,
    /// not rounded. The scheme may change cwnd further (Tahoe: 1 segment); Reno/NewReno's
    /// inflation by the duplicate ACKs is the scheme's separate `dupwnd`.
    fn enter_recovery(&mut self, s: &mut CcState) {
        let half = s.cwnd.min(s.max_window) / 2.0;
        s.ssthresh = self.ssthresh(s);
        s.cwnd = half.max(1.0);
    }
    /// Recovery ends (full ACK). Default: nothing — ns-2 (`exit_recovery_fix_` 0) only
    /// drops the inflation, and the ACK then opens cwnd as any new ACK.
    fn exit_recovery(&mut self, _s: &mut CcState) {}
    /// Retransmission timeout: ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)` —
    /// ssthresh = ⌊min(cwnd, window_)/2⌋ ≥ 2 on every timeout, cwnd = 1.
    fn on_timeout(&mut self, s: &mut CcState) {
        s.ssthresh = self.ssthresh(s);
        s.cwnd = 1.0;
    }
    /// Back the RTO off after a timeout. None (default): the engine doubles as ns-2
    /// `rtt_backoff`; a variant that backs off differently sets `s.backoff` and returns true.
    fn backoff_rto(&mut self, _s: &mut CcState) -> bool {
        false
    }
    /// The first ACK covering the segment retransmitted by a timeout. Default:
    /// nothing; the backoff is cleared by the next valid RTT sample (Karn, ns-2).
    fn on_ack_after_timeout(&mut self, _s: &mut CcState) {}
    /// After a new ACK: true to retransmit the oldest unacked segment at once
    /// (Vegas' fine-grained check). Default false.
    fn retransmit_on_new_ack(&mut self, _s: &CcState) -> bool {
        false
    }
    /// Minimum gap between new-data transmissions (rate pacing, TCP-AP); None = ACK-clocked.
    fn pacing_gap_s(&self, _s: &CcState) -> Option<f64> {
        None
    }
    /// [`Recovery::Timestamp`] only: how long (s) a segment may stay unacknowledged
    /// before it is declared dropped (TCP-PR's mxrtt). None = no estimate yet (the
    /// engine then uses its RTO before backoff).
    fn loss_timeout_s(&self, _s: &CcState) -> Option<f64> {
        None
    }
    /// [`Recovery::Timestamp`] only: segment `lost.seg` was declared dropped and will
    /// be resent. Default: RFC 5681's halving.
    fn on_segment_lost(&mut self, s: &mut CcState, _lost: &LostSegment) {
        s.ssthresh = self.ssthresh(s);
        s.cwnd = s.ssthresh;
    }
}

/// A segment the [`Recovery::Timestamp`] engine declared dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct LostSegment {
    /// Data segment number.
    pub seg: u64,
    /// cwnd (segments) when the segment was last transmitted (TCP-PR's cwnd(n)).
    pub cwnd_when_sent: f64,
    /// Times it had been declared dropped before (≥ 1: a retransmission was lost too).
    pub earlier_drops: u32,
    /// The to-be-ack list after the drop: segments sent and neither acknowledged nor
    /// declared dropped, ascending.
    pub to_be_ack: Vec<u64>,
}

/// ns-2 `slowdown(CLOSE_SSTHRESH_HALF)`: ssthresh = ⌊min(cwnd, window_)/2⌋, at least 2.
/// (RFC 5681 (4) uses FlightSize; ns-2 uses the window.)
pub fn reno_ssthresh(s: &CcState) -> f64 {
    (s.cwnd.min(s.max_window) / 2.0).floor().max(2.0)
}

/// ns-2 `opencwnd` (`wnd_option_` 1, `increase_num_` 1): once per new ACK, whatever
/// it acknowledges — cwnd + 1 below ssthresh, else cwnd + 1/cwnd.
pub fn reno_open_cwnd(s: &mut CcState) {
    if s.cwnd < s.ssthresh {
        s.cwnd += 1.0;
    } else {
        s.cwnd += 1.0 / s.cwnd;
    }
}

/// Reno window growth on a new ACK (the `acked` count is ignored, as in ns-2).
pub fn reno_cong_avoid(s: &mut CcState, _acked: u64) {
    reno_open_cwnd(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_match_constructed_variants() {
        use crate::transport::tcp::variants::{by_name, REGISTRY};
        use crate::transport::tcp::TcpConfig;
        for v in REGISTRY {
            assert_eq!((v.make)(&TcpConfig::default()).name(), v.name);
        }
        assert!(by_name("cubic", &TcpConfig::default()).is_none());
    }

    #[test]
    fn reno_helpers_follow_ns2_opencwnd_and_slowdown() {
        let mut s = CcState::new(2.0, 1000, 3, 20.0);
        assert_eq!(s.ssthresh, 20.0, "ns-2 reset(): ssthresh_ = window_");
        s.ssthresh = 4.0;
        // One increment per ACK, however many segments it covers: 2 -> 3 -> 4, then 4 + 1/4.
        reno_cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 3.0);
        reno_cong_avoid(&mut s, 5);
        assert_eq!(s.cwnd, 4.0);
        reno_cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 4.25);
        // ssthresh = ⌊min(cwnd, window_)/2⌋ ≥ 2, independent of the flight size.
        s.cwnd = 9.0;
        s.flight = 1;
        assert_eq!(reno_ssthresh(&s), 4.0);
        s.cwnd = 35.0;
        assert_eq!(reno_ssthresh(&s), 10.0, "window_ 20 caps the window used");
        s.cwnd = 1.0;
        assert_eq!(reno_ssthresh(&s), 2.0);
    }
}
