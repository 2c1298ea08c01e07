//! Variants driven directly with scripted ACK/loss sequences. Every expected
//! value is worked out by hand in the comments from ns-2.35's code (`tcp.cc`,
//! `tcp-reno.cc`, `tcp-newreno.cc`, `tcp-sack1.cc`, `tcp-vegas.cc`).
//!
//! Common fixture (ns-2 one-way agent): the 40-byte SYN at t = 0, its ACK at t = 0.1
//! → first RTT sample 10 ticks: SRTT 0.1, RTTVAR 0.05, RTO = ⌊(8·SRTT + 32·RTTVAR)/8⌋
//! ticks = 0.3 s. cwnd = windowInit_ = 2, ssthresh = window_ = 20; segments 0 and 1
//! leave at t = 0.1 and segment 0 is timed. Clock phase 0.
use super::abra::Abra;
use super::mpr::Mpr;
use super::tcp_ap::TcpAp;
use super::vegas::Vegas;
use super::westwood::Westwood;
use crate::sim::SimTime;
use crate::transport::tcp::cc::{CcState, CongestionControl, Recovery};
use crate::transport::tcp::{by_name, Segment, TcpConfig, TcpSender};
use crate::wire::{TcpFlags, TcpHeader};

const MSS: u64 = 1000;

fn t(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

fn hdr(ack_abs: u64, flags: TcpFlags, sack_segs: &[(u64, u64)]) -> TcpHeader {
    let mut h = TcpHeader::new(1, 1, 1, ack_abs as u32, flags, 20 * MSS as u32);
    for (i, (l, r)) in sack_segs.iter().enumerate() {
        h.sack[i] = ((1 + l * MSS) as u32, (1 + r * MSS) as u32);
    }
    h.sack_len = sack_segs.len() as u8;
    h
}

/// The ACK of the SYN: a plain ACK (one-way) or a SYN-ACK (`handshake`).
fn syn_ack(handshake: bool) -> TcpHeader {
    let mut h = hdr(
        1,
        TcpFlags {
            syn: handshake,
            ack: true,
            fin: false,
        },
        &[],
    );
    h.seq = 0;
    h.sack_permitted = handshake;
    h
}

struct H {
    s: TcpSender,
}

impl H {
    fn new(variant: &str, cfg: TcpConfig, synack_at: f64) -> H {
        let cc = by_name(variant, &TcpConfig::default()).unwrap();
        let mut s = TcpSender::new(&cfg, cc, 1, 1);
        s.open(t(0.0), None);
        s.on_segment(t(synack_at), &syn_ack(cfg.handshake), 0);
        let mut h = H { s };
        h.sent();
        h
    }
    fn with_params(variant: &str, p: TcpConfig) -> H {
        let mut s = TcpSender::new(&TcpConfig::default(), by_name(variant, &p).unwrap(), 1, 1);
        s.open(t(0.0), None);
        s.on_segment(t(0.1), &syn_ack(false), 0);
        let mut h = H { s };
        h.sent();
        h
    }
    fn std(variant: &str) -> H {
        H::new(variant, TcpConfig::default(), 0.1)
    }
    /// Data segment numbers sent since the last call.
    fn sent(&mut self) -> Vec<u64> {
        let mut v: Vec<Segment> = Vec::new();
        self.s.take_output(&mut v);
        v.iter().filter_map(|s| s.data_seg).collect()
    }
    /// An ACK for the first `segs` segments, with SACK blocks in segments.
    fn ack(&mut self, now: f64, segs: u64, sack: &[(u64, u64)]) -> Vec<u64> {
        self.ack_echo(now, segs, sack, 0.0)
    }
    /// The same ACK echoing the send time `echo` (the sink's `ts_to_echo_`).
    fn ack_echo(&mut self, now: f64, segs: u64, sack: &[(u64, u64)], echo: f64) -> Vec<u64> {
        let mut h = hdr(
            1 + segs * MSS,
            TcpFlags {
                ack: true,
                ..TcpFlags::default()
            },
            sack,
        );
        h.ts_echo = t(echo);
        self.s.on_segment(t(now), &h, 0);
        self.sent()
    }
    /// Bring the sender to una = 1, max = 10, cwnd 9 (slow start, ssthresh 100).
    fn nine_in_flight(&mut self) {
        self.s.st.cwnd = 8.0;
        self.s.st.ssthresh = 100.0;
        // ACK of segment 0 (timed, 10 ticks): SRTT stays 0.1, RTTVAR 15/4 ticks → RTO 25
        // ticks = 0.25 s; slow start +1 per ACK: 8 → 9; window 9 from una 1 → 2..=9.
        assert_eq!(self.ack(0.2, 1, &[]), (2..10).collect::<Vec<_>>());
        assert_eq!(self.s.cwnd(), 9.0);
        assert!(close(self.s.rto_s(), 0.25));
        assert_eq!((self.s.snd_una(), self.s.snd_max()), (1, 10));
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn one_way_start_rto_and_initial_window() {
    let cc = by_name("newreno", &TcpConfig::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    let mut out = Vec::new();
    s.take_output(&mut out);
    // ns-2 `syn_`: a 40-byte first packet (20 B TCP, no options, + 20 B IP).
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].hdr.size_bytes(), 20);
    assert!(out[0].hdr.flags.syn && out[0].data_seg.is_none());
    assert_eq!(
        s.cwnd(),
        1.0,
        "delay_growth_: cwnd 1 until the SYN is acknowledged"
    );
    let mut h = H::std("newreno");
    assert!(close(h.s.srtt_s().unwrap(), 0.1));
    assert!(close(h.s.rto_s(), 0.3));
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (2.0, 20.0));
    assert_eq!((h.s.snd_una(), h.s.snd_max()), (0, 2));
    assert!(h.sent().is_empty());
}

#[test]
fn one_way_lost_syn_gives_initial_window_one_and_ssthresh_two() {
    let cc = by_name("newreno", &TcpConfig::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    // rtxcur_init_ 3 s: the SYN times out at 3.0; ns-2 `slowdown` → ssthresh = max(⌊1/2⌋, 2) = 2,
    // cwnd 1, backoff 2 → next RTO 6 s; `bugfix_ss_` → wnd_init_ = 1.
    assert_eq!(s.poll_at(), Some(t(3.0)));
    s.on_timer(t(3.0));
    assert_eq!(s.ssthresh(), 2.0);
    assert!(close(s.rto_s(), 6.0));
    // ACK of the retransmitted SYN: no RTT sample (Karn), the backoff stays; cwnd = 1.
    s.on_segment(t(3.1), &syn_ack(false), 0);
    assert!(s.srtt_s().is_none());
    assert_eq!((s.cwnd(), s.ssthresh()), (1.0, 2.0));
    let mut out = Vec::new();
    s.take_output(&mut out);
    assert_eq!(
        out.iter().filter_map(|x| x.data_seg).collect::<Vec<_>>(),
        vec![0]
    );
}

#[test]
fn handshake_switch_keeps_the_three_way_handshake() {
    let cfg = TcpConfig {
        handshake: true,
        ..TcpConfig::default()
    };
    let mut h = H::new("newreno", cfg, 0.1);
    assert!(close(h.s.rto_s(), 0.3));
    assert_eq!(h.s.cwnd(), 2.0);
    assert!(h.sent().is_empty());
    assert!(!h.s.one_way());
}

#[test]
fn cwnd_grows_once_per_ack_not_per_segment() {
    let mut h = H::std("newreno");
    // One ACK covering both initial segments: +1 (slow start), not +2.
    assert_eq!(h.ack(0.2, 2, &[]), vec![2, 3, 4]);
    assert_eq!(h.s.cwnd(), 3.0);
    // Congestion avoidance: +1/cwnd per ACK.
    h.s.st.ssthresh = 3.0;
    h.ack(0.3, 5, &[]);
    assert!(close(h.s.cwnd(), 3.0 + 1.0 / 3.0));
}

#[test]
fn tahoe_three_drops_in_a_window_one_fast_retransmit() {
    let mut h = H::std("tahoe");
    h.nine_in_flight();
    // Segments 1, 4, 6 are lost. 2 and 3 arrive: duplicate ACKs 1 and 2, each sending one
    // new segment by limited transmit (ns-2 `singledup_`): 10 (10 + 1 ≤ 1 + 9 + 1), 11.
    assert_eq!(h.ack(0.3, 1, &[]), vec![10]);
    assert_eq!(h.ack(0.31, 1, &[]), vec![11]);
    // 5 arrives: third duplicate → fast retransmit: ssthresh = ⌊9/2⌋ = 4, cwnd 1,
    // go-back-N from 1; recover = 12.
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 4.0));
    // 7..=11 arrive: duplicates 4..8 — nothing (window 1 is full).
    for k in 0..5 {
        assert!(h.ack(0.33 + 0.001 * f64::from(k), 1, &[]).is_empty());
    }
    // Retransmitted 1 arrives: ACK 4 (2, 3 held). cwnd 2; go-back-N sends 4, 5.
    assert_eq!(h.ack(0.45, 4, &[]), vec![4, 5]);
    assert_eq!(h.s.cwnd(), 2.0);
    // 4 arrives: ACK 6 (5 held) → cwnd 3 → 6, 7, 8. The duplicate 5 brings a duplicate ACK 6:
    // limited transmit sends 9 (9 + 1 ≤ 6 + 3 + 1).
    assert_eq!(h.ack(0.55, 6, &[]), vec![6, 7, 8]);
    assert_eq!(h.ack(0.56, 6, &[]), vec![9]);
    // 6 arrives: ACK 12 (7..=11 held) → cwnd 4 → 12..=15. The duplicates 7, 8, 9 bring
    // three duplicate ACKs 12: una 12 is not above recover 12 → no second fast retransmit
    // (ns-2 `bugFix_`).
    assert_eq!(h.ack(0.65, 12, &[]), vec![12, 13, 14, 15]);
    h.ack(0.66, 12, &[]);
    h.ack(0.67, 12, &[]);
    h.ack(0.68, 12, &[]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!(h.s.stats.timeouts, 0);
    assert_eq!(h.s.cwnd(), 4.0);
}

#[test]
fn reno_halves_inflates_by_dupwnd_and_bugfix_blocks_a_second_fast_retransmit() {
    let mut h = H::std("reno");
    h.nine_in_flight();
    // Segments 1 and 5 are lost. 2, 3 → duplicates 1, 2 with limited transmit of 10, 11.
    assert_eq!(h.ack(0.3, 1, &[]), vec![10]);
    assert_eq!(h.ack(0.31, 1, &[]), vec![11]);
    // 4 → third duplicate: ssthresh = ⌊9/2⌋ = 4, cwnd = 9/2 = 4.5, dupwnd 3, retransmit 1;
    // window ⌊4.5⌋ + 3 = 7 from una 1: nothing new (next is 12).
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh(), h.s.dupwnd()), (4.5, 4.0, 3));
    // 6..=11 → duplicates 4..=9: dupwnd 4..=9, window 8..=13: 12 leaves at dupwnd 8, 13 at 9.
    for k in 0..4 {
        assert!(h.ack(0.33 + 0.001 * f64::from(k), 1, &[]).is_empty());
    }
    assert_eq!(h.ack(0.34, 1, &[]), vec![12]);
    assert_eq!(h.ack(0.341, 1, &[]), vec![13]);
    // Retransmitted 1 arrives: ACK 5 (2..=4 held) — Reno leaves recovery on any new ACK:
    // dupwnd 0, then opencwnd: 4.5 ≥ ssthresh → 4.5 + 1/4.5. Window 4 from 5: full.
    assert!(h.ack(0.42, 5, &[]).is_empty());
    assert!(!h.s.in_recovery());
    assert!(close(h.s.cwnd(), 4.5 + 1.0 / 4.5));
    // 12 and 13 arrive: three duplicates would follow, but una 5 is not above recover 12:
    // ns-2 `bugFix_` prevents the second fast retransmit; the RTO must repair 5.
    for k in 0..3 {
        assert!(h.ack(0.5 + 0.001 * f64::from(k), 5, &[]).is_empty());
    }
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert!(!h.s.in_recovery());
    let at = h.s.poll_at().unwrap();
    h.s.on_timer(at);
    assert_eq!(h.s.stats.timeouts, 1);
    // Timeout: ssthresh = ⌊min(cwnd, 20)/2⌋ = 2, cwnd 1, go-back-N from 5.
    assert_eq!(h.sent(), vec![5]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.0));
}

#[test]
fn newreno_partial_acks_deflate_and_only_the_first_restarts_the_timer() {
    let mut h = H::std("newreno");
    h.nine_in_flight();
    // Segments 1, 5 and 8 are lost. 2, 3 → limited transmit 10, 11; 4 → fast retransmit.
    assert_eq!(h.ack(0.3, 1, &[]), vec![10]);
    assert_eq!(h.ack(0.31, 1, &[]), vec![11]);
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh(), h.s.dupwnd()), (4.5, 4.0, 3));
    // 6, 7, 9, 10 → duplicates 4..=7 (dupwnd 4..=7, window ≤ 11: nothing); 11 → dupwnd 8,
    // window 12 → 12 (at most 2 per ACK in recovery).
    for k in 0..4 {
        assert!(h.ack(0.33 + 0.001 * f64::from(k), 1, &[]).is_empty());
    }
    assert_eq!(h.ack(0.34, 1, &[]), vec![12]);
    // Retransmitted 1 arrives: partial ACK 5 (below recover 12), 4 segments acked:
    // dupwnd 8 > 4 → dupwnd 8 − 3 = 5; retransmit 5; window 4 + 5 = 9 from 5 → 13.
    // First partial ACK: the timer restarts (RTO 0.25 → 0.42 + 0.25).
    assert_eq!(h.ack(0.42, 5, &[]), vec![5, 13]);
    assert!(h.s.in_recovery());
    assert_eq!((h.s.cwnd(), h.s.dupwnd()), (4.5, 5));
    assert_eq!(h.s.poll_at(), Some(t(0.67)));
    // 12 arrives: duplicate → dupwnd 6, window 10 → 14.
    assert_eq!(h.ack(0.43, 5, &[]), vec![14]);
    // Retransmitted 5 arrives: partial ACK 8, 3 acked: dupwnd 6 − 2 = 4; retransmit 8;
    // window 4 + 4 = 8 from 8 → 15. Second partial ACK: the timer is not restarted
    // (`newreno_changes1_`).
    assert_eq!(h.ack(0.52, 8, &[]), vec![8, 15]);
    assert_eq!((h.s.cwnd(), h.s.dupwnd()), (4.5, 4));
    assert_eq!(h.s.poll_at(), Some(t(0.67)));
    // Retransmitted 8 arrives: ACK 16 ≥ recover → full ACK: dupwnd 0, opencwnd 4.5 + 1/4.5;
    // window 4 from 16 → 16..=19. One fast retransmit, no timeout.
    assert_eq!(h.ack(0.62, 16, &[]), vec![16, 17, 18, 19]);
    assert!(!h.s.in_recovery());
    assert!(close(h.s.cwnd(), 4.5 + 1.0 / 4.5));
    assert_eq!((h.s.stats.fast_retransmits, h.s.stats.timeouts), (1, 0));
}

#[test]
fn newreno_recover_guard_is_strict() {
    // After a fast retransmit with recover = 12, an ACK exactly at 12 followed by three
    // duplicates must not fast-retransmit (RFC 6582 §3.2 step 1; ns-2 highest_ack_ > recover_).
    let mut h = H::std("newreno");
    h.nine_in_flight();
    h.ack(0.3, 1, &[]);
    h.ack(0.31, 1, &[]);
    h.ack(0.32, 1, &[]);
    assert_eq!(h.s.snd_max(), 12);
    h.ack(0.42, 12, &[]);
    assert!(!h.s.in_recovery());
    for k in 0..3 {
        h.ack(0.5 + 0.001 * f64::from(k), 12, &[]);
    }
    assert_eq!(h.s.stats.fast_retransmits, 1);
    // One segment beyond recover: allowed again.
    h.ack(0.6, 13, &[]);
    for k in 0..3 {
        h.ack(0.7 + 0.001 * f64::from(k), 13, &[]);
    }
    assert_eq!(h.s.stats.fast_retransmits, 2);
}

#[test]
fn rtt_timing_is_cancelled_by_a_fast_retransmit() {
    let mut h = H::std("newreno");
    h.nine_in_flight(); // segment 2 is timed from 0.2
    h.ack(0.3, 1, &[]);
    h.ack(0.31, 1, &[]);
    h.ack(0.32, 1, &[]);
    let srtt = h.s.srtt_s();
    // The full ACK at 1.5 covers segment 2 (sent at 0.2): a 1.3 s sample would be taken
    // without Karn; ns-2's reset_rtx_timer stopped the timing, so SRTT is unchanged.
    h.ack(1.5, 12, &[]);
    assert_eq!(h.s.srtt_s(), srtt);
}

#[test]
fn sack1_pipe_recovery() {
    let mut h = H::std("sack");
    assert!(h.s.sack_negotiated());
    h.nine_in_flight();
    // Segments 1 and 3 are lost; the receiver SACKs 2, 4, 5, ...
    // Duplicates 1 and 2 (each SACKs something new): limited transmit 10, 11.
    assert_eq!(h.ack(0.3, 1, &[(2, 3)]), vec![10]);
    assert_eq!(h.ack(0.31, 1, &[(4, 5), (2, 3)]), vec![11]);
    // A duplicate that SACKs nothing new is not counted (ns-2 `CheckUpdate`).
    assert!(h.ack(0.311, 1, &[(4, 5), (2, 3)]).is_empty());
    // Third counted duplicate: ssthresh 4, cwnd 4.5, pipe = (12 − 1) − 3 = 8; retransmit 1.
    assert_eq!(h.ack(0.32, 1, &[(4, 6), (2, 3)]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.5, 4.0));
    // Every further ACK takes one from the pipe: 7, 6, 5, 4 — nothing while pipe ≥ ⌊cwnd⌋ = 4.
    for (k, top) in [7u64, 8, 9, 10].iter().enumerate() {
        assert!(h
            .ack(0.33 + 0.001 * k as f64, 1, &[(4, *top), (2, 3)])
            .is_empty());
    }
    // pipe 3 < 4: the first unSACKed, unretransmitted segment below the highest SACK: 3.
    assert_eq!(h.ack(0.34, 1, &[(4, 11), (2, 3)]), vec![3]);
    // pipe 4 − 1 = 3: no hole left → new data 12.
    assert_eq!(h.ack(0.35, 1, &[(4, 12), (2, 3)]), vec![12]);
    // Partial ACK 3 (1 arrived): pipe − 2 = 2 → new data 13, 14.
    assert_eq!(h.ack(0.42, 3, &[(4, 12)]), vec![13, 14]);
    assert!(h.s.in_recovery());
    // Full ACK 12 ≥ recover: out of recovery, cwnd unchanged (Sack1 does not open cwnd
    // on its exit); window 4 from 12 → 15.
    assert_eq!(h.ack(0.44, 12, &[]), vec![15]);
    assert!(!h.s.in_recovery());
    assert_eq!(h.s.cwnd(), 4.5);
    assert_eq!(h.s.stats.retransmissions, 2);
}

#[test]
fn fack_mathis_enters_recovery_when_fack_is_more_than_three_ahead() {
    let mut h = H::with_params(
        "fack",
        TcpConfig {
            fack_rules: Some("mathis".to_string()),
            ..TcpConfig::default()
        },
    );
    h.nine_in_flight();
    assert_eq!(h.ack(0.3, 1, &[(2, 3)]), vec![10]);
    // Second dup ACK, but SACK of 4 puts snd.fack − snd.una = 5 − 1 = 4 > 3: recovery.
    assert_eq!(h.ack(0.31, 1, &[(4, 5), (2, 3)]), vec![1]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.5, 4.0));
    // awnd = snd.nxt − fack + retran = (11 − 5) + 1 = 7, then 6, 5, 4: nothing until cwnd − awnd ≥ 1.
    assert!(h.ack(0.32, 1, &[(4, 6), (2, 3)]).is_empty());
    assert!(h.ack(0.33, 1, &[(4, 7), (2, 3)]).is_empty());
    assert!(h.ack(0.34, 1, &[(4, 8), (2, 3)]).is_empty());
    // awnd = (11 − 9) + 1 = 3 → retransmit 3 (unSACKed below fack = lost).
    assert_eq!(h.ack(0.35, 1, &[(4, 9), (2, 3)]), vec![3]);
}

#[test]
fn rto_backs_off_and_resets_on_a_valid_sample() {
    let mut h = H::std("newreno");
    // Segments 0, 1 sent at 0.1; RTO 0.3 → fires at 0.4.
    assert_eq!(h.s.poll_at(), Some(t(0.4)));
    h.s.on_timer(t(0.4));
    // ssthresh = max(⌊2/2⌋, 2) = 2, cwnd 1, backoff 2 → RTO 0.6; go-back-N resends 0.
    assert_eq!(h.sent(), vec![0]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.0));
    assert!(close(h.s.rto_s(), 0.6));
    assert_eq!(h.s.poll_at(), Some(t(1.0)));
    h.s.on_timer(t(1.0));
    assert!(close(h.s.rto_s(), 1.2));
    h.s.on_timer(t(2.2));
    assert!(close(h.s.rto_s(), 2.4));
    assert_eq!(h.s.stats.timeouts, 3);
    assert_eq!(h.sent(), vec![0, 0], "each timeout resends segment 0");
    // ACK of the retransmitted segment 0: no RTT sample (timing stopped), backoff stays.
    assert_eq!(h.ack(2.3, 1, &[]), vec![1, 2]);
    assert!(close(h.s.rto_s(), 2.4));
    // ACK of segment 2, first sent at 2.3 and timed: 10 ticks → backoff cleared;
    // SRTT 10 ticks, RTTVAR 20 − 5 = 15 (/4) → RTO 25 ticks = 0.25.
    h.ack(2.4, 3, &[]);
    assert!(close(h.s.rto_s(), 0.25));
}

#[test]
fn repeated_timeouts_drive_ssthresh_to_two_and_clear_srtt_past_backoff_eight() {
    let mut h = H::std("newreno");
    h.nine_in_flight(); // cwnd 9, RTO 0.25 armed at 0.2
    h.s.on_timer(t(0.45));
    // First timeout: ssthresh = ⌊9/2⌋ = 4, cwnd 1.
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 4.0));
    // Second: ssthresh = max(⌊1/2⌋, 2) = 2 (ns-2 cuts on every timeout).
    let at = h.s.poll_at().unwrap();
    h.s.on_timer(at);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.0));
    // Backoff 2, 4, then 8: SRTT kept; 16 (> 8): SRTT cleared (ns-2 `rtt_backoff`).
    let at = h.s.poll_at().unwrap();
    h.s.on_timer(at);
    assert!(h.s.srtt_s().is_some());
    assert!(close(h.s.rto_s(), 0.25 * 8.0));
    let at = h.s.poll_at().unwrap();
    h.s.on_timer(at);
    assert!(h.s.srtt_s().is_none());
    assert!(close(h.s.rto_s(), 0.25 * 16.0));
    assert_eq!(h.s.stats.timeouts, 4);
}

#[test]
fn fixed_rto_stops_doubling_after_the_second_timeout() {
    let mut h = H::std("fixed-rto");
    h.s.on_timer(t(0.4));
    // First timeout doubles: 0.6.
    assert!(close(h.s.rto_s(), 0.6));
    h.s.on_timer(t(1.0));
    // Second consecutive timeout: not doubled again.
    assert!(close(h.s.rto_s(), 0.6));
    h.s.on_timer(t(1.6));
    assert!(close(h.s.rto_s(), 0.6));
    assert_eq!(h.s.poll_at(), Some(t(2.2)));
    assert_eq!(h.s.stats.timeouts, 3);
}

#[test]
fn abra_backoff_factor_and_response() {
    let a = Abra::new(0.1, 0.6);
    // 1 + (last − min)/(max − min)
    assert!(close(a.backoff_factor(0.1), 1.0));
    assert!(close(a.backoff_factor(0.35), 1.5));
    assert!(close(a.backoff_factor(0.6), 2.0));
    assert!(close(a.backoff_factor(0.225), 1.25));

    // SYN-ACK at 0.35: SRTT 0.35, RTTVAR 0.175, RTO = 0.35 + 0.7 = 1.05; segments at 0.35.
    let mut h = H::new("abra", TcpConfig::default(), 0.35);
    assert!(close(h.s.rto_s(), 1.05));
    h.s.st.cwnd = 10.0;
    h.s.st.ssthresh = 16.0;
    h.s.on_timer(t(1.4));
    // backoff_new = 1 + (0.35 − 0.1)/(0.6 − 0.1) = 1.5 → RTO 1.575 (NewReno: 2.1).
    assert!(close(h.s.rto_s(), 1.575));
    assert_eq!(h.s.cwnd(), 1.0);
    h.s.on_timer(t(1.4 + 1.575));
    // Same saved SRTT: ×1.5 again → 2.3625 (NewReno: 4.2).
    assert!(close(h.s.rto_s(), 2.3625));
    // ACK covering the retransmitted segment: cwnd = 10/2 = 5, ssthresh = 16/4 = 4, RTO back to 1.05.
    h.ack(3.2, 1, &[]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (5.0, 4.0));
    assert!(close(h.s.rto_s(), 1.05));
}

#[test]
fn newreno_rto_for_comparison_with_abra() {
    let mut h = H::new("newreno", TcpConfig::default(), 0.35);
    h.s.on_timer(t(1.4));
    assert!(close(h.s.rto_s(), 2.1));
}

/// A Vegas in congestion avoidance (cwnd 10, ssthresh 5, window 20, BaseRTT 0.1) with
/// segments 0..=19 sent at 0 and 9 resent at 0.05 (its ACK gives no sample).
fn vegas_ca() -> (Vegas, CcState) {
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(10.0, 1000, 3, 20.0);
    s.ssthresh = 5.0;
    v.on_rtt_sample(&s, 0.1); // the first ACK initialises BaseRTT = 0.1
    for k in 0..20 {
        v.on_transmit(&s, k, t(0.0));
    }
    v.on_transmit(&s, 9, t(0.05));
    (v, s)
}

/// A new ACK: una becomes `una` at `now` (`acked` segments newly acknowledged).
fn vegas_ack(v: &mut Vegas, s: &mut CcState, now: f64, una: u64, acked: u64) {
    s.now = t(now);
    s.snd_una = una;
    v.cong_avoid(s, acked);
}

#[test]
fn vegas_delta_uses_the_round_mean_rtt() {
    // ns-2: Δ = ⌊(expected − actual)·BaseRTT + ½⌋, expected = (t_seqno_ − last_ack_)/BaseRTT.
    assert_eq!(Vegas::delta(11.0, 10.0, 0.1, 0.1), 1);
    assert_eq!(Vegas::delta(11.0, 10.0, 0.1, 0.2), 6);
    let (mut v, mut s) = vegas_ca();
    // Round 1 ends at the first ACK (una 10 ≥ begseq 0) with no samples: rtt = the round's
    // duration 0.1; 21 sent (t_seqno_ 21 − 0), outstanding + 1 = 11:
    // Δ = int((11/0.1 − 21/0.1)·0.1 + ½) = int(−9.5) = −9 < α → +1/cwnd per ACK: 10.1.
    s.snd_nxt = 20;
    vegas_ack(&mut v, &mut s, 0.1, 10, 10);
    assert!(close(s.cwnd, 10.1));
    // Round 2 (begseq 21): 20 leaves at 0.1 and again at 0.2; ACKs inside the round
    // bring samples 0.1 (14, sent at 0) and 0.3 (17); no growth: cwnd − outstanding =
    // 10.1 − 6, 10.1 − 3 > 2. The round-end ACK (20, sent twice) brings none.
    v.on_transmit(&s, 20, t(0.1));
    v.on_transmit(&s, 20, t(0.2));
    s.snd_nxt = 21;
    vegas_ack(&mut v, &mut s, 0.1, 15, 5);
    vegas_ack(&mut v, &mut s, 0.3, 18, 3);
    assert!(close(s.cwnd, 10.1));
    // Mean 0.2 (the minimum would say 0.1); 11 sent, outstanding + 1 = 11:
    // Δ = int((110 − 55)·0.1 + ½) = 6 > β → cwnd − 1.
    s.snd_nxt = 31;
    vegas_ack(&mut v, &mut s, 0.3, 21, 3);
    assert!(close(s.cwnd, 9.1));
    // Round 3 (begseq 32): 21..=30 leave at 0.3; the ACK of 24 at 0.4 samples 0.1; the
    // round-end ACK (31, never sent) none. Mean 0.1 = BaseRTT, una 32: sent = outstanding
    // + 1 = 9 → Δ = 0 < α: +1/cwnd on this and the round's later ACKs while cwnd −
    // outstanding ≤ 2 (9.1 − 8).
    for k in 21..31 {
        v.on_transmit(&s, k, t(0.3));
    }
    vegas_ack(&mut v, &mut s, 0.4, 25, 4);
    assert!(close(s.cwnd, 9.1));
    s.snd_nxt = 40;
    vegas_ack(&mut v, &mut s, 0.4, 32, 7);
    assert!(close(s.cwnd, 9.1 + 1.0 / 9.1));
    // ACKs inside the round (una < begseq 41) repeat the increment, but only while the
    // sender keeps up: cwnd − outstanding = 9.2 − 5 > 2 → none; 9.2 − 8 ≤ 2 → +1/9.1.
    let c = s.cwnd;
    vegas_ack(&mut v, &mut s, 0.4, 35, 3);
    assert!(close(s.cwnd, c));
    s.snd_nxt = 43;
    vegas_ack(&mut v, &mut s, 0.4, 35, 0);
    assert!(close(s.cwnd, c + 1.0 / 9.1));
}

#[test]
fn vegas_sample_of_the_round_end_ack_counts_in_the_next_round() {
    // ns-2 `recv`: the round-end section (tcp-vegas.cc 209-278) runs before the ACK's own
    // sample is added (304-332), so that sample belongs to the next round.
    let (mut v, mut s) = vegas_ca();
    // Round 1 as in vegas_delta_uses_the_round_mean_rtt: cwnd 10.1, next round from 21.
    s.snd_nxt = 20;
    vegas_ack(&mut v, &mut s, 0.1, 10, 10);
    assert!(close(s.cwnd, 10.1));
    // Round 2: the ACK of 14 samples 0.1; the round-end ACK of 20 (sent at 0) samples 0.3.
    // Mean 0.1 (not 0.2): 11 sent, outstanding + 1 = 11 → Δ = 0 < α → +1/cwnd, and
    // 10.1 − 10 ≤ 2.
    v.on_transmit(&s, 20, t(0.0));
    s.snd_nxt = 21;
    vegas_ack(&mut v, &mut s, 0.1, 15, 5);
    s.snd_nxt = 31;
    vegas_ack(&mut v, &mut s, 0.3, 21, 6);
    let c = 10.1 + 1.0 / 10.1;
    assert!(close(s.cwnd, c));
    // Round 3 ends with no sample of its own (31 never sent): mean = the carried 0.3 (the
    // duration would be 0.1 → Δ 0); 11 sent, outstanding + 1 = 11 →
    // Δ = int((110 − 36.7)·0.1 + ½) = 7 > β → cwnd − 1.
    s.snd_nxt = 42;
    vegas_ack(&mut v, &mut s, 0.4, 32, 11);
    assert!(close(s.cwnd, c - 1.0));
}

#[test]
fn vegas_slots_an_ack_wraps_past_keep_their_count() {
    // ns-2 `recv` 306-312: the loop clearing the acknowledged slots runs from
    // (oldack + 1) mod window while ≤ seqno mod window, so an ACK whose range wraps
    // past a multiple of the window clears nothing; the next segment in such a slot
    // counts as sent twice (`transmits` 2).
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(12.0, 1000, 3, 20.0);
    v.on_rtt_sample(&s, 0.1);
    for k in 0..20 {
        v.on_transmit(&s, k, t(0.0));
    }
    s.snd_nxt = 20;
    vegas_ack(&mut v, &mut s, 0.1, 18, 18); // clears slots 0..=17
    v.on_transmit(&s, 20, t(0.1));
    v.on_transmit(&s, 21, t(0.1));
    s.snd_nxt = 22;
    // ACK of 18..=21 (oldack 17, seqno 21): from slot 18, 18 ≤ 1 fails: nothing cleared.
    vegas_ack(&mut v, &mut s, 0.2, 22, 4);
    for k in 22..40 {
        v.on_transmit(&s, k, t(0.2));
    }
    // 38 lands in slot 18, still counting 18's transmission: a third duplicate finds it
    // "retransmitted" → the window is halved, 12 → 6 (¾ would give 9), though the
    // engine never resent it.
    s.now = t(0.5);
    s.snd_una = 38;
    s.snd_nxt = 40;
    s.cwnd = 12.0;
    s.una_sent_at = Some(t(0.2));
    s.una_retransmitted = false;
    v.enter_recovery(&mut s);
    assert_eq!(s.cwnd, 6.0);
}

#[test]
fn vegas_leaves_slow_start_with_ssthresh_two_and_an_eighth_off() {
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(8.0, 1000, 3, 20.0);
    v.on_rtt_sample(&s, 0.1);
    // Round 1 (no samples; inc flag toggles to "no growth").
    s.now = t(0.1);
    s.snd_una = 1;
    s.snd_nxt = 9;
    v.cong_avoid(&mut s, 1);
    assert_eq!(s.cwnd, 8.0);
    // Round 2 (growth round): mean RTT 0.2 vs BaseRTT 0.1: 8 sent, outstanding + 1 = 9 →
    // Δ = ⌊(9/0.1 − 8/0.2)·0.1 + ½⌋ = 5 > γ → ssthresh 2, cwnd = 8 − 8/8 = 7.
    v.on_rtt_sample(&s, 0.2);
    s.now = t(0.3);
    s.snd_una = 10;
    s.snd_nxt = 17;
    v.cong_avoid(&mut s, 1);
    assert_eq!((s.cwnd, s.ssthresh), (7.0, 2.0));
}

#[test]
fn vegas_cuts_by_a_quarter_and_by_half_for_a_retransmitted_segment() {
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(12.0, 1000, 3, 20.0);
    v.on_rtt_sample(&s, 0.1);
    s.now = t(1.0);
    s.una_sent_at = Some(t(0.9));
    s.snd_una = 5;
    s.snd_nxt = 17;
    v.enter_recovery(&mut s);
    // win 12 − ⌊12/4⌋ = 9; ssthresh untouched (still window_ = 20).
    assert_eq!((s.cwnd, s.ssthresh), (9.0, 20.0));
    // A loss of a segment sent before that cut: no second cut.
    s.una_sent_at = Some(t(0.95));
    s.now = t(1.1);
    v.enter_recovery(&mut s);
    assert_eq!(s.cwnd, 9.0);
    // A retransmitted segment sent after the cut: halve.
    s.una_sent_at = Some(t(1.05));
    s.una_retransmitted = true;
    v.enter_recovery(&mut s);
    assert_eq!(s.cwnd, 4.0);
    // A window of 3 or less goes to 2.
    s.cwnd = 3.0;
    s.now = t(1.3);
    s.una_sent_at = Some(t(1.2));
    v.enter_recovery(&mut s);
    assert_eq!(s.cwnd, 2.0);
    // Timeout: ssthresh = ⌊min(cwnd, window)/2⌋ ≥ 2, cwnd = v_slowstart_ = 2.
    s.cwnd = 10.0;
    v.on_timeout(&mut s);
    assert_eq!((s.cwnd, s.ssthresh), (2.0, 5.0));
}

#[test]
fn vegas_fine_grained_retransmit_on_an_early_dup_ack() {
    // min RTO 1 s keeps the coarse timer away; fine-grained timeout after the first sample
    // (0.1 s): SA = 0.8, SD = 0.1 → (0.8/4 + 0.1)/2 = 0.15 s.
    let cfg = TcpConfig {
        min_rto_s: 1.0,
        ..TcpConfig::default()
    };
    let mut h = H::new("vegas", cfg, 0.1);
    // Segment 0 sent at 0.1. Dup ACK at 0.2: 0.1 s elapsed < 0.15: wait (no limited transmit).
    assert!(h.ack(0.2, 0, &[]).is_empty());
    assert_eq!(h.s.stats.fast_retransmits, 0);
    // Dup ACK at 0.26: 0.16 s ≥ 0.15 → retransmit on the 2nd duplicate. Window 2 ≤ 3 → 2,
    // and cwnd_ = v_newcwnd_ + dupacks_ = 2 + 2 (ns-2 inflates cwnd_ itself): 2 and 3 follow.
    assert_eq!(h.ack(0.26, 0, &[]), vec![0, 2, 3]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.0, 20.0));
    // ns-2 Vegas restarts the timer with `reset_rtx_timer(1)`, whose backoff argument
    // defaults to 1: the RTO doubles, max(RTO, minrto_)·2 = 2 s (Reno passes 0).
    assert!(close(h.s.rto_s(), 2.0));
    assert_eq!(h.s.poll_at(), Some(t(2.26)));
}

#[test]
fn vegas_dup_count_is_three_after_a_fine_grained_retransmission() {
    // ns-2 tcp-vegas.cc 346 and 401-402: after retransmitting a segment sent once (on a
    // duplicate) or on a worried new ACK, dupacks_ = numdupacks_ = 3.
    let cfg = TcpConfig {
        min_rto_s: 1.0,
        ..TcpConfig::default()
    };
    let mut h = H::new("vegas", cfg, 0.1);
    assert!(h.ack(0.2, 0, &[]).is_empty());
    // As above: retransmit at the 2nd duplicate (v_timeout 0.15 → ·9/8 = 0.16875), cwnd
    // 2 + 2, v_worried_ = MIN(2, t_seqno_ 2 − last_ack_ −1) = 2; dupacks_ 2 → 3.
    assert_eq!(h.ack(0.26, 0, &[]), vec![0, 2, 3]);
    // Duplicate at 0.27: dupacks_ 4 > 3, 0 resent 0.01 s ago → ++cwnd_ = 5: 4 goes out.
    // (With the true count, 3, this would be a third-duplicate retransmission.)
    assert_eq!(h.ack(0.27, 0, &[]), vec![4]);
    assert_eq!(h.s.cwnd(), 5.0);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    // ACK of 0 at 0.3: dupacks_ 4 > 3 and cwnd_ 5 > v_newcwnd_ 2 → cwnd 2, ssthresh 2.
    // Round end (no sample: 0 was resent): rtt 0.3 − 0, 6 sent, outstanding + 1 = 5 →
    // Δ = ⌊(5/0.1 − 6/0.3)·0.1 + ½⌋ = 3, not > β, not < α: no change. Worried (1 left):
    // segment 1 out since 0.1, 0.2 s ≥ 0.16875 → retransmitted, dupacks_ = 3.
    assert_eq!(h.ack(0.3, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (2.0, 2.0));
    // Three duplicates: dupacks_ 4, 5, 6 — each ++cwnd_ (1 was resent at 0.3, not
    // expired), none is the third: cwnd 3, 4 (still 4 out: 1..=4), 5 → 5 goes out.
    assert!(h.ack(0.31, 1, &[]).is_empty());
    assert!(h.ack(0.32, 1, &[]).is_empty());
    assert_eq!(h.ack(0.33, 1, &[]), vec![5]);
    assert_eq!(h.s.cwnd(), 5.0);
    assert_eq!(h.s.stats.fast_retransmits, 1);
}

/// cwnd 8 with segments 1..=8 out (1 sent at 0.1, 2..=8 at 0.2), min RTO 1 s; then a
/// fast retransmit at the third duplicate (0.23) and a fourth duplicate (0.24).
fn vegas_in_recovery() -> H {
    let cfg = TcpConfig {
        min_rto_s: 1.0,
        ..TcpConfig::default()
    };
    let mut h = H::new("vegas", cfg, 0.1);
    h.s.st.cwnd = 8.0;
    // ACK of 0 at 0.2: v_timeout = 0.146 s (see vegas_timeout_then_dup_acks); 2..=8 leave.
    assert_eq!(h.ack(0.2, 1, &[]), (2..9).collect::<Vec<_>>());
    assert!(h.ack(0.21, 1, &[]).is_empty());
    assert!(h.ack(0.22, 1, &[]).is_empty());
    // Third duplicate: 1 out 0.13 s < 0.146, dupacks_ == 3 → cut 8 − 8/4 = 6 (cwnd never
    // changed), cwnd_ = 6 + 3 = 9, v_timeout ·9/8 = 0.1643; 1 resent and 9 goes out.
    assert_eq!(h.ack(0.23, 1, &[]), vec![1, 9]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (9.0, 20.0));
    assert!(close(h.s.rto_s(), 2.0));
    // Fourth: ++cwnd_ → 10 goes out.
    assert_eq!(h.ack(0.24, 1, &[]), vec![10]);
    assert_eq!(h.s.cwnd(), 10.0);
    h
}

#[test]
fn vegas_retransmits_again_in_recovery_when_the_oldest_segment_expires() {
    // ns-2 tcp-vegas.cc 354-403: every duplicate checks vegas_expire, in recovery too.
    let mut h = vegas_in_recovery();
    // Duplicate 5 at 0.40: 1 resent at 0.23, 0.17 s ≥ v_timeout 0.1648 → expired, guard
    // passes (last action a duplicate-ACK cut). 1 was sent twice: v_timeout doubles
    // (0.3296); cwnd changed at 0.23, not before 1's send time 0.23 → no cut and no
    // ++cwnd_ (cwnd 10); reset_rtx_timer(1) doubles the backoff again: 4 s; dupacks_
    // stays 5. Window 10 from 1 with 10 out: only the retransmission.
    assert_eq!(h.ack(0.40, 1, &[]), vec![1]);
    assert_eq!(h.s.stats.fast_retransmits, 2);
    assert_eq!(h.s.cwnd(), 10.0);
    assert!(close(h.s.rto_s(), 4.0));
    assert_eq!(h.s.poll_at(), Some(t(4.40)));
    // Duplicate 6: 1 resent 0.01 s ago, dupacks_ 6 > 3 → ++cwnd_: 11 goes out.
    assert_eq!(h.ack(0.41, 1, &[]), vec![11]);
    assert_eq!(h.s.cwnd(), 11.0);
    // Duplicate 7 at 0.70: 0.30 s < 0.3296 (doubled, not ·9/8) → ++cwnd_: 12 goes out.
    assert_eq!(h.ack(0.70, 1, &[]), vec![12]);
    // Duplicate 8 at 0.73: 0.33 s ≥ 0.3296 → retransmit; now cwnd changed (0.23) before
    // 1's send time (0.40): cut, 1 sent more than once → ⌊12/2⌋ = 6, cwnd_ = 6 + 8 = 14;
    // window 14 from 1 with 12 out: 1, then 13 and 14. Backoff 8.
    assert_eq!(h.ack(0.73, 1, &[]), vec![1, 13, 14]);
    assert_eq!(h.s.stats.fast_retransmits, 3);
    assert_eq!(h.s.cwnd(), 14.0);
    assert!(close(h.s.rto_s(), 8.0));
    // The new ACK: dupacks_ 8 > 3, cwnd 14 > v_newcwnd_ 6 → 6, ssthresh 2.
    h.ack(0.8, 9, &[]);
    assert_eq!(h.s.ssthresh(), 2.0);
    assert!(h.s.cwnd() <= 6.0 + 1.0 / 6.0 + 1e-9);
}

#[test]
fn vegas_does_not_inflate_cwnd_without_a_cut() {
    // ns-2 tcp-vegas.cc 379-392: cwnd_ = v_newcwnd_ + dupacks_ only inside the cut.
    let mut h = vegas_in_recovery();
    // ACK of 1 at 0.3: dupacks_ 4 > 3, cwnd 10 > 6 → cwnd 6, ssthresh 2; no round end
    // (v_begseq_ is 10). Worried: 2 out since 0.2, 0.1 s < 0.1643 → v_worried_ = 0.
    // Window 6 from 2 with 2..=10 out: nothing.
    assert!(h.ack(0.3, 2, &[]).is_empty());
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (6.0, 2.0));
    assert!(h.ack(0.31, 2, &[]).is_empty());
    assert!(h.ack(0.32, 2, &[]).is_empty());
    // Third duplicate: 2 was sent at 0.2, before the last change (0.23): no cut, no
    // inflation — cwnd stays 6 (the engine's dupwnd would have made the window 9).
    // 2 is resent; 9 are out, window 6: nothing new.
    assert_eq!(h.ack(0.33, 2, &[]), vec![2]);
    assert_eq!(h.s.stats.fast_retransmits, 2);
    assert_eq!(h.s.cwnd(), 6.0);
    // Further duplicates only ++cwnd_: 7, 8, 9, 10 → 11 leaves at the fourth.
    for (i, at) in [0.34, 0.35, 0.36].into_iter().enumerate() {
        assert!(h.ack(at, 2, &[]).is_empty());
        assert_eq!(h.s.cwnd(), 7.0 + i as f64);
    }
    assert_eq!(h.ack(0.37, 2, &[]), vec![11]);
}

/// The run-up shared by the two Vegas-after-a-timeout tests: cwnd 8 with segments
/// 1..=8 out, a timeout at 0.45, six duplicate ACKs (late copies of 3..=8; 1 and 2
/// lost) and the ACK of the retransmitted segment 1 at 0.62. Returns the sender
/// right after that ACK.
fn vegas_timeout_then_dup_acks(p: TcpConfig) -> H {
    let mut h = H::with_params("vegas", p);
    // SYN sample 0.1 s: Vegas SA = 0.8, SD = 0.1. Segments 0, 1 left at 0.1.
    h.s.st.cwnd = 8.0;
    // ACK of 0 at 0.2: sample 0.1 → SA 0.8, SD 0.075, v_timeout = (0.2 + 0.075)/2 · 17/16
    // = 0.146 s. Round end: Δ = ⌊(2/0.1 − 3/0.1)·0.1 + ½⌋ = 0; slow start, the inc flag
    // turns to "no growth" (v_incr_ 0); next round from segment 3. Window 8: 2..=8.
    assert_eq!(h.ack(0.2, 1, &[]), (2..9).collect::<Vec<_>>());
    assert_eq!(h.s.cwnd(), 8.0);
    assert!(close(h.s.rto_s(), 0.25));
    // Timeout at 0.45: ssthresh ⌊8/2⌋ = 4, cwnd v_slowstart_ = 2, v_newcwnd_ = 0,
    // recover_ = 8 (ours 9); go-back-N resends 1 and 2; backoff 2 → RTO 0.5.
    assert_eq!(h.s.poll_at(), Some(t(0.45)));
    h.s.on_timer(t(0.45));
    assert_eq!(h.sent(), vec![1, 2]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (2.0, 4.0));
    // Duplicates 1-3: nothing (the third is held back by `bugFix_`: ACK not above recover_).
    for (i, at) in [0.50, 0.51, 0.52].into_iter().enumerate() {
        assert!(h.ack(at, 1, &[]).is_empty(), "dup {}", i + 1);
        assert_eq!(h.s.cwnd(), 2.0);
    }
    // Duplicates 4 and 5: ++cwnd_ each and send_much: window 3 → 3, window 4 → 4.
    assert_eq!(h.ack(0.53, 1, &[]), vec![3]);
    assert_eq!(h.s.cwnd(), 3.0);
    assert_eq!(h.ack(0.54, 1, &[]), vec![4]);
    assert_eq!(h.s.cwnd(), 4.0);
    // Duplicate 6 at 0.60: segment 1 has been out 0.15 s ≥ v_timeout → vegas_expire
    // fires, the guard holds the retransmission back and cwnd is left alone.
    assert!(h.ack(0.60, 1, &[]).is_empty());
    assert_eq!(h.s.cwnd(), 4.0);
    assert_eq!(h.s.stats.fast_retransmits, 0);
    // The retransmitted 1 arrives: ACK 2 (below v_begseq_ 3: no round end, v_incr_ 0).
    // dupacks_ 6 > 3 and cwnd 4 > v_newcwnd_ 0 → cwnd 0, ssthresh 2 (switch off: 1).
    h
}

#[test]
fn vegas_window_collapses_to_zero_after_a_timeout_as_ns2() {
    let mut h = vegas_timeout_then_dup_acks(TcpConfig::default());
    assert!(
        h.ack(0.62, 2, &[]).is_empty(),
        "window (int)cwnd_ = 0: nothing sent"
    );
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (0.0, 2.0));
    // newtimer: outstanding data → the timer restarts, RTO still backed off (0.5).
    assert_eq!(h.s.poll_at(), Some(t(1.12)));
    // Nothing changes before it fires (no ACKs come back).
    h.s.on_timer(t(1.0));
    assert!(h.sent().is_empty());
    // Timeout: ssthresh = max(⌊0/2⌋, 2) = 2, cwnd 2, go-back-N from 2: 2 and 3.
    h.s.on_timer(t(1.12));
    assert_eq!(h.sent(), vec![2, 3]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (2.0, 2.0));
    assert_eq!(h.s.stats.timeouts, 2);
    assert!(close(h.s.rto_s(), 1.0));
}

#[test]
fn vegas_zero_window_switch_off_keeps_one_segment() {
    let p = TcpConfig {
        vegas_zero_window_after_timeout: Some(false),
        ..TcpConfig::default()
    };
    let mut h = vegas_timeout_then_dup_acks(p);
    // Cut to max(v_newcwnd_, 1) = 1; segments 2..=4 are out, so still nothing to send.
    assert!(h.ack(0.62, 2, &[]).is_empty());
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.0));
    // The ACK of 2..=4 opens the window again without waiting for the RTO.
    assert!(!h.ack(0.7, 5, &[]).is_empty());
    assert!(h.s.cwnd() >= 1.0);
    assert_eq!(h.s.stats.timeouts, 1);
}

/// A variant that zeroes cwnd on its first new ACK (to drive the engine's zero window
/// with nothing outstanding).
struct ZeroOnce(bool);
impl CongestionControl for ZeroOnce {
    fn name(&self) -> &'static str {
        "zero-once"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
    fn engine_options(&self) -> crate::transport::tcp::cc::EngineOptions {
        crate::transport::tcp::cc::EngineOptions {
            zero_window: true,
            ..Default::default()
        }
    }
    fn cong_avoid(&mut self, s: &mut CcState, _acked: u64) {
        if !self.0 {
            self.0 = true;
            s.cwnd = 0.0;
        }
    }
}

#[test]
fn zero_window_with_nothing_outstanding_keeps_the_rto_armed() {
    let mut s = TcpSender::new(&TcpConfig::default(), Box::new(ZeroOnce(false)), 1, 1);
    s.open(t(0.0), None);
    s.on_segment(t(0.1), &syn_ack(false), 0);
    let mut h = H { s };
    assert_eq!(h.sent(), vec![0, 1]);
    // Both acked, cwnd 0: nothing sent, nothing outstanding, yet the timer is set
    // (ns-2 `newtimer`: `cwnd_ < 1`), RTO 0.25 → 0.45.
    assert!(h.ack(0.2, 2, &[]).is_empty());
    assert_eq!(h.s.poll_at(), Some(t(0.45)));
    // The timeout (Reno: cwnd 1, ssthresh 2) sends the next new segment.
    h.s.on_timer(t(0.45));
    assert_eq!(h.sent(), vec![2]);
    assert_eq!(
        (h.s.cwnd(), h.s.ssthresh(), h.s.stats.timeouts),
        (1.0, 2.0, 1)
    );
}

#[test]
fn westwood_plus_estimate_and_ssthresh() {
    let mut w = Westwood::new(true);
    let mut s = CcState::new(10.0, 1000, 3, 20.0);
    s.srtt_s = Some(0.1);
    w.on_rtt_sample(&s, 0.1);
    for (now, acked) in [(0.0, 1), (0.06, 1), (0.12, 2)] {
        s.now = t(now);
        w.pkts_acked(&s, acked);
    }
    // Round of 0.12 s > SRTT with 4 segments: b = 33.33 seg/s, first sample initialises.
    let b1 = 4.0 / 0.12;
    assert!(close(w.bwe, b1));
    // ssthresh = floor(BWE · RTTmin) = floor(3.33) = 3.
    assert_eq!(w.ssthresh(&s), 3.0);
    s.now = t(0.24);
    w.pkts_acked(&s, 6);
    let b2 = 6.0 / 0.12;
    let ns = (7.0 * b1 + b2) / 8.0;
    assert!(close(w.bwe, (7.0 * b1 + ns) / 8.0));
}

#[test]
fn westwood_tustin_filter_and_dup_ack_accounting() {
    let mut w = Westwood::new(false);
    let mut s = CcState::new(10.0, 1000, 3, 20.0);
    s.now = t(0.0);
    w.pkts_acked(&s, 1);
    s.now = t(0.1);
    w.pkts_acked(&s, 1);
    // b = 1/0.1 = 10; α = (1 − 0.1)/(1 + 0.1); bwe = (1 − α)·(10 + 0)/2.
    let a = 0.9 / 1.1;
    assert!(close(w.bwe, (1.0 - a) * 5.0));
    // A dup ACK credits one segment; the cumulative ACK of 3 that follows credits 3 − 1 = 2.
    s.now = t(0.2);
    w.pkts_acked(&s, 0);
    let bwe1 = a * (1.0 - a) * 5.0 + (1.0 - a) * (10.0 + 10.0) / 2.0;
    assert!(close(w.bwe, bwe1));
    s.now = t(0.3);
    w.pkts_acked(&s, 3);
    let bwe2 = a * bwe1 + (1.0 - a) * (20.0 + 10.0) / 2.0;
    assert!(close(w.bwe, bwe2));
}

#[test]
fn westwood_filter_stays_non_negative_across_a_long_gap() {
    let mut w = Westwood::new(false);
    let mut s = CcState::new(10.0, 1000, 3, 20.0);
    for k in 0..10 {
        s.now = t(0.1 * f64::from(k));
        w.pkts_acked(&s, 1);
    }
    let before = w.bwe;
    assert!(before > 0.0);
    // 3 s of silence (> 2τ = 1 s): α = (2τ − Δ)/(2τ + Δ) would be −0.5; with virtual null
    // samples every τ/2 the estimate decays toward zero and stays positive.
    s.now = t(0.9 + 3.0);
    w.pkts_acked(&s, 1);
    assert!(w.bwe > 0.0 && w.bwe < before, "{} vs {before}", w.bwe);
}

#[test]
fn westwood_recovery_never_raises_cwnd() {
    let mut w = Westwood::new(false);
    let mut s = CcState::new(4.0, 1000, 3, 20.0);
    w.bwe = 100.0; // segments/s
    w.on_rtt_sample(&s, 0.1); // RTTmin 0.1 → BWE·RTTmin = 10 segments
    w.enter_recovery(&mut s);
    assert_eq!((s.cwnd, s.ssthresh), (4.0, 10.0));
    s.cwnd = 16.0;
    w.enter_recovery(&mut s);
    assert_eq!((s.cwnd, s.ssthresh), (10.0, 10.0));
}

// ----- tcp-ap, mpr, elfn ---------------------------------------------------------------

/// A sender of `variant` told the path has `hops` hops before the SYN-ACK (t = 0.1).
fn with_hops(variant: &str, hops: u32) -> H {
    let cc = by_name(variant, &TcpConfig::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    s.note_path_hops(hops);
    s.on_segment(t(0.1), &syn_ack(false), 0);
    H { s }
}

/// The authors' module's n-hop delay for RTT `r` on `h` hops (MSS 1000, 2 Mb/s assumed).
fn ap_sample(r: f64, h: u32) -> f64 {
    let bw = 2e6 / 8.0;
    let q = 0.5 * (r / f64::from(h) - (1112.0 + 112.0) / bw);
    let one = q + 1112.0 / bw;
    if h >= 4 {
        4.0 * one
    } else {
        one
    }
}

#[test]
fn tcp_ap_four_hop_delay_adev_and_delay_bound() {
    let mut a = TcpAp::new(0.7, 50, 4);
    let mut s = CcState::new(2.0, 1000, 3, 20.0);
    s.path_hops = Some(8);
    assert_eq!(
        a.pacing_gap_s(&s),
        None,
        "no pacing before the first sample"
    );
    a.on_rtt_sample(&s, 0.2);
    assert!(close(a.fhd_s.unwrap(), ap_sample(0.2, 8)));
    // Short paths are paced by one hop's delay, not the whole path's.
    s.path_hops = Some(2);
    a.on_rtt_sample(&s, 0.2);
    let (x1, x2) = (ap_sample(0.2, 8), ap_sample(0.2, 2));
    assert!(x2 < 0.2 / 2.0, "one hop of two: {x2}");
    let fhd = 0.7 * x1 + 0.3 * x2;
    assert!(close(a.fhd_s.unwrap(), fhd));
    // adev = mean |x − μ| / μ over the samples {x1, x2}.
    let mu = (x1 + x2) / 2.0;
    let adev = ((x1 - mu).abs() + (x2 - mu).abs()) / 2.0 / mu;
    assert!(close(a.adev(), adev));
    assert!(close(a.pacing_gap_s(&s).unwrap(), (1.0 + 2.0 * adev) * fhd));
    // A sample at or above the 0.5 s delay bound is discarded.
    s.path_hops = Some(4);
    a.on_rtt_sample(&s, 4.0);
    assert!(close(a.fhd_s.unwrap(), fhd));
}

#[test]
fn tcp_ap_spaces_new_segments_by_the_gap_but_not_retransmissions() {
    let mut h = with_hops("tcp-ap", 4);
    // The SYN's sample R = 0.1 on 4 hops: one sample, adev 0 → gap = FHD.
    let gap = ap_sample(0.1, 4);
    assert!(close(h.s.pacing_gap_s().unwrap(), gap));
    // Window 2, but only segment 0 leaves at 0.1; segment 1 waits for the pacing timer.
    assert_eq!(h.sent(), vec![0]);
    let next = h.s.poll_at().unwrap();
    assert!((next.as_secs_f64() - (0.1 + gap)).abs() < 2e-9);
    h.s.on_timer(next);
    assert_eq!(h.sent(), vec![1]);
    assert_eq!(h.s.stats.paced_holds, 1);
    // A timeout is not backed off (the module's reset_rtx_timer(0, 0)).
    let rto = h.s.rto_s();
    let at = h.s.poll_at().unwrap();
    h.s.on_timer(at);
    assert_eq!(h.s.stats.timeouts, 1);
    assert!(close(h.s.rto_s(), rto));
    // The go-back-N retransmission of 0 is not paced.
    assert_eq!(h.sent(), vec![0]);
}

#[test]
fn mpr_ewrtt_is_a_decaying_maximum() {
    let mut m = Mpr::new(0.99, 3.0);
    let mut s = CcState::new(4.0, 1000, 3, 20.0);
    m.on_rtt_sample(&s, 0.1);
    assert!(close(m.mxrtt_s().unwrap(), 0.3));
    // A smaller sample: ewrtt = 0.99^(1/4)·0.1.
    m.on_rtt_sample(&s, 0.05);
    assert!(close(m.ewrtt_s.unwrap(), 0.99f64.powf(0.25) * 0.1));
    // A larger one replaces it.
    s.cwnd = 9.5;
    m.on_rtt_sample(&s, 0.2);
    assert!(close(m.mxrtt_s().unwrap(), 0.6));
}

#[test]
fn mpr_ignores_dup_acks_detects_drops_after_mxrtt_and_halves_once_per_window() {
    let mut h = H::std("mpr");
    // Handshake sample 0.1 → ewrtt 0.1; the ACK at 0.2 gives 0.1 again: mxrtt = 0.3.
    h.nine_in_flight(); // una 1, max 10, cwnd 9; segments 2..=9 sent at 0.2 with cwnd 9
    assert!(close(h.s.loss_timeout_s().unwrap(), 0.3));
    // Reordering: 2, 3, 4 arrive before 1 → three (and more) duplicate ACKs: no retransmission.
    for now in [0.3, 0.31, 0.32, 0.325] {
        assert!(h.ack(now, 1, &[]).is_empty());
    }
    assert_eq!(
        (h.s.stats.retransmissions, h.s.stats.fast_retransmits),
        (0, 0)
    );
    assert_eq!(h.s.cwnd(), 9.0);
    // Segment 1 arrives late: ACK up to 5. Sample from 4 (sent 0.2): 0.13 > 0.99^(1/9)·0.1 →
    // ewrtt 0.13, mxrtt 0.39. Slow start +1 per ACK: 9 → 10; to-be-ack {5..9} → 10..=14 go out.
    assert_eq!(h.ack(0.33, 5, &[]), (10..15).collect::<Vec<_>>());
    assert_eq!(h.s.cwnd(), 10.0);
    assert!(close(h.s.loss_timeout_s().unwrap(), 0.39));
    // Segment 5 is lost: duplicate ACKs still do nothing.
    assert!(h.ack(0.4, 5, &[]).is_empty());
    // 5..=9 were sent at 0.2: declared dropped at 0.2 + 0.39 = 0.59.
    assert_eq!(h.s.poll_at(), Some(t(0.59)));
    h.s.on_timer(t(0.59));
    // First drop (5, sent with cwnd 9): cwnd = 9/2 = 4.5 = ssthresh; 6..=9 are in the
    // memorize list: no further halving. to-be-ack {10..=14} = 5 ≥ 4: nothing resent yet.
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.5, 4.5));
    assert_eq!(h.s.stats.drops_detected, 5);
    assert!(h.sent().is_empty());
    // 10..=14 (sent 0.33) expire at 0.72: in memorize, no cut; the window refills with
    // the oldest dropped segments.
    assert_eq!(h.s.poll_at(), Some(t(0.72)));
    h.s.on_timer(t(0.72));
    assert_eq!(h.sent(), vec![5, 6, 7, 8]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.5, 4.5));
    assert_eq!(h.s.stats.timeouts, 0);
    // The retransmissions are lost too: dropped a second time after 2·mxrtt (0.72 + 0.78):
    // paper 002's Timeout — ssthresh = 4.5/2 = 2.25, cwnd 1 — once for the window.
    assert_eq!(h.s.poll_at(), Some(t(1.5)));
    h.s.on_timer(t(1.5));
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.25));
    assert_eq!(h.sent(), vec![5]);
    assert_eq!(h.s.stats.timeouts, 4);
    assert_eq!(h.s.stats.fast_retransmits, 0);
}

#[test]
fn elfn_freezes_probes_and_resumes_with_the_frozen_state() {
    let mut h = H::std("elfn");
    h.nine_in_flight();
    // Samples 0.1, 0.1: SRTT 0.1, RTTVAR 0.0375 → RTO 0.25, armed at 0.2 → fires at 0.45.
    assert!(close(h.s.rto_s(), 0.25));
    assert_eq!(h.s.poll_at(), Some(t(0.45)));
    h.s.on_route_notice(t(0.3), false);
    assert!(h.s.frozen());
    // The RTO is off; the first probe is due one interval (2 s) later.
    assert_eq!(h.s.poll_at(), Some(t(2.3)));
    h.s.on_timer(t(2.3));
    assert_eq!(
        h.sent(),
        vec![1],
        "the probe is the oldest unacknowledged segment"
    );
    assert_eq!(h.s.poll_at(), Some(t(4.3)));
    h.s.on_timer(t(4.3));
    assert_eq!(h.sent(), vec![1]);
    assert_eq!((h.s.stats.probes, h.s.stats.timeouts), (2, 0));
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (9.0, 100.0));
    assert!(close(h.s.rto_s(), 0.25));
    // Route back at 5.0: go back to segment 1 with the frozen window of 9; RTO restarted.
    h.s.on_route_notice(t(5.0), true);
    assert!(!h.s.frozen());
    assert_eq!(h.sent(), (1..10).collect::<Vec<_>>());
    assert_eq!(h.s.poll_at(), Some(t(5.25)));
    // A second failure: an ACK of segments sent before it is processed but does not thaw
    // (Holland & Vaidya: only the route notice or a probe's ACK ends stand-by).
    h.s.on_route_notice(t(5.1), false);
    assert!(h.s.frozen() && h.sent().is_empty());
    // ACK 5 (no RTT sample: sent across the freeze): +1 per ACK → cwnd 10; still frozen.
    assert!(h.ack(5.15, 5, &[]).is_empty());
    assert!(h.s.frozen());
    assert_eq!(h.s.cwnd(), 10.0);
    // The probe (segment 5) at 7.1; its ACK (10) thaws: cwnd 11, go-back-N from 10 → 10..=20.
    h.s.on_timer(t(7.1));
    assert_eq!(h.sent(), vec![5]);
    assert_eq!(h.ack(7.2, 10, &[]), (10..21).collect::<Vec<_>>());
    assert!(!h.s.frozen());
    assert_eq!(h.s.cwnd(), 11.0);
    assert_eq!(h.s.stats.route_freezes, 2);
}

#[test]
fn route_notices_are_ignored_by_other_variants_and_before_the_handshake() {
    let mut h = H::std("newreno");
    h.s.on_route_notice(t(0.15), false);
    assert!(!h.s.frozen());
    assert_eq!(h.s.poll_at(), Some(t(0.4)));
    let cc = by_name("elfn", &TcpConfig::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    s.on_route_notice(t(0.05), false);
    assert!(!s.frozen());
}

#[test]
fn vegas_data_segments_leave_out_their_headers_as_ns2() {
    // ns-2.35 `VegasTcpAgent::output` sends packetSize_ bytes without headersize():
    // its data packets are 1000 B where every other agent's are 1040 B.
    let headerless = |variant: &str, p: TcpConfig| {
        let mut s = TcpSender::new(&TcpConfig::default(), by_name(variant, &p).unwrap(), 1, 1);
        s.open(t(0.0), None);
        let mut v: Vec<Segment> = Vec::new();
        s.take_output(&mut v);
        assert!(
            v.iter().all(|seg| !seg.hdr.headerless),
            "the SYN-like first packet keeps its 40 B"
        );
        s.on_segment(t(0.1), &syn_ack(false), 0);
        v.clear();
        s.take_output(&mut v);
        assert!(!v.is_empty());
        v.iter().map(|seg| seg.hdr.headerless).collect::<Vec<_>>()
    };
    assert_eq!(headerless("vegas", TcpConfig::default()), vec![true, true]);
    assert_eq!(
        headerless(
            "vegas",
            TcpConfig {
                vegas_counts_headers: Some(true),
                ..TcpConfig::default()
            }
        ),
        vec![false, false]
    );
    assert_eq!(
        headerless("newreno", TcpConfig::default()),
        vec![false, false]
    );
}

// ----- FACK, ns-2.35 `Agent/TCP/Fack` (default `fack_rules = "ns2"`) ---------------------
// Expected values from `tcp-fack.cc` / `scoreboard.cc`; ns-2 numbering: last_ack = una − 1,
// fack = highest SACKed, dupacks = fack − last_ack − 1, send while
// snd_nxt ≤ fack + ⌊cwnd⌋ − retran_data.

#[test]
fn fack_ns2_counts_dupacks_from_fack_sends_nothing_before_and_restarts_cwnd_at_one() {
    let mut h = H::std("fack");
    assert_eq!(h.s.variant(), "fack");
    h.nine_in_flight();
    // Segment 1 lost. fack 2 → dupacks 1, fack 3 → 2: no limited transmit (dupacks ≠ 0).
    assert!(h.ack(0.3, 1, &[(2, 3)]).is_empty());
    assert!(h.ack(0.31, 1, &[(2, 4)]).is_empty());
    assert_eq!(h.s.stats.fast_retransmits, 0);
    // fack 4 → dupacks 3: ssthresh = ⌊9/2⌋ = 4, cwnd = wnd_restart_ = 1, resend 1
    // (recover_ = t_seqno_ = 10); no send_much on this ACK.
    assert_eq!(h.ack(0.32, 1, &[(2, 5)]), vec![1]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 4.0));
    assert!(h.s.in_recovery());
    // Every ACK in recovery opens cwnd (slow start 1 → 2 → 3 → 4): 10 ≤ 5 + 2 − 1? no;
    // 10 ≤ 6 + 3 − 1? no; 10 ≤ 7 + 4 − 1 = 10: new segment 10.
    assert!(h.ack(0.33, 1, &[(2, 6)]).is_empty());
    assert!(h.ack(0.34, 1, &[(2, 7)]).is_empty());
    assert_eq!(h.ack(0.35, 1, &[(2, 8)]), vec![10]);
    assert_eq!(h.s.cwnd(), 4.0);
    // Congestion avoidance now: 4.25, ⌊4.25⌋ = 4, 11 ≤ 8 + 4 − 1 → 11; then 12.
    assert_eq!(h.ack(0.36, 1, &[(2, 9)]), vec![11]);
    assert!(close(h.s.cwnd(), 4.25));
    assert_eq!(h.ack(0.37, 1, &[(2, 10)]), vec![12]);
    // The retransmission of 1 arrives: ACK 9 (ns-2 seqno), no SACK blocks, but recover_
    // (10) is not yet covered: still in recovery; retran_data back to 0 → 13 ≤ 9 + 4.
    assert_eq!(h.ack(0.38, 10, &[]), vec![13]);
    assert!(h.s.in_recovery());
    // ACK 10 ≥ recover_ without SACK blocks ends recovery; send_much: 14 ≤ 10 + 4.
    assert_eq!(h.ack(0.39, 11, &[]), vec![14]);
    assert!(!h.s.in_recovery());
    assert_eq!(h.s.stats.retransmissions, 1);
}

#[test]
fn fack_ns2_new_ack_with_sack_blocks_does_not_open_cwnd() {
    let mut h = H::std("fack");
    h.nine_in_flight();
    // ACK of 1 and 2 with 4 SACKed (3 lost): `oldack` path, no `opencwnd`; fack 4,
    // dupacks = 4 − 2 − 1 = 1 → nothing sent (the RFC engines would send 10 and 11).
    assert!(h.ack(0.3, 3, &[(4, 5)]).is_empty());
    assert_eq!(h.s.cwnd(), 9.0);
    assert_eq!(h.s.snd_una(), 3);
    // A plain new ACK (no blocks) is `newack` + `opencwnd`: cwnd 10, fack = last_ack 4,
    // window from 5: 5 + 10 − 1 = 14 → 10..=14.
    assert_eq!(h.ack(0.31, 5, &[]), (10..15).collect::<Vec<_>>());
    assert_eq!(h.s.cwnd(), 10.0);
}

#[test]
fn fack_ns2_lost_retransmission_holds_until_the_timeout_which_keeps_recovery() {
    let mut h = H::std("fack");
    h.nine_in_flight();
    assert!(h.ack(0.3, 1, &[(2, 3)]).is_empty());
    assert!(h.ack(0.31, 1, &[(2, 4)]).is_empty());
    assert_eq!(h.ack(0.32, 1, &[(2, 5)]), vec![1]);
    assert!(h.ack(0.33, 1, &[(2, 6)]).is_empty());
    assert!(h.ack(0.34, 1, &[(2, 7)]).is_empty());
    assert_eq!(h.ack(0.35, 1, &[(2, 8)]), vec![10]);
    // 10 is SACKed: the retransmission of 1 (sent when snd_nxt was 10) is lost again
    // (`CheckSndNxt`): nothing more is sent, although the window would allow it.
    assert!(h.ack(0.36, 1, &[(10, 11), (2, 8)]).is_empty());
    let rto_before = h.s.rto_s();
    assert!(h.ack(0.37, 1, &[(2, 11)]).is_empty());
    // Every ACK restarted the timer (`newtimer` in `oldack`, before the RTT update).
    let due = h.s.poll_at().unwrap().as_secs_f64();
    assert!((due - (0.37 + rto_before)).abs() < 1e-6);
    let rto = h.s.rto_s();
    h.s.on_timer(t(due));
    // Timeout: ssthresh = ⌊4.49/2⌋ = 2, cwnd 1, backoff ×2, scoreboard cleared,
    // fack = last_ack 0, go back to 1; fast recovery is not left.
    assert_eq!(h.sent(), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 2.0));
    assert!(close(h.s.rto_s(), 2.0 * rto));
    assert!(h.s.in_recovery());
    assert_eq!(h.s.stats.timeouts, 1);
    // ACK of everything sent (0..=10) without SACK blocks: 10 ≥ recover_, recovery ends;
    // cwnd 1 → 2 (opencwnd in recovery), 11 ≤ 10 + 2 − 0 → 11; 12 ≤ 12 → 12.
    assert_eq!(h.ack(due + 0.1, 11, &[]), vec![11, 12]);
    assert!(!h.s.in_recovery());
}

#[test]
fn fack_ns2_a_held_up_dup_ack_samples_its_own_old_echo_and_backoff_stays() {
    // The sender reads the echo the ACK carries (fixed by the sink when it made the
    // ACK), not the send times it knows now. ns-2 7-hop chains: ACKs held while AODV
    // repairs the route arrive seconds late, after timeouts that backed the timer off
    // and retransmissions that are not timed, so `t_backoff_` is still up.
    let mut h = H::std("fack");
    h.nine_in_flight();
    // Timeout at 0.2 + 0.25: backoff 2, go back to 1 (untimed: a retransmission).
    h.s.on_timer(t(0.45));
    assert_eq!(h.sent(), vec![1]);
    assert!(close(h.s.rto_s(), 0.5));
    // A duplicate ACK made at ~0.35 echoing segment 0 (sent 0.1) arrives at 2.1:
    // `newtimer` first (due 2.1 + 0.5, the old RTO with backoff 2), then `rtt_update`
    // with 2.1 − 0.1 = 200 ticks: t_srtt = 80 + (200 − 10) = 270, t_rttvar =
    // 15 + (190 − 3) = 202, t_rtxcur = ((202 << 3) + 270) >> 3 = 235 ticks; backoff
    // 2 is kept (no timed segment acked): RTO 4.7 s.
    assert!(h.ack_echo(2.1, 1, &[(2, 3)], 0.1).is_empty());
    assert!((h.s.poll_at().unwrap().as_secs_f64() - 2.6).abs() < 1e-6);
    assert!(close(h.s.srtt_s().unwrap(), 0.3375));
    assert!(close(h.s.rto_s(), 4.7), "rto {}", h.s.rto_s());
}

#[test]
fn fack_mathis_rules_stay_available() {
    let p = TcpConfig {
        fack_rules: Some("mathis".to_string()),
        ..TcpConfig::default()
    };
    assert_eq!(by_name("fack", &p).unwrap().recovery(), Recovery::Fack);
    assert_eq!(
        by_name("fack", &TcpConfig::default()).unwrap().recovery(),
        Recovery::FackNs2
    );
}

#[test]
fn fack_ns2_dup_acks_sample_the_rtt_from_the_last_in_order_segment() {
    let mut h = H::std("fack");
    h.nine_in_flight();
    assert!(close(h.s.srtt_s().unwrap(), 0.1));
    // Segment 1 lost; the ACK caused by segment 2 (sent at 0.2) echoes the timestamp
    // of segment 0 (sent at 0.1, the last in-order arrival: `ts_echo_bugfix_`), so
    // `oldack` samples 0.3 − 0.1 = 20 ticks: SRTT = (80 + 20 − 10)/8 = 11.25 ticks.
    // (Segment 2's own timestamp would give 10 ticks and leave SRTT at 0.1 s.)
    assert!(h.ack_echo(0.3, 1, &[(2, 3)], 0.1).is_empty());
    let srtt = h.s.srtt_s().unwrap();
    assert!(srtt > 0.11 && srtt < 0.115, "srtt {srtt}");
    // The RFC engine (Mathis rules) takes no sample from a duplicate ACK.
    let mut m = H::with_params(
        "fack",
        TcpConfig {
            fack_rules: Some("mathis".to_string()),
            ..TcpConfig::default()
        },
    );
    m.nine_in_flight();
    m.ack(0.3, 1, &[(2, 3)]);
    assert!(close(m.s.srtt_s().unwrap(), 0.1));
}

#[test]
fn fack_ns2_a_send_with_nothing_outstanding_restarts_the_timer_with_the_new_rto() {
    // `window_` 9: nothing new goes out during recovery (`t_seqno_ > highest_ack_ + wnd_`).
    let mut h = H::new(
        "fack",
        TcpConfig {
            window_pkts: 9,
            ..TcpConfig::default()
        },
        0.1,
    );
    h.nine_in_flight();
    assert!(h.ack_echo(0.3, 1, &[(2, 3)], 0.1).is_empty());
    assert!(h.ack_echo(0.31, 1, &[(2, 4)], 0.1).is_empty());
    assert_eq!(h.ack_echo(0.32, 1, &[(2, 5)], 0.1), vec![1]);
    for (i, top) in (6..=10).enumerate() {
        assert!(h
            .ack_echo(0.33 + 0.01 * i as f64, 1, &[(2, top)], 0.1)
            .is_empty());
    }
    let rto_before = h.s.rto_s();
    // The retransmission of 1 (sent at 0.32) fills the hole: ACK of 0..=9, no SACK blocks,
    // echo 0.32. Segment 10 (recover_) is not covered, so recovery goes on (`oldack`
    // path): `newtimer` sets the timer with the old RTO, then `rtt_update` takes the
    // 0.13-s sample; `send_much` sends new data from 10 with nothing outstanding, and
    // `output` (`highest_ack_ == maxseq_`) restarts the timer with the new, shorter RTO.
    // cwnd 4 → 4.25 → 4.49 → 4.71: 10..=13 (10 ≤ 9 + 4 − 0 … 13 ≤ 13). RTO 0.55 → 0.51 s.
    assert_eq!(h.ack_echo(0.45, 10, &[], 0.32), vec![10, 11, 12, 13]);
    assert!(close(rto_before, 0.55) && close(h.s.rto_s(), 0.51));
    assert!(h.s.in_recovery());
    let due = h.s.poll_at().unwrap().as_secs_f64();
    assert!(h.s.rto_s() < rto_before);
    assert!((due - (0.45 + h.s.rto_s())).abs() < 1e-6, "due {due}");
}

#[test]
fn fack_ns2_timeout_with_nothing_outstanding_restarts_at_the_initial_window() {
    let mut h = H::std("fack");
    h.nine_in_flight();
    // Fast retransmit of 1 with nothing new sent since: recover_ = t_seqno_ = 10.
    assert!(h.ack_echo(0.3, 1, &[(2, 3)], 0.1).is_empty());
    assert!(h.ack_echo(0.31, 1, &[(2, 4)], 0.1).is_empty());
    assert_eq!(h.ack_echo(0.32, 1, &[(2, 5)], 0.1), vec![1]);
    // No more ACKs: the timeout resends 1 (fack_ = last_ack_ 0, t_seqno_ 1); recovery stays.
    let due = h.s.poll_at().unwrap();
    h.s.on_timer(due);
    assert_eq!(h.sent(), vec![1]);
    assert!(h.s.in_recovery());
    let t0 = due.as_secs_f64();
    // Late SACKs of 3..=8: fack 8, t_seqno_ 9; cwnd 1 → 2; 1 and 2 resent with snd_nxt 9.
    assert_eq!(h.ack_echo(t0 + 0.01, 1, &[(3, 9)], 0.1), vec![1, 2]);
    // SACK of 9 > snd_nxt 9 of those retransmissions: lost again (`CheckSndNxt`), hold.
    assert!(h.ack_echo(t0 + 0.02, 1, &[(3, 10)], 0.1).is_empty());
    // The first copies arrive after all: ACK of 0..=9 without blocks. 9 < recover_ 10:
    // recovery and the hold stay, nothing is sent, nothing is outstanding; `oldack`
    // left the timer running, set with the RTO before this ACK's sample (`newtimer`).
    let rto_before = h.s.rto_s();
    assert!(h.ack_echo(t0 + 0.03, 10, &[], 0.32).is_empty());
    assert_eq!((h.s.snd_una(), h.s.snd_max()), (10, 10));
    let rto = h.s.rto_s();
    // cwnd after the timeout: 1 → 2 (slow start to ssthresh 2) → 2.5 → 2.9; ssthresh 2.
    let (cwnd, ssthresh) = (h.s.cwnd(), h.s.ssthresh());
    assert!(close(cwnd, 2.9) && ssthresh == 2.0);
    let due = h.s.poll_at().expect("ns-2's timer still runs");
    assert!((due.as_secs_f64() - (t0 + 0.03 + rto_before)).abs() < 1e-6);
    // `timeout` with highest_ack_ == maxseq_ (`slow_start_restart_`, `restart_bugfix_`):
    // cwnd = windowInit_ 2, ssthresh kept, no backoff; sending resumes: 10 and 11.
    h.s.on_timer(due);
    assert_eq!(h.sent(), vec![10, 11]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (2.0, ssthresh));
    assert!(close(h.s.rto_s(), rto));
    assert!(h.s.in_recovery());
    // The ACK of 10 covers recover_: recovery ends.
    h.ack(due.as_secs_f64() + 0.1, 11, &[]);
    assert!(!h.s.in_recovery());
}

/// The recipe "add a TCP variant" (docs/architecture.md) end to end with a variant
/// defined here: a struct implementing the hooks it changes and a registry entry are
/// all it takes. The entry goes through the same lookup ([`super::find`]) and
/// constructor call (`make`) as the built-in `REGISTRY`, and the sender runs it as any
/// built-in; a built-in is one more line in that list.
mod a_variant_defined_outside_the_registry {
    use super::*;
    use crate::transport::tcp::variants::{find, Variant};

    /// A window that never grows: the smallest variant that differs from Reno.
    struct ConstantWindow;

    impl CongestionControl for ConstantWindow {
        fn name(&self) -> &'static str {
            "constant-window"
        }
        fn recovery(&self) -> Recovery {
            Recovery::NewReno
        }
        fn cong_avoid(&mut self, _s: &mut CcState, _acked: u64) {}
    }

    const VARIANT: Variant = Variant::new("constant-window", |_| Box::new(ConstantWindow));
    const REGISTRY: &[Variant] = &[VARIANT];

    #[test]
    fn is_found_built_and_run_like_a_built_in() {
        let cfg = TcpConfig::default();
        let entry = find(REGISTRY, "constant-window").expect("registered");
        assert!(find(REGISTRY, "newreno").is_none());
        assert_eq!((entry.check)(&cfg), Ok(()));
        let cc = (entry.make)(&cfg);
        assert_eq!(cc.name(), entry.name);
        let mut s = TcpSender::new(&cfg, cc, 1, 1);
        s.open(t(0.0), None);
        s.on_segment(t(0.1), &syn_ack(false), 0);
        let mut h = H { s };
        assert_eq!(h.sent(), vec![0, 1], "windowInit_ 2");
        // Every new ACK keeps cwnd at 2 (Reno would open it to 3, then 4):
        // each ACK of one segment releases exactly one new segment.
        assert_eq!(h.ack(0.2, 1, &[]), vec![2]);
        assert_eq!(h.ack(0.3, 2, &[]), vec![3]);
        assert_eq!(h.s.cwnd(), 2.0);
        assert_eq!(h.s.variant(), "constant-window");
        // The built-in path gives Reno's growth for comparison.
        let mut r = H::std("newreno");
        assert_eq!(r.ack(0.2, 1, &[]), vec![2, 3]);
    }
}
