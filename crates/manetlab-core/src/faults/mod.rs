//! Faults: nodes switched off and on, scripted link outages, and random link
//! failures.
//!
//! Sources: paper 003 (FRN, short link failures): "link failures are generated
//! according to the Poisson distribution and the duration of link failure has an
//! exponential distribution", at a rate of 0.01 failures/s with mean durations of
//! 2.5–20 s. Signal loss by movement (a relay walking out of range and back) is
//! scripted mobility: see `mobility::signal_loss` (mobility builds on faults, not
//! the reverse).
//!
//! Random link failures are an alternating renewal process per link (pair of
//! nodes): the link stays up for an Exp(λ) time, then down for an Exp(1/m) time,
//! and so on. So λ is the failure rate *of each link while it is up* (failures
//! cannot arrive at a link that is already down; the rate is per link, not per
//! network), the long-run number of failures per second of run time is
//! λ/(1 + λm) per link and the long-run down fraction is λm/(1 + λm); for paper
//! 003's λ = 0.01/s, m = 10 s that is 0.0091/s and 9.1 %.
//!
//! Which pairs are links ([`FailureScope`]): paper 003 fails *links*, the
//! edges of its grid, "link failures between nodes" that FRN routes around.
//! `scope = "links"` (the default) runs every pair's process but keeps a failure
//! only when the pair is within reception range at the instant it is drawn
//! (the layer that knows positions says so: [`InRange`]); a failure drawn on a
//! pair out of range is dropped together with its outage, during which the pair
//! cannot fail. So each in-range link has exactly the process of scope
//! `"pairs"` (a static network's failures are the pairs' failures on in-range
//! pairs, the same draws), and with moving nodes a pair fails at λ/(1 + λm) per
//! second it spends in range. `links = [[a, b], ...]` fails the listed pairs
//! whatever their distance, and `scope = "pairs"` every pair of nodes (the
//! behaviour before scopes existed, which failed pairs far out of range too).
//!
//! A failed link carries nothing in either direction. What the radio makes of
//! it ([`LinkEffect`]): `"blocked"` (an obstacle: no signal at all, not even
//! carrier) or `"undecodable"` (a lossy link: the signal is still sensed and
//! interferes, but the frame is never decoded). Faults compose: a link is up
//! only when no cause holds it down, and blocked while any blocking cause holds
//! it (see [`FaultState`]).
//!
//! Randomness: link (a, b) draws from `stream(seed, link_entity(a, b),
//! Component::Faults)`, alternately the up time and the down time, so adding or
//! removing other links never changes its failures. Node switches and scripted
//! outages draw nothing.

use std::collections::HashMap;
use std::fmt;

use rand::Rng;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use crate::ids::NodeId;
use crate::sim::{stream, Component, SimDuration, SimRng, SimTime};

/// Whether two nodes are within reception range at an instant: how `scope =
/// "links"` tells links from other pairs. Given by the layer that knows
/// positions and the radio (the scenario: `Scenario::in_range`), since faults
/// sit below mobility.
pub type InRange = std::sync::Arc<dyn Fn(SimTime, NodeId, NodeId) -> bool + Send + Sync>;

/// Which pairs `random_link_failures` fails (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureScope {
    /// Pairs within reception range at the instant of the failure (the default).
    #[default]
    Links,
    /// Every pair of nodes, in range or not.
    Pairs,
}

/// What a failed link does to the signal between its ends.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum LinkEffect {
    /// An obstacle: no signal at all, not even carrier (the default).
    #[default]
    Blocked,
    /// A lossy link: still sensed and interfering, never decoded.
    Undecodable,
}

impl LinkEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkEffect::Blocked => "blocked",
            LinkEffect::Undecodable => "undecodable",
        }
    }

    fn is_blocked(&self) -> bool {
        *self == LinkEffect::Blocked
    }
}

/// Where a failure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCause {
    /// `node_switches` or `link_outages`.
    Scripted,
    /// `random_link_failures`.
    Random,
}

/// What happened. The derived order (off, on, down, up) breaks ties among
/// events at the same instant on the same nodes; see [`FaultSchedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    NodeOff,
    NodeOn,
    LinkDown,
    LinkUp,
}

impl FaultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::NodeOff => "node_off",
            FaultKind::NodeOn => "node_on",
            FaultKind::LinkDown => "link_down",
            FaultKind::LinkUp => "link_up",
        }
    }
}

/// One fault event. Node events have `b == None`; link events name the pair
/// with `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FaultEvent {
    pub time: SimTime,
    pub kind: FaultKind,
    pub a: NodeId,
    pub b: Option<NodeId>,
    /// A link event's effect (a down and its up have the same); `Blocked` for node events.
    pub effect: LinkEffect,
}

impl FaultEvent {
    /// A node event (`NodeOff` or `NodeOn`).
    pub fn node(time: SimTime, kind: FaultKind, n: u32) -> FaultEvent {
        FaultEvent {
            time,
            kind,
            a: NodeId(n),
            b: None,
            effect: LinkEffect::Blocked,
        }
    }

    /// A link event (`LinkDown` or `LinkUp`); the pair is stored as (min, max).
    pub fn link(time: SimTime, kind: FaultKind, a: u32, b: u32) -> FaultEvent {
        FaultEvent {
            time,
            kind,
            a: NodeId(a.min(b)),
            b: Some(NodeId(a.max(b))),
            effect: LinkEffect::Blocked,
        }
    }

    /// The same event with `effect`.
    pub fn with_effect(self, effect: LinkEffect) -> FaultEvent {
        FaultEvent { effect, ..self }
    }

    /// The total order of a schedule: time, then nodes, then kind.
    fn key(&self) -> FaultKey {
        (self.time, self.a, self.b, self.kind)
    }
}

/// Serialised as `{"time_ns": …, "time_s": …, "kind": "link_down", "nodes": [a, b]}`,
/// with `"effect": "undecodable"` after them for an undecodable link's events
/// (a blocked link's events are written as before effects existed).
impl Serialize for FaultEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let nodes: Vec<u32> = std::iter::once(self.a.0)
            .chain(self.b.map(|b| b.0))
            .collect();
        let blocked = self.effect.is_blocked();
        let mut st = s.serialize_struct("FaultEvent", if blocked { 4 } else { 5 })?;
        st.serialize_field("time_ns", &self.time.as_nanos())?;
        st.serialize_field("time_s", &self.time.as_secs_f64())?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("nodes", &nodes)?;
        if !blocked {
            st.serialize_field("effect", &self.effect)?;
        }
        st.end()
    }
}

/// One failure of a run: a node switched off or a link taken down, with how
/// long it lasts. A row of the results' `faults` table (docs/metrics.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Failure {
    pub time: SimTime,
    /// `NodeOff` or `LinkDown`.
    pub kind: FaultKind,
    pub a: NodeId,
    /// The link's other end (`a < b`); `None` for a node.
    pub b: Option<NodeId>,
    /// How long it lasts: a random failure's drawn duration (which may run past
    /// the end of the run), a scripted one's `on_s − off_s` or `up_s − down_s`;
    /// `None` for a scripted failure that is never undone.
    pub duration: Option<SimDuration>,
    pub cause: FailureCause,
    pub effect: LinkEffect,
}

/// Serialised as `{"time_s", "kind", "a", "b", "duration_s", "cause", "effect"}`
/// (`b` and `duration_s` null when absent; `effect` null for a node).
impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Failure", 7)?;
        st.serialize_field("time_s", &self.time.as_secs_f64())?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("a", &self.a.0)?;
        st.serialize_field("b", &self.b.map(|b| b.0))?;
        st.serialize_field("duration_s", &self.duration.map(|d| d.as_secs_f64()))?;
        st.serialize_field("cause", &self.cause)?;
        st.serialize_field("effect", &self.b.map(|_| self.effect))?;
        st.end()
    }
}

/// One log line: `12.500000000s link_down 3 7`.
impl fmt::Display for FaultEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.time, self.kind.as_str(), self.a)?;
        if let Some(b) = self.b {
            write!(f, " {b}")?;
        }
        Ok(())
    }
}

/// A node switched off at `off_s` and, optionally, back on at `on_s`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSwitch {
    pub node: u32,
    /// When the node goes off (s).
    pub off_s: f64,
    /// When it comes back (s); default: never.
    #[serde(default)]
    pub on_s: Option<f64>,
}

/// Link (a, b) down at `down_s` and, optionally, up again at `up_s`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOutage {
    pub a: u32,
    pub b: u32,
    /// When the link fails (s).
    pub down_s: f64,
    /// When it is restored (s); default: never.
    #[serde(default)]
    pub up_s: Option<f64>,
}

/// Random link failures (paper 003).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomLinkFailures {
    /// Failure rate λ of each link while it is up (failures per second); paper 003: 0.01.
    pub rate_per_s: f64,
    /// Mean failure duration m (s); paper 003: 2.5–20 (10 in its Fig. 7).
    pub mean_duration_s: f64,
    /// The pairs that fail, whatever their distance; default: as `scope` says.
    #[serde(default)]
    pub links: Option<Vec<[u32; 2]>>,
    /// Which pairs fail without `links`: `"links"` (default; pairs within
    /// reception range at the failure's instant) or `"pairs"` (every pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<FailureScope>,
    /// What a failed link does: `"blocked"` (default) or `"undecodable"`.
    #[serde(default, skip_serializing_if = "LinkEffect::is_blocked")]
    pub effect: LinkEffect,
    /// Failures start after this time (s); default 0.
    #[serde(default)]
    pub start_s: f64,
}

/// Everything that can fail in a run. All lists default to empty.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    #[serde(default)]
    pub node_switches: Vec<NodeSwitch>,
    #[serde(default)]
    pub link_outages: Vec<LinkOutage>,
    #[serde(default)]
    pub random_link_failures: Option<RandomLinkFailures>,
}

/// A fault parameter that cannot be used: the key, its value and what is allowed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{key} = {value}: must be {allowed}")]
pub struct FaultError {
    pub key: String,
    pub value: String,
    pub allowed: String,
}

fn invalid(key: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> FaultError {
    FaultError {
        key: key.into(),
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// The RNG entity of link (a, b): `(min(a,b) << 32) | max(a,b)`. Symmetric in
/// its arguments, injective over pairs of 32-bit node ids, and independent of
/// which other links exist.
pub fn link_entity(a: NodeId, b: NodeId) -> u64 {
    let (lo, hi) = (a.0.min(b.0), a.0.max(b.0));
    ((lo as u64) << 32) | hi as u64
}

/// Exp(mean) in whole nanoseconds, at least 1 ns (1 − U ∈ (0, 1], so ln is finite).
fn exp_ns(rng: &mut SimRng, mean_s: f64) -> u64 {
    let u = 1.0 - rng.gen::<f64>();
    ((-u.ln() * mean_s * 1e9).round() as u64).max(1)
}

/// The random failures of link (a, b) in `[start, until)`: alternating
/// LinkDown/LinkUp events (the last LinkUp is omitted if it falls at or after `until`).
pub fn random_link_failures(
    seed: u64,
    a: NodeId,
    b: NodeId,
    p: &RandomLinkFailures,
    until: SimTime,
) -> Vec<FaultEvent> {
    let mut out = Vec::new();
    if p.rate_per_s <= 0.0 {
        return out;
    }
    let mut g = LinkFailures::new(seed, a, b, p);
    while let Some(e) = g.next(until) {
        out.push(e);
    }
    out
}

/// One link's random failures, drawn one event at a time: the same draws, in
/// the same order, as drawing them all up front.
#[derive(Clone, Debug)]
struct LinkFailures {
    rng: SimRng,
    /// The time of the last event drawn (ns).
    t: u64,
    /// The last time drawn, also when it fell at or after the end (ns): a
    /// failure's duration when its repair comes after the run.
    drawn: u64,
    /// Whether the next event is a failure (else a repair).
    down_next: bool,
    /// Scope "links": the last failure fell while the pair was out of range,
    /// so it and its repair are dropped.
    phantom: bool,
    a: u32,
    b: u32,
    effect: LinkEffect,
    mean_up_s: f64,
    mean_down_s: f64,
}

impl LinkFailures {
    fn new(seed: u64, a: NodeId, b: NodeId, p: &RandomLinkFailures) -> Self {
        let t = SimTime::from_secs_f64(p.start_s).0;
        LinkFailures {
            rng: stream(seed, link_entity(a, b), Component::Faults),
            t,
            drawn: t,
            down_next: true,
            phantom: false,
            a: a.0,
            b: b.0,
            effect: p.effect,
            mean_up_s: 1.0 / p.rate_per_s,
            mean_down_s: p.mean_duration_s,
        }
    }

    /// The next event before `until`, or `None` (and none after it).
    fn next(&mut self, until: SimTime) -> Option<FaultEvent> {
        let (mean, kind) = if self.down_next {
            (self.mean_up_s, FaultKind::LinkDown)
        } else {
            (self.mean_down_s, FaultKind::LinkUp)
        };
        self.t = self.t.saturating_add(exp_ns(&mut self.rng, mean));
        self.drawn = self.t;
        if self.t >= until.0 {
            self.t = u64::MAX;
            return None;
        }
        self.down_next = !self.down_next;
        Some(FaultEvent::link(SimTime(self.t), kind, self.a, self.b).with_effect(self.effect))
    }
}

/// A fault's place in a schedule ([`FaultEvent::key`]).
type FaultKey = (SimTime, NodeId, Option<NodeId>, FaultKind);

/// Every fault of a run in schedule order (time, node a, node b, kind), drawn
/// as the run goes: memory is one generator per failing link, not one entry
/// per fault, and a run with a huge failure rate starts at once (its event
/// loop sees Ctrl-C). Yields exactly [`FaultSchedule::build`]'s events.
#[derive(Clone)]
pub struct FaultStream {
    /// Node switches and scripted outages, sorted (a few per scenario entry),
    /// each failure with its record.
    scripted: Vec<(FaultEvent, Option<Failure>)>,
    next_scripted: usize,
    /// Each failing link's next event, smallest first, with its generator's index.
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(FaultKey, u32)>>,
    links: Vec<LinkFailures>,
    /// Scope "links": which pairs are links at an instant.
    in_range: Option<InRange>,
    until: SimTime,
}

impl fmt::Debug for FaultStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultStream")
            .field("scripted", &self.scripted)
            .field("next_scripted", &self.next_scripted)
            .field("links", &self.links.len())
            .field("scope_links", &self.in_range.is_some())
            .field("until", &self.until)
            .finish()
    }
}

impl FaultStream {
    /// Validate `spec` against `node_count`; events before `until` will be
    /// drawn. Random failures with scope `"links"` need positions: see
    /// [`FaultStream::with_range`] (here they are an error).
    pub fn new(
        spec: &FaultSpec,
        seed: u64,
        node_count: u32,
        until: SimTime,
    ) -> Result<FaultStream, FaultError> {
        Self::with_range(spec, seed, node_count, until, None)
    }

    /// [`FaultStream::new`], with `in_range` telling links from other pairs
    /// (scope `"links"`; not read otherwise).
    pub fn with_range(
        spec: &FaultSpec,
        seed: u64,
        node_count: u32,
        until: SimTime,
        in_range: Option<InRange>,
    ) -> Result<FaultStream, FaultError> {
        let mut events: Vec<(FaultEvent, Option<Failure>)> = Vec::new();
        let node = |key: String, n: u32| {
            if n < node_count {
                Ok(n)
            } else {
                Err(invalid(key, n, format!("a node id below {node_count}")))
            }
        };
        let time = |key: String, s: f64| {
            if s.is_finite() && s >= 0.0 {
                Ok(SimTime::from_secs_f64(s))
            } else {
                Err(invalid(key, s, "a finite number >= 0 (s)"))
            }
        };
        let scripted = |e: FaultEvent, end: Option<SimTime>| Failure {
            time: e.time,
            kind: e.kind,
            a: e.a,
            b: e.b,
            duration: end.map(|t| t.since(e.time)),
            cause: FailureCause::Scripted,
            effect: e.effect,
        };
        for (i, sw) in spec.node_switches.iter().enumerate() {
            let k = format!("faults.node_switches[{i}]");
            let n = node(format!("{k}.node"), sw.node)?;
            let off = time(format!("{k}.off_s"), sw.off_s)?;
            let e = FaultEvent::node(off, FaultKind::NodeOff, n);
            let mut on = None;
            if let Some(on_s) = sw.on_s {
                let t = time(format!("{k}.on_s"), on_s)?;
                if t <= off {
                    return Err(invalid(format!("{k}.on_s"), on_s, "later than off_s"));
                }
                on = Some(t);
            }
            events.push((e, Some(scripted(e, on))));
            if let Some(on) = on {
                events.push((FaultEvent::node(on, FaultKind::NodeOn, n), None));
            }
        }
        for (i, o) in spec.link_outages.iter().enumerate() {
            let k = format!("faults.link_outages[{i}]");
            let (a, b) = (node(format!("{k}.a"), o.a)?, node(format!("{k}.b"), o.b)?);
            if a == b {
                return Err(invalid(format!("{k}.b"), b, "a node other than a"));
            }
            let down = time(format!("{k}.down_s"), o.down_s)?;
            let e = FaultEvent::link(down, FaultKind::LinkDown, a, b);
            let mut up = None;
            if let Some(up_s) = o.up_s {
                let t = time(format!("{k}.up_s"), up_s)?;
                if t <= down {
                    return Err(invalid(format!("{k}.up_s"), up_s, "later than down_s"));
                }
                up = Some(t);
            }
            events.push((e, Some(scripted(e, up))));
            if let Some(up) = up {
                events.push((FaultEvent::link(up, FaultKind::LinkUp, a, b), None));
            }
        }
        events.retain(|(e, _)| e.time < until);
        // Stable: equal keys are equal events, kept in the order listed.
        events.sort_by_key(|(e, _)| e.key());
        let mut st = FaultStream {
            scripted: events,
            next_scripted: 0,
            heap: Default::default(),
            links: Vec::new(),
            in_range: None,
            until,
        };
        if let Some(p) = &spec.random_link_failures {
            let k = "faults.random_link_failures";
            if !(p.rate_per_s.is_finite() && p.rate_per_s >= 0.0) {
                return Err(invalid(
                    format!("{k}.rate_per_s"),
                    p.rate_per_s,
                    "a finite number >= 0 (failures/s)",
                ));
            }
            if !(p.mean_duration_s.is_finite() && p.mean_duration_s > 0.0) {
                return Err(invalid(
                    format!("{k}.mean_duration_s"),
                    p.mean_duration_s,
                    "a finite number > 0 (s)",
                ));
            }
            time(format!("{k}.start_s"), p.start_s)?;
            let pairs: Vec<(u32, u32)> = match &p.links {
                None => {
                    if p.scope.unwrap_or_default() == FailureScope::Links {
                        st.in_range = Some(in_range.ok_or_else(|| {
                            invalid(
                                format!("{k}.scope"),
                                "\"links\"",
                                "\"pairs\" or a `links` list where no positions are known",
                            )
                        })?);
                    }
                    (0..node_count)
                        .flat_map(|a| (a + 1..node_count).map(move |b| (a, b)))
                        .collect()
                }
                Some(_) if p.scope.is_some() => return Err(invalid(
                    format!("{k}.scope"),
                    format!("{:?}", p.scope.unwrap_or_default()).to_lowercase(),
                    "left out with a `links` list (the listed pairs fail whatever their distance)",
                )),
                Some(list) => {
                    let mut v = Vec::with_capacity(list.len());
                    for (i, [a, b]) in list.iter().copied().enumerate() {
                        let (a, b) = (
                            node(format!("{k}.links[{i}][0]"), a)?,
                            node(format!("{k}.links[{i}][1]"), b)?,
                        );
                        if a == b {
                            return Err(invalid(
                                format!("{k}.links[{i}]"),
                                format!("[{a}, {b}]"),
                                "two different nodes",
                            ));
                        }
                        v.push((a.min(b), a.max(b)));
                    }
                    // A pair listed twice would just repeat the same draws.
                    v.sort_unstable();
                    v.dedup();
                    v
                }
            };
            if p.rate_per_s > 0.0 {
                for (a, b) in pairs {
                    let mut g = LinkFailures::new(seed, NodeId(a), NodeId(b), p);
                    if let Some(e) = g.next(until) {
                        st.heap
                            .push(std::cmp::Reverse((e.key(), st.links.len() as u32)));
                        st.links.push(g);
                    }
                }
            }
        }
        Ok(st)
    }

    /// Links with random failures still to come (each holds one generator).
    pub fn failing_links(&self) -> usize {
        self.links.len()
    }

    /// The next fault in schedule order, with its [`Failure`] record when it
    /// starts a failure (a node off, a link down); a scripted event before a
    /// random one with the same key. With scope `"links"`, a random failure of
    /// a pair out of range at its instant is skipped, and so is its repair.
    pub fn next_fault(&mut self) -> Option<(FaultEvent, Option<Failure>)> {
        loop {
            let scripted = self.scripted.get(self.next_scripted).copied();
            let random = self.heap.peek().map(|r| r.0 .0);
            match (scripted, random) {
                (None, None) => return None,
                (Some(e), r) if r.is_none_or(|k| e.0.key() <= k) => {
                    self.next_scripted += 1;
                    return Some(e);
                }
                _ => {}
            }
            let std::cmp::Reverse(((time, a, b, kind), i)) = self.heap.pop().expect("peeked");
            let g = &mut self.links[i as usize];
            let effect = g.effect;
            if let Some(e) = g.next(self.until) {
                self.heap.push(std::cmp::Reverse((e.key(), i)));
            }
            let e = FaultEvent {
                time,
                kind,
                a,
                b,
                effect,
            };
            if kind == FaultKind::LinkUp {
                if std::mem::take(&mut g.phantom) {
                    continue;
                }
                return Some((e, None));
            }
            if let Some(in_range) = &self.in_range {
                if !in_range(time, a, b.expect("a link event")) {
                    g.phantom = true;
                    continue;
                }
            }
            let failure = Failure {
                time,
                kind,
                a,
                b,
                // The repair was just drawn (`drawn`, also when after the end).
                duration: Some(SimDuration(g.drawn - time.0)),
                cause: FailureCause::Random,
                effect,
            };
            return Some((e, Some(failure)));
        }
    }
}

impl Iterator for FaultStream {
    type Item = FaultEvent;

    /// The next fault in schedule order ([`FaultStream::next_fault`]).
    fn next(&mut self) -> Option<FaultEvent> {
        self.next_fault().map(|(e, _)| e)
    }
}

/// Every fault of a run, sorted by (time, node a, node b, kind): deterministic
/// for a given (spec, seed, node count, until).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultSchedule {
    events: Vec<FaultEvent>,
}

impl FaultSchedule {
    /// Validate `spec` against `node_count` and generate all events before
    /// `until` (a run draws them as it goes: [`FaultStream`]).
    pub fn build(
        spec: &FaultSpec,
        seed: u64,
        node_count: u32,
        until: SimTime,
    ) -> Result<FaultSchedule, FaultError> {
        Self::with_range(spec, seed, node_count, until, None)
    }

    /// [`FaultSchedule::build`] with scope `"links"`'s range ([`FaultStream::with_range`]).
    pub fn with_range(
        spec: &FaultSpec,
        seed: u64,
        node_count: u32,
        until: SimTime,
        in_range: Option<InRange>,
    ) -> Result<FaultSchedule, FaultError> {
        Ok(FaultSchedule {
            events: FaultStream::with_range(spec, seed, node_count, until, in_range)?.collect(),
        })
    }

    /// All events, sorted.
    pub fn events(&self) -> &[FaultEvent] {
        &self.events
    }

    pub fn into_events(self) -> Vec<FaultEvent> {
        self.events
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// Current fault state, updated by applying events in order. Causes compose by
/// counting: a link taken down by a scripted outage and a random failure at once
/// comes back only when both have ended (an extra "up" never makes a count
/// negative), and it is blocked while any blocking cause holds it.
#[derive(Clone, Debug, Default)]
pub struct FaultState {
    nodes_off: HashMap<NodeId, u32>,
    /// Causes holding each failed link down, by effect: `[blocked, undecodable]`.
    links_down: HashMap<(NodeId, NodeId), [u32; 2]>,
}

impl FaultState {
    pub fn new() -> FaultState {
        FaultState::default()
    }

    pub fn apply(&mut self, e: &FaultEvent) {
        fn inc<K: std::hash::Hash + Eq>(m: &mut HashMap<K, u32>, k: K) {
            *m.entry(k).or_insert(0) += 1;
        }
        fn dec<K: std::hash::Hash + Eq>(m: &mut HashMap<K, u32>, k: K) {
            if let Some(c) = m.get_mut(&k) {
                *c -= 1;
                if *c == 0 {
                    m.remove(&k);
                }
            }
        }
        let pair = (e.a, e.b.unwrap_or(e.a));
        let i = e.effect as usize;
        match e.kind {
            FaultKind::NodeOff => inc(&mut self.nodes_off, e.a),
            FaultKind::NodeOn => dec(&mut self.nodes_off, e.a),
            FaultKind::LinkDown => self.links_down.entry(pair).or_default()[i] += 1,
            FaultKind::LinkUp => {
                if let Some(c) = self.links_down.get_mut(&pair) {
                    c[i] = c[i].saturating_sub(1);
                    if *c == [0, 0] {
                        self.links_down.remove(&pair);
                    }
                }
            }
        }
    }

    pub fn node_up(&self, n: NodeId) -> bool {
        !self.nodes_off.contains_key(&n)
    }

    /// Whether any link is down now (lets callers skip per-pair look-ups).
    pub fn any_link_down(&self) -> bool {
        !self.links_down.is_empty()
    }

    /// Whether the link itself is up (regardless of its end nodes).
    pub fn link_up(&self, a: NodeId, b: NodeId) -> bool {
        !self.links_down.contains_key(&(a.min(b), a.max(b)))
    }

    /// What the link does to a signal now: `None` when it is up, else the
    /// effect of its failure (blocked if any cause blocks it).
    pub fn link_effect(&self, a: NodeId, b: NodeId) -> Option<LinkEffect> {
        self.links_down.get(&(a.min(b), a.max(b))).map(|c| {
            if c[LinkEffect::Blocked as usize] > 0 {
                LinkEffect::Blocked
            } else {
                LinkEffect::Undecodable
            }
        })
    }

    /// Whether a frame can cross between `a` and `b`: both nodes on, link up.
    pub fn can_communicate(&self, a: NodeId, b: NodeId) -> bool {
        self.node_up(a) && self.node_up(b) && self.link_up(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    fn failures(rate: f64, mean: f64, links: Option<Vec<[u32; 2]>>) -> FaultSpec {
        FaultSpec {
            random_link_failures: Some(RandomLinkFailures {
                rate_per_s: rate,
                mean_duration_s: mean,
                scope: links.is_none().then_some(FailureScope::Pairs),
                links,
                effect: LinkEffect::Blocked,
                start_s: 0.0,
            }),
            ..FaultSpec::default()
        }
    }

    #[test]
    fn link_entity_is_symmetric_and_injective() {
        assert_eq!(
            link_entity(NodeId(3), NodeId(7)),
            link_entity(NodeId(7), NodeId(3))
        );
        assert_eq!(link_entity(NodeId(3), NodeId(7)), (3 << 32) | 7);
        assert_ne!(
            link_entity(NodeId(0), NodeId(1)),
            link_entity(NodeId(1), NodeId(2))
        );
    }

    #[test]
    fn scripted_faults_are_sorted_and_compose() {
        let spec = FaultSpec {
            node_switches: vec![NodeSwitch {
                node: 2,
                off_s: 5.0,
                on_s: Some(8.0),
            }],
            link_outages: vec![
                LinkOutage {
                    a: 1,
                    b: 0,
                    down_s: 1.0,
                    up_s: Some(4.0),
                },
                LinkOutage {
                    a: 0,
                    b: 1,
                    down_s: 2.0,
                    up_s: Some(3.0),
                },
            ],
            random_link_failures: None,
        };
        let sch = FaultSchedule::build(&spec, 1, 3, s(100.0)).unwrap();
        let ev = sch.events();
        let times: Vec<f64> = ev.iter().map(|e| e.time.as_secs_f64()).collect();
        assert_eq!(times, vec![1.0, 2.0, 3.0, 4.0, 5.0, 8.0]);
        let mut st = FaultState::new();
        let mut up_after = Vec::new();
        for e in ev {
            st.apply(e);
            up_after.push((st.link_up(NodeId(0), NodeId(1)), st.node_up(NodeId(2))));
        }
        // The 2–3 s outage nests inside 1–4 s: the link is back only at 4 s.
        assert_eq!(
            up_after,
            vec![
                (false, true),
                (false, true),
                (false, true),
                (true, true),
                (true, false),
                (true, true)
            ]
        );
        assert!(!FaultState {
            nodes_off: [(NodeId(2), 1)].into(),
            ..FaultState::new()
        }
        .can_communicate(NodeId(1), NodeId(2)));
    }

    #[test]
    fn events_serialize_for_logs() {
        let e = FaultEvent::link(s(12.5), FaultKind::LinkDown, 7, 3);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"time_ns":12500000000,"time_s":12.5,"kind":"link_down","nodes":[3,7]}"#
        );
        assert_eq!(e.to_string(), "12.500000000s link_down 3 7");
        let n = FaultEvent::node(s(1.0), FaultKind::NodeOff, 4);
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"time_ns":1000000000,"time_s":1.0,"kind":"node_off","nodes":[4]}"#
        );
    }

    #[test]
    fn bad_specs_name_the_key() {
        let sw = FaultSpec {
            node_switches: vec![NodeSwitch {
                node: 9,
                off_s: 1.0,
                on_s: None,
            }],
            ..FaultSpec::default()
        };
        assert_eq!(
            FaultSchedule::build(&sw, 1, 3, s(10.0)).unwrap_err().key,
            "faults.node_switches[0].node"
        );
        let sw = FaultSpec {
            node_switches: vec![NodeSwitch {
                node: 0,
                off_s: 5.0,
                on_s: Some(5.0),
            }],
            ..FaultSpec::default()
        };
        assert_eq!(
            FaultSchedule::build(&sw, 1, 3, s(10.0)).unwrap_err().key,
            "faults.node_switches[0].on_s"
        );
        let e = FaultSchedule::build(&failures(-1.0, 1.0, None), 1, 3, s(10.0)).unwrap_err();
        assert_eq!(e.key, "faults.random_link_failures.rate_per_s");
        let e = FaultSchedule::build(&failures(1.0, 0.0, None), 1, 3, s(10.0)).unwrap_err();
        assert_eq!(e.key, "faults.random_link_failures.mean_duration_s");
        let e = FaultSchedule::build(&failures(1.0, 1.0, Some(vec![[1, 1]])), 1, 3, s(10.0))
            .unwrap_err();
        assert_eq!(e.key, "faults.random_link_failures.links[0]");
    }

    #[test]
    fn a_links_failures_do_not_depend_on_other_links() {
        let until = s(10_000.0);
        let only =
            FaultSchedule::build(&failures(0.01, 10.0, Some(vec![[2, 5]])), 42, 6, until).unwrap();
        let all = FaultSchedule::build(&failures(0.01, 10.0, None), 42, 60, until).unwrap();
        let of_pair: Vec<FaultEvent> = all
            .events()
            .iter()
            .filter(|e| e.a == NodeId(2) && e.b == Some(NodeId(5)))
            .copied()
            .collect();
        assert!(!of_pair.is_empty());
        assert_eq!(only.events(), &of_pair[..]);
        // Same seed, same schedule; another seed, another.
        assert_eq!(
            all,
            FaultSchedule::build(&failures(0.01, 10.0, None), 42, 60, until).unwrap()
        );
        assert_ne!(
            only,
            FaultSchedule::build(&failures(0.01, 10.0, Some(vec![[2, 5]])), 43, 6, until).unwrap()
        );
        // Down and up alternate per link, starting with down.
        for w in of_pair.windows(2) {
            assert_ne!(w[0].kind, w[1].kind);
            assert!(w[0].time < w[1].time);
        }
        assert_eq!(of_pair[0].kind, FaultKind::LinkDown);
    }

    /// The old up-front schedule (every pair's draws, then one stable sort),
    /// written out independently: the lazy stream must give the same events.
    fn up_front(spec: &FaultSpec, seed: u64, n: u32, until: SimTime) -> Vec<FaultEvent> {
        let mut events = Vec::new();
        for sw in &spec.node_switches {
            events.push(FaultEvent::node(s(sw.off_s), FaultKind::NodeOff, sw.node));
            if let Some(on) = sw.on_s {
                events.push(FaultEvent::node(s(on), FaultKind::NodeOn, sw.node));
            }
        }
        for o in &spec.link_outages {
            events.push(FaultEvent::link(s(o.down_s), FaultKind::LinkDown, o.a, o.b));
            if let Some(up) = o.up_s {
                events.push(FaultEvent::link(s(up), FaultKind::LinkUp, o.a, o.b));
            }
        }
        let p = spec.random_link_failures.as_ref().unwrap();
        for a in 0..n {
            for b in a + 1..n {
                let mut rng = stream(seed, link_entity(NodeId(a), NodeId(b)), Component::Faults);
                let mut t = s(p.start_s).0;
                loop {
                    t = t.saturating_add(exp_ns(&mut rng, 1.0 / p.rate_per_s));
                    if t >= until.0 {
                        break;
                    }
                    events.push(FaultEvent::link(SimTime(t), FaultKind::LinkDown, a, b));
                    t = t.saturating_add(exp_ns(&mut rng, p.mean_duration_s));
                    if t >= until.0 {
                        break;
                    }
                    events.push(FaultEvent::link(SimTime(t), FaultKind::LinkUp, a, b));
                }
            }
        }
        events.retain(|e| e.time < until);
        events.sort_by_key(FaultEvent::key);
        events
    }

    #[test]
    fn drawn_as_the_run_goes_equals_drawn_up_front() {
        let until = s(500.0);
        let mut spec = failures(0.05, 4.0, None);
        spec.node_switches = vec![
            NodeSwitch {
                node: 3,
                off_s: 10.0,
                on_s: Some(20.0),
            },
            NodeSwitch {
                node: 1,
                off_s: 600.0,
                on_s: None,
            },
        ];
        spec.link_outages = vec![LinkOutage {
            a: 4,
            b: 2,
            down_s: 0.0,
            up_s: Some(250.0),
        }];
        for seed in [1, 7, 2024] {
            let lazy: Vec<FaultEvent> = FaultStream::new(&spec, seed, 12, until).unwrap().collect();
            let reference = up_front(&spec, seed, 12, until);
            assert!(reference.len() > 100, "{}", reference.len());
            assert_eq!(lazy, reference, "seed {seed}");
        }
    }

    #[test]
    fn a_huge_rate_starts_at_once_and_holds_one_generator_per_link() {
        // 05b_random_link_failures_oom: 10^9 failures/s for 100 s was a 3 GB
        // vector built before the first event. Now: one generator, events on demand.
        let spec = failures(1e9, 1e-9, Some(vec![[0, 1]]));
        let mut st = FaultStream::new(&spec, 1, 2, s(100.0)).unwrap();
        assert_eq!(st.failing_links(), 1);
        let first: Vec<FaultEvent> = st.by_ref().take(1000).collect();
        assert_eq!(first.len(), 1000);
        assert!(first
            .windows(2)
            .all(|w| w[0].time < w[1].time && w[0].kind != w[1].kind));
        assert!(first[999].time < s(1e-3), "{}", first[999].time);
    }

    /// A line of nodes 100 m apart: pairs within 150 m (neighbours) are links.
    fn line_range() -> InRange {
        std::sync::Arc::new(|_, a: NodeId, b: NodeId| a.0.abs_diff(b.0) == 1)
    }

    fn scoped(scope: Option<FailureScope>, effect: LinkEffect) -> FaultSpec {
        FaultSpec {
            random_link_failures: Some(RandomLinkFailures {
                rate_per_s: 0.05,
                mean_duration_s: 4.0,
                links: None,
                scope,
                effect,
                start_s: 0.0,
            }),
            ..FaultSpec::default()
        }
    }

    #[test]
    fn scope_links_keeps_the_pairs_failures_of_links_in_range() {
        // A static range: scope "links" is scope "pairs" restricted to the
        // pairs in range, draw for draw (phantom failures drop their repairs).
        let until = s(2000.0);
        let pairs = scoped(Some(FailureScope::Pairs), LinkEffect::Blocked);
        let links = scoped(None, LinkEffect::Blocked);
        for seed in [1, 5] {
            let all = FaultSchedule::with_range(&pairs, seed, 8, until, None).unwrap();
            let kept =
                FaultSchedule::with_range(&links, seed, 8, until, Some(line_range())).unwrap();
            let expected: Vec<FaultEvent> = all
                .events()
                .iter()
                .filter(|e| e.a.0.abs_diff(e.b.unwrap().0) == 1)
                .copied()
                .collect();
            assert!(expected.len() > 50 && expected.len() < all.events().len() / 2);
            assert_eq!(kept.events(), &expected[..], "seed {seed}");
        }
    }

    #[test]
    fn a_failure_out_of_range_at_its_instant_is_dropped_with_its_repair() {
        // The pair (0, 1) is in range only in [100 s, 200 s): every failure kept
        // starts then, each is followed by its own repair, and they are the
        // pair-scope failures that start then.
        let until = s(3000.0);
        let range: InRange = std::sync::Arc::new(|t: SimTime, _, _| t >= s(100.0) && t < s(200.0));
        let mut spec = scoped(None, LinkEffect::Blocked);
        let mut st = FaultStream::with_range(&spec, 3, 2, until, Some(range)).unwrap();
        let mut kept = Vec::new();
        while let Some(x) = st.next_fault() {
            kept.push(x);
        }
        spec.random_link_failures.as_mut().unwrap().scope = Some(FailureScope::Pairs);
        let all: Vec<FaultEvent> = FaultStream::new(&spec, 3, 2, until).unwrap().collect();
        let mut expected = Vec::new();
        for w in all.chunks(2) {
            if w[0].time >= s(100.0) && w[0].time < s(200.0) {
                expected.extend_from_slice(w);
            }
        }
        assert!(!expected.is_empty());
        let events: Vec<FaultEvent> = kept.iter().map(|x| x.0).collect();
        assert_eq!(events, expected);
        // Each failure's record: its duration is the time to its repair.
        for w in kept.chunks(2) {
            let f = w[0].1.expect("a failure has its record");
            assert_eq!(f.cause, FailureCause::Random);
            if let Some(up) = w.get(1) {
                assert!(up.1.is_none());
                assert_eq!(f.time + f.duration.unwrap(), up.0.time);
            }
        }
    }

    #[test]
    fn the_last_failure_keeps_its_drawn_duration_past_the_end() {
        let spec = failures(0.05, 1e6, Some(vec![[0, 1]]));
        let mut st = FaultStream::new(&spec, 9, 2, s(1000.0)).unwrap();
        let (e, f) = st.next_fault().unwrap();
        assert_eq!(e.kind, FaultKind::LinkDown);
        assert!(
            st.next_fault().is_none(),
            "a mean of 10^6 s outlasts the run"
        );
        let f = f.unwrap();
        assert!(f.time + f.duration.unwrap() > s(1000.0));
    }

    #[test]
    fn scope_rules_are_checked() {
        let until = s(10.0);
        // "links" (the default) needs to know which pairs are in range.
        let e = FaultStream::new(&scoped(None, LinkEffect::Blocked), 1, 3, until).unwrap_err();
        assert_eq!(e.key, "faults.random_link_failures.scope");
        // A listed set fails as listed: a scope beside it is an error.
        let mut spec = failures(0.01, 1.0, Some(vec![[0, 2]]));
        spec.random_link_failures.as_mut().unwrap().scope = Some(FailureScope::Links);
        let e = FaultStream::with_range(&spec, 1, 3, until, Some(line_range())).unwrap_err();
        assert_eq!(e.key, "faults.random_link_failures.scope");
        // A listed pair out of range still fails (the range is not asked).
        let spec = failures(10.0, 1.0, Some(vec![[0, 2]]));
        let sch = FaultSchedule::with_range(&spec, 1, 3, until, Some(line_range())).unwrap();
        assert!(!sch.is_empty());
    }

    #[test]
    fn scripted_failures_record_their_durations() {
        let spec = FaultSpec {
            node_switches: vec![NodeSwitch {
                node: 2,
                off_s: 5.0,
                on_s: Some(8.0),
            }],
            link_outages: vec![LinkOutage {
                a: 1,
                b: 0,
                down_s: 1.0,
                up_s: None,
            }],
            random_link_failures: None,
        };
        let recs: Vec<Failure> = std::iter::from_fn({
            let mut st = FaultStream::new(&spec, 1, 3, s(100.0)).unwrap();
            move || st.next_fault()
        })
        .filter_map(|x| x.1)
        .collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs[0].a, recs[0].b, recs[0].duration),
            (NodeId(0), Some(NodeId(1)), None)
        );
        assert_eq!(recs[1].kind, FaultKind::NodeOff);
        assert_eq!(recs[1].duration, Some(SimDuration(3_000_000_000)));
        assert_eq!(
            serde_json::to_string(&recs[1]).unwrap(),
            r#"{"time_s":5.0,"kind":"node_off","a":2,"b":null,"duration_s":3.0,"cause":"scripted","effect":null}"#
        );
    }

    #[test]
    fn a_blocking_cause_outranks_an_undecodable_one() {
        let (a, b) = (NodeId(0), NodeId(1));
        let lossy = |k| FaultEvent::link(s(1.0), k, 0, 1).with_effect(LinkEffect::Undecodable);
        let wall = |k| FaultEvent::link(s(1.0), k, 0, 1);
        let mut st = FaultState::new();
        st.apply(&lossy(FaultKind::LinkDown));
        assert_eq!(st.link_effect(a, b), Some(LinkEffect::Undecodable));
        assert!(!st.can_communicate(a, b));
        st.apply(&wall(FaultKind::LinkDown));
        assert_eq!(st.link_effect(b, a), Some(LinkEffect::Blocked));
        st.apply(&wall(FaultKind::LinkUp));
        assert_eq!(st.link_effect(a, b), Some(LinkEffect::Undecodable));
        st.apply(&lossy(FaultKind::LinkUp));
        assert_eq!(st.link_effect(a, b), None);
        assert!(!st.any_link_down());
        // An undecodable link's events say so in the log; a blocked one's as before.
        assert_eq!(
            serde_json::to_string(&lossy(FaultKind::LinkDown)).unwrap(),
            r#"{"time_ns":1000000000,"time_s":1.0,"kind":"link_down","nodes":[0,1],"effect":"undecodable"}"#
        );
    }
}
