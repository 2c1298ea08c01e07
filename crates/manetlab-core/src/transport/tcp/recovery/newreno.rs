//! NewReno (RFC 6582; ns-2 `Agent/TCP/Newreno`): Reno's fast recovery, but a partial
//! ACK (below `recover`) resends the next hole, deflates the window by the segments
//! acked minus one (`partial_window_deflation_` 1) and keeps recovery; the timer is
//! restarted on the first partial ACK only (`newreno_changes1_` 1); in recovery at
//! most two segments leave per ACK (`maxburst` 2). Recovery ends at an ACK ≥ `recover`.

use super::reno;
use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::{secs, TcpSender};

pub struct NewReno;

impl LossRecovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn dup_ack_in_recovery(&self, s: &mut TcpSender, _sack_news: bool) {
        reno::inflate(s);
    }
    fn sends_on_dup_ack(&self, s: &TcpSender) -> bool {
        reno::sends_on_dup_ack(s)
    }
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime) {
        reno::enter_fast_recovery(s, now);
    }
    fn has_partial_acks(&self) -> bool {
        true
    }
    fn on_partial_ack(&self, s: &mut TcpSender, now: SimTime, newly: u64) {
        // ns-2 `partialnewack_helper`: restart the timer on the first partial ACK only
        // (`newreno_changes1_`); deflate (`partial_window_deflation_`); retransmit the
        // next hole.
        if !s.first_partial {
            s.first_partial = true;
            s.rto_at = Some(now + secs(s.rto_s()));
        }
        let d = newly as u32;
        if s.dupwnd > d {
            s.dupwnd -= d - 1;
        } else {
            s.st.cwnd = (s.st.cwnd - f64::from(d - s.dupwnd)).max(1.0);
            s.dupwnd = 1;
        }
        s.transmit(now, s.una);
        s.nxt = s.nxt.max(s.una + 1);
    }
    fn send(&self, s: &mut TcpSender, now: SimTime, limit: u64) {
        // ns-2 NewReno sends at most 2 segments per ACK once dupacks reach the
        // threshold (`send_much(0, 0, 2)`), i.e. throughout fast recovery.
        let burst = if s.dupacks >= s.st.dupthresh {
            2
        } else {
            u32::MAX
        };
        s.send_window(now, limit, burst);
    }
}
