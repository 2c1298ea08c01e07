//! ARP as ns-2.35's `ARPTable` (`mac/arp.cc`) models it for the CMU wireless node.
//!
//! * The link layer asks the table for a next hop's MAC address before a unicast
//!   packet enters the interface queue. A resolved entry answers at once and stays
//!   resolved for the rest of the run (ns-2 entries never expire).
//! * An unresolved next hop holds one packet: a newer packet replaces it and the
//!   older one is dropped (ns-2 `DROP_IFQ_ARP_FULL`, traced `ARP`). Every packet that
//!   reaches an unresolved entry sends one more ARP request (a 28-byte broadcast);
//!   there is no retransmission timer.
//! * The request count is checked before it is incremented: once `ARP_MAX_REQUEST_COUNT`
//!   (3) requests went out unanswered, the next packet fails together with the held
//!   one — both are handed to the routing protocol as link failures (ns-2's
//!   `xmit_failure_` callback) — and the count starts again.
//! * Any ARP message heard (request or reply, for us or not) resolves its sender;
//!   the held packet for it is released. A request for us is answered with a
//!   unicast reply. Requests, replies and released packets reach the interface
//!   queue after the table's 5 µs delay (`ARPTable set delay_ 5us`).

use crate::ids::NodeId;
use crate::sim::SimDuration;
pub use crate::wire::arp::{ArpMsg, ArpOp, ARP_BYTES};
use crate::wire::Packet;
use std::collections::BTreeMap;

/// ns-2 `ARP_MAX_REQUEST_COUNT`.
pub const ARP_MAX_REQUEST_COUNT: u32 = 3;
/// ns-2 `ARPTable delay_` (ns-mobilenode.tcl).
pub const ARP_DELAY: SimDuration = SimDuration(5_000);

#[derive(Default)]
struct Entry {
    up: bool,
    count: u32,
    hold: Option<Packet>,
}

/// What became of a packet offered to [`ArpTable::resolve`].
#[derive(Debug)]
pub enum Resolve {
    /// The next hop is resolved: the packet goes on to the interface queue.
    Ready(Packet),
    /// The packet is held and a request must be broadcast; `replaced` is the
    /// previously held packet, now dropped.
    Held { replaced: Option<Packet> },
    /// Too many unanswered requests: the held packet (if any) and this one fail.
    Failed { held: Option<Packet>, pkt: Packet },
}

/// What an incoming ARP message asks of the link layer.
#[derive(Debug, Default)]
pub struct Input {
    /// The packet held for the message's sender, to release to the queue.
    pub release: Option<Packet>,
    /// A reply to send (the message was a request for us).
    pub reply: Option<ArpMsg>,
}

/// One node's ARP table. Ordered map: nothing iterates it, but it keeps runs
/// independent of hashing.
#[derive(Default)]
pub struct ArpTable {
    me: NodeId,
    entries: BTreeMap<NodeId, Entry>,
    pub requests_sent: u64,
}

impl ArpTable {
    pub fn new(me: NodeId) -> Self {
        ArpTable {
            me,
            entries: BTreeMap::new(),
            requests_sent: 0,
        }
    }

    /// Every packet held for an unresolved next hop (for the end-of-run accounting).
    pub fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.entries
            .values()
            .filter_map(|e| e.hold.as_ref())
            .for_each(f);
    }

    pub fn is_resolved(&self, n: NodeId) -> bool {
        self.entries.get(&n).is_some_and(|e| e.up)
    }

    /// A unicast packet for `next_hop` is about to enter the interface queue.
    pub fn resolve(&mut self, next_hop: NodeId, pkt: Packet) -> Resolve {
        let e = self.entries.entry(next_hop).or_default();
        if e.up {
            return Resolve::Ready(pkt);
        }
        if e.count >= ARP_MAX_REQUEST_COUNT {
            e.count = 0;
            return Resolve::Failed {
                held: e.hold.take(),
                pkt,
            };
        }
        e.count += 1;
        let replaced = e.hold.replace(pkt);
        self.requests_sent += 1;
        Resolve::Held { replaced }
    }

    /// The request to broadcast for `next_hop`.
    pub fn request(&self, next_hop: NodeId) -> ArpMsg {
        ArpMsg {
            op: ArpOp::Request,
            sender: self.me,
            target: next_hop,
        }
    }

    /// An ARP message arrived intact.
    pub fn input(&mut self, m: &ArpMsg) -> Input {
        let e = self.entries.entry(m.sender).or_default();
        e.up = true;
        let release = e.hold.take();
        let reply = (m.op == ArpOp::Request && m.target == self.me).then_some(ArpMsg {
            op: ArpOp::Reply,
            sender: self.me,
            target: m.sender,
        });
        Input { release, reply }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(uid: u64) -> Packet {
        crate::wire::test_support::udp(uid, 0, 5, 100)
    }

    #[test]
    fn holds_one_packet_and_the_newer_replaces_the_older() {
        let mut t = ArpTable::new(NodeId(0));
        assert!(matches!(
            t.resolve(NodeId(1), pkt(1)),
            Resolve::Held { replaced: None }
        ));
        match t.resolve(NodeId(1), pkt(2)) {
            Resolve::Held { replaced: Some(p) } => assert_eq!(p.uid, 1),
            r => panic!("{r:?}"),
        }
        assert_eq!(t.requests_sent, 2, "one request per packet, as ns-2");
        // The reply resolves the entry and releases the newest packet.
        let inp = t.input(&ArpMsg {
            op: ArpOp::Reply,
            sender: NodeId(1),
            target: NodeId(0),
        });
        assert_eq!(inp.release.map(|p| p.uid), Some(2));
        assert!(inp.reply.is_none());
        assert!(matches!(t.resolve(NodeId(1), pkt(3)), Resolve::Ready(p) if p.uid == 3));
    }

    #[test]
    fn fourth_packet_fails_with_the_held_one_after_three_requests() {
        let mut t = ArpTable::new(NodeId(0));
        for uid in 1..=3 {
            assert!(matches!(
                t.resolve(NodeId(1), pkt(uid)),
                Resolve::Held { .. }
            ));
        }
        match t.resolve(NodeId(1), pkt(4)) {
            Resolve::Failed { held: Some(h), pkt } => assert_eq!((h.uid, pkt.uid), (3, 4)),
            r => panic!("{r:?}"),
        }
        // The count starts again: the next packet is held and requested anew.
        assert!(matches!(
            t.resolve(NodeId(1), pkt(5)),
            Resolve::Held { replaced: None }
        ));
        assert_eq!(t.requests_sent, 4);
    }

    #[test]
    fn a_request_teaches_every_hearer_and_the_target_replies() {
        let mut target = ArpTable::new(NodeId(1));
        let req = ArpMsg {
            op: ArpOp::Request,
            sender: NodeId(0),
            target: NodeId(1),
        };
        let inp = target.input(&req);
        assert_eq!(
            inp.reply,
            Some(ArpMsg {
                op: ArpOp::Reply,
                sender: NodeId(1),
                target: NodeId(0)
            })
        );
        assert!(target.is_resolved(NodeId(0)));
        let mut bystander = ArpTable::new(NodeId(2));
        assert!(bystander.input(&req).reply.is_none());
        assert!(
            bystander.is_resolved(NodeId(0)),
            "ns-2 arpinput learns the sender from any ARP message"
        );
    }
}
