//! The DSDV routing table (Perkins & Bhagwat 1994, §3–§4) with ns-2's
//! bookkeeping for damping (`dsdv/rtable.h`, `processUpdate`, `makeUpdate`).
//!
//! One entry per destination, this node included (metric 0, its own even
//! sequence number). Route selection (§3): a route with a *newer* destination
//! sequence number always replaces the entry, whatever its metric; with the
//! *same* number the lower metric wins; older numbers are ignored. Because only
//! the destination makes even numbers and a broken route gets the odd number
//! just above, a node never adopts a route older than the one it holds: that is
//! what keeps DSDV loop-free.
//!
//! Damping (§4, settling time): each entry keeps a weighted average `wst` of
//! how long, after a new sequence number first arrives, the best route for that
//! number takes to arrive (`changed_at − new_seq_at`), averaged with weight
//! `alpha` (ns-2 0.875) and started at `wst0` (ns-2 6 s). A changed finite
//! route is not advertised before `now + 2·wst` (`advertise_ok_at`, ns-2's
//! choice of "twice the settling time"); breaks (infinite metric) and routes
//! that come back from infinity are advertised at once.
//!
//! Entries live in a `BTreeMap`, so every walk (updates, breaks) is in
//! destination order and runs are deterministic.

use super::packets::{Advert, INFINITY};
use super::Params;
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// `a` is newer than `b` in 32-bit sequence-number arithmetic (signed
/// difference, so numbers may wrap; ns-2 compares unsigned and never wraps).
pub fn seq_newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub dst: NodeId,
    pub next_hop: NodeId,
    /// Hops to `dst`; [`INFINITY`] when unreachable.
    pub metric: u8,
    /// The destination sequence number the route is for.
    pub seq: u32,
    /// Not to be advertised before this (settling-time damping).
    pub advertise_ok_at: SimTime,
    /// The sequence number changed and has not been advertised yet.
    pub advert_seq: bool,
    /// The metric changed since the last full dump: every incremental update
    /// until then carries the entry (paper §3).
    pub advert_metric: bool,
    /// The metric this node last advertised for `dst`.
    pub last_advertised_metric: u8,
    /// When the route was last replaced.
    pub changed_at: SimTime,
    /// When the current sequence number was first heard.
    pub new_seq_at: SimTime,
    /// Weighted average settling time (s).
    pub wst: f64,
    /// A triggered update is wanted at this time (ns-2's per-entry
    /// `trigger_event`).
    pub trigger_at: Option<SimTime>,
}

impl Route {
    pub fn usable(&self) -> bool {
        self.metric != INFINITY
    }

    /// Take the route `adv` offers through `from` (`metric` already one hop
    /// longer), with the settling state `settling` computed for it.
    fn take(
        &mut self,
        now: SimTime,
        from: NodeId,
        metric: u8,
        seq: u32,
        (wst, new_seq_at, ok_at): (f64, SimTime, SimTime),
    ) {
        self.next_hop = from;
        self.metric = metric;
        self.seq = seq;
        self.changed_at = now;
        self.new_seq_at = new_seq_at;
        self.wst = wst;
        self.advertise_ok_at = ok_at;
    }
}

/// An advertised metric one hop further on, through its sender; infinity stays.
fn one_hop_more(adv_metric: u8) -> u8 {
    if adv_metric >= INFINITY {
        INFINITY
    } else {
        adv_metric.saturating_add(1).min(INFINITY)
    }
}

/// What an advertised entry did to the table (ns-2 `processUpdate` cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The entry is about this node: never stored. `broken`: a neighbour
    /// thinks this node is unreachable.
    Own { broken: bool },
    /// First information about the destination.
    New,
    /// Same sequence number, lower metric: the shorter route replaced ours.
    Shorter,
    /// Newer sequence number: believed whatever its metric (§3).
    Fresher,
    /// The neighbour advertised an older number as broken while ours is good:
    /// our route is advertised at once to correct it.
    Educate,
    /// An older number with a finite metric while ours is newer: ignored as a
    /// route (§3), but see [`RouteTable::write_stale`] for what ns-2 does when
    /// packets wait for the destination.
    Stale,
    /// Older and broken, or same number and not shorter.
    Ignored,
}

/// The settling-time bookkeeping of an advertisement with `metric` (already
/// one hop more) and number `seq` against the entry `r` (ns-2 `processUpdate`):
/// the new `wst`, when the number was first heard, and when the entry may be
/// advertised.
fn settling(
    r: Option<&Route>,
    now: SimTime,
    metric: u8,
    seq: u32,
    p: &Params,
) -> (f64, SimTime, SimTime) {
    // §4 settling time: a new sequence number ends the measurement for the
    // old one — how long after it first arrived the route last changed.
    let (wst, new_seq_at) = match r {
        Some(r) if r.seq == seq => (r.wst, r.new_seq_at),
        Some(r) => {
            let settle = if r.changed_at > r.new_seq_at {
                r.changed_at.since(r.new_seq_at).as_secs_f64()
            } else {
                0.0
            };
            (
                p.settling_alpha * r.wst + (1.0 - p.settling_alpha) * settle,
                now,
            )
        }
        None => (p.initial_settling_time.as_secs_f64(), now),
    };
    // Damping: a finite route replacing a finite one waits 2·wst; a break
    // or a route back from infinity is news to tell at once.
    let damped = metric != INFINITY && r.is_none_or(|r| r.usable());
    let ok_at = if damped {
        now + SimDuration::from_secs_f64(2.0 * wst)
    } else {
        now
    };
    (wst, new_seq_at, ok_at)
}

/// One entry per known destination, this node's own included.
#[derive(Default)]
pub struct RouteTable {
    routes: BTreeMap<NodeId, Route>,
}

impl RouteTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, dst: NodeId) -> Option<&Route> {
        self.routes.get(&dst)
    }

    pub fn get_mut(&mut self, dst: NodeId) -> Option<&mut Route> {
        self.routes.get_mut(&dst)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Route> {
        self.routes.values()
    }

    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The next hop towards `dst`, if the route is usable.
    pub fn next_hop(&self, dst: NodeId) -> Option<NodeId> {
        self.routes
            .get(&dst)
            .filter(|r| r.usable())
            .map(|r| r.next_hop)
    }

    /// This node's own entry (metric 0) with sequence number `seq`.
    pub fn set_own(&mut self, now: SimTime, me: NodeId, seq: u32) {
        let r = self.routes.entry(me).or_insert_with(|| Route {
            dst: me,
            next_hop: me,
            metric: 0,
            seq,
            advertise_ok_at: SimTime::ZERO,
            advert_seq: true,
            advert_metric: true,
            last_advertised_metric: 0,
            changed_at: now,
            new_seq_at: now,
            wst: 0.0,
            trigger_at: None,
        });
        r.seq = seq;
        r.advert_seq = true;
        r.changed_at = now;
        r.new_seq_at = now;
    }

    /// An entry for a destination heard of only through a packet to it or an
    /// update from an unknown neighbour: never advertised (ns-2 sets
    /// `advertise_ok_at` a week ahead), sequence number 0 (older than any the
    /// destination makes).
    pub fn insert_placeholder(
        &mut self,
        now: SimTime,
        dst: NodeId,
        next_hop: NodeId,
        metric: u8,
        wst0: f64,
    ) {
        self.routes.entry(dst).or_insert(Route {
            dst,
            next_hop,
            metric,
            seq: 0,
            advertise_ok_at: SimTime::MAX,
            advert_seq: false,
            advert_metric: false,
            last_advertised_metric: 0,
            changed_at: now,
            new_seq_at: now,
            wst: wst0,
            trigger_at: None,
        });
    }

    /// Apply one entry of an update received from neighbour `from` (ns-2
    /// `processUpdate`, per entry). Sets the entry's triggered-update time when
    /// the change must be advertised before the next full dump.
    pub fn apply(
        &mut self,
        now: SimTime,
        me: NodeId,
        from: NodeId,
        adv: Advert,
        p: &Params,
    ) -> Applied {
        let metric = one_hop_more(adv.metric);
        if adv.dst == me {
            // "You have the last word on yourself" (ns-2): never stored.
            return Applied::Own {
                broken: metric == INFINITY,
            };
        }
        let existing = self.routes.get_mut(&adv.dst);
        let settled = settling(existing.as_deref(), now, metric, adv.seq, p);
        let (wst, new_seq_at, ok_at) = settled;

        let Some(r) = existing else {
            let fresh = metric != INFINITY;
            self.routes.insert(
                adv.dst,
                Route {
                    dst: adv.dst,
                    next_hop: from,
                    metric,
                    seq: adv.seq,
                    advertise_ok_at: ok_at,
                    advert_seq: false,
                    advert_metric: fresh,
                    last_advertised_metric: 0,
                    changed_at: now,
                    new_seq_at,
                    wst,
                    trigger_at: fresh.then_some(ok_at),
                },
            );
            return Applied::New;
        };
        if adv.seq == r.seq {
            if metric >= r.metric {
                return Applied::Ignored;
            }
            // Standard distance vector: a shorter route for the same number.
            r.take(now, from, metric, adv.seq, settled);
            // Back to the metric we last advertised: nothing new to tell.
            r.advert_metric = metric != r.last_advertised_metric;
            if r.advert_metric {
                r.trigger_at = Some(ok_at);
            }
            Applied::Shorter
        } else if seq_newer(adv.seq, r.seq) {
            // A fresher number must be believed, whatever its metric.
            r.take(now, from, metric, adv.seq, settled);
            r.advert_seq = true;
            r.advert_metric = metric != r.last_advertised_metric;
            // ns-2 leaves TRIGGER_UPDATE_ON_FRESH_SEQNUM undefined: new
            // numbers wait for the next update unless asked otherwise.
            if p.trigger_on_new_seq {
                r.trigger_at = Some(ok_at);
            }
            Applied::Fresher
        } else if metric == INFINITY && r.usable() {
            // The neighbour holds an older, broken route: tell it ours now.
            r.advertise_ok_at = now;
            r.advert_metric = true;
            r.trigger_at = Some(now);
            Applied::Educate
        } else if metric != INFINITY {
            Applied::Stale
        } else {
            Applied::Ignored
        }
    }

    /// ns-2's bug after a [`Applied::Stale`] advertisement for a destination
    /// with waiting packets (`processUpdate`, dsdv.cc:788–801): the entry built
    /// from the ignored advertisement is written into the table anyway
    /// (`table_->AddEntry(rte)`), so the older route through `from` becomes the
    /// route. Timing fields are those `processUpdate` computed for it (a
    /// different number: the settling time is re-measured); the advertisement
    /// flags, the last advertised metric and any pending trigger stay.
    pub fn write_stale(&mut self, now: SimTime, from: NodeId, adv: Advert, p: &Params) {
        let metric = one_hop_more(adv.metric);
        let Some(r) = self.routes.get_mut(&adv.dst) else {
            return;
        };
        let settled = settling(Some(r), now, metric, adv.seq, p);
        r.take(now, from, metric, adv.seq, settled);
    }

    /// The link to neighbour `nb` broke (MAC feedback or missed updates):
    /// every usable route through it gets the infinite metric and the odd
    /// sequence number just above its own, to be advertised at once (§3).
    /// Returns the destinations cut off.
    pub fn break_via(&mut self, now: SimTime, me: NodeId, nb: NodeId) -> Vec<NodeId> {
        let mut cut = Vec::new();
        for r in self.routes.values_mut() {
            if r.dst == me || r.next_hop != nb || !r.usable() {
                continue;
            }
            // ns-2 leaves `changed_at` alone, so that the settling time does
            // not count the infinite metric as the best one for this number.
            r.metric = INFINITY;
            r.seq = r.seq.wrapping_add(1);
            r.advertise_ok_at = now;
            r.advert_metric = true;
            r.advert_seq = true;
            r.trigger_at = Some(now);
            cut.push(r.dst);
        }
        cut
    }

    /// Whether a triggered update should become a full dump (ns-2
    /// `makeUpdate`): more than a third of the table, and more than 3 entries,
    /// changed and may be advertised.
    pub fn promote_to_full(&self, now: SimTime) -> bool {
        let changed = self
            .routes
            .values()
            .filter(|r| (r.advert_seq || r.advert_metric) && r.advertise_ok_at <= now)
            .count();
        changed * 3 > self.routes.len() && changed > 3
    }

    /// The entries of an update sent now (ns-2 `makeUpdate`). An incremental
    /// update carries the entries whose number or metric changed and that may
    /// be advertised; a full dump every entry that may be advertised (damped
    /// ones wait, even here). Entries go in destination order, this node's own
    /// among them, as ns-2 walks its sorted table (the paper recommends the
    /// sender's own entry first; receivers handle entries in packet order).
    pub fn collect(&mut self, now: SimTime, _me: NodeId, full: bool) -> Vec<Advert> {
        let mut out = Vec::new();
        for r in self.routes.values_mut() {
            if r.advertise_ok_at > now || !(full || r.advert_seq || r.advert_metric) {
                continue;
            }
            out.push(Advert {
                dst: r.dst,
                metric: r.metric,
                seq: r.seq,
            });
            r.last_advertised_metric = r.metric;
            r.advert_seq = false;
            if full {
                // A full dump says everything: nothing is owed until it changes.
                r.advert_metric = false;
            }
        }
        out
    }

    /// [`promote_to_full`](Self::promote_to_full) then [`collect`](Self::collect):
    /// whether the update is a full dump, and its entries.
    pub fn make_update(&mut self, now: SimTime, me: NodeId, full: bool) -> (bool, Vec<Advert>) {
        let full = full || self.promote_to_full(now);
        (full, self.collect(now, me, full))
    }

    /// Drop every triggered-update request before `t` (ns-2
    /// `cancelTriggersBefore`).
    pub fn cancel_triggers_before(&mut self, t: SimTime) {
        for r in self.routes.values_mut() {
            if r.trigger_at.is_some_and(|at| at < t) {
                r.trigger_at = None;
            }
        }
    }

    /// The earliest pending triggered-update time and its destination.
    pub fn next_trigger(&self) -> Option<(SimTime, NodeId)> {
        self.routes
            .values()
            .filter_map(|r| r.trigger_at.map(|t| (t, r.dst)))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: NodeId = NodeId(0);

    fn t(s: f64) -> SimTime {
        SimTime::from_secs_f64(s)
    }

    fn adv(dst: u32, metric: u8, seq: u32) -> Advert {
        Advert {
            dst: NodeId(dst),
            metric,
            seq,
        }
    }

    fn table() -> (RouteTable, Params) {
        let mut tb = RouteTable::new();
        tb.set_own(t(0.0), ME, 2);
        (tb, Params::default())
    }

    #[test]
    fn first_route_is_installed_and_its_advertisement_damped_by_twice_wst0() {
        let (mut tb, p) = table();
        assert_eq!(
            tb.apply(t(1.0), ME, NodeId(1), adv(5, 2, 10), &p),
            Applied::New
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!(
            (r.next_hop, r.metric, r.seq),
            (NodeId(1), 3, 10),
            "one more hop through the neighbour"
        );
        assert_eq!(tb.next_hop(NodeId(5)), Some(NodeId(1)), "usable at once");
        assert_eq!(r.advertise_ok_at, t(1.0 + 2.0 * 6.0), "ns-2: now + 2·wst0");
        assert_eq!(
            r.trigger_at,
            Some(r.advertise_ok_at),
            "a triggered update when it may be told"
        );
        assert!(r.advert_metric);
    }

    #[test]
    fn newer_sequence_number_wins_whatever_its_metric() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 1, 10), &p);
        // A worse metric with a newer number replaces the route.
        assert_eq!(
            tb.apply(t(2.0), ME, NodeId(2), adv(5, 4, 12), &p),
            Applied::Fresher
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!((r.next_hop, r.metric, r.seq), (NodeId(2), 5, 12));
        assert!(r.advert_seq);
        // The old number never comes back, even with a better metric.
        assert_eq!(
            tb.apply(t(3.0), ME, NodeId(1), adv(5, 0, 10), &p),
            Applied::Stale
        );
        assert_eq!(tb.get(NodeId(5)).unwrap().next_hop, NodeId(2));
        // Wrapping arithmetic: 1 is newer than u32::MAX - 1.
        assert!(seq_newer(1, u32::MAX - 1) && !seq_newer(u32::MAX - 1, 1));
    }

    #[test]
    fn same_sequence_number_lower_metric_wins_and_ties_are_ignored() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 3, 10), &p);
        assert_eq!(
            tb.apply(t(2.0), ME, NodeId(2), adv(5, 3, 10), &p),
            Applied::Ignored,
            "equal metric: keep the first"
        );
        assert_eq!(
            tb.apply(t(2.5), ME, NodeId(3), adv(5, 5, 10), &p),
            Applied::Ignored,
            "longer: ignored"
        );
        assert_eq!(
            tb.apply(t(3.0), ME, NodeId(2), adv(5, 1, 10), &p),
            Applied::Shorter
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!((r.next_hop, r.metric), (NodeId(2), 2));
        // Same number: the settling time is not re-measured, but the route
        // changed 2 s after the number arrived — the next number will count it.
        assert_eq!(r.wst, 6.0);
        assert_eq!(
            r.changed_at.since(r.new_seq_at),
            SimDuration::from_secs_f64(2.0)
        );
        tb.apply(t(20.0), ME, NodeId(2), adv(5, 1, 12), &p);
        let r = tb.get(NodeId(5)).unwrap();
        assert!(
            (r.wst - (0.875 * 6.0 + 0.125 * 2.0)).abs() < 1e-12,
            "wst = α·wst + (1−α)·settle = {}",
            r.wst
        );
        assert_eq!(
            r.advertise_ok_at,
            t(20.0) + SimDuration::from_secs_f64(2.0 * r.wst)
        );
    }

    #[test]
    fn a_break_gives_the_odd_number_above_and_infinity_and_is_told_at_once() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(1, 0, 4), &p);
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 2, 10), &p);
        tb.apply(t(1.0), ME, NodeId(2), adv(6, 1, 8), &p);
        let cut = tb.break_via(t(5.0), ME, NodeId(1));
        assert_eq!(cut, vec![NodeId(1), NodeId(5)]);
        for d in [1, 5] {
            let r = tb.get(NodeId(d)).unwrap();
            assert_eq!(r.metric, INFINITY);
            assert_eq!(r.seq % 2, 1, "odd: made by the node that saw the break");
            assert_eq!(r.advertise_ok_at, t(5.0), "a break is not damped");
            assert_eq!(r.trigger_at, Some(t(5.0)));
        }
        assert_eq!(tb.get(NodeId(5)).unwrap().seq, 11);
        assert_eq!(tb.next_hop(NodeId(5)), None);
        assert_eq!(
            tb.next_hop(NodeId(6)),
            Some(NodeId(2)),
            "other routes untouched"
        );
        assert!(
            tb.break_via(t(6.0), ME, NodeId(1)).is_empty(),
            "already broken"
        );
        // Only the destination's next (even) number repairs the route: the
        // neighbour's old finite route for number 10 is stale now.
        assert_eq!(
            tb.apply(t(7.0), ME, NodeId(2), adv(5, 1, 10), &p),
            Applied::Stale
        );
        assert_eq!(
            tb.apply(t(8.0), ME, NodeId(2), adv(5, 1, 12), &p),
            Applied::Fresher
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!((r.next_hop, r.metric), (NodeId(2), 2));
        assert_eq!(
            r.advertise_ok_at,
            t(8.0),
            "back from infinity: advertised at once"
        );
    }

    #[test]
    fn a_received_break_with_a_newer_odd_number_is_believed() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 1, 10), &p);
        assert_eq!(
            tb.apply(t(2.0), ME, NodeId(1), adv(5, INFINITY, 11), &p),
            Applied::Fresher
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!((r.metric, r.seq), (INFINITY, 11));
        assert_eq!(
            r.trigger_at,
            Some(t(1.0 + 12.0)),
            "ns-2: no trigger for a fresh number (the first route's remains)"
        );
        // A finite route for the same odd number cannot exist; the broken one
        // with the same number is not shorter.
        assert_eq!(
            tb.apply(t(3.0), ME, NodeId(2), adv(5, INFINITY, 11), &p),
            Applied::Ignored
        );
    }

    #[test]
    fn an_older_broken_route_from_a_neighbour_is_corrected_at_once() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 1, 12), &p);
        assert_eq!(
            tb.apply(t(2.0), ME, NodeId(2), adv(5, INFINITY, 11), &p),
            Applied::Educate
        );
        let r = tb.get(NodeId(5)).unwrap();
        assert_eq!(
            (r.metric, r.seq, r.next_hop),
            (2, 12, NodeId(1)),
            "our route is kept"
        );
        assert_eq!(r.trigger_at, Some(t(2.0)));
        assert_eq!(r.advertise_ok_at, t(2.0));
    }

    #[test]
    fn own_entry_is_never_overwritten() {
        let (mut tb, p) = table();
        assert_eq!(
            tb.apply(t(1.0), ME, NodeId(1), adv(0, 1, 100), &p),
            Applied::Own { broken: false }
        );
        assert_eq!(
            tb.apply(t(1.0), ME, NodeId(1), adv(0, INFINITY, 101), &p),
            Applied::Own { broken: true }
        );
        let me = tb.get(ME).unwrap();
        assert_eq!((me.metric, me.seq), (0, 2));
    }

    #[test]
    fn incremental_updates_carry_changes_until_the_next_full_dump() {
        let (mut tb, p) = table();
        // No damping here (wst stays 0), to look at what goes in which update.
        let p0 = Params {
            initial_settling_time: SimDuration::ZERO,
            settling_alpha: 1.0,
            ..p
        };
        // Eight destinations already advertised in a full dump.
        for d in 1..=8 {
            tb.apply(t(1.0), ME, NodeId(20), adv(d, d as u8, 10), &p0);
        }
        let (full, all) = tb.make_update(t(2.0), ME, true);
        assert!(full);
        assert_eq!(all.len(), 9, "own entry + 8");
        assert_eq!(all[0].dst, ME, "own entry first");
        // One metric changes: incremental updates carry it, every time, until
        // the next full dump.
        tb.apply(t(3.0), ME, NodeId(2), adv(4, 0, 10), &p0);
        for when in [3.0, 4.0] {
            let (full, inc) = tb.make_update(t(when), ME, false);
            assert!(!full);
            assert_eq!(inc, vec![adv(4, 1, 10)]);
        }
        let (_, all) = tb.make_update(t(5.0), ME, true);
        assert_eq!(all.len(), 9);
        assert!(
            tb.make_update(t(6.0), ME, false).1.is_empty(),
            "nothing left to tell"
        );
        // More than a third of the table changed: a full dump instead.
        for d in 1..=4 {
            tb.apply(t(7.0), ME, NodeId(3), adv(d, 0, 12), &p0);
        }
        let (full, all) = tb.make_update(t(7.0), ME, false);
        assert!(full, "4 of 9 changed");
        assert_eq!(all.len(), 9);
    }

    #[test]
    fn damped_entries_are_left_out_even_of_full_dumps_until_they_settle() {
        let (mut tb, p) = table();
        tb.apply(t(1.0), ME, NodeId(1), adv(5, 1, 10), &p);
        let (_, now) = tb.make_update(t(2.0), ME, true);
        assert_eq!(
            now.iter().map(|a| a.dst).collect::<Vec<_>>(),
            vec![ME],
            "ns-2 skips unsettled routes"
        );
        let (_, later) = tb.make_update(t(13.0), ME, true);
        assert_eq!(later.len(), 2);
        // A placeholder (packets waiting for an unknown destination) is never told.
        tb.insert_placeholder(t(14.0), NodeId(9), NodeId(9), INFINITY, 6.0);
        assert_eq!(tb.make_update(t(15.0), ME, true).1.len(), 2);
    }
}
