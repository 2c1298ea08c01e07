//! ns-2.35 `Agent/TCP/Fack` (`tcp/tcp-fack.cc`, `tcp/scoreboard.cc`): the ACK
//! processing, scoreboard, send loop and timeout of `fack_rules = "ns2"` (the
//! default; the rules are summarised in `variants/fack.rs`).
//!
//! Its state lives in the sender (`TcpSender::f2`) and its code works on the sender's
//! own sequence state, timer and RTT estimator. Sequence numbers here are ns-2's: segment k is
//! seqno k, `last_ack` = snd_una − 1 (−1 before anything is acknowledged), `fack` is
//! the highest segment acked or SACKed, SACK blocks are `[left, right)` in segments.

use super::LossRecovery;
use crate::sim::SimTime;
use crate::transport::tcp::sender::{secs, SenderState, TcpSender};
use std::collections::VecDeque;

/// The scheme: every ACK, the send loop and both kinds of timeout are its own.
pub struct FackNs2;

impl LossRecovery for FackNs2 {
    fn name(&self) -> &'static str {
        "fack-ns2"
    }
    fn needs_sack(&self) -> bool {
        true
    }
    fn on_ack(
        &self,
        s: &mut TcpSender,
        now: SimTime,
        ack_seg: u64,
        blocks: &[(i64, i64)],
        ts_echo: SimTime,
    ) -> bool {
        s.fack_ns2_on_ack(now, ack_seg, blocks, ts_echo);
        true
    }
    fn enter_recovery(&self, _s: &mut TcpSender, _now: SimTime) {
        unreachable!("ns-2 FACK retransmits in its own ACK processing")
    }
    fn opens_cwnd_on_exit(&self) -> bool {
        false
    }
    fn send(&self, s: &mut TcpSender, now: SimTime, _limit: u64) {
        s.f2_send_much(now);
    }
    fn on_idle_timeout(&self, s: &mut TcpSender, now: SimTime) -> bool {
        // ns-2 FACK's timer outlives a hold with everything acknowledged.
        if s.state == SenderState::Established && s.una == s.max && s.una < s.total_segs() {
            s.fack_ns2_idle_timeout(now);
            return true;
        }
        false
    }
    fn on_timeout(&self, s: &mut TcpSender, now: SimTime, data_out: bool) -> bool {
        if data_out {
            s.fack_ns2_timeout(now);
        }
        data_out
    }
}

/// One entry of ns-2's scoreboard (`ScoreBoardNode`; `ack_flag_` entries are gone).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Node {
    seq: i64,
    sacked: bool,
    retran: bool,
    /// The next new segment when this one was retransmitted (`snd_nxt_`).
    snd_nxt: i64,
}

impl Node {
    fn new(seq: i64) -> Self {
        Node {
            seq,
            sacked: false,
            retran: false,
            snd_nxt: 0,
        }
    }
}

/// ns-2's FACK scoreboard: entries from the cumulative ACK it was last updated
/// with up to the highest SACKed segment. Updated with the *previous* cumulative
/// ACK on ACKs outside recovery, so it may briefly hold acknowledged entries (ns-2).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    nodes: VecDeque<Node>,
}

impl Scoreboard {
    fn clear(&mut self) {
        self.nodes.clear();
    }

    /// `UpdateScoreBoard`: drop entries up to `last_ack`, extend to the highest SACK,
    /// flag SACKed entries. Returns the retransmitted entries that were acked or
    /// SACKed (ns-2 subtracts them from `retran_data_`).
    fn update(&mut self, last_ack: i64, blocks: &[(i64, i64)]) -> i64 {
        let mut done = 0;
        while self.nodes.front().is_some_and(|n| n.seq <= last_ack) {
            done += i64::from(self.nodes.pop_front().is_some_and(|n| n.retran));
        }
        if self.nodes.is_empty() && !blocks.is_empty() {
            self.nodes.push_back(Node::new(last_ack + 1));
        }
        for &(left, right) in blocks {
            let top = self.nodes.back().map_or(last_ack, |n| n.seq);
            self.nodes.extend((top + 1..right).map(Node::new));
            for n in self.nodes.iter_mut().take_while(|n| n.seq < right) {
                if n.seq >= left {
                    n.sacked = true;
                    if n.retran {
                        n.retran = false;
                        done += 1;
                    }
                }
            }
        }
        done
    }

    /// `CheckSndNxt`: a retransmission is lost again when a SACK block reaches past
    /// the segment that was next to send when it left. Its flag is cleared (without
    /// touching `retran_data_`, as ns-2); true if any was found.
    fn check_snd_nxt(&mut self, blocks: &[(i64, i64)]) -> bool {
        let mut lost = false;
        for &(_, right) in blocks {
            for n in self.nodes.iter_mut().take_while(|n| n.seq < right) {
                if n.retran && n.snd_nxt < right {
                    n.retran = false;
                    n.snd_nxt = 0;
                    lost = true;
                }
            }
        }
        lost
    }

    /// `GetNextRetran`: the first entry neither SACKed nor retransmitted.
    fn next_retran(&self) -> Option<i64> {
        self.nodes
            .iter()
            .find(|n| !n.sacked && !n.retran)
            .map(|n| n.seq)
    }

    /// `MarkRetran`: only entries on the board keep the mark (ns-2 writes a ring slot
    /// that is re-initialised when the entry is created).
    fn mark_retran(&mut self, seq: i64, snd_nxt: i64) {
        if let Some(n) = self.nodes.iter_mut().find(|n| n.seq == seq) {
            n.retran = true;
            n.snd_nxt = snd_nxt;
        }
    }
}

/// `FackTcpAgent`'s state (`rampdown_`/`ss-div4_` off, so `wintrim_` stays 0).
#[derive(Clone, Debug)]
pub(crate) struct FackNs2State {
    sb: Scoreboard,
    /// In fast recovery (`fastrecov_`).
    fastrecov: bool,
    /// A retransmission was lost again: send nothing until the timeout (`timeout_`).
    hold: bool,
    /// Highest segment acked or SACKed (`fack_`).
    fack: i64,
    /// Retransmissions sent and not yet acked/SACKed (`retran_data_`).
    retran_data: i64,
    /// fack − last_ack − 1 (`dupacks_`).
    dupacks: i64,
    /// The next segment to send when recovery began (`recover_`).
    recover: i64,
}

impl Default for FackNs2State {
    fn default() -> Self {
        FackNs2State {
            sb: Scoreboard::default(),
            fastrecov: false,
            hold: false,
            fack: -1,
            retran_data: 0,
            dupacks: 0,
            recover: 0,
        }
    }
}

/// `maxsack`: the highest SACKed segment, −2 without SACK blocks (ns-2's −1 − 1).
fn max_sack(blocks: &[(i64, i64)]) -> i64 {
    blocks.iter().map(|&(_, r)| r).max().unwrap_or(-1) - 1
}

impl TcpSender {
    /// `FackTcpAgent::recv` for an ACK of `ack_seg` segments with SACK `blocks` that
    /// echoes the send time `ts_echo` (the sink's `ts_to_echo_` when it made the ACK:
    /// an ACK that waited in the network, e.g. while AODV repaired the route, echoes an
    /// old time and `oldack` takes a long RTT sample from it, as ns-2 does).
    pub(crate) fn fack_ns2_on_ack(
        &mut self,
        now: SimTime,
        ack_seg: u64,
        blocks: &[(i64, i64)],
        ts_echo: SimTime,
    ) {
        let echo = Some(ts_echo);
        let ack = ack_seg as i64 - 1;
        let last_ack = self.una as i64 - 1;
        if !self.f2.fastrecov {
            if ack > last_ack && blocks.is_empty() {
                // A plain new ACK: `newack`, `opencwnd`, forget the scoreboard.
                let newly = ack_seg - self.una;
                self.f2_newack(now, ack_seg);
                self.refresh(now);
                self.cc.pkts_acked(&self.st, newly);
                self.cc.cong_avoid(&mut self.st, newly);
                let f = &mut self.f2;
                f.fack = ack;
                f.hold = false;
                f.sb.clear();
                f.retran_data = 0;
                f.dupacks = 0;
            } else if ack < last_ack {
                // Misordered ACK: ignored.
            } else {
                // Scoreboard first, with the previous cumulative ACK (ns-2's order).
                let done = self.f2.sb.update(last_ack, blocks);
                self.f2.retran_data -= done;
                self.f2_oldack(now, ack_seg, echo);
                self.f2.fack = self.f2.fack.max(max_sack(blocks));
                self.f2_bump_nxt();
                self.f2.dupacks = self.f2.fack - ack - 1;
                if self.f2.dupacks >= i64::from(self.st.dupthresh) {
                    self.f2_fast_retransmit(now);
                }
            }
            if self.f2.dupacks == 0 {
                self.f2_send_much(now);
            }
        } else {
            let newly = ack_seg.saturating_sub(self.una);
            self.f2_oldack(now, ack_seg, echo);
            self.f2.fack = self.f2.fack.max(max_sack(blocks));
            self.f2_bump_nxt();
            let f = &mut self.f2;
            f.retran_data -= f.sb.update(ack, blocks);
            f.hold |= f.sb.check_snd_nxt(blocks);
            // Every ACK in recovery opens cwnd (`opencwnd`, slow start from 1).
            self.refresh(now);
            self.cc.cong_avoid(&mut self.st, newly);
            let f = &mut self.f2;
            if blocks.is_empty() && ack >= f.recover {
                // No SACK blocks and `recover` acknowledged: recovery is over.
                f.fastrecov = false;
                f.hold = false;
                f.sb.clear();
                f.retran_data = 0;
                f.dupacks = 0;
                self.in_recovery = false;
            }
            self.f2_send_much(now);
        }
        self.check_complete(now);
    }

    /// `t_seqno_ = fack_ + 1` when the forward-most SACK passed it.
    fn f2_bump_nxt(&mut self) {
        if self.f2.fack >= self.nxt as i64 {
            self.nxt = (self.f2.fack + 1) as u64;
        }
    }

    /// Advance the cumulative ACK to `ack_seg` (no-op if it does not move).
    fn f2_advance(&mut self, ack_seg: u64) {
        if ack_seg > self.una {
            for _ in self.una..ack_seg {
                self.board.pop_front();
            }
            self.una = ack_seg;
            self.st.consecutive_timeouts = 0;
        }
        self.nxt = self.nxt.max(self.una);
    }

    /// `TcpAgent::newack` (`timerfix_`: the timer is set after the RTT update).
    fn f2_newack(&mut self, now: SimTime, ack_seg: u64) {
        let timed = self.rtt_active && ack_seg > self.rtt_seq;
        self.f2_advance(ack_seg);
        self.dupacks = 0;
        if timed {
            self.rtt_active = false;
            self.st.backoff = 1.0;
            self.rto.sample(self.rtt_ts.as_nanos(), now.as_nanos());
        }
        // `newtimer`: t_seqno_ > seqno always holds here, so the timer is (re)set.
        self.rto_at = Some(now + secs(self.rto_s()));
    }

    /// `FackTcpAgent::oldack`: any ACK that is not a plain new ACK. Restarts the timer
    /// (before the RTT update), ends the RTT timing if it covers the timed segment, and
    /// takes an RTT sample from the timestamp echo whatever segment it came from.
    fn f2_oldack(&mut self, now: SimTime, ack_seg: u64, echo: Option<SimTime>) {
        let timed = self.rtt_active && ack_seg > self.rtt_seq;
        self.f2_advance(ack_seg);
        self.f2.fack = self.f2.fack.max(ack_seg as i64 - 1);
        self.rto_at = Some(now + secs(self.rto_s()));
        if timed {
            self.rtt_active = false;
            self.st.backoff = 1.0;
        }
        if let Some(sent) = echo {
            self.rto.sample(sent.as_nanos(), now.as_nanos());
        }
        self.refresh(now);
        self.cc.pkts_acked(&self.st, 0);
    }

    /// Entering fast recovery: ssthresh halves, cwnd = 1 (`CLOSE_CWND_RESTART`), the
    /// first hole goes out at once, the timer restarts without backoff.
    fn f2_fast_retransmit(&mut self, now: SimTime) {
        self.stats.fast_retransmits += 1;
        self.last_loss_timeout = false;
        self.f2.recover = self.nxt as i64;
        self.refresh(now);
        self.st.ssthresh = self.cc.ssthresh(&self.st);
        self.st.cwnd = 1.0;
        // `reset_rtx_timer(1, 0)`: restart, stop the RTT timing (Karn).
        self.rto_at = Some(now + secs(self.rto_s()));
        self.rtt_active = false;
        self.karn_floor = self.karn_floor.max(self.una);
        self.f2.fastrecov = true;
        self.in_recovery = true;
        let first = self.una as i64;
        self.f2.sb.mark_retran(first, self.nxt as i64);
        self.f2.retran_data += 1;
        if self.una < self.max {
            self.transmit(now, self.una);
        }
    }

    /// `FackTcpAgent::timeout` after the engine's `slowdown` (ssthresh halves, cwnd 1)
    /// and backoff: fast recovery is *not* left, the scoreboard is cleared and sending
    /// goes back to the cumulative ACK.
    pub(crate) fn fack_ns2_timeout(&mut self, now: SimTime) {
        self.last_loss_timeout = true;
        self.rtt_active = false;
        self.karn_floor = self.max;
        self.timeout_una = Some(self.una);
        self.f2_resume_from_una(now);
    }

    /// `FackTcpAgent::timeout` with nothing outstanding (highest_ack_ == maxseq_). It
    /// happens when a retransmission was taken as lost again (`timeout_` holds sending)
    /// and the ACKs then covered everything: `oldack` left the timer running, and
    /// ns-2 (`slow_start_restart_` and `restart_bugfix_` true) restarts instead of
    /// returning: cwnd = `windowInit_` (`slowdown(CLOSE_CWND_INIT)`, ssthresh kept,
    /// at least 2), no backoff, the hold and the scoreboard are cleared, fast recovery
    /// is not left, and sending resumes from the cumulative ACK.
    pub(crate) fn fack_ns2_idle_timeout(&mut self, now: SimTime) {
        self.stats.timeouts += 1;
        self.last_loss_timeout = true;
        self.st.ssthresh = self.st.ssthresh.max(2.0);
        self.st.cwnd = self.init_window.floor();
        self.rtt_active = false;
        self.f2_resume_from_una(now);
    }

    /// What both kinds of FACK timeout end with: the timer restarted, the hold and
    /// the scoreboard cleared, and sending resumed from the cumulative ACK.
    fn f2_resume_from_una(&mut self, now: SimTime) {
        self.rto_at = Some(now + secs(self.rto_s()));
        let f = &mut self.f2;
        f.hold = false;
        f.retran_data = 0;
        f.sb.clear();
        f.fack = self.una as i64 - 1;
        self.nxt = self.una;
        self.f2_send_much(now);
    }

    /// `FackTcpAgent::send_much`: while snd_nxt ≤ fack + win − retran_data and no
    /// retransmission is known lost, send the next scoreboard hole, else the next
    /// segment (new data within `window_` of the cumulative ACK during recovery).
    pub(crate) fn f2_send_much(&mut self, now: SimTime) {
        let limit = self.total_segs();
        let wnd = self.rwnd_segs.min(self.max_window) as i64;
        let window = |cwnd: f64| (cwnd.min(wnd as f64) as i64).max(1);
        let win = window(self.st.cwnd);
        while self.nxt as i64 <= self.f2.fack + win - self.f2.retran_data && !self.f2.hold {
            let k = match self.f2.sb.next_retran() {
                None => {
                    if self.nxt >= limit {
                        return;
                    }
                    if self.f2.fastrecov && self.nxt as i64 > self.una as i64 - 1 + wnd {
                        break;
                    }
                    self.nxt += 1;
                    self.nxt - 1
                }
                Some(x) => {
                    self.f2.sb.mark_retran(x, self.nxt as i64);
                    self.f2.retran_data += 1;
                    if x < self.una as i64 {
                        // A stale entry already acknowledged: nothing left to resend.
                        continue;
                    }
                    x as u64
                }
            };
            self.transmit(now, k);
            self.nxt = self.nxt.max(k + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoreboard_follows_ns2_update_and_check_snd_nxt() {
        let mut sb = Scoreboard::default();
        // last_ack 4, SACK [6, 8): entries 5, 6, 7; 6 and 7 SACKed.
        assert_eq!(sb.update(4, &[(6, 8)]), 0);
        assert_eq!(
            sb.nodes
                .iter()
                .map(|n| (n.seq, n.sacked))
                .collect::<Vec<_>>(),
            vec![(5, false), (6, true), (7, true)]
        );
        assert_eq!(sb.next_retran(), Some(5));
        sb.mark_retran(5, 10);
        assert_eq!(sb.next_retran(), None);
        // SACK [9, 11) reaches past snd_nxt 10: the retransmission of 5 is lost again.
        assert_eq!(sb.update(4, &[(9, 11), (6, 8)]), 0);
        assert!(sb.check_snd_nxt(&[(9, 11), (6, 8)]));
        assert_eq!(sb.next_retran(), Some(5), "cleared mark: 5 is a hole again");
        sb.mark_retran(8, 11);
        // Cumulative ACK 8 removes 5..=8; the retransmitted 8 counts once.
        assert_eq!(sb.update(8, &[(9, 11)]), 1);
        assert_eq!(sb.nodes.front().map(|n| n.seq), Some(9));
        // Marks on segments not on the board are lost (ns-2's ring slot).
        sb.mark_retran(20, 21);
        assert!(sb.nodes.iter().all(|n| !n.retran));
        assert_eq!(max_sack(&[(9, 11), (2, 4)]), 10);
        assert_eq!(max_sack(&[]), -2);
    }
}
