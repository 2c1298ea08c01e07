//! Link RED and link-layer adaptive pacing (Fu, Zerfos, Luo, Lu, Zhang, "The
//! impact of multihop wireless channel on TCP throughput and loss", INFOCOM 2003;
//! paper 001, Algorithms 1–2).
//!
//! The queue keeps avg_retry ← 7/8·avg_retry + 1/8·retries over the MAC's
//! finished unicast frames. Below `min_th` nothing is dropped; at or above it
//! the head-of-line packet is dropped with probability
//! min((avg_retry − min_th)/(max_th − min_th), max_p), and adaptive pacing is on:
//! the MAC adds one data-frame transmission time to its backoff after a
//! successful exchange.
//!
//! Deviations: paper 001's listing of Algorithm 1 sets pacing ON below min_th and
//! OFF above, which contradicts its own text ("when the average number of retries
//! goes beyond min_th, adaptive pacing is enabled") and Fu et al.; we follow the
//! text. Thresholds are not given in paper 001; our defaults (min_th 1 retry,
//! max_th 3, max_p 0.1) are documented in docs/wireless.md. Drops only: marking
//! needs ECN in TCP.
//!
//! "Retries" are the MAC's retransmissions of a packet, RTS and DATA together
//! (a frame that needed two RTS attempts and one DATA retransmission counts 3),
//! including those of frames the MAC finally dropped. Routing packets are queued
//! as ns-2's PriQueue queues them (at the head, evicting the tail when full) and
//! are never dropped early.

use super::priqueue::PriQueue;
use super::{Queue, Queued};
use crate::sim::{SimRng, SimTime};
use crate::wire::DropReason;
use rand::Rng;

#[derive(Clone, Copy, Debug)]
pub struct LredParams {
    pub min_th_retries: f64,
    pub max_th_retries: f64,
    pub max_p: f64,
    /// Enable link-layer adaptive pacing above min_th.
    pub pacing: bool,
}

impl Default for LredParams {
    fn default() -> Self {
        LredParams {
            min_th_retries: 1.0,
            max_th_retries: 3.0,
            max_p: 0.1,
            pacing: true,
        }
    }
}

pub struct Lred {
    p: LredParams,
    inner: PriQueue,
    avg_retry: f64,
    rng: SimRng,
}

impl Lred {
    pub fn new(limit_pkts: u32, p: LredParams, rng: SimRng) -> Self {
        Lred {
            p,
            inner: PriQueue::new(limit_pkts),
            avg_retry: 0.0,
            rng,
        }
    }

    pub fn avg_retry(&self) -> f64 {
        self.avg_retry
    }

    /// Algorithm 1's mark_prob for the current average.
    pub fn drop_probability(&self) -> f64 {
        if self.avg_retry < self.p.min_th_retries {
            0.0
        } else {
            ((self.avg_retry - self.p.min_th_retries)
                / (self.p.max_th_retries - self.p.min_th_retries))
                .min(self.p.max_p)
        }
    }
}

impl Queue for Lred {
    fn enqueue(&mut self, now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)> {
        self.inner.enqueue(now, item)
    }
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Queued>) -> Option<Queued> {
        let prob = self.drop_probability();
        while let Some(head) = self.inner.dequeue(now, dropped) {
            // Routing traffic is never dropped early: it is how routes are repaired.
            if prob > 0.0 && !head.pkt.is_routing() && self.rng.gen::<f64>() < prob {
                dropped.push(head);
                continue;
            }
            return Some(head);
        }
        None
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&crate::wire::Packet)) {
        self.inner.for_each_packet(f)
    }
    fn drain_for(&mut self, next_hop: crate::ids::NodeId, out: &mut Vec<Queued>) {
        self.inner.drain_for(next_hop, out)
    }
    fn mac_feedback(&mut self, retries: u32) {
        self.avg_retry = 0.875 * self.avg_retry + 0.125 * retries as f64;
    }
    fn pacing(&self) -> bool {
        self.p.pacing && self.avg_retry >= self.p.min_th_retries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::droptail::tests::pkt;
    use crate::sim::{stream, Component};

    fn lred() -> Lred {
        Lred::new(
            200_000,
            LredParams::default(),
            stream(3, 0, Component::Queue),
        )
    }

    #[test]
    fn routing_packets_jump_the_queue_and_are_never_dropped_early() {
        use crate::wire::IpProto;
        let mut q = lred();
        q.avg_retry = 10.0; // drop probability max_p
        for i in 0..1000 {
            q.enqueue(SimTime::ZERO, pkt(i)).unwrap();
        }
        let mut r = pkt(5000);
        std::rc::Rc::make_mut(&mut r.pkt).ip.proto = IpProto::Manet;
        q.enqueue(SimTime::ZERO, r).unwrap();
        let mut dropped = Vec::new();
        assert_eq!(
            q.dequeue(SimTime::ZERO, &mut dropped).unwrap().pkt.uid,
            5000,
            "routing first"
        );
        while q.dequeue(SimTime::ZERO, &mut dropped).is_some() {}
        assert!(!dropped.is_empty() && dropped.iter().all(|d| !d.pkt.is_routing()));
    }

    #[test]
    fn average_is_the_seven_eighths_ewma() {
        let mut q = lred();
        q.mac_feedback(8);
        assert_eq!(q.avg_retry(), 1.0);
        q.mac_feedback(0);
        assert_eq!(q.avg_retry(), 0.875);
        assert!(!q.pacing(), "0.875 < min_th");
        q.mac_feedback(2);
        assert!((q.avg_retry() - (0.875 * 0.875 + 0.25)).abs() < 1e-12);
        assert!(q.pacing(), "1.015625 >= min_th");
    }

    /// Drop rate of `n` dequeues at a given average.
    fn drop_rate(avg: f64, n: u64) -> f64 {
        let mut q = lred();
        q.avg_retry = avg;
        for i in 0..n {
            q.enqueue(SimTime::ZERO, pkt(i)).unwrap();
        }
        let mut dropped = Vec::new();
        let mut sent = 0;
        while q.dequeue(SimTime::ZERO, &mut dropped).is_some() {
            sent += 1;
        }
        assert_eq!(sent + dropped.len() as u64, n, "nothing lost or duplicated");
        dropped.len() as f64 / n as f64
    }

    #[test]
    fn nothing_dropped_below_min_th() {
        assert_eq!(drop_rate(0.99, 10_000), 0.0);
    }

    #[test]
    fn drop_rate_matches_the_formula_above_min_th() {
        // avg 1.1: (1.1 − 1)/(3 − 1) = 0.05; avg 2.5: min(0.75, 0.1) = 0.1.
        for (avg, p) in [(1.1, 0.05), (2.5, 0.1)] {
            let n = 100_000;
            let got = drop_rate(avg, n);
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((got - p).abs() < 4.0 * sd, "avg {avg}: {got} vs {p}");
        }
    }
}
