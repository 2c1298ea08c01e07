//! Random Early Detection (Floyd & Jacobson 1993) in ns-2's "gentle" form
//! (`Queue/RED`, `gentle_ true`): the average queue length is an EWMA with
//! weight `weight` updated on every arrival; between min_th and max_th an
//! arriving packet is dropped with probability p_a = p_b / (1 − count·p_b),
//! p_b = max_p·(avg − min_th)/(max_th − min_th); between max_th and 2·max_th p_b
//! rises linearly from max_p to 1 (gentle); above 2·max_th every arrival is
//! dropped. Packet mode (thresholds in packets).
//!
//! Deviation from ns-2: no idle-time decay of the average while the queue is
//! empty (ns-2 estimates it from the link's packet time, which a shared wireless
//! medium does not have); drops only, no ECN marking yet.

use super::droptail::DropTail;
use super::{Queue, Queued};
use crate::sim::{SimRng, SimTime};
use crate::wire::DropReason;
use rand::Rng;

/// ns-2 defaults: thresh_ 5, maxthresh_ 15, linterm_ 10 (max_p 0.1), q_weight_ 0.002.
#[derive(Clone, Copy, Debug)]
pub struct RedParams {
    pub min_th_pkts: f64,
    pub max_th_pkts: f64,
    pub max_p: f64,
    pub weight: f64,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th_pkts: 5.0,
            max_th_pkts: 15.0,
            max_p: 0.1,
            weight: 0.002,
        }
    }
}

pub struct Red {
    p: RedParams,
    inner: DropTail,
    avg: f64,
    /// Packets since the last early drop (−1: avg was below min_th).
    count: i64,
    rng: SimRng,
    /// Packets dropped early (not by overflow).
    pub early_drops: u64,
}

impl Red {
    pub fn new(limit_pkts: u32, p: RedParams, rng: SimRng) -> Self {
        Red {
            p,
            inner: DropTail::new(limit_pkts),
            avg: 0.0,
            count: -1,
            rng,
            early_drops: 0,
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The base drop probability p_b for the current average.
    pub fn base_probability(&self) -> f64 {
        let RedParams {
            min_th_pkts: lo,
            max_th_pkts: hi,
            max_p,
            ..
        } = self.p;
        if self.avg < lo {
            0.0
        } else if self.avg < hi {
            max_p * (self.avg - lo) / (hi - lo)
        } else if self.avg < 2.0 * hi {
            max_p + (1.0 - max_p) * (self.avg - hi) / hi
        } else {
            1.0
        }
    }
}

impl Queue for Red {
    fn enqueue(&mut self, now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)> {
        self.avg = (1.0 - self.p.weight) * self.avg + self.p.weight * self.inner.len() as f64;
        let pb = self.base_probability();
        if pb <= 0.0 {
            self.count = -1;
            return self.inner.enqueue(now, item);
        }
        self.count += 1;
        let pa = if pb >= 1.0 {
            1.0
        } else {
            (pb / (1.0 - self.count as f64 * pb)).clamp(0.0, 1.0)
        };
        let pa = if self.count as f64 * pb >= 1.0 {
            1.0
        } else {
            pa
        };
        if self.rng.gen::<f64>() < pa {
            self.count = 0;
            self.early_drops += 1;
            return Err((item, DropReason::EarlyDrop));
        }
        self.inner.enqueue(now, item)
    }
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Queued>) -> Option<Queued> {
        self.inner.dequeue(now, dropped)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::droptail::tests::pkt;
    use crate::sim::{stream, Component};

    #[test]
    fn probability_curve_is_gentle() {
        let mut r = Red::new(100, RedParams::default(), stream(1, 0, Component::Queue));
        for (avg, want) in [
            (4.0, 0.0),
            (10.0, 0.05),
            (15.0, 0.1),
            (22.5, 0.55),
            (30.0, 1.0),
        ] {
            r.avg = avg;
            assert!((r.base_probability() - want).abs() < 1e-12, "avg {avg}");
        }
    }

    #[test]
    fn short_queue_drops_nothing_and_average_tracks_the_queue() {
        let mut r = Red::new(100, RedParams::default(), stream(1, 0, Component::Queue));
        for i in 0..4 {
            r.enqueue(SimTime::ZERO, pkt(i)).unwrap();
        }
        assert!(r.avg() < 4.0 && r.avg() > 0.0);
        assert_eq!(r.early_drops, 0);
    }
}
