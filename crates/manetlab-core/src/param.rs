//! One declaration per model parameter.
//!
//! A model declares its parameter struct with [`params!`](crate::params): each
//! field once, with its scenario key (unit in the name), unit, default, allowed
//! range, source (RFC section, ns-2 file or variable), ns-2 Tcl binding when
//! ns-2 lets a script set it, and its doc comment. The macro generates the
//! struct, its `Default`, and a [`ParamSet`] impl: the [`ParamInfo`] table, and
//! `set`/`get` by scenario key with the unit conversion and range check. The
//! scenario schema keeps the keys a file gives in an [`Overrides`] and applies
//! them to a base (the [`Fidelity`] profile's values); docs/scenarios.md's
//! parameter tables are generated from the table ([`markdown_table`],
//! `cargo run --example param_docs`), and so is export-ns2's mapping of keys
//! to ns-2 Tcl variables (`manetlab._core.param_table()`), in the manner of
//! ns-3's `AddAttribute(name, doc, default, checker)` and INET's NED.
//!
//! This module sits beside `sim`: models import it, it imports no model.

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

use crate::sim::SimDuration;

/// Whose behaviour a run's defaults reproduce (`fidelity` at the top of a
/// scenario): every layer takes its defaults from the same profile, and each
/// parameter can still be set on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum Fidelity {
    /// ns-2.35's values and rules, its bugs included (the default).
    #[default]
    #[serde(rename = "ns2-2.35")]
    Ns2,
    /// The standards as written: RFC 3561 for AODV, IEEE 802.11 for the DCF.
    #[serde(rename = "standard")]
    Standard,
}

impl Fidelity {
    pub const ALL: [Fidelity; 2] = [Fidelity::Ns2, Fidelity::Standard];
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Ns2 => "ns2-2.35",
            Fidelity::Standard => "standard",
        }
    }
}

/// A scenario unit: its name and how many model units one of it is (seconds
/// for durations, bit/s for rates; 1 for plain numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    pub name: &'static str,
    pub scale: f64,
}

pub const NONE: Unit = Unit {
    name: "",
    scale: 1.0,
};
pub const S: Unit = Unit {
    name: "s",
    scale: 1.0,
};
pub const MS: Unit = Unit {
    name: "ms",
    scale: 1e-3,
};
pub const US: Unit = Unit {
    name: "µs",
    scale: 1e-6,
};
pub const MBPS: Unit = Unit {
    name: "Mb/s",
    scale: 1e6,
};
pub const BYTES: Unit = Unit {
    name: "bytes",
    scale: 1.0,
};
pub const PKTS: Unit = Unit {
    name: "packets",
    scale: 1.0,
};
pub const HOPS: Unit = Unit {
    name: "hops",
    scale: 1.0,
};
pub const SLOTS: Unit = Unit {
    name: "slots",
    scale: 1.0,
};
pub const ATTEMPTS: Unit = Unit {
    name: "attempts",
    scale: 1.0,
};

/// Smallest time a period or timeout that must be positive may be (s): a
/// period of 0 ns would fire forever at one instant.
pub const MIN_POSITIVE_TIME_S: f64 = 1e-6;
/// Largest time parameter (s): every timer stays far inside simulated time.
pub const MAX_TIME_S: f64 = 1e6;

/// What values a parameter takes (checked when a scenario sets it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Allowed {
    /// Every value of the type (booleans).
    Any,
    /// An integer in `lo..=hi` (`hi` = the type's maximum: no upper bound).
    Int { lo: u64, hi: u64 },
    /// A finite number in `lo..=hi` (in the scenario unit).
    Real { lo: f64, hi: f64 },
    /// A time in the scenario unit: 0 (or [`MIN_POSITIVE_TIME_S`] when
    /// `positive`) up to [`MAX_TIME_S`].
    Time { positive: bool },
    /// One of these names.
    Choice(&'static [&'static str]),
}

impl Allowed {
    /// What is allowed, as docs and messages say it.
    pub fn describe(&self, unit: Unit, type_max: u64) -> String {
        match *self {
            Allowed::Any => String::new(),
            // "1..=255" says more than ">= 1" for a byte-sized field.
            Allowed::Int { lo, hi } if hi >= type_max && type_max >= u32::MAX as u64 => {
                format!(">= {lo}")
            }
            Allowed::Int { lo, hi } if unit.name.is_empty() => format!("{lo}..={hi}"),
            Allowed::Int { lo, hi } => format!("{lo}..={hi} {}", unit.name),
            Allowed::Real { lo, hi } => format!("{} <= value <= {}", num(lo), num(hi)),
            Allowed::Time { positive } => {
                let (lo, hi) = time_bounds(positive, unit);
                format!("{} <= value <= {}", num(lo), num(hi))
            }
            Allowed::Choice(names) => names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

fn time_bounds(positive: bool, unit: Unit) -> (f64, f64) {
    let lo = if positive {
        MIN_POSITIVE_TIME_S / unit.scale
    } else {
        0.0
    };
    (lo, MAX_TIME_S / unit.scale)
}

// One number formatter for every message (defined in `sim`, the bottom layer).
pub(crate) use crate::sim::num;

/// One parameter, as declared once in its model.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// Scenario key (with its unit: `active_route_timeout_s`).
    pub key: &'static str,
    pub unit: Unit,
    pub allowed: Allowed,
    /// The type's largest value (for integers: an `Int` bound at it is no bound).
    pub type_max: u64,
    /// Where the value and rule come from: RFC section, ns-2 file or variable.
    pub source: &'static str,
    /// The ns-2 Tcl binding (`Mac/802_11 dataRate_`) when ns-2.35 lets a script
    /// set it; export-ns2 writes the key as this variable.
    pub ns2_tcl: Option<&'static str>,
    /// The field's doc comment.
    pub doc: &'static str,
}

impl ParamInfo {
    pub fn allowed_text(&self) -> String {
        self.allowed.describe(self.unit, self.type_max)
    }
}

/// A parameter struct declared with [`params!`](crate::params).
pub trait ParamSet: Clone + Default + 'static {
    /// Every parameter, in declaration order.
    const INFO: &'static [ParamInfo];
    /// A key naming the whole profile inside the section (AODV's `preset`),
    /// and its names for the profiles.
    const PROFILE_KEY: Option<(&'static str, &'static [(&'static str, Fidelity)])> = None;
    /// Set one parameter from its scenario value: the unit converted, the
    /// range checked; `Err` is the message after the key (one line).
    fn set(&mut self, key: &str, v: &Value) -> Result<(), String>;
    /// One parameter in its scenario unit.
    fn get(&self, key: &str) -> Option<Value>;
    /// The defaults of a fidelity profile.
    fn profile(f: Fidelity) -> Self;
    fn info(key: &str) -> Option<&'static ParamInfo> {
        Self::INFO.iter().find(|i| i.key == key)
    }
}

/// A field type a scenario can set: read from JSON in a unit, range checked.
pub trait ParamValue: Sized {
    /// The type's largest value (integers), for [`Allowed::Int`] without an upper bound.
    const TYPE_MAX: u64 = u64::MAX;
    fn read(v: &Value, unit: Unit, allowed: &Allowed) -> Result<Self, String>;
    fn write(&self, unit: Unit) -> Value;
}

fn typed<T: de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    // serde's own wording ("invalid type: ..., expected u8"), which the
    // scenario's error layer turns into its one-line messages.
    T::deserialize(v).map_err(|e| e.to_string())
}

fn out_of_range(shown: String, allowed: &Allowed, unit: Unit, type_max: u64) -> String {
    format!(
        "{shown} is out of range (allowed: {})",
        allowed.describe(unit, type_max)
    )
}

impl ParamValue for bool {
    fn read(v: &Value, _: Unit, _: &Allowed) -> Result<Self, String> {
        typed(v)
    }
    fn write(&self, _: Unit) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl ParamValue for $t {
            const TYPE_MAX: u64 = <$t>::MAX as u64;
            fn read(v: &Value, unit: Unit, allowed: &Allowed) -> Result<Self, String> {
                let x: $t = typed(v)?;
                if let Allowed::Int { lo, hi } = *allowed {
                    if (x as u64) < lo || (x as u64) > hi {
                        return Err(out_of_range(x.to_string(), allowed, unit, Self::TYPE_MAX));
                    }
                }
                Ok(x)
            }
            fn write(&self, _: Unit) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
int_param!(u8, u32);

fn real_in(x: f64, allowed: &Allowed, unit: Unit) -> Result<(), String> {
    let (lo, hi) = match *allowed {
        Allowed::Real { lo, hi } => (lo, hi),
        Allowed::Time { positive } => time_bounds(positive, unit),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    };
    if !(x.is_finite() && x >= lo && x <= hi) {
        return Err(out_of_range(num(x), allowed, unit, 0));
    }
    Ok(())
}

/// A plain number in the scenario unit times `unit.scale` (Mb/s → bit/s).
impl ParamValue for f64 {
    fn read(v: &Value, unit: Unit, allowed: &Allowed) -> Result<Self, String> {
        let x: f64 = typed(v)?;
        real_in(x, allowed, unit)?;
        Ok(x * unit.scale)
    }
    fn write(&self, unit: Unit) -> Value {
        Value::from(*self / unit.scale)
    }
}

impl ParamValue for SimDuration {
    fn read(v: &Value, unit: Unit, allowed: &Allowed) -> Result<Self, String> {
        let x: f64 = typed(v)?;
        real_in(x, allowed, unit)?;
        Ok(SimDuration::from_secs_f64(x * unit.scale))
    }
    fn write(&self, unit: Unit) -> Value {
        // Whole nanoseconds per unit, so 30 ms prints 30, not 29.999999999999996.
        let ns_per_unit = (unit.scale * 1e9).round();
        Value::from(self.0 as f64 / ns_per_unit)
    }
}

/// A fieldless enum whose serde names are its scenario values.
pub trait ParamChoice: Serialize + de::DeserializeOwned {
    const CHOICES: &'static [&'static str];
}

/// Implements [`ParamValue`] for [`ParamChoice`] enums (one line per enum).
#[macro_export]
macro_rules! param_choice {
    ($t:ty, [$($name:literal),* $(,)?]) => {
        impl $crate::param::ParamChoice for $t {
            const CHOICES: &'static [&'static str] = &[$($name),*];
        }
        impl $crate::param::ParamValue for $t {
            fn read(
                v: &serde_json::Value,
                _: $crate::param::Unit,
                _: &$crate::param::Allowed,
            ) -> Result<Self, String> {
                <$t as serde::Deserialize>::deserialize(v).map_err(|e| e.to_string())
            }
            fn write(&self, _: $crate::param::Unit) -> serde_json::Value {
                serde_json::to_value(self).expect("a fieldless enum serialises")
            }
        }
    };
}

/// Declares a parameter struct once: each field with its default and
/// `{ key, unit, allowed, source[, ns2] }`; generates the struct, `Default` and
/// [`ParamSet`] (see the module doc and docs/architecture.md).
///
/// ```ignore
/// params! {
///     /// Every AODV timer and constant.
///     #[derive(Clone, Copy, Debug, PartialEq)]
///     pub struct Params {
///         /// NODE_TRAVERSAL_TIME: a conservative per-hop delay.
///         pub node_traversal_time: SimDuration = SimDuration::from_millis(30),
///             { key: "node_traversal_time_ms", unit: MS, allowed: Time { positive: true },
///               source: "RFC 3561 §10 (40 ms); ns-2 aodv.h NODE_TRAVERSAL_TIME" },
///     }
///     profile(f) = match f { Fidelity::Ns2 => Params::default(), Fidelity::Standard => Params::rfc3561() };
/// }
/// ```
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $fvis:vis $field:ident : $ty:ty = $default:expr,
                {
                    key: $key:literal,
                    unit: $unit:ident,
                    allowed: $allowed:expr,
                    source: $source:literal
                    $(, ns2: $ns2:literal)?
                    $(,)?
                }
            ),* $(,)?
        }
        profile($f:ident) = $profile:expr;
        $(profile_key = $pk:expr;)?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[doc = $doc])*
                $fvis $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl $crate::param::ParamSet for $name {
            $(const PROFILE_KEY: Option<(&'static str, &'static [(&'static str, $crate::param::Fidelity)])> = Some($pk);)?
            const INFO: &'static [$crate::param::ParamInfo] = &[
                $($crate::param::ParamInfo {
                    key: $key,
                    unit: $crate::param::$unit,
                    allowed: {
                        #[allow(unused_imports)]
                        use $crate::param::Allowed::*;
                        $allowed
                    },
                    type_max: <$ty as $crate::param::ParamValue>::TYPE_MAX,
                    source: $source,
                    ns2_tcl: $crate::params!(@opt $($ns2)?),
                    doc: concat!($($doc, "\n"),*),
                },)*
            ];
            fn set(&mut self, key: &str, v: &serde_json::Value) -> Result<(), String> {
                match key {
                    $($key => {
                        #[allow(unused_imports)]
                        use $crate::param::Allowed::*;
                        self.$field = <$ty as $crate::param::ParamValue>::read(
                            v,
                            $crate::param::$unit,
                            &$allowed,
                        )?;
                    })*
                    _ => return Err(format!("{key} is not a parameter of {}", stringify!($name))),
                }
                Ok(())
            }
            fn get(&self, key: &str) -> Option<serde_json::Value> {
                match key {
                    $($key => Some($crate::param::ParamValue::write(&self.$field, $crate::param::$unit)),)*
                    _ => None,
                }
            }
            fn profile($f: $crate::param::Fidelity) -> Self {
                $profile
            }
        }
    };
    (@opt) => { None };
    (@opt $x:literal) => { Some($x) };
}

/// The keys a scenario section gives for a [`ParamSet`], checked when read;
/// [`Overrides::apply`] sets them on a base. Unset keys keep the base's value,
/// so the schema needs no `Option` copy of the model's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Overrides<P> {
    /// The section's profile key (AODV `preset`), when given.
    pub profile: Option<Fidelity>,
    /// (key, value) in the order given.
    given: Vec<(&'static str, Value)>,
    _p: PhantomData<P>,
}

impl<P> Default for Overrides<P> {
    fn default() -> Self {
        Overrides {
            profile: None,
            given: Vec::new(),
            _p: PhantomData,
        }
    }
}

impl<P: ParamSet> Overrides<P> {
    /// Whether the section sets `key`.
    pub fn given(&self, key: &str) -> bool {
        self.given.iter().any(|(k, _)| *k == key)
    }
    /// The value given for `key`, if any.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.given.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    /// The keys given, in the order given.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.given.iter().map(|(k, _)| *k)
    }
    /// `base` with every given key set, in declaration order.
    pub fn apply(&self, mut base: P) -> P {
        for info in P::INFO {
            if let Some(v) = self.value(info.key) {
                base.set(info.key, v)
                    .expect("checked when the scenario was read");
            }
        }
        base
    }
    /// Set `key` (checked as a scenario would be).
    pub fn insert(&mut self, key: &str, v: Value) -> Result<(), String> {
        let info = P::info(key).ok_or_else(|| format!("{key} is not a parameter"))?;
        P::default().set(key, &v)?;
        self.given.retain(|(k, _)| *k != info.key);
        self.given.push((info.key, v));
        Ok(())
    }
    fn profile_name(&self) -> Option<&'static str> {
        let (_, names) = P::PROFILE_KEY?;
        let f = self.profile?;
        names.iter().find(|(_, g)| *g == f).map(|(n, _)| *n)
    }
}

/// Reads one given parameter inside the map access, so the error's path ends
/// at its key (serde_path_to_error).
struct Checked<P>(&'static str, PhantomData<P>);

impl<'de, P: ParamSet> DeserializeSeed<'de> for Checked<P> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let v = Value::deserialize(d)?;
        P::default().set(self.0, &v).map_err(de::Error::custom)?;
        Ok(v)
    }
}

struct ProfileSeed<P>(PhantomData<P>);

impl<'de, P: ParamSet> DeserializeSeed<'de> for ProfileSeed<P> {
    type Value = Fidelity;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fidelity, D::Error> {
        let (_, names) = P::PROFILE_KEY.expect("a profile key");
        let s = String::deserialize(d)?;
        names
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                // serde's wording for an unknown variant, which the scenario's
                // error layer turns into `"x" is not allowed (allowed: ...)`.
                let list: Vec<String> = names.iter().map(|(n, _)| format!("`{n}`")).collect();
                let expected = match list.as_slice() {
                    [a, b] => format!("{a} or {b}"),
                    _ => format!("one of {}", list.join(", ")),
                };
                de::Error::custom(format_args!("unknown variant `{s}`, expected {expected}"))
            })
    }
}

impl<P: ParamSet> Overrides<P> {
    /// Read one key of a section: `Ok(false)` when it is none of this set's.
    pub fn read_key<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        if let Some((pk, _)) = P::PROFILE_KEY {
            if key == pk {
                self.profile = Some(map.next_value_seed(ProfileSeed::<P>(PhantomData))?);
                return Ok(true);
            }
        }
        let Some(info) = P::info(key) else {
            return Ok(false);
        };
        if self.given(info.key) {
            return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
        }
        let v = map.next_value_seed(Checked::<P>(info.key, PhantomData))?;
        self.given.push((info.key, v));
        Ok(true)
    }

    /// The error for a key that is neither this set's nor one of `extra`.
    pub fn unknown_key<E: de::Error>(key: &str, extra: &[&str]) -> E {
        let mut all: Vec<&str> = extra.to_vec();
        if let Some((pk, _)) = P::PROFILE_KEY {
            all.push(pk);
        }
        all.extend(P::INFO.iter().map(|i| i.key));
        let list: Vec<String> = all.iter().map(|k| format!("`{k}`")).collect();
        E::custom(format_args!(
            "unknown field `{key}`, expected one of {}",
            list.join(", ")
        ))
    }

    /// Write the given keys (profile first) into a map being serialised.
    pub fn serialize_into<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        if let (Some((pk, _)), Some(name)) = (P::PROFILE_KEY, self.profile_name()) {
            m.serialize_entry(pk, name)?;
        }
        // Declaration order: the normalised text does not depend on the input's.
        for info in P::INFO {
            if let Some(v) = self.value(info.key) {
                m.serialize_entry(info.key, v)?;
            }
        }
        Ok(())
    }

    /// Number of map entries [`serialize_into`](Self::serialize_into) writes.
    pub fn len(&self) -> usize {
        self.given.len() + usize::from(self.profile_name().is_some())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'de, P: ParamSet> Deserialize<'de> for Overrides<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<P>(PhantomData<P>);
        impl<'de, P: ParamSet> Visitor<'de> for V<P> {
            type Value = Overrides<P>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of parameters")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Overrides<P>, A::Error> {
                let mut o = Overrides::<P>::default();
                while let Some(key) = map.next_key::<String>()? {
                    if !o.read_key(&key, &mut map)? {
                        return Err(Overrides::<P>::unknown_key(&key, &[]));
                    }
                }
                Ok(o)
            }
        }
        d.deserialize_map(V::<P>(PhantomData))
    }
}

impl<P: ParamSet> Serialize for Overrides<P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        self.serialize_into(&mut m)?;
        m.end()
    }
}

/// One parameter table's rows as JSON (for `_core.param_table()` and export-ns2).
pub fn table_json<P: ParamSet>(section: &str) -> Value {
    let rows: Vec<Value> = P::INFO
        .iter()
        .map(|i| {
            let defaults: serde_json::Map<String, Value> = Fidelity::ALL
                .iter()
                .map(|&f| (f.name().to_string(), P::profile(f).get(i.key).unwrap()))
                .collect();
            serde_json::json!({
                "section": section,
                "key": i.key,
                "unit": i.unit.name,
                "scale": i.unit.scale,
                "allowed": i.allowed_text(),
                "defaults": defaults,
                "source": i.source,
                "ns2_tcl": i.ns2_tcl,
                "doc": one_line(i.doc),
            })
        })
        .collect();
    Value::Array(rows)
}

/// A doc comment as one line of Markdown: lines joined, rustdoc links
/// (`` [`X`] ``, `` [`x`](y) ``) reduced to their code text.
pub fn one_line(doc: &str) -> String {
    let joined = doc.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut rest = joined.trim();
    while let Some(i) = rest.find("[`") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find("`]") {
            Some(j) => {
                out.push_str(&after[..j + 1]);
                let mut tail = &after[j + 2..];
                if tail.starts_with('(') {
                    if let Some(k) = tail.find(')') {
                        tail = &tail[k + 1..];
                    }
                }
                rest = tail;
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace('|', "\\|")
}

/// A value as docs show it: numbers plain, strings quoted.
pub fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), num),
        Value::String(s) => format!("`\"{s}\"`"),
        other => other.to_string(),
    }
}

/// The Markdown table of one parameter set (docs/scenarios.md, generated).
pub fn markdown_table<P: ParamSet>() -> String {
    let mut s = String::from(
        "| key | unit | default (`ns2-2.35`) | `standard` | allowed | source | meaning |\n|---|---|---|---|---|---|---|\n",
    );
    for i in P::INFO {
        let d = |f| show(&P::profile(f).get(i.key).unwrap());
        let unit = match i.unit.name {
            "" if matches!(i.allowed, Allowed::Any) => "bool",
            "" if matches!(i.allowed, Allowed::Choice(_)) => "string",
            "" => "integer",
            u => u,
        };
        let ns2 = d(Fidelity::Ns2);
        let std = d(Fidelity::Standard);
        let std = if std == ns2 { "=".to_string() } else { std };
        let source = match i.ns2_tcl {
            Some(t) => format!("{}; Tcl `{t}`", i.source),
            None => i.source.to_string(),
        };
        s.push_str(&format!(
            "| `{}` | {unit} | {ns2} | {std} | {} | {} | {} |\n",
            i.key,
            i.allowed_text().replace('|', "\\|"),
            source.replace('|', "\\|"),
            one_line(i.doc)
        ));
    }
    s
}

/// One scenario section's parameter set, for docs and export-ns2.
pub struct Section {
    /// The scenario table (`routing.aodv`, `mac`).
    pub path: &'static str,
    pub markdown: fn() -> String,
    pub rows: fn(&str) -> Value,
}

impl Section {
    pub const fn of<P: ParamSet>(path: &'static str) -> Section {
        Section {
            path,
            markdown: markdown_table::<P>,
            rows: table_json::<P>,
        }
    }
}

/// Where a generated table starts in a Markdown file; it ends at [`END`].
pub const BEGIN: &str = "<!-- generated by `cargo run --example param_docs`: ";
pub const END: &str = "<!-- end of generated table -->";

/// `text` with every generated block (`BEGIN<section> -->` … `END`) holding
/// its section's current table; `Err` names a block without an end or a
/// section that does not exist.
pub fn regenerate(text: &str, sections: &[Section]) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(BEGIN) {
        let after = &rest[i + BEGIN.len()..];
        let close = after
            .find(" -->\n")
            .ok_or("a generated-table marker without ` -->`")?;
        let path = &after[..close];
        let section = sections
            .iter()
            .find(|s| s.path == path)
            .ok_or_else(|| format!("no parameter section `{path}`"))?;
        let body = &after[close + 5..];
        let end = body
            .find(END)
            .ok_or_else(|| format!("the table of `{path}` has no `{END}`"))?;
        out.push_str(&rest[..i]);
        out.push_str(BEGIN);
        out.push_str(path);
        out.push_str(" -->\n");
        out.push_str(&(section.markdown)());
        out.push_str(END);
        rest = &body[end + END.len()..];
    }
    out.push_str(rest);
    Ok(out)
}
