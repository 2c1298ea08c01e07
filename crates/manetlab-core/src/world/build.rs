//! Building a run from a validated scenario: nodes with their routing protocol
//! and wireless interface (interface queue, ARP, MAC, radio), point-to-point
//! links, flows, the channel, faults and outputs, and the first events.
//!
//! Contract: every random stream is drawn from (seed, id, [`Component`]), so
//! the order in which things are built moves no result; nothing runs before
//! [`Simulator::run`] and its relatives except each routing protocol's `start`.

use super::air::Air;
use super::event::{Event, EventCounts, Parcels};
use super::faults::Faults;
use super::ll::Wifi;
use super::{tcp, Flow, Node, Simulator};
use crate::app::cbr::Cbr;
use crate::faults::{FaultState, FaultStream};
use crate::ids::{FlowId, LinkId, NodeId};
use crate::link::p2p::P2pLink;
use crate::mac::{ArpTable, Dcf, FrnHandle, FrnMac, FrnShared, WifiMac};
use crate::metrics::{FlowCounters, NodeCounters, PacketLedger};
use crate::phy::{Channel, Radio, RadioExtra};
use crate::queue::{CmuPriQueue, DropTail, Lred, PriQueue, Queue, Red};
use crate::routing::{Aodv, Dsdv, Dsr, FrnRouting, Routing, StaticRouteTable, StaticRouting};
use crate::scenario::{FlowKind, QueueKind, RoutingProtocol, Scenario, DEFAULT_QUEUE_LIMIT_PKTS};
use crate::sim::{stream, Component, Scheduler, SimDuration, SimTime};

/// Static start positions (`nodes.placement`, via `mobility::placement`).
pub(super) fn positions(s: &Scenario) -> Vec<[f64; 2]> {
    s.placement_positions()
}

/// Node `id`'s routing protocol (default: static shortest paths over the shared `static_table`).
pub(super) fn make_routing(
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
pub(super) fn make_queue(s: &Scenario, limit: u32, node: u64) -> Box<dyn Queue> {
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
                FaultStream::with_range(spec, s.seed, s.nodes.count, end, Some(s.in_range()))
                    .expect("validated faults");
            let pending = stream.next_fault();
            if let Some((first, _)) = pending {
                sched.schedule_at(first.time, Event::Fault);
            }
            Faults {
                stream,
                pending,
                log: Vec::new(),
                failures: Vec::new(),
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
            event_counts: EventCounts::new(),
        };
        if sim.series.is_some() && sim.series_interval.is_some() {
            sim.sched.schedule_at(SimTime::ZERO, Event::SampleQueues);
        }
        for i in 0..n {
            sim.with_routing(SimTime::ZERO, NodeId(i as u32), |r, ctx| r.start(ctx));
        }
        sim
    }
}
