//! The simulator: arenas of nodes, links and flows, and the event loop that joins
//! the layers. Events carry ids (and packets by value), never references.
//!
//! The driver layer: it owns every model's state and carries out what the
//! models ask for. A model handler takes `now` and returns actions; the
//! driver turns them into events, hands packets between layers, counts and
//! traces them. Each event runs to completion, in (time, insertion sequence)
//! order, so a run is a function of its scenario and seed alone.
//!
//! One file per layer's dispatch, each an `impl Simulator` block opening with
//! its contract: this file (the arenas, the run loop, `Simulator::dispatch`,
//! public accessors); `event` (the `Event` enum, its kinds and parcels);
//! `build` (a run from a scenario); `net` (applications, network layer,
//! routing actions); `p2p` (point-to-point links); `ll` (LL, ARP, interface
//! queue); `mac` (MAC actions and timers, putting frames on the air); `air`
//! (the signal walks and receptions); `tcp` (TCP connections); `faults`;
//! `accounting` (packet fates, the ledger, results); `trace` (trace and pcap
//! rendering only); `memory` (the memory estimate before a run).
//!
//! A node's network layer: local delivery, TTL, and handing packets that
//! are not for this node to its [`Routing`] protocol, whose actions it carries out.
//! Below it a node has point-to-point ports and, with `[radio]`, one wireless
//! interface: LL delay → interface queue → 802.11 DCF → radio → shared channel.
//!
//! Mobility: nodes move along the scenario's trajectories; the channel evaluates
//! positions when a frame is sent (no position events). Faults (docs/mobility.md):
//! a switched-off node neither sends, receives nor forwards — its interface queue
//! is flushed (`OFF` drops), what reaches its network layer is dropped (`OFF`),
//! its radio hears nothing and nothing it transmits reaches the air, so frames
//! to it get no ACK and the sender's MAC retries and reports the failure. A
//! failed link carries no signal either way (no carrier sense either); on a
//! point-to-point link packets arriving over it are dropped (`LNK`).

use self::air::{Air, Arrival, TxRecord};
use self::event::{Event, EventCounts, EventKind, Parcels};
use self::faults::Faults;
use self::ll::Wifi;
use crate::app::cbr::Cbr;
use crate::ids::{LinkId, NodeId};
use crate::link::p2p::P2pLink;
use crate::mac::{MacAction, MacParams, MacTimer};
use crate::metrics::{FlowCounters, NodeCounters, PacketLedger, RunResult};
use crate::mobility::Trajectory;
use crate::phy::radio::TxId;
use crate::phy::Channel;
use crate::routing::{RouteView, Routing, RoutingAction};
use crate::scenario::FlowKind;
use crate::sim::scheduler::{Popped, OWNER_TIMERS};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime};
use std::rc::Rc;

mod accounting;
mod air;
mod build;
mod event;
mod faults;
mod ll;
mod mac;
pub mod memory;
mod net;
mod p2p;
mod tcp;
mod trace;

pub use event::EVENT_KINDS;

struct Node {
    id: NodeId,
    position_m: [f64; 2],
    routing: Box<dyn Routing>,
    /// (neighbour, link to it), sorted by neighbour.
    ports: Vec<(NodeId, LinkId)>,
    wifi: Option<Wifi>,
    counters: NodeCounters,
}

struct Flow {
    name: String,
    kind: FlowKind,
    transport: String,
    src: NodeId,
    dst: NodeId,
    start: SimTime,
    stop: SimTime,
    /// The CBR source (CBR flows).
    cbr: Option<Cbr>,
    /// CBR: the UDP header costs air time (`flows[].udp_header`; ns-2: no).
    udp_header: bool,
    /// CBR: the UDP port at both ends (`flows[].port`).
    udp_port: u16,
    /// The TCP connection (FTP flows).
    tcp: Option<Box<tcp::TcpFlow>>,
    counters: FlowCounters,
}

pub struct Simulator {
    scenario_name: Option<String>,
    seed: u64,
    end: SimTime,
    sched: Scheduler<Event>,
    nodes: Vec<Node>,
    /// Each node's MAC and radio, by node (empty without a radio).
    air: Vec<Air>,
    links: Vec<P2pLink>,
    flows: Vec<Flow>,
    /// The TCP flows by (source, destination, index), sorted: who hears a
    /// route notice at a node ([`Simulator::tcp_notice`]) without a walk over
    /// every flow (a 1600-node grid has 400).
    tcp_ends: Vec<(NodeId, NodeId, u32)>,
    next_uid: u64,
    /// Every application packet's fate so far (docs/metrics.md).
    ledger: PacketLedger,
    /// Reused outbox for routing handlers (no allocation per packet).
    actions: Vec<RoutingAction>,
    channel: Option<Channel>,
    mac_params: MacParams,
    /// Frames on the air, indexed by `TxId`; freed slots are reused.
    txs: Vec<Option<TxRecord>>,
    free_txs: Vec<TxId>,
    /// Emptied receiver lists of finished transmissions, for reuse.
    rx_pool: Vec<Vec<Arrival>>,
    /// The packets of pending events.
    parcels: Parcels,
    /// Per-receiver streams for random propagation (shadowing).
    phy_rngs: Vec<SimRng>,
    mac_buf: Vec<MacAction>,
    /// `[outputs]` of the scenario; the files are opened by `open_outputs`.
    outputs: Option<crate::scenario::OutputsSpec>,
    output_dir: Option<std::path::PathBuf>,
    tracer: Option<Box<crate::trace::Tracer>>,
    /// Time series being recorded (`[outputs] series = true`).
    series: Option<Box<crate::metrics::Series>>,
    series_interval: Option<SimDuration>,
    /// Node switches and link failures (`None` without `[faults]`).
    faults: Option<Faults>,
    /// Whether the scenario has mobility (for the connectivity report).
    mobile: bool,
    /// Events executed per kind; not part of the results.
    event_counts: EventCounts,
}

/// Events between two calls of the check in [`Simulator::run_to_end_checked`]:
/// a few milliseconds of wall time at typical event rates, so a stop request is
/// seen well within a second, at no measurable cost per event.
pub const CHECK_EVERY_EVENTS: u32 = 4096;

impl Simulator {
    /// Run to the end of the scenario and return the results.
    pub fn run(mut self) -> RunResult {
        self.run_to_end();
        self.results()
    }

    /// Execute every event up to the end of the run.
    pub fn run_to_end(&mut self) {
        self.run_until(self.end);
        self.sched.advance_to(self.end);
    }

    /// Execute every event up to `until` (capped at the end of the run).
    pub fn run_until(&mut self, until: SimTime) {
        let until = until.min(self.end);
        while let Some((now, p)) = self.sched.pop_next(until) {
            self.dispatch_popped(now, p);
            self.maybe_settle_ledger();
        }
    }

    /// Run to the end like [`Simulator::run_to_end`], but call `check(now, events)`
    /// every [`CHECK_EVERY_EVENTS`] events (and once before the first); when it
    /// returns `false` the run stops there (Ctrl-C, a deadline). Returns whether
    /// the run reached its end. A stopped run is cut at the stop time: its
    /// results ([`Simulator::results`]) cover `[0, now]` and flows' stop times
    /// are clamped to it, so rates are over the time actually simulated.
    pub fn run_to_end_checked(&mut self, check: &mut dyn FnMut(SimTime, u64) -> bool) -> bool {
        let until = self.end;
        let mut left = 0u32;
        loop {
            if left == 0 {
                if !check(self.sched.now(), self.sched.events_executed()) {
                    let now = self.sched.now();
                    self.end = now;
                    for f in &mut self.flows {
                        f.stop = f.stop.min(now);
                        f.start = f.start.min(now);
                    }
                    return false;
                }
                left = CHECK_EVERY_EVENTS;
            }
            left -= 1;
            match self.sched.pop_next(until) {
                Some((now, p)) => {
                    self.dispatch_popped(now, p);
                    self.maybe_settle_ledger();
                }
                None => break,
            }
        }
        self.sched.advance_to(self.end);
        true
    }

    /// Events executed so far by kind, named as in [`EVENT_KINDS`] (a profile
    /// aid: benchmarks print it; it is not part of the results).
    pub fn event_counts(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = self.event_counts.named().collect();
        v.push(("(heap pops)", self.sched.heap_pops()));
        let (timer_pops, overwritten) = self.sched.timer_counts();
        v.push(("(MAC timer pops)", timer_pops));
        v.push(("(MAC timers re-armed unpopped)", overwritten));
        v
    }

    /// Run what [`Scheduler::pop_next`] took: an event, or a DCF timer from the
    /// owned-timer table (indexed by `MacTimer as usize`).
    #[inline]
    fn dispatch_popped(&mut self, now: SimTime, p: Popped<Event>) {
        match p {
            Popped::Event(ev) => self.dispatch(now, ev),
            Popped::Timer(n, which, tok) => {
                // The owned timers, by `which` (= `MacTimer as usize`).
                const TIMERS: [MacTimer; OWNER_TIMERS] = [
                    MacTimer::Backoff,
                    MacTimer::Defer,
                    MacTimer::Send,
                    MacTimer::Nav,
                ];
                let timer = TIMERS[which];
                debug_assert_eq!(timer as usize, which);
                self.event_counts[EventKind::mac(timer)] += 1;
                self.mac_timer(now, NodeId(n), timer, tok)
            }
        }
    }

    /// Count `ev` under its kind and hand it to its layer (the world file
    /// [`Event`] names for its group).
    fn dispatch(&mut self, now: SimTime, ev: Event) {
        self.event_counts[ev.kind()] += 1;
        match ev {
            Event::AppSend(f) => self.app_send(now, f),
            Event::RoutingTimer(n, key, token) => {
                self.with_routing(now, n, |r, ctx| r.timer(ctx, key, token))
            }
            Event::RoutingBroadcast(n, p) => {
                let pkt = self.parcels.take(p);
                self.broadcast(now, n, Rc::unwrap_or_clone(pkt))
            }
            Event::RoutingForward(n, p, next_hop) => {
                let pkt = self.parcels.take(p);
                self.routing_forward_due(now, n, pkt, next_hop)
            }
            Event::LinkTxDone(l, d) => self.link_tx_done(now, l, d),
            Event::LinkArrive(l, d, p) => {
                let pkt = self.parcels.take(p);
                self.link_arrive(now, l, d, pkt)
            }
            Event::IfqArrive(n, p, next_hop) => {
                let pkt = self.parcels.take(p);
                self.ifq_arrive(now, n, pkt, next_hop)
            }
            Event::ArpOut(n, m, to) => self.arp_out(now, n, m, to),
            Event::LlUp(n, p, from) => {
                let pkt = self.parcels.take(p);
                self.receive_from(now, n, pkt, from)
            }
            Event::SampleQueues => self.sample_queues(now),
            Event::Mac(n, timer, tok) => self.mac_timer(now, n, timer, tok),
            Event::TxEnd(n) => self.tx_end(now, n),
            Event::SignalStart(tx) => self.signal_starts(now, tx),
            Event::SignalEnd(tx) => self.signal_ends(now, tx),
            Event::TcpOpen(f) => self.tcp_open(now, f),
            Event::TcpAppStop(f) => self.tcp_app_stop(now, f),
            Event::TcpTimer(f, side, token) => self.tcp_timer(now, f, side, token),
            Event::Fault => self.apply_fault(now),
        }
    }

    /// Move node `n` to `pos_m` now, where it then stays (static routes are not
    /// recomputed: that is what makes a moved next hop a link failure). With
    /// mobility this replaces the node's trajectory. Scenario mobility does not
    /// use this: positions come from trajectories.
    pub fn move_node(&mut self, n: u32, pos_m: [f64; 2]) {
        self.nodes[n as usize].position_m = pos_m;
        if let Some(ch) = self.channel.as_mut() {
            ch.set_stationary(NodeId(n), pos_m);
        }
    }

    /// Node `n`'s position (m) at time `t` (from its trajectory with mobility).
    pub fn position_at(&self, n: u32, t: SimTime) -> [f64; 2] {
        match self.channel.as_ref() {
            Some(ch) => ch.position_at(NodeId(n), t),
            None => self.nodes[n as usize].position_m,
        }
    }

    /// Node `n`'s position (m) now.
    pub fn position_m(&self, n: u32) -> [f64; 2] {
        self.position_at(n, self.now())
    }

    /// The nodes' trajectories, when the scenario moves them.
    pub fn trajectories(&self) -> Option<&[Trajectory]> {
        self.channel.as_ref().and_then(|ch| ch.trajectories())
    }

    pub fn now(&self) -> SimTime {
        self.sched.now()
    }

    /// Node `n`'s routing-table entry for `dst`, for protocols that show theirs
    /// (DSDV): next hop, hops (`None` = broken), sequence number.
    pub fn route_entry(&self, n: u32, dst: u32) -> Option<RouteView> {
        self.nodes[n as usize].routing.route_entry(NodeId(dst))
    }
}
