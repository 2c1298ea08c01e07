//! Packets waiting for a route, shared by the on-demand protocols: AODV (ns-2
//! `aodv_rqueue`; RFC 3561 §6.3 "buffer") and DSR (ns-2 `DSRAgent::send_buf`;
//! RFC 4728 §4.4 "Send Buffer").
//!
//! A FIFO of at most `limit` packets, each kept at most `timeout` from when it
//! was buffered. ns-2 (both protocols): 64 packets, 30 s; when full, the oldest
//! packet is dropped to make room ("drop-front").

use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime};
use crate::wire::Packet;
use std::collections::VecDeque;

pub struct SendBuffer {
    limit: usize,
    timeout: SimDuration,
    q: VecDeque<(SimTime, Packet)>,
}

impl SendBuffer {
    pub fn new(limit: u32, timeout: SimDuration) -> Self {
        SendBuffer {
            limit: limit as usize,
            timeout,
            q: VecDeque::new(),
        }
    }

    /// Buffer `pkt`; returns the packet evicted to make room, if any.
    pub fn push(&mut self, now: SimTime, pkt: Packet) -> Option<Packet> {
        let evicted = if self.q.len() >= self.limit {
            self.q.pop_front().map(|(_, p)| p)
        } else {
            None
        };
        self.q.push_back((now, pkt));
        evicted
    }

    /// Remove and return every packet that has waited `timeout` or longer.
    pub fn expire(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        while let Some((t, _)) = self.q.front() {
            if *t + self.timeout > now {
                break;
            }
            out.push(self.q.pop_front().expect("front exists").1);
        }
    }

    /// When the oldest packet times out.
    pub fn next_expiry(&self) -> Option<SimTime> {
        self.q.front().map(|(t, _)| *t + self.timeout)
    }

    /// Remove and return the packets for `dst`, oldest first.
    pub fn take_for(&mut self, dst: NodeId, out: &mut Vec<Packet>) {
        if !self.q.iter().any(|(_, p)| p.ip.dst == dst) {
            return;
        }
        let mut keep = VecDeque::with_capacity(self.q.len());
        for (t, p) in self.q.drain(..) {
            if p.ip.dst == dst {
                out.push(p);
            } else {
                keep.push_back((t, p));
            }
        }
        self.q = keep;
    }

    /// Remove and return (oldest first) the packets `keep_out` selects.
    pub fn take_matching(
        &mut self,
        mut keep_out: impl FnMut(&Packet) -> bool,
        out: &mut Vec<Packet>,
    ) {
        if !self.q.iter().any(|(_, p)| keep_out(p)) {
            return;
        }
        let mut keep = VecDeque::with_capacity(self.q.len());
        for (t, p) in self.q.drain(..) {
            if keep_out(&p) {
                out.push(p);
            } else {
                keep.push_back((t, p));
            }
        }
        self.q = keep;
    }

    /// The distinct destinations of the buffered packets, in first-buffered order.
    pub fn destinations(&self) -> Vec<NodeId> {
        let mut d: Vec<NodeId> = Vec::new();
        for (_, p) in &self.q {
            if !d.contains(&p.ip.dst) {
                d.push(p.ip.dst);
            }
        }
        d
    }

    pub fn has_for(&self, dst: NodeId) -> bool {
        self.q.iter().any(|(_, p)| p.ip.dst == dst)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// The buffered packets, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter().map(|(_, p)| p)
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(uid: u64, dst: u32) -> Packet {
        crate::wire::test_support::udp_ns2(uid, 0, dst, 10)
    }

    #[test]
    fn drop_front_when_full_and_timeout() {
        let mut b = SendBuffer::new(2, SimDuration::from_secs_f64(30.0));
        let t = |s: f64| SimTime::from_secs_f64(s);
        assert!(b.push(t(0.0), pkt(1, 5)).is_none());
        assert!(b.push(t(1.0), pkt(2, 6)).is_none());
        assert_eq!(
            b.push(t(2.0), pkt(3, 5)).map(|p| p.uid),
            Some(1),
            "oldest evicted"
        );
        assert_eq!(b.next_expiry(), Some(t(31.0)));
        let mut out = Vec::new();
        b.take_for(NodeId(5), &mut out);
        assert_eq!(out.iter().map(|p| p.uid).collect::<Vec<_>>(), vec![3]);
        out.clear();
        b.expire(t(30.9), &mut out);
        assert!(out.is_empty());
        b.expire(t(31.0), &mut out);
        assert_eq!(out.iter().map(|p| p.uid).collect::<Vec<_>>(), vec![2]);
        assert!(b.is_empty());
    }
}
