//! Loss recovery, apart from congestion control — as ns-3's `TcpRecoveryOps` beside
//! `TcpCongestionOps`. A variant names its scheme ([`Recovery`], plain data); the
//! sender asks the scheme what to do with duplicate ACKs, partial ACKs, the entry to
//! and the exit from recovery, sending and timeouts, and asks the variant
//! ([`super::CongestionControl`]) only for window arithmetic.
//!
//! One file per scheme:
//! * [`tahoe`] — fast retransmit, then slow start from one segment (no fast recovery);
//! * [`reno`] — fast recovery, any new ACK ends it (RFC 5681 §3.2; ns-2 `Agent/TCP/Reno`);
//! * [`newreno`] — partial ACKs keep recovery (RFC 6582; ns-2 `Agent/TCP/Newreno`);
//! * [`sack`] — ns-2 `Agent/TCP/Sack1`'s pipe counter;
//! * [`fack`] — Mathis & Mahdavi's FACK with RFC 6675's pipe (`fack_rules = "mathis"`);
//! * [`fack_ns2`] — ns-2.35 `Agent/TCP/Fack` with its own ACK processing and scoreboard;
//! * [`vegas`] — ns-2.35 Vegas's duplicate-ACK rules (the variant decides each one);
//! * [`timestamp`] — per-segment timers instead of duplicate ACKs (TCP-PR / MPR).
//!
//! Schemes hold no state of their own (a `&'static` object per scheme): the episode's
//! state — `in_recovery`, `dupacks`, `dupwnd`, `recover`, the scoreboard, Sack1's pipe,
//! ns-2 FACK's scoreboard — is the sender's, as ns-3 keeps it in `TcpSocketState`.
//! That lets a scheme call back into the sender (transmit, run the send loop) freely.

use super::cc::Recovery;
use super::sender::TcpSender;
use crate::sim::SimTime;

pub mod fack;
pub mod fack_ns2;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;
pub mod timestamp;
pub mod vegas;

/// The scheme a variant's [`Recovery`] names.
pub fn scheme(kind: Recovery) -> &'static dyn LossRecovery {
    match kind {
        Recovery::Tahoe => &tahoe::Tahoe,
        Recovery::Reno => &reno::Reno,
        Recovery::NewReno => &newreno::NewReno,
        Recovery::Sack => &sack::Sack1,
        Recovery::Fack => &fack::Fack,
        Recovery::FackNs2 => &fack_ns2::FackNs2,
        Recovery::VegasNs2 => &vegas::VegasNs2,
        Recovery::Timestamp => &timestamp::Timestamp,
    }
}

/// A loss-recovery scheme. Hooks take the sender (`s`) and, where time matters, `now`;
/// the defaults are the shared duplicate-ACK flow of ns-2's `Agent/TCP` family
/// ([`standard_dup_ack`]) and a plain window-limited send loop.
pub trait LossRecovery: Sync {
    /// The scheme's name (docs, debugging).
    fn name(&self) -> &'static str;
    /// The scheme needs SACK (the sender offers it unless the scenario forbids, which
    /// the validator refuses).
    fn needs_sack(&self) -> bool {
        false
    }
    /// Losses are detected by per-segment timers ([`LossRecovery::loss_deadline`]);
    /// the RFC 6298 timer does not guard data.
    fn detects_losses_by_timer(&self) -> bool {
        false
    }

    // ----- ACKs ------------------------------------------------------------------------

    /// The scheme processes every ACK itself while data is outstanding (ns-2 FACK):
    /// true when it did. `blocks`: the SACK blocks in segments; `ts_echo`: the
    /// receiver's timestamp echo.
    fn on_ack(
        &self,
        _s: &mut TcpSender,
        _now: SimTime,
        _ack_seg: u64,
        _blocks: &[(i64, i64)],
        _ts_echo: SimTime,
    ) -> bool {
        false
    }
    /// A duplicate ACK (`sack_news`: its SACK blocks cover something new).
    fn on_dup_ack(&self, s: &mut TcpSender, now: SimTime, sack_news: bool) {
        standard_dup_ack(self, s, now, sack_news);
    }
    /// [`standard_dup_ack`]: a duplicate ACK during recovery. Default: count it.
    fn dup_ack_in_recovery(&self, s: &mut TcpSender, _sack_news: bool) {
        s.dupacks += 1;
    }
    /// [`standard_dup_ack`]: whether a duplicate ACK outside recovery counts. Default true.
    fn counts_dup_ack(&self, _s: &TcpSender, _sack_news: bool) -> bool {
        true
    }
    /// [`standard_dup_ack`]: the counted duplicates call for a fast retransmit (the
    /// `recover` guard permitting). Default: the `dupthresh`-th duplicate.
    fn triggers_fast_retransmit(&self, s: &TcpSender) -> bool {
        s.dupacks == s.st.dupthresh
    }
    /// [`standard_dup_ack`]: run the send loop after a duplicate ACK outside recovery
    /// (after any fast retransmit). Default: only once in recovery.
    fn sends_on_dup_ack(&self, s: &TcpSender) -> bool {
        s.in_recovery
    }
    /// Fast retransmit, after the variant set ssthresh/cwnd (`enter_recovery`) and the
    /// sender restarted the timer: start the episode and resend.
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime);
    /// A new ACK below `recover` keeps recovery going (partial ACKs, RFC 6582).
    fn has_partial_acks(&self) -> bool {
        false
    }
    /// A partial ACK of `newly` segments (only when [`LossRecovery::has_partial_acks`]).
    fn on_partial_ack(&self, _s: &mut TcpSender, _now: SimTime, _newly: u64) {
        unreachable!("{}: no partial ACKs", self.name())
    }
    /// Recovery ends (a full ACK, or any new ACK for Reno).
    fn exit_recovery(&self, s: &mut TcpSender) {
        s.end_recovery();
    }
    /// The ACK that ends recovery also opens cwnd (ns-2 `newack` + `opencwnd`); false:
    /// Sack1, whose exit calls `newack` only.
    fn opens_cwnd_on_exit(&self) -> bool {
        true
    }

    // ----- sending ---------------------------------------------------------------------

    /// Send what the window allows (new data and retransmissions). `limit`: one past
    /// the last segment of the file.
    fn send(&self, s: &mut TcpSender, now: SimTime, limit: u64) {
        s.send_window(now, limit, u32::MAX);
    }

    // ----- timers ----------------------------------------------------------------------

    /// The RTO fired with nothing outstanding and data left: true if the scheme handled
    /// it (ns-2 FACK restarts); otherwise the sender ignores it.
    fn on_idle_timeout(&self, _s: &mut TcpSender, _now: SimTime) -> bool {
        false
    }
    /// The RTO fired, after the variant's `on_timeout` and the backoff: true if the scheme
    /// took over (ns-2 FACK keeps recovery); otherwise the sender goes back to N.
    fn on_timeout(&self, _s: &mut TcpSender, _now: SimTime, _data_out: bool) -> bool {
        false
    }
    /// Duplicate ACKs keep counting across a timeout (ns-2 Tahoe). Default false.
    fn keeps_dupacks_on_timeout(&self) -> bool {
        false
    }
    /// Per-segment loss timers: when the next one expires.
    fn loss_deadline(&self, _s: &TcpSender) -> Option<SimTime> {
        None
    }
    /// A per-segment loss timer expired.
    fn on_loss_timer(&self, _s: &mut TcpSender, _now: SimTime) {}
}

/// The duplicate-ACK flow of ns-2's `Agent/TCP` family: in recovery, count the ACK
/// (scheme rule) and send; outside, count it, fast-retransmit on the trigger if the
/// `recover` guard allows, else limited transmit (ns-2 `singledup_` 1: the first
/// `dupthresh − 1` duplicates each send one segment), then send if the scheme says so.
pub fn standard_dup_ack<R: LossRecovery + ?Sized>(
    r: &R,
    s: &mut TcpSender,
    now: SimTime,
    sack_news: bool,
) {
    if s.in_recovery {
        r.dup_ack_in_recovery(s, sack_news);
        s.refresh(now);
        s.cc.pkts_acked(&s.st, 0);
        s.send_data(now);
        return;
    }
    if !r.counts_dup_ack(s, sack_news) {
        return;
    }
    s.dupacks += 1;
    s.refresh(now);
    s.cc.pkts_acked(&s.st, 0);
    let guard_ok = s.recover_guard_ok(true);
    if r.triggers_fast_retransmit(s) && guard_ok {
        s.fast_retransmit(now);
    } else if s.dupacks < s.st.dupthresh {
        s.send_one(now);
    }
    if r.sends_on_dup_ack(s) {
        s.send_data(now);
    }
}
