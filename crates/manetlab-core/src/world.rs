//! The simulator: arenas of nodes, links and flows, and the event loop that joins
//! the layers. Events carry ids (and packets by value), never references.
//!
//! A node's network layer is here: local delivery, TTL, and handing packets that
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

use crate::app::cbr::Cbr;
use crate::faults::{FaultEvent, FaultKind, FaultState, FaultStream};
use crate::ids::{FlowId, LinkId, NodeId};
use crate::link::p2p::{LinkStep, P2pLink};
use crate::mac::arp::{Resolve, ARP_DELAY};
use crate::mac::dcf::FrameHead;
use crate::mac::{
    ArpMsg, ArpOp, ArpTable, Dcf, Frame, FrameKind, FrnHandle, FrnMac, FrnShared, MacAction,
    MacParams, MacTimer, WifiMac,
};
use crate::metrics::{
    ConnectivityReport, Delivery, DropReason, FlowConnectivity, FlowCounters, FlowSummary, Holder,
    InFlightCounts, LinkSummary, NodeCounters, NodeSummary, PacketLedger, RoutingSummary,
    RunResult,
};
use crate::mobility::{placement, ConnectivityTimeline, Trajectory};
use crate::packet::{Packet, TransportHeader};
use crate::phy::radio::{RxFailure, TxId};
use crate::phy::{CaptureParams, Channel, Radio, RadioExtra, RadioParams, Reception, RxResult};
use crate::queue::{CmuPriQueue, DropTail, Lred, PriQueue, Queue, Queued, Red};
use crate::routing::{
    Aodv, Dsdv, Dsr, FrnRouting, RouteView, Routing, RoutingAction, RoutingCtx, StaticRouteTable,
    StaticRouting,
};
use crate::scenario::{FlowKind, QueueKind, RoutingProtocol, Scenario, DEFAULT_QUEUE_LIMIT_PKTS};
use crate::sim::scheduler::{Popped, OWNER_TIMERS};
use crate::sim::{stream, Component, Scheduler, SimDuration, SimRng, SimTime, TimerToken};
use crate::transport::udp;
use std::collections::BTreeMap;
use std::rc::Rc;

pub mod memory;
mod tcp;
mod trace;

/// A packet travelling in an event: its slot in [`Simulator::parcels`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Parcel(u32);

/// The packets of pending events, by [`Parcel`]; freed slots are reused. A
/// packet is an `Rc`: it goes on so to the interface queue and the MAC, and a
/// received one may still be shared with its frame (the network layer copies
/// it only when it needs its own).
#[derive(Default)]
struct Parcels {
    slots: Vec<Option<Rc<Packet>>>,
    free: Vec<u32>,
}

impl Parcels {
    #[inline]
    fn put(&mut self, pkt: Rc<Packet>) -> Parcel {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(pkt);
                Parcel(i)
            }
            None => {
                self.slots.push(Some(pkt));
                Parcel((self.slots.len() - 1) as u32)
            }
        }
    }

    #[inline]
    fn take(&mut self, p: Parcel) -> Rc<Packet> {
        let pkt = self.slots[p.0 as usize].take().expect("pending parcel");
        self.free.push(p.0);
        pkt
    }

    fn get(&self, p: Parcel) -> &Packet {
        self.slots[p.0 as usize].as_deref().expect("pending parcel")
    }
}

/// Every kind of event in a run. Variants carry ids into the arenas, and a
/// packet as its [`Parcel`]: an event owns nothing (`Copy`), so heap entries
/// stay small (a `Packet` inline made every heap sift copy ~160 bytes: a third
/// of all instructions in a profile) and the scheduler moves and drops them
/// as plain words.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// Flow's application sends its next packet.
    AppSend(FlowId),
    /// Link direction's transmitter finished serialising a packet.
    LinkTxDone(LinkId, u8),
    /// A packet reaches the far end of a link direction.
    LinkArrive(LinkId, u8, Parcel),
    /// A packet for the wireless interface reaches the interface queue (after the LL delay).
    IfqArrive(NodeId, Parcel, Option<NodeId>),
    /// A MAC timer of a node: FRN's slot timer. The DCF's timers are not
    /// events: they wait in the scheduler's owned-timer heap (owner = node,
    /// timer = `MacTimer as usize`) and pop as `Popped::Timer`.
    Mac(NodeId, MacTimer, TimerToken),
    /// An ARP message (to `.2`, `None` = broadcast) reaches the node's interface queue.
    ArpOut(NodeId, ArpMsg, Option<NodeId>),
    /// A packet the MAC received from `.2` reaches the network layer (after the
    /// LL delay, ns-2 `LL::sendUp`).
    LlUp(NodeId, Parcel, NodeId),
    /// A node's own transmission ends.
    TxEnd(NodeId),
    /// A transmission starts arriving at its next receiver (`TxRecord::next_start`).
    /// One heap entry walks a frame's receivers in (time, sequence) order, each
    /// run as its own event; see [`Simulator::signal_starts`].
    SignalStart(TxId),
    /// A transmission stops arriving at its next receiver (`TxRecord::next_end`).
    SignalEnd(TxId),
    /// Sample every interface queue's length (`[outputs] series_interval_s`).
    SampleQueues,
    /// An FTP flow's TCP sender opens its connection.
    TcpOpen(FlowId),
    /// An FTP flow's application stops handing data down (stop_s).
    TcpAppStop(FlowId),
    /// A TCP timer of a flow (side 0 = sender, 1 = receiver), with its arming token.
    TcpTimer(FlowId, u8, TimerToken),
    /// A routing-protocol timer of a node: the protocol's key and arming token.
    RoutingTimer(NodeId, u64, TimerToken),
    /// A routing broadcast whose jitter delay has passed.
    RoutingBroadcast(NodeId, Parcel),
    /// A unicast a routing protocol delayed (`RoutingAction::ForwardAfter`): node, packet, next hop.
    RoutingForward(NodeId, Parcel, NodeId),
    /// The next event of the fault schedule is due.
    Fault,
}

/// Names of the event kinds, in the order of [`Event::kind`] (for
/// [`Simulator::event_counts`]; benchmarks print the breakdown).
/// `Mac` events are split by timer; `Mac (stale)` counts those whose arming had
/// been cancelled or replaced (they are also counted under their timer).
pub const EVENT_KINDS: [&str; 24] = [
    "AppSend",
    "LinkTxDone",
    "LinkArrive",
    "IfqArrive",
    "Mac.Backoff",
    "ArpOut",
    "LlUp",
    "TxEnd",
    "SignalStart",
    "SignalEnd",
    "SampleQueues",
    "TcpOpen",
    "TcpAppStop",
    "TcpTimer",
    "RoutingTimer",
    "RoutingBroadcast",
    "RoutingForward",
    "Fault",
    "Mac.Defer",
    "Mac.Send",
    "Mac.Nav",
    "Mac (stale)",
    "TcpTimer (stale)",
    "Mac.Slot",
];
const KIND_MAC_STALE: usize = 21;
const KIND_TCP_STALE: usize = 22;
const KIND_SIGNAL_START: usize = 8;
const KIND_SIGNAL_END: usize = 9;
const KIND_TX_END: usize = 7;

impl Event {
    /// Index of this event's kind in [`EVENT_KINDS`].
    fn kind(&self) -> usize {
        match self {
            Event::AppSend(..) => 0,
            Event::LinkTxDone(..) => 1,
            Event::LinkArrive(..) => 2,
            Event::IfqArrive(..) => 3,
            Event::Mac(_, MacTimer::Backoff, _) => 4,
            Event::Mac(_, MacTimer::Defer, _) => 18,
            Event::Mac(_, MacTimer::Send, _) => 19,
            Event::Mac(_, MacTimer::Nav, _) => 20,
            // FRN's slotted MAC (mac/frn).
            Event::Mac(_, MacTimer::Slot, _) => 23,
            Event::ArpOut(..) => 5,
            Event::LlUp(..) => 6,
            Event::TxEnd(..) => 7,
            Event::SignalStart(..) => 8,
            Event::SignalEnd(..) => 9,
            Event::SampleQueues => 10,
            Event::TcpOpen(..) => 11,
            Event::TcpAppStop(..) => 12,
            Event::TcpTimer(..) => 13,
            Event::RoutingTimer(..) => 14,
            Event::RoutingBroadcast(..) => 15,
            Event::RoutingForward(..) => 16,
            Event::Fault => 17,
        }
    }
}

/// The run's faults: the schedule, how far it has been applied, and the state.
struct Faults {
    /// The faults still to come, drawn one at a time as the run goes.
    stream: FaultStream,
    /// The next fault (its `Event::Fault` is scheduled).
    pending: Option<FaultEvent>,
    /// The faults applied so far, in order.
    log: Vec<FaultEvent>,
    state: FaultState,
    /// `off[n]`: node n is switched off (mirrors `state`, for speed).
    off: Vec<bool>,
}

/// A node's wireless interface above the MAC.
struct Wifi {
    ifq: Box<dyn Queue>,
    /// ns-2's ARP table (with `[mac] arp`, the default).
    arp: Option<ArpTable>,
}

/// A node's MAC and radio: what a frame's signal start and end read and
/// write at each of its receivers. Kept in one dense array indexed by node
/// (`Simulator::air`), apart from the rest of the node, with the fields the
/// walks read in its first line: the radio (32 bytes) and the DCF's first 32
/// bytes; a NAV extension also writes the next line (the DCF's NAV timer and
/// held-back arming, [`Dcf::held_nav`]). At 1000 nodes a receiver's state is
/// usually out of cache, and each line it spans costs a miss.
///
/// The held-back NAV arming: most NAV expiries find no backoff to resume, so
/// the MAC's NAV timer is armed in the scheduler (`arm_owned_reserved`,
/// replacing a NAV arming released earlier) only once the MAC needs it
/// (`Dcf::needs_nav_event`), with the sequence number it had when armed: the
/// run is the same as with every NAV event scheduled, minus the no-op ones.
#[repr(C, align(64))]
struct Air {
    radio: Radio,
    mac: WifiMac,
    /// Used in SINR mode and by switched-off nodes only (the general walk).
    radio_extra: RadioExtra,
}

impl Air {
    /// After a MAC handler (or what stands for one): node `n`'s held-back
    /// NAV event.
    #[inline]
    fn release_nav(&mut self, n: NodeId, sched: &mut Scheduler<Event>) {
        if let WifiMac::Dcf(d) = &mut self.mac {
            let needs = d.needs_nav_event();
            release_nav(&mut d.held_nav, n, needs, sched);
        }
    }

    /// The radio's carrier state after a signal event, `sensing`
    /// (`radio.sensing()`), which the event `changed`; returns it when the MAC
    /// must run its carrier handler: the change can matter to it
    /// ([`Dcf::carrier_quiet`]). The MAC knows the state before the event:
    /// signals come and go only in signal events, and each one tells the
    /// MAC (here, or with a reception) when it changes the carrier.
    #[inline]
    fn note_carrier(&mut self, now: SimTime, sensing: bool, changed: bool) -> Option<bool> {
        debug_assert_eq!(sensing, self.radio.sensing());
        if !changed {
            return None;
        }
        if let WifiMac::Dcf(d) = &mut self.mac {
            if d.carrier_quiet(now, sensing) {
                return None;
            }
        }
        Some(sensing)
    }
}

/// A MAC armed its NAV timer (`SetTimer(Nav)`) for `at`: hold the event back,
/// with the sequence number it would have had if scheduled now.
#[inline]
fn hold_nav(
    pending: &mut Option<(SimTime, u64, TimerToken)>,
    at: SimTime,
    tok: TimerToken,
    sched: &mut Scheduler<Event>,
) {
    *pending = Some((at, sched.reserve_seq(), tok));
}

/// Insert node `n`'s held-back NAV event if its MAC `needs` it
/// ([`WifiMac::needs_nav_event`]) and it is still due; forget it once its
/// time has passed (it would have been a no-op).
#[inline]
fn release_nav(
    pending: &mut Option<(SimTime, u64, TimerToken)>,
    n: NodeId,
    needs: bool,
    sched: &mut Scheduler<Event>,
) {
    if let Some((at, seq, tok)) = *pending {
        if !sched.is_pending_key(at, seq) {
            *pending = None;
        } else if needs {
            *pending = None;
            sched.arm_owned_reserved(n.0, MacTimer::Nav as usize, at, seq, tok);
        }
    }
}

impl Air {
    /// A reception's outcome (`Some`: the frame arrived intact; `None`: it
    /// ended in error) and the carrier change after it, when all they can do
    /// is set the NAV ([`Dcf::rx_quiet`], most receptions): carried out here,
    /// with no handler run (`Ok(None)`), or with the carrier handler only when
    /// the carrier change can matter (`Ok(Some(sensing))`). Otherwise returns
    /// the carrier state and whether it `changed` (in the signal's end, as
    /// [`Air::note_carrier`]), for [`Simulator::mac_reception`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn reception_quiet(
        &mut self,
        now: SimTime,
        n: NodeId,
        f: Option<FrameHead>,
        changed: bool,
        sched: &mut Scheduler<Event>,
    ) -> Result<Option<bool>, (bool, bool)> {
        let sensing = self.radio.sensing();
        let WifiMac::Dcf(d) = &mut self.mac else {
            return Err((sensing, changed));
        };
        let Some(nav) = d.rx_quiet(now, f) else {
            return Err((sensing, changed));
        };
        if let Some((at, tok)) = nav {
            // As `run_mac` does with the `SetTimer(Nav)` of `rx_ok`/`rx_error`
            // (`hold_nav`), and after it (`release_nav`, whose key, just
            // reserved, is still pending).
            let seq = sched.reserve_seq();
            if d.needs_nav_event() {
                d.held_nav = None;
                sched.arm_owned_reserved(n.0, MacTimer::Nav as usize, at, seq, tok);
            } else {
                d.held_nav = Some((at, seq, tok));
            }
        }
        if changed && !d.carrier_quiet_after_rx(now, sensing) {
            return Ok(Some(sensing));
        }
        Ok(None)
    }
}

/// A frame on the air, shared by all its receivers until the last signal ends.
struct TxRecord {
    /// Held inline (a few words: the packet is shared), so a transmission
    /// allocates nothing; a receiver's MAC reads a copy ([`Simulator::frame_of`]).
    frame: Frame,
    airtime: SimDuration,
    /// Its receivers, sorted by (arrival, sequence number of the start event).
    rx: Vec<Arrival>,
    /// The sequence number of `rx[0]`'s signal start: receiver `i`'s start
    /// and end events have `seq0 + 2i` and `seq0 + 2i + 1` ([`Arrival`]).
    seq0: u64,
    /// Index in `rx` of the next signal start and of the next signal end.
    next_start: usize,
    next_end: usize,
    /// The sender while its `TxEnd` is still to run: until then the walk of
    /// the signal ends waits at the `TxEnd`'s key (which is before the first
    /// end's: its sequence number was taken first) and runs it first. One
    /// heap entry less per frame.
    tx_end: Option<NodeId>,
}

/// One receiver of a frame, the `i`th of its [`TxRecord`]: the signal starts at
/// `start` with key (start, seq0 + 2i) and ends at start + airtime with key
/// (start + airtime, seq0 + 2i + 1), the sequence numbers the two events had
/// when each was scheduled on its own. 24 bytes: the walks read the list
/// in order, and at 1000 nodes most of it is out of cache.
#[derive(Clone, Copy)]
struct Arrival {
    node: NodeId,
    power_w: f64,
    start: SimTime,
}

/// The sequence number of the signal start of receiver `i` of a transmission
/// whose first is `seq0` (its end's is one more).
#[inline(always)]
fn start_seq(seq0: u64, i: usize) -> u64 {
    seq0 + 2 * i as u64
}

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
    /// Events executed per kind ([`EVENT_KINDS`]); not part of the results.
    event_counts: [u64; EVENT_KINDS.len()],
}

/// Events between two calls of the check in [`Simulator::run_to_end_checked`]:
/// a few milliseconds of wall time at typical event rates, so a stop request is
/// seen well within a second, at no measurable cost per event.
pub const CHECK_EVERY_EVENTS: u32 = 4096;

/// Static start positions (`nodes.placement`, via `mobility::placement`).
fn positions(s: &Scenario) -> Vec<[f64; 2]> {
    s.placement_positions()
}

/// Node `id`'s routing protocol (default: static shortest paths over the shared `static_table`).
fn make_routing(
    s: &Scenario,
    id: NodeId,
    static_table: &std::rc::Rc<StaticRouteTable>,
    frn: Option<&FrnHandle>,
) -> Box<dyn Routing> {
    match s
        .routing
        .as_ref()
        .map_or(RoutingProtocol::Static, |r| r.protocol)
    {
        RoutingProtocol::Frn => {
            let p = s
                .routing
                .as_ref()
                .expect("frn comes from a [routing] table")
                .frn_params();
            let shared = frn
                .expect("validation pairs routing frn with mac frn")
                .clone();
            Box::new(FrnRouting::new(
                id,
                p,
                shared,
                stream(s.seed, id.0 as u64, Component::Routing),
            ))
        }
        RoutingProtocol::Aodv => {
            let p = s.aodv_params();
            Box::new(Aodv::new(
                id,
                p,
                stream(s.seed, id.0 as u64, Component::Routing),
            ))
        }
        RoutingProtocol::Dsdv => {
            let p = s.dsdv_params();
            Box::new(Dsdv::new(
                id,
                p,
                stream(s.seed, id.0 as u64, Component::Routing),
            ))
        }
        RoutingProtocol::Dsr => {
            let p = s.dsr_params();
            Box::new(Dsr::new(
                id,
                p,
                stream(s.seed, id.0 as u64, Component::Routing),
            ))
        }
        RoutingProtocol::Static => Box::new(StaticRouting::shared(id, static_table.clone())),
    }
}

/// The wireless interface queue the scenario asks for (default: ns-2's PriQueue;
/// CMUPriQueue with DSR).
fn make_queue(s: &Scenario, limit: u32, node: u64) -> Box<dyn Queue> {
    let rng = || stream(s.seed, node, Component::Queue);
    match s.wireless_queue_kind() {
        QueueKind::Droptail => Box::new(DropTail::ns2(limit)),
        QueueKind::Priqueue => Box::new(PriQueue::new(limit)),
        QueueKind::Cmupriqueue => Box::new(CmuPriQueue::new(limit)),
        // Validation accepts red/lred only when asked for, so the spec is there.
        QueueKind::Red => Box::new(Red::new(
            limit,
            s.queue.as_ref().map(|q| q.red_params()).unwrap_or_default(),
            rng(),
        )),
        QueueKind::Lred => Box::new(Lred::new(
            limit,
            s.queue
                .as_ref()
                .map(|q| q.lred_params())
                .unwrap_or_default(),
            rng(),
        )),
    }
}

impl Simulator {
    /// Build a run from a validated scenario.
    pub fn new(s: &Scenario) -> Self {
        let n = s.nodes.count as usize;
        let default_limit = s
            .queue
            .as_ref()
            .and_then(|q| q.limit_pkts)
            .unwrap_or(DEFAULT_QUEUE_LIMIT_PKTS);
        let links: Vec<P2pLink> = s
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                P2pLink::new(
                    LinkId(i as u32),
                    NodeId(l.a),
                    NodeId(l.b),
                    l.bandwidth_mbps * 1e6,
                    SimDuration::from_secs_f64(l.delay_ms / 1e3),
                    l.queue_limit_pkts.unwrap_or(default_limit),
                    l.error_rate,
                    s.seed,
                )
            })
            .collect();
        // Start positions: the placement, or the trajectories' positions at time 0.
        let trajectories = s.trajectories();
        let pos = match &trajectories {
            Some(t) => t.iter().map(|t| t.position_at(SimTime::ZERO)).collect(),
            None => positions(s),
        };
        let mut channel = s
            .radio
            .as_ref()
            .map(|r| Channel::new(r.params(), pos.clone()));
        if let (Some(ch), Some(t)) = (channel.as_mut(), trajectories) {
            ch.set_trajectories(t);
        }
        let mac_params = s.mac_params();
        // Static routes: shortest paths over wired links and, with a radio, the
        // radio-range graph at start time.
        let mut adjacency = match channel.as_mut() {
            Some(ch) => ch.range_graph(),
            None => vec![Vec::new(); n],
        };
        let mut ports = vec![Vec::new(); n];
        for l in &links {
            let (a, b) = (l.dirs[0].from, l.dirs[0].to);
            adjacency[a.index()].push(b);
            adjacency[b.index()].push(a);
            ports[a.index()].push((b, l.id));
            ports[b.index()].push((a, l.id));
        }
        // One table for every node; routes are computed per destination on first use.
        let static_table = std::rc::Rc::new(StaticRouteTable::new(adjacency));
        // FRN's MAC and routing share one run-wide state (mac/frn).
        let frn = s
            .mac
            .as_ref()
            .and_then(|m| m.frn_params())
            .map(|p| FrnShared::new(n, p));
        let nodes: Vec<Node> = (0..n)
            .map(|i| {
                let id = NodeId(i as u32);
                let mut p = std::mem::take(&mut ports[i]);
                p.sort();
                let routing = make_routing(s, id, &static_table, frn.as_ref());
                Node {
                    id,
                    position_m: pos[i],
                    routing,
                    ports: p,
                    wifi: channel.as_ref().map(|_| Wifi {
                        ifq: make_queue(s, default_limit, i as u64),
                        arp: mac_params.arp.then(|| ArpTable::new(id)),
                    }),
                    counters: NodeCounters::default(),
                }
            })
            .collect();
        let shared_mac_params = std::rc::Rc::new(mac_params);
        let air: Vec<Air> = match channel {
            None => Vec::new(),
            Some(_) => (0..n)
                .map(|i| {
                    let id = NodeId(i as u32);
                    let mac = match &frn {
                        Some(sh) => WifiMac::Frn(Box::new(FrnMac::new(
                            id,
                            mac_params,
                            sh.clone(),
                            stream(s.seed, i as u64, Component::Mac),
                        ))),
                        None => {
                            let mut mac = Dcf::new(
                                id,
                                shared_mac_params.clone(),
                                stream(s.seed, i as u64, Component::Mac),
                            );
                            mac.promiscuous = nodes[i].routing.promiscuous();
                            WifiMac::Dcf(mac)
                        }
                    };
                    Air {
                        radio: Radio::new(),
                        mac,
                        radio_extra: RadioExtra::default(),
                    }
                })
                .collect(),
        };
        let end = SimTime::from_secs_f64(s.duration_s);
        let mut sched = Scheduler::new();
        // The DCF's timers wait in the scheduler's owned-timer table.
        sched.set_timer_owners(air.len());
        let mut links = links;
        for (l, spec) in links.iter_mut().zip(&s.links) {
            l.drop_tcp_segments = spec.drop_tcp_segments.clone();
        }
        let flows = s
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let id = FlowId(i as u32);
                let start = SimTime::from_secs_f64(f.start_s);
                let stop =
                    SimTime::from_secs_f64(f.stop_s.unwrap_or(s.duration_s).min(s.duration_s));
                let (mut cbr, mut tcp) = (None, None);
                match f.kind {
                    FlowKind::Cbr => {
                        let rng = stream(s.seed, i as u64, Component::Application);
                        let c = Cbr::new(
                            f.cbr_packet_bytes(),
                            f.cbr_interval_s(),
                            f.jitter_s,
                            stop,
                            f.max_packets,
                            rng,
                        );
                        if c.may_send(start) {
                            sched.schedule_at(start, Event::AppSend(id));
                        }
                        cbr = Some(c);
                    }
                    FlowKind::Ftp => {
                        tcp = Some(Box::new(tcp::TcpFlow::new(id, f, s.seed)));
                        sched.schedule_at(start, Event::TcpOpen(id));
                        if stop < end {
                            sched.schedule_at(stop, Event::TcpAppStop(id));
                        }
                    }
                }
                Flow {
                    name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
                    kind: f.kind,
                    transport: f.transport_name().to_string(),
                    src: NodeId(f.src),
                    dst: NodeId(f.dst),
                    start,
                    stop,
                    cbr,
                    udp_header: f.udp_header.unwrap_or(false),
                    udp_port: f.port(i),
                    tcp,
                    counters: FlowCounters::default(),
                }
            })
            .collect::<Vec<Flow>>();
        let mut tcp_ends: Vec<(NodeId, NodeId, u32)> = flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.tcp.is_some())
            .map(|(i, f)| (f.src, f.dst, i as u32))
            .collect();
        tcp_ends.sort_unstable();
        let faults = s.faults.as_ref().map(|spec| {
            let mut stream =
                FaultStream::new(spec, s.seed, s.nodes.count, end).expect("validated faults");
            let pending = stream.next();
            if let Some(first) = pending {
                sched.schedule_at(first.time, Event::Fault);
            }
            Faults {
                stream,
                pending,
                log: Vec::new(),
                state: FaultState::new(),
                off: vec![false; n],
            }
        });
        let mut sim = Simulator {
            scenario_name: s.name.clone(),
            seed: s.seed,
            end,
            sched,
            nodes,
            air,
            links,
            flows,
            tcp_ends,
            next_uid: 0,
            ledger: PacketLedger::default(),
            actions: Vec::with_capacity(8),
            phy_rngs: (0..n as u64)
                .map(|i| stream(s.seed, i, Component::Phy))
                .collect(),
            channel,
            mac_params,
            txs: Vec::new(),
            free_txs: Vec::new(),
            rx_pool: Vec::new(),
            parcels: Parcels::default(),
            mac_buf: Vec::with_capacity(8),
            outputs: s.outputs.clone(),
            output_dir: None,
            tracer: None,
            series: s.outputs.as_ref().filter(|o| o.series).map(|_| {
                Box::new(crate::metrics::Series {
                    flows: (0..s.flows.len() as u32)
                        .map(|f| crate::metrics::PacketSeries {
                            flow: f,
                            ..Default::default()
                        })
                        .collect(),
                    queues: (0..n as u32)
                        .map(|node| crate::metrics::QueueSeries {
                            node,
                            ..Default::default()
                        })
                        .collect(),
                })
            }),
            series_interval: s
                .outputs
                .as_ref()
                .and_then(|o| o.series_interval_s)
                .map(SimDuration::from_secs_f64),
            faults,
            mobile: s.has_mobility(),
            event_counts: [0; EVENT_KINDS.len()],
        };
        if sim.series.is_some() && sim.series_interval.is_some() {
            sim.sched.schedule_at(SimTime::ZERO, Event::SampleQueues);
        }
        for i in 0..n {
            sim.with_routing(SimTime::ZERO, NodeId(i as u32), |r, ctx| r.start(ctx));
        }
        sim
    }

    /// Record node `n`'s MAC events (tests, MAC traces).
    pub fn enable_mac_log(&mut self, n: u32) {
        if let Some(a) = self.air.get_mut(n as usize) {
            a.mac.enable_log();
        }
    }

    /// Node `n`'s FRN MAC (`[mac] kind = "frn"`), for its counters.
    pub fn frn_mac(&self, n: u32) -> Option<&FrnMac> {
        self.air.get(n as usize).and_then(|a| a.mac.frn())
    }

    /// The FRN slot length (s) when the run uses FRN's MAC.
    fn frn_slot_s(&self) -> Option<f64> {
        self.air.first()?.mac.frn().map(|m| m.slot().as_secs_f64())
    }

    /// Node `n`'s MAC event log, if enabled.
    pub fn mac_log(&self, n: u32) -> &[(SimTime, String)] {
        self.air
            .get(n as usize)
            .and_then(|a| a.mac.log())
            .unwrap_or(&[])
    }

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
        let mut v: Vec<(&'static str, u64)> = EVENT_KINDS
            .iter()
            .copied()
            .zip(self.event_counts.iter().copied())
            .collect();
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
                const TIMERS: [MacTimer; OWNER_TIMERS] = [
                    MacTimer::Backoff,
                    MacTimer::Defer,
                    MacTimer::Send,
                    MacTimer::Nav,
                ];
                // Their indices in `EVENT_KINDS` (as `Event::kind`).
                const KINDS: [usize; OWNER_TIMERS] = [4, 18, 19, 20];
                let timer = TIMERS[which];
                debug_assert_eq!(timer as usize, which);
                self.event_counts[KINDS[which]] += 1;
                self.mac_timer(now, NodeId(n), timer, tok)
            }
        }
    }

    /// A MAC timer event (counted under its kind, and as stale when its arming
    /// was cancelled). A stale one's handler does nothing (the MACs' `timer`
    /// returns at once for a stale token), so of `run_mac` only the held-back
    /// NAV's release is left.
    #[inline]
    fn mac_timer(&mut self, now: SimTime, n: NodeId, timer: MacTimer, tok: TimerToken) {
        let mac = &mut self.air[n.index()].mac;
        if let (MacTimer::Nav, WifiMac::Dcf(d)) = (timer, &mut *mac) {
            // No action can follow, and the MAC's backoff state is unchanged:
            // the held-back NAV needs no release either.
            if d.nav_expiry_quiet(now, tok) {
                return;
            }
        }
        if !mac.timer_is_live(timer, tok) {
            self.event_counts[KIND_MAC_STALE] += 1;
            self.release_nav(n);
            return;
        }
        self.run_mac(now, n, |mac, out| mac.timer(now, timer, tok, out))
    }

    fn dispatch(&mut self, now: SimTime, ev: Event) {
        self.event_counts[ev.kind()] += 1;
        {
            match ev {
                Event::AppSend(f) => self.app_send(now, f),
                Event::LinkTxDone(l, d) => {
                    let step = self.links[l.index()].tx_done(now, d as usize);
                    self.link_step(l, d, step, None);
                }
                Event::LinkArrive(l, d, p) => {
                    let pkt = self.parcels.take(p);
                    let dir = &self.links[l.index()].dirs[d as usize];
                    let (from, to) = (dir.from, dir.to);
                    if pkt.tag.is_some() {
                        // Handed over: the copy is now `to`'s, whatever happens to it there.
                        self.nodes[from.index()].counters.sent_packets += 1;
                        self.nodes[to.index()].counters.received_packets += 1;
                    }
                    let link = &mut self.links[l.index()];
                    // Draw the error first so faults do not shift the link's error stream.
                    if !link.survives(d as usize) || link.scripted_drop(d as usize, &pkt) {
                        self.drop_packet(to, &pkt, DropReason::LinkError);
                    } else if let Some(why) = self.fault_blocks(from, to) {
                        self.drop_packet(to, &pkt, why);
                    } else {
                        self.pcap(to, &pkt);
                        self.receive_from(now, to, pkt, from);
                    }
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
                Event::Mac(n, timer, tok) => self.mac_timer(now, n, timer, tok),
                Event::TxEnd(n) => self.tx_end(now, n),
                Event::SignalStart(tx) => self.signal_starts(now, tx),
                Event::SignalEnd(tx) => self.signal_ends(now, tx),
                Event::SampleQueues => self.sample_queues(now),
                Event::TcpOpen(f) => self.tcp_open(now, f),
                Event::TcpAppStop(f) => self.tcp_app_stop(now, f),
                Event::TcpTimer(f, side, token) => self.tcp_timer(now, f, side, token),
                Event::Fault => self.apply_fault(now),
                Event::RoutingTimer(n, key, token) => {
                    self.with_routing(now, n, |r, ctx| r.timer(ctx, key, token))
                }
                Event::RoutingBroadcast(n, p) => {
                    let pkt = self.parcels.take(p);
                    self.broadcast(now, n, Rc::unwrap_or_clone(pkt))
                }
                Event::RoutingForward(n, p, next_hop) => {
                    let pkt = self.parcels.take(p);
                    if self.is_off(n) {
                        // Switched off while the packet waited for its delay.
                        self.drop_packet(n, &pkt, DropReason::NodeOff);
                    } else {
                        self.routing_forward(now, n, Rc::unwrap_or_clone(pkt), next_hop);
                    }
                }
            }
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

    /// Whether node `n` is switched on now.
    pub fn is_node_on(&self, n: u32) -> bool {
        !self.is_off(NodeId(n))
    }

    /// The faults applied so far, in order.
    pub fn fault_log(&self) -> &[FaultEvent] {
        self.faults.as_ref().map_or(&[], |f| &f.log[..])
    }

    pub fn now(&self) -> SimTime {
        self.sched.now()
    }

    /// Node `n`'s routing-table entry for `dst`, for protocols that show theirs
    /// (DSDV): next hop, hops (`None` = broken), sequence number.
    pub fn route_entry(&self, n: u32, dst: u32) -> Option<RouteView> {
        self.nodes[n as usize].routing.route_entry(NodeId(dst))
    }

    fn app_send(&mut self, now: SimTime, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let cbr = flow
            .cbr
            .as_mut()
            .expect("AppSend is scheduled for CBR flows only");
        let (seq, next) = cbr.on_send(now);
        let pkt = udp::datagram(
            self.next_uid,
            f,
            flow.src,
            flow.dst,
            flow.udp_port,
            cbr.packet_bytes,
            flow.udp_header,
            seq,
            now,
        );
        self.next_uid += 1;
        flow.counters.on_send(pkt.payload_bytes);
        self.ledger.created(pkt.uid, f.0, true);
        let src = flow.src;
        if let Some(t) = next {
            self.sched.schedule_at(t, Event::AppSend(f));
        }
        self.nodes[src.index()].counters.originated_packets += 1;
        self.originate(now, src, pkt);
    }

    /// A transport hands a packet down at its source: trace it (AGT) and route it.
    fn originate(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        self.trace_pkt(trace::Ev::Send, trace::Lv::Agt, node, &pkt, None, None);
        // ns-2 traces the packet entering the source's routing agent (`r RTR`).
        self.trace_pkt(trace::Ev::Recv, trace::Lv::Rtr, node, &pkt, None, None);
        self.route(now, node, pkt);
    }

    /// A packet arrived at `node` from neighbour `from`: routing control goes to
    /// the routing protocol, everything else to the network layer. The packet
    /// may still be shared with the frame that brought it: the node copies it
    /// only when a routing protocol takes it.
    fn receive_from(&mut self, now: SimTime, node: NodeId, pkt: Rc<Packet>, from: NodeId) {
        if self.is_off(node) {
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        // ns-2's node hands a data packet for itself straight to the agent; the
        // router sees (`r RTR`) routing messages and packets to forward, and with
        // DSR every packet (DSR is the node's entry).
        if pkt.is_routing() || pkt.ip.dst != node || pkt.source_route.is_some() {
            self.trace_pkt(trace::Ev::Recv, trace::Lv::Rtr, node, &pkt, None, None);
        }
        if pkt.is_routing() {
            self.with_routing(now, node, |r, ctx| {
                r.recv_control(ctx, Rc::unwrap_or_clone(pkt), from)
            });
        } else {
            self.receive(now, node, pkt);
        }
    }

    /// A packet arrived at `node` from a link.
    fn receive(&mut self, now: SimTime, node: NodeId, pkt: Rc<Packet>) {
        if self.is_off(node) {
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        if pkt.ip.dst == node {
            self.deliver(now, node, &pkt);
            return;
        }
        // Forwarding (on the node's own copy): decrement TTL first (RFC 791);
        // a packet that reaches 0 is dropped, unless it is back at its source:
        // routing calls that a loop first (ns-2's AODV and DSDV `recv` test the
        // loop before the TTL).
        let mut pkt = Rc::unwrap_or_clone(pkt);
        if pkt.ip.hop() == 0 && pkt.ip.src != node {
            self.drop_packet(node, &pkt, DropReason::TtlExpired);
            return;
        }
        self.nodes[node.index()].counters.forwarded_packets += 1;
        self.route(now, node, pkt);
    }

    fn deliver(&mut self, now: SimTime, node: NodeId, pkt: &Packet) {
        self.trace_pkt(trace::Ev::Recv, trace::Lv::Agt, node, &pkt, None, None);
        self.nodes[node.index()].counters.delivered_packets += 1;
        // One packet, one fate: only its first copy counts as delivered; later
        // copies (DSR salvage after a lost MAC ACK) are duplicates.
        let first = match pkt.tag {
            Some(tag) => {
                let d = self.ledger.delivered(pkt.uid);
                let data = self.ledger.is_data(pkt.uid);
                let c = &mut self.flows[tag.flow.index()].counters;
                match (d, data) {
                    (Delivery::First, true) => c.delivered_packets += 1,
                    (Delivery::Duplicate, true) => c.dup_rx_packets += 1,
                    _ => {}
                }
                d == Delivery::First
            }
            None => true,
        };
        if let TransportHeader::Tcp(h) = pkt.transport {
            // TCP sees every copy, as a real receiver would (it discards duplicates itself).
            self.tcp_deliver(now, node, pkt, &h);
            return;
        }
        if !first {
            return;
        }
        if let Some(tag) = pkt.tag {
            let since = now.since(tag.created);
            let delay = since.as_secs_f64();
            self.flows[tag.flow.index()].counters.on_receive(
                now.as_secs_f64(),
                pkt.payload_bytes,
                since,
            );
            if let Some(s) = self.series.as_mut() {
                let fs = &mut s.flows[tag.flow.index()];
                fs.t_s.push(now.as_secs_f64());
                fs.delay_s.push(delay);
            }
        }
    }

    /// Ask `node`'s routing protocol what to do with `pkt`, then do it.
    fn route(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        if self.is_off(node) {
            // A switched-off node neither originates nor forwards.
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        self.with_routing(now, node, |r, ctx| r.route(ctx, pkt));
    }

    /// Run a routing handler of `node` and carry out the actions it asks for.
    fn with_routing(
        &mut self,
        now: SimTime,
        node: NodeId,
        f: impl FnOnce(&mut dyn Routing, &mut RoutingCtx),
    ) {
        let mut actions = std::mem::take(&mut self.actions);
        {
            let mut ctx = RoutingCtx {
                now,
                node,
                actions: &mut actions,
                next_uid: &mut self.next_uid,
            };
            f(self.nodes[node.index()].routing.as_mut(), &mut ctx);
        }
        for a in actions.drain(..) {
            match a {
                RoutingAction::Forward { pkt, next_hop } => {
                    self.routing_forward(now, node, pkt, next_hop)
                }
                RoutingAction::ForwardAfter {
                    pkt,
                    next_hop,
                    delay,
                } => {
                    let p = self.parcels.put(Rc::new(pkt));
                    self.sched
                        .schedule_at(now + delay, Event::RoutingForward(node, p, next_hop))
                }
                RoutingAction::Drop { pkt, reason } => self.drop_packet(node, &pkt, reason),
                RoutingAction::Notify(notice) => self.tcp_notice(now, node, notice),
                RoutingAction::Broadcast { pkt, delay } => {
                    let ev = if pkt.ip.src == node {
                        trace::Ev::Send
                    } else {
                        trace::Ev::Forward
                    };
                    self.trace_pkt(ev, trace::Lv::Rtr, node, &pkt, None, None);
                    if delay == SimDuration::ZERO {
                        self.broadcast(now, node, pkt);
                    } else {
                        let p = self.parcels.put(Rc::new(pkt));
                        self.sched
                            .schedule_at(now + delay, Event::RoutingBroadcast(node, p));
                    }
                }
                RoutingAction::SetTimer { at, key, token } => self
                    .sched
                    .schedule_at(at, Event::RoutingTimer(node, key, token)),
                RoutingAction::ReclaimQueued { next_hop } => {
                    self.reclaim_queued(now, node, next_hop)
                }
            }
        }
        self.actions = actions;
    }

    /// A unicast the routing protocol of `node` hands down towards `next_hop`.
    fn routing_forward(&mut self, now: SimTime, node: NodeId, pkt: Packet, next_hop: NodeId) {
        let ev = if pkt.ip.src == node {
            trace::Ev::Send
        } else {
            trace::Ev::Forward
        };
        self.trace_pkt(ev, trace::Lv::Rtr, node, &pkt, None, Some(next_hop));
        self.send_to_neighbour(now, node, next_hop, pkt)
    }

    /// Send a routing broadcast from `node`: to the wireless interface queue
    /// (MAC broadcast, after the LL delay) and a copy over every point-to-point link.
    fn broadcast(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        if self.is_off(node) {
            // A switched-off node's protocol timers still fire; nothing leaves it.
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        let ports: Vec<NodeId> = self.nodes[node.index()].ports.iter().map(|p| p.0).collect();
        for nb in ports {
            self.send_to_neighbour(now, node, nb, pkt.clone());
        }
        if self.nodes[node.index()].wifi.is_some() {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched.schedule_at(
                now + self.mac_params.ll_delay,
                Event::IfqArrive(node, p, None),
            );
        }
    }

    /// Take `node`'s queued packets for `next_hop` out of its interface queue and
    /// give them back to its routing protocol (after a link break).
    fn reclaim_queued(&mut self, now: SimTime, node: NodeId, next_hop: NodeId) {
        let Some(w) = self.nodes[node.index()].wifi.as_mut() else {
            return;
        };
        let mut taken = Vec::new();
        w.ifq.drain_for(next_hop, &mut taken);
        // An ARP reply to the broken neighbour is useless now; only packets go back.
        taken.retain(|q| q.arp.is_none());
        self.note_queue(now, node);
        if !taken.is_empty() {
            self.with_routing(now, node, |r, ctx| {
                for q in taken {
                    r.reclaimed(ctx, Rc::unwrap_or_clone(q.pkt), next_hop);
                }
            });
        }
    }

    fn send_to_neighbour(&mut self, now: SimTime, node: NodeId, next_hop: NodeId, pkt: Packet) {
        let ports = &self.nodes[node.index()].ports;
        let Ok(i) = ports.binary_search_by_key(&next_hop, |p| p.0) else {
            if self.nodes[node.index()].wifi.is_some() {
                self.ll_send(now, node, next_hop, pkt);
            } else {
                // A routing protocol named a node we have no link to: no route.
                self.drop_packet(node, &pkt, DropReason::NoRoute);
            }
            return;
        };
        let l = ports[i].1;
        let link = &mut self.links[l.index()];
        let d = link.dir_from(node);
        let step = link.enqueue(now, d, pkt);
        self.link_step(l, d as u8, step, Some(node));
    }

    fn link_step(&mut self, l: LinkId, d: u8, step: LinkStep, from: Option<NodeId>) {
        match step {
            LinkStep::Started {
                tx_done,
                arrive,
                pkt,
            } => {
                self.pcap(self.links[l.index()].dirs[d as usize].from, &pkt);
                self.sched.schedule_at(tx_done, Event::LinkTxDone(l, d));
                let p = self.parcels.put(pkt);
                self.sched.schedule_at(arrive, Event::LinkArrive(l, d, p));
            }
            LinkStep::Dropped(pkt) => {
                let node = from.unwrap_or(self.links[l.index()].dirs[d as usize].from);
                self.drop_packet(node, &pkt, DropReason::QueueOverflow);
            }
            LinkStep::Queued | LinkStep::Idle => {}
        }
    }

    // ---- wireless interface -----------------------------------------------------

    fn wifi(&mut self, n: NodeId) -> &mut Wifi {
        self.nodes[n.index()]
            .wifi
            .as_mut()
            .expect("node has a wireless interface")
    }

    /// ns-2 `LL::sendDown` for a unicast packet: resolve the next hop with ARP
    /// (which may hold the packet and broadcast a request, or fail it back to the
    /// routing protocol), then hand the packet to the interface queue after the
    /// LL delay.
    fn ll_send(&mut self, now: SimTime, node: NodeId, next_hop: NodeId, pkt: Packet) {
        let w = self.wifi(node);
        // A resolved next hop (the usual case) takes the packet as it is.
        let Some(arp) = w.arp.as_mut().filter(|a| !a.is_resolved(next_hop)) else {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched.schedule_at(
                now + self.mac_params.ll_delay,
                Event::IfqArrive(node, p, Some(next_hop)),
            );
            return;
        };
        match arp.resolve(next_hop, pkt) {
            Resolve::Ready(pkt) => {
                let p = self.parcels.put(Rc::new(pkt));
                self.sched.schedule_at(
                    now + self.mac_params.ll_delay,
                    Event::IfqArrive(node, p, Some(next_hop)),
                );
            }
            Resolve::Held { replaced } => {
                let req = arp.request(next_hop);
                self.sched
                    .schedule_at(now + ARP_DELAY, Event::ArpOut(node, req, None));
                if let Some(old) = replaced {
                    self.trace_drop_towards(
                        node,
                        &old,
                        DropReason::ArpHoldReplaced,
                        Some(next_hop),
                    );
                    self.account_drop(node, &old, DropReason::ArpHoldReplaced);
                }
            }
            Resolve::Failed { held, pkt } => {
                // ns-2 hands both to the routing agent's link-failure callback, or
                // drops a packet that has none (`DROP_IFQ_ARP_FULL`).
                for p in held.into_iter().chain(std::iter::once(pkt)) {
                    if self.nodes[node.index()].routing.failure_callback(&p) {
                        self.with_routing(now, node, |r, ctx| r.tx_failed(ctx, p, next_hop));
                    } else {
                        self.trace_drop_towards(
                            node,
                            &p,
                            DropReason::ArpHoldReplaced,
                            Some(next_hop),
                        );
                        self.account_drop(node, &p, DropReason::ArpHoldReplaced);
                    }
                }
            }
        }
    }

    /// An ARP message reaches node `n`'s interface queue (after the ARP table's
    /// delay); ns-2 queues it like any other non-routing packet.
    fn arp_out(&mut self, now: SimTime, n: NodeId, m: ArpMsg, to: Option<NodeId>) {
        if self.is_off(n) {
            return;
        }
        self.ifq_offer(now, n, Queued::arp(m, to));
    }

    /// An ARP message arrived at `n`: learn its sender, release the packet held
    /// for it, and answer a request for us.
    fn arp_in(&mut self, now: SimTime, n: NodeId, m: ArpMsg) {
        if self.is_off(n) {
            return;
        }
        let Some(arp) = self.wifi(n).arp.as_mut() else {
            return;
        };
        let input = arp.input(&m);
        if let Some(pkt) = input.release {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched
                .schedule_at(now + ARP_DELAY, Event::IfqArrive(n, p, Some(m.sender)));
        }
        if let Some(reply) = input.reply {
            debug_assert_eq!(reply.op, ArpOp::Reply);
            self.sched
                .schedule_at(now + ARP_DELAY, Event::ArpOut(n, reply, Some(m.sender)));
        }
    }

    fn ifq_arrive(&mut self, now: SimTime, n: NodeId, pkt: Rc<Packet>, next_hop: Option<NodeId>) {
        if self.is_off(n) {
            self.drop_packet(n, &pkt, DropReason::NodeOff);
            return;
        }
        self.ifq_offer(now, n, Queued::packet(pkt, next_hop));
    }

    fn ifq_offer(&mut self, now: SimTime, n: NodeId, item: Queued) {
        let w = self.wifi(n);
        if let Err((q, why)) = w.ifq.enqueue(now, item) {
            if let Some(m) = q.arp {
                self.trace_arp_drop(n, &m, q.next_hop, why);
                self.nodes[n.index()].counters.on_drop(why, false);
            } else {
                self.trace_drop_towards(n, &q.pkt, why, q.next_hop);
                self.account_drop(n, &q.pkt, why);
            }
            return;
        }
        let len = w.ifq.len() as u32;
        let c = &mut self.nodes[n.index()].counters;
        c.ifq_max_pkts = c.ifq_max_pkts.max(len);
        self.note_queue(now, n);
        if self.air[n.index()].mac.is_free() {
            self.run_mac(now, n, |_, out| out.push(MacAction::Ready));
        }
    }

    /// Run a DCF handler of node `n` and carry out its actions in order. Actions
    /// that call back into the same MAC (`Ready` → next packet) append to the queue
    /// instead of recursing.
    fn run_mac(
        &mut self,
        now: SimTime,
        n: NodeId,
        f: impl FnOnce(&mut WifiMac, &mut Vec<MacAction>),
    ) {
        let mut buf = std::mem::take(&mut self.mac_buf);
        // The packet the MAC holds now is the one a `FrameDone` below is about:
        // a packet taken on `Ready` cannot finish within the same handler.
        let held_app = self.air[n.index()].mac.held_app();
        f(&mut self.air[n.index()].mac, &mut buf);
        // `buf` is the queue: actions run in order, and those of a `Ready` below
        // are appended behind the rest (no copying between two queues).
        let mut next = 0;
        while next < buf.len() {
            let a = std::mem::replace(&mut buf[next], MacAction::Ready);
            next += 1;
            match a {
                MacAction::Transmit => self.transmit(now, n),
                MacAction::SetTimer(MacTimer::Nav, at, tok) => match &mut self.air[n.index()].mac {
                    WifiMac::Dcf(d) => hold_nav(&mut d.held_nav, at, tok, &mut self.sched),
                    WifiMac::Frn(_) => self.sched.arm_owned(n.0, MacTimer::Nav as usize, at, tok),
                },
                // FRN's slot timer is an event; the DCF's wait in the owned-timer table.
                MacAction::SetTimer(MacTimer::Slot, at, tok) => self
                    .sched
                    .schedule_at(at, Event::Mac(n, MacTimer::Slot, tok)),
                MacAction::SetTimer(t, at, tok) => self.sched.arm_owned(n.0, t as usize, at, tok),
                // Only the DCF cancels, and never its NAV: the arming is in the owned-timer table.
                MacAction::CancelTimer(t) => self.sched.disarm_owned(n.0, t as usize),
                // ns-2's LL passes received packets up after its delay, as it passes them down;
                // the copy is this node's from here (held at `ll` until then).
                MacAction::Deliver(from) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    self.pcap(n, &pkt);
                    if pkt.tag.is_some() {
                        self.nodes[n.index()].counters.received_packets += 1;
                    }
                    let p = self.parcels.put(pkt);
                    self.sched
                        .schedule_at(now + self.mac_params.ll_delay, Event::LlUp(n, p, from))
                }
                MacAction::ArpIn(m, _) => self.arp_in(now, n, m),
                // The frame the MAC held when its node went off fails without reaching the air.
                MacAction::TxFailed(next_hop) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    if self.is_off(n) {
                        self.drop_packet(n, &pkt, DropReason::NodeOff);
                    } else {
                        self.mac_tx_failed(now, n, Rc::unwrap_or_clone(pkt), next_hop);
                    }
                }
                MacAction::Discard => {
                    let (f, code) = self.air[n.index()].mac.take_discarded();
                    self.trace_discard(n, &f, code);
                }
                MacAction::Overheard(from, to) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    if !self.is_off(n) {
                        self.with_routing(now, n, |r, ctx| r.overheard(ctx, &pkt, from, to));
                    }
                }
                MacAction::FrameDone { .. } if self.is_off(n) => {}
                MacAction::FrameDone { retries, ok } => {
                    let app = self.air[n.index()].mac.done_is_app(held_app);
                    let c = &mut self.nodes[n.index()].counters;
                    if ok && app {
                        // Acknowledged: the copy is the next hop's now.
                        c.sent_packets += 1;
                    }
                    c.mac_frames_failed += u64::from(!ok);
                    c.mac_frames += 1;
                    c.mac_retries += retries as u64;
                    // LRED learns the retry count and decides on adaptive pacing.
                    let w = self.wifi(n);
                    w.ifq.mac_feedback(retries);
                    let pacing = w.ifq.pacing();
                    self.air[n.index()].mac.set_pacing(pacing);
                }
                MacAction::Ready => {
                    let mut dropped = Vec::new();
                    let mac = &mut self.air[n.index()].mac;
                    if mac.is_free() {
                        let w = self.nodes[n.index()].wifi.as_mut().expect("wireless node");
                        if let Some(q) = w.ifq.dequeue(now, &mut dropped) {
                            match q.arp {
                                Some(m) => mac.enqueue_arp(now, m, q.next_hop, &mut buf),
                                None => mac.enqueue(now, q.pkt, q.next_hop, &mut buf),
                            }
                        }
                        self.note_queue(now, n);
                    }
                    for q in dropped {
                        if let Some(m) = q.arp {
                            self.trace_arp_drop(n, &m, q.next_hop, DropReason::EarlyDrop);
                            self.nodes[n.index()]
                                .counters
                                .on_drop(DropReason::EarlyDrop, false);
                        } else {
                            self.trace_drop_towards(n, &q.pkt, DropReason::EarlyDrop, q.next_hop);
                            self.account_drop(n, &q.pkt, DropReason::EarlyDrop);
                        }
                    }
                }
            }
        }
        buf.clear();
        self.mac_buf = buf;
        self.release_nav(n);
    }

    /// [`Air::release_nav`] after a MAC handler of node `n`.
    fn release_nav(&mut self, n: NodeId) {
        self.air[n.index()].release_nav(n, &mut self.sched);
    }

    /// Put node `n`'s MAC's frame on the air: every node that senses it gets
    /// a signal start and end, delayed by the propagation time.
    fn transmit(&mut self, now: SimTime, n: NodeId) {
        let frame = self.air[n.index()].mac.take_frame();
        self.trace_frame(trace::Ev::Send, n, &frame);
        if let (FrameKind::Data, false, Some(p)) = (frame.kind, frame.retry, &frame.pkt) {
            // The datagram leaves the interface: once, at its first attempt (MAC retries are below IP).
            if !self.is_off(n) {
                self.pcap(n, p);
            }
        }
        self.air[n.index()].radio.start_tx();
        let airtime = frame.airtime;
        // The TxEnd's key, taken before the receivers'; the event is its own
        // only without receivers, else the signal-end walk's (`TxRecord::tx_end`).
        let (tx_end_at, tx_end_seq) = (now + airtime, self.sched.reserve_seq());
        let id = match self.free_txs.pop() {
            Some(id) => id,
            None => {
                self.txs.push(None);
                (self.txs.len() - 1) as TxId
            }
        };
        let Simulator {
            channel,
            phy_rngs,
            faults,
            rx_pool,
            ..
        } = self;
        let ch = channel.as_mut().expect("wireless transmit needs a channel");
        let (params, random) = (ch.params, ch.params.propagation.is_random());
        let (faults, cs_threshold_w) = (faults.as_ref(), params.cs_threshold_w);
        let mut rx = rx_pool.pop().unwrap_or_default();
        // An off node's radio puts nothing on the air.
        let neighbors = match faults {
            Some(f) if f.off[n.index()] => &[][..],
            _ => ch.neighbors_at_arrival_order(n, now),
        };
        // Each receiver's start and end events get the numbers of one
        // contiguous block right after the TxEnd's, two per receiver in
        // (arrival, node) order (taken from the scheduler below). The events
        // used to be scheduled one by one in node order, so equal arrivals ran
        // in node order: the same order as here; and no other event's number
        // falls inside the block. The channel lists receivers in (delay, node)
        // order already.
        // Written into spare capacity (no growth check per receiver).
        rx.clear();
        rx.reserve(neighbors.len());
        let slots = &mut rx.spare_capacity_mut()[..neighbors.len()];
        /// The usual case (no faults, no shadowing draw): the loop below in a
        /// function of its own, whose few live values stay in registers.
        #[inline(never)]
        fn plain(
            neighbors: &[crate::phy::Neighbor],
            slots: &mut [std::mem::MaybeUninit<Arrival>],
            now: SimTime,
            cs_threshold_w: f64,
        ) -> usize {
            let mut len = 0;
            for nb in neighbors {
                if nb.mean_power_w < cs_threshold_w {
                    continue;
                }
                slots[len].write(Arrival {
                    node: nb.node,
                    power_w: nb.mean_power_w,
                    start: now + nb.delay,
                });
                len += 1;
            }
            len
        }
        let len = if faults.is_none() && !random {
            plain(neighbors, slots, now, cs_threshold_w)
        } else {
            let mut len = 0;
            for nb in neighbors {
                let power_w = if random {
                    params
                        .propagation
                        .rx_from_mean_w(nb.mean_power_w, &mut phy_rngs[nb.node.index()])
                } else {
                    nb.mean_power_w
                };
                if let Some(f) = faults {
                    // Off receivers and failed links carry no signal (not even carrier).
                    // Checked after the draw so faults do not shift a receiver's stream.
                    if f.off[nb.node.index()]
                        || (f.state.any_link_down() && !f.state.link_up(n, nb.node))
                    {
                        continue;
                    }
                }
                if power_w < cs_threshold_w {
                    continue;
                }
                slots[len].write(Arrival {
                    node: nb.node,
                    power_w,
                    start: now + nb.delay,
                });
                len += 1;
            }
            len
        };
        // SAFETY: the first `len` slots were written just above, and `len` is at
        // most `neighbors.len()`, within the reserved capacity.
        unsafe { rx.set_len(len) };
        if rx.is_empty() {
            self.free_txs.push(id);
            self.rx_pool.push(rx);
            self.sched
                .schedule_reserved(tx_end_at, tx_end_seq, Event::TxEnd(n));
        } else {
            debug_assert!(rx
                .windows(2)
                .all(|w| (w[0].start, w[0].node) < (w[1].start, w[1].node)));
            // Take the block numbered above: nothing was reserved since the TxEnd's.
            let block = self.sched.reserve_seqs(2 * rx.len() as u64);
            debug_assert_eq!(block, tx_end_seq + 1);
            self.sched
                .schedule_reserved(rx[0].start, start_seq(block, 0), Event::SignalStart(id));
            self.sched
                .schedule_reserved(tx_end_at, tx_end_seq, Event::SignalEnd(id));
            // The slot is free (`None`): nothing to drop, so no drop code.
            let old = self.txs[id as usize].replace(TxRecord {
                frame,
                airtime,
                rx,
                seq0: block,
                next_start: 0,
                next_end: 0,
                tx_end: Some(n),
            });
            debug_assert!(old.is_none());
            std::mem::forget(old);
        }
    }

    /// Run the signal starts of transmission `tx`, from the next one on, as long
    /// as each is the earliest pending event (receivers hear a frame within
    /// microseconds of each other, so usually all of them); then put the walk
    /// back in the heap at the next start's key. The events run in the same
    /// order, at the same times, as if each had been its own heap entry.
    fn signal_starts(&mut self, now: SimTime, tx: TxId) {
        let params = self.channel.as_ref().expect("channel").params;
        // A MAC-level drop trace writes the frames a collision drops at its start
        // (`collision_drop`): the general walk.
        match CaptureParams::of(&params) {
            Some(c) if self.faults.is_none() && !self.traces_mac_drops() => {
                self.signal_starts_in::<true>(now, tx, &params, c)
            }
            _ => self.signal_starts_in::<false>(now, tx, &params, CaptureParams::default()),
        }
    }

    /// [`Simulator::signal_starts`]; `PLAIN`: capture mode (`c`) and no
    /// faults, checked once per walk instead of at every receiver.
    #[inline(always)]
    fn signal_starts_in<const PLAIN: bool>(
        &mut self,
        mut now: SimTime,
        tx: TxId,
        params: &RadioParams,
        c: CaptureParams,
    ) {
        // The receiver list is lent to the walk: no handler reads it, and the
        // slot stays `tx`'s while the walk runs (it is freed after the last end).
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        let (rx, airtime, seq0, first) = (
            std::mem::take(&mut rec.rx),
            rec.airtime,
            rec.seq0,
            rec.next_start,
        );
        let mut i = first;
        loop {
            let a = rx[i];
            i += 1;
            self.signal_start::<PLAIN>(now, a.node, tx, a.power_w, airtime, params, c);
            let Some(b) = rx.get(i) else { break };
            let seq = start_seq(seq0, i);
            if !self.sched.advance_inline(b.start, seq) {
                self.sched
                    .schedule_reserved(b.start, seq, Event::SignalStart(tx));
                break;
            }
            now = b.start;
        }
        // The first start was counted by `dispatch`.
        self.event_counts[KIND_SIGNAL_START] += (i - first - 1) as u64;
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        rec.rx = rx;
        rec.next_start = i;
    }

    /// Node `n`'s own transmission ends.
    fn tx_end(&mut self, now: SimTime, n: NodeId) {
        let w = &mut self.air[n.index()];
        w.radio.end_tx();
        match &mut w.mac {
            // The DCF's handler has no actions: of `run_mac` only the NAV's release is left.
            WifiMac::Dcf(d) => {
                d.tx_end_quiet();
                w.release_nav(n, &mut self.sched);
            }
            WifiMac::Frn(_) => self.run_mac(now, n, |mac, out| mac.tx_end(now, out)),
        }
    }

    /// As [`Simulator::signal_starts`] for the signal ends; the last one frees
    /// `tx`. The first entry is the sender's `TxEnd` ([`TxRecord::tx_end`]).
    fn signal_ends(&mut self, mut now: SimTime, tx: TxId) {
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        if let Some(n) = rec.tx_end.take() {
            // This event was the TxEnd (counted as a signal end by `dispatch`).
            self.event_counts[KIND_SIGNAL_END] -= 1;
            self.event_counts[KIND_TX_END] += 1;
            self.tx_end(now, n);
            let rec = self.txs[tx as usize].as_ref().expect("live transmission");
            let (at, seq) = (rec.rx[0].start + rec.airtime, start_seq(rec.seq0, 0) + 1);
            if !self.sched.advance_inline(at, seq) {
                self.sched.schedule_reserved(at, seq, Event::SignalEnd(tx));
                return;
            }
            self.event_counts[KIND_SIGNAL_END] += 1;
            now = at;
        }
        match self.faults {
            None if matches!(
                self.channel.as_ref().expect("channel").params.reception,
                Reception::Capture { .. }
            ) =>
            {
                self.signal_ends_in::<true>(now, tx)
            }
            _ => self.signal_ends_in::<false>(now, tx),
        }
    }

    /// The walk of [`Simulator::signal_ends`] (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    fn signal_ends_in<const PLAIN: bool>(&mut self, mut now: SimTime, tx: TxId) {
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        let (mut rx, airtime, seq0, first) = (
            std::mem::take(&mut rec.rx),
            rec.airtime,
            rec.seq0,
            rec.next_end,
        );
        let mut i = first;
        // What the receivers' quiet paths read of the frame, read once.
        let head = FrameHead::of(&rec.frame);
        let params = self.channel.as_ref().expect("channel").params;
        loop {
            let a = rx[i];
            i += 1;
            self.signal_end::<PLAIN>(now, a.node, tx, head, &params);
            let Some(b) = rx.get(i) else {
                // The first end was counted by `dispatch` (or the TxEnd's walk step).
                self.event_counts[KIND_SIGNAL_END] += (i - first - 1) as u64;
                // All of `tx`'s signals have ended: its slot and receiver list are reused.
                self.txs[tx as usize] = None;
                self.free_txs.push(tx);
                rx.clear();
                self.rx_pool.push(rx);
                return;
            };
            let (at, seq) = (b.start + airtime, start_seq(seq0, i) + 1);
            if !self.sched.advance_inline(at, seq) {
                self.sched.schedule_reserved(at, seq, Event::SignalEnd(tx));
                break;
            }
            now = at;
        }
        self.event_counts[KIND_SIGNAL_END] += (i - first - 1) as u64;
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        rec.rx = rx;
        rec.next_end = i;
    }

    /// One receiver's signal start (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn signal_start<const PLAIN: bool>(
        &mut self,
        now: SimTime,
        n: NodeId,
        tx: TxId,
        power_w: f64,
        airtime: SimDuration,
        params: &RadioParams,
        c: CaptureParams,
    ) {
        if !PLAIN && self.is_off(n) {
            // Switched off since the frame was sent.
            let w = &mut self.air[n.index()];
            w.radio.signal_missed(&mut w.radio_extra, tx);
            return;
        }
        let w = &mut self.air[n.index()];
        let end = now + airtime;
        let was_idle = !w.radio.sensing();
        // The lock before, when a collision's dropped frame may be traced.
        let before = if !PLAIN
            && matches!(params.reception, Reception::Capture { .. })
            && self.tracer.is_some()
        {
            w.radio.lock_view()
        } else {
            None
        };
        let transmitting = w.radio.is_transmitting();
        let captured = if PLAIN {
            w.radio.capture_start(c, tx, power_w, end)
        } else {
            w.radio
                .signal_start(&mut w.radio_extra, params, tx, power_w, end)
        };
        if let (Some((old_tx, old_failure)), false) = (before, captured) {
            // Locked and not captured: a collision. ns-2 discards at once the frame
            // that ends first (`Mac802_11::collision`); a frame that was never
            // decodable (below RXThresh, or met while transmitting) leaves no line
            // (`discard` frees errored packets silently).
            let new_lock = self.air[n.index()].radio.lock_view().map(|(t, _)| t);
            let (dropped, decodable) = if new_lock != Some(old_tx) {
                (
                    old_tx,
                    !matches!(
                        old_failure,
                        Some(RxFailure::BelowThreshold | RxFailure::HalfDuplex)
                    ),
                )
            } else {
                (tx, !transmitting && power_w >= params.rx_threshold_w)
            };
            if decodable {
                self.collision_drop(n, dropped);
            }
        }
        let w = &mut self.air[n.index()];
        if captured {
            // The radio was busy already: no carrier change to report.
            self.mac_captured(now, n, airtime);
        } else if let Some(sensing) = w.note_carrier(now, true, was_idle) {
            self.mac_carrier(now, n, sensing);
        }
    }

    /// The MAC's carrier handler. Out of the signal walks' line: most carrier
    /// changes run none ([`Air::note_carrier`]), and the walks keep their
    /// registers.
    #[inline(never)]
    fn mac_carrier(&mut self, now: SimTime, n: NodeId, sensing: bool) {
        self.run_mac(now, n, |mac, out| mac.carrier(now, sensing, out));
    }

    /// The MAC's handler of a captured frame of `airtime` (out of line, as [`Simulator::mac_carrier`]).
    #[inline(never)]
    fn mac_captured(&mut self, now: SimTime, n: NodeId, airtime: SimDuration) {
        self.run_mac(now, n, |mac, out| mac.rx_captured(now, airtime, out));
    }

    /// One receiver's signal end (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    fn signal_end<const PLAIN: bool>(
        &mut self,
        now: SimTime,
        n: NodeId,
        tx: TxId,
        head: FrameHead,
        params: &RadioParams,
    ) {
        let Simulator {
            air, faults, sched, ..
        } = self;
        let w = &mut air[n.index()];
        // A plain walk's signal was counted at its start (no missed starts).
        let was_sensing = PLAIN || w.radio.sensing();
        let result = if PLAIN {
            w.radio.capture_end(tx)
        } else {
            w.radio.signal_end(&mut w.radio_extra, params, tx)
        };
        let changed = was_sensing != w.radio.sensing();
        if !PLAIN && faults.as_ref().is_some_and(|f| f.off[n.index()]) {
            // An off node's MAC learns of carrier changes only, never of frames.
            self.report_carrier(now, n, changed);
            return;
        }
        match result {
            RxResult::NotLocked => {
                if let Some(sensing) = w.note_carrier(now, w.radio.sensing(), changed) {
                    self.mac_carrier(now, n, sensing);
                }
            }
            RxResult::Decoded => {
                // A frame for us is never quiet, so it is traced (`mac_frame`) before the MAC hears of it.
                match w.reception_quiet(now, n, Some(head), changed, sched) {
                    Ok(None) => {}
                    Ok(Some(sensing)) => self.mac_carrier(now, n, sensing),
                    Err((sensing, changed)) => self.mac_frame(now, n, tx, sensing, changed),
                }
            }
            RxResult::Failed(why) => {
                // Most errors are signals too weak to decode: no frame to look at.
                if why == RxFailure::Collision && head.dst.map_or(true, |d| d == n) {
                    self.collision_for_us(now, n, tx, changed);
                } else {
                    let quiet = w.reception_quiet(now, n, None, changed, sched);
                    self.after_quiet_error(now, n, quiet);
                }
            }
        }
    }

    /// A frame `tx` decoded at `n` that [`Air::reception_quiet`] left to the
    /// MAC's handlers (out of the walk's line).
    #[inline(never)]
    fn mac_frame(&mut self, now: SimTime, n: NodeId, tx: TxId, sensing: bool, changed: bool) {
        // A copy while the MAC reads it (a few words; the packet is shared).
        let frame = self.frame_of(tx);
        if frame.dst.map_or(true, |d| d == n) {
            self.trace_frame(trace::Ev::Recv, n, &frame);
        }
        self.mac_reception(now, n, Ok(&frame), sensing, changed);
    }

    /// Whether the trace writes MAC drops (then collisions are traced at their start too).
    fn traces_mac_drops(&self) -> bool {
        self.tracer
            .as_ref()
            .is_some_and(|t| t.wants_drop(crate::trace::ns2::Level::Mac))
    }

    /// A decodable frame `tx` that a collision at `n` dropped as it began (ns-2
    /// `collision` → `discard(…, DROP_MAC_COLLISION)`): a `D … MAC COL` line when
    /// it was for `n` (or broadcast), as ns-2's `discard` rules. Trace only: the
    /// `mac_collisions` counter counts the receptions that end in a collision.
    #[inline(never)]
    fn collision_drop(&mut self, n: NodeId, tx: TxId) {
        let frame = self.frame_of(tx);
        if frame.dst.map_or(true, |d| d == n) {
            self.trace_frame(trace::Ev::Drop, n, &frame);
        }
    }

    /// Frame `tx` for `n` was lost to a collision (out of the walk's line).
    #[inline(never)]
    fn collision_for_us(&mut self, now: SimTime, n: NodeId, tx: TxId, changed: bool) {
        let frame = self.frame_of(tx);
        self.frame_collision(n, &frame);
        let Simulator { air, sched, .. } = self;
        let quiet = air[n.index()].reception_quiet(now, n, None, changed, sched);
        self.after_quiet_error(now, n, quiet);
    }

    /// A copy of transmission `tx`'s frame, for a handler that may start
    /// transmissions of its own (and so reallocate `txs`).
    #[inline(always)]
    fn frame_of(&self, tx: TxId) -> Frame {
        self.txs[tx as usize]
            .as_ref()
            .expect("live transmission")
            .frame
            .clone()
    }

    /// Tell the MAC of a carrier change, if a signal event `changed` the
    /// radio's carrier. Most changes cannot matter to the MAC
    /// ([`Dcf::carrier_quiet`]) and cost no handler run.
    #[inline]
    fn report_carrier(&mut self, now: SimTime, n: NodeId, changed: bool) {
        let w = &mut self.air[n.index()];
        if let Some(sensing) = w.note_carrier(now, w.radio.sensing(), changed) {
            self.mac_carrier(now, n, sensing);
        }
    }

    /// What [`Air::reception_quiet`] left of an errored reception to the MAC's handlers.
    #[inline(always)]
    fn after_quiet_error(
        &mut self,
        now: SimTime,
        n: NodeId,
        quiet: Result<Option<bool>, (bool, bool)>,
    ) {
        match quiet {
            Ok(None) => {}
            Ok(Some(sensing)) => self.mac_carrier(now, n, sensing),
            Err((sensing, changed)) => self.mac_reception(now, n, Err(()), sensing, changed),
        }
    }

    /// Tell the MAC of a reception outcome (first) and any carrier change (then),
    /// so that EIFS is chosen before the idle medium resumes the backoff: the
    /// part of a reception [`Air::reception_quiet`] left to the MAC's handlers
    /// (`sensing` and whether it `changed` are already noted).
    #[inline(never)]
    fn mac_reception(
        &mut self,
        now: SimTime,
        n: NodeId,
        rx: Result<&Frame, ()>,
        sensing: bool,
        changed: bool,
    ) {
        self.run_mac(now, n, |mac, out| {
            match rx {
                Ok(frame) => mac.rx_ok(now, frame, out),
                Err(()) => mac.rx_error(now, out),
            }
            if changed {
                mac.carrier(now, sensing, out);
            }
        });
    }

    /// A copy of `pkt` ends at `node` (docs/metrics.md): counted per node,
    /// and in the packet's record, whose last drop is its fate unless another
    /// copy was delivered or is still in flight at the end.
    fn drop_packet(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        self.trace_drop(node, pkt, reason);
        self.account_drop(node, pkt, reason);
    }

    /// [`Simulator::drop_packet`] without the trace line (its caller wrote one).
    fn account_drop(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
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

    /// A frame for `n` was lost to a collision: a MAC event, not a packet drop
    /// (its sender still holds the packet and retries). Traced `COL` like ns-2.
    fn frame_collision(&mut self, n: NodeId, f: &Frame) {
        // Every frame kind, RTS/CTS/ACK included, as ns-2 traces them.
        self.trace_frame(trace::Ev::Drop, n, f);
        self.nodes[n.index()].counters.mac_collisions += 1;
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
    fn maybe_settle_ledger(&mut self) {
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
            connectivity: self.connectivity_report(),
            series: self.series.as_deref().cloned(),
            outputs: Vec::new(),
        }
    }

    // ---- faults -----------------------------------------------------------------

    fn is_off(&self, n: NodeId) -> bool {
        self.faults.as_ref().is_some_and(|f| f.off[n.index()])
    }

    /// Why a frame or packet cannot cross from `a` to `b` now, if it cannot.
    fn fault_blocks(&self, a: NodeId, b: NodeId) -> Option<DropReason> {
        let f = self.faults.as_ref()?;
        if f.off[a.index()] || f.off[b.index()] {
            Some(DropReason::NodeOff)
        } else if !f.state.link_up(a, b) {
            Some(DropReason::LinkDown)
        } else {
            None
        }
    }

    /// Apply the fault schedule's next event and schedule the one after it.
    fn apply_fault(&mut self, now: SimTime) {
        let f = self.faults.as_mut().expect("fault event without faults");
        let e = f.pending.take().expect("a fault event has its fault");
        debug_assert_eq!(e.time, now);
        f.log.push(e);
        f.pending = f.stream.next();
        if let Some(next) = f.pending {
            self.sched.schedule_at(next.time, Event::Fault);
        }
        let was_off = f.off[e.a.index()];
        f.state.apply(&e);
        let off = !f.state.node_up(e.a);
        f.off[e.a.index()] = off;
        if e.kind == FaultKind::NodeOff && off && !was_off {
            self.switch_off(now, e.a);
        } else if e.kind == FaultKind::NodeOn && !off && was_off {
            if let Some(a) = self.air.get_mut(e.a.index()) {
                a.mac.switch_on(now);
            }
        }
    }

    /// Node `n` just went off: flush its interface queue and reset its MAC; the
    /// frame the MAC held is dropped too. A transmission already on the air ends
    /// normally (its signal is out).
    fn switch_off(&mut self, now: SimTime, n: NodeId) {
        let Some(w) = self.nodes[n.index()].wifi.as_mut() else {
            return;
        };
        let mut flushed = Vec::new();
        while let Some(q) = w.ifq.dequeue(now, &mut flushed) {
            flushed.push(q);
        }
        let a = &mut self.air[n.index()];
        let held = a.mac.switch_off();
        if let WifiMac::Dcf(d) = &mut a.mac {
            d.held_nav = None; // its timer is cancelled: the event would be stale
        }
        self.note_queue(now, n);
        for q in flushed.into_iter().filter(|q| q.arp.is_none()) {
            self.drop_packet(n, &q.pkt, DropReason::NodeOff);
        }
        for pkt in held {
            self.drop_packet(n, &pkt, DropReason::NodeOff);
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

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::{align_of, offset_of};

    /// The signal walks read a receiver's radio and its DCF's first 32 bytes
    /// (`Dcf`'s layout test): one line.
    #[test]
    fn air_keeps_the_walks_fields_in_one_line() {
        assert_eq!(align_of::<Air>(), 64);
        assert_eq!(offset_of!(Air, radio), 0);
        assert!(std::mem::size_of::<Radio>() <= 32);
        assert_eq!(offset_of!(Air, mac), 32);
        let a = Air {
            radio: Radio::new(),
            mac: WifiMac::Dcf(Dcf::new(
                NodeId(0),
                MacParams::default(),
                stream(1, 0, Component::Mac),
            )),
            radio_extra: RadioExtra::default(),
        };
        let WifiMac::Dcf(d) = &a.mac else {
            unreachable!()
        };
        // The DCF sits at the start of its enum (the variant is told by a niche, not a tag before it).
        assert_eq!(
            d as *const Dcf as usize - &a as *const Air as usize,
            offset_of!(Air, mac)
        );
    }
}
