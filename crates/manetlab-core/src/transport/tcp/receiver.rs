//! The TCP receiver (ns-2 `TCPSink` / `DelAckSink` / `Sack1` sink).
//!
//! * One-way (default, ns-2 `TCPSink`): the sender's 40-byte first packet (a SYN
//!   without options) is answered by a plain 40-byte ACK, repeated for a repeated
//!   SYN; SACK is used when the sender uses it (ns-2 pairs `Sack1` with the SACK
//!   sink by configuration). No FIN.
//! * Handshake (`handshake = true`): answers a SYN with SYN-ACK (repeating it for a
//!   retransmitted SYN); the connection is established by the handshake ACK or by
//!   the first data.
//! * ACKs are cumulative (RFC 9293). With `delayed_ack`, an in-order segment is
//!   acknowledged with every second full segment or after the delayed-ACK timeout
//!   (RFC 5681 §4.2, RFC 1122 4.2.3.2; ns-2 `interval_` = 100 ms); out-of-order
//!   segments, duplicates, segments that fill a gap and FINs are ACKed at once.
//! * SACK (RFC 2018) when both SYNs carried SACK-permitted: up to 3 blocks, the
//!   first holding the most recently received segment, then the most recently
//!   reported other blocks (§4).
//! * Close: an in-order FIN is answered with FIN+ACK (passive close, LAST-ACK).
//!
//! The advertised window is constant (`window_pkts` · MSS bytes): like ns-2 we
//! do not model the application's read buffer.

use super::config::TcpConfig;
use super::{unwrap_seq, Segment};
use crate::sim::{SimDuration, SimTime};
use crate::wire::{TcpFlags, TcpHeader, TCP_MAX_SACK_BLOCKS};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    SynReceived,
    Established,
    /// FIN received and answered with our FIN.
    LastAck,
    Closed,
}

/// Bytes handed to the application in order: (data offset, length, when the
/// carrying segment was sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub offset: u64,
    pub bytes: u32,
    pub sent_at: SimTime,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub segments_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub acks_sent: u64,
    pub delivered_bytes: u64,
}

pub struct TcpReceiver {
    src_port: u16,
    dst_port: u16,
    window_bytes: u32,
    delayed_ack: bool,
    delack_timeout: SimDuration,
    mss: u32,
    state: ReceiverState,
    sack_ok: bool,
    /// ns-2 one-way sink: no SYN-ACK, no FIN.
    one_way: bool,
    /// One-way: SACK blocks in ACKs (set by the simulator from the sender's choice).
    sack_configured: bool,
    /// Next expected data byte offset.
    rcv_nxt: u64,
    /// Out-of-order data: start offset → (end offset, sent_at).
    ooo: BTreeMap<u64, (u64, SimTime)>,
    /// Start offsets of recently received out-of-order segments, newest first.
    recent: Vec<u64>,
    unacked_segs: u32,
    delack_at: Option<SimTime>,
    fin_at: Option<u64>,
    /// ns-2 `Acker::ts_to_echo_`: the send time echoed in ACKs (`TCPSink`,
    /// `ts_echo_bugfix_` true, `ts_echo_rfc1323_` false).
    ts_to_echo: SimTime,
    /// `rcv_nxt` as carried by the last ACK sent (ns-2 `last_ack_sent_`).
    last_ack_sent: u64,
    pub stats: ReceiverStats,
    out: Vec<Segment>,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, src_port: u16, dst_port: u16) -> Self {
        TcpReceiver {
            src_port,
            dst_port,
            window_bytes: cfg.window_pkts * cfg.mss_bytes,
            delayed_ack: cfg.delayed_ack,
            delack_timeout: SimDuration::from_secs_f64(cfg.delayed_ack_timeout_s),
            mss: cfg.mss_bytes,
            state: ReceiverState::Listen,
            sack_ok: false,
            one_way: !cfg.handshake,
            sack_configured: false,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            recent: Vec::new(),
            unacked_segs: 0,
            delack_at: None,
            fin_at: None,
            ts_to_echo: SimTime::ZERO,
            last_ack_sent: 0,
            stats: ReceiverStats::default(),
            out: Vec::new(),
        }
    }

    /// One-way mode: whether ACKs carry SACK blocks (the sender's choice; ns-2 pairs
    /// `Agent/TCP/Sack1` with `Agent/TCPSink/Sack1` in the script).
    pub fn set_sack(&mut self, on: bool) {
        self.sack_configured = on;
    }
    pub fn state(&self) -> ReceiverState {
        self.state
    }
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }
    /// In-order data bytes received.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn poll_at(&self) -> Option<SimTime> {
        self.delack_at
    }
    pub fn take_output(&mut self, v: &mut Vec<Segment>) {
        v.append(&mut self.out);
    }

    /// The delayed-ACK timer.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.send_ack(None);
        }
    }

    fn header(&self, flags: TcpFlags) -> TcpHeader {
        let our_seq = 1 + u32::from(self.state == ReceiverState::Closed);
        let fin_in = u64::from(self.fin_at.is_some_and(|f| f == self.rcv_nxt));
        TcpHeader {
            src_port: self.src_port,
            dst_port: self.dst_port,
            seq: our_seq,
            ack: (1 + self.rcv_nxt + fin_in) as u32,
            flags,
            window: self.window_bytes,
            mss: None,
            sack_permitted: false,
            sack: [(0, 0); TCP_MAX_SACK_BLOCKS],
            sack_len: 0,
            headerless: false,
            // The one-way agent is ns-2's sink: its SACK blocks count 8 B each.
            ns2_sack_bytes: self.one_way,
            ts_echo: self.ts_to_echo,
        }
    }

    /// ns-2 `Acker::update_ts` (before the segment is taken in): a segment that is the
    /// next expected or older as of the last ACK sent, sent no earlier than the time
    /// now echoed, becomes the echo (duplicates included: RFC 1323-bis); one beyond a
    /// hole does not. The SYN (ns-2 seqno 0) counts as in order.
    fn update_ts(&mut self, h: &TcpHeader, sent_at: SimTime) {
        let in_order = h.flags.syn
            || unwrap_seq(h.seq, 1 + self.rcv_nxt).saturating_sub(1) <= self.last_ack_sent;
        if in_order && sent_at >= self.ts_to_echo {
            self.ts_to_echo = sent_at;
        }
    }

    /// The out-of-order block containing `start`.
    fn block_of(&self, start: u64) -> Option<(u64, u64)> {
        let (&s0, &(mut end, _)) = self.ooo.range(..=start).next_back()?;
        if end < start {
            return None;
        }
        let mut lo = s0;
        while let Some((&s, &(e, _))) = self.ooo.range(..lo).next_back() {
            if e == lo {
                lo = s;
            } else {
                break;
            }
        }
        while let Some(&(e, _)) = self.ooo.get(&end) {
            end = e;
        }
        Some((lo, end))
    }

    fn send_ack(&mut self, newest: Option<u64>) {
        let mut h = self.header(TcpFlags {
            ack: true,
            ..TcpFlags::default()
        });
        if self.sack_ok && !self.ooo.is_empty() {
            let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(TCP_MAX_SACK_BLOCKS);
            for s in newest.into_iter().chain(self.recent.iter().copied()) {
                if blocks.len() == TCP_MAX_SACK_BLOCKS {
                    break;
                }
                if let Some(b) = self.block_of(s) {
                    if !blocks.contains(&b) {
                        blocks.push(b);
                    }
                }
            }
            for (i, (l, r)) in blocks.iter().enumerate() {
                h.sack[i] = ((1 + l) as u32, (1 + r) as u32);
            }
            h.sack_len = blocks.len() as u8;
        }
        self.unacked_segs = 0;
        self.delack_at = None;
        self.last_ack_sent = self.rcv_nxt;
        self.stats.acks_sent += 1;
        self.out.push(Segment {
            hdr: h,
            payload_bytes: 0,
            data_seg: None,
            retransmission: false,
        });
    }

    fn send_control(&mut self, flags: TcpFlags) {
        let mut h = self.header(flags);
        if flags.fin {
            h.seq = 1; // our FIN occupies sequence number 1 (ISN 0, SYN 0)
        }
        if flags.syn {
            h.seq = 0;
            h.mss = Some(self.mss.min(u32::from(u16::MAX)) as u16);
            h.sack_permitted = self.sack_ok;
        }
        self.last_ack_sent = self.rcv_nxt;
        self.out.push(Segment {
            hdr: h,
            payload_bytes: 0,
            data_seg: None,
            retransmission: false,
        });
    }

    /// A segment from the sender; returns the bytes newly delivered in order.
    pub fn on_segment(
        &mut self,
        now: SimTime,
        h: &TcpHeader,
        payload_bytes: u32,
        sent_at: SimTime,
        delivered: &mut Vec<Delivery>,
    ) {
        self.update_ts(h, sent_at);
        match self.state {
            ReceiverState::Listen if self.one_way => {
                if h.flags.syn {
                    self.sack_ok = self.sack_configured;
                    self.state = ReceiverState::Established;
                    self.send_ack(None);
                }
                return;
            }
            ReceiverState::Listen => {
                if h.flags.syn && !h.flags.ack {
                    self.sack_ok = h.sack_permitted;
                    self.state = ReceiverState::SynReceived;
                    self.send_control(TcpFlags {
                        syn: true,
                        ack: true,
                        fin: false,
                    });
                }
                return;
            }
            ReceiverState::SynReceived | ReceiverState::Established => {
                if h.flags.syn {
                    if self.state == ReceiverState::SynReceived {
                        self.send_control(TcpFlags {
                            syn: true,
                            ack: true,
                            fin: false,
                        });
                    } else {
                        self.send_ack(None);
                    }
                    return;
                }
                if h.flags.ack {
                    self.state = ReceiverState::Established;
                }
            }
            ReceiverState::LastAck => {
                if h.flags.ack && h.ack == 2 && !h.flags.fin && payload_bytes == 0 {
                    self.state = ReceiverState::Closed;
                } else {
                    // The sender has not seen our FIN+ACK (it repeats its FIN or data): repeat it.
                    self.send_control(TcpFlags {
                        syn: false,
                        ack: true,
                        fin: true,
                    });
                }
                return;
            }
            ReceiverState::Closed => return,
        }
        let before = delivered.len();
        let seq_abs = unwrap_seq(h.seq, 1 + self.rcv_nxt);
        let off = seq_abs.saturating_sub(1);
        if h.flags.fin {
            self.fin_at = Some(off + u64::from(payload_bytes));
        }
        if payload_bytes > 0 {
            self.stats.segments_received += 1;
            let end = off + u64::from(payload_bytes);
            if end <= self.rcv_nxt || self.ooo.contains_key(&off) {
                self.stats.duplicate_segments += 1;
                self.send_ack(None);
            } else if off == self.rcv_nxt {
                let had_gap = !self.ooo.is_empty();
                delivered.push(Delivery {
                    offset: off,
                    bytes: payload_bytes,
                    sent_at,
                });
                self.rcv_nxt = end;
                while let Some((e, t)) = self.ooo.remove(&self.rcv_nxt) {
                    delivered.push(Delivery {
                        offset: self.rcv_nxt,
                        bytes: (e - self.rcv_nxt) as u32,
                        sent_at: t,
                    });
                    self.rcv_nxt = e;
                }
                self.recent.retain(|&s| s >= self.rcv_nxt);
                self.unacked_segs += 1;
                if !self.delayed_ack || had_gap || self.unacked_segs >= 2 || self.fin_at.is_some() {
                    self.send_ack(None);
                } else if self.delack_at.is_none() {
                    self.delack_at = Some(now + self.delack_timeout);
                }
            } else if off > self.rcv_nxt {
                self.stats.out_of_order_segments += 1;
                self.ooo.insert(off, (end, sent_at));
                self.recent.retain(|&s| s != off);
                self.recent.insert(0, off);
                self.recent.truncate(8);
                self.send_ack(Some(off));
            } else {
                // Overlaps rcv_nxt without starting at it: our sender never re-segments.
                self.stats.duplicate_segments += 1;
                self.send_ack(None);
            }
        }
        self.stats.delivered_bytes += delivered[before..]
            .iter()
            .map(|d| u64::from(d.bytes))
            .sum::<u64>();
        if self.fin_at == Some(self.rcv_nxt) {
            self.state = ReceiverState::LastAck;
            self.delack_at = None;
            self.send_control(TcpFlags {
                syn: false,
                ack: true,
                fin: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn t(s: f64) -> SimTime {
        SimTime::from_secs_f64(s)
    }

    fn seg(k: u64, flags: TcpFlags) -> TcpHeader {
        TcpHeader {
            src_port: 1,
            dst_port: 1,
            seq: (1 + k * MSS) as u32,
            ack: 1,
            flags,
            window: 0,
            mss: None,
            sack_permitted: true,
            sack: [(0, 0); TCP_MAX_SACK_BLOCKS],
            sack_len: 0,
            headerless: false,
            ns2_sack_bytes: false,
            ts_echo: SimTime::ZERO,
        }
    }

    fn established(delayed: bool) -> TcpReceiver {
        let cfg = TcpConfig {
            delayed_ack: delayed,
            handshake: true,
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(&cfg, 1, 1);
        let mut syn = seg(
            0,
            TcpFlags {
                syn: true,
                ..TcpFlags::default()
            },
        );
        syn.seq = 0;
        r.on_segment(t(0.0), &syn, 0, t(0.0), &mut Vec::new());
        let mut out = Vec::new();
        r.take_output(&mut out);
        assert!(out[0].hdr.flags.syn && out[0].hdr.flags.ack && out[0].hdr.sack_permitted);
        assert_eq!(
            out[0].hdr.size_bytes(),
            28,
            "SYN-ACK with MSS and SACK-permitted"
        );
        r
    }

    fn data(r: &mut TcpReceiver, now: f64, k: u64) -> (Vec<Delivery>, Vec<Segment>) {
        let mut d = Vec::new();
        r.on_segment(
            t(now),
            &seg(
                k,
                TcpFlags {
                    ack: true,
                    ..TcpFlags::default()
                },
            ),
            MSS as u32,
            t(now),
            &mut d,
        );
        let mut out = Vec::new();
        r.take_output(&mut out);
        (d, out)
    }

    #[test]
    fn sack_blocks_newest_first_and_cumulative_ack() {
        let mut r = established(false);
        let (d, o) = data(&mut r, 1.0, 0);
        assert_eq!(d.len(), 1);
        assert_eq!(o[0].hdr.ack, 1001);
        // 1 lost; 2, 3 then 5 arrive: blocks [2,4) then [5,6) newest first.
        data(&mut r, 1.1, 2);
        data(&mut r, 1.2, 3);
        let (d, o) = data(&mut r, 1.3, 5);
        assert!(d.is_empty());
        let h = o[0].hdr;
        assert_eq!(h.ack, 1001, "duplicate ACK");
        assert_eq!(h.sack_blocks(), &[(5001, 6001), (2001, 4001)]);
        assert_eq!(
            h.size_bytes(),
            20 + 20,
            "2 blocks: 18 option bytes padded to 20"
        );
        // The hole fills: 1..=3 delivered at once, ACK 4001, one block left.
        let (d, o) = data(&mut r, 1.4, 1);
        assert_eq!(
            d.iter().map(|x| x.offset).collect::<Vec<_>>(),
            vec![1000, 2000, 3000]
        );
        assert_eq!(o[0].hdr.ack, 4001);
        assert_eq!(o[0].hdr.sack_blocks(), &[(5001, 6001)]);
    }

    #[test]
    fn one_way_sink_acks_the_syn_with_a_plain_40_byte_ack() {
        let mut r = TcpReceiver::new(&TcpConfig::default(), 1, 1);
        r.set_sack(true);
        let mut syn = seg(
            0,
            TcpFlags {
                syn: true,
                ..TcpFlags::default()
            },
        );
        syn.seq = 0;
        syn.sack_permitted = false;
        r.on_segment(t(0.0), &syn, 0, t(0.0), &mut Vec::new());
        let mut out = Vec::new();
        r.take_output(&mut out);
        assert_eq!(out.len(), 1);
        let h = out[0].hdr;
        assert!(h.flags.ack && !h.flags.syn && !h.flags.fin);
        assert_eq!((h.ack, h.size_bytes()), (1, 20));
        assert_eq!(r.state(), ReceiverState::Established);
        assert!(r.sack_negotiated());
        // A repeated SYN is acknowledged again.
        r.on_segment(t(0.5), &syn, 0, t(0.5), &mut Vec::new());
        r.take_output(&mut out);
        assert_eq!(out.len(), 2);
        // Data flows as usual; no FIN is ever sent.
        let (d, o) = data(&mut r, 1.0, 0);
        assert_eq!((d.len(), o[0].hdr.ack), (1, 1001));
        // ns-2's Sack1 sink adds 8 B per SACK block (tcp-sink.cc), no option header:
        // its traces show 48- and 56-byte ACKs (with IP) for one and two blocks.
        let (_, o) = data(&mut r, 1.1, 2);
        assert_eq!((o[0].hdr.sack_len, o[0].hdr.size_bytes()), (1, 28));
        let (_, o) = data(&mut r, 1.2, 4);
        assert_eq!((o[0].hdr.sack_len, o[0].hdr.size_bytes()), (2, 36));
    }

    /// A segment sent at `sent` arriving at `now`; the echo of the ACK it causes.
    fn echo_of(r: &mut TcpReceiver, now: f64, sent: f64, k: u64) -> f64 {
        r.on_segment(
            t(now),
            &seg(
                k,
                TcpFlags {
                    ack: true,
                    ..TcpFlags::default()
                },
            ),
            MSS as u32,
            t(sent),
            &mut Vec::new(),
        );
        let mut out = Vec::new();
        r.take_output(&mut out);
        out.last().unwrap().hdr.ts_echo.as_secs_f64()
    }

    #[test]
    fn acks_echo_the_timestamp_as_ns2_tcpsink_does() {
        // ns-2.35 `Acker::update_ts` (`ts_echo_bugfix_` true, `ts_echo_rfc1323_` false):
        // the echo becomes the send time of a segment at or below last_ack_sent_ + 1
        // (next expected or duplicate) when it is not older than the current echo.
        let mut r = TcpReceiver::new(&TcpConfig::default(), 1, 1);
        r.set_sack(true);
        let mut syn = seg(
            0,
            TcpFlags {
                syn: true,
                ..TcpFlags::default()
            },
        );
        syn.seq = 0;
        r.on_segment(t(0.05), &syn, 0, t(0.0), &mut Vec::new());
        let mut out = Vec::new();
        r.take_output(&mut out);
        assert_eq!(
            out[0].hdr.ts_echo,
            t(0.0),
            "the SYN (ns-2 seqno 0) is in order"
        );
        assert!((echo_of(&mut r, 1.0, 0.9, 0) - 0.9).abs() < 1e-9);
        // 1 lost: 2 (sent 1.0) is beyond the hole, the echo stays 0.9.
        assert!((echo_of(&mut r, 1.1, 1.0, 2) - 0.9).abs() < 1e-9);
        // A duplicate of 0 resent at 1.05 is at or below last_ack_sent_ + 1: echo 1.05.
        assert!((echo_of(&mut r, 1.2, 1.05, 0) - 1.05).abs() < 1e-9);
        // A duplicate with an older timestamp (0 first sent at 0.9) does not lower it.
        assert!((echo_of(&mut r, 1.25, 0.9, 0) - 1.05).abs() < 1e-9);
        // The retransmission of 1 (sent 1.3) fills the hole: echo 1.3, ACK covers 0..=2.
        assert!((echo_of(&mut r, 1.4, 1.3, 1) - 1.3).abs() < 1e-9);
        assert_eq!(r.rcv_nxt(), 3 * MSS);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timeout() {
        let mut r = established(true);
        let (_, o) = data(&mut r, 1.0, 0);
        assert!(o.is_empty(), "first segment waits");
        assert_eq!(r.poll_at(), Some(t(1.1)));
        let (_, o) = data(&mut r, 1.05, 1);
        assert_eq!(o.len(), 1, "second segment: ACK now");
        assert_eq!(o[0].hdr.ack, 2001);
        assert_eq!(r.poll_at(), None);
        data(&mut r, 2.0, 2);
        r.on_timer(t(2.1));
        let mut out = Vec::new();
        r.take_output(&mut out);
        assert_eq!(out[0].hdr.ack, 3001, "timeout ACK after 100 ms");
        // Out of order: ACK at once.
        let (_, o) = data(&mut r, 3.0, 4);
        assert_eq!(o.len(), 1);
    }
}
