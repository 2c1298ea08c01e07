//! The TCP sender: connection setup, segmentation, the retransmission timer, RTT
//! timing and the SACK scoreboard. Loss recovery is delegated to the scheme the
//! variant names (`recovery/`, one file per scheme: what duplicate and partial ACKs
//! do, how recovery starts and ends, the send loop in recovery); window arithmetic to
//! the [`CongestionControl`] variant. The scheme's episode state (`in_recovery`,
//! `dupacks`, `dupwnd`, `recover`, Sack1's pipe, ns-2 FACK's scoreboard) is kept here.
//!
//! Sources: RFC 9293 (segments, handshake, FIN), RFC 5681 (slow start,
//! congestion avoidance, fast retransmit), RFC 6582 (the `recover` guard), RFC 6298
//! + Karn (timer, see `rto.rs`); the schemes cite their own.
//!
//! Like smoltcp, nothing here reads a clock: every call takes `now`, output
//! segments are queued for the caller ([`TcpSender::take_output`]) and
//! [`TcpSender::poll_at`] says when [`TcpSender::on_timer`] must run next.
//!
//! Sequence space: the initial sequence number is 0 (deterministic; the SYN is
//! 0, data byte i is 1 + i, the FIN 1 + file size). Internally data is counted
//! in segments of `mss_bytes` (the last one may be short); headers carry bytes.
//!
//! The default is ns-2.35's one-way `Agent/TCP` family (`tcp.cc`, `tcp-reno.cc`,
//! `tcp-newreno.cc`, `tcp-sack1.cc`; docs/tcp.md has the parameter table):
//! * Connection: a 40-byte SYN-like first packet (ns-2 `syn_`), acknowledged by a
//!   plain ACK; cwnd = 1 until then and `windowInit_` after (`delay_growth_`); a
//!   lost SYN makes the initial window 1 and ssthresh 2 (ns-2 `bugfix_ss_` and
//!   `slowdown`). No FIN. `handshake = true` gives the RFC 9293 three-way
//!   handshake (with MSS/SACK-permitted options) and FIN exchange instead.
//! * Window = min(⌊cwnd⌋ + dupwnd, `window_pkts`, advertised window); dupwnd is
//!   Reno/NewReno's fast-recovery inflation (ns-2 `dupwnd_`), kept apart from cwnd.
//! * cwnd grows once per new ACK (`opencwnd`, see cc.rs); ssthresh = ⌊min(cwnd,
//!   window)/2⌋ ≥ 2 on every fast retransmit and every timeout.
//! * The `recover` guard (ns-2 `bugFix_`, RFC 6582 §3.2 step 1) for every variant:
//!   a fast retransmit needs the cumulative ACK strictly above `recover` (the highest
//!   segment sent at the last fast retransmit or timeout), or no data acknowledged yet.
//! * Limited transmit (ns-2 `singledup_` = 1): the first and second duplicate ACKs
//!   each send one new segment if it fits in cwnd + dupacks (`send_one`).
//! * RTT timing as ns-2 (`rtt_active_`, `rtt_seq_`, `rtt_ts_`): one new segment is
//!   timed at a time; a fast retransmit or timeout cancels the timing (Karn), and a
//!   valid sample clears the backoff. Variants get every Karn-valid sample too.
//! * Fast retransmit, partial ACKs, the end of recovery and the send loop during it
//!   are the recovery scheme's (`recovery/`: Tahoe, Reno, NewReno, Sack1, FACK,
//!   ns-2 FACK, ns-2 Vegas, timestamps); the sender runs the scheme's hooks.
//! * Go-back-N after a timeout (`t_seqno_ = highest_ack_ + 1`); the SACK
//!   scoreboard is cleared on timeout (RFC 2018 §8, ns-2 Sack1).
//! * Timestamp loss detection (TCP-PR / MPR, `recovery/timestamp.rs`): per-segment
//!   timers ([`TcpSender::poll_at`] includes the scheme's `loss_deadline`); the RFC
//!   6298 timer still guards the SYN and the FIN, never data.
//! * Route-failure notices (ELFN, for variants whose `route_failure_probe_s` is
//!   Some): `RouteFailed` freezes the sender — no RTO, no pacing, no new data,
//!   cwnd/ssthresh/backoff kept — and sends a probe (the oldest unacknowledged
//!   segment, or the next new one) every probe interval. `RouteReestablished` or
//!   the ACK of a probe ends the freeze (Holland & Vaidya; other ACKs are
//!   processed but leave the sender frozen): the frozen window resumes go-back-N
//!   from the oldest unacknowledged segment (what was in flight died with the
//!   route) with the RTO restarted at its frozen value.

use super::cc::{CcState, CongestionControl, EngineOptions};
use super::config::TcpConfig;
use super::recovery::fack_ns2::FackNs2State;
use super::recovery::{self, timestamp, LossRecovery};
use super::rto::{RtoEstimator, RtoParams};
use super::{unwrap_seq, Segment, TcpTrace};
use crate::sim::{SimDuration, SimTime};
use crate::wire::{TcpFlags, TcpHeader};
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
pub(crate) struct SegInfo {
    pub(crate) sent_at: SimTime,
    /// Ever retransmitted (Karn's rule).
    pub(crate) retx: bool,
    /// Retransmitted in the current SACK recovery episode (RFC 6675 SetPipe/NextSeg).
    pub(crate) rec_retx: bool,
    pub(crate) sacked: bool,
    /// Timestamp recovery: declared dropped, waiting in the to-be-sent list.
    pub(crate) lost: bool,
    /// Timestamp recovery: times declared dropped.
    pub(crate) drops: u32,
    /// cwnd when last transmitted (TCP-PR's cwnd(n)).
    pub(crate) cwnd_at_send: f64,
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
    pub(crate) mss: u32,
    pub(crate) max_window: u64,
    pub(crate) window_bytes: u32,
    pub(crate) src_port: u16,
    pub(crate) dst_port: u16,
    pub(crate) sack_offer: bool,
    pub(crate) cc: Box<dyn CongestionControl>,
    /// The variant's [`EngineOptions`], read once.
    pub(crate) opts: EngineOptions,
    /// The loss-recovery scheme the variant names (`recovery/`).
    pub(crate) rec: &'static dyn LossRecovery,
    /// Window state shared with the variant.
    pub st: CcState,
    pub(crate) rto: RtoEstimator,
    pub(crate) state: SenderState,
    /// Bytes the application will hand down (None: infinite backlog).
    pub(crate) total_bytes: Option<u64>,
    pub(crate) una: u64,
    pub(crate) nxt: u64,
    pub(crate) max: u64,
    pub(crate) board: VecDeque<SegInfo>,
    pub(crate) dupacks: u32,
    pub(crate) in_recovery: bool,
    /// Reno/NewReno fast-recovery inflation, segments (ns-2 `dupwnd_`).
    pub(crate) dupwnd: u32,
    /// NewReno: a partial ACK of this recovery already restarted the timer.
    pub(crate) first_partial: bool,
    /// ns-2 `Agent/TCP/Fack` state (the `fack_ns2` scheme only).
    pub(crate) f2: FackNs2State,
    /// Sack1's pipe counter during recovery (ns-2 `pipe_`).
    pub(crate) sack1_pipe: i64,
    /// ns-2 `recover_` in our numbering: `max` at the last fast retransmit/timeout.
    pub(crate) recover: Option<u64>,
    /// Set by a timeout: the segment it retransmitted (hook on the ACK covering it).
    pub(crate) timeout_una: Option<u64>,
    /// ns-2 RTT timing: a segment is being timed (`rtt_active_`), which (`rtt_seq_`) and
    /// since when (`rtt_ts_`).
    pub(crate) rtt_active: bool,
    pub(crate) rtt_seq: u64,
    pub(crate) rtt_ts: SimTime,
    /// Segments below this were in flight across a loss: no samples for the variant (Karn).
    pub(crate) karn_floor: u64,
    /// ns-2 one-way agent (default) rather than the full handshake/FIN.
    pub(crate) one_way: bool,
    /// Initial window after the SYN is acknowledged (ns-2 `wnd_init_`; 1 after a lost SYN).
    pub(crate) init_window: f64,
    /// ELFN: the segment sent as the last probe while frozen.
    pub(crate) probe_seg: Option<u64>,
    /// The last loss response was a timeout (ns-2 `last_cwnd_action_ == CWND_ACTION_TIMEOUT`).
    pub(crate) last_loss_timeout: bool,
    /// The in-recovery flag was just cleared by this ACK (Sack1 does not open cwnd then).
    pub(crate) last_exit_was_now: bool,
    pub(crate) rto_at: Option<SimTime>,
    pub(crate) pace_at: Option<SimTime>,
    pub(crate) next_pace: SimTime,
    /// ELFN stand-by: frozen by a route-failure notice, probing at `probe_at`.
    pub(crate) frozen: bool,
    pub(crate) probe_at: Option<SimTime>,
    pub(crate) syn_sent_at: SimTime,
    pub(crate) syn_retx: bool,
    pub(crate) rwnd_segs: u64,
    pub(crate) sack_ok: bool,
    pub(crate) fin_sent: bool,
    pub(crate) fin_acked: bool,
    pub(crate) peer_fin: bool,
    pub(crate) highest_ack_bytes: u64,
    pub stats: SenderStats,
    pub trace: Option<TcpTrace>,
    pub(crate) out: Vec<Segment>,
}

impl TcpSender {
    pub fn new(
        cfg: &TcpConfig,
        cc: Box<dyn CongestionControl>,
        src_port: u16,
        dst_port: u16,
    ) -> Self {
        let rec = recovery::scheme(cc.recovery());
        let opts = cc.engine_options();
        let sack_offer = cfg.sack.unwrap_or(rec.needs_sack());
        let params = RtoParams {
            tick_s: cfg.clock_tick_s,
            min_s: cfg.min_rto_s,
            max_s: cfg.max_rto_s,
            initial_s: cfg.initial_rto_s,
        };
        let one_way = !cfg.handshake;
        // ns-2 `delay_growth_`: cwnd is 1 until the SYN is acknowledged.
        let cwnd0 = if one_way {
            1.0
        } else {
            f64::from(cfg.initial_window_pkts)
        };
        let mut st = CcState::new(
            cwnd0,
            cfg.mss_bytes,
            cfg.dupack_threshold,
            f64::from(cfg.window_pkts),
        );
        st.base_rto_s = params.initial_s;
        TcpSender {
            mss: cfg.mss_bytes,
            max_window: u64::from(cfg.window_pkts),
            window_bytes: cfg.window_pkts * cfg.mss_bytes,
            src_port,
            dst_port,
            sack_offer,
            cc,
            opts,
            rec,
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
            dupwnd: 0,
            first_partial: false,
            f2: FackNs2State::default(),
            sack1_pipe: 0,
            recover: None,
            timeout_una: None,
            rtt_active: false,
            rtt_seq: 0,
            rtt_ts: SimTime::ZERO,
            karn_floor: 0,
            one_way,
            init_window: f64::from(cfg.initial_window_pkts),
            probe_seg: None,
            last_exit_was_now: false,
            last_loss_timeout: false,
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
        self.rec
            .detects_losses_by_timer()
            .then(|| timestamp::loss_threshold_s(self))
    }
    pub fn poll_at(&self) -> Option<SimTime> {
        [
            self.rto_at,
            self.pace_at,
            self.probe_at,
            self.loss_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }
    /// Hops of the path to the peer (the simulator measures them from the IP TTL of
    /// arriving segments; TCP-AP's four-hop-delay estimate uses them).
    pub fn note_path_hops(&mut self, hops: u32) {
        self.st.path_hops = Some(hops.max(1));
    }
    /// Phase of the sender's RTT clock in seconds (ns-2 `boot_time_`, uniform in one
    /// tick per agent); the simulator draws it from the flow's transport stream.
    pub fn set_clock_phase_s(&mut self, phase_s: f64) {
        self.rto.set_phase_s(phase_s);
    }
    /// Whether this sender uses SACK if the receiver does (offered / configured).
    pub fn sack_offered(&self) -> bool {
        self.sack_offer
    }
    /// ns-2 one-way agent (no handshake options, no FIN).
    pub fn one_way(&self) -> bool {
        self.one_way
    }
    /// Fast-recovery inflation (segments).
    pub fn dupwnd(&self) -> u32 {
        self.dupwnd
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

    pub(crate) fn total_segs(&self) -> u64 {
        match self.total_bytes {
            Some(t) => t.div_ceil(u64::from(self.mss)),
            None => u64::MAX,
        }
    }
    pub(crate) fn seg_start(&self, k: u64) -> u64 {
        let b = k.saturating_mul(u64::from(self.mss));
        self.total_bytes.map_or(b, |t| b.min(t))
    }
    pub(crate) fn seg_len(&self, k: u64) -> u32 {
        (self.seg_start(k + 1) - self.seg_start(k)) as u32
    }
    /// Segments fully covered by the first `bytes` data bytes.
    pub(crate) fn segs_covered(&self, bytes: u64) -> u64 {
        if let Some(t) = self.total_bytes {
            if bytes >= t {
                return self.total_segs();
            }
        }
        bytes / u64::from(self.mss)
    }
    pub(crate) fn info(&self, k: u64) -> &SegInfo {
        &self.board[(k - self.una) as usize]
    }
    pub(crate) fn info_mut(&mut self, k: u64) -> &mut SegInfo {
        let i = (k - self.una) as usize;
        &mut self.board[i]
    }

    pub(crate) fn header(&self, seq_abs: u64, flags: TcpFlags) -> TcpHeader {
        let peer_ack = 1 + u32::from(self.peer_fin);
        TcpHeader::new(
            self.src_port,
            self.dst_port,
            seq_abs as u32,
            if flags.ack { peer_ack } else { 0 },
            flags,
            self.window_bytes,
        )
    }

    pub(crate) fn send_syn(&mut self, _now: SimTime) {
        let mut h = self.header(
            0,
            TcpFlags {
                syn: true,
                ..TcpFlags::default()
            },
        );
        if !self.one_way {
            h.mss = Some(self.mss.min(u32::from(u16::MAX)) as u16);
            h.sack_permitted = self.sack_offer;
        }
        self.out.push(Segment {
            hdr: h,
            payload_bytes: 0,
            data_seg: None,
            retransmission: false,
        });
    }

    pub(crate) fn send_ack_only(&mut self) {
        let h = self.header(
            1 + self.seg_start(self.nxt.max(self.una)) + u64::from(self.fin_sent),
            ack_flags(),
        );
        self.out.push(Segment {
            hdr: h,
            payload_bytes: 0,
            data_seg: None,
            retransmission: false,
        });
    }

    /// Transmit data segment `k` (new if k == max).
    pub(crate) fn transmit(&mut self, now: SimTime, k: u64) {
        debug_assert!(k <= self.max && k >= self.una);
        let len = self.seg_len(k);
        let retx = k < self.max;
        // ns-2 `output` (tcp.cc:779–780, 803, `force_set_rtx_timer`): a segment sent while
        // nothing is outstanding (highest_ack_ == maxseq_) restarts the timer with the
        // RTO in force now, even if one is pending. It matters where the ACK set the
        // timer before its RTT update (FACK's `oldack`: the ACK that ends recovery).
        let idle = self.una == self.max;
        let cwnd = self.st.cwnd;
        if retx {
            let i = self.info_mut(k);
            i.retx = true;
            i.sent_at = now;
            i.lost = false;
            i.cwnd_at_send = cwnd;
            self.stats.retransmissions += 1;
        } else {
            self.board.push_back(SegInfo {
                sent_at: now,
                retx: false,
                rec_retx: false,
                sacked: false,
                lost: false,
                drops: 0,
                cwnd_at_send: cwnd,
            });
            if !self.rtt_active {
                // ns-2 `output`: time this new segment if none is being timed.
                self.rtt_active = true;
                self.rtt_seq = k;
                self.rtt_ts = now;
            }
            self.max += 1;
            self.stats.new_segments_sent += 1;
            self.stats.new_bytes_sent += u64::from(len);
        }
        self.stats.data_segments_sent += 1;
        self.stats.data_bytes_sent += u64::from(len);
        let mut h = self.header(1 + self.seg_start(k), ack_flags());
        h.headerless = self.opts.headerless_data_segments;
        self.out.push(Segment {
            hdr: h,
            payload_bytes: len,
            data_seg: Some(k),
            retransmission: retx,
        });
        self.cc.on_transmit(&self.st, k, now);
        if (self.rto_at.is_none() || idle) && self.data_timer() {
            self.rto_at = Some(now + secs(self.rto_s()));
        }
    }

    pub(crate) fn send_fin(&mut self, now: SimTime) {
        let seq = 1 + self.total_bytes.expect("FIN only with a finite file");
        let mut flags = ack_flags();
        flags.fin = true;
        let h = self.header(seq, flags);
        self.out.push(Segment {
            hdr: h,
            payload_bytes: 0,
            data_seg: None,
            retransmission: self.fin_sent,
        });
        self.fin_sent = true;
        if self.rto_at.is_none() && !self.frozen {
            self.rto_at = Some(now + secs(self.rto_s()));
        }
    }

    pub(crate) fn restart_rto(&mut self, now: SimTime) {
        let outstanding = (self.una < self.max && self.data_timer())
            || (self.fin_sent && !self.fin_acked && !self.frozen)
            || self.zero_window_wait();
        self.rto_at = outstanding.then(|| now + secs(self.rto_s()));
    }

    /// ns-2 `newtimer` sets the timer whenever `cwnd_ < 1`, outstanding data or not:
    /// with a zero window (variants that allow one) only the timeout can restart sending.
    pub(crate) fn zero_window_wait(&self) -> bool {
        self.opts.zero_window
            && self.st.cwnd < 1.0
            && self.state == SenderState::Established
            && self.data_timer()
            && self.una < self.total_segs()
    }

    /// Whether the RFC 6298 timer guards data: not while frozen (ELFN) and never
    /// with timestamp drop detection.
    pub(crate) fn data_timer(&self) -> bool {
        !self.frozen && !self.rec.detects_losses_by_timer()
    }

    pub(crate) fn refresh(&mut self, now: SimTime) {
        self.st.now = now;
        self.st.flight = self.max - self.una;
        self.st.snd_una = self.una;
        self.st.dupacks = self.dupacks;
        self.st.snd_max = self.max;
        self.st.snd_nxt = self.nxt;
        self.st.una_retransmitted = self.una < self.max && self.info(self.una).retx;
        self.st.srtt_s = self.rto.srtt_s();
        self.st.rttvar_s = self.rto.rttvar_s();
        self.st.base_rto_s = self.rto.base_s();
        self.st.una_sent_at = (self.una < self.max).then(|| self.info(self.una).sent_at);
    }

    // ----- the send loop ------------------------------------------------------------------

    /// Usable window in segments: min(⌊cwnd⌋ + dupwnd, advertised window, window_pkts),
    /// at least 1 (ns-2 `RenoTcpAgent::window`; dupwnd is 0 outside Reno/NewReno recovery).
    /// A variant that allows a zero window gets ⌊cwnd⌋ unclamped (ns-2 `TcpAgent::window`,
    /// `(int)cwnd_`): 0 while cwnd < 1, and only the RTO reopens it.
    pub(crate) fn window(&self) -> u64 {
        if self.opts.zero_window {
            let w = self.st.cwnd.max(0.0).floor() as u64 + u64::from(self.dupwnd);
            return w.min(self.rwnd_segs).min(self.max_window);
        }
        (self.st.cwnd.floor().max(1.0) as u64 + u64::from(self.dupwnd))
            .min(self.rwnd_segs)
            .min(self.max_window)
            .max(1)
    }

    pub(crate) fn may_send_new(&mut self, now: SimTime) -> bool {
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

    pub(crate) fn send_data(&mut self, now: SimTime) {
        if self.state != SenderState::Established {
            return;
        }
        if self.frozen {
            return; // ELFN stand-by: only probes go out
        }
        let limit = self.total_segs();
        let rec = self.rec;
        rec.send(self, now, limit);
        if !self.one_way && self.total_bytes.is_some() && self.nxt >= limit && !self.fin_sent {
            self.send_fin(now);
        }
    }

    /// The plain send loop: the next segments within the window, at most `burst`.
    pub(crate) fn send_window(&mut self, now: SimTime, limit: u64, mut burst: u32) {
        let win = self.window();
        while burst > 0 && self.nxt < limit && self.nxt < self.una + win {
            let k = self.nxt;
            if k == self.max && !self.may_send_new(now) {
                break;
            }
            self.transmit(now, k);
            self.nxt += 1;
            burst -= 1;
        }
    }

    /// Limited transmit (ns-2 `send_one`, `singledup_` = 1): on the first and second
    /// duplicate ACK, one segment if it fits in the window and in cwnd + dupacks.
    pub(crate) fn send_one(&mut self, now: SimTime) {
        let limit = self.total_segs();
        let k = self.nxt;
        let wnd = self.rwnd_segs.min(self.max_window);
        if k < limit
            && k < self.una + wnd
            && (k + 1) as f64 <= self.una as f64 + self.st.cwnd + f64::from(self.dupacks)
        {
            if k == self.max && !self.may_send_new(now) {
                return;
            }
            self.transmit(now, k);
            self.nxt += 1;
        }
    }

    /// When a per-segment loss timer of the recovery scheme expires next.
    pub(crate) fn loss_deadline(&self) -> Option<SimTime> {
        self.rec.loss_deadline(self)
    }

    // ----- input -------------------------------------------------------------------------

    /// A segment from the receiver arrived.
    pub fn on_segment(&mut self, now: SimTime, h: &TcpHeader, _payload_bytes: u32) {
        match self.state {
            SenderState::Closed | SenderState::Done => {}
            SenderState::SynSent => {
                let syn_acked = if self.one_way {
                    h.flags.ack && !h.flags.syn && h.ack == 1
                } else {
                    h.flags.syn && h.flags.ack && h.ack == 1
                };
                if syn_acked {
                    self.state = SenderState::Established;
                    self.stats.established_at = Some(now);
                    self.sack_ok = self.sack_offer && (self.one_way || h.sack_permitted);
                    self.rwnd_segs = (u64::from(h.window) / u64::from(self.mss)).max(1);
                    if !self.syn_retx {
                        // Karn: only an unretransmitted SYN gives a sample; a valid sample
                        // ends the backoff (ns-2 `newack`).
                        let r = now.since(self.syn_sent_at).as_secs_f64();
                        self.rto.sample(self.syn_sent_at.as_nanos(), now.as_nanos());
                        self.st.backoff = 1.0;
                        self.refresh(now);
                        self.cc.on_rtt_sample(&self.st, r);
                    } else if !self.one_way {
                        self.st.backoff = 1.0;
                    }
                    if self.one_way {
                        // ns-2 `delay_growth_`: the ACK of the SYN sets cwnd to the initial
                        // window (1 after a lost SYN, `bugfix_ss_`).
                        self.st.cwnd = self.init_window;
                    }
                    self.st.consecutive_timeouts = 0;
                    self.rto_at = None;
                    if !self.one_way {
                        self.send_ack_only();
                    }
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

    pub(crate) fn on_ack(&mut self, now: SimTime, h: &TcpHeader) {
        let reference = 1 + self.seg_start(self.una);
        let ack_abs = unwrap_seq(h.ack, reference);
        let ack_bytes = ack_abs.saturating_sub(1);
        self.rwnd_segs = (u64::from(h.window) / u64::from(self.mss)).max(1);
        let mut sack_news = false;
        // ns-2 FACK: the blocks in segments.
        let mut seg_blocks: Vec<(i64, i64)> = Vec::new();
        if self.sack_ok {
            for &(l, r) in h.sack_blocks() {
                let lo = unwrap_seq(l, reference).saturating_sub(1);
                let hi = unwrap_seq(r, reference).saturating_sub(1);
                let first = lo.div_ceil(u64::from(self.mss)).max(self.una);
                let last = self.segs_covered(hi).min(self.max);
                if first < last {
                    seg_blocks.push((first as i64, last as i64));
                }
                for k in first..last {
                    let i = self.info_mut(k);
                    sack_news |= !i.sacked;
                    i.sacked = true;
                }
            }
        }
        if let Some(t) = self.total_bytes {
            if self.fin_sent && ack_bytes > t {
                self.fin_acked = true;
            }
        }
        let ack_seg = self
            .segs_covered(ack_bytes.min(self.seg_start(self.max)))
            .min(self.max);
        self.highest_ack_bytes = self
            .highest_ack_bytes
            .max(ack_bytes.min(self.seg_start(self.max)));
        if self.frozen && self.probe_seg.is_some_and(|p| ack_seg > p) {
            // ELFN: the probe got through — the path works again.
            self.thaw();
        }
        let rec = self.rec;
        if self.una < self.max && rec.on_ack(self, now, ack_seg, &seg_blocks, h.ts_echo) {
            // The scheme processed the ACK itself (ns-2 FACK).
        } else if ack_seg > self.una {
            self.on_new_ack(now, ack_seg);
        } else if ack_seg == self.una && self.una < self.max {
            self.on_dup_ack(now, sack_news);
        } else if self.fin_acked {
            self.restart_rto(now);
        }
        if self.fin_acked && self.peer_fin {
            self.state = SenderState::Done;
            self.rto_at = None;
        }
    }

    pub(crate) fn on_new_ack(&mut self, now: SimTime, ack_seg: u64) {
        let newly = ack_seg - self.una;
        let last = ack_seg - 1;
        let last_info = *self.info(last);
        // For the variant: a sample from the newest segment this ACK covers, if it was
        // sent once and after the last loss event (Karn).
        let sample = (!last_info.retx && last >= self.karn_floor)
            .then(|| now.since(last_info.sent_at).as_secs_f64());
        // ns-2: the timed segment is acknowledged (`seqno >= rtt_seq_`).
        let timed = self.rtt_active && ack_seg > self.rtt_seq;
        let full = self.recover.is_none_or(|r| ack_seg >= r);
        let rec = self.rec;
        let partial = self.in_recovery && !full && rec.has_partial_acks();
        for _ in 0..newly {
            self.board.pop_front();
        }
        self.una = ack_seg;
        self.nxt = self.nxt.max(self.una);
        self.st.consecutive_timeouts = 0;
        if timed {
            self.rtt_active = false;
            self.st.backoff = 1.0;
            // A partial ACK ends the timing without a sample (ns-2 `partialnewack`).
            if !partial {
                self.rto.sample(self.rtt_ts.as_nanos(), now.as_nanos());
            }
        }
        if !partial {
            // ns-2 `newack`; a partial ACK keeps the duplicate-ACK count.
            self.dupacks = 0;
        }
        self.refresh(now);
        if let Some(r) = sample {
            self.cc.on_rtt_sample(&self.st, r);
        }
        self.cc.pkts_acked(&self.st, newly);

        if partial {
            rec.on_partial_ack(self, now, newly);
        } else {
            if self.in_recovery {
                rec.exit_recovery(self);
            }
            // ns-2 opens cwnd on every new ACK outside Sack1 recovery, including the
            // one that ends Reno/NewReno recovery (Sack1's exit calls `newack` only).
            if rec.opens_cwnd_on_exit() || !self.last_exit_was_now {
                self.cc.cong_avoid(&mut self.st, newly);
            }
            self.last_exit_was_now = false;
            self.restart_rto(now);
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
        self.check_complete(now);
        self.send_data(now);
    }

    /// The end of a recovery episode (every scheme's exit).
    pub(crate) fn end_recovery(&mut self) {
        self.in_recovery = false;
        self.dupwnd = 0;
        self.first_partial = false;
        self.last_exit_was_now = true;
        self.cc.exit_recovery(&mut self.st);
        for i in self.board.iter_mut() {
            i.rec_retx = false;
        }
    }

    pub(crate) fn on_dup_ack(&mut self, now: SimTime, sack_news: bool) {
        let rec = self.rec;
        rec.on_dup_ack(self, now, sack_news);
    }

    /// ns-2 `bugFix_` / RFC 6582: a new fast retransmit only once the ACK is strictly
    /// above `recover`, or while no data has been acknowledged (`bugfix_ss_`).
    /// `after_fast_retransmit`: the guard holds after fast retransmits too, not only
    /// after timeouts (ns-2 Vegas: only after timeouts).
    pub(crate) fn recover_guard_ok(&self, after_fast_retransmit: bool) -> bool {
        let guarded = self.last_loss_timeout || after_fast_retransmit;
        self.una == 0 || !guarded || self.recover.is_none_or(|r| self.una > r)
    }

    /// A fast retransmit's recovery point and ns-2 `reset_rtx_timer`: restart the
    /// timer (backed off first if `backoff`, as ns-2 Vegas's `reset_rtx_timer(1)`),
    /// stop the RTT timing (Karn).
    pub(crate) fn reset_rtx_timer(&mut self, now: SimTime, backoff: bool) {
        self.recover = Some(self.max);
        self.rtt_active = false;
        self.karn_floor = self.karn_floor.max(self.una);
        if backoff {
            self.backoff_rto();
        }
        self.rto_at = Some(now + secs(self.rto_s()));
    }

    /// Fast retransmit: the variant sets ssthresh and cwnd, the timer restarts, and the
    /// recovery scheme starts its episode (and resends).
    pub(crate) fn fast_retransmit(&mut self, now: SimTime) {
        self.stats.fast_retransmits += 1;
        self.last_loss_timeout = false;
        self.refresh(now);
        self.cc.enter_recovery(&mut self.st);
        self.reset_rtx_timer(now, false);
        let rec = self.rec;
        rec.enter_recovery(self, now);
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
            let rec = self.rec;
            rec.on_loss_timer(self, now);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto(now);
        }
        self.record(now);
    }

    pub(crate) fn on_rto(&mut self, now: SimTime) {
        let rec = self.rec;
        let data_out = self.una < self.max && !rec.detects_losses_by_timer();
        let fin_out = self.fin_sent && !self.fin_acked;
        // A zero window with nothing outstanding still times out (ns-2 Vegas `timeout`).
        let stalled = self.zero_window_wait();
        if rec.on_idle_timeout(self, now) {
            return;
        }
        let live = match self.state {
            SenderState::SynSent => true,
            SenderState::Established => data_out || fin_out || stalled,
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
                if self.one_way {
                    // ns-2: a lost first packet means ssthresh 2, cwnd 1 (`slowdown`) and an
                    // initial window of 1 (`bugfix_ss_`).
                    self.cc.on_timeout(&mut self.st);
                    self.init_window = 1.0;
                }
                self.backoff_rto();
                self.syn_retx = true;
                self.send_syn(now);
                self.rto_at = Some(now + secs(self.rto_s()));
                return;
            }
            SenderState::Established => {}
            _ => return,
        }
        self.cc.on_timeout(&mut self.st);
        self.backoff_rto();
        if rec.on_timeout(self, now, data_out) {
            return;
        }
        self.last_loss_timeout = true;
        self.in_recovery = false;
        self.dupwnd = 0;
        self.first_partial = false;
        // ns-2 Reno/NewReno/Sack1/Vegas clear dupacks on a timeout; Tahoe keeps counting.
        if !rec.keeps_dupacks_on_timeout() {
            self.dupacks = 0;
        }
        self.rtt_active = false;
        if data_out || stalled {
            self.recover = Some(self.max);
            self.timeout_una = Some(self.una);
            self.karn_floor = self.max;
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

    /// Back the RTO off: the variant's rule if it has one, else ns-2 `rtt_backoff`
    /// (which also clears SRTT past a backoff of 8).
    pub(crate) fn backoff_rto(&mut self) {
        if self.cc.backoff_rto(&mut self.st) {
            self.rto.after_backoff(self.st.backoff);
        } else {
            self.st.backoff = self.rto.backoff(self.st.backoff);
        }
    }

    // ----- route-failure notices (ELFN) ------------------------------------------------------

    /// The network layer reports that the route to the peer failed (`up = false`) or
    /// is back (`up = true`). Ignored unless the variant uses ELFN, and before the
    /// connection is established.
    pub fn on_route_notice(&mut self, now: SimTime, up: bool) {
        if self.opts.route_failure_probe_s.is_none() || self.state != SenderState::Established {
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

    pub(crate) fn probe_interval_s(&self) -> f64 {
        self.opts.route_failure_probe_s.unwrap_or(2.0)
    }

    /// ELFN stand-by: send the probe and re-arm the probe timer.
    pub(crate) fn send_probe(&mut self, now: SimTime) {
        self.probe_at = Some(now + secs(self.probe_interval_s()));
        let k = if self.una < self.max {
            self.una
        } else if self.max < self.total_segs() {
            self.max
        } else {
            return;
        };
        self.transmit(now, k);
        self.nxt = self.nxt.max(k + 1);
        self.probe_seg = Some(k);
        self.stats.probes += 1;
    }

    /// Leave stand-by with the frozen cwnd/ssthresh/backoff: go back to the oldest
    /// unacknowledged segment (what was in flight was lost with the route), with the
    /// `recover` guard set as after a timeout; no RTT samples from segments sent
    /// before (Karn).
    pub(crate) fn thaw(&mut self) {
        self.frozen = false;
        self.probe_at = None;
        self.probe_seg = None;
        self.nxt = self.una;
        // As after a timeout (RFC 6582 §4): duplicate ACKs caused by resending
        // segments the receiver already holds must not start a fast retransmit.
        self.in_recovery = false;
        self.recover = Some(self.max);
        self.karn_floor = self.max;
        self.rtt_active = false;
        self.dupacks = 0;
        self.dupwnd = 0;
        for i in self.board.iter_mut() {
            i.lost = self.rec.detects_losses_by_timer();
        }
    }

    pub(crate) fn check_complete(&mut self, now: SimTime) {
        if let Some(t) = self.total_bytes {
            if self.stats.completed_at.is_none()
                && self.seg_start(self.una) >= t
                && self.una >= self.total_segs()
            {
                self.stats.completed_at = Some(now);
            }
        }
    }

    pub(crate) fn record(&mut self, now: SimTime) {
        if let Some(tr) = self.trace.as_mut() {
            tr.t_s.push(now.as_secs_f64());
            tr.cwnd_segs.push(self.st.cwnd);
            tr.ssthresh_segs
                .push(self.st.ssthresh.min(f64::from(u32::MAX)));
            tr.rto_s.push(self.rto.rto_s(self.st.backoff));
            tr.srtt_s.push(self.rto.srtt_s());
            tr.backoff.push(self.st.backoff);
            tr.seq_segs.push(self.max);
            tr.ack_segs.push(self.una);
        }
    }
}

fn ack_flags() -> TcpFlags {
    TcpFlags {
        ack: true,
        ..TcpFlags::default()
    }
}

pub(crate) fn secs(s: f64) -> SimDuration {
    SimDuration::from_secs_f64(s)
}
