//! Counters and the run's results. Drops are outcomes, not errors: each has a
//! layer and a reason with ns-2's trace code, and is counted per node and per flow.

use crate::faults::{Failure, FaultEvent};
pub use crate::routing::RoutingCounters;
pub use crate::wire::{DropReason, N_PACKET_DROPS};
use serde::Serialize;
use std::collections::BTreeMap;

/// Packet-copy drops by reason, one slot per [`DropReason::PACKET_DROPS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts(pub [u64; N_PACKET_DROPS]);

impl DropCounts {
    pub fn add(&mut self, reason: DropReason) {
        let i = reason
            .index()
            .expect("a frame-level event is not a packet drop");
        self.0[i] += 1;
    }
    pub fn get(&self, reason: DropReason) -> u64 {
        reason.index().map_or(0, |i| self.0[i])
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// `layer.CODE` → count, every key present (0 when none).
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        DropReason::PACKET_DROPS
            .iter()
            .map(|r| (r.key(), self.get(*r)))
            .collect()
    }
}

/// Where a packet copy can be when the run ends (docs/metrics.md, "in flight").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Holder {
    /// Between the routing layer and the interface queue (the LL delay).
    Ll,
    /// In the wireless interface queue.
    Ifq,
    /// Held by the 802.11 MAC (contending, on the air, awaiting the ACK).
    Mac,
    /// In a routing protocol's buffer (AODV/DSR send buffer, DSDV queue).
    Rtr,
    /// Held by ARP while the next hop's address is resolved.
    Arp,
    /// In a point-to-point link's queue, being serialised or propagating.
    Link,
}

impl Holder {
    pub const ALL: [Holder; 6] = [
        Holder::Ll,
        Holder::Ifq,
        Holder::Mac,
        Holder::Rtr,
        Holder::Arp,
        Holder::Link,
    ];
    pub fn key(self) -> &'static str {
        match self {
            Holder::Ll => "ll",
            Holder::Ifq => "ifq",
            Holder::Mac => "mac",
            Holder::Rtr => "rtr",
            Holder::Arp => "arp",
            Holder::Link => "link",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// Packets (or copies) in flight by [`Holder`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InFlightCounts(pub [u64; 6]);

impl InFlightCounts {
    pub fn add(&mut self, h: Holder) {
        self.0[h.index()] += 1;
    }
    pub fn get(&self, h: Holder) -> u64 {
        self.0[h.index()]
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// `<holder>` → count, every key present, in [`Holder::ALL`] order.
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        Holder::ALL
            .iter()
            .map(|h| (h.key().to_string(), self.get(*h)))
            .collect()
    }
}

/// What happened to one application packet (one uid) so far.
#[derive(Clone, Copy, Debug)]
struct PacketRecord {
    flow: u32,
    /// A data packet (CBR datagram, TCP data segment) rather than TCP control
    /// (SYN, FIN, pure ACK).
    data: bool,
    delivered: bool,
    /// Why its latest copy was dropped, if one was.
    last_drop: Option<DropReason>,
}

/// How a first delivery differs from a duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    First,
    Duplicate,
}

/// The fates of one flow's packets at the end of a run (docs/metrics.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowFates {
    pub delivered: u64,
    pub dropped: DropCounts,
    pub in_flight: InFlightCounts,
    pub ctrl_delivered: u64,
    pub ctrl_dropped: u64,
    pub ctrl_in_flight: u64,
}

/// Every application packet of a run, by uid: created once, then delivered,
/// dropped (copy by copy) or still somewhere when the run ends. Control packets
/// of the routing protocols are not in it.
///
/// Memory follows the packets alive, not every packet ever sent: the simulator
/// calls [`PacketLedger::settle`] between events once the record count has
/// doubled since the last call (and is at least [`PacketLedger::SETTLE_FLOOR`]);
/// a packet none of whose copies is held anywhere any more can change no
/// further, so its fate is counted per flow and its record dropped. The final
/// [`PacketLedger::fates`] are those counts plus the classification of the
/// records left: the same numbers as without settling.
#[derive(Clone, Debug)]
pub struct PacketLedger {
    recs: BTreeMap<u64, PacketRecord>,
    /// The fates of the packets settled so far, by flow.
    settled: Vec<FlowFates>,
    /// Settle when this many records are kept.
    settle_at: usize,
    floor: usize,
}

impl Default for PacketLedger {
    fn default() -> Self {
        PacketLedger::with_floor(PacketLedger::SETTLE_FLOOR)
    }
}

impl PacketLedger {
    /// Records kept before the first settling (a few hundred KB).
    pub const SETTLE_FLOOR: usize = 1 << 14;

    /// A ledger that settles at `floor` records at the earliest (tests use 1:
    /// settle after every event).
    pub fn with_floor(floor: usize) -> Self {
        let floor = floor.max(1);
        PacketLedger {
            recs: BTreeMap::new(),
            settled: Vec::new(),
            settle_at: floor,
            floor,
        }
    }

    pub fn created(&mut self, uid: u64, flow: u32, data: bool) {
        let old = self.recs.insert(
            uid,
            PacketRecord {
                flow,
                data,
                delivered: false,
                last_drop: None,
            },
        );
        debug_assert!(old.is_none(), "packet uid {uid} created twice");
    }

    /// A copy of `uid` reached its destination node.
    pub fn delivered(&mut self, uid: u64) -> Delivery {
        let r = self
            .recs
            .get_mut(&uid)
            .expect("delivered packet was created and has a copy alive");
        if std::mem::replace(&mut r.delivered, true) {
            Delivery::Duplicate
        } else {
            Delivery::First
        }
    }

    /// Whether `uid` is a data packet (not TCP control).
    pub fn is_data(&self, uid: u64) -> bool {
        self.recs.get(&uid).is_some_and(|r| r.data)
    }

    /// A copy of `uid` was dropped.
    pub fn dropped(&mut self, uid: u64, reason: DropReason) {
        let r = self
            .recs
            .get_mut(&uid)
            .expect("dropped packet was created and has a copy alive");
        r.last_drop = Some(reason);
    }

    /// Records kept now (packets created and not yet settled).
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Whether [`PacketLedger::settle`] is due.
    #[inline(always)]
    pub fn wants_settling(&self) -> bool {
        self.recs.len() >= self.settle_at
    }

    /// Count and forget every packet none of whose copies is alive
    /// (`alive(uid)` false): it can be delivered, dropped or held no more, so
    /// its fate is final. Call only between events, when every copy of a
    /// packet is in a place `alive` knows.
    pub fn settle(&mut self, alive: impl Fn(u64) -> bool) {
        let settled = &mut self.settled;
        self.recs.retain(|&uid, r| {
            if alive(uid) {
                return true;
            }
            let i = r.flow as usize;
            if settled.len() <= i {
                settled.resize(i + 1, FlowFates::default());
            }
            Self::classify(&mut settled[i], r, None);
            false
        });
        self.settle_at = self.floor.max(self.recs.len().saturating_mul(2));
    }

    /// Count `r` into `f`: delivered if a copy was; else in flight if a copy
    /// is held (`held`); else dropped, its reason the last copy's.
    fn classify(f: &mut FlowFates, r: &PacketRecord, held: Option<Holder>) {
        if r.delivered {
            if r.data {
                f.delivered += 1
            } else {
                f.ctrl_delivered += 1
            }
        } else if let Some(h) = held {
            if r.data {
                f.in_flight.add(h)
            } else {
                f.ctrl_in_flight += 1
            }
        } else if let Some(reason) = r.last_drop {
            if r.data {
                f.dropped.add(reason)
            } else {
                f.ctrl_dropped += 1
            }
        }
    }

    /// Classify every packet: delivered if a copy was; else in flight if
    /// `holder(uid)` finds a copy somewhere; else dropped, its reason the last
    /// copy's (the packet died when its last copy did). The other copy drops
    /// are not its fate. A packet that is none of these (a copy lost without
    /// a drop record: a bug) is in no class, so the identity
    /// tx = delivered + dropped + in_flight exposes it.
    pub fn fates(&self, flows: usize, holder: impl Fn(u64) -> Option<Holder>) -> Vec<FlowFates> {
        let mut out = vec![FlowFates::default(); flows];
        for (i, f) in self.settled.iter().enumerate() {
            let o = &mut out[i];
            o.delivered += f.delivered;
            o.ctrl_delivered += f.ctrl_delivered;
            o.ctrl_dropped += f.ctrl_dropped;
            o.ctrl_in_flight += f.ctrl_in_flight;
            for (a, b) in o.dropped.0.iter_mut().zip(f.dropped.0) {
                *a += b;
            }
            for (a, b) in o.in_flight.0.iter_mut().zip(f.in_flight.0) {
                *a += b;
            }
        }
        for (&uid, r) in &self.recs {
            Self::classify(&mut out[r.flow as usize], r, holder(uid));
        }
        out
    }
}

/// Running statistics of one flow's received packets.
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Sum of the received packets' delays in whole nanoseconds (exact: a
    /// float sum drifts, and its mean could leave [min, max]).
    pub delay_sum_ns: u128,
    pub delay_min_s: f64,
    pub delay_max_s: f64,
    /// Delay of the previous received packet, for jitter.
    last_delay_s: Option<f64>,
    pub jitter_abs_sum_s: f64,
    pub jitter_samples: u64,
    /// Data packets whose first copy reached the destination node, and further
    /// copies that did (docs/metrics.md).
    pub delivered_packets: u64,
    pub dup_rx_packets: u64,
    /// Every copy of a data packet dropped, by reason (terminal or not).
    pub copy_drops: DropCounts,
    /// TCP control segments (SYN, FIN, pure ACK) handed to IP, both directions.
    pub ctrl_tx_packets: u64,
    pub first_rx_s: Option<f64>,
    pub last_rx_s: Option<f64>,
}

impl FlowCounters {
    pub fn on_send(&mut self, payload_bytes: u32) {
        self.tx_packets += 1;
        self.tx_bytes += payload_bytes as u64;
    }

    /// A packet delivered to the application at `now_s` with end-to-end delay `delay`.
    pub fn on_receive(&mut self, now_s: f64, payload_bytes: u32, delay: crate::sim::SimDuration) {
        let delay_s = delay.as_secs_f64();
        if self.rx_packets == 0 {
            self.delay_min_s = delay_s;
            self.delay_max_s = delay_s;
            self.first_rx_s = Some(now_s);
        }
        self.rx_packets += 1;
        self.rx_bytes += payload_bytes as u64;
        self.delay_sum_ns += delay.as_nanos() as u128;
        self.delay_min_s = self.delay_min_s.min(delay_s);
        self.delay_max_s = self.delay_max_s.max(delay_s);
        // Jitter as paper 004 defines it: delay(i+1) − delay(i) over received packets.
        if let Some(prev) = self.last_delay_s {
            self.jitter_abs_sum_s += (delay_s - prev).abs();
            self.jitter_samples += 1;
        }
        self.last_delay_s = Some(delay_s);
        self.last_rx_s = Some(now_s);
    }

    /// Mean delay of the received packets (s; 0 with none), from the exact
    /// nanosecond sum, kept within [min, max] against the last bit of rounding.
    pub fn delay_mean_s(&self) -> f64 {
        if self.rx_packets == 0 {
            return 0.0;
        }
        let mean = self.delay_sum_ns as f64 / self.rx_packets as f64 / 1e9;
        mean.clamp(self.delay_min_s, self.delay_max_s)
    }

    /// A copy of one of this flow's data packets was dropped.
    pub fn on_drop(&mut self, reason: DropReason) {
        self.copy_drops.add(reason);
    }
}

/// Per-node counters.
#[derive(Clone, Debug, Default)]
pub struct NodeCounters {
    /// Application packet copies (CBR, TCP data and control) created here,
    /// received from a neighbour, delivered here (duplicates too), handed to
    /// the network layer for forwarding, and handed over to a neighbour.
    pub originated_packets: u64,
    pub received_packets: u64,
    pub delivered_packets: u64,
    pub forwarded_packets: u64,
    pub sent_packets: u64,
    /// Application packet copies dropped here, by reason.
    pub drops: DropCounts,
    /// Routing control packets dropped here, by reason.
    pub ctrl_drops: DropCounts,
    /// Unicast frames the MAC finished (acknowledged or dropped).
    pub mac_frames: u64,
    /// Those dropped at the retry limit.
    pub mac_frames_failed: u64,
    /// Retransmissions (RTS and DATA) over those frames.
    pub mac_retries: u64,
    /// Frames addressed to this node (or broadcast) lost to a collision.
    pub mac_collisions: u64,
    /// Largest interface-queue occupancy seen (packets).
    pub ifq_max_pkts: u32,
}

impl NodeCounters {
    /// A copy of an application packet (`app`) or a routing control packet was dropped here.
    pub fn on_drop(&mut self, reason: DropReason, app: bool) {
        if app {
            self.drops.add(reason)
        } else {
            self.ctrl_drops.add(reason)
        }
    }
}

/// The per-node routing columns of the results (flattened into the node row with
/// a `routing_` prefix, so the nodes table stays one flat row per node).
#[derive(Clone, Debug, Serialize)]
pub struct RoutingSummary {
    pub routing_ctrl_originated_pkts: u64,
    pub routing_ctrl_originated_bytes: u64,
    pub routing_ctrl_forwarded_pkts: u64,
    pub routing_ctrl_forwarded_bytes: u64,
    pub routing_ctrl_received_pkts: u64,
    /// `routing_sent_<TYPE>` and `routing_received_<TYPE>`: control packets
    /// sent and received per message type.
    #[serde(flatten)]
    pub routing_by_type: BTreeMap<String, u64>,
    pub routing_discoveries: u64,
    pub routing_discoveries_failed: u64,
    pub routing_request_retries: u64,
    pub routing_routes_found: u64,
    /// Mean hop count of the routes this node's discoveries found.
    pub routing_route_hops_mean: Option<f64>,
    /// Mean time from a discovery's first request to its route (s).
    pub routing_discovery_time_mean_s: Option<f64>,
    pub routing_route_breaks: u64,
    pub routing_local_repairs: u64,
    pub routing_local_repairs_failed: u64,
    pub routing_duplicate_requests: u64,
    pub routing_salvaged: u64,
    pub routing_replies_from_cache: u64,
    pub routing_gratuitous_replies: u64,
}

impl RoutingSummary {
    pub fn new(c: &RoutingCounters) -> Self {
        let found = c.routes_found;
        RoutingSummary {
            routing_ctrl_originated_pkts: c.ctrl_originated_pkts,
            routing_ctrl_originated_bytes: c.ctrl_originated_bytes,
            routing_ctrl_forwarded_pkts: c.ctrl_forwarded_pkts,
            routing_ctrl_forwarded_bytes: c.ctrl_forwarded_bytes,
            routing_ctrl_received_pkts: c.ctrl_received_pkts,
            routing_by_type: c
                .sent_by_type
                .iter()
                .map(|(k, v)| (format!("routing_sent_{k}"), *v))
                .chain(
                    c.received_by_type
                        .iter()
                        .map(|(k, v)| (format!("routing_received_{k}"), *v)),
                )
                .collect(),
            routing_discoveries: c.discoveries,
            routing_discoveries_failed: c.discoveries_failed,
            routing_request_retries: c.request_retries,
            routing_routes_found: found,
            routing_route_hops_mean: (found > 0).then(|| c.route_hops_sum as f64 / found as f64),
            routing_discovery_time_mean_s: (found > 0)
                .then(|| c.discovery_time_sum_s / found as f64),
            routing_route_breaks: c.route_breaks,
            routing_local_repairs: c.local_repairs,
            routing_local_repairs_failed: c.local_repairs_failed,
            routing_duplicate_requests: c.duplicate_requests,
            routing_salvaged: c.salvaged,
            routing_replies_from_cache: c.replies_from_cache,
            routing_gratuitous_replies: c.gratuitous_replies,
        }
    }

    /// Control packets sent (originated + forwarded).
    pub fn ctrl_sent_pkts(&self) -> u64 {
        self.routing_ctrl_originated_pkts + self.routing_ctrl_forwarded_pkts
    }

    /// Packets of message type `kind` sent (`"RREQ"`, …); 0 if never counted.
    pub fn sent(&self, kind: &str) -> u64 {
        self.routing_by_type
            .get(&format!("routing_sent_{kind}"))
            .copied()
            .unwrap_or(0)
    }

    /// Packets of message type `kind` received.
    pub fn received(&self, kind: &str) -> u64 {
        self.routing_by_type
            .get(&format!("routing_received_{kind}"))
            .copied()
            .unwrap_or(0)
    }
}

/// One row of the per-flow table.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    pub flow: u32,
    pub name: String,
    pub kind: String,
    pub transport: String,
    pub src: u32,
    pub dst: u32,
    pub start_s: f64,
    pub stop_s: f64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// The fate of each of the tx_packets: delivered (first copy at the
    /// destination), dropped, or in flight at the end; exactly one each.
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    pub in_flight_packets: u64,
    /// Copies beyond the first that reached the destination.
    pub dup_rx_packets: u64,
    /// Copies dropped that were not their packet's fate.
    pub copy_drop_packets: u64,
    /// tx_packets − delivered_packets = dropped_packets + in_flight_packets.
    pub lost_packets: u64,
    /// delivered_packets / tx_packets (0 when nothing was sent).
    pub pdr: f64,
    /// Received payload bits over the flow's active time [start_s, stop_s] (kbit/s).
    pub throughput_kbps: f64,
    /// Received payload bits over the whole run (kbit/s).
    pub throughput_run_kbps: f64,
    pub delay_mean_s: Option<f64>,
    pub delay_min_s: Option<f64>,
    pub delay_max_s: Option<f64>,
    /// Mean |delay(i+1) − delay(i)| over consecutive received packets.
    pub jitter_mean_s: Option<f64>,
    /// TCP control segments (SYN, FIN, pure ACK) of the flow and their fates
    /// (0 for CBR): ctrl_tx = ctrl_delivered + ctrl_dropped + ctrl_in_flight.
    pub ctrl_tx_packets: u64,
    pub ctrl_delivered_packets: u64,
    pub ctrl_dropped_packets: u64,
    pub ctrl_in_flight_packets: u64,
    /// In-flight data packets by where they were (`ll`, `ifq`, `mac`, `rtr`, `arp`, `link`).
    pub in_flight: BTreeMap<String, u64>,
    /// Data packets whose fate was a drop, by `layer.CODE` (every key, 0 when none).
    pub drops: BTreeMap<String, u64>,
    /// TCP flows only: the transport's own counters (docs/tcp.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpFlowSummary>,
    /// FRN runs only (`[mac] kind = "frn"`): packets delivered per slot over
    /// the flow's active time, paper 003's throughput measure (docs/metrics.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_per_slot: Option<f64>,
}

/// Per-flow TCP results. Segment counts are in data segments of `mss_bytes`.
#[derive(Clone, Debug, Serialize)]
pub struct TcpFlowSummary {
    pub variant: String,
    pub mss_bytes: u32,
    pub sack: bool,
    /// When the sender saw the SYN-ACK (s).
    pub established_s: Option<f64>,
    /// Finite files: when the last byte was acknowledged (s).
    pub completion_s: Option<f64>,
    /// Data segments transmitted, including retransmissions, and their payload bytes.
    pub data_segments_sent: u64,
    pub data_bytes_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Highest cumulative ACK the sender received, in segments and in data bytes.
    pub highest_ack_segs: u64,
    pub highest_ack_bytes: u64,
    /// In-order payload bytes delivered to the receiving application over [start_s, stop_s] (kbit/s).
    pub goodput_kbps: f64,
    pub acks_sent: u64,
    pub duplicate_segments_received: u64,
    pub out_of_order_segments_received: u64,
    pub final_cwnd_segs: f64,
    /// None while ssthresh is still "infinite" (no loss yet).
    pub final_ssthresh_segs: Option<f64>,
    pub final_srtt_s: Option<f64>,
    pub final_rto_s: f64,
    /// Segments declared lost by a timestamp detector (MPR).
    pub drops_detected: u64,
    /// Times rate pacing held a new segment back (TCP-AP).
    pub paced_holds: u64,
    /// ELFN: route-failure notices that froze the sender, and probes sent while frozen.
    pub route_freezes: u64,
    pub route_probes: u64,
    /// Sender time series, when `tcp.trace = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::transport::tcp::TcpTrace>,
}

impl FlowSummary {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        name: String,
        kind: &str,
        transport: &str,
        src: u32,
        dst: u32,
        start_s: f64,
        stop_s: f64,
        c: &FlowCounters,
        fates: &FlowFates,
    ) -> Self {
        let active_s = stop_s - start_s;
        let dropped = fates.dropped.total();
        let some_rx = c.rx_packets > 0;
        FlowSummary {
            flow,
            name,
            kind: kind.to_string(),
            transport: transport.to_string(),
            src,
            dst,
            start_s,
            stop_s,
            tx_packets: c.tx_packets,
            tx_bytes: c.tx_bytes,
            rx_packets: c.rx_packets,
            rx_bytes: c.rx_bytes,
            delivered_packets: fates.delivered,
            dropped_packets: dropped,
            in_flight_packets: fates.in_flight.total(),
            dup_rx_packets: c.dup_rx_packets,
            copy_drop_packets: c.copy_drops.total() - dropped,
            lost_packets: dropped + fates.in_flight.total(),
            pdr: if c.tx_packets > 0 {
                fates.delivered as f64 / c.tx_packets as f64
            } else {
                0.0
            },
            throughput_kbps: if active_s > 0.0 {
                c.rx_bytes as f64 * 8.0 / active_s / 1000.0
            } else {
                0.0
            },
            // Set by the simulator, which knows the run's length.
            throughput_run_kbps: 0.0,
            delay_mean_s: some_rx.then(|| c.delay_mean_s()),
            delay_min_s: some_rx.then_some(c.delay_min_s),
            delay_max_s: some_rx.then_some(c.delay_max_s),
            jitter_mean_s: (c.jitter_samples > 0)
                .then(|| c.jitter_abs_sum_s / c.jitter_samples as f64),
            ctrl_tx_packets: c.ctrl_tx_packets,
            ctrl_delivered_packets: fates.ctrl_delivered,
            ctrl_dropped_packets: fates.ctrl_dropped,
            ctrl_in_flight_packets: fates.ctrl_in_flight,
            in_flight: fates.in_flight.to_map(),
            drops: fates.dropped.to_map(),
            tcp: None,
            delivered_per_slot: None,
        }
    }
}

/// One row of the per-node table.
#[derive(Clone, Debug, Serialize)]
pub struct NodeSummary {
    pub node: u32,
    pub x_m: f64,
    pub y_m: f64,
    /// Application packet copies: originated + received = delivered + sent +
    /// dropped + in flight (docs/metrics.md).
    pub originated_packets: u64,
    pub received_packets: u64,
    pub delivered_packets: u64,
    pub forwarded_packets: u64,
    pub sent_packets: u64,
    pub dropped_packets: u64,
    pub in_flight_packets: u64,
    pub mac_frames: u64,
    pub mac_frames_failed: u64,
    pub mac_retries: u64,
    pub mac_collisions: u64,
    /// Retransmitted data frames received again and discarded (802.11 duplicate detection).
    pub mac_duplicates: u64,
    pub ifq_max_pkts: u32,
    /// Copies in flight here by holder.
    pub in_flight: BTreeMap<String, u64>,
    /// Routing control packets dropped here, by `layer.CODE`.
    pub ctrl_drops: BTreeMap<String, u64>,
    /// Application packet copies dropped here, by `layer.CODE` (every key, 0 when none).
    pub drops: BTreeMap<String, u64>,
    /// Routing-protocol counters (AODV, DSR, DSDV; absent with static routing).
    #[serde(flatten)]
    pub routing: Option<RoutingSummary>,
}

impl NodeSummary {
    pub fn new(
        node: u32,
        position_m: [f64; 2],
        c: &NodeCounters,
        in_flight: &InFlightCounts,
        mac_duplicates: u64,
    ) -> Self {
        NodeSummary {
            node,
            x_m: position_m[0],
            y_m: position_m[1],
            originated_packets: c.originated_packets,
            received_packets: c.received_packets,
            delivered_packets: c.delivered_packets,
            forwarded_packets: c.forwarded_packets,
            sent_packets: c.sent_packets,
            dropped_packets: c.drops.total(),
            in_flight_packets: in_flight.total(),
            mac_frames: c.mac_frames,
            mac_frames_failed: c.mac_frames_failed,
            mac_retries: c.mac_retries,
            mac_collisions: c.mac_collisions,
            mac_duplicates,
            ifq_max_pkts: c.ifq_max_pkts,
            in_flight: in_flight.to_map(),
            ctrl_drops: c.ctrl_drops.to_map(),
            drops: c.drops.to_map(),
            routing: None,
        }
    }
}

/// One row of the per-link-direction table.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    pub link: u32,
    pub from: u32,
    pub to: u32,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Fraction of the run the transmitter was busy.
    pub utilization: f64,
    pub max_queue_pkts: u32,
    pub queue_drops: u64,
    pub error_drops: u64,
}

/// How well connected one flow's endpoints were (multi-hop, by radio range,
/// faults applied) over the flow's active time `[start_s, stop_s)`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowConnectivity {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// Fraction of the flow's active time a path of in-range, working links existed.
    pub connected_fraction: f64,
    /// Time-average shortest-path hop count over the connected time; `None` if never connected.
    pub mean_hops: Option<f64>,
}

/// Connectivity over the run, from the exact unit-disk timeline (docs/mobility.md):
/// lets a user tell routing failures from partitions. Present when the scenario
/// has a radio and mobility or faults.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConnectivityReport {
    /// Unit-disk range (m): where the mean received power equals RXThresh.
    pub range_m: f64,
    /// Links going in or out of range through movement (ups plus downs) in (0, duration).
    pub link_changes: u64,
    /// Changes of the working-link graph: movement and faults together.
    pub link_changes_with_faults: u64,
    pub flows: Vec<FlowConnectivity>,
}

/// One flow's received packets, in arrival order.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PacketSeries {
    pub flow: u32,
    /// Arrival time at the destination application (s).
    pub t_s: Vec<f64>,
    /// End-to-end delay of that packet (s); jitter(i) = delay(i+1) − delay(i).
    pub delay_s: Vec<f64>,
}

/// One node's interface-queue length over time (packets), on change or sampled.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSeries {
    pub node: u32,
    pub t_s: Vec<f64>,
    pub len_pkts: Vec<u32>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub flows: Vec<PacketSeries>,
    pub queues: Vec<QueueSeries>,
}

/// A file a run wrote next to its results (traces), with its size in bytes.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct OutputFile {
    pub file: String,
    pub bytes: u64,
}

/// Everything a run returns. Serialised as `summary.json`; it contains nothing that
/// depends on the machine (no wall-clock time), so equal inputs give equal bytes.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub manetlab_version: String,
    pub scenario_name: Option<String>,
    pub seed: u64,
    pub duration_s: f64,
    pub events: u64,
    pub flows: Vec<FlowSummary>,
    pub nodes: Vec<NodeSummary>,
    pub links: Vec<LinkSummary>,
    /// Every fault applied during the run, in order (empty without `[faults]`).
    pub faults: Vec<FaultEvent>,
    /// Every failure begun during the run (a node off, a link down) with its
    /// duration, cause and effect: the `faults` table (docs/metrics.md);
    /// absent without `[faults]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<Failure>>,
    /// Connectivity report (with a radio and mobility or faults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connectivity: Option<ConnectivityReport>,
    /// Time series (`[outputs] series = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// Trace files written (`[outputs]`), sorted by name; empty without outputs.
    pub outputs: Vec<OutputFile>,
}

impl RunResult {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_and_jitter_from_a_known_log() {
        let mut c = FlowCounters::default();
        for (t, d) in [(1.0, 0.010), (2.0, 0.030), (3.0, 0.020)] {
            c.on_send(100);
            c.on_receive(t, 100, crate::sim::SimDuration::from_secs_f64(d));
        }
        c.on_send(100);
        let fates = FlowFates {
            delivered: 3,
            ..FlowFates::default()
        };
        let mut fates = fates;
        fates.in_flight.add(Holder::Ifq);
        let s = FlowSummary::new(0, "f".into(), "cbr", "udp", 0, 1, 0.0, 4.0, &c, &fates);
        assert_eq!(
            (s.delivered_packets, s.in_flight_packets, s.in_flight["ifq"]),
            (3, 1, 1)
        );
        assert_eq!(s.rx_packets, 3);
        assert_eq!(s.lost_packets, 1);
        assert!((s.pdr - 0.75).abs() < 1e-12);
        assert!((s.delay_mean_s.unwrap() - 0.020).abs() < 1e-12);
        assert_eq!(s.delay_min_s, Some(0.010));
        assert_eq!(s.delay_max_s, Some(0.030));
        // |0.03-0.01| and |0.02-0.03| -> mean 0.015
        assert!((s.jitter_mean_s.unwrap() - 0.015).abs() < 1e-12);
        // 300 bytes over 4 s = 0.6 kbit/s
        assert!((s.throughput_kbps - 0.6).abs() < 1e-12);
    }

    #[test]
    fn equal_delays_have_that_mean() {
        // 06_mean_delay_above_max: a float sum of 24 990 equal delays came out
        // above their max. The nanosecond sum is exact.
        let mut c = FlowCounters::default();
        let d = crate::sim::SimDuration::from_secs_f64(0.010_560_000);
        for i in 0..250_000 {
            c.on_send(100);
            c.on_receive(i as f64, 100, d);
        }
        let s = FlowSummary::new(
            0,
            "f".into(),
            "cbr",
            "udp",
            0,
            1,
            0.0,
            1.0,
            &c,
            &FlowFates::default(),
        );
        assert_eq!(s.delay_mean_s, Some(d.as_secs_f64()));
        assert_eq!(s.delay_min_s, s.delay_max_s);
        assert_eq!(s.delay_mean_s, s.delay_max_s);
    }

    #[test]
    fn settling_keeps_the_fates() {
        // The same packets with and without settling between steps give the
        // same fates; settled records are gone.
        let ops = |l: &mut PacketLedger, settle: bool| {
            for uid in 0..100u64 {
                l.created(uid, (uid % 3) as u32, uid % 5 != 0);
                if uid % 4 == 0 {
                    assert_eq!(l.delivered(uid), Delivery::First);
                } else if uid % 4 == 1 {
                    l.dropped(uid, DropReason::QueueOverflow);
                } else if uid % 4 == 2 {
                    l.dropped(uid, DropReason::RetryLimit);
                    l.dropped(uid, DropReason::NoRoute);
                }
                // uid % 4 == 3: still held (below), or lost without a record when uid % 8 == 7.
                if settle {
                    l.settle(|u| u % 8 == 3 || u == uid);
                }
            }
        };
        let held = |u: u64| (u % 8 == 3).then_some(Holder::Ifq);
        let mut a = PacketLedger::default();
        ops(&mut a, false);
        let mut b = PacketLedger::with_floor(1);
        ops(&mut b, true);
        assert_eq!(a.fates(3, held), b.fates(3, held));
        assert_eq!(b.len(), 13, "only the held packets (3, 11, …, 99) are kept");
    }

    #[test]
    fn empty_flow_has_no_delay() {
        let s = FlowSummary::new(
            0,
            "f".into(),
            "cbr",
            "udp",
            0,
            1,
            0.0,
            1.0,
            &FlowCounters::default(),
            &FlowFates::default(),
        );
        assert_eq!(s.drops.len(), N_PACKET_DROPS, "every drop key, 0 when none");
        assert_eq!(s.drops["mac.RET"], 0);
        assert_eq!(s.delay_mean_s, None);
        assert_eq!(s.pdr, 0.0);
    }

    #[test]
    fn one_fate_per_packet_from_its_copies() {
        let mut l = PacketLedger::default();
        // 1: delivered, then a duplicate; a copy dropped at the sender's MAC
        // (its ACK was lost) is not the packet's fate.
        l.created(1, 0, true);
        assert_eq!(l.delivered(1), Delivery::First);
        l.dropped(1, DropReason::RetryLimit);
        assert_eq!(l.delivered(1), Delivery::Duplicate);
        // 2: a copy dropped, another still queued at the end: in flight.
        l.created(2, 0, true);
        l.dropped(2, DropReason::RetryLimit);
        // 3: two copies dropped: its fate is the last one's reason.
        l.created(3, 0, true);
        l.dropped(3, DropReason::RetryLimit);
        l.dropped(3, DropReason::NoRoute);
        // 4: a TCP ACK of flow 1, dropped.
        l.created(4, 1, false);
        l.dropped(4, DropReason::QueueOverflow);
        // 5: never seen again and not held anywhere: in no class (a bug the identity shows).
        l.created(5, 1, true);
        let f = l.fates(2, |uid| (uid == 2).then_some(Holder::Ifq));
        assert_eq!(f[0].delivered, 1);
        assert_eq!(f[0].in_flight.get(Holder::Ifq), 1);
        assert_eq!(
            (f[0].dropped.get(DropReason::NoRoute), f[0].dropped.total()),
            (1, 1)
        );
        assert_eq!(
            (
                f[1].ctrl_dropped,
                f[1].dropped.total(),
                f[1].delivered,
                f[1].in_flight.total()
            ),
            (1, 0, 0, 0)
        );
    }

    #[test]
    fn drop_keys_are_distinct_and_collisions_are_not_packet_drops() {
        let keys: std::collections::BTreeSet<String> =
            DropReason::PACKET_DROPS.iter().map(|r| r.key()).collect();
        assert_eq!(keys.len(), DropReason::PACKET_DROPS.len());
        for (i, r) in DropReason::PACKET_DROPS.iter().enumerate() {
            assert_eq!(r.index(), Some(i));
        }
        assert_eq!(DropReason::Collision.index(), None);
    }
}
