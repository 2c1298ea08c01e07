//! Trace output in the field's formats: pcap (`pcap.rs`) for Wireshark/tcpdump and
//! ns-2's wireless trace text (`ns2.rs`) for existing awk scripts. Both writers
//! serialise the typed packets only when a trace is asked for; with tracing off
//! the simulator holds no [`Tracer`] and pays one `Option` test per hook.

pub mod ns2;
pub mod pcap;

use crate::ids::NodeId;
use crate::sim::SimTime;
use crate::wire::Packet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Which ns-2 trace text to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2Format {
    /// The CMU format (`s 1.0 _0_ AGT --- ...`).
    Old,
    /// The tagged format (`s -t 1.0 -Hs 0 ...`).
    New,
}

/// What to trace (from the scenario's `[outputs]`).
#[derive(Clone, Debug, Default)]
pub struct TraceConfig {
    pub ns2: Option<Ns2Format>,
    pub agt: bool,
    pub rtr: bool,
    pub ifq: bool,
    pub mac: bool,
    /// Nodes with a pcap file (empty: none).
    pub pcap_nodes: Vec<NodeId>,
    /// What their files hold: IP datagrams or 802.11 frames.
    pub pcap_layer: pcap::CaptureLayer,
}

impl TraceConfig {
    pub fn is_empty(&self) -> bool {
        self.ns2.is_none() && self.pcap_nodes.is_empty()
    }
}

/// Open trace files of one run.
pub struct Tracer {
    cfg: TraceConfig,
    dir: PathBuf,
    ns2: Option<BufWriter<File>>,
    line: String,
    /// The traced nodes' pcap files (buffered; not one open file per node).
    pcaps: pcap::PcapFiles,
    /// The first write error; tracing stops at it and the run reports it.
    error: Option<io::Error>,
    /// Per node, the last few IP packets it took off the air (ns-2 keeps the
    /// received MAC header in the packet, and prints it on the packet's later lines).
    rx: Vec<[Option<RxNote>; RX_NOTES]>,
    /// The node and packet uid the DCF is handing back to routing after its
    /// retry limit: its `RET` line is the MAC's discard, not routing's drop.
    pub handing_back: Option<(NodeId, u64)>,
}

/// How many received packets per node [`Tracer`] remembers (a packet is traced
/// above the MAC within the LL delay of its reception, or when the router forwards it).
const RX_NOTES: usize = 8;

/// An IP packet as node received it from the MAC: what ns-2's later trace lines
/// of the same packet show (the MAC header, the IP source before a router rewrote it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxNote {
    pub uid: u64,
    /// Duration, receiver (`u32::MAX` broadcast), transmitter, ether type.
    pub mac: [u32; 4],
    pub ip_src: NodeId,
}

/// Name of the ns-2 trace file in the output directory.
pub const NS2_TRACE_FILE: &str = "trace.tr";

/// Name of node `n`'s pcap file.
pub fn pcap_file(n: NodeId) -> String {
    format!("node{n}.pcap")
}

impl Tracer {
    pub fn open(dir: &Path, cfg: TraceConfig, nodes: usize) -> io::Result<Tracer> {
        std::fs::create_dir_all(dir)?;
        let ns2 = match cfg.ns2 {
            Some(_) => Some(BufWriter::with_capacity(
                1 << 16,
                File::create(dir.join(NS2_TRACE_FILE))?,
            )),
            None => None,
        };
        let pcaps =
            pcap::PcapFiles::create(dir, nodes, &cfg.pcap_nodes, cfg.pcap_layer, pcap_file)?;
        let rx = vec![[None; RX_NOTES]; if cfg.ns2.is_some() { nodes } else { 0 }];
        Ok(Tracer {
            cfg,
            dir: dir.to_path_buf(),
            ns2,
            line: String::with_capacity(256),
            pcaps,
            error: None,
            rx,
            handing_back: None,
        })
    }

    /// Whether events of `level` are traced (so callers can skip building records).
    /// Drops at RTR and IFQ count as wanted whenever an ns-2 trace is written: see
    /// [`Tracer::wants_drop`].
    pub fn wants(&self, level: ns2::Level) -> bool {
        self.ns2.is_some()
            && match level {
                ns2::Level::Agt => self.cfg.agt,
                ns2::Level::Rtr => self.cfg.rtr,
                ns2::Level::Ifq => self.cfg.ifq,
                ns2::Level::Mac => self.cfg.mac,
            }
    }

    /// Whether drops at `level` are traced. ns-2.35 gives every interface queue and
    /// ARP table a drop trace and every routing agent one (`ns-mobilenode.tcl`:
    /// "always on regardless of other tracing"), so `D IFQ` and `D RTR` lines are
    /// written whatever `trace_levels` says; MAC drops only with the MAC trace.
    pub fn wants_drop(&self, level: ns2::Level) -> bool {
        self.ns2.is_some()
            && (matches!(level, ns2::Level::Rtr | ns2::Level::Ifq) || self.wants(level))
    }

    /// Remember that node `n` took the IP packet `note.uid` off the air.
    pub fn note_rx(&mut self, n: NodeId, note: RxNote) {
        if let Some(ring) = self.rx.get_mut(n.index()) {
            ring.rotate_right(1);
            ring[0] = Some(note);
        }
    }

    /// What node `n` noted when it received packet `uid` (if it did, recently).
    pub fn rx_note(&self, n: NodeId, uid: u64) -> Option<RxNote> {
        self.rx
            .get(n.index())?
            .iter()
            .flatten()
            .find(|r| r.uid == uid)
            .copied()
    }

    pub fn record(&mut self, r: &ns2::Record) {
        let wanted = if r.event == ns2::Event::Drop {
            self.wants_drop(r.level)
        } else {
            self.wants(r.level)
        };
        if !wanted || self.error.is_some() {
            return;
        }
        self.line.clear();
        match self.cfg.ns2 {
            Some(Ns2Format::Old) => ns2::write_old(r, &mut self.line),
            Some(Ns2Format::New) => ns2::write_new(r, &mut self.line),
            None => return,
        }
        if let Some(w) = self.ns2.as_mut() {
            if let Err(e) = w.write_all(self.line.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    /// Whether node `n` has an IP capture (datagrams at its interface).
    pub fn wants_pcap(&self, n: NodeId) -> bool {
        self.cfg.pcap_layer == pcap::CaptureLayer::Ip && self.pcaps.is_traced(n)
    }

    /// Whether node `n` has a MAC capture (802.11 frames it sends and decodes).
    pub fn wants_mac_pcap(&self, n: NodeId) -> bool {
        self.cfg.pcap_layer == pcap::CaptureLayer::Mac && self.pcaps.is_traced(n)
    }

    /// Record the 802.11 frame `f`, sent at `rate_bps`, in node `n`'s MAC capture at `t`.
    pub fn pcap_frame(&mut self, n: NodeId, t: SimTime, f: &crate::mac::Frame, rate_bps: f64) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.pcaps.write_frame(n, t, f, rate_bps) {
            self.error = Some(e);
        }
    }

    /// Record `pkt` in node `n`'s pcap (if traced) at time `t`.
    pub fn pcap(&mut self, n: NodeId, t: SimTime, pkt: &Packet) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.pcaps.write(n, t, pkt) {
            self.error = Some(e);
        }
    }

    /// Flush and close every file; returns (file name, size in bytes) of each.
    pub fn finish(self) -> io::Result<Vec<(String, u64)>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut names = Vec::new();
        if let Some(mut w) = self.ns2 {
            w.flush()?;
            names.push(NS2_TRACE_FILE.to_string());
        }
        names.extend(self.pcaps.finish()?.into_iter().map(pcap_file));
        names
            .into_iter()
            .map(|n| Ok((n.clone(), std::fs::metadata(self.dir.join(&n))?.len())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_filter_and_files_are_reported_with_sizes() {
        let dir = std::env::temp_dir().join(format!("manetlab-tracer-{}", std::process::id()));
        let cfg = TraceConfig {
            ns2: Some(Ns2Format::Old),
            agt: true,
            rtr: false,
            ifq: false,
            mac: false,
            pcap_nodes: vec![NodeId(1)],
            pcap_layer: pcap::CaptureLayer::Ip,
        };
        let mut t = Tracer::open(&dir, cfg, 3).unwrap();
        assert!(t.wants(ns2::Level::Agt) && !t.wants(ns2::Level::Mac));
        assert!(t.wants_pcap(NodeId(1)) && !t.wants_pcap(NodeId(0)));
        let rec = |event, level| ns2::Record {
            event,
            t: SimTime::ZERO,
            node: NodeId(0),
            position_m: [0.0, 0.0],
            level,
            reason: None,
            uid: 0,
            ptype: "cbr",
            size: 10,
            mac: [0; 4],
            next_hop: ns2::NO_NEXT_HOP,
            body: ns2::Body::None,
            forwards: 0,
        };
        t.record(&rec(ns2::Event::Send, ns2::Level::Agt));
        t.record(&rec(ns2::Event::Send, ns2::Level::Mac));
        t.record(&rec(ns2::Event::Send, ns2::Level::Rtr));
        // ns-2 traces IFQ and RTR drops whatever the levels; MAC drops only with MAC.
        t.record(&rec(ns2::Event::Drop, ns2::Level::Ifq));
        t.record(&rec(ns2::Event::Drop, ns2::Level::Rtr));
        t.record(&rec(ns2::Event::Drop, ns2::Level::Mac));
        let files = t.finish().unwrap();
        assert_eq!(files[0].0, NS2_TRACE_FILE);
        let text = std::fs::read_to_string(dir.join(NS2_TRACE_FILE)).unwrap();
        let kinds: Vec<(&str, &str)> = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .map(|f| (f[0], f[3]))
            .collect();
        assert_eq!(
            kinds,
            vec![("s", "AGT"), ("D", "IFQ"), ("D", "RTR")],
            "{text}"
        );
        assert_eq!(files[1], ("node1.pcap".to_string(), 24), "header only");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
