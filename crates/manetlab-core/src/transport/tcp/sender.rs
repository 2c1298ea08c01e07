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
//! The default is ns-2.35's one-way `Agent/TCP` family (`tcp.cc`, `tcp-reno.cc`,
//! `tcp-newreno.cc`, `tcp-sack1.cc`; docs/tcp.md has the parameter table):
//! * Connection: a 40-byte SYN-like first packet (ns-2 `syn_`), acknowledged by a
//!   plain ACK; cwnd = 1 until then and `windowInit_` after (`delay_growth_`); a
//!   lost SYN makes the initial window 1 and ssthresh 2 (ns-2 `bugfix_ss_` and
//!   `slowdown`). No FIN. `handshake = true` gives the RFC 9293 three-way
//!   handshake (with MSS/SACK-permitted options) and FIN exchange instead.
//! * Window = min(⌊cwnd⌋ + dupwnd, `window_pkts`, advertised window); dupwnd is
//!   Reno/NewReno's fast-recovery inflation (ns-2 `dupwnd_`), kept apart from cwnd.
//!   A variant with its own duplicate-ACK rules (`has_own_dup_acks`: ns-2 Vegas)
//!   decides every duplicate ACK, inflates cwnd itself (dupwnd stays 0) and asks the
//!   engine for the retransmission (`fast_retransmit_own`).
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
//! * NewReno partial ACK (`partialnewack`, `partial_window_deflation_` 1): retransmit
//!   the next hole; deflate dupwnd/cwnd by the segments acked minus one; restart the
//!   timer on the first partial ACK only (`newreno_changes1_` 1); during recovery at
//!   most two segments per ACK (`maxburst` 2). Recovery ends at an ACK ≥ `recover`.
//! * Sack1: pipe = segments out − dupthresh on entry, −1 per ACK (−2 per partial
//!   ACK), +1 per transmission; send while pipe < ⌊cwnd⌋ the first unSACKed,
//!   unretransmitted segment below the highest SACK, else new data; duplicate ACKs
//!   count only when they SACK something new. FACK keeps its own rules (fack.rs).
//! * Go-back-N after a timeout (`t_seqno_ = highest_ack_ + 1`); the SACK
//!   scoreboard is cleared on timeout (RFC 2018 §8, ns-2 Sack1).
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
//!   the ACK of a probe ends the freeze (Holland & Vaidya; other ACKs are
//!   processed but leave the sender frozen): the frozen window resumes go-back-N
//!   from the oldest unacknowledged segment (what was in flight died with the
//!   route) with the RTO restarted at its frozen value.

use super::cc::{CcState, CongestionControl, LostSegment, Recovery};
use super::config::TcpConfig;
use super::rto::{RtoEstimator, RtoParams};
use super::{unwrap_seq, Segment, TcpTrace};
use crate::packet::{TcpFlags, TcpHeader, TCP_MAX_SACK_BLOCKS};
use crate::sim::{SimDuration, SimTime};
use std::collections::VecDeque;

mod fack_ns2;

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
    /// Reno/NewReno fast-recovery inflation, segments (ns-2 `dupwnd_`).
    dupwnd: u32,
    /// NewReno: a partial ACK of this recovery already restarted the timer.
    first_partial: bool,
    /// ns-2 `Agent/TCP/Fack` state ([`Recovery::FackNs2`] only).
    f2: fack_ns2::FackNs2,
    /// Sack1's pipe counter during recovery (ns-2 `pipe_`).
    sack1_pipe: i64,
    /// ns-2 `recover_` in our numbering: `max` at the last fast retransmit/timeout.
    recover: Option<u64>,
    /// Set by a timeout: the segment it retransmitted (hook on the ACK covering it).
    timeout_una: Option<u64>,
    /// ns-2 RTT timing: a segment is being timed (`rtt_active_`), which (`rtt_seq_`) and
    /// since when (`rtt_ts_`).
    rtt_active: bool,
    rtt_seq: u64,
    rtt_ts: SimTime,
    /// Segments below this were in flight across a loss: no samples for the variant (Karn).
    karn_floor: u64,
    /// ns-2 one-way agent (default) rather than the full handshake/FIN.
    one_way: bool,
    /// Initial window after the SYN is acknowledged (ns-2 `wnd_init_`; 1 after a lost SYN).
    init_window: f64,
    /// ELFN: the segment sent as the last probe while frozen.
    probe_seg: Option<u64>,
    /// The last loss response was a timeout (ns-2 `last_cwnd_action_ == CWND_ACTION_TIMEOUT`).
    last_loss_timeout: bool,
    /// The in-recovery flag was just cleared by this ACK (Sack1 does not open cwnd then).
    last_exit_was_now: bool,
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
    pub fn new(
        cfg: &TcpConfig,
        cc: Box<dyn CongestionControl>,
        src_port: u16,
        dst_port: u16,
    ) -> Self {
        let kind = cc.recovery();
        let sack_offer = cfg.sack.unwrap_or(kind.needs_sack());
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
            dupwnd: 0,
            first_partial: false,
            f2: fack_ns2::FackNs2::default(),
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
        (self.kind == Recovery::Timestamp).then(|| self.loss_threshold_s())
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
            headerless: false,
            ns2_sack_bytes: false,
            ts_echo: SimTime::ZERO,
        }
    }

    fn send_syn(&mut self, _now: SimTime) {
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

    fn send_ack_only(&mut self) {
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
    fn transmit(&mut self, now: SimTime, k: u64) {
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
        h.headerless = self.cc.headerless_data_segments();
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

    fn send_fin(&mut self, now: SimTime) {
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

    fn restart_rto(&mut self, now: SimTime) {
        let outstanding = (self.una < self.max && self.data_timer())
            || (self.fin_sent && !self.fin_acked && !self.frozen)
            || self.zero_window_wait();
        self.rto_at = outstanding.then(|| now + secs(self.rto_s()));
    }

    /// ns-2 `newtimer` sets the timer whenever `cwnd_ < 1`, outstanding data or not:
    /// with a zero window (variants that allow one) only the timeout can restart sending.
    fn zero_window_wait(&self) -> bool {
        self.cc.allows_zero_window()
            && self.st.cwnd < 1.0
            && self.state == SenderState::Established
            && self.data_timer()
            && self.una < self.total_segs()
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
    fn window(&self) -> u64 {
        if self.cc.allows_zero_window() {
            let w = self.st.cwnd.max(0.0).floor() as u64 + u64::from(self.dupwnd);
            return w.min(self.rwnd_segs).min(self.max_window);
        }
        (self.st.cwnd.floor().max(1.0) as u64 + u64::from(self.dupwnd))
            .min(self.rwnd_segs)
            .min(self.max_window)
            .max(1)
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
        } else if self.kind == Recovery::FackNs2 {
            self.f2_send_much(now);
        } else if self.in_recovery && self.kind == Recovery::Sack {
            self.send_by_sack1_pipe(now, limit);
        } else if self.in_recovery && self.kind == Recovery::Fack {
            self.send_by_pipe(now, limit);
        } else {
            // ns-2 NewReno sends at most 2 segments per ACK once dupacks reach the
            // threshold (`send_much(0, 0, 2)`), i.e. throughout fast recovery.
            let mut burst = if self.kind == Recovery::NewReno && self.dupacks >= self.st.dupthresh {
                2
            } else {
                u32::MAX
            };
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
        if !self.one_way && self.total_bytes.is_some() && self.nxt >= limit && !self.fin_sent {
            self.send_fin(now);
        }
    }

    /// Limited transmit (ns-2 `send_one`, `singledup_` = 1): on the first and second
    /// duplicate ACK, one segment if it fits in the window and in cwnd + dupacks.
    fn send_one(&mut self, now: SimTime) {
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

    /// ns-2 Sack1 in fast recovery: while pipe < ⌊cwnd⌋, send the first unSACKed,
    /// not yet retransmitted segment below the highest SACK (`GetNextRetran`), else new
    /// data within the window (`Sack1TcpAgent::send_much`); each transmission adds one.
    fn send_by_sack1_pipe(&mut self, now: SimTime, limit: u64) {
        let wnd = self.rwnd_segs.min(self.max_window);
        while self.sack1_pipe < self.st.cwnd.floor() as i64 {
            let top = self.board.iter().rposition(|i| i.sacked);
            let hole = top
                .and_then(|t| {
                    self.board
                        .iter()
                        .take(t)
                        .position(|i| !i.sacked && !i.rec_retx)
                })
                .map(|i| self.una + i as u64);
            let k = match hole {
                Some(k) if k < self.una + wnd => k,
                Some(_) => break,
                None => {
                    if !(self.nxt < limit && self.nxt < self.una + wnd) {
                        break;
                    }
                    if self.nxt == self.max && !self.may_send_new(now) {
                        break;
                    }
                    self.nxt
                }
            };
            if k < self.max {
                self.info_mut(k).rec_retx = true;
            }
            self.transmit(now, k);
            self.nxt = self.nxt.max(k + 1);
            self.sack1_pipe += 1;
        }
    }

    /// RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 segment, send NextSeg().
    fn send_by_pipe(&mut self, now: SimTime, limit: u64) {
        let lost = self.lost_marks();
        let mut pipe = self.pipe(&lost);
        while self.st.cwnd - pipe as f64 >= 1.0 {
            let Some(k) = self.next_seg(&lost, limit) else {
                break;
            };
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
            } else if self.max < limit && self.max < self.una + self.rwnd_segs.min(self.max_window)
            {
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
        self.cc
            .loss_timeout_s(&self.st)
            .map_or(self.rto.base_s(), |m| m.min(self.rto.params.max_s))
    }

    /// Timestamp recovery: when the next segment of the to-be-ack list expires.
    fn loss_deadline(&self) -> Option<SimTime> {
        if self.kind != Recovery::Timestamp || self.state != SenderState::Established || self.frozen
        {
            return None;
        }
        let thr = self.loss_threshold_s();
        self.board
            .iter()
            .filter(|i| !i.lost)
            .map(|i| i.sent_at + secs(thr * backoff_factor(i.drops)))
            .min()
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
            self.rtt_active = false;
            self.stats.drops_detected += 1;
            if i.drops > 0 {
                self.stats.timeouts += 1; // a retransmission was lost too
            }
            let to_be_ack = self
                .board
                .iter()
                .enumerate()
                .filter(|(_, j)| !j.lost)
                .map(|(n, _)| self.una + n as u64)
                .collect();
            let lost = LostSegment {
                seg: self.una + idx as u64,
                cwnd_when_sent: i.cwnd_at_send,
                earlier_drops: i.drops,
                to_be_ack,
            };
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
    fn next_seg(&self, lost: &[bool], limit: u64) -> Option<u64> {
        let first_lost = self
            .board
            .iter()
            .zip(lost)
            .position(|(i, &l)| l && !i.sacked && !i.rec_retx);
        if let Some(i) = first_lost {
            return Some(self.una + i as u64);
        }
        if self.max < limit && self.max < self.una + self.rwnd_segs.min(self.max_window) {
            return Some(self.max);
        }
        let top = self.board.iter().rposition(|i| i.sacked)?;
        self.board
            .iter()
            .take(top)
            .position(|i| !i.sacked && !i.rec_retx)
            .map(|i| self.una + i as u64)
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

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader) {
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
        if self.kind == Recovery::FackNs2 && self.una < self.max {
            self.fack_ns2_on_ack(now, ack_seg, &seg_blocks, h.ts_echo);
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

    fn on_new_ack(&mut self, now: SimTime, ack_seg: u64) {
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
        let partial = self.in_recovery
            && !full
            && matches!(
                self.kind,
                Recovery::NewReno | Recovery::Sack | Recovery::Fack
            );
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
            match self.kind {
                Recovery::NewReno => {
                    // ns-2 `partialnewack_helper`: restart the timer on the first partial
                    // ACK only (`newreno_changes1_`); deflate (`partial_window_deflation_`);
                    // retransmit the next hole.
                    if !self.first_partial {
                        self.first_partial = true;
                        self.rto_at = Some(now + secs(self.rto_s()));
                    }
                    let d = newly as u32;
                    if self.dupwnd > d {
                        self.dupwnd -= d - 1;
                    } else {
                        self.st.cwnd = (self.st.cwnd - f64::from(d - self.dupwnd)).max(1.0);
                        self.dupwnd = 1;
                    }
                    self.transmit(now, self.una);
                    self.nxt = self.nxt.max(self.una + 1);
                }
                Recovery::Sack => {
                    // ns-2 Sack1 (`partial_ack_` false): the pipe loses two, the timer
                    // restarts and the backoff clears.
                    self.sack1_pipe -= 2;
                    self.st.backoff = 1.0;
                    self.rto_at = Some(now + secs(self.rto_s()));
                }
                _ => {
                    // FACK: partial ACKs keep recovery; the pipe decides (RFC 6675 §5 (C)).
                    self.restart_rto(now);
                }
            }
        } else {
            if self.in_recovery {
                self.exit_recovery();
            }
            // ns-2 opens cwnd on every new ACK outside Sack1 recovery, including the
            // one that ends Reno/NewReno recovery (Sack1's exit calls `newack` only).
            if !(self.kind.needs_sack() && self.last_exit_was_now) {
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

    fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.dupwnd = 0;
        self.first_partial = false;
        self.last_exit_was_now = true;
        self.cc.exit_recovery(&mut self.st);
        for i in self.board.iter_mut() {
            i.rec_retx = false;
        }
    }

    fn on_dup_ack(&mut self, now: SimTime, sack_news: bool) {
        if self.kind == Recovery::Timestamp {
            // MPR / TCP-PR: duplicate ACKs are no loss signal; drops are detected by timers.
            self.dupacks += 1;
            self.refresh(now);
            self.cc.pkts_acked(&self.st, 0);
            self.send_data(now);
            return;
        }
        if self.kind == Recovery::Reno && self.cc.has_own_dup_acks() {
            // ns-2 Vegas: the variant decides every duplicate ACK itself.
            let guard_ok = self.recover_guard_ok();
            self.dupacks += 1;
            self.refresh(now);
            self.cc.pkts_acked(&self.st, 0);
            let act = self.cc.own_dup_ack(&mut self.st, guard_ok);
            if act.retransmit {
                self.fast_retransmit_own(now);
            }
            if act.send {
                self.send_data(now);
            }
            return;
        }
        if self.in_recovery {
            match self.kind {
                // ns-2 `++dupwnd_` per further duplicate ACK.
                Recovery::Reno | Recovery::NewReno => {
                    self.dupacks += 1;
                    self.dupwnd += 1;
                }
                // Sack1: every ACK in recovery takes one from the pipe.
                Recovery::Sack => {
                    self.sack1_pipe -= 1;
                    if sack_news {
                        self.dupacks += 1;
                    }
                }
                _ => self.dupacks += 1,
            }
            self.refresh(now);
            self.cc.pkts_acked(&self.st, 0);
            self.send_data(now);
            return;
        }
        // ns-2 Sack1 counts a duplicate ACK only when its SACK blocks say something new.
        if self.kind == Recovery::Sack && self.sack_ok && !sack_news {
            return;
        }
        self.dupacks += 1;
        self.refresh(now);
        self.cc.pkts_acked(&self.st, 0);
        let guard_ok = self.recover_guard_ok();
        let fack_trigger = self.kind == Recovery::Fack && {
            let top = self
                .board
                .iter()
                .rposition(|i| i.sacked)
                .map_or(0, |t| t as u64 + 1);
            top > u64::from(self.st.dupthresh)
        };
        let trigger = self.cc.on_dup_ack(&self.st, self.dupacks) || fack_trigger;
        if trigger && guard_ok {
            self.fast_retransmit(now);
        } else if self.dupacks < self.st.dupthresh && self.cc.limited_transmit() {
            self.send_one(now);
        }
        // ns-2: Tahoe tries to send on every ACK; Reno/NewReno (and Vegas) not on the
        // first dupthresh − 1 duplicates; Sack1 only with no duplicates outstanding.
        let send = match self.kind {
            Recovery::Tahoe => true,
            Recovery::Reno | Recovery::NewReno => {
                self.in_recovery || self.dupacks >= self.st.dupthresh
            }
            _ => self.in_recovery,
        };
        if send {
            self.send_data(now);
        }
    }

    /// ns-2 `bugFix_` / RFC 6582: a new fast retransmit only once the ACK is strictly
    /// above `recover`, or while no data has been acknowledged (`bugfix_ss_`).
    fn recover_guard_ok(&self) -> bool {
        let guarded = self.last_loss_timeout || self.cc.recover_guard_after_fast_retransmit();
        self.una == 0 || !guarded || self.recover.is_none_or(|r| self.una > r)
    }

    /// A fast retransmit whose window change the variant made itself (`own_dup_ack`):
    /// the timer and Karn handling of [`Self::fast_retransmit`], cwnd inflated by the
    /// variant (dupwnd 0).
    fn fast_retransmit_own(&mut self, now: SimTime) {
        self.stats.fast_retransmits += 1;
        self.last_loss_timeout = false;
        self.reset_rtx_timer(now);
        self.in_recovery = true;
        self.first_partial = false;
        self.dupwnd = 0;
        self.transmit(now, self.una);
        self.nxt = self.nxt.max(self.una + 1);
    }

    /// A fast retransmit's recovery point and ns-2 `reset_rtx_timer`: restart the
    /// timer (backed off first where the variant's ns-2 agent does so), stop the
    /// RTT timing (Karn).
    fn reset_rtx_timer(&mut self, now: SimTime) {
        self.recover = Some(self.max);
        self.rtt_active = false;
        self.karn_floor = self.karn_floor.max(self.una);
        if self.cc.backoff_on_fast_retransmit() {
            self.backoff_rto();
        }
        self.rto_at = Some(now + secs(self.rto_s()));
    }

    fn fast_retransmit(&mut self, now: SimTime) {
        self.stats.fast_retransmits += 1;
        self.last_loss_timeout = false;
        self.refresh(now);
        self.cc.enter_recovery(&mut self.st, self.kind);
        self.reset_rtx_timer(now);
        match self.kind {
            Recovery::Tahoe => {
                // Slow start from one segment, go-back-N (the send loop resends una).
                self.nxt = self.una;
            }
            Recovery::Reno | Recovery::NewReno => {
                self.in_recovery = true;
                self.first_partial = false;
                // ns-2 `dupwnd_ = numdupacks_`.
                self.dupwnd = self.dupacks.min(self.st.dupthresh);
                self.transmit(now, self.una);
                self.nxt = self.nxt.max(self.una + 1);
            }
            Recovery::Timestamp => unreachable!("timestamp recovery ignores duplicate ACKs"),
            Recovery::FackNs2 => unreachable!("ns-2 FACK retransmits in fack_ns2.rs"),
            Recovery::Sack | Recovery::Fack => {
                self.in_recovery = true;
                // ns-2 Sack1: pipe = maxseq − highest_ack − numdupacks; the retransmission
                // below goes out directly (`output`), outside the pipe.
                self.sack1_pipe = (self.max - self.una) as i64 - i64::from(self.st.dupthresh);
                for i in self.board.iter_mut() {
                    i.rec_retx = false;
                }
                self.info_mut(self.una).rec_retx = true;
                self.transmit(now, self.una);
                self.nxt = self.nxt.max(self.una + 1);
            }
        }
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
        // A zero window with nothing outstanding still times out (ns-2 Vegas `timeout`).
        let stalled = self.zero_window_wait();
        if self.kind == Recovery::FackNs2
            && self.state == SenderState::Established
            && self.una == self.max
            && self.una < self.total_segs()
        {
            // ns-2 FACK's timer outlives a hold with everything acknowledged.
            self.fack_ns2_idle_timeout(now);
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
        if self.kind == Recovery::FackNs2 && data_out {
            self.fack_ns2_timeout(now);
            return;
        }
        self.last_loss_timeout = true;
        self.in_recovery = false;
        self.dupwnd = 0;
        self.first_partial = false;
        // ns-2 Reno/NewReno/Sack1/Vegas clear dupacks on a timeout; Tahoe keeps counting.
        if self.kind != Recovery::Tahoe {
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
    fn backoff_rto(&mut self) {
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
    fn thaw(&mut self) {
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
            i.lost = self.kind == Recovery::Timestamp;
        }
    }

    fn check_complete(&mut self, now: SimTime) {
        if let Some(t) = self.total_bytes {
            if self.stats.completed_at.is_none()
                && self.seg_start(self.una) >= t
                && self.una >= self.total_segs()
            {
                self.stats.completed_at = Some(now);
            }
        }
    }

    fn record(&mut self, now: SimTime) {
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

/// 2^drops, at most 64: the wait before a segment is declared dropped again.
fn backoff_factor(drops: u32) -> f64 {
    f64::from(1u32 << drops.min(6))
}

fn secs(s: f64) -> SimDuration {
    SimDuration::from_secs_f64(s)
}
