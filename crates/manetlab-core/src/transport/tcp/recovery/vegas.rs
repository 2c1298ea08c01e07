//! ns-2.35 Vegas's duplicate-ACK rules (`VegasTcpAgent::recv`, tcp-vegas.cc 351-417):
//! the variant decides every duplicate ACK, in and out of recovery, with its own count
//! and its fine-grained timeout ([`CongestionControl::own_dup_ack`]); it inflates cwnd
//! itself (`dupwnd` stays 0) and asks for the retransmission, which this scheme makes
//! with the sender's timer and Karn handling. Otherwise Reno: any new ACK ends
//! recovery. Quirks of ns-2's Vegas kept here rather than as variant hooks:
//! * the `recover` guard holds only after a timeout (Vegas's `recv` has no `bugFix_`
//!   check after a fast retransmit);
//! * a fast retransmit also backs the RTO off (`reset_rtx_timer(1)`, whose `backoff`
//!   argument defaults to 1; Reno's `reset_rtx_timer(1, 0)` does not);
//! * no limited transmit (no `send_one`).
//!
//! [`CongestionControl::own_dup_ack`]: crate::transport::tcp::CongestionControl::own_dup_ack

use super::{reno, LossRecovery};
use crate::sim::SimTime;
use crate::transport::tcp::sender::TcpSender;

pub struct VegasNs2;

impl LossRecovery for VegasNs2 {
    fn name(&self) -> &'static str {
        "vegas-ns2"
    }
    fn on_dup_ack(&self, s: &mut TcpSender, now: SimTime, _sack_news: bool) {
        let guard_ok = s.recover_guard_ok(false);
        s.dupacks += 1;
        s.refresh(now);
        s.cc.pkts_acked(&s.st, 0);
        let act = s.cc.own_dup_ack(&mut s.st, guard_ok);
        if act.retransmit {
            // The variant has set cwnd; the sender's timer, Karn and `recover` handling.
            s.stats.fast_retransmits += 1;
            s.last_loss_timeout = false;
            s.reset_rtx_timer(now, true);
            s.in_recovery = true;
            s.first_partial = false;
            s.dupwnd = 0;
            s.transmit(now, s.una);
            s.nxt = s.nxt.max(s.una + 1);
        }
        if act.send {
            s.send_data(now);
        }
    }
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime) {
        // Not reached (`on_dup_ack` above decides); Reno's entry for completeness.
        reno::enter_fast_recovery(s, now);
    }
}
