//! Congestion-control variants, one file each, and the registry that finds them by
//! their scenario name (`flows[].transport`).
//!
//! Each variant file opens with its source and our deviations, holds its own
//! parameters (a `…Params` struct with unit and default on every field, read from the
//! flow's `tcp` table) and exports one `VARIANT` entry. Adding a variant is its file
//! plus two lines here: `pub mod` and its entry in [`REGISTRY`] (docs/architecture.md,
//! "add a TCP variant"). Python learns the names from the scenario validator's error
//! message and `manetlab.run`; nothing on that side lists them.

use super::cc::CongestionControl;
use super::config::TcpConfig;

pub mod abra;
pub mod elfn;
pub mod fack;
pub mod fixed_rto;
pub mod mpr;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;
pub mod tcp_ap;
pub mod vegas;
pub mod westwood;

/// Every built-in variant, in the order error messages list them.
pub const REGISTRY: &[Variant] = &[
    tahoe::VARIANT,
    reno::VARIANT,
    newreno::VARIANT,
    sack::VARIANT,
    fack::VARIANT,
    vegas::VARIANT,
    westwood::VARIANT,
    westwood::VARIANT_PLUS,
    abra::VARIANT,
    fixed_rto::VARIANT,
    tcp_ap::VARIANT,
    mpr::VARIANT,
    elfn::VARIANT,
];

/// A `Result` whose error names the offending key below `flows[i].tcp` and says why.
pub type KeyResult = Result<(), (String, String)>;

/// One registry entry: a scenario name and how to build the variant from the flow's
/// `tcp` table.
#[derive(Clone, Copy)]
pub struct Variant {
    /// The scenario name (`transport = "…"`); equals the built variant's `name()`.
    pub name: &'static str,
    /// Build a fresh controller for one connection. Called on validated tables, and by
    /// the validator itself before [`Variant::check`] (so it must not panic on any value
    /// the table's types allow).
    pub make: fn(&TcpConfig) -> Box<dyn CongestionControl>,
    /// The variant's own checks of its parameters (ranges, relations between them),
    /// after the table's general checks.
    pub check: fn(&TcpConfig) -> KeyResult,
}

impl Variant {
    /// An entry without parameter checks.
    pub const fn new(
        name: &'static str,
        make: fn(&TcpConfig) -> Box<dyn CongestionControl>,
    ) -> Self {
        Variant {
            name,
            make,
            check: |_| Ok(()),
        }
    }
    /// The same entry with the variant's parameter checks.
    pub const fn checked(self, check: fn(&TcpConfig) -> KeyResult) -> Self {
        Variant { check, ..self }
    }
}

/// Find `name` in `registry`.
pub fn find<'r>(registry: &'r [Variant], name: &str) -> Option<&'r Variant> {
    registry.iter().find(|v| v.name == name)
}

/// Build the built-in variant `name` for a flow with this `tcp` table.
pub fn by_name(name: &str, cfg: &TcpConfig) -> Option<Box<dyn CongestionControl>> {
    find(REGISTRY, name).map(|v| (v.make)(cfg))
}

/// Names of all built-in variants, in registry order.
pub fn variant_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|v| v.name).collect()
}

/// The error for a parameter outside its range (the scenario's wording).
pub(crate) fn out_of_range(key: &str, value: String, allowed: &str) -> KeyResult {
    Err((
        key.to_string(),
        format!("{value} is out of range (allowed: {allowed})"),
    ))
}

#[cfg(test)]
mod tests;
