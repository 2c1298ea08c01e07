//! SACK recovery as ns-2's `Agent/TCP/Sack1` (`tcp-sack1.cc`; RFC 2018 options):
//! * entry: pipe = segments out − dupthresh; the oldest segment is resent directly
//!   (`output`), outside the pipe;
//! * every ACK in recovery takes one from the pipe (a partial ACK two, and restarts
//!   the timer with the backoff cleared, `partial_ack_` false); every transmission
//!   adds one;
//! * send while pipe < ⌊cwnd⌋: the first unSACKed, not yet retransmitted segment below
//!   the highest SACK (`GetNextRetran`), else new data within the window;
//! * a duplicate ACK counts only when its SACK blocks say something new;
//! * the ACK that ends recovery does not open cwnd (Sack1 calls `newack` only).

use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::{secs, TcpSender};

pub struct Sack1;

/// The entry shared by the SACK schemes: Sack1's pipe = maxseq − highest_ack −
/// numdupacks; forget the last episode's retransmissions; resend the oldest segment.
pub(super) fn enter_sack_recovery(s: &mut TcpSender, now: SimTime) {
    s.in_recovery = true;
    s.sack1_pipe = (s.max - s.una) as i64 - i64::from(s.st.dupthresh);
    for i in s.board.iter_mut() {
        i.rec_retx = false;
    }
    s.info_mut(s.una).rec_retx = true;
    s.transmit(now, s.una);
    s.nxt = s.nxt.max(s.una + 1);
}

impl LossRecovery for Sack1 {
    fn name(&self) -> &'static str {
        "sack1"
    }
    fn needs_sack(&self) -> bool {
        true
    }
    fn dup_ack_in_recovery(&self, s: &mut TcpSender, sack_news: bool) {
        s.sack1_pipe -= 1;
        if sack_news {
            s.dupacks += 1;
        }
    }
    fn counts_dup_ack(&self, s: &TcpSender, sack_news: bool) -> bool {
        // ns-2 Sack1 counts a duplicate ACK only when its SACK blocks say something new.
        !s.sack_ok || sack_news
    }
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime) {
        enter_sack_recovery(s, now);
    }
    fn has_partial_acks(&self) -> bool {
        true
    }
    fn on_partial_ack(&self, s: &mut TcpSender, now: SimTime, _newly: u64) {
        s.sack1_pipe -= 2;
        s.st.backoff = 1.0;
        s.rto_at = Some(now + secs(s.rto_s()));
    }
    fn opens_cwnd_on_exit(&self) -> bool {
        false
    }
    fn send(&self, s: &mut TcpSender, now: SimTime, limit: u64) {
        if !s.in_recovery {
            s.send_window(now, limit, u32::MAX);
            return;
        }
        let wnd = s.rwnd_segs.min(s.max_window);
        while s.sack1_pipe < s.st.cwnd.floor() as i64 {
            let top = s.board.iter().rposition(|i| i.sacked);
            let hole = top
                .and_then(|t| {
                    s.board
                        .iter()
                        .take(t)
                        .position(|i| !i.sacked && !i.rec_retx)
                })
                .map(|i| s.una + i as u64);
            let k = match hole {
                Some(k) if k < s.una + wnd => k,
                Some(_) => break,
                None => {
                    if !(s.nxt < limit && s.nxt < s.una + wnd) {
                        break;
                    }
                    if s.nxt == s.max && !s.may_send_new(now) {
                        break;
                    }
                    s.nxt
                }
            };
            if k < s.max {
                s.info_mut(k).rec_retx = true;
            }
            s.transmit(now, k);
            s.nxt = s.nxt.max(k + 1);
            s.sack1_pipe += 1;
        }
    }
}
