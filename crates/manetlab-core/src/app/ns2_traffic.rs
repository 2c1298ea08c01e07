//! ns-2 traffic files (the output of CMU `cbrgen.tcl`, for CBR over UDP and for
//! FTP over TCP, and hand-written files in the same style), read as data.
//!
//! Source: ns-2.35 `indep-utils/cmu-scen-gen/cbrgen.tcl` (what it prints),
//! `tcl/lib/ns-default.tcl` (defaults), `tcl/lib/ns-source.tcl` (how
//! `interval_` sets a CBR source's `rate_`) and `tools/cbr_traffic.cc`
//! (`random_` adds U(−interval/2, +interval/2) to each gap; `maxpkts_` packets
//! at most). Statements understood (variable names are free, e.g. `udp_(3)` or `tcp`):
//!
//! ```text
//! # comment
//! set udp_(0) [new Agent/UDP]                      also Agent/Null, Agent/LossMonitor,
//! set cbr_(0) [new Application/Traffic/CBR]        Agent/TCP[/Reno|/Newreno|/Sack1|/Vegas|/Fack],
//! set ftp_(0) [new Application/FTP]                Agent/TCPSink[/Sack1|/DelAck]
//! $ns_ attach-agent $node_(1) $udp_(0)
//! $cbr_(0) attach-agent $udp_(0)
//! $ns_ connect $udp_(0) $null_(0)
//! $cbr_(0) set packetSize_ 512                     CBR: packetSize_, interval_, rate_, random_, maxpkts_
//! $tcp_(0) set window_ 32                          TCP: window_, packetSize_; class_ and fid_ (nam
//!                                                  colour, flow id) are ignored, on any agent
//! set tcp_(0) [$ns_ create-connection TCP $node_(1) TCPSink $node_(2) 0]
//! set ftp_(0) [$tcp_(0) attach-source FTP]         also attach-app FTP
//! set cbr_(0) [$ns_ create-connection CBR $node_(1) LossMonitor $node_(2) 0]   (old cbrgen)
//! $ns_ at 2.55 "$cbr_(0) start"                    also "... stop"
//! $ns_ at 90 "$node_(0) shutdown"                  also "... startup" (Debian's cbr-10-1-10-20)
//! ```
//!
//! `shutdown`/`startup` switch a node off and on; they come back as
//! [`Ns2NodeSwitch`] intervals (see [`read_ns2_traffic_file`]).
//!
//! Anything else is an [`Ns2TrafficError`] naming the line: nothing in the file
//! is executed, and a statement we do not model is never guessed at.

use std::collections::BTreeMap;

/// A line we cannot read: its 1-based number (0: the file as a whole), its text and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}: `{text}`")]
pub struct Ns2TrafficError {
    pub line: usize,
    pub text: String,
    pub message: String,
}

/// What one traffic source sends.
#[derive(Clone, Debug, PartialEq)]
pub enum Ns2Source {
    /// CBR over UDP: `packet_bytes` every `interval_s`, jittered by
    /// U(−interval/2, +interval/2) when `random`, at most `max_packets`.
    Cbr {
        packet_bytes: u32,
        interval_s: f64,
        random: bool,
        max_packets: Option<u64>,
    },
    /// FTP (infinite backlog) over a TCP agent.
    Ftp {
        variant: &'static str,
        window_pkts: Option<u32>,
        mss_bytes: Option<u32>,
        delayed_ack: bool,
    },
}

/// One flow of a traffic file.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns2Flow {
    /// The application's variable name in the file (`cbr_(0)`, `ftp`).
    pub name: String,
    /// Line where the application is created.
    pub line: usize,
    pub src: u32,
    pub dst: u32,
    pub source: Ns2Source,
    /// Start time (s): the `$ns_ at T "$app start"` line.
    pub start_s: f64,
    /// Stop time (s), if the file stops it.
    pub stop_s: Option<f64>,
}

/// A node switched off by `$node_(i) shutdown` at `off_s` and back on by a
/// later `startup` at `on_s` (None: never in the file).
#[derive(Clone, Debug, PartialEq)]
pub struct Ns2NodeSwitch {
    pub node: u32,
    pub off_s: f64,
    pub on_s: Option<f64>,
    /// Line of the `shutdown`.
    pub line: usize,
}

/// Everything a traffic file sets up: its flows and its node switches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ns2Traffic {
    pub flows: Vec<Ns2Flow>,
    pub node_switches: Vec<Ns2NodeSwitch>,
}

/// ns-2.35 defaults (`tcl/lib/ns-default.tcl`, `ns-source.tcl`).
const CBR_DEFAULT_BYTES: u32 = 210;
const CBR_DEFAULT_RATE_BPS: f64 = 448_000.0;
/// `Agent/CBR` (old cbrgen's combined agent+source) interval: 3.75 ms.
const AGENT_CBR_DEFAULT_INTERVAL_S: f64 = 0.00375;
/// ns-2's default `maxpkts_` (0x10000000): no limit in practice.
const NS2_MAXPKTS_DEFAULT: u64 = 268_435_456;
/// `Agent/UDP set packetSize_ 1000`: larger CBR packets would be split by ns-2.
const UDP_DEFAULT_MAX_BYTES: u32 = 1000;
/// Largest node index accepted (as for movement files).
const MAX_NODE_INDEX: u32 = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
enum AgentKind {
    Udp,
    /// Old `Agent/CBR`: a UDP agent that is its own CBR source.
    OldCbr,
    Tcp(&'static str),
    Sink,
    TcpSink {
        delayed_ack: bool,
    },
}

#[derive(Clone, Debug)]
struct Agent {
    kind: AgentKind,
    node: Option<u32>,
    peer: Option<String>,
    /// UDP: largest payload before ns-2 splits (packetSize_); TCP: packetSize_.
    packet_size: Option<u32>,
    window: Option<u32>,
    /// Agent/CBR's own source settings.
    cbr: CbrSettings,
}

/// CBR pacing as ns-2 keeps it: `interval_` sets `rate_ = packetSize_·8/interval`,
/// and the interval used is `packetSize_·8/rate_` when the source starts.
#[derive(Clone, Debug)]
struct CbrSettings {
    size: u32,
    pace: Pace,
    random: bool,
    max_packets: u64,
}

#[derive(Clone, Debug)]
enum Pace {
    Rate(f64),
    /// An interval set while the packet size was `size_then` (kept exact when the size does not change).
    Interval {
        interval_s: f64,
        size_then: u32,
    },
}

impl CbrSettings {
    fn new(old_agent: bool) -> Self {
        let pace = if old_agent {
            Pace::Interval {
                interval_s: AGENT_CBR_DEFAULT_INTERVAL_S,
                size_then: CBR_DEFAULT_BYTES,
            }
        } else {
            Pace::Rate(CBR_DEFAULT_RATE_BPS)
        };
        CbrSettings {
            size: CBR_DEFAULT_BYTES,
            pace,
            random: false,
            max_packets: NS2_MAXPKTS_DEFAULT,
        }
    }

    fn interval_s(&self, old_agent: bool) -> f64 {
        match self.pace {
            Pace::Rate(bps) => self.size as f64 * 8.0 / bps,
            // Agent/CBR keeps its interval when the size changes (ns-source.tcl recomputes the rate).
            Pace::Interval {
                interval_s,
                size_then,
            } if old_agent || size_then == self.size => interval_s,
            Pace::Interval {
                interval_s,
                size_then,
            } => interval_s * self.size as f64 / size_then as f64,
        }
    }
}

#[derive(Clone, Debug)]
enum AppKind {
    Cbr(CbrSettings),
    Ftp,
}

#[derive(Clone, Debug)]
struct App {
    kind: AppKind,
    line: usize,
    agent: Option<String>,
    start_s: Option<f64>,
    stop_s: Option<f64>,
}

#[derive(Default)]
struct File {
    agents: BTreeMap<String, (usize, Agent)>,
    apps: BTreeMap<String, App>,
    /// Applications in the order the file creates them (flow order).
    app_order: Vec<String>,
    /// `$node_(i) shutdown|startup` events: (time, node, on, line), in file order.
    node_events: Vec<(f64, u32, bool, usize)>,
}

/// Parse a traffic file into flows, in the order the file creates their
/// applications (node `shutdown`/`startup` lines are read and left out: see
/// [`read_ns2_traffic_file`]).
pub fn read_ns2_traffic(text: &str) -> Result<Vec<Ns2Flow>, Ns2TrafficError> {
    read_ns2_traffic_file(text).map(|t| t.flows)
}

/// Parse a traffic file into its flows and its node switches.
pub fn read_ns2_traffic_file(text: &str) -> Result<Ns2Traffic, Ns2TrafficError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut f = File::default();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        f.statement(line, k + 1)
            .map_err(|message| Ns2TrafficError {
                line: k + 1,
                text: raw.to_string(),
                message,
            })?;
    }
    let lines: Vec<&str> = text.lines().collect();
    let flows = f.flows().map_err(|(line, message)| Ns2TrafficError {
        line,
        text: line
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .map_or(String::new(), |t| t.to_string()),
        message,
    })?;
    Ok(Ns2Traffic {
        flows,
        node_switches: node_switches(&f.node_events),
    })
}

/// Off intervals per node from `shutdown`/`startup` events. ns-2 runs events of
/// one time in the order they were scheduled, so they are taken by (time, file
/// order): a `shutdown` of a node already off and a `startup` of a node already
/// on change nothing, and an interval that ends when it begins (cbr-10-1-10-20
/// shuts every node down at 0 and starts two of them at 0) is no interval.
fn node_switches(events: &[(f64, u32, bool, usize)]) -> Vec<Ns2NodeSwitch> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| events[a].0.total_cmp(&events[b].0).then(a.cmp(&b)));
    let mut off: BTreeMap<u32, usize> = BTreeMap::new(); // node -> index in out
    let mut out: Vec<Ns2NodeSwitch> = Vec::new();
    for k in order {
        let (t, node, on, line) = events[k];
        match (on, off.get(&node).copied()) {
            (false, None) => {
                off.insert(node, out.len());
                out.push(Ns2NodeSwitch {
                    node,
                    off_s: t,
                    on_s: None,
                    line,
                });
            }
            (true, Some(i)) => {
                off.remove(&node);
                out[i].on_s = Some(t);
            }
            _ => {}
        }
    }
    out.retain(|s| s.on_s != Some(s.off_s));
    out
}

fn var(tok: &str) -> Result<&str, String> {
    tok.strip_prefix('$')
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("`{tok}` is not a variable reference like $udp_(0)"))
}

fn node_ref(tok: &str) -> Result<u32, String> {
    let idx = tok
        .strip_prefix("$node_(")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("`{tok}` is not a node reference like $node_(3)"))?;
    let i: u32 = idx
        .parse()
        .map_err(|_| format!("node index `{idx}` is not a non-negative integer"))?;
    if i > MAX_NODE_INDEX {
        return Err(format!("node index {i} is larger than {MAX_NODE_INDEX}"));
    }
    Ok(i)
}

fn number(tok: &str, what: &str) -> Result<f64, String> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{what} `{tok}` is not a finite number")),
    }
}

fn positive_int(tok: &str, what: &str, max: u64) -> Result<u64, String> {
    // Tcl reads "512.0" as a double; ns-2's int bindings would truncate it, so ask for the integer.
    match tok.parse::<u64>() {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(format!(
            "{what} `{tok}` is out of range (allowed: an integer in 1..={max})"
        )),
    }
}

/// ns-2 `delay_parse`: seconds, optionally with a unit (`ms`, `us`, `ns`, `ps`, `s`).
fn seconds(tok: &str, what: &str) -> Result<f64, String> {
    let (num, scale) = [
        ("ms", 1e-3),
        ("us", 1e-6),
        ("ns", 1e-9),
        ("ps", 1e-12),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(suffix, scale)| tok.strip_suffix(suffix).map(|n| (n, *scale)))
    .unwrap_or((tok, 1.0));
    let v = number(num, what).map_err(|_| {
        format!("{what} `{tok}` is not a time (a number of seconds, or with ms/us/ns)")
    })? * scale;
    if v.is_nan() || v <= 0.0 {
        return Err(format!("{what} `{tok}` is out of range (allowed: > 0)"));
    }
    Ok(v)
}

/// ns-2 `bw_parse`: bits per second, optionally with k/K/m/M/g/G and b (bits) or B (bytes).
fn bits_per_s(tok: &str, what: &str) -> Result<f64, String> {
    let mut s = tok.strip_suffix("ps").unwrap_or(tok);
    let mut scale = 1.0;
    if let Some(r) = s.strip_suffix('B') {
        s = r;
        scale = 8.0;
    } else if let Some(r) = s.strip_suffix('b') {
        s = r;
    }
    for (suffix, m) in [
        ('k', 1e3),
        ('K', 1e3),
        ('m', 1e6),
        ('M', 1e6),
        ('g', 1e9),
        ('G', 1e9),
    ] {
        if let Some(r) = s.strip_suffix(suffix) {
            s = r;
            scale *= m;
            break;
        }
    }
    let v = number(s, what)
        .map_err(|_| format!("{what} `{tok}` is not a rate (bits/s, or e.g. 64Kb, 1Mb)"))?
        * scale;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("{what} `{tok}` is out of range (allowed: > 0)"));
    }
    Ok(v)
}

fn agent_class(class: &str) -> Option<AgentKind> {
    Some(match class {
        "Agent/UDP" => AgentKind::Udp,
        "Agent/CBR" | "Agent/CBR/UDP" => AgentKind::OldCbr,
        "Agent/Null" | "Agent/LossMonitor" => AgentKind::Sink,
        "Agent/TCP" => AgentKind::Tcp("tahoe"),
        "Agent/TCP/Reno" => AgentKind::Tcp("reno"),
        "Agent/TCP/Newreno" => AgentKind::Tcp("newreno"),
        "Agent/TCP/Sack1" => AgentKind::Tcp("sack"),
        "Agent/TCP/Fack" => AgentKind::Tcp("fack"),
        "Agent/TCP/Vegas" => AgentKind::Tcp("vegas"),
        "Agent/TCPSink" | "Agent/TCPSink/Sack1" => AgentKind::TcpSink { delayed_ack: false },
        "Agent/TCPSink/DelAck" | "Agent/TCPSink/Sack1/DelAck" => {
            AgentKind::TcpSink { delayed_ack: true }
        }
        _ => return None,
    })
}

const AGENT_CLASSES: &str = "Agent/UDP, Agent/CBR, Agent/Null, Agent/LossMonitor, Agent/TCP, Agent/TCP/Reno, Agent/TCP/Newreno, \
     Agent/TCP/Sack1, Agent/TCP/Fack, Agent/TCP/Vegas, Agent/TCPSink, Agent/TCPSink/Sack1, Agent/TCPSink/DelAck, Agent/TCPSink/Sack1/DelAck";

impl File {
    fn statement(&mut self, line: &str, no: usize) -> Result<(), String> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        match toks.as_slice() {
            ["set", name, "[new", class] => {
                let class = class.strip_suffix(']').ok_or("expected `set NAME [new CLASS]`")?;
                self.create(name, class, no)
            }
            ["set", name, "[$ns_", "create-connection", src_t, src_n, dst_t, dst_n, fid] => {
                let fid = fid.strip_suffix(']').ok_or("expected `set NAME [$ns_ create-connection SRC $node_(a) SINK $node_(b) FID]`")?;
                fid.parse::<i64>().map_err(|_| format!("flow id `{fid}` is not an integer"))?;
                let (src, dst) = (node_ref(src_n)?, node_ref(dst_n)?);
                let sink_name = format!("{name} (sink)");
                self.create(&sink_name, &format!("Agent/{dst_t}"), no)?;
                self.create(name, &format!("Agent/{src_t}"), no)?;
                let sink = &mut self.agents.get_mut(&sink_name).expect("created").1;
                if !matches!(sink.kind, AgentKind::Sink | AgentKind::TcpSink { .. }) {
                    return Err(format!("`{dst_t}` is not a receiving agent (allowed: Null, LossMonitor, TCPSink, TCPSink/Sack1, TCPSink/DelAck)"));
                }
                sink.node = Some(dst);
                let a = &mut self.agents.get_mut(*name).expect("created").1;
                if matches!(a.kind, AgentKind::Sink | AgentKind::TcpSink { .. }) {
                    return Err(format!("`{src_t}` is not a sending agent"));
                }
                a.node = Some(src);
                a.peer = Some(sink_name);
                if a.kind == AgentKind::OldCbr {
                    // The old combined agent is its own application.
                    let cbr = a.cbr.clone();
                    self.add_app(name, App { kind: AppKind::Cbr(cbr), line: no, agent: Some(name.to_string()), start_s: None, stop_s: None });
                }
                Ok(())
            }
            ["set", app, agent, verb @ ("attach-source" | "attach-app"), kind] => {
                let kind = kind.strip_suffix(']').ok_or(format!("expected `set NAME [$agent {verb} FTP]`"))?;
                let agent = var(agent.strip_prefix('[').ok_or(format!("expected `set NAME [$agent {verb} FTP]`"))?)?;
                let kind = match kind {
                    "FTP" => AppKind::Ftp,
                    "CBR" | "Traffic/CBR" => AppKind::Cbr(CbrSettings::new(false)),
                    other => return Err(format!("application `{other}` is not supported (allowed: FTP, CBR)")),
                };
                self.agent(agent)?;
                self.add_app(app, App { kind, line: no, agent: Some(agent.to_string()), start_s: None, stop_s: None });
                Ok(())
            }
            ["$ns_", "attach-agent", node, agent] => {
                let n = node_ref(node)?;
                let a = self.agent_mut(var(agent)?)?;
                if a.node.replace(n).is_some_and(|old| old != n) {
                    return Err(format!("{agent} is already attached to another node"));
                }
                Ok(())
            }
            ["$ns_", "connect", a, b] => {
                let (a, b) = (var(a)?.to_string(), var(b)?.to_string());
                self.agent(&b)?;
                self.agent_mut(&a)?.peer = Some(b);
                Ok(())
            }
            [app, "attach-agent", agent] => {
                let agent = var(agent)?.to_string();
                self.agent(&agent)?;
                let name = var(app)?;
                let app = self.apps.get_mut(name).ok_or_else(|| format!("`{name}` is not an application created earlier in the file"))?;
                app.agent = Some(agent);
                Ok(())
            }
            [obj, "set", key, value] => self.set(var(obj)?, key, value),
            ["$ns_", "at", t, rest @ ..] => {
                let t = number(t, "time")?;
                if t < 0.0 {
                    return Err(format!("time {t} is negative"));
                }
                let cmd = rest.join(" ");
                let cmd = cmd
                    .strip_prefix('"')
                    .and_then(|c| c.strip_suffix('"'))
                    .ok_or("the command after the time must be in double quotes")?;
                match cmd.split_whitespace().collect::<Vec<_>>().as_slice() {
                    [node, verb @ ("shutdown" | "startup")] if node.starts_with("$node_(") => {
                        let n = node_ref(node)?;
                        self.node_events.push((t, n, *verb == "startup", no));
                        Ok(())
                    }
                    [app, verb @ ("start" | "stop")] => {
                        let name = var(app)?;
                        let a = self.apps.get_mut(name).ok_or_else(|| format!("`{name}` is not an application created earlier in the file"))?;
                        let slot = if *verb == "start" { &mut a.start_s } else { &mut a.stop_s };
                        if slot.replace(t).is_some() {
                            return Err(format!("{name} is {verb}ed twice (one start and at most one stop per application)"));
                        }
                        Ok(())
                    }
                    _ => Err("not a traffic event (expected `$ns_ at T \"$app start\"` or `\"$app stop\"`, or `\"$node_(i) shutdown\"` or `\"$node_(i) startup\"`)".into()),
                }
            }
            _ => Err("not a traffic statement (expected agent/application creation, attach-agent, connect, create-connection, attach-source, `set` of a parameter or `$ns_ at T \"$app start|stop\"`)".into()),
        }
    }

    fn create(&mut self, name: &str, class: &str, no: usize) -> Result<(), String> {
        if self.agents.contains_key(name) || self.apps.contains_key(name) {
            return Err(format!("`{name}` is created twice"));
        }
        if let Some(kind) = agent_class(class) {
            let old = kind == AgentKind::OldCbr;
            let agent = Agent {
                kind,
                node: None,
                peer: None,
                packet_size: None,
                window: None,
                cbr: CbrSettings::new(old),
            };
            self.agents.insert(name.to_string(), (no, agent));
            return Ok(());
        }
        let kind = match class {
            "Application/Traffic/CBR" => AppKind::Cbr(CbrSettings::new(false)),
            "Application/FTP" => AppKind::Ftp,
            other if other.starts_with("Agent/") => return Err(format!("agent `{other}` is not supported (allowed: {AGENT_CLASSES})")),
            other => return Err(format!("class `{other}` is not supported (allowed: Application/Traffic/CBR, Application/FTP, {AGENT_CLASSES})")),
        };
        self.add_app(
            name,
            App {
                kind,
                line: no,
                agent: None,
                start_s: None,
                stop_s: None,
            },
        );
        Ok(())
    }

    fn add_app(&mut self, name: &str, app: App) {
        self.app_order.push(name.to_string());
        self.apps.insert(name.to_string(), app);
    }

    fn agent(&self, name: &str) -> Result<&Agent, String> {
        self.agents
            .get(name)
            .map(|(_, a)| a)
            .ok_or_else(|| format!("`{name}` is not an agent created earlier in the file"))
    }

    fn agent_mut(&mut self, name: &str) -> Result<&mut Agent, String> {
        self.agents
            .get_mut(name)
            .map(|(_, a)| a)
            .ok_or_else(|| format!("`{name}` is not an agent created earlier in the file"))
    }

    fn set(&mut self, obj: &str, key: &str, value: &str) -> Result<(), String> {
        if matches!(key, "class_" | "fid_")
            && (self.agents.contains_key(obj) || self.apps.contains_key(obj))
        {
            // nam colour / flow id: no effect on what is sent.
            value
                .parse::<i64>()
                .map_err(|_| format!("{key} `{value}` is not an integer"))?;
            return Ok(());
        }
        // An old Agent/CBR is both agent and application under one name: its settings live on the agent.
        if let Some((_, a)) = self.agents.get_mut(obj) {
            return match (&a.kind, key) {
                (AgentKind::OldCbr, _) => set_cbr(&mut a.cbr, key, value, true),
                (AgentKind::Udp | AgentKind::Tcp(_), "packetSize_") => {
                    a.packet_size = Some(positive_int(value, "packetSize_", 65_507)? as u32);
                    Ok(())
                }
                (AgentKind::Tcp(_), "window_") => {
                    a.window = Some(positive_int(value, "window_", u32::MAX as u64)? as u32);
                    Ok(())
                }
                (AgentKind::Udp, _) => Err(format!("UDP agent parameter `{key}` is not supported (allowed: packetSize_, class_, fid_)")),
                (AgentKind::Tcp(_), _) => Err(format!("TCP agent parameter `{key}` is not supported (allowed: window_, packetSize_, class_, fid_)")),
                (AgentKind::Sink | AgentKind::TcpSink { .. }, _) => {
                    Err(format!("receiving agent parameter `{key}` is not supported (allowed: class_, fid_)"))
                }
            };
        }
        match self.apps.get_mut(obj).map(|a| &mut a.kind) {
            Some(AppKind::Cbr(c)) => set_cbr(c, key, value, false),
            Some(AppKind::Ftp) => Err(format!("FTP parameter `{key}` is not supported (set window_ and packetSize_ on its TCP agent)")),
            None => Err(format!("`{obj}` is not an agent or application created earlier in the file")),
        }
    }

    /// Every application as a flow, in creation order.
    fn flows(&self) -> Result<Vec<Ns2Flow>, (usize, String)> {
        let mut out = Vec::new();
        for name in &self.app_order {
            let app = &self.apps[name];
            let at = |m: String| (app.line, format!("{name}: {m}"));
            let agent_name = app.agent.as_ref().ok_or_else(|| {
                at("not attached to an agent (`$app attach-agent $agent`)".into())
            })?;
            let (_, agent) = &self.agents[agent_name];
            let src = agent.node.ok_or_else(|| at(format!("its agent {agent_name} is not attached to a node (`$ns_ attach-agent $node_(i) ${agent_name}`)")))?;
            let peer = agent.peer.as_ref().ok_or_else(|| {
                at(format!(
                    "its agent {agent_name} is not connected (`$ns_ connect ${agent_name} $sink`)"
                ))
            })?;
            let (_, sink) = &self.agents[peer];
            let dst = sink.node.ok_or_else(|| {
                at(format!(
                    "the receiving agent {peer} is not attached to a node"
                ))
            })?;
            let start_s = app
                .start_s
                .ok_or_else(|| at(format!("never started (no `$ns_ at T \"${name} start\"`)")))?;
            if let Some(stop) = app.stop_s {
                if stop <= start_s {
                    return Err(at(format!(
                        "stops at {stop} s, not after its start at {start_s} s"
                    )));
                }
            }
            let source = match (&app.kind, &agent.kind, &sink.kind) {
                (AppKind::Cbr(_), AgentKind::OldCbr, AgentKind::Sink) => cbr_source(&agent.cbr, true, None).map_err(at)?,
                (AppKind::Cbr(c), AgentKind::Udp, AgentKind::Sink) => cbr_source(c, false, agent.packet_size).map_err(at)?,
                (AppKind::Ftp, AgentKind::Tcp(variant), AgentKind::TcpSink { delayed_ack }) => {
                    Ns2Source::Ftp { variant, window_pkts: agent.window, mss_bytes: agent.packet_size, delayed_ack: *delayed_ack }
                }
                (AppKind::Cbr(_), _, _) => return Err(at("a CBR source needs a UDP agent connected to an Agent/Null or Agent/LossMonitor (CBR over TCP is not modelled)".into())),
                (AppKind::Ftp, _, _) => return Err(at("an FTP source needs a TCP agent connected to a TCPSink".into())),
            };
            out.push(Ns2Flow {
                name: name.clone(),
                line: app.line,
                src,
                dst,
                source,
                start_s,
                stop_s: app.stop_s,
            });
        }
        Ok(out)
    }
}

fn set_cbr(c: &mut CbrSettings, key: &str, value: &str, old_agent: bool) -> Result<(), String> {
    match key {
        "packetSize_" => c.size = positive_int(value, "packetSize_", 65_507)? as u32,
        "interval_" => {
            let iv = seconds(value, "interval_")?;
            c.pace = Pace::Interval {
                interval_s: iv,
                size_then: c.size,
            };
        }
        "rate_" if !old_agent => c.pace = Pace::Rate(bits_per_s(value, "rate_")?),
        "random_" => {
            c.random = match value {
                "0" => false,
                "1" => true,
                _ => {
                    return Err(format!(
                        "random_ `{value}` is out of range (allowed: 0 or 1)"
                    ))
                }
            }
        }
        "maxpkts_" => c.max_packets = positive_int(value, "maxpkts_", u64::MAX)?,
        _ => {
            let allowed = if old_agent {
                "packetSize_, interval_, random_, maxpkts_"
            } else {
                "packetSize_, interval_, rate_, random_, maxpkts_"
            };
            return Err(format!(
                "CBR parameter `{key}` is not supported (allowed: {allowed})"
            ));
        }
    }
    Ok(())
}

fn cbr_source(c: &CbrSettings, old_agent: bool, udp_max: Option<u32>) -> Result<Ns2Source, String> {
    let max = udp_max.unwrap_or(UDP_DEFAULT_MAX_BYTES);
    if !old_agent && c.size > max {
        return Err(format!(
            "packetSize_ {} is larger than its UDP agent's packetSize_ ({max}); ns-2 would split each packet, which is not modelled",
            c.size
        ));
    }
    let max_packets = (c.max_packets != NS2_MAXPKTS_DEFAULT).then_some(c.max_packets);
    Ok(Ns2Source::Cbr {
        packet_bytes: c.size,
        interval_s: c.interval_s(old_agent),
        random: c.random,
        max_packets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CBRGEN: &str = "#\n# nodes: 50, max conn: 10, send rate: 4.0, seed: 1\n#\n\
        set udp_(0) [new Agent/UDP]\n$ns_ attach-agent $node_(1) $udp_(0)\nset null_(0) [new Agent/Null]\n\
        $ns_ attach-agent $node_(2) $null_(0)\nset cbr_(0) [new Application/Traffic/CBR]\n$cbr_(0) set packetSize_ 512\n\
        $cbr_(0) set interval_ 4.0\n$cbr_(0) set random_ 1\n$cbr_(0) set maxpkts_ 10000\n$cbr_(0) attach-agent $udp_(0)\n\
        $ns_ connect $udp_(0) $null_(0)\n$ns_ at 176.70898653413587 \"$cbr_(0) start\"\n";

    #[test]
    fn reads_cbrgen_udp() {
        let f = read_ns2_traffic(CBRGEN).unwrap();
        assert_eq!(
            f,
            vec![Ns2Flow {
                name: "cbr_(0)".into(),
                line: 8,
                src: 1,
                dst: 2,
                source: Ns2Source::Cbr {
                    packet_bytes: 512,
                    interval_s: 4.0,
                    random: true,
                    max_packets: Some(10000)
                },
                start_s: 176.70898653413587,
                stop_s: None,
            }]
        );
    }

    #[test]
    fn reads_cbrgen_tcp_and_hand_written_tcp() {
        let text = "set tcp_(0) [$ns_ create-connection  TCP $node_(1) TCPSink $node_(2) 0]\n$tcp_(0) set window_ 32\n\
            $tcp_(0) set packetSize_ 512\nset ftp_(0) [$tcp_(0) attach-source FTP]\n$ns_ at 2.5 \"$ftp_(0) start\"\n\
            set tcp [new Agent/TCP/Newreno]\n$tcp set class_ 2\nset sink [new Agent/TCPSink/DelAck]\n$ns_ attach-agent $node_(3) $tcp\n\
            $ns_ attach-agent $node_(4) $sink\n$ns_ connect $tcp $sink\nset ftp [new Application/FTP]\n$ftp attach-agent $tcp\n\
            $ns_ at 150 \"$ftp start\"\n$ns_ at 160 \"$ftp stop\"\n";
        let f = read_ns2_traffic(text).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].src, f[0].dst, f[0].start_s), (1, 2, 2.5));
        assert_eq!(
            f[0].source,
            Ns2Source::Ftp {
                variant: "tahoe",
                window_pkts: Some(32),
                mss_bytes: Some(512),
                delayed_ack: false
            }
        );
        assert_eq!(
            (f[1].src, f[1].dst, f[1].start_s, f[1].stop_s),
            (3, 4, 150.0, Some(160.0))
        );
        assert_eq!(
            f[1].source,
            Ns2Source::Ftp {
                variant: "newreno",
                window_pkts: None,
                mss_bytes: None,
                delayed_ack: true
            }
        );
    }

    #[test]
    fn shutdown_and_startup_become_off_intervals() {
        // As Debian's cbr-10-1-10-20: all off at 0, two back on at 0, off again later.
        let text = format!(
            "$ns_ at 0 \"$node_(0) shutdown\"\n$ns_ at 0 \"$node_(1) shutdown\"\n$ns_ at 0 \"$node_(2) shutdown\"\n\
             $ns_ at 0 \"$node_(0) startup\"\n$ns_ at 0 \"$node_(1) startup\"\n{CBRGEN}\
             $ns_ at 90 \"$node_(1) shutdown\"\n$ns_ at 90 \"$node_(0) shutdown\"\n$ns_ at 95 \"$node_(0) shutdown\"\n\
             $ns_ at 90 \"$node_(2) startup\"\n$ns_ at 150 \"$node_(0) startup\"\n$ns_ at 160 \"$node_(3) startup\"\n"
        );
        let t = read_ns2_traffic_file(&text).unwrap();
        assert_eq!(t.flows.len(), 1);
        let got: Vec<_> = t
            .node_switches
            .iter()
            .map(|s| (s.node, s.off_s, s.on_s, s.line))
            .collect();
        // Ordered by time then file order; a second shutdown and a startup of a node that is on change nothing.
        assert_eq!(
            got,
            vec![
                (2, 0.0, Some(90.0), 3),
                (1, 90.0, None, 21),
                (0, 90.0, Some(150.0), 22)
            ]
        );
        let e = read_ns2_traffic_file("$ns_ at 1 \"$node_(x) shutdown\"\n").unwrap_err();
        assert!(e.message.contains("node index `x`"), "{e}");
    }

    #[test]
    fn old_cbrgen_agent_cbr() {
        let text = "set cbr_(0) [$ns_ create-connection CBR $node_(0) LossMonitor $node_(1) 0]\n$cbr_(0) set packetSize_ 64\n\
            $cbr_(0) set interval_ 0.25\n$cbr_(0) set random_ 1\n$cbr_(0) set maxpkts_ 10000\n$ns_ at 2.0 \"$cbr_(0) start\"\n";
        let f = read_ns2_traffic(text).unwrap();
        assert_eq!(
            f[0].source,
            Ns2Source::Cbr {
                packet_bytes: 64,
                interval_s: 0.25,
                random: true,
                max_packets: Some(10000)
            }
        );
        assert_eq!((f[0].src, f[0].dst), (0, 1));
    }

    #[test]
    fn interval_and_rate_follow_ns2() {
        let base = "set u [new Agent/UDP]\n$ns_ attach-agent $node_(0) $u\nset n [new Agent/Null]\n$ns_ attach-agent $node_(1) $n\n\
                    $ns_ connect $u $n\nset c [new Application/Traffic/CBR]\n$c attach-agent $u\n$ns_ at 1 \"$c start\"\n";
        let interval =
            |extra: &str| match &read_ns2_traffic(&format!("{base}{extra}")).unwrap()[0].source {
                Ns2Source::Cbr {
                    interval_s,
                    packet_bytes,
                    ..
                } => (*packet_bytes, *interval_s),
                s => panic!("{s:?}"),
            };
        // Defaults: 210 bytes at 448 kb/s = 3.75 ms.
        assert_eq!(interval(""), (210, 210.0 * 8.0 / 448e3));
        assert_eq!(interval("$c set rate_ 64Kb\n"), (210, 210.0 * 8.0 / 64e3));
        assert_eq!(interval("$c set rate_ 1MB\n"), (210, 210.0 * 8.0 / 8e6));
        assert_eq!(interval("$c set interval_ 20ms\n"), (210, 0.02));
        // interval_ fixes the rate; a later packetSize_ changes the interval (ns-source.tcl).
        assert_eq!(
            interval("$c set interval_ 0.1\n$c set packetSize_ 420\n"),
            (420, 0.2)
        );
        assert_eq!(
            interval("$c set packetSize_ 420\n$c set interval_ 0.1\n"),
            (420, 0.1)
        );
    }

    #[test]
    fn errors_name_the_line() {
        let base = "set u [new Agent/UDP]\n$ns_ attach-agent $node_(0) $u\nset n [new Agent/Null]\n$ns_ attach-agent $node_(1) $n\n\
                    $ns_ connect $u $n\nset c [new Application/Traffic/CBR]\n$c attach-agent $u\n";
        let cases = [
            (
                "$ns_ at 1 \"$c start\"\n$c set burst_time_ 1",
                9,
                "CBR parameter `burst_time_` is not supported",
            ),
            ("puts hello", 8, "not a traffic statement"),
            (
                "set x [new Agent/RTP]",
                8,
                "agent `Agent/RTP` is not supported",
            ),
            (
                "set x [new Application/Traffic/Exponential]",
                8,
                "class `Application/Traffic/Exponential`",
            ),
            ("$ns_ at -1 \"$c start\"", 8, "negative"),
            (
                "$ns_ at 1 \"$c start\"\n$ns_ at 2 \"$c start\"",
                9,
                "started twice",
            ),
            ("$ns_ at 1 \"$zz start\"", 8, "`zz` is not an application"),
            ("$ns_ at 1 \"$c reset\"", 8, "not a traffic event"),
            ("$ns_ at 1 $c start", 8, "double quotes"),
            ("$c set packetSize_ 0\n", 8, "out of range"),
            (
                "$c set packetSize_ 2000\n$ns_ at 1 \"$c start\"",
                6,
                "larger than its UDP agent's packetSize_ (1000)",
            ),
            ("$c set random_ 2", 8, "random_ `2`"),
            ("$c set interval_ -1", 8, "interval_ `-1` is out of range"),
            ("$c set rate_ fast", 8, "not a rate"),
            ("", 6, "never started"),
            (
                "$ns_ at 5 \"$c start\"\n$ns_ at 4 \"$c stop\"",
                6,
                "not after its start",
            ),
            ("$ns_ attach-agent $node_(99999999) $u", 8, "larger than"),
            ("$ns_ attach-agent $node_(3) $u", 8, "already attached"),
            ("set u [new Agent/UDP]", 8, "created twice"),
        ];
        for (extra, line, want) in cases {
            let e = read_ns2_traffic(&format!("{base}{extra}\n")).unwrap_err();
            assert_eq!(e.line, line, "{extra}: {e}");
            assert!(e.message.contains(want), "{extra}: {e}");
        }
        let e =
            read_ns2_traffic("set c [new Application/FTP]\n$ns_ at 1 \"$c start\"\n").unwrap_err();
        assert!(
            e.message.contains("not attached to an agent") && e.line == 1,
            "{e}"
        );
        let e = read_ns2_traffic("set t [new Agent/TCP]\nset s [new Agent/Null]\n$ns_ attach-agent $node_(0) $t\n$ns_ attach-agent $node_(1) $s\n\
            $ns_ connect $t $s\nset c [new Application/FTP]\n$c attach-agent $t\n$ns_ at 1 \"$c start\"\n").unwrap_err();
        assert!(
            e.message
                .contains("needs a TCP agent connected to a TCPSink"),
            "{e}"
        );
    }
}
