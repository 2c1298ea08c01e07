//! `[mac] kind = "frn"` with `[mac.frn]`, and `[routing] protocol = "frn"` with
//! `[routing.frn]`: the Flexible Radio Network of paper 003 (docs/frn.md).

use super::{within, ScenarioError};
use crate::mac::FrnParams;
use crate::routing::frn::Params;
use crate::sim::SimDuration;
use serde::{Deserialize, Serialize};

/// `[mac] kind`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MacKind {
    /// IEEE 802.11 DCF as ns-2.35 (the default).
    #[default]
    Dcf,
    /// FRN's slotted MAC with echo acknowledgement (needs `[routing] protocol = "frn"`).
    Frn,
}

/// `[mac.frn]`: every key optional (docs/frn.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FrnMacSpec {
    pub slot_ms: Option<f64>,
    pub cs_minislots: Option<u32>,
    pub minislot_us: Option<f64>,
    /// [min, max] slots, inclusive.
    pub resend_slots: Option<[u32; 2]>,
    pub ack_resend_slots: Option<[u32; 2]>,
    pub lifetime_slots: Option<u32>,
    pub link_failure_threshold: Option<u32>,
    pub buffer_pkts: Option<u32>,
    pub header_bytes: Option<u32>,
    pub relay_first: Option<bool>,
    pub miss_at_resend: Option<bool>,
}

impl FrnMacSpec {
    pub fn params(&self) -> FrnParams {
        let d = FrnParams::default();
        let resend = self.resend_slots.map_or(d.resend_slots, |[a, b]| (a, b));
        FrnParams {
            slot: self
                .slot_ms
                .map_or(d.slot, |v| SimDuration::from_secs_f64(v * 1e-3)),
            cs_minislots: self.cs_minislots.unwrap_or(d.cs_minislots),
            minislot: self
                .minislot_us
                .map_or(d.minislot, |v| SimDuration::from_secs_f64(v * 1e-6)),
            resend_slots: resend,
            // No preference unless asked: ACKs resend on the data interval.
            ack_resend_slots: self.ack_resend_slots.map_or(resend, |[a, b]| (a, b)),
            lifetime_slots: self.lifetime_slots.unwrap_or(d.lifetime_slots),
            link_failure_threshold: self
                .link_failure_threshold
                .unwrap_or(d.link_failure_threshold),
            buffer_pkts: self.buffer_pkts.unwrap_or(d.buffer_pkts),
            header_bytes: self.header_bytes.unwrap_or(d.header_bytes),
            relay_first: self.relay_first.unwrap_or(d.relay_first),
            miss_at_resend: self.miss_at_resend.unwrap_or(d.miss_at_resend),
        }
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        let k = |s: &str| format!("mac.frn.{s}");
        if let Some(v) = self.slot_ms {
            within(&k("slot_ms"), v, 0.01, 10_000.0)?;
        }
        if let Some(v) = self.minislot_us {
            within(&k("minislot_us"), v, 0.001, 1e6)?;
        }
        for (key, v, lo, hi) in [
            ("cs_minislots", self.cs_minislots, 1, 1024),
            ("lifetime_slots", self.lifetime_slots, 1, 100_000_000),
            (
                "link_failure_threshold",
                self.link_failure_threshold,
                0,
                1000,
            ),
            ("buffer_pkts", self.buffer_pkts, 1, 1_000_000),
            ("header_bytes", self.header_bytes, 0, 100),
        ] {
            if let Some(v) = v {
                if !(lo..=hi).contains(&v) {
                    return Err(ScenarioError::new(
                        k(key),
                        format!("{v} is out of range (allowed: {lo}..={hi})"),
                    ));
                }
            }
        }
        for (key, v) in [
            ("resend_slots", self.resend_slots),
            ("ack_resend_slots", self.ack_resend_slots),
        ] {
            if let Some([a, b]) = v {
                if a < 2 || a > b || b > 10_000 {
                    return Err(ScenarioError::new(k(key), format!("[{a}, {b}] is not allowed (allowed: [min, max] slots with 2 <= min <= max <= 10000; the echo takes the slot after a transmission)")));
                }
            }
        }
        let p = self.params();
        if p.minislot.as_nanos() * p.cs_minislots as u64 >= p.slot.as_nanos() {
            return Err(ScenarioError::new(
                k("cs_minislots"),
                format!(
                    "{} mini-slots of {} µs do not fit in a {} ms slot",
                    p.cs_minislots,
                    p.minislot.as_secs_f64() * 1e6,
                    p.slot.as_secs_f64() * 1e3
                ),
            ));
        }
        Ok(())
    }
}

/// `[routing.frn]`: every key optional (docs/frn.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FrnRoutingSpec {
    pub config_interval_s: Option<f64>,
    pub trigger_delay_ms: Option<f64>,
    pub allowed_config_loss: Option<u32>,
    pub probe_interval_s: Option<f64>,
    pub erdn_hold_s: Option<f64>,
    pub multi_route: Option<bool>,
}

impl FrnRoutingSpec {
    pub fn params(&self) -> Params {
        let d = Params::default();
        let s = |v: Option<f64>, scale: f64, d: SimDuration| {
            v.map_or(d, |v| SimDuration::from_secs_f64(v * scale))
        };
        Params {
            config_interval: s(self.config_interval_s, 1.0, d.config_interval),
            trigger_delay: s(self.trigger_delay_ms, 1e-3, d.trigger_delay),
            allowed_config_loss: self.allowed_config_loss.unwrap_or(d.allowed_config_loss),
            probe_interval: s(self.probe_interval_s, 1.0, d.probe_interval),
            erdn_hold: s(self.erdn_hold_s, 1.0, d.erdn_hold),
            multi_route: self.multi_route.unwrap_or(d.multi_route),
        }
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        let k = |s: &str| format!("routing.frn.{s}");
        for (key, v, lo, hi) in [
            ("config_interval_s", self.config_interval_s, 0.01, 1e6),
            ("trigger_delay_ms", self.trigger_delay_ms, 0.0, 1e6),
            ("probe_interval_s", self.probe_interval_s, 0.001, 1e6),
            ("erdn_hold_s", self.erdn_hold_s, 0.0, 1e6),
        ] {
            if let Some(v) = v {
                within(&k(key), v, lo, hi)?;
            }
        }
        if let Some(n) = self.allowed_config_loss {
            if !(1..=1000).contains(&n) {
                return Err(ScenarioError::new(
                    k("allowed_config_loss"),
                    format!("{n} is out of range (allowed: 1..=1000)"),
                ));
            }
        }
        Ok(())
    }
}
