//! Timestamp loss detection (TCP-PR, Bohacek et al. 2003; MPR, paper 002): every
//! segment keeps the time it was last sent; one that stays unacknowledged longer
//! than the variant's `loss_timeout_s` (mxrtt) is declared dropped, moved from the
//! to-be-ack list to the to-be-sent list and resent first as the window allows
//! (window = segments in to-be-ack). Duplicate ACKs trigger nothing. A segment
//! declared dropped k times waits 2^k · mxrtt (k ≤ 6) before the next declaration —
//! our backoff for outages, where TCP-PR's text gives none; mxrtt is capped at the
//! maximum RTO. Segments sent before a drop give no RTT samples (Karn, as after a
//! timeout). The RFC 6298 timer still guards the SYN and the FIN, never data.

use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::cc::LostSegment;
use crate::transport::tcp::sender::{secs, SenderState, TcpSender};

pub struct Timestamp;

/// mxrtt (at most the maximum RTO), or the RTO before backoff while there is no
/// estimate.
pub fn loss_threshold_s(s: &TcpSender) -> f64 {
    s.cc.loss_timeout_s(&s.st)
        .map_or(s.rto.base_s(), |m| m.min(s.rto.params.max_s))
}

/// 2^drops, at most 64: the wait before a segment is declared dropped again.
fn backoff_factor(drops: u32) -> f64 {
    f64::from(1u32 << drops.min(6))
}

impl LossRecovery for Timestamp {
    fn name(&self) -> &'static str {
        "timestamp"
    }
    fn detects_losses_by_timer(&self) -> bool {
        true
    }
    fn on_dup_ack(&self, s: &mut TcpSender, now: SimTime, _sack_news: bool) {
        // MPR / TCP-PR: duplicate ACKs are no loss signal; drops are detected by timers.
        s.dupacks += 1;
        s.refresh(now);
        s.cc.pkts_acked(&s.st, 0);
        s.send_data(now);
    }
    fn enter_recovery(&self, _s: &mut TcpSender, _now: SimTime) {
        unreachable!("timestamp recovery ignores duplicate ACKs")
    }
    fn send(&self, s: &mut TcpSender, now: SimTime, limit: u64) {
        // While fewer than the window are in the to-be-ack list, send the oldest segment
        // of the to-be-sent list (drops first, then new data).
        let win = s.window();
        let mut to_be_ack = s.board.iter().filter(|i| !i.lost).count() as u64;
        while to_be_ack < win {
            let k = if let Some(i) = s.board.iter().position(|i| i.lost) {
                s.una + i as u64
            } else if s.max < limit && s.max < s.una + s.rwnd_segs.min(s.max_window) {
                if !s.may_send_new(now) {
                    break;
                }
                s.max
            } else {
                break;
            };
            s.transmit(now, k);
            s.nxt = s.nxt.max(k + 1);
            to_be_ack += 1;
        }
    }
    fn loss_deadline(&self, s: &TcpSender) -> Option<SimTime> {
        if s.state != SenderState::Established || s.frozen {
            return None;
        }
        let thr = loss_threshold_s(s);
        s.board
            .iter()
            .filter(|i| !i.lost)
            .map(|i| i.sent_at + secs(thr * backoff_factor(i.drops)))
            .min()
    }
    /// Declare every expired segment dropped (oldest first), telling the variant each
    /// time, then refill the window.
    fn on_loss_timer(&self, s: &mut TcpSender, now: SimTime) {
        let thr = loss_threshold_s(s);
        for idx in 0..s.board.len() {
            let i = s.board[idx];
            if i.lost || i.sent_at + secs(thr * backoff_factor(i.drops)) > now {
                continue;
            }
            s.board[idx].lost = true;
            s.board[idx].drops += 1;
            // Karn across a drop, as across a timeout: segments sent so far may be
            // acknowledged only once the hole fills, so their ACKs time the hole.
            s.karn_floor = s.max;
            s.rtt_active = false;
            s.stats.drops_detected += 1;
            if i.drops > 0 {
                s.stats.timeouts += 1; // a retransmission was lost too
            }
            let to_be_ack = s
                .board
                .iter()
                .enumerate()
                .filter(|(_, j)| !j.lost)
                .map(|(n, _)| s.una + n as u64)
                .collect();
            let lost = LostSegment {
                seg: s.una + idx as u64,
                cwnd_when_sent: i.cwnd_at_send,
                earlier_drops: i.drops,
                to_be_ack,
            };
            s.refresh(now);
            s.cc.on_segment_lost(&mut s.st, &lost);
        }
        s.send_data(now);
    }
}
