//! Reno fast recovery (RFC 5681 §3.2; ns-2 `Agent/TCP/Reno`): resend the oldest
//! segment, inflate the window by `dupwnd` (ns-2 `dupwnd_ = numdupacks_`, +1 per
//! further duplicate), and let the first new ACK — partial or not — end recovery.
//! ns-2 Reno does not send on the first `dupthresh − 1` duplicates (limited transmit
//! sends one segment each instead).

use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::TcpSender;

pub struct Reno;

/// Reno/NewReno's entry: inflation `dupwnd` = the duplicates (at most dupthresh),
/// resend the oldest segment.
pub(super) fn enter_fast_recovery(s: &mut TcpSender, now: SimTime) {
    s.in_recovery = true;
    s.first_partial = false;
    // ns-2 `dupwnd_ = numdupacks_`.
    s.dupwnd = s.dupacks.min(s.st.dupthresh);
    s.transmit(now, s.una);
    s.nxt = s.nxt.max(s.una + 1);
}

/// ns-2 `++dupwnd_` per further duplicate ACK in recovery.
pub(super) fn inflate(s: &mut TcpSender) {
    s.dupacks += 1;
    s.dupwnd += 1;
}

/// ns-2 Reno/NewReno send on a duplicate ACK only in recovery or from the threshold on.
pub(super) fn sends_on_dup_ack(s: &TcpSender) -> bool {
    s.in_recovery || s.dupacks >= s.st.dupthresh
}

impl LossRecovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn dup_ack_in_recovery(&self, s: &mut TcpSender, _sack_news: bool) {
        inflate(s);
    }
    fn sends_on_dup_ack(&self, s: &TcpSender) -> bool {
        sends_on_dup_ack(s)
    }
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime) {
        enter_fast_recovery(s, now);
    }
}
