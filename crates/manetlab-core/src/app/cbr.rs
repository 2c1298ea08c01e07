//! Constant bit rate source (ns-2 `Application/Traffic/CBR`): one packet of
//! `packet_bytes` every `interval`, from `start` while the send time is before
//! `stop`, at most `max_packets` packets. With jitter, each gap is
//! `interval + U(−jitter, +jitter)` drawn from the flow's own stream; the
//! scenario check keeps jitter below the interval so packets never reorder.

use crate::sim::{SimDuration, SimRng, SimTime};
use rand::Rng;

pub struct Cbr {
    pub packet_bytes: u32,
    interval_s: f64,
    jitter_s: f64,
    stop: SimTime,
    max_packets: Option<u64>,
    sent: u64,
    rng: SimRng,
}

impl Cbr {
    pub fn new(
        packet_bytes: u32,
        interval_s: f64,
        jitter_s: f64,
        stop: SimTime,
        max_packets: Option<u64>,
        rng: SimRng,
    ) -> Self {
        Cbr {
            packet_bytes,
            interval_s,
            jitter_s,
            stop,
            max_packets,
            sent: 0,
            rng,
        }
    }

    /// Whether a packet may be sent at `now` (before stop, under the packet cap).
    pub fn may_send(&self, now: SimTime) -> bool {
        now < self.stop && self.max_packets.is_none_or(|m| self.sent < m)
    }

    /// Record a send at `now`; returns its sequence number and when to send next.
    pub fn on_send(&mut self, now: SimTime) -> (u64, Option<SimTime>) {
        let seq = self.sent;
        self.sent += 1;
        let gap = if self.jitter_s > 0.0 {
            self.interval_s + self.rng.gen_range(-self.jitter_s..self.jitter_s)
        } else {
            self.interval_s
        };
        let next = now + SimDuration::from_secs_f64(gap);
        (seq, self.may_send(next).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{stream, Component};

    fn send_times(c: &mut Cbr, start: SimTime) -> Vec<SimTime> {
        let mut out = Vec::new();
        let mut t = Some(start).filter(|&t| c.may_send(t));
        while let Some(now) = t {
            out.push(now);
            t = c.on_send(now).1;
        }
        out
    }

    #[test]
    fn sends_every_interval_until_stop_exclusive() {
        let mut c = Cbr::new(
            100,
            0.25,
            0.0,
            SimTime::from_secs_f64(2.0),
            None,
            stream(1, 0, Component::Application),
        );
        let t = send_times(&mut c, SimTime::from_secs_f64(1.0));
        assert_eq!(
            t,
            vec![1.0, 1.25, 1.5, 1.75]
                .into_iter()
                .map(SimTime::from_secs_f64)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn max_packets_caps_the_flow() {
        let mut c = Cbr::new(
            100,
            0.1,
            0.0,
            SimTime::from_secs_f64(100.0),
            Some(3),
            stream(1, 0, Component::Application),
        );
        assert_eq!(send_times(&mut c, SimTime::ZERO).len(), 3);
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let mut c = Cbr::new(
            100,
            0.1,
            0.02,
            SimTime::from_secs_f64(100.0),
            None,
            stream(7, 0, Component::Application),
        );
        let t = send_times(&mut c, SimTime::ZERO);
        for w in t.windows(2) {
            let gap = (w[1] - w[0]).as_secs_f64();
            assert!((0.08 - 1e-9..=0.12 + 1e-9).contains(&gap), "gap {gap}");
        }
        let mean = (t.last().unwrap().as_secs_f64()) / (t.len() - 1) as f64;
        assert!((mean - 0.1).abs() < 0.002, "mean gap {mean}");
    }
}
