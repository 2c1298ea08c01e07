//! The simulator's trace hooks: ns-2 trace records at the AGT, RTR, IFQ and MAC
//! levels, per-node pcap (IP datagrams, or 802.11 frames where the MAC trace
//! writes its `s`/`r` lines), and the movement file. Every hook starts with one
//! `Option` test, so a run without `[outputs]` pays nothing else.
//!
//! Contract: rendering only. A hook decides which line a packet or frame gets
//! and writes it (the record's parts come from `records`); it changes no
//! state a result depends on, so a traced run's results equal an untraced one's.

use super::Simulator;
use crate::ids::NodeId;
use crate::mac::arp::{ArpOp, ARP_BYTES};
use crate::mac::dcf::{DROP_DUPLICATE, DROP_RETRY};
use crate::mac::frame::{ACK_BYTES, PLCP_BYTES};
use crate::mac::{Frame, FrameKind};
use crate::metrics::{DropReason, OutputFile};
use crate::mobility::{placement, write_ns2_movement};
use crate::trace::ns2::{ArpPart, Body, Event, Level, Record, NO_NEXT_HOP};
pub(super) use crate::trace::ns2::{Event as Ev, Level as Lv};
use crate::trace::pcap::dot11;
use crate::trace::{RxNote, Tracer};
use crate::wire::{Packet, IP_BROADCAST};
use records::{
    agent_size, app_part, drop_level, forwards, frame_size, ip_part, ip_size, ns2_calls_back,
    ns2_src, ptype, ETHERTYPE_ARP, ETHERTYPE_IP, MAC_BROADCAST,
};
use std::io;
use std::path::Path;

mod records;

/// Name of the movement file.
pub const MOVEMENT_FILE: &str = "movement.tcl";

/// Where a packet is in ns-2's stack when a line is written about it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Handed down by the agent, no router has seen it (AGT `s`, the source's `r RTR`).
    Agent,
    /// Routed (RTR `s`/`f`/`r` elsewhere, RTR drops).
    Routed,
    /// In the link layer or interface queue towards `next_hop` (`None`: broadcast).
    Queued,
    /// Dropped by routing as `RET` outside the MAC's own give-up, whose discard
    /// line ([`Simulator::trace_discard`]) stands for the others: an ARP
    /// failure handed to static routing.
    Mac,
}

impl Simulator {
    /// Open the trace files the scenario's `[outputs]` asks for in `dir`, and
    /// write the movement file. Without `[outputs]` this does nothing.
    pub fn open_outputs(&mut self, dir: &Path) -> io::Result<()> {
        let Some(o) = self.outputs.clone() else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)?;
        self.output_dir = Some(dir.to_path_buf());
        let cfg = o.trace_config(self.nodes.len() as u32);
        if !cfg.is_empty() {
            self.tracer = Some(Box::new(Tracer::open(dir, cfg, self.nodes.len())?));
        }
        if o.movement {
            let start: Vec<[f64; 2]>;
            let stationary;
            let trajectories = match self.trajectories() {
                Some(t) => t,
                None => {
                    start = self.nodes.iter().map(|n| n.position_m).collect();
                    stationary = placement::stationary(&start);
                    &stationary
                }
            };
            let mut w = io::BufWriter::new(std::fs::File::create(dir.join(MOVEMENT_FILE))?);
            let header = format!("manetlab {} movement, seed {}", crate::VERSION, self.seed);
            write_ns2_movement(&mut w, trajectories, Some(&header))?;
            io::Write::flush(&mut w)?;
        }
        Ok(())
    }

    /// Close the trace files; returns every output file with its size.
    pub fn finish_outputs(&mut self) -> io::Result<Vec<OutputFile>> {
        let mut files = Vec::new();
        if let Some(t) = self.tracer.take() {
            files.extend(
                t.finish()?
                    .into_iter()
                    .map(|(file, bytes)| OutputFile { file, bytes }),
            );
        }
        if let (Some(dir), true) = (
            &self.output_dir,
            self.outputs.as_ref().is_some_and(|o| o.movement),
        ) {
            files.push(OutputFile {
                file: MOVEMENT_FILE.into(),
                bytes: std::fs::metadata(dir.join(MOVEMENT_FILE))?.len(),
            });
        }
        files.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(files)
    }

    /// Trace a network packet event at `node` (levels AGT and RTR; RTR drops).
    /// `next_hop` is the router's choice on `s`/`f` RTR lines. The source's `r RTR`
    /// line (the packet entering its router) prints the agent's size.
    /// Untraced runs pay one test at the call (the rest is out of line).
    #[inline]
    pub(super) fn trace_pkt(
        &mut self,
        ev: Event,
        level: Level,
        node: NodeId,
        pkt: &Packet,
        reason: Option<&'static str>,
        next_hop: Option<NodeId>,
    ) {
        if self.tracer.is_some() {
            self.trace_pkt_on(ev, level, node, pkt, reason, next_hop);
        }
    }

    #[inline(never)]
    fn trace_pkt_on(
        &mut self,
        ev: Event,
        level: Level,
        node: NodeId,
        pkt: &Packet,
        reason: Option<&'static str>,
        next_hop: Option<NodeId>,
    ) {
        let Some(t) = self.tracer.as_ref() else {
            return;
        };
        let wanted = if ev == Event::Drop {
            t.wants_drop(level)
        } else {
            t.wants(level)
        };
        if !wanted {
            return;
        }
        let rx = t.rx_note(node, pkt.uid);
        let stage = match level {
            Level::Agt if ev == Event::Send => Stage::Agent,
            Level::Rtr if ev == Event::Recv && rx.is_none() && pkt.ip.src == node => Stage::Agent,
            _ => Stage::Routed,
        };
        self.trace_at(ev, level, stage, node, pkt, reason, next_hop, rx);
    }

    #[allow(clippy::too_many_arguments)]
    fn trace_at(
        &mut self,
        ev: Event,
        level: Level,
        stage: Stage,
        node: NodeId,
        pkt: &Packet,
        reason: Option<&'static str>,
        next_hop: Option<NodeId>,
        rx: Option<RxNote>,
    ) {
        let now = self.now();
        let mut ev = ev;
        let src = ns2_src(pkt, rx);
        if ev == Event::Send && src != pkt.ip.src && src != node {
            ev = Event::Forward;
        }
        let broadcast = pkt.ip.dst == IP_BROADCAST;
        // ns-2's `next_hop_`: -2 until a router sets one (it never does for a
        // broadcast); a received packet still carries its sender's choice (us).
        let nh = match next_hop {
            Some(n) => i64::from(n.0),
            None if stage == Stage::Routed && rx.is_some() && !broadcast => i64::from(node.0),
            None => NO_NEXT_HOP,
        };
        // The MAC header: ns-2 keeps the received one in the packet until its LL
        // writes the next (receiver, transmitter) at the queue; the duration stays
        // until the MAC sets its own.
        let rx_mac = rx.map(|r| r.mac);
        let mac = match stage {
            Stage::Agent => [0; 4],
            Stage::Routed => rx_mac.unwrap_or([0; 4]),
            Stage::Queued => {
                let ra = next_hop.map_or(MAC_BROADCAST, |n| n.0);
                [rx_mac.map_or(0, |m| m[0]), ra, node.0, ETHERTYPE_IP]
            }
            Stage::Mac => {
                // A unicast (its receiver, when known).
                let ra = next_hop.map_or(if broadcast { MAC_BROADCAST } else { 0 }, |n| n.0);
                let dur = if next_hop.is_some() {
                    self.data_duration_us()
                } else {
                    0
                };
                [dur, ra, node.0, ETHERTYPE_IP]
            }
        };
        // ns-2's DSR takes the headers it added off before handing a packet to its
        // agent (AODV and DSDV leave them: a CBR packet arrives at AGT with 532 B).
        let dsr_to_agent = level == Level::Agt && pkt.source_route.is_some();
        let size = if stage == Stage::Agent || dsr_to_agent {
            agent_size(pkt)
        } else {
            ip_size(pkt)
        };
        let received =
            rx.is_some() && ev != Event::Forward && !(ev == Event::Send && pkt.ip.src == node);
        let rec = Record {
            event: ev,
            t: now,
            node,
            position_m: self.position_at(node.0, now),
            level,
            reason,
            uid: pkt.uid,
            ptype: ptype(pkt),
            size,
            mac,
            next_hop: nh,
            body: Body::Ip {
                ip: ip_part(pkt, src),
                app: app_part(pkt),
            },
            forwards: forwards(pkt, received && ev != Event::Drop),
        };
        self.tracer.as_mut().expect("checked").record(&rec);
    }

    /// The duration field of a unicast data frame: SIFS + the ACK (ns-2's 0x13a µs at 1 Mb/s).
    fn data_duration_us(&self) -> u32 {
        (self.mac_params.sifs + self.mac_params.ctrl_airtime(ACK_BYTES))
            .as_nanos()
            .div_ceil(1000) as u32
    }

    /// Trace a drop with its ns-2 reason code at the level of the dropping layer.
    /// RTR and IFQ drops are always traced (as ns-2 does), MAC drops with the MAC trace.
    pub(super) fn trace_drop(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        self.trace_drop_towards(node, pkt, reason, None);
    }

    /// A drop of a packet the link layer or a queue held for `next_hop`.
    pub(super) fn trace_drop_towards(
        &mut self,
        node: NodeId,
        pkt: &Packet,
        reason: DropReason,
        next_hop: Option<NodeId>,
    ) {
        let Some(t) = self.tracer.as_ref() else {
            return;
        };
        let level = drop_level(reason);
        if !t.wants_drop(level) {
            return;
        }
        // The MAC's discard of this packet is its `RET` line (`mac_tx_failed`).
        if reason == DropReason::RetryLimit && t.handing_back == Some((node, pkt.uid)) {
            return;
        }
        let rx = t.rx_note(node, pkt.uid);
        // A router drops a packet with the size it gave it (ns-2's routing agents add
        // the IP header before they look for a route).
        let stage = match level {
            Level::Ifq => Stage::Queued,
            Level::Mac => Stage::Mac,
            _ => Stage::Routed,
        };
        self.trace_at(
            Event::Drop,
            level,
            stage,
            node,
            pkt,
            Some(reason.code()),
            next_hop,
            rx,
        );
    }

    /// Trace the drop of an ARP message the interface queue held for `to` (`None`:
    /// a broadcast request), as ns-2's IFQ drop trace writes it.
    pub(super) fn trace_arp_drop(
        &mut self,
        node: NodeId,
        m: &crate::mac::ArpMsg,
        to: Option<NodeId>,
        reason: DropReason,
    ) {
        let Some(t) = self.tracer.as_ref() else {
            return;
        };
        let level = drop_level(reason);
        if !t.wants_drop(level) {
            return;
        }
        let now = self.now();
        let request = m.op == ArpOp::Request;
        let body = Body::Arp(ArpPart {
            request,
            sha: m.sender.0,
            spa: m.sender.0,
            tha: if request { 0 } else { m.target.0 },
            tpa: m.target.0,
        });
        let mac = [0, to.map_or(MAC_BROADCAST, |n| n.0), node.0, ETHERTYPE_ARP];
        let rec = Record {
            event: Event::Drop,
            t: now,
            node,
            position_m: self.position_at(node.0, now),
            level,
            reason: Some(reason.code()),
            uid: 0,
            ptype: "ARP",
            size: ARP_BYTES,
            mac,
            next_hop: NO_NEXT_HOP,
            body,
            forwards: 0,
        };
        self.tracer.as_mut().expect("checked").record(&rec);
    }

    /// Trace an 802.11 frame sent (`Send`), received (`Recv`), or lost to a collision
    /// (`Drop`, `COL`) at `node`. A received IP packet is also noted for the lines
    /// ns-2 writes about it further up (its MAC header stays in ns-2's packet).
    /// Untraced runs pay one test at the call (the rest is out of line).
    #[inline]
    pub(super) fn trace_frame(&mut self, ev: Event, node: NodeId, f: &Frame) {
        if self.tracer.is_some() {
            self.trace_frame_on(ev, node, f);
        }
    }

    #[inline(never)]
    fn trace_frame_on(&mut self, ev: Event, node: NodeId, f: &Frame) {
        let Some(t) = self.tracer.as_mut() else {
            return;
        };
        if let (Event::Recv, Some(p)) = (ev, &f.pkt) {
            let ra = f.dst.map_or(MAC_BROADCAST, |d| d.0);
            let dur = f.nav.as_nanos().div_ceil(1000) as u32;
            // The transmitter's own note of the packet, if it had received it.
            let ip_src = ns2_src(p, t.rx_note(f.src, p.uid));
            t.note_rx(
                node,
                RxNote {
                    uid: p.uid,
                    mac: [dur, ra, f.src.0, ETHERTYPE_IP],
                    ip_src,
                },
            );
        }
        // The MAC capture holds what the MAC trace's `s`/`r` lines show: frames
        // sent and frames decoded (for this node or broadcast), not collisions.
        if ev != Event::Drop && t.wants_mac_pcap(node) {
            let p = &self.mac_params;
            let rate = dot11::rate_bps(f, p.basic_rate_bps, p.data_rate_bps);
            t.pcap_frame(node, self.sched.now(), f, rate);
        }
        let wanted = if ev == Event::Drop {
            t.wants_drop(Level::Mac)
        } else {
            t.wants(Level::Mac)
        };
        if wanted {
            let reason = (ev == Event::Drop).then_some("COL");
            self.frame_line(ev, reason, node, f);
        }
    }

    /// A frame the DCF discarded (`code`): after its retry limit, ns-2 traces
    /// every such frame `D … MAC RET` (mac-802_11.cc `RetransmitRTS`/
    /// `RetransmitDATA`), the RTS when the RTS failed and then the data frame,
    /// whether or not routing takes the packet back; our packet accounting
    /// counts only packet ends (docs/metrics.md). A data frame received twice
    /// is `D … MAC DUP` (`recvDATA`). Not traced for a node that is off (its
    /// packet ends `OFF`).
    pub(super) fn trace_discard(&mut self, node: NodeId, f: &Frame, code: &'static str) {
        if self
            .tracer
            .as_ref()
            .is_some_and(|t| t.wants_drop(Level::Mac))
            && !self.is_off(node)
        {
            self.frame_line(Event::Drop, Some(code), node, f);
        }
    }

    /// Write the `MAC` line of frame `f` at `node` (the tracer is there and wants it).
    fn frame_line(&mut self, ev: Event, reason: Option<&'static str>, node: NodeId, f: &Frame) {
        let now = self.now();
        let ra = f.dst.map_or(MAC_BROADCAST, |d| d.0);
        let dur = f.nav.as_nanos().div_ceil(1000) as u32;
        let discarded = reason == Some(DROP_RETRY);
        // ns-2 traces `r MAC`, and `recvDATA`'s duplicate drop, after taking
        // the MAC header off: the MSDU's size.
        let stripped = ev == Event::Recv || reason == Some(DROP_DUPLICATE);
        let size_of = |msdu: u32| if stripped { msdu } else { frame_size(msdu) };
        let next_hop = f.dst.map_or(NO_NEXT_HOP, |d| i64::from(d.0));
        let t = self.tracer.as_ref().expect("checked");
        // The transmitter's own note of the packet, if it had received it.
        let src_of = |t: &Tracer, p: &Packet| ns2_src(p, t.rx_note(f.src, p.uid));
        let (ptype, size, mac, body, uid, fwd, nh) = match (&f.kind, &f.pkt, &f.arp) {
            // ns-2's MAC takes its header off a packet it hands to the routing
            // callback (`ch->size() -= getHdrLen11()`) before it discards it.
            (FrameKind::Data, Some(p), _) if discarded => {
                let body = Body::Ip {
                    ip: ip_part(p, src_of(t, p)),
                    app: app_part(p),
                };
                let size = if ns2_calls_back(p) {
                    ip_size(p)
                } else {
                    frame_size(ip_size(p))
                };
                (
                    ptype(p),
                    size,
                    [dur, ra, f.src.0, ETHERTYPE_IP],
                    body,
                    p.uid,
                    forwards(p, false),
                    next_hop,
                )
            }
            (FrameKind::Data, Some(p), _) => {
                let body = Body::Ip {
                    ip: ip_part(p, src_of(t, p)),
                    app: app_part(p),
                };
                (
                    ptype(p),
                    size_of(ip_size(p)),
                    [dur, ra, f.src.0, ETHERTYPE_IP],
                    body,
                    p.uid,
                    forwards(p, ev != Event::Send),
                    next_hop,
                )
            }
            (FrameKind::Data, None, Some(m)) => {
                let request = m.op == ArpOp::Request;
                // A request does not know the target's hardware address (0).
                let tha = if request { 0 } else { m.target.0 };
                let body = Body::Arp(ArpPart {
                    request,
                    sha: m.sender.0,
                    spa: m.sender.0,
                    tha,
                    tpa: m.target.0,
                });
                (
                    "ARP",
                    size_of(ARP_BYTES),
                    [dur, ra, f.src.0, ETHERTYPE_ARP],
                    body,
                    0,
                    0,
                    NO_NEXT_HOP,
                )
            }
            // ns-2's CTS and ACK carry no transmitter address (printed 0).
            (k, _, _) => {
                let ta = if *k == FrameKind::Rts { f.src.0 } else { 0 };
                (
                    k.name(),
                    f.mac_bytes() + PLCP_BYTES,
                    [dur, ra, ta, 0],
                    Body::None,
                    0,
                    0,
                    NO_NEXT_HOP,
                )
            }
        };
        let rec = Record {
            event: ev,
            t: now,
            node,
            position_m: self.position_at(node.0, now),
            level: Level::Mac,
            reason,
            uid,
            ptype,
            size,
            mac,
            next_hop: nh,
            body,
            forwards: fwd,
        };
        self.tracer.as_mut().expect("checked").record(&rec);
    }

    /// Record `pkt` in `node`'s pcap. Called where a datagram leaves an
    /// interface (first transmission of its 802.11 data frame, start of a
    /// point-to-point transmission) or reaches one (MAC delivery, link arrival),
    /// never where it is queued: a queued packet may never be sent.
    #[inline]
    pub(super) fn pcap(&mut self, node: NodeId, pkt: &Packet) {
        if self.tracer.is_some() {
            self.pcap_on(node, pkt);
        }
    }

    #[inline(never)]
    fn pcap_on(&mut self, node: NodeId, pkt: &Packet) {
        if let Some(t) = self.tracer.as_mut() {
            if t.wants_pcap(node) {
                let now = self.sched.now();
                t.pcap(node, now, pkt);
            }
        }
    }
}
