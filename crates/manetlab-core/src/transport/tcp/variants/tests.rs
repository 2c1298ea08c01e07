//! Variants driven directly with scripted ACK/loss sequences. Every expected
//! value is worked out by hand in the comments.
//!
//! Common fixture: SYN at t = 0, SYN-ACK at t = 0.1 → first RTT sample 0.1 s:
//! SRTT 0.1, RTTVAR 0.05, RTO = 0.1 + 4·0.05 = 0.3 s. Segments 0 and 1 (initial
//! window 2) leave at t = 0.1.

use super::abra::Abra;
use super::mpr::Mpr;
use super::tcp_ap::TcpAp;
use super::vegas::Vegas;
use super::westwood::Westwood;
use crate::packet::{TcpFlags, TcpHeader, TCP_MAX_SACK_BLOCKS};
use crate::sim::SimTime;
use crate::transport::tcp::cc::{CcState, CongestionControl, VariantParams};
use crate::transport::tcp::{by_name, Segment, TcpConfig, TcpSender};

const MSS: u64 = 1000;

fn t(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

fn hdr(ack_abs: u64, flags: TcpFlags, sack_segs: &[(u64, u64)]) -> TcpHeader {
    let mut h = TcpHeader {
        src_port: 1,
        dst_port: 1,
        seq: 1,
        ack: ack_abs as u32,
        flags,
        window: 20 * MSS as u32,
        mss: None,
        sack_permitted: false,
        sack: [(0, 0); TCP_MAX_SACK_BLOCKS],
        sack_len: 0,
    };
    for (i, (l, r)) in sack_segs.iter().enumerate() {
        h.sack[i] = ((1 + l * MSS) as u32, (1 + r * MSS) as u32);
    }
    h.sack_len = sack_segs.len() as u8;
    h
}

struct H {
    s: TcpSender,
}

impl H {
    fn new(variant: &str, cfg: TcpConfig, synack_at: f64) -> H {
        let cc = by_name(variant, &VariantParams::default()).unwrap();
        let mut s = TcpSender::new(&cfg, cc, 1, 1);
        s.open(t(0.0), None);
        let mut syn_ack = hdr(1, TcpFlags { syn: true, ack: true, fin: false }, &[]);
        syn_ack.seq = 0;
        syn_ack.sack_permitted = true;
        s.on_segment(t(synack_at), &syn_ack, 0);
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
        self.s.on_segment(t(now), &hdr(1 + segs * MSS, TcpFlags { ack: true, ..TcpFlags::default() }, sack), 0);
        self.sent()
    }
    /// Bring the sender to una = 1, max = 10, cwnd 9 (slow start, ssthresh 100).
    fn nine_in_flight(&mut self) {
        self.s.st.cwnd = 8.0;
        self.s.st.ssthresh = 100.0;
        // ACK of segment 0: slow start 8 → 9; window 9 from una 1 → segments 2..=9.
        assert_eq!(self.ack(0.2, 1, &[]), (2..10).collect::<Vec<_>>());
        assert_eq!(self.s.cwnd(), 9.0);
        assert_eq!((self.s.snd_una(), self.s.snd_max()), (1, 10));
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn handshake_rto_and_initial_window() {
    let mut h = H::std("newreno");
    assert!(close(h.s.srtt_s().unwrap(), 0.1));
    assert!(close(h.s.rto_s(), 0.3));
    assert_eq!(h.s.cwnd(), 2.0);
    assert_eq!((h.s.snd_una(), h.s.snd_max()), (0, 2));
    assert!(h.sent().is_empty());
}

#[test]
fn tahoe_goes_to_one_segment_on_three_dup_acks_and_goes_back_n() {
    let mut h = H::std("tahoe");
    h.nine_in_flight();
    assert!(h.ack(0.3, 1, &[]).is_empty());
    assert!(h.ack(0.31, 1, &[]).is_empty());
    // Third dup ACK: ssthresh = max(floor(9/2), 2) = 4, cwnd = 1, retransmit segment 1.
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (1.0, 4.0));
    assert_eq!(h.s.stats.fast_retransmits, 1);
    // Further dup ACKs do nothing (no fast recovery).
    assert!(h.ack(0.33, 1, &[]).is_empty());
    assert_eq!(h.s.cwnd(), 1.0);
    // ACK of segment 1: slow start cwnd 2, go-back-N resends 2 and 3.
    assert_eq!(h.ack(0.45, 2, &[]), vec![2, 3]);
    assert_eq!(h.s.cwnd(), 2.0);
}

#[test]
fn reno_inflates_and_leaves_recovery_on_a_partial_ack() {
    let mut h = H::std("reno");
    h.nine_in_flight();
    h.ack(0.3, 1, &[]);
    h.ack(0.31, 1, &[]);
    // ssthresh 4, cwnd 4 + 3 = 7, retransmit 1.
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (7.0, 4.0));
    // Dup ACKs 4, 5: cwnd 8, 9; window una 1 + 9 = 10 = max: nothing new.
    assert!(h.ack(0.33, 1, &[]).is_empty());
    assert!(h.ack(0.34, 1, &[]).is_empty());
    // Dup ACK 6: cwnd 10 → segment 10 goes out.
    assert_eq!(h.ack(0.35, 1, &[]), vec![10]);
    assert_eq!(h.s.cwnd(), 10.0);
    // Partial ACK (a second hole at 5): Reno deflates to ssthresh and leaves recovery.
    h.ack(0.42, 5, &[]);
    assert!(!h.s.in_recovery());
    assert_eq!(h.s.cwnd(), 4.0);
}

#[test]
fn newreno_stays_in_recovery_across_partial_acks() {
    let mut h = H::std("newreno");
    h.nine_in_flight();
    h.ack(0.3, 1, &[]);
    h.ack(0.31, 1, &[]);
    assert_eq!(h.ack(0.32, 1, &[]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (7.0, 4.0));
    // Partial ACK up to 5 (newly 4): retransmit 5, cwnd = 7 − 4 + 1 = 4, still in recovery.
    // It also gives an RTT sample (segment 4, sent at 0.2, never retransmitted): 0.22 s;
    // after the 0.1 s sample at t = 0.2 (RTTVAR 0.0375): RTTVAR = 0.0375·0.75 + 0.12/4 = 0.058125,
    // SRTT = 0.0875 + 0.0275 = 0.115, RTO = 0.115 + 0.2325 = 0.3475; the timer restarts
    // (Slow-but-Steady) at 0.42 + 0.3475.
    assert_eq!(h.ack(0.42, 5, &[]), vec![5]);
    assert!(h.s.in_recovery());
    assert_eq!(h.s.cwnd(), 4.0);
    assert!(close(h.s.rto_s(), 0.3475));
    assert_eq!(h.s.poll_at(), Some(t(0.7675)));
    // Second partial ACK up to 8: retransmit 8, cwnd = 4 − 3 + 1 = 2.
    assert_eq!(h.ack(0.52, 8, &[]), vec![8]);
    assert_eq!(h.s.cwnd(), 2.0);
    assert!(h.s.in_recovery());
    // Full ACK (recover = 10): leave recovery with cwnd = ssthresh = 4; window from 10 → 10..=13.
    assert_eq!(h.ack(0.62, 10, &[]), vec![10, 11, 12, 13]);
    assert!(!h.s.in_recovery());
    assert_eq!(h.s.cwnd(), 4.0);
}

#[test]
fn sack_retransmits_a_second_hole_before_the_partial_ack() {
    let mut h = H::std("sack");
    assert!(h.s.sack_negotiated());
    h.nine_in_flight();
    // Segments 1 and 3 are lost; the receiver SACKs 2, 4, 5, ...
    assert!(h.ack(0.3, 1, &[(2, 3)]).is_empty());
    assert!(h.ack(0.31, 1, &[(4, 5), (2, 3)]).is_empty());
    // Third dup ACK: ssthresh = cwnd = 4, retransmit 1. SACKed {2,4,5}: 3 has only 2 SACKed
    // above → not lost. pipe = 1 (seg 1, retransmitted) + 1 (seg 3) + 4 (6..9) = 6 > cwnd.
    assert_eq!(h.ack(0.32, 1, &[(4, 6), (2, 3)]), vec![1]);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.0, 4.0));
    // SACKed {2,4,5,6}: 3 is lost now; pipe = 1 + 0 + 3 = 4: nothing.
    assert!(h.ack(0.33, 1, &[(4, 7), (2, 3)]).is_empty());
    // SACKed up to 7: pipe = 1 + 0 + 2 = 3 → NextSeg rule 1 sends the lost 3.
    assert_eq!(h.ack(0.34, 1, &[(4, 8), (2, 3)]), vec![3]);
    // Up to 8: pipe = 1 + 1 + 1 (seg 9) = 3 → new data 10.
    assert_eq!(h.ack(0.35, 1, &[(4, 9), (2, 3)]), vec![10]);
    // Partial ACK to 3 (retransmitted 1 arrived), SACK 4..=9: still in recovery;
    // pipe = 1 (3, lost and retransmitted) + 1 (10) = 2 → new data 11 and 12.
    assert_eq!(h.ack(0.42, 3, &[(4, 10)]), vec![11, 12]);
    assert!(h.s.in_recovery());
    // Full ACK: out with cwnd = ssthresh.
    h.ack(0.44, 10, &[(11, 12)]);
    assert!(!h.s.in_recovery());
    assert_eq!(h.s.cwnd(), 4.0);
    assert_eq!(h.s.stats.retransmissions, 2);
}

#[test]
fn fack_enters_recovery_when_fack_is_more_than_three_ahead() {
    let mut h = H::std("fack");
    h.nine_in_flight();
    assert!(h.ack(0.3, 1, &[(2, 3)]).is_empty());
    // Second dup ACK, but SACK of 4 puts snd.fack − snd.una = 5 − 1 = 4 > 3: recovery.
    assert_eq!(h.ack(0.31, 1, &[(4, 5), (2, 3)]), vec![1]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.0, 4.0));
    // awnd = snd.nxt − fack + retran = (10 − 6) + 1 = 5, then 4: nothing until it drops to 3.
    assert!(h.ack(0.32, 1, &[(4, 6), (2, 3)]).is_empty());
    assert!(h.ack(0.33, 1, &[(4, 7), (2, 3)]).is_empty());
    // awnd = (10 − 8) + 1 = 3 → retransmit 3 (unSACKed below fack = lost).
    assert_eq!(h.ack(0.34, 1, &[(4, 8), (2, 3)]), vec![3]);
}

#[test]
fn rto_doubles_for_newreno_and_resets_on_a_valid_sample() {
    let mut h = H::std("newreno");
    // Segments 0, 1 sent at 0.1; RTO 0.3 → fires at 0.4.
    assert_eq!(h.s.poll_at(), Some(t(0.4)));
    h.s.on_timer(t(0.4));
    // ssthresh = max(2/2, 2) = 2, cwnd 1, backoff 2 → RTO 0.6; go-back-N resends 0.
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
    // ACK of the retransmitted segment 0: no RTT sample (Karn), backoff stays.
    assert_eq!(h.ack(2.3, 1, &[]), vec![1, 2]);
    assert!(close(h.s.rto_s(), 2.4));
    // ACK of segment 2, first sent at 2.3 (never retransmitted): sample 0.1 → backoff cleared.
    // SRTT = 0.1, RTTVAR = 0.75·0.05 = 0.0375 → RTO = 0.1 + 0.15 = 0.25.
    h.ack(2.4, 3, &[]);
    assert!(close(h.s.rto_s(), 0.25));
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

#[test]
fn vegas_diff_decisions() {
    assert!(close(Vegas::diff(10.0, 0.1, 0.1), 0.0));
    assert!(close(Vegas::diff(10.0, 0.1, 0.125), 2.0));
    assert!(close(Vegas::diff(10.0, 0.1, 0.2), 5.0));
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(10.0, 1000, 3);
    s.ssthresh = 5.0; // congestion avoidance
    let round = |v: &mut Vegas, s: &mut CcState, rtt: f64, una: u64| {
        for _ in 0..3 {
            v.on_rtt_sample(s, rtt);
        }
        s.snd_una = una;
        s.snd_max = una + 10;
        v.cong_avoid(s, 1);
    };
    // BaseRTT 0.1, RTT 0.1: Diff 0 < α → cwnd 11.
    round(&mut v, &mut s, 0.1, 10);
    assert_eq!(s.cwnd, 11.0);
    // RTT 0.125: Diff = 11·0.2 = 2.2 in [α, β] → unchanged.
    round(&mut v, &mut s, 0.125, 20);
    assert_eq!(s.cwnd, 11.0);
    // RTT 0.2: Diff = 11·0.5 = 5.5 > β → cwnd 10.
    round(&mut v, &mut s, 0.2, 30);
    assert_eq!(s.cwnd, 10.0);
    // An ACK inside the round (una 35 < round end 40) changes nothing in CA.
    s.snd_una = 35;
    v.cong_avoid(&mut s, 1);
    assert_eq!(s.cwnd, 10.0);
}

#[test]
fn vegas_slow_start_exits_when_diff_exceeds_gamma() {
    let mut v = Vegas::new(1.0, 3.0, 1.0);
    let mut s = CcState::new(8.0, 1000, 3);
    for r in [0.1, 0.2, 0.2] {
        v.on_rtt_sample(&s, r);
    }
    s.snd_una = 8;
    s.snd_max = 16;
    // Growth round: 8 → 9 first, then round end: RTT 0.1 (round min) → Diff 0: stay in slow start.
    v.cong_avoid(&mut s, 1);
    assert_eq!(s.cwnd, 9.0);
    assert!(s.in_slow_start());
    // Next round (no growth in alternate rounds): RTT 0.15 → Diff = 9·(1 − 2/3) = 3 > γ →
    // cwnd = min(9, floor(9·0.1/0.15) + 1) = min(9, 7) = 7 and ssthresh = 7 (leave slow start).
    for _ in 0..3 {
        v.on_rtt_sample(&s, 0.15);
    }
    s.snd_una = 16;
    v.cong_avoid(&mut s, 1);
    assert_eq!(s.cwnd, 7.0);
    assert!(!s.in_slow_start());
}

#[test]
fn vegas_fine_grained_retransmit_on_first_dup_ack() {
    // min RTO 1 s so the coarse timer stays out of the way; fine timeout = 0.1 + 4·0.05 = 0.3 s.
    let cfg = TcpConfig { min_rto_s: 1.0, ..TcpConfig::default() };
    let mut h = H::new("vegas", cfg, 0.1);
    // Segment 0 sent at 0.1. Dup ACK at 0.3: 0.2 s elapsed < 0.3: wait.
    assert!(h.ack(0.3, 0, &[]).is_empty());
    assert_eq!(h.s.stats.fast_retransmits, 0);
    // Dup ACK at 0.45: 0.35 s > 0.3 → retransmit on the 2nd dup ACK, not the 3rd.
    // ssthresh = max(2/2, 2) = 2, cwnd = 2 + 2 dup ACKs = 4 → 2 and 3 follow.
    assert_eq!(h.ack(0.45, 0, &[]), vec![0, 2, 3]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.0, 2.0));
}

#[test]
fn westwood_plus_estimate_and_ssthresh() {
    let mut w = Westwood::new(true);
    let mut s = CcState::new(10.0, 1000, 3);
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
    let mut s = CcState::new(10.0, 1000, 3);
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

// ----- tcp-ap, mpr, elfn ---------------------------------------------------------------

/// A sender of `variant` told the path has `hops` hops before the SYN-ACK (t = 0.1).
fn with_hops(variant: &str, hops: u32) -> H {
    let cc = by_name(variant, &VariantParams::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    s.note_path_hops(hops);
    let mut syn_ack = hdr(1, TcpFlags { syn: true, ack: true, fin: false }, &[]);
    syn_ack.seq = 0;
    s.on_segment(t(0.1), &syn_ack, 0);
    H { s }
}

#[test]
fn tcp_ap_fhd_and_cov() {
    let mut a = TcpAp::new(0.7, 50, 4);
    // 8 hops: d = R/16, FHD = 4·d = R/4; 2 hops: FHD = 2·R/4 = R/2; 1 hop: R/2.
    assert!(close(a.fhd_sample(0.2, 8), 0.05));
    assert!(close(a.fhd_sample(0.2, 2), 0.1));
    assert!(close(a.fhd_sample(0.2, 1), 0.1));
    let mut s = CcState::new(2.0, 1000, 3);
    s.path_hops = Some(8);
    assert_eq!(a.pacing_gap_s(&s), None, "no pacing before the first RTT sample");
    a.on_rtt_sample(&s, 0.2);
    a.on_rtt_sample(&s, 0.4);
    // FHD = 0.7·0.05 + 0.3·0.1 = 0.065; RTTs {0.2, 0.4}: μ = 0.3, σ = 0.1, cov = 1/3.
    assert!(close(a.fhd_s.unwrap(), 0.065));
    assert!(close(a.cov_rtt(), 1.0 / 3.0));
    assert!(close(a.pacing_gap_s(&s).unwrap(), (1.0 + 2.0 / 3.0) * 0.065));
    // The history keeps the last 50 samples: 50 equal ones make cov 0 again.
    for _ in 0..50 {
        a.on_rtt_sample(&s, 0.3);
    }
    assert!(close(a.cov_rtt(), 0.0));
}

#[test]
fn tcp_ap_spaces_new_segments_by_the_gap_but_not_retransmissions() {
    let mut h = with_hops("tcp-ap", 4);
    // Handshake sample R = 0.1 on 4 hops: FHD = 4·0.1/8 = 0.05, cov 0 → gap 0.05.
    assert!(close(h.s.pacing_gap_s().unwrap(), 0.05));
    // Window 2, but only segment 0 leaves at 0.1; segment 1 waits for the pacing timer.
    assert_eq!(h.sent(), vec![0]);
    assert_eq!(h.s.poll_at(), Some(t(0.15)));
    h.s.on_timer(t(0.15));
    assert_eq!(h.sent(), vec![1]);
    // ACK of 0 at 0.2 (R = 0.1, FHD stays 0.05): cwnd 3 allows 2 and 3; 2 goes now, 3 is held.
    assert_eq!(h.ack(0.2, 1, &[]), vec![2]);
    assert_eq!(h.s.poll_at(), Some(t(0.25)));
    assert_eq!(h.s.stats.paced_holds, 2);
    // ACK of 1 at 0.27 (sent 0.15: R = 0.12): FHD = 0.7·0.05 + 0.3·0.06 = 0.053;
    // RTTs {0.1, 0.1, 0.12}: μ = 0.32/3, σ² = (2·(0.02/3)² + (0.04/3)²)/3, gap = (1 + 2σ/μ)·0.053.
    let mu = 0.32 / 3.0;
    let sigma = ((2.0 * (0.02f64 / 3.0).powi(2) + (0.04f64 / 3.0).powi(2)) / 3.0).sqrt();
    let gap = (1.0 + 2.0 * sigma / mu) * 0.053;
    // The held segment 3 is overdue (0.25), so it leaves with this ACK; 4 waits one gap.
    assert_eq!(h.ack(0.27, 2, &[]), vec![3]);
    assert!(close(h.s.pacing_gap_s().unwrap(), gap));
    let next = h.s.poll_at().unwrap().as_secs_f64();
    assert!((next - (0.27 + gap)).abs() < 2e-9, "{next} vs {}", 0.27 + gap);
    h.s.on_timer(SimTime::from_secs_f64(next));
    assert_eq!(h.sent(), vec![4]);
    // Three duplicate ACKs: the fast retransmission of 2 is not paced, even though the
    // next paced send is a whole gap away.
    h.ack(next + 0.001, 2, &[]);
    h.ack(next + 0.002, 2, &[]);
    assert_eq!(h.ack(next + 0.003, 2, &[]), vec![2]);
    assert_eq!(h.s.stats.fast_retransmits, 1);
}

#[test]
fn mpr_ewrtt_is_a_decaying_maximum() {
    let mut m = Mpr::new(0.99, 3.0);
    let mut s = CcState::new(4.0, 1000, 3);
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
    assert_eq!((h.s.stats.retransmissions, h.s.stats.fast_retransmits), (0, 0));
    assert_eq!(h.s.cwnd(), 9.0);
    // Segment 1 arrives late: ACK up to 5. Sample from 4 (sent 0.2): 0.13 > 0.99^(1/9)·0.1 →
    // ewrtt 0.13, mxrtt 0.39. Slow start 9 → 13; to-be-ack {5..9} → 10..=17 go out.
    assert_eq!(h.ack(0.33, 5, &[]), (10..18).collect::<Vec<_>>());
    assert_eq!(h.s.cwnd(), 13.0);
    assert!(close(h.s.loss_timeout_s().unwrap(), 0.39));
    // Segment 5 is lost: duplicate ACKs still do nothing.
    assert!(h.ack(0.4, 5, &[]).is_empty());
    // 5..=9 were sent at 0.2: declared dropped at 0.2 + 0.39 = 0.59.
    assert_eq!(h.s.poll_at(), Some(t(0.59)));
    h.s.on_timer(t(0.59));
    // First drop (5, sent with cwnd 9): cwnd = 9/2 = 4.5 = ssthresh; 6..=9 are in the
    // memorize list: no further halving. to-be-ack {10..=17} = 8 ≥ 4: nothing resent yet.
    assert_eq!((h.s.cwnd(), h.s.ssthresh()), (4.5, 4.5));
    assert_eq!(h.s.stats.drops_detected, 5);
    assert!(h.sent().is_empty());
    // 10..=17 (sent 0.33) expire at 0.72: in memorize, no cut; the window refills with
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
    assert_eq!(h.sent(), vec![1], "the probe is the oldest unacknowledged segment");
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
    // A second failure ends by an ACK instead: the sender thaws and takes the ACK.
    h.s.on_route_notice(t(5.1), false);
    assert!(h.s.frozen() && h.sent().is_empty());
    // ACK of 1..=9 (newly 9, no RTT sample: sent before the freeze): slow start 9 → 18.
    assert_eq!(h.ack(5.2, 10, &[]), (10..28).collect::<Vec<_>>());
    assert!(!h.s.frozen());
    assert_eq!(h.s.cwnd(), 18.0);
    assert_eq!(h.s.stats.route_freezes, 2);
}

#[test]
fn route_notices_are_ignored_by_other_variants_and_before_the_handshake() {
    let mut h = H::std("newreno");
    h.s.on_route_notice(t(0.15), false);
    assert!(!h.s.frozen());
    assert_eq!(h.s.poll_at(), Some(t(0.4)));
    let cc = by_name("elfn", &VariantParams::default()).unwrap();
    let mut s = TcpSender::new(&TcpConfig::default(), cc, 1, 1);
    s.open(t(0.0), None);
    s.on_route_notice(t(0.05), false);
    assert!(!s.frozen());
}
