//! Tahoe (Jacobson 1988; ns-2 `Agent/TCP`): fast retransmit without fast recovery.
//! On the trigger cwnd = 1 and the send loop goes back to the lost segment
//! (go-back-N) in slow start. ns-2's Tahoe tries to send on every duplicate ACK and
//! keeps counting duplicates across a timeout.

use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::TcpSender;

pub struct Tahoe;

impl LossRecovery for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }
    fn sends_on_dup_ack(&self, _s: &TcpSender) -> bool {
        true
    }
    fn enter_recovery(&self, s: &mut TcpSender, _now: SimTime) {
        // ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_ONE)`: the variant set ssthresh;
        // slow start from one segment, go-back-N (the send loop resends una).
        s.st.cwnd = 1.0;
        s.nxt = s.una;
    }
    fn keeps_dupacks_on_timeout(&self) -> bool {
        true
    }
}
