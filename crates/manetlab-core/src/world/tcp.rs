//! The simulator's side of TCP: one connection per FTP flow (sender at `src`,
//! receiver at `dst`). Segments become IP packets handed to routing exactly as
//! UDP datagrams are; arriving TCP packets are passed to the right end; each
//! end's `poll_at()` is kept armed as a `TcpTimer` event, cancelled in O(1) by
//! the `Timer` generation token when the deadline moves.

use super::{Event, Simulator};
use crate::app::ftp::Ftp;
use crate::ids::{FlowId, NodeId};
use crate::metrics::{FlowSummary, TcpFlowSummary};
use crate::scenario::FlowSpec;
use crate::sim::{stream, Component, SimTime, Timer, TimerToken};
use crate::transport::tcp::{self, Delivery, Segment, TcpReceiver, TcpSender};
use crate::transport::TransportNotice;
use crate::wire::{AppTag, IpHeader, IpProto, Packet, TcpHeader, TransportHeader, DEFAULT_TTL};
use rand::Rng;

pub(super) struct TcpFlow {
    sender: TcpSender,
    receiver: TcpReceiver,
    app: Ftp,
    /// [sender, receiver] timers.
    timers: [Timer; 2],
    segs: Vec<Segment>,
    deliveries: Vec<Delivery>,
}

impl TcpFlow {
    /// `seed`: the run seed; the sender's RTT-clock phase (ns-2 `boot_time_`, uniform in
    /// one `tcpTick_`) is drawn from the flow's transport stream.
    pub(super) fn new(id: FlowId, f: &FlowSpec, seed: u64) -> Self {
        let cfg = f.tcp_config();
        let cc = tcp::by_name(f.transport_name(), &cfg).expect("validated TCP variant");
        let port = f.port(id.index());
        let mut sender = TcpSender::new(&cfg, cc, port, port);
        let mut rng = stream(seed, u64::from(id.0), Component::Transport);
        sender.set_clock_phase_s(rng.gen::<f64>() * cfg.clock_tick_s);
        let mut receiver = TcpReceiver::new(&cfg, port, port);
        receiver.set_sack(sender.sack_offered());
        TcpFlow {
            sender,
            receiver,
            app: Ftp::new(f.file_bytes),
            timers: [Timer::new(), Timer::new()],
            segs: Vec::new(),
            deliveries: Vec::new(),
        }
    }

    pub(super) fn summary(&self, flow: &FlowSummary) -> TcpFlowSummary {
        let s = &self.sender;
        let r = &self.receiver;
        let ssthresh = s.ssthresh();
        TcpFlowSummary {
            variant: s.variant().to_string(),
            mss_bytes: s.mss(),
            sack: s.sack_negotiated(),
            established_s: s.stats.established_at.map(SimTime::as_secs_f64),
            completion_s: s.stats.completed_at.map(SimTime::as_secs_f64),
            data_segments_sent: s.stats.data_segments_sent,
            data_bytes_sent: s.stats.data_bytes_sent,
            retransmissions: s.stats.retransmissions,
            timeouts: s.stats.timeouts,
            fast_retransmits: s.stats.fast_retransmits,
            highest_ack_segs: s.highest_ack_segs(),
            highest_ack_bytes: s.highest_ack_bytes(),
            goodput_kbps: flow.throughput_kbps,
            acks_sent: r.stats.acks_sent,
            duplicate_segments_received: r.stats.duplicate_segments,
            out_of_order_segments_received: r.stats.out_of_order_segments,
            final_cwnd_segs: s.cwnd(),
            final_ssthresh_segs: (ssthresh < f64::from(u32::MAX)).then_some(ssthresh),
            final_srtt_s: s.srtt_s(),
            final_rto_s: s.rto_s(),
            drops_detected: s.stats.drops_detected,
            paced_holds: s.stats.paced_holds,
            route_freezes: s.stats.route_freezes,
            route_probes: s.stats.probes,
            trace: s.trace.clone(),
        }
    }
}

impl Simulator {
    fn tcp_flow(&mut self, f: FlowId) -> &mut TcpFlow {
        self.flows[f.index()]
            .tcp
            .as_mut()
            .expect("TCP event for a TCP flow")
    }

    pub(super) fn tcp_open(&mut self, now: SimTime, f: FlowId) {
        let t = self.tcp_flow(f);
        let file = t.app.file_bytes;
        t.sender.open(now, file);
        self.tcp_flush(now, f);
    }

    pub(super) fn tcp_app_stop(&mut self, now: SimTime, f: FlowId) {
        self.tcp_flow(f).sender.close_app(now);
        self.tcp_flush(now, f);
    }

    pub(super) fn tcp_timer(&mut self, now: SimTime, f: FlowId, side: u8, token: TimerToken) {
        let t = self.tcp_flow(f);
        if !t.timers[side as usize].fire(token) {
            self.event_counts[super::event::EventKind::TcpTimerStale] += 1;
            return; // re-armed or cancelled since: stale
        }
        match side {
            0 => t.sender.on_timer(now),
            _ => t.receiver.on_timer(now),
        }
        self.tcp_flush(now, f);
    }

    /// A TCP packet reached its destination node.
    pub(super) fn tcp_deliver(&mut self, now: SimTime, node: NodeId, pkt: &Packet, h: &TcpHeader) {
        let tag = pkt.tag.expect("TCP packets carry their flow tag");
        let f = tag.flow;
        let flow = &mut self.flows[f.index()];
        let t = flow.tcp.as_mut().expect("TCP packet of a TCP flow");
        if node == flow.dst {
            let mut deliveries = std::mem::take(&mut t.deliveries);
            t.receiver
                .on_segment(now, h, pkt.payload_bytes, tag.created, &mut deliveries);
            for d in deliveries.drain(..) {
                flow.counters
                    .on_receive(now.as_secs_f64(), d.bytes, now.since(d.sent_at));
            }
            t.deliveries = deliveries;
        } else {
            // Hops the segment travelled: every forwarding node decremented the TTL
            // once (TCP-AP's hop count, like ns-2's `num_forwards() + 1`).
            t.sender.note_path_hops(u32::from(pkt.ip.forwards()) + 1);
            t.sender.on_segment(now, h, pkt.payload_bytes);
        }
        self.tcp_flush(now, f);
    }

    /// A route notice at `node` (ELFN): every TCP sender there whose flow goes to
    /// the notice's destination hears it.
    pub(super) fn tcp_notice(&mut self, now: SimTime, node: NodeId, notice: TransportNotice) {
        let (dst, up) = match notice {
            TransportNotice::RouteFailed { dst } => (dst, false),
            TransportNotice::RouteReestablished { dst } => (dst, true),
        };
        // In flow order, as the flows are numbered.
        let mut k = self
            .tcp_ends
            .partition_point(|&(s, d, _)| (s, d) < (node, dst));
        while let Some(&(s, d, i)) = self.tcp_ends.get(k) {
            if (s, d) != (node, dst) {
                break;
            }
            k += 1;
            if let Some(t) = self.flows[i as usize].tcp.as_mut() {
                t.sender.on_route_notice(now, up);
                self.tcp_flush(now, FlowId(i));
            }
        }
    }

    /// Test hook: deliver a route notice to `node`'s transport layer now, as a
    /// routing protocol's `RoutingAction::Notify` would.
    #[doc(hidden)]
    pub fn notify_route(&mut self, node: u32, notice: TransportNotice) {
        let now = self.now();
        self.tcp_notice(now, NodeId(node), notice);
    }

    /// Test hook: the TCP sender of flow `flow`, if it is an FTP flow.
    #[doc(hidden)]
    pub fn tcp_sender(&self, flow: u32) -> Option<&TcpSender> {
        self.flows
            .get(flow as usize)?
            .tcp
            .as_ref()
            .map(|t| &t.sender)
    }

    /// Send what both ends queued and keep their timers armed at `poll_at()`.
    fn tcp_flush(&mut self, now: SimTime, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let (src, dst) = (flow.src, flow.dst);
        let t = flow.tcp.as_mut().expect("TCP flow");
        let mut segs = std::mem::take(&mut t.segs);
        t.sender.take_output(&mut segs);
        let from_sender = segs.len();
        t.receiver.take_output(&mut segs);
        for (side, deadline) in [(0u8, t.sender.poll_at()), (1, t.receiver.poll_at())] {
            let timer = &mut t.timers[side as usize];
            if deadline != timer.expires() {
                match deadline {
                    Some(at) => {
                        let token = timer.arm(at);
                        self.sched.schedule_at(at, Event::TcpTimer(f, side, token));
                    }
                    None => timer.cancel(),
                }
            }
        }
        for (i, seg) in segs.drain(..).enumerate() {
            let (from, to) = if i < from_sender {
                (src, dst)
            } else {
                (dst, src)
            };
            // Data segments count as sent each time they are transmitted
            // (retransmissions included: each copy is a packet with its own
            // fate); SYN, FIN and pure ACKs are the flow's control packets.
            let data = i < from_sender && seg.data_seg.is_some();
            let c = &mut self.flows[f.index()].counters;
            if data {
                c.on_send(seg.payload_bytes);
            } else {
                c.ctrl_tx_packets += 1;
            }
            self.ledger.created(self.next_uid, f.0, data);
            let pkt = Packet::new(
                self.next_uid,
                IpHeader::new(from, to, DEFAULT_TTL, IpProto::Tcp),
                TransportHeader::Tcp(seg.hdr),
                seg.payload_bytes,
            )
            .with_tag(AppTag {
                flow: f,
                seq: seg.data_seg.unwrap_or(0),
                created: now,
            });
            self.next_uid += 1;
            self.nodes[from.index()].counters.originated_packets += 1;
            self.originate(now, from, pkt);
        }
        if let Some(t) = self.flows[f.index()].tcp.as_mut() {
            t.segs = segs;
        }
    }
}
