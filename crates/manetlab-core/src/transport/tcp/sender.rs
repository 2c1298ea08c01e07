//! The TCP sender: connection setup, segmentation, the retransmission timer,
//! the SACK scoreboard and the loss-recovery algorithms. Window arithmetic is
//! delegated to a [`CongestionControl`] variant.
//!
//! Sources: RFC 9293 (segments, handshake, FIN), RFC 5681 (slow start,
//! congestion avoidance, fast retransmit/recovery), RFC 6582 (NewReno partial
//! ACKs, the `recover` guard, Slow-but-Steady timer reset), RFC 6675 (SACK
//! scoreboard, IsLost, SetPipe, NextSeg rules 1–3), Mathis & Mahdavi 1996 (FACK:
//! lost = unSACKed below the forward-most SACK, awnd = snd.nxt − snd.fack +
//! retran_data), RFC 6298 + Karn (timer, see `rto.rs`).
//!
//! Like smoltcp, nothing here reads a clock: every call takes `now`, output
//! segments are queued for the caller ([`TcpSender::take_output`]) and
//! [`TcpSender::poll_at`] says when [`TcpSender::on_timer`] must run next.
//!
//! Sequence space: the initial sequence number is 0 (deterministic; the SYN is
//! 0, data byte i is 1 + i, the FIN 1 + file size). Internally data is counted
//! in segments of `mss_bytes` (the last one may be short); headers carry bytes.
//!
//! Our choices where the RFCs leave room (docs/tcp.md):
//! * Go-back-N after a timeout, as ns-2 (`t_seqno_ = highest_ack_ + 1`); the SACK
//!   scoreboard is cleared on timeout (RFC 2018 §8).
//! * The `recover` guard (RFC 6582 §3.2 step 1 / §4) after timeouts for every
//!   variant and after fast retransmit for all but Reno (classic Reno may take a
//!   second fast retransmit in one window, as in Floyd & Fall 1996).
//! * RTO estimator fed once per RTT (one timed segment, as ns-2); every valid
//!   sample (Karn) also goes to the variant's `on_rtt_sample`.
//! * The FIN is sent once all data has been sent; the receiver answers FIN+ACK.
//! * [`Recovery::Timestamp`] (TCP-PR / MPR): every segment keeps the time it was
//!   last sent; one that stays unacknowledged longer than the variant's
//!   `loss_timeout_s` (mxrtt) is declared dropped, moved from the to-be-ack list to
//!   the to-be-sent list and resent first as the window allows (window = segments
//!   in to-be-ack). Duplicate ACKs trigger nothing. A segment declared dropped k
//!   times waits 2^k · mxrtt (k ≤ 6) before the next declaration — our backoff for
//!   outages, where TCP-PR's text gives none; mxrtt is capped at the maximum RTO.
//!   Segments sent before a drop give no RTT samples (Karn, as after a timeout):
//!   their cumulative ACK waits for the hole. The RFC 6298 timer still guards the
//!   SYN and the FIN, never data.
//! * Route-failure notices (ELFN, for variants whose `route_failure_probe_s` is
//!   Some): `RouteFailed` freezes the sender — no RTO, no pacing, no new data,
//!   cwnd/ssthresh/backoff kept — and sends a probe (the oldest unacknowledged
//!   segment, or the next new one) every probe interval. `RouteReestablished` or
//!   any ACK ends the freeze: the frozen window resumes go-back-N from the oldest
//!   unacknowledged segment (what was in flight died with the route) with the RTO
//!   restarted at its frozen value.

use super::cc::{CcState, CongestionControl, LostSegment, Recovery};
use super::config::TcpConfig;
use super::rto::{RtoEstimator, RtoParams};
use super::{unwrap_seq, Segment, TcpTrace};
use crate::packet::{TcpFlags, TcpHeader, TCP_MAX_SACK_BLOCKS};
use crate::sim::{SimDuration, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Closed,
    SynSent,
    Established,
    /// Our FIN and the peer's FIN are both acknowledged.
    Done,
}

/// Per-segment scoreboard entry for segments in [una, max).
#[derive(Clone, Copy, Debug)]
struct SegInfo {
    sent_at: SimTime,
    /// Ever retransmitted (Karn's rule).
    retx: bool,
    /// Retransmitted in the current SACK recovery episode (RFC 6675 SetPipe/NextSeg).
    rec_retx: bool,
    sacked: bool,
    /// Timestamp recovery: declared dropped, waiting in the to-be-sent list.
    lost: bool,
    /// Timestamp recovery: times declared dropped.
    drops: u32,
    /// cwnd when last transmitted (TCP-PR's cwnd(n)).
    cwnd_at_send: f64,
}

/// Counters of one sender (all in segments unless named `_bytes`).
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments transmitted, first copies and retransmissions.
    pub data_segments_sent: u64,
    pub data_bytes_sent: u64,
    /// Data segments sent for the first time (what the application handed down).
    pub new_segments_sent: u64,
    pub new_bytes_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub established_at: Option<SimTime>,
    /// When the ACK of the last byte of a finite file arrived.
    pub completed_at: Option<SimTime>,
    /// Timestamp recovery: segments declared dropped (mxrtt expired).
    pub drops_detected: u64,
    /// Rate pacing held a new segment back (TCP-AP).
    pub paced_holds: u64,
    /// ELFN: route-failure notices that froze the sender, and probes sent while frozen.
    pub route_freezes: u64,
    pub probes: u64,
}

pub struct TcpSender {
    mss: u32,
    max_window: u64,
    window_bytes: u32,
    src_port: u16,
    dst_port: u16,
    sack_offer: bool,
    cc: Box<dyn CongestionControl>,
    kind: Recovery,
    /// Window state shared with the variant.
    pub st: CcState,
    rto: RtoEstimator,
    state: SenderState,
    /// Bytes the application will hand down (None: infinite backlog).
    total_bytes: Option<u64>,
    una: u64,
    nxt: u64,
    max: u64,
    board: VecDeque<SegInfo>,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`, in segments (exclusive: the `max` at the time).
    recover: Option<u64>,
    /// Set by a timeout: the segment it retransmitted (hook on the ACK covering it).
    timeout_una: Option<u64>,
    /// The estimator takes samples only from segments >= rtt_seq (one per RTT).
    rtt_seq: u64,
    /// Segments below this were in flight across a timeout: no samples (Karn).
    karn_floor: u64,
    rto_at: Option<SimTime>,
    pace_at: Option<SimTime>,
    next_pace: SimTime,
    /// ELFN stand-by: frozen by a route-failure notice, probing at `probe_at`.
    frozen: bool,
    probe_at: Option<SimTime>,
    syn_sent_at: SimTime,
    syn_retx: bool,
    rwnd_segs: u64,
    sack_ok: bool,
    fin_sent: bool,
    fin_acked: bool,
    peer_fin: bool,
    highest_ack_bytes: u64,
    pub stats: SenderStats,
    pub trace: Option<TcpTrace>,
    out: Vec<Segment>,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, src_port: u16, dst_port: u16) -> Self {
        let kind = cc.recovery();
        let sack_offer = cfg.sack.unwrap_or(kind.needs_sack());
        let params = RtoParams { tick_s: cfg.clock_tick_s, min_s: cfg.min_rto_s, max_s: cfg.max_rto_s, initial_s: cfg.initial_rto_s };
        let mut st = CcState::new(f64::from(cfg.initial_window_pkts), cfg.mss_bytes, cfg.dupack_threshold);
        st.base_rto_s = params.initial_s;
        TcpSender {
            mss: cfg.mss_bytes,
            max_window: u64::from(cfg.window_pkts),
            window_bytes: cfg.window_pkts * cfg.mss_bytes,
            src_port,
            dst_port,
            sack_offer,
            cc,
            kind,
            st,
            rto: RtoEstimator::new(params),
            state: SenderState::Closed,
            total_bytes: None,
            una: 0,
            nxt: 0,
            max: 0,
            board: VecDeque::new(),
            dupacks: 0,
            in_recovery: false,
            recover: None,
            timeout_una: None,
            rtt_seq: 0,
            karn_floor: 0,
            rto_at: None,
            pace_at: None,
            next_pace: SimTime::ZERO,
            frozen: false,
            probe_at: None,
            syn_sent_at: SimTime::ZERO,
            syn_retx: false,
            rwnd_segs: u64::from(cfg.window_pkts),
            sack_ok: false,
            fin_sent: false,
            fin_acked: false,
            peer_fin: false,
            highest_ack_bytes: 0,
            stats: SenderStats::default(),
            trace: cfg.trace.then(TcpTrace::default),
            out: Vec::new(),
        }
    }

    // ----- accessors -------------------------------------------------------------

    pub fn variant(&self) -> &'static str {
        self.cc.name()
    }
    pub fn state(&self) -> SenderState {
        self.state
    }
    pub fn cwnd(&self) -> f64 {
        self.st.cwnd
    }
    pub fn ssthresh(&self) -> f64 {
        self.st.ssthresh
    }
    /// The RTO in force (s).
    pub fn rto_s(&self) -> f64 {
        self.rto.rto_s(self.st.backoff)
    }
    pub fn srtt_s(&self) -> Option<f64> {
        self.rto.srtt_s()
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }
    /// Oldest unacknowledged data segment.
    pub fn snd_una(&self) -> u64 {
        self.una
    }
    /// Next data segment to send.
    pub fn snd_nxt(&self) -> u64 {
        self.nxt
    }
    /// One past the highest data segment ever sent.
    pub fn snd_max(&self) -> u64 {
        self.max
    }
    /// Highest cumulative ACK seen, in data bytes.
    pub fn highest_ack_bytes(&self) -> u64 {
        self.highest_ack_bytes
    }
    /// Highest cumulative ACK seen, in whole segments.
    pub fn highest_ack_segs(&self) -> u64 {
        self.una
    }
    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// Frozen by a route-failure notice (ELFN stand-by).
    pub fn frozen(&self) -> bool {
        self.frozen
    }
    /// Path length in hops as last measured (see [`TcpSender::note_path_hops`]).
    pub fn path_hops(&self) -> Option<u32> {
        self.st.path_hops
    }
    /// The variant's current minimum gap between new segments (s), if it paces.
    pub fn pacing_gap_s(&self) -> Option<f64> {
        self.cc.pacing_gap_s(&self.st)
    }
    /// Timestamp recovery: the current drop-detection threshold (mxrtt, s).
    pub fn loss_timeout_s(&self) -> Option<f64> {
        (self.kind == Recovery::Timestamp).then(|| self.loss_threshold_s())
    }
    pub fn poll_at(&self) -> Option<SimTime> {
        [self.rto_at, self.pace_at, self.probe_at, self.loss_deadline()].into_iter().flatten().min()
    }
    /// Hops of the path to the peer (the simulator measures them from the IP TTL of
    /// arriving segments; TCP-AP's four-hop-delay estimate uses them).
    pub fn note_path_hops(&mut self, hops: u32) {
        self.st.path_hops = Some(hops.max(1));
    }
    /// Move the queued output segments into `v`.
    pub fn take_output(&mut self, v: &mut Vec<Segment>) {
        v.append(&mut self.out);
    }

    // ----- application interface ---------------------------------------------------

    /// Open the connection: send the SYN. `file_bytes`: None = infinite backlog.
    pub fn open(&mut self, now: SimTime, file_bytes: Option<u64>) {
        assert_eq!(self.state, SenderState::Closed, "open twice");
        self.total_bytes = file_bytes;
        self.state = SenderState::SynSent;
        self.syn_sent_at = now;
        self.send_syn(now);
        self.rto_at = Some(now + secs(self.rto_s()));
        self.record(now);
    }

    /// The application stops handing down data (ns-2 `ftp stop`): the file ends
    /// at the bytes already sent; the FIN follows.
    pub fn close_app(&mut self, now: SimTime) {
        let sent = self.seg_start(self.max);
        self.total_bytes = Some(self.total_bytes.map_or(sent, |t| t.min(sent)));
        if self.state == SenderState::Established {
            self.check_complete(now);
            self.send_data(now);
        }
    }

    // ----- segment arithmetic -------------------------------------------------------

    fn total_segs(&self) -> u64 {
        match self.total_bytes {
            Some(t) => t.div_ceil(u64::from(self.mss)),
            None => u64::MAX,
        }
    }
    fn seg_start(&self, k: u64) -> u64 {
        let b = k.saturating_mul(u64::from(self.mss));
        self.total_bytes.map_or(b, |t| b.min(t))
    }
    fn seg_len(&self, k: u64) -> u32 {
        (self.seg_start(k + 1) - self.seg_start(k)) as u32
    }
    /// Segments fully covered by the first `bytes` data bytes.
    fn segs_covered(&self, bytes: u64) -> u64 {
        if let Some(t) = self.total_bytes {
            if bytes >= t {
                return self.total_segs();
            }
        }
        bytes / u64::from(self.mss)
    }
    fn info(&self, k: u64) -> &SegInfo {
        &self.board[(k - self.una) as usize]
    }
    fn info_mut(&mut self, k: u64) -> &mut SegInfo {
        let i = (k - self.una) as usize;
        &mut self.board[i]
    }

    fn header(&self, seq_abs: u64, flags: TcpFlags) -> TcpHeader {
        let peer_ack = 1 + u32::from(self.peer_fin);
        TcpHeader {
            src_port: self.src_port,
            dst_port: self.dst_port,
            seq: seq_abs as u32,
            ack: if flags.ack { peer_ack } else { 0 },
            flags,
            window: self.window_bytes,
            mss: None,
            sack_permitted: false,
            sack: [(0, 0); TCP_MAX_SACK_BLOCKS],
            sack_len: 0,
        }
    }

    fn send_syn(&mut self, _now: SimTime) {
        let mut h = self.header(0, TcpFlags { syn: true, ..TcpFlags::default() });
        h.mss = Some(self.mss.min(u32::from(u16::MAX)) as u16);
        h.sack_permitted = self.sack_offer;
        self.out.push(Segment { hdr: h, payload_bytes: 0, data_seg: None, retransmission: false });
    }

    fn send_ack_only(&mut self) {
        let h = self.header(1 + self.seg_start(self.nxt.max(self.una)) + u64::from(self.fin_sent), ack_flags());
        self.out.push(Segment { hdr: h, payload_bytes: 0, data_seg: None, retransmission: false });
    }

    /// Transmit data segment `k` (new if k == max).
    fn transmit(&mut self, now: SimTime, k: u64) {
        debug_assert!(k <= self.max && k >= self.una);
        let len = self.seg_len(k);
        let retx = k < self.max;
        let cwnd = self.st.cwnd;
        if retx {
            let i = self.info_mut(k);
            i.retx = true;
            i.sent_at = now;
            i.lost = false;
            i.cwnd_at_send = cwnd;
            self.stats.retransmissions += 1;
        } else {
            self.board.push_back(SegInfo { sent_at: now, retx: false, rec_retx: false, sacked: false, lost: false, drops: 0, cwnd_at_send: cwnd });
            self.max += 1;
            self.stats.new_segments_sent += 1;
            self.stats.new_bytes_sent += u64::from(len);
        }
        self.stats.data_segments_sent += 1;
        self.stats.data_bytes_sent += u64::from(len);
        let h = self.header(1 + self.seg_start(k), ack_flags());
        self.out.push(Segment { hdr: h, payload_bytes: len, data_seg: Some(k), retransmission: retx });
        if self.rto_at.is_none() && self.data_timer() {
            self.rto_at = Some(now + secs(self.rto_s()));
        }
    }

    fn send_fin(&mut self, now: SimTime) {
        let seq = 1 + self.total_bytes.expect("FIN only with a finite file");
        let mut flags = ack_flags();
        flags.fin = true;
        let h = self.header(seq, flags);
        self.out.push(Segment { hdr: h, payload_bytes: 0, data_seg: None, retransmission: self.fin_sent });
        self.fin_sent = true;
        if self.rto_at.is_none() && !self.frozen {
            self.rto_at = Some(now + secs(self.rto_s()));
        }
    }

    fn restart_rto(&mut self, now: SimTime) {
        let outstanding = (self.una < self.max && self.data_timer()) || (self.fin_sent && !self.fin_acked && !self.frozen);
        self.rto_at = outstanding.then(|| now + secs(self.rto_s()));
    }

    /// Whether the RFC 6298 timer guards data: not while frozen (ELFN) and never
    /// with timestamp drop detection.
    fn data_timer(&self) -> bool {
        !self.frozen && self.kind != Recovery::Timestamp
    }

    fn refresh(&mut self, now: SimTime) {
        self.st.now = now;
        self.st.flight = self.max - self.una;
        self.st.snd_una = self.una;
        self.st.dupacks = self.dupacks;
        self.st.snd_max = self.max;
        self.st.srtt_s = self.rto.srtt_s();
        self.st.rttvar_s = self.rto.rttvar_s();
        self.st.base_rto_s = self.rto.base_s();
        self.st.una_sent_at = (self.una < self.max).then(|| self.info(self.una).sent_at);
    }

    // ----- the send loop ------------------------------------------------------------------

    /// Usable window in segments: min(cwnd, advertised window, window_pkts), at least 1.
    fn window(&self) -> u64 {
        (self.st.cwnd.floor().max(1.0) as u64).min(self.rwnd_segs).min(self.max_window).max(1)
    }

    fn may_send_new(&mut self, now: SimTime) -> bool {
        match self.cc.pacing_gap_s(&self.st) {
            None => true,
            Some(gap) => {
                if now < self.next_pace {
                    self.pace_at = Some(self.next_pace);
                    self.stats.paced_holds += 1;
                    false
                } else {
                    self.next_pace = now + secs(gap);
                    self.pace_at = None;
                    true
                }
            }
        }
    }

    fn send_data(&mut self, now: SimTime) {
        if self.state != SenderState::Established {
            return;
        }
        if self.frozen {
            return; // ELFN stand-by: only probes go out
        }
        let limit = self.total_segs();
        if self.kind == Recovery::Timestamp {
            self.send_by_timestamp(now, limit);
        } else if self.in_recovery && self.kind.needs_sack() {
            self.send_by_pipe(now, limit);
        } else {
            let win = self.window();
            while self.nxt < limit && self.nxt < self.una + win {
                let k = self.nxt;
                if k == self.max && !self.may_send_new(now) {
                    break;
                }
                self.transmit(now, k);
                self.nxt += 1;
            }
        }
        if self.total_bytes.is_some() && self.nxt >= limit && !self.fin_sent {
            self.send_fin(now);
        }
    }

    /// RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 segment, send NextSeg().
    fn send_by_pipe(&mut self, now: SimTime, limit: u64) {
        let lost = self.lost_marks();
        let mut pipe = self.pipe(&lost);
        while self.st.cwnd - pipe as f64 >= 1.0 {
            let Some(k) = self.next_seg(&lost, limit) else { break };
            if k == self.max && !self.may_send_new(now) {
                break;
            }
            if k < self.max {
                self.info_mut(k).rec_retx = true;
            }
            self.transmit(now, k);
            self.nxt = self.nxt.max(k + 1);
            pipe += 1;
        }
    }

    /// Timestamp recovery: while fewer than the window are in the to-be-ack list,
    /// send the oldest segment of the to-be-sent list (drops first, then new data).
    fn send_by_timestamp(&mut self, now: SimTime, limit: u64) {
        let win = self.window();
        let mut to_be_ack = self.board.iter().filter(|i| !i.lost).count() as u64;
        while to_be_ack < win {
            let k = if let Some(i) = self.board.iter().position(|i| i.lost) {
                self.una + i as u64
            } else if self.max < limit && self.max < self.una + self.rwnd_segs.min(self.max_window) {
                if !self.may_send_new(now) {
                    break;
                }
                self.max
            } else {
                break;
            };
            self.transmit(now, k);
            self.nxt = self.nxt.max(k + 1);
            to_be_ack += 1;
        }
    }

    /// Timestamp recovery: mxrtt (at most the maximum RTO), or the RTO before
    /// backoff while there is no estimate.
    fn loss_threshold_s(&self) -> f64 {
        self.cc.loss_timeout_s(&self.st).map_or(self.rto.base_s(), |m| m.min(self.rto.params.max_s))
    }

    /// Timestamp recovery: when the next segment of the to-be-ack list expires.
    fn loss_deadline(&self) -> Option<SimTime> {
        if self.kind != Recovery::Timestamp || self.state != SenderState::Established || self.frozen {
            return None;
        }
        let thr = self.loss_threshold_s();
        self.board.iter().filter(|i| !i.lost).map(|i| i.sent_at + secs(thr * backoff_factor(i.drops))).min()
    }

    /// Timestamp recovery: declare every expired segment dropped (oldest first),
    /// telling the variant each time, then refill the window.
    fn detect_losses(&mut self, now: SimTime) {
        let thr = self.loss_threshold_s();
        for idx in 0..self.board.len() {
            let i = self.board[idx];
            if i.lost || i.sent_at + secs(thr * backoff_factor(i.drops)) > now {
                continue;
            }
            self.board[idx].lost = true;
            self.board[idx].drops += 1;
            // Karn across a drop, as across a timeout: segments sent so far may be
            // acknowledged only once the hole fills, so their ACKs time the hole.
            self.karn_floor = self.max;
            self.rtt_seq = self.max;
            self.stats.drops_detected += 1;
            if i.drops > 0 {
                self.stats.timeouts += 1; // a retransmission was lost too
            }
            let to_be_ack = self.board.iter().enumerate().filter(|(_, j)| !j.lost).map(|(n, _)| self.una + n as u64).collect();
            let lost = LostSegment { seg: self.una + idx as u64, cwnd_when_sent: i.cwnd_at_send, earlier_drops: i.drops, to_be_ack };
            self.refresh(now);
            self.cc.on_segment_lost(&mut self.st, &lost);
        }
        self.send_data(now);
    }

    /// IsLost for every segment in [una, max): RFC 6675 (DupThresh SACKed segments
    /// above) or FACK (below the forward-most SACKed segment).
    fn lost_marks(&self) -> Vec<bool> {
        let n = self.board.len();
        let mut lost = vec![false; n];
        match self.kind {
            Recovery::Fack => {
                if let Some(top) = self.board.iter().rposition(|i| i.sacked) {
                    for (i, l) in lost.iter_mut().enumerate().take(top) {
                        *l = !self.board[i].sacked;
                    }
                }
            }
            _ => {
                let mut above = 0u32;
                for i in (0..n).rev() {
                    lost[i] = !self.board[i].sacked && above >= self.st.dupthresh;
                    if self.board[i].sacked {
                        above += 1;
                    }
                }
            }
        }
        lost
    }

    /// RFC 6675 SetPipe (for FACK this equals awnd = snd.nxt − fack + retran_data).
    fn pipe(&self, lost: &[bool]) -> u64 {
        self.board
            .iter()
            .zip(lost)
            .map(|(i, &l)| if i.sacked { 0 } else { u64::from(!l) + u64::from(i.rec_retx) })
            .sum()
    }

    /// RFC 6675 NextSeg rules 1–3.
    fn next_seg(&self, lost: &[bool], limit: u64) -> Option<u64> {
        let first_lost = self.board.iter().zip(lost).position(|(i, &l)| l && !i.sacked && !i.rec_retx);
        if let Some(i) = first_lost {
            return Some(self.una + i as u64);
        }
        if self.max < limit && self.max < self.una + self.rwnd_segs.min(self.max_window) {
            return Some(self.max);
        }
        let top = self.board.iter().rposition(|i| i.sacked)?;
        self.board.iter().take(top).position(|i| !i.sacked && !i.rec_retx).map(|i| self.una + i as u64)
    }

    // ----- input -------------------------------------------------------------------------

    /// A segment from the receiver arrived.
    pub fn on_segment(&mut self, now: SimTime, h: &TcpHeader, _payload_bytes: u32) {
        match self.state {
            SenderState::Closed | SenderState::Done => {}
            SenderState::SynSent => {
                if h.flags.syn && h.flags.ack && h.ack == 1 {
                    self.state = SenderState::Established;
                    self.stats.established_at = Some(now);
                    self.sack_ok = self.sack_offer && h.sack_permitted;
                    self.rwnd_segs = (u64::from(h.window) / u64::from(self.mss)).max(1);
                    if !self.syn_retx {
                        // Karn: only an unretransmitted SYN gives a sample.
                        let r = now.since(self.syn_sent_at).as_secs_f64();
                        self.rto.sample(r);
                        self.refresh(now);
                        self.cc.on_rtt_sample(&self.st, r);
                    }
                    self.st.backoff = 1.0;
                    self.st.consecutive_timeouts = 0;
                    self.rto_at = None;
                    self.send_ack_only();
                    self.check_complete(now);
                    self.send_data(now);
                }
            }
            SenderState::Established => {
                if h.flags.syn {
                    // Our handshake ACK was lost and the SYN-ACK retransmitted.
                    self.send_ack_only();
                    return;
                }
                if h.flags.ack {
                    if self.frozen {
                        self.thaw(); // ELFN: an ACK means the path works again
                    }
                    self.on_ack(now, h);
                }
                if h.flags.fin {
                    self.peer_fin = true;
                    self.send_ack_only();
                    if self.fin_acked {
                        self.state = SenderState::Done;
                        self.rto_at = None;
                    }
                }
            }
        }
        self.record(now);
    }

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader) {
        let reference = 1 + self.seg_start(self.una);
        let ack_abs = unwrap_seq(h.ack, reference);
        let ack_bytes = ack_abs.saturating_sub(1);
        self.rwnd_segs = (u64::from(h.window) / u64::from(self.mss)).max(1);
        if self.sack_ok {
            for &(l, r) in h.sack_blocks() {
                let lo = unwrap_seq(l, reference).saturating_sub(1);
                let hi = unwrap_seq(r, reference).saturating_sub(1);
                let first = lo.div_ceil(u64::from(self.mss)).max(self.una);
                let last = self.segs_covered(hi).min(self.max);
                for k in first..last {
                    self.info_mut(k).sacked = true;
                }
            }
        }
        if let Some(t) = self.total_bytes {
            if self.fin_sent && ack_bytes > t {
                self.fin_acked = true;
            }
        }
        let ack_seg = self.segs_covered(ack_bytes.min(self.seg_start(self.max))).min(self.max);
        self.highest_ack_bytes = self.highest_ack_bytes.max(ack_bytes.min(self.seg_start(self.max)));
        if ack_seg > self.una {
            self.on_new_ack(now, ack_seg);
        } else if ack_seg == self.una && self.una < self.max {
            self.on_dup_ack(now);
        } else if self.fin_acked {
            self.restart_rto(now);
        }
        if self.fin_acked && self.peer_fin {
            self.state = SenderState::Done;
            self.rto_at = None;
        }
    }

    fn on_new_ack(&mut self, now: SimTime, ack_seg: u64) {
        let newly = ack_seg - self.una;
        let last = ack_seg - 1;
        let last_info = *self.info(last);
        // RTT sample from the newest segment this ACK covers, if it was sent once and
        // after the last timeout (Karn).
        let sample = (!last_info.retx && last >= self.karn_floor).then(|| now.since(last_info.sent_at).as_secs_f64());
        if let Some(r) = sample {
            if last >= self.rtt_seq {
                self.rto.sample(r);
                self.rtt_seq = self.max;
                self.st.backoff = 1.0; // ns-2: a valid sample ends the backoff
            }
        }
        for _ in 0..newly {
            self.board.pop_front();
        }
        self.una = ack_seg;
        self.nxt = self.nxt.max(self.una);
        self.dupacks = 0;
        self.st.consecutive_timeouts = 0;
        self.refresh(now);
        if let Some(r) = sample {
            self.cc.on_rtt_sample(&self.st, r);
        }
        self.cc.pkts_acked(&self.st, newly);

        if self.in_recovery {
            let full = self.recover.map_or(true, |r| ack_seg >= r);
            match self.kind {
                Recovery::Reno => self.exit_recovery(),
                _ if full => self.exit_recovery(),
                Recovery::NewReno => {
                    // RFC 6582 §3.2 step 5: retransmit the first unacked segment, deflate
                    // by the amount acked, add back one segment; Slow-but-Steady resets
                    // the timer on every partial ACK (§4).
                    self.transmit(now, self.una);
                    self.nxt = self.nxt.max(self.una + 1);
                    self.st.cwnd = (self.st.cwnd - newly as f64 + 1.0).max(1.0);
                    self.rto_at = Some(now + secs(self.rto_s()));
                }
                Recovery::Sack | Recovery::Fack => {
                    // RFC 6675 §5 step (C): partial ACKs keep recovery; the pipe decides.
                }
                Recovery::Tahoe | Recovery::Timestamp => unreachable!("no recovery phase"),
            }
        } else {
            self.cc.cong_avoid(&mut self.st, newly);
        }
        if let Some(tu) = self.timeout_una {
            if ack_seg > tu {
                self.timeout_una = None;
                self.cc.on_ack_after_timeout(&mut self.st);
            }
        }
        if self.una < self.max && self.cc.retransmit_on_new_ack(&self.st) {
            self.transmit(now, self.una);
            self.nxt = self.nxt.max(self.una + 1);
        }
        if !self.in_recovery || self.kind != Recovery::NewReno {
            self.restart_rto(now);
        }
        self.check_complete(now);
        self.send_data(now);
    }

    fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.cc.exit_recovery(&mut self.st);
        for i in self.board.iter_mut() {
            i.rec_retx = false;
        }
    }

    fn on_dup_ack(&mut self, now: SimTime) {
        self.dupacks += 1;
        self.refresh(now);
        self.cc.pkts_acked(&self.st, 0);
        if self.kind == Recovery::Timestamp {
            // MPR / TCP-PR: duplicate ACKs are no loss signal; drops are detected by timers.
            self.send_data(now);
            return;
        }
        if self.in_recovery {
            match self.kind {
                // RFC 5681 §3.2 step 5: inflate by one segment per further dup ACK.
                Recovery::Reno | Recovery::NewReno => self.st.cwnd += 1.0,
                _ => {}
            }
            self.send_data(now);
            return;
        }
        let guard_ok = self.recover.map_or(true, |r| self.una >= r);
        let fack_trigger = self.kind == Recovery::Fack && {
            let top = self.board.iter().rposition(|i| i.sacked).map_or(0, |t| t as u64 + 1);
            top > u64::from(self.st.dupthresh)
        };
        let trigger = self.cc.on_dup_ack(&self.st, self.dupacks) || fack_trigger;
        if trigger && guard_ok {
            self.fast_retransmit(now);
        } else {
            self.send_data(now);
        }
    }

    fn fast_retransmit(&mut self, now: SimTime) {
        self.stats.fast_retransmits += 1;
        self.cc.enter_recovery(&mut self.st, self.kind);
        if self.kind != Recovery::Reno {
            self.recover = Some(self.max);
        }
        self.karn_floor = self.karn_floor.max(self.una);
        match self.kind {
            Recovery::Tahoe => {
                // Slow start from one segment, go-back-N.
                self.nxt = self.una;
            }
            Recovery::Reno | Recovery::NewReno => {
                self.in_recovery = true;
                self.transmit(now, self.una);
            }
            Recovery::Timestamp => unreachable!("timestamp recovery ignores duplicate ACKs"),
            Recovery::Sack | Recovery::Fack => {
                self.in_recovery = true;
                for i in self.board.iter_mut() {
                    i.rec_retx = false;
                }
                self.info_mut(self.una).rec_retx = true;
                self.transmit(now, self.una);
            }
        }
        self.nxt = self.nxt.max(if self.kind == Recovery::Tahoe { self.una } else { self.una + 1 });
        self.rto_at = Some(now + secs(self.rto_s()));
        self.send_data(now);
    }

    // ----- timers ---------------------------------------------------------------------------

    /// Run whatever timer is due at `now`.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.pace_at.is_some_and(|t| t <= now) {
            self.pace_at = None;
            self.send_data(now);
        }
        if self.probe_at.is_some_and(|t| t <= now) {
            self.send_probe(now);
        }
        if self.loss_deadline().is_some_and(|t| t <= now) {
            self.detect_losses(now);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto(now);
        }
        self.record(now);
    }

    fn on_rto(&mut self, now: SimTime) {
        let data_out = self.una < self.max && self.kind != Recovery::Timestamp;
        let fin_out = self.fin_sent && !self.fin_acked;
        let live = match self.state {
            SenderState::SynSent => true,
            SenderState::Established => data_out || fin_out,
            _ => false,
        };
        if !live {
            return;
        }
        self.stats.timeouts += 1;
        self.st.consecutive_timeouts += 1;
        self.refresh(now);
        match self.state {
            SenderState::SynSent => {
                self.cc.backoff_rto(&mut self.st);
                self.syn_retx = true;
                self.send_syn(now);
                self.rto_at = Some(now + secs(self.rto_s()));
                return;
            }
            SenderState::Established => {}
            _ => return,
        }
        self.cc.on_timeout(&mut self.st);
        self.cc.backoff_rto(&mut self.st);
        self.in_recovery = false;
        self.dupacks = 0;
        if data_out {
            self.recover = Some(self.max);
            self.timeout_una = Some(self.una);
            self.karn_floor = self.max;
            self.rtt_seq = self.max;
            for i in self.board.iter_mut() {
                i.sacked = false; // RFC 2018 §8: forget SACK state after a timeout
                i.rec_retx = false;
            }
            self.nxt = self.una; // go-back-N
            self.send_data(now);
        } else {
            self.send_fin(now);
        }
        self.rto_at = Some(now + secs(self.rto_s()));
    }

    // ----- route-failure notices (ELFN) ------------------------------------------------------

    /// The network layer reports that the route to the peer failed (`up = false`) or
    /// is back (`up = true`). Ignored unless the variant uses ELFN, and before the
    /// connection is established.
    pub fn on_route_notice(&mut self, now: SimTime, up: bool) {
        if self.cc.route_failure_probe_s().is_none() || self.state != SenderState::Established {
            return;
        }
        if !up && !self.frozen {
            self.frozen = true;
            self.stats.route_freezes += 1;
            self.rto_at = None;
            self.pace_at = None;
            self.probe_at = Some(now + secs(self.probe_interval_s()));
        } else if up && self.frozen {
            self.thaw();
            self.restart_rto(now);
            self.send_data(now);
        }
        self.record(now);
    }

    fn probe_interval_s(&self) -> f64 {
        self.cc.route_failure_probe_s().unwrap_or(2.0)
    }

    /// ELFN stand-by: send the probe and re-arm the probe timer.
    fn send_probe(&mut self, now: SimTime) {
        self.probe_at = Some(now + secs(self.probe_interval_s()));
        if self.una < self.max {
            self.transmit(now, self.una);
        } else if self.max < self.total_segs() {
            let k = self.max;
            self.transmit(now, k);
            self.nxt = self.nxt.max(k + 1);
        } else {
            return;
        }
        self.stats.probes += 1;
    }

    /// Leave stand-by with the frozen cwnd/ssthresh/backoff: go back to the oldest
    /// unacknowledged segment (what was in flight was lost with the route), with the
    /// `recover` guard set as after a timeout; no RTT samples from segments sent
    /// before (Karn).
    fn thaw(&mut self) {
        self.frozen = false;
        self.probe_at = None;
        self.nxt = self.una;
        // As after a timeout (RFC 6582 §4): duplicate ACKs caused by resending
        // segments the receiver already holds must not start a fast retransmit.
        self.in_recovery = false;
        self.recover = Some(self.max);
        self.karn_floor = self.max;
        self.rtt_seq = self.max;
        self.dupacks = 0;
        for i in self.board.iter_mut() {
            i.lost = self.kind == Recovery::Timestamp;
        }
    }

    fn check_complete(&mut self, now: SimTime) {
        if let Some(t) = self.total_bytes {
            if self.stats.completed_at.is_none() && self.seg_start(self.una) >= t && self.una >= self.total_segs() {
                self.stats.completed_at = Some(now);
            }
        }
    }

    fn record(&mut self, now: SimTime) {
        if let Some(tr) = self.trace.as_mut() {
            tr.t_s.push(now.as_secs_f64());
            tr.cwnd_segs.push(self.st.cwnd);
            tr.ssthresh_segs.push(self.st.ssthresh.min(f64::from(u32::MAX)));
            tr.rto_s.push(self.rto.rto_s(self.st.backoff));
            tr.srtt_s.push(self.rto.srtt_s());
            tr.seq_segs.push(self.max);
            tr.ack_segs.push(self.una);
        }
    }
}

fn ack_flags() -> TcpFlags {
    TcpFlags { ack: true, ..TcpFlags::default() }
}

/// 2^drops, at most 64: the wait before a segment is declared dropped again.
fn backoff_factor(drops: u32) -> f64 {
    f64::from(1u32 << drops.min(6))
}

fn secs(s: f64) -> SimDuration {
    SimDuration::from_secs_f64(s)
}
