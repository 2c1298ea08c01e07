//! The simulator: arenas of nodes, links and flows, and the event loop that joins
//! the layers. Events carry ids (and packets by value), never references.
//!
//! A node's network layer is here: local delivery, TTL, and handing packets that
//! are not for this node to its [`Routing`] protocol, whose actions it carries out.

use crate::app::cbr::Cbr;
use crate::ids::{FlowId, LinkId, NodeId};
use crate::link::p2p::{LinkStep, P2pLink};
use crate::metrics::{DropReason, FlowCounters, FlowSummary, LinkSummary, NodeCounters, NodeSummary, RunResult};
use crate::packet::{Packet, TransportHeader};
use crate::routing::{Routing, RoutingAction, RoutingCtx, StaticRouting};
use crate::scenario::{FlowKind, Placement, Scenario, DEFAULT_QUEUE_LIMIT_PKTS};
use crate::sim::{stream, Component, Scheduler, SimDuration, SimTime, TimerToken};
use crate::transport::udp;
use rand::Rng;

mod tcp;

/// Every kind of event in a run. Variants carry ids into the arenas.
#[derive(Debug)]
enum Event {
    /// Flow's application sends its next packet.
    AppSend(FlowId),
    /// Link direction's transmitter finished serialising a packet.
    LinkTxDone(LinkId, u8),
    /// A packet reaches the far end of a link direction.
    LinkArrive(LinkId, u8, Packet),
    /// An FTP flow's TCP sender opens its connection.
    TcpOpen(FlowId),
    /// An FTP flow's application stops handing data down (stop_s).
    TcpAppStop(FlowId),
    /// A TCP timer of a flow (side 0 = sender, 1 = receiver), with its arming token.
    TcpTimer(FlowId, u8, TimerToken),
}

struct Node {
    id: NodeId,
    position_m: [f64; 2],
    routing: Box<dyn Routing>,
    /// (neighbour, link to it), sorted by neighbour.
    ports: Vec<(NodeId, LinkId)>,
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
    links: Vec<P2pLink>,
    flows: Vec<Flow>,
    next_uid: u64,
    /// Reused outbox for routing handlers (no allocation per packet).
    actions: Vec<RoutingAction>,
}

fn positions(s: &Scenario) -> Vec<[f64; 2]> {
    let n = s.nodes.count as usize;
    match &s.nodes.placement {
        None => vec![[0.0, 0.0]; n],
        Some(Placement::Explicit { positions_m }) => positions_m.clone(),
        Some(Placement::Chain { spacing_m }) => (0..n).map(|i| [i as f64 * spacing_m, 0.0]).collect(),
        Some(Placement::Grid { columns, spacing_m }) => {
            let c = *columns as usize;
            (0..n).map(|i| [(i % c) as f64 * spacing_m, (i / c) as f64 * spacing_m]).collect()
        }
        Some(Placement::Uniform {}) => {
            let a = s.area.expect("validated: uniform placement has an area");
            let mut rng = stream(s.seed, 0, Component::Placement);
            (0..n).map(|_| [rng.gen::<f64>() * a.width_m, rng.gen::<f64>() * a.height_m]).collect()
        }
    }
}

impl Simulator {
    /// Build a run from a validated scenario.
    pub fn new(s: &Scenario) -> Self {
        let n = s.nodes.count as usize;
        let default_limit = s.queue.as_ref().and_then(|q| q.limit_pkts).unwrap_or(DEFAULT_QUEUE_LIMIT_PKTS);
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
        let mut adjacency = vec![Vec::new(); n];
        let mut ports = vec![Vec::new(); n];
        for l in &links {
            let (a, b) = (l.dirs[0].from, l.dirs[0].to);
            adjacency[a.index()].push(b);
            adjacency[b.index()].push(a);
            ports[a.index()].push((b, l.id));
            ports[b.index()].push((a, l.id));
        }
        let pos = positions(s);
        let nodes = (0..n)
            .map(|i| {
                let id = NodeId(i as u32);
                let mut p = std::mem::take(&mut ports[i]);
                p.sort();
                Node {
                    id,
                    position_m: pos[i],
                    routing: Box::new(StaticRouting::shortest_paths(id, &adjacency)),
                    ports: p,
                    counters: NodeCounters::default(),
                }
            })
            .collect();
        let end = SimTime::from_secs_f64(s.duration_s);
        let mut sched = Scheduler::new();
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
                let stop = SimTime::from_secs_f64(f.stop_s.unwrap_or(s.duration_s).min(s.duration_s));
                let (mut cbr, mut tcp) = (None, None);
                match f.kind {
                    FlowKind::Cbr => {
                        let rng = stream(s.seed, i as u64, Component::Application);
                        let c = Cbr::new(f.cbr_packet_bytes(), f.cbr_interval_s(), f.jitter_s, stop, f.max_packets, rng);
                        if c.may_send(start) {
                            sched.schedule_at(start, Event::AppSend(id));
                        }
                        cbr = Some(c);
                    }
                    FlowKind::Ftp => {
                        tcp = Some(Box::new(tcp::TcpFlow::new(id, f)));
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
                    tcp,
                    counters: FlowCounters::default(),
                }
            })
            .collect();
        Simulator {
            scenario_name: s.name.clone(),
            seed: s.seed,
            end,
            sched,
            nodes,
            links,
            flows,
            next_uid: 0,
            actions: Vec::with_capacity(8),
        }
    }

    /// Run to the end of the scenario and return the results.
    pub fn run(mut self) -> RunResult {
        while let Some((now, ev)) = self.sched.pop_until(self.end) {
            match ev {
                Event::AppSend(f) => self.app_send(now, f),
                Event::LinkTxDone(l, d) => {
                    let step = self.links[l.index()].tx_done(now, d as usize);
                    self.link_step(l, d, step, None);
                }
                Event::LinkArrive(l, d, pkt) => {
                    let link = &mut self.links[l.index()];
                    let to = link.dirs[d as usize].to;
                    if link.survives(d as usize) && !link.scripted_drop(d as usize, &pkt) {
                        self.receive(now, to, pkt);
                    } else {
                        self.drop_packet(to, &pkt, DropReason::LinkError);
                    }
                }
                Event::TcpOpen(f) => self.tcp_open(now, f),
                Event::TcpAppStop(f) => self.tcp_app_stop(now, f),
                Event::TcpTimer(f, side, token) => self.tcp_timer(now, f, side, token),
            }
        }
        self.sched.advance_to(self.end);
        self.results()
    }

    fn app_send(&mut self, now: SimTime, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let cbr = flow.cbr.as_mut().expect("AppSend is scheduled for CBR flows only");
        let (seq, next) = cbr.on_send(now);
        let pkt = udp::datagram(self.next_uid, f, flow.src, flow.dst, cbr.packet_bytes, seq, now);
        self.next_uid += 1;
        flow.counters.on_send(pkt.payload_bytes);
        let src = flow.src;
        if let Some(t) = next {
            self.sched.schedule_at(t, Event::AppSend(f));
        }
        self.nodes[src.index()].counters.originated_packets += 1;
        self.route(now, src, pkt);
    }

    /// A packet arrived at `node` from a link.
    fn receive(&mut self, now: SimTime, node: NodeId, mut pkt: Packet) {
        if pkt.ip.dst == node {
            self.deliver(now, node, pkt);
            return;
        }
        // Forwarding: decrement TTL first (RFC 791); a packet that reaches 0 is dropped.
        pkt.ip.ttl = pkt.ip.ttl.saturating_sub(1);
        if pkt.ip.ttl == 0 {
            self.drop_packet(node, &pkt, DropReason::TtlExpired);
            return;
        }
        self.nodes[node.index()].counters.forwarded_packets += 1;
        self.route(now, node, pkt);
    }

    fn deliver(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        self.nodes[node.index()].counters.delivered_packets += 1;
        if let TransportHeader::Tcp(h) = pkt.transport {
            self.tcp_deliver(now, node, &pkt, &h);
            return;
        }
        if let Some(tag) = pkt.tag {
            let delay = now.since(tag.created).as_secs_f64();
            self.flows[tag.flow.index()].counters.on_receive(now.as_secs_f64(), pkt.payload_bytes, delay);
        }
    }

    /// Ask `node`'s routing protocol what to do with `pkt`, then do it.
    fn route(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        let mut actions = std::mem::take(&mut self.actions);
        {
            let mut ctx = RoutingCtx { now, node, actions: &mut actions };
            self.nodes[node.index()].routing.route(&mut ctx, pkt);
        }
        for a in actions.drain(..) {
            match a {
                RoutingAction::Forward { pkt, next_hop } => self.send_to_neighbour(now, node, next_hop, pkt),
                RoutingAction::Drop { pkt, reason } => self.drop_packet(node, &pkt, reason),
            }
        }
        self.actions = actions;
    }

    fn send_to_neighbour(&mut self, now: SimTime, node: NodeId, next_hop: NodeId, pkt: Packet) {
        let ports = &self.nodes[node.index()].ports;
        let Ok(i) = ports.binary_search_by_key(&next_hop, |p| p.0) else {
            // A routing protocol named a node we have no link to: no route.
            self.drop_packet(node, &pkt, DropReason::NoRoute);
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
            LinkStep::Started { tx_done, arrive, pkt } => {
                self.sched.schedule_at(tx_done, Event::LinkTxDone(l, d));
                self.sched.schedule_at(arrive, Event::LinkArrive(l, d, pkt));
            }
            LinkStep::Dropped(pkt) => {
                let node = from.unwrap_or(self.links[l.index()].dirs[d as usize].from);
                self.drop_packet(node, &pkt, DropReason::QueueOverflow);
            }
            LinkStep::Queued | LinkStep::Idle => {}
        }
    }

    fn drop_packet(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        self.nodes[node.index()].counters.on_drop(reason);
        if let Some(tag) = pkt.tag {
            self.flows[tag.flow.index()].counters.on_drop(reason);
        }
    }

    fn results(&self) -> RunResult {
        let run_s = self.end.as_secs_f64();
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
                    let mut summary = FlowSummary::new(i as u32, f.name.clone(), kind, &f.transport, f.src.0, f.dst.0, f.start.as_secs_f64(), f.stop.as_secs_f64(), &f.counters);
                    summary.tcp = f.tcp.as_ref().map(|t| t.summary(&summary));
                    summary
                })
                .collect(),
            nodes: self.nodes.iter().map(|n| NodeSummary::new(n.id.0, n.position_m, &n.counters)).collect(),
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
                        utilization: if run_s > 0.0 { dir.stats.busy_time.as_secs_f64().min(run_s) / run_s } else { 0.0 },
                        max_queue_pkts: dir.stats.max_queue_pkts,
                        queue_drops: dir.stats.queue_drops,
                        error_drops: dir.stats.error_drops,
                    })
                })
                .collect(),
        }
    }
}
