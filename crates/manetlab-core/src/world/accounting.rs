//! Packet accounting and results (docs/metrics.md): every copy's end
//! ([`Simulator::drop_packet`]), where live copies wait ([`Simulator::walk_held`]),
//! the packet ledger's settling, and the run's [`RunResult`] with its
//! connectivity report.
//!
//! Contract: results are read, never written, by [`Simulator::results`]; the
//! ledger settles only between events, when every copy of a packet is
//! somewhere `walk_held` looks.

use super::event::Event;
use super::Simulator;
use crate::ids::NodeId;
use crate::metrics::{
    ConnectivityReport, DropReason, FlowConnectivity, FlowSummary, Holder, InFlightCounts,
    LinkSummary, NodeSummary, PacketLedger, RoutingSummary, RunResult,
};
use crate::mobility::{placement, ConnectivityTimeline};
use crate::scenario::FlowKind;
use crate::wire::Packet;
use std::collections::BTreeMap;

impl Simulator {
    /// A copy of `pkt` ends at `node` (docs/metrics.md): counted per node,
    /// and in the packet's record, whose last drop is its fate unless another
    /// copy was delivered or is still in flight at the end.
    pub(super) fn drop_packet(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        self.trace_drop(node, pkt, reason);
        self.account_drop(node, pkt, reason);
    }

    /// [`Simulator::drop_packet`] without the trace line (its caller wrote one).
    pub(super) fn account_drop(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        self.nodes[node.index()]
            .counters
            .on_drop(reason, pkt.tag.is_some());
        if let Some(tag) = pkt.tag {
            self.ledger.dropped(pkt.uid, reason);
            if self.ledger.is_data(pkt.uid) {
                self.flows[tag.flow.index()].counters.on_drop(reason);
            }
        }
    }

    /// Where every application packet copy is now: the packet's holder (the
    /// first in [`Holder`] order when it has several copies) and each node's
    /// copies by holder.
    fn held_packets(&self) -> (BTreeMap<u64, Holder>, Vec<InFlightCounts>) {
        let mut by_uid: BTreeMap<u64, Holder> = BTreeMap::new();
        let mut per_node = vec![InFlightCounts::default(); self.nodes.len()];
        self.walk_held(&mut |node: NodeId, h: Holder, p: &Packet| {
            if p.tag.is_some() {
                per_node[node.index()].add(h);
                by_uid
                    .entry(p.uid)
                    .and_modify(|e| *e = (*e).min(h))
                    .or_insert(h);
            }
        });
        (by_uid, per_node)
    }

    /// Call `note(node, holder, packet)` for every packet copy waiting
    /// somewhere. Walks every place a packet can wait.
    fn walk_held(&self, note: &mut dyn FnMut(NodeId, Holder, &Packet)) {
        for n in &self.nodes {
            n.routing.buffered(&mut |p| note(n.id, Holder::Rtr, p));
            if let Some(w) = &n.wifi {
                w.ifq.for_each_packet(&mut |p| note(n.id, Holder::Ifq, p));
                self.air[n.id.index()]
                    .mac
                    .for_each_packet(&mut |p| note(n.id, Holder::Mac, p));
                if let Some(arp) = &w.arp {
                    arp.for_each_held(&mut |p| note(n.id, Holder::Arp, p));
                }
            }
        }
        for l in &self.links {
            for (d, dir) in l.dirs.iter().enumerate() {
                l.for_each_queued(d, &mut |p| note(dir.from, Holder::Link, p));
            }
        }
        for ev in self.sched.iter_pending() {
            match ev {
                Event::IfqArrive(n, p, _) | Event::LlUp(n, p, _) => {
                    note(*n, Holder::Ll, self.parcels.get(*p))
                }
                Event::LinkArrive(l, d, p) => note(
                    self.links[l.index()].dirs[*d as usize].from,
                    Holder::Link,
                    self.parcels.get(*p),
                ),
                Event::RoutingBroadcast(n, p) | Event::RoutingForward(n, p, _) => {
                    note(*n, Holder::Rtr, self.parcels.get(*p))
                }
                // Listed, not wildcarded: a new event that carries a packet must be placed here.
                Event::AppSend(_)
                | Event::LinkTxDone(..)
                | Event::Mac(..)
                | Event::TxEnd(_)
                | Event::SignalStart(..)
                | Event::SignalEnd(..)
                | Event::SampleQueues
                | Event::TcpOpen(_)
                | Event::TcpAppStop(_)
                | Event::TcpTimer(..)
                | Event::RoutingTimer(..)
                | Event::ArpOut(..)
                | Event::Fault => {}
            }
        }
    }

    /// Settle the packet ledger when it is due ([`PacketLedger::settle`]):
    /// between events, so every copy of a packet is somewhere
    /// [`Simulator::walk_held`] looks, or in a pending parcel or a frame on the
    /// air (counted as alive too, to be safe).
    #[inline(always)]
    pub(super) fn maybe_settle_ledger(&mut self) {
        if self.ledger.wants_settling() {
            self.settle_ledger();
        }
    }

    #[inline(never)]
    fn settle_ledger(&mut self) {
        let mut alive: Vec<u64> = Vec::new();
        self.walk_held(&mut |_, _, p: &Packet| {
            if p.tag.is_some() {
                alive.push(p.uid)
            }
        });
        alive.extend(
            self.parcels
                .slots
                .iter()
                .flatten()
                .filter(|p| p.tag.is_some())
                .map(|p| p.uid),
        );
        alive.extend(
            self.txs
                .iter()
                .flatten()
                .filter_map(|t| t.frame.pkt.as_ref())
                .filter(|p| p.tag.is_some())
                .map(|p| p.uid),
        );
        alive.sort_unstable();
        alive.dedup();
        self.ledger.settle(|uid| alive.binary_search(&uid).is_ok());
    }

    /// Settle the packet ledger after every event from now on, or at its usual
    /// threshold again (`floor` = [`PacketLedger::SETTLE_FLOOR`]): tests
    /// check that settling never changes a result.
    pub fn set_ledger_settle_floor(&mut self, floor: usize) {
        let old = std::mem::replace(&mut self.ledger, PacketLedger::with_floor(floor));
        assert!(
            old.is_empty(),
            "set the settling floor before the run starts"
        );
    }

    /// Application packets whose records the ledger keeps now (created and not
    /// yet settled): bounded by the packets alive, not by those ever sent.
    pub fn ledger_records(&self) -> usize {
        self.ledger.len()
    }

    /// The results of the run so far.
    pub fn results(&self) -> RunResult {
        let run_s = self.end.as_secs_f64();
        let (held, node_held) = self.held_packets();
        let fates = self
            .ledger
            .fates(self.flows.len(), |uid| held.get(&uid).copied());
        RunResult {
            manetlab_version: crate::VERSION.to_string(),
            scenario_name: self.scenario_name.clone(),
            seed: self.seed,
            duration_s: run_s,
            events: self.sched.events_executed(),
            flows: self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let kind = match f.kind {
                        FlowKind::Cbr => "cbr",
                        FlowKind::Ftp => "ftp",
                    };
                    let mut summary = FlowSummary::new(
                        i as u32,
                        f.name.clone(),
                        kind,
                        &f.transport,
                        f.src.0,
                        f.dst.0,
                        f.start.as_secs_f64(),
                        f.stop.as_secs_f64(),
                        &f.counters,
                        &fates[i],
                    );
                    summary.throughput_run_kbps = if run_s > 0.0 {
                        f.counters.rx_bytes as f64 * 8.0 / run_s / 1000.0
                    } else {
                        0.0
                    };
                    summary.tcp = f.tcp.as_ref().map(|t| t.summary(&summary));
                    if let Some(slot_s) = self.frn_slot_s() {
                        let active_s = (f.stop.as_secs_f64() - f.start.as_secs_f64()).max(0.0);
                        summary.delivered_per_slot = Some(if active_s > 0.0 {
                            summary.delivered_packets as f64 * slot_s / active_s
                        } else {
                            0.0
                        });
                    }
                    summary
                })
                .collect(),
            nodes: self
                .nodes
                .iter()
                .map(|n| {
                    let dups = self.air.get(n.id.index()).map_or(0, |a| a.mac.duplicates());
                    let mut s = NodeSummary::new(
                        n.id.0,
                        n.position_m,
                        &n.counters,
                        &node_held[n.id.index()],
                        dups,
                    );
                    s.routing = n.routing.counters().map(RoutingSummary::new);
                    s
                })
                .collect(),
            links: self
                .links
                .iter()
                .flat_map(|l| {
                    l.dirs.iter().map(move |dir| LinkSummary {
                        link: l.id.0,
                        from: dir.from.0,
                        to: dir.to.0,
                        tx_packets: dir.stats.tx_packets,
                        tx_bytes: dir.stats.tx_bytes,
                        utilization: if run_s > 0.0 {
                            dir.stats.busy_time.as_secs_f64().min(run_s) / run_s
                        } else {
                            0.0
                        },
                        max_queue_pkts: dir.stats.max_queue_pkts,
                        queue_drops: dir.stats.queue_drops,
                        error_drops: dir.stats.error_drops,
                    })
                })
                .collect(),
            faults: self.fault_log().to_vec(),
            failures: self.failures().map(<[_]>::to_vec),
            connectivity: self.connectivity_report(),
            series: self.series.as_deref().cloned(),
            outputs: Vec::new(),
        }
    }

    /// The connectivity report: with a radio, and mobility or faults.
    fn connectivity_report(&self) -> Option<ConnectivityReport> {
        if !self.mobile && self.faults.is_none()
            || self.outputs.as_ref().and_then(|o| o.connectivity) == Some(false)
        {
            return None;
        }
        let ch = self.channel.as_ref()?;
        let range_m = ch.rx_range_m();
        let stationary;
        let trajectories = match ch.trajectories() {
            Some(t) => t,
            None => {
                let start: Vec<[f64; 2]> = self.nodes.iter().map(|n| n.position_m).collect();
                stationary = placement::stationary(&start);
                &stationary
            }
        };
        let geo = ConnectivityTimeline::exact(trajectories, range_m, self.end);
        let timeline = match &self.faults {
            // Every fault before the end has been applied (a stopped run's end
            // is its stop time), and the timeline looks at none after it.
            Some(f) => geo.with_faults(&f.log),
            None => geo.clone(),
        };
        Some(ConnectivityReport {
            range_m,
            link_changes: geo.link_change_count() as u64,
            link_changes_with_faults: timeline.link_change_count() as u64,
            flows: {
                // Every flow in one pass over the link changes.
                let pairs: Vec<_> = self
                    .flows
                    .iter()
                    .map(|f| (f.src, f.dst, f.start, f.stop))
                    .collect();
                let conn = timeline.pairs_between(&pairs);
                self.flows
                    .iter()
                    .zip(conn)
                    .enumerate()
                    .map(|(i, (f, p))| FlowConnectivity {
                        flow: i as u32,
                        src: f.src.0,
                        dst: f.dst.0,
                        connected_fraction: p.connected_fraction,
                        mean_hops: p.mean_hops,
                    })
                    .collect()
            },
        })
    }
}
