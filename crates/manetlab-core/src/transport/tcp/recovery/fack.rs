//! FACK as published (Mathis & Mahdavi, SIGCOMM 1996; `fack_rules = "mathis"`):
//! snd.fack is the forward-most SACKed segment; recovery starts at `dupthresh`
//! duplicates or when snd.fack − snd.una > dupthresh segments; every unSACKed
//! segment below snd.fack is lost; data is sent while awnd = snd.nxt − snd.fack +
//! retran_data < cwnd — RFC 6675's SetPipe with the FACK loss rule computes exactly
//! this, and NextSeg rules 1–3 choose what to send. Partial ACKs keep recovery.

use super::sack::enter_sack_recovery;
use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::TcpSender;

pub struct Fack;

/// IsLost by the FACK rule for every segment in [una, max): unSACKed and below the
/// forward-most SACKed segment.
fn lost_marks(s: &TcpSender) -> Vec<bool> {
    let mut lost = vec![false; s.board.len()];
    if let Some(top) = s.board.iter().rposition(|i| i.sacked) {
        for (i, l) in lost.iter_mut().enumerate().take(top) {
            *l = !s.board[i].sacked;
        }
    }
    lost
}

/// RFC 6675 SetPipe (with the FACK rule this equals awnd = snd.nxt − fack + retran_data).
fn pipe(s: &TcpSender, lost: &[bool]) -> u64 {
    s.board
        .iter()
        .zip(lost)
        .map(|(i, &l)| {
            if i.sacked {
                0
            } else {
                u64::from(!l) + u64::from(i.rec_retx)
            }
        })
        .sum()
}

/// RFC 6675 NextSeg rules 1–3.
fn next_seg(s: &TcpSender, lost: &[bool], limit: u64) -> Option<u64> {
    let first_lost = s
        .board
        .iter()
        .zip(lost)
        .position(|(i, &l)| l && !i.sacked && !i.rec_retx);
    if let Some(i) = first_lost {
        return Some(s.una + i as u64);
    }
    if s.max < limit && s.max < s.una + s.rwnd_segs.min(s.max_window) {
        return Some(s.max);
    }
    let top = s.board.iter().rposition(|i| i.sacked)?;
    s.board
        .iter()
        .take(top)
        .position(|i| !i.sacked && !i.rec_retx)
        .map(|i| s.una + i as u64)
}

impl LossRecovery for Fack {
    fn name(&self) -> &'static str {
        "fack"
    }
    fn needs_sack(&self) -> bool {
        true
    }
    fn triggers_fast_retransmit(&self, s: &TcpSender) -> bool {
        let top = s
            .board
            .iter()
            .rposition(|i| i.sacked)
            .map_or(0, |t| t as u64 + 1);
        s.dupacks == s.st.dupthresh || top > u64::from(s.st.dupthresh)
    }
    fn enter_recovery(&self, s: &mut TcpSender, now: SimTime) {
        enter_sack_recovery(s, now);
    }
    fn has_partial_acks(&self) -> bool {
        true
    }
    fn on_partial_ack(&self, s: &mut TcpSender, now: SimTime, _newly: u64) {
        // Partial ACKs keep recovery; the pipe decides (RFC 6675 §5 (C)).
        s.restart_rto(now);
    }
    fn opens_cwnd_on_exit(&self) -> bool {
        false
    }
    fn send(&self, s: &mut TcpSender, now: SimTime, limit: u64) {
        if !s.in_recovery {
            s.send_window(now, limit, u32::MAX);
            return;
        }
        // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 segment, send NextSeg().
        let lost = lost_marks(s);
        let mut pipe = pipe(s, &lost);
        while s.st.cwnd - pipe as f64 >= 1.0 {
            let Some(k) = next_seg(s, &lost, limit) else {
                break;
            };
            if k == s.max && !s.may_send_new(now) {
                break;
            }
            if k < s.max {
                s.info_mut(k).rec_retx = true;
            }
            s.transmit(now, k);
            s.nxt = s.nxt.max(k + 1);
            pipe += 1;
        }
    }
}
