//! The simulator's trace hooks: ns-2 trace records at the AGT, RTR, IFQ and MAC
//! levels, per-node pcap, and the movement file. Every hook starts with one
//! `Option` test, so a run without `[outputs]` pays nothing else.

use super::Simulator;
use crate::ids::NodeId;
use crate::mac::{Frame, FrameKind};
use crate::metrics::{DropReason, OutputFile};
use crate::mobility::{placement, write_ns2_movement};
use crate::packet::{Packet, TransportHeader, IP_HEADER_BYTES};
use crate::routing::RoutingMessage;
use crate::trace::ns2::{AppPart, Event, IpPart, Level, Record};
pub(super) use crate::trace::ns2::{Event as Ev, Level as Lv};
use crate::trace::Tracer;
use std::io;
use std::path::Path;

/// Name of the movement file.
pub const MOVEMENT_FILE: &str = "movement.tcl";

/// ns-2's packet type name.
fn ptype(pkt: &Packet) -> &'static str {
    match &pkt.transport {
        TransportHeader::Udp(_) => "cbr",
        // A pure ACK; SYN and FIN segments count as "tcp" like data.
        TransportHeader::Tcp(h) if pkt.payload_bytes == 0 && !h.flags.syn && !h.flags.fin => "ack",
        TransportHeader::Tcp(_) => "tcp",
        TransportHeader::Routing(RoutingMessage::Aodv(_)) => "AODV",
        // ns-2's DSDV agent sends PT_MESSAGE packets.
        TransportHeader::Routing(RoutingMessage::Dsdv(_)) => "message",
        TransportHeader::Routing(RoutingMessage::Dsr(_)) => "DSR",
        TransportHeader::Routing(RoutingMessage::Frn(_)) => "FRN",
    }
}

/// Size as ns-2 traces it at `level`: an agent's packet (UDP payload; a TCP
/// segment's payload + 40 bytes of TCP/IP header), + 20 bytes of IP header from
/// the routing agent on, + the 802.11 header at the MAC.
fn ns2_size(pkt: &Packet, level: Level) -> u32 {
    let agent = match &pkt.transport {
        TransportHeader::Udp(_) => pkt.payload_bytes,
        TransportHeader::Tcp(_) => pkt.payload_bytes + 40,
        TransportHeader::Routing(m) => m.size_bytes(),
    };
    match level {
        Level::Agt => agent,
        Level::Rtr | Level::Ifq => agent + IP_HEADER_BYTES,
        // ns-2 prints MAC sizes with its 24-byte PLCP count included.
        Level::Mac => agent + IP_HEADER_BYTES + crate::mac::frame::DATA_HEADER_BYTES + crate::mac::frame::PLCP_BYTES,
    }
}

fn app_part(pkt: &Packet) -> AppPart {
    match &pkt.transport {
        TransportHeader::Udp(_) => AppPart::Cbr { seq: pkt.tag.map_or(0, |t| t.seq) },
        // Byte sequence numbers (ns-2 prints segment numbers; docs/metrics.md).
        TransportHeader::Tcp(h) => AppPart::Tcp { seq: h.seq as i64, ack: h.ack as i64 },
        TransportHeader::Routing(_) => AppPart::None,
    }
}

fn ip_part(pkt: &Packet, next_hop: Option<NodeId>) -> IpPart {
    let (sport, dport) = match &pkt.transport {
        TransportHeader::Udp(u) => (u.src_port, u.dst_port),
        TransportHeader::Tcp(h) => (h.src_port, h.dst_port),
        TransportHeader::Routing(_) => (255, 255), // ns-2's RT_PORT
    };
    IpPart { src: pkt.ip.src, sport, dst: pkt.ip.dst, dport, ttl: pkt.ip.ttl, next_hop }
}

/// The trace level of a drop reason.
fn drop_level(r: DropReason) -> Level {
    match r.layer() {
        "mac" => Level::Mac,
        "ifq" => Level::Ifq,
        _ => Level::Rtr,
    }
}

impl Simulator {
    /// Open the trace files the scenario's `[outputs]` asks for in `dir`, and
    /// write the movement file. Without `[outputs]` this does nothing.
    pub fn open_outputs(&mut self, dir: &Path) -> io::Result<()> {
        let Some(o) = self.outputs.clone() else { return Ok(()) };
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
            files.extend(t.finish()?.into_iter().map(|(file, bytes)| OutputFile { file, bytes }));
        }
        if let (Some(dir), true) = (&self.output_dir, self.outputs.as_ref().is_some_and(|o| o.movement)) {
            files.push(OutputFile { file: MOVEMENT_FILE.into(), bytes: std::fs::metadata(dir.join(MOVEMENT_FILE))?.len() });
        }
        files.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(files)
    }

    /// Trace a network packet event at `node` (levels AGT, RTR, IFQ).
    pub(super) fn trace_pkt(&mut self, ev: Event, level: Level, node: NodeId, pkt: &Packet, reason: Option<&'static str>, next_hop: Option<NodeId>) {
        let Some(t) = self.tracer.as_ref() else { return };
        if !t.wants(level) {
            return;
        }
        let now = self.now();
        let rec = Record {
            event: ev,
            t: now,
            node,
            position_m: self.position_at(node.0, now),
            level,
            reason,
            uid: pkt.uid,
            ptype: ptype(pkt),
            size: ns2_size(pkt, level),
            mac: [0, 0, 0, 0],
            ip: Some(ip_part(pkt, next_hop)),
            app: app_part(pkt),
            forwards: u32::from(crate::packet::DEFAULT_TTL.saturating_sub(pkt.ip.ttl)),
        };
        self.tracer.as_mut().expect("checked").record(&rec);
    }

    /// Trace a drop with its ns-2 reason code at the level of the dropping layer.
    pub(super) fn trace_drop(&mut self, node: NodeId, pkt: &Packet, reason: DropReason) {
        if self.tracer.is_some() {
            self.trace_pkt(Event::Drop, drop_level(reason), node, pkt, Some(reason.code()), None);
        }
    }

    /// Trace an 802.11 frame sent (`Send`) or received (`Recv`) by `node`.
    pub(super) fn trace_frame(&mut self, ev: Event, node: NodeId, f: &Frame) {
        let Some(t) = self.tracer.as_ref() else { return };
        if !t.wants(Level::Mac) {
            return;
        }
        let now = self.now();
        let dst = f.dst.map_or(u32::MAX, |d| d.0);
        let mac = [f.nav.as_nanos().div_ceil(1000) as u32, dst, f.src.0, if f.kind == FrameKind::Data { 0x800 } else { 0 }];
        let (ptype, size, ip, app, uid) = match (&f.kind, &f.pkt) {
            (FrameKind::Data, Some(p)) => (self::ptype(p), ns2_size(p, Level::Mac), Some(ip_part(p, f.dst)), app_part(p), p.uid),
            (k, _) => (k.name(), f.mac_bytes() + crate::mac::frame::PLCP_BYTES, None, AppPart::None, 0),
        };
        let rec = Record { event: ev, t: now, node, position_m: self.position_at(node.0, now), level: Level::Mac, reason: None, uid, ptype, size, mac, ip, app, forwards: 0 };
        self.tracer.as_mut().expect("checked").record(&rec);
    }

    /// Record `pkt` in `node`'s pcap. Called where a datagram leaves an
    /// interface (first transmission of its 802.11 data frame, start of a
    /// point-to-point transmission) or reaches one (MAC delivery, link arrival),
    /// never where it is queued: a queued packet may never be sent.
    pub(super) fn pcap(&mut self, node: NodeId, pkt: &Packet) {
        if let Some(t) = self.tracer.as_mut() {
            if t.wants_pcap(node) {
                let now = self.sched.now();
                t.pcap(node, now, pkt);
            }
        }
    }
}

impl Simulator {
    /// Queue-length series, event-driven mode: record node `n`'s interface-queue
    /// length if it changed since the last point.
    pub(super) fn note_queue(&mut self, now: crate::sim::SimTime, n: NodeId) {
        if self.series_interval.is_some() {
            return;
        }
        let Some(s) = self.series.as_mut() else { return };
        let len = self.nodes[n.index()].wifi.as_ref().map_or(0, |w| w.ifq.len() as u32);
        let q = &mut s.queues[n.index()];
        if q.len_pkts.last() != Some(&len) {
            q.t_s.push(now.as_secs_f64());
            q.len_pkts.push(len);
        }
    }

    /// Queue-length series, sampled mode: every node's length now, then again
    /// one interval later.
    pub(super) fn sample_queues(&mut self, now: crate::sim::SimTime) {
        let (Some(s), Some(iv)) = (self.series.as_mut(), self.series_interval) else { return };
        for (i, node) in self.nodes.iter().enumerate() {
            let q = &mut s.queues[i];
            q.t_s.push(now.as_secs_f64());
            q.len_pkts.push(node.wifi.as_ref().map_or(0, |w| w.ifq.len() as u32));
        }
        self.sched.schedule_at(now + iv, super::Event::SampleQueues);
    }
}
