//! Trace output in the field's formats: pcap (`pcap.rs`) for Wireshark/tcpdump and
//! ns-2's wireless trace text (`ns2.rs`) for existing awk scripts. Both writers
//! serialise the typed packets only when a trace is asked for; with tracing off
//! the simulator holds no [`Tracer`] and pays one `Option` test per hook.

pub mod ns2;
pub mod pcap;

use crate::ids::NodeId;
use crate::packet::Packet;
use crate::sim::SimTime;
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
            Some(_) => Some(BufWriter::with_capacity(1 << 16, File::create(dir.join(NS2_TRACE_FILE))?)),
            None => None,
        };
        let pcaps = pcap::PcapFiles::create(dir, nodes, &cfg.pcap_nodes, pcap_file)?;
        Ok(Tracer { cfg, dir: dir.to_path_buf(), ns2, line: String::with_capacity(256), pcaps, error: None })
    }

    /// Whether events of `level` are traced (so callers can skip building records).
    pub fn wants(&self, level: ns2::Level) -> bool {
        self.ns2.is_some()
            && match level {
                ns2::Level::Agt => self.cfg.agt,
                ns2::Level::Rtr => self.cfg.rtr,
                ns2::Level::Ifq => self.cfg.ifq,
                ns2::Level::Mac => self.cfg.mac,
            }
    }

    pub fn record(&mut self, r: &ns2::Record) {
        if !self.wants(r.level) || self.error.is_some() {
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

    pub fn wants_pcap(&self, n: NodeId) -> bool {
        self.pcaps.is_traced(n)
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
        names.into_iter().map(|n| Ok((n.clone(), std::fs::metadata(self.dir.join(&n))?.len()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_filter_and_files_are_reported_with_sizes() {
        let dir = std::env::temp_dir().join(format!("manetlab-tracer-{}", std::process::id()));
        let cfg = TraceConfig { ns2: Some(Ns2Format::Old), agt: true, rtr: false, ifq: false, mac: false, pcap_nodes: vec![NodeId(1)] };
        let mut t = Tracer::open(&dir, cfg, 3).unwrap();
        assert!(t.wants(ns2::Level::Agt) && !t.wants(ns2::Level::Mac));
        assert!(t.wants_pcap(NodeId(1)) && !t.wants_pcap(NodeId(0)));
        let rec = |level| ns2::Record {
            event: ns2::Event::Send,
            t: SimTime::ZERO,
            node: NodeId(0),
            position_m: [0.0, 0.0],
            level,
            reason: None,
            uid: 0,
            ptype: "cbr",
            size: 10,
            mac: [0; 4],
            ip: None,
            app: ns2::AppPart::None,
            forwards: 0,
        };
        t.record(&rec(ns2::Level::Agt));
        t.record(&rec(ns2::Level::Mac));
        let files = t.finish().unwrap();
        assert_eq!(files[0].0, NS2_TRACE_FILE);
        let text = std::fs::read_to_string(dir.join(NS2_TRACE_FILE)).unwrap();
        assert_eq!(text.lines().count(), 1, "MAC level is off");
        assert_eq!(files[1], ("node1.pcap".to_string(), 24), "header only");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
