//! Byte-stream integrity: for every registered variant, the receiving
//! application gets exactly the bytes sent, once each and in order, through a
//! channel that loses, reorders and duplicates segments in both directions
//! (property test over seeds). The engine is driven directly, without the
//! simulator, by a small event loop in this file.

use manetlab_core::sim::{stream, Component, SimDuration, SimRng, SimTime};
use manetlab_core::transport::tcp::{
    by_name, variant_names, Delivery, Segment, TcpConfig, TcpReceiver, TcpSender,
};
use proptest::prelude::*;
use rand::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Channel {
    rng: SimRng,
    loss: f64,
    dup: f64,
    /// In flight: (arrival time, sequence, towards receiver?, segment).
    q: BinaryHeap<Reverse<(SimTime, u64, bool, SegKey)>>,
    segs: Vec<Segment>,
    n: u64,
}

type SegKey = usize;

impl Channel {
    fn send(&mut self, now: SimTime, to_receiver: bool, s: Segment) {
        if self.rng.gen::<f64>() < self.loss {
            return;
        }
        let copies = if self.rng.gen::<f64>() < self.dup {
            2
        } else {
            1
        };
        for _ in 0..copies {
            // 20 ms ± 15 ms: segments sent within 30 ms of each other may swap.
            let delay = SimDuration::from_secs_f64(0.005 + self.rng.gen::<f64>() * 0.030);
            self.segs.push(s);
            self.q.push(Reverse((
                now + delay,
                self.n,
                to_receiver,
                self.segs.len() - 1,
            )));
            self.n += 1;
        }
    }
}

fn transfer(
    variant: &str,
    seed: u64,
    file_bytes: u64,
    loss: f64,
    delayed_ack: bool,
) -> (Vec<Delivery>, TcpSender, TcpReceiver) {
    let cfg = TcpConfig {
        delayed_ack,
        mss_bytes: 500,
        ..TcpConfig::default()
    };
    let mut snd = TcpSender::new(&cfg, by_name(variant, &cfg).unwrap(), 1, 1);
    let mut rcv = TcpReceiver::new(&cfg, 1, 1);
    let mut ch = Channel {
        rng: stream(seed, 0, Component::Transport),
        loss,
        dup: 0.02,
        q: BinaryHeap::new(),
        segs: Vec::new(),
        n: 0,
    };
    let mut delivered = Vec::new();
    let mut out = Vec::new();
    let mut now = SimTime::ZERO;
    snd.open(now, Some(file_bytes));
    let end = SimTime::from_secs_f64(3000.0);
    loop {
        out.clear();
        snd.take_output(&mut out);
        for s in out.drain(..) {
            ch.send(now, true, s);
        }
        rcv.take_output(&mut out);
        for s in out.drain(..) {
            ch.send(now, false, s);
        }
        if snd.state() == manetlab_core::transport::tcp::sender::SenderState::Done {
            break;
        }
        let next_pkt = ch.q.peek().map(|Reverse((t, ..))| *t);
        let next = [next_pkt, snd.poll_at(), rcv.poll_at()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = next else { break };
        if t > end {
            break;
        }
        now = t;
        if next_pkt == Some(t) {
            let Reverse((_, _, to_rcv, k)) = ch.q.pop().unwrap();
            let s = ch.segs[k];
            if to_rcv {
                rcv.on_segment(now, &s.hdr, s.payload_bytes, now, &mut delivered);
            } else {
                snd.on_segment(now, &s.hdr, s.payload_bytes);
            }
        } else if snd.poll_at() == Some(t) {
            snd.on_timer(now);
        } else {
            rcv.on_timer(now);
        }
    }
    (delivered, snd, rcv)
}

fn check_stream(d: &[Delivery], file_bytes: u64) -> Result<(), String> {
    let mut next = 0u64;
    for x in d {
        if x.offset != next {
            return Err(format!(
                "delivery at offset {} but {next} expected",
                x.offset
            ));
        }
        next += u64::from(x.bytes);
    }
    if next != file_bytes {
        return Err(format!("{next} bytes delivered of {file_bytes}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn every_variant_delivers_the_exact_byte_stream(seed in 0u64..1_000_000, file in 1u64..120_000, lossy in 0usize..3, delayed in any::<bool>()) {
        let loss = [0.0, 0.05, 0.15][lossy];
        for v in variant_names() {
            let (d, snd, rcv) = transfer(v, seed, file, loss, delayed);
            prop_assert!(check_stream(&d, file).is_ok(), "{v} seed {seed} file {file} loss {loss}: {:?}", check_stream(&d, file));
            prop_assert_eq!(rcv.rcv_nxt(), file);
            prop_assert_eq!(snd.highest_ack_bytes(), file, "{} sender saw everything acked", v);
            prop_assert!(snd.stats.completed_at.is_some());
        }
    }
}

#[test]
fn heavy_loss_still_delivers_for_every_variant() {
    for v in variant_names() {
        let (d, snd, rcv) = transfer(v, 42, 200_000, 0.25, false);
        check_stream(&d, 200_000).unwrap_or_else(|e| panic!("{v}: {e}"));
        // The channel really did lose, reorder and duplicate.
        assert!(
            snd.stats.retransmissions > 50 && snd.stats.timeouts > 0,
            "{v}: {:?}",
            snd.stats
        );
        assert!(
            rcv.stats.out_of_order_segments > 50 && rcv.stats.duplicate_segments > 0,
            "{v}: {:?}",
            rcv.stats
        );
    }
}
