//! The `[radio]` and `[mac]` sections: keys with units, ns-2 defaults, and their
//! conversion into the PHY/MAC parameter structs (docs/wireless.md).

use super::{non_negative, positive, within, ScenarioError};
use crate::mac::{EifsMode, MacParams};
use crate::phy::{Propagation, RadioParams, Reception, SPEED_OF_LIGHT_MPS};
use crate::sim::SimDuration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PropagationKind {
    FreeSpace,
    #[default]
    TwoRayGround,
    Shadowing,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReceptionKind {
    #[default]
    Capture,
    Sinr,
}

/// `[mac] eifs`: how the MAC defers after a frame it could not decode.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EifsKind {
    /// ns-2: NAV = EIFS, then DIFS; captured frames extend the NAV by EIFS.
    #[default]
    Ns2,
    /// IEEE 802.11 §9.2.3.4: EIFS in place of DIFS.
    Standard,
}

/// `[radio]`: every key optional; an empty `[radio]` gives ns-2's WaveLAN radio.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RadioSpec {
    #[serde(default)]
    pub propagation: PropagationKind,
    pub tx_power_w: Option<f64>,
    pub frequency_mhz: Option<f64>,
    pub antenna_height_m: Option<f64>,
    pub tx_antenna_gain: Option<f64>,
    pub rx_antenna_gain: Option<f64>,
    pub system_loss: Option<f64>,
    pub rx_threshold_w: Option<f64>,
    pub cs_threshold_w: Option<f64>,
    /// Alternative to `rx_threshold_w`: the threshold that gives this range under the model's mean power.
    pub rx_range_m: Option<f64>,
    /// Alternative to `cs_threshold_w`.
    pub cs_range_m: Option<f64>,
    #[serde(default)]
    pub reception: ReceptionKind,
    pub capture_threshold: Option<f64>,
    pub sinr_threshold: Option<f64>,
    pub noise_w: Option<f64>,
    pub path_loss_exponent: Option<f64>,
    pub shadowing_sigma_db: Option<f64>,
    pub reference_distance_m: Option<f64>,
}

/// `[mac]`: IEEE 802.11 DCF; defaults are ns-2's `Mac/802_11`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MacSpec {
    /// `"dcf"` (802.11, default) or `"frn"` (paper 003's slotted MAC).
    #[serde(default)]
    pub kind: super::MacKind,
    /// FRN MAC parameters (`kind = "frn"` only; docs/frn.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frn: Option<super::FrnMacSpec>,
    pub data_rate_mbps: Option<f64>,
    pub basic_rate_mbps: Option<f64>,
    pub rts_threshold_bytes: Option<u32>,
    pub short_retry_limit: Option<u32>,
    pub long_retry_limit: Option<u32>,
    pub cw_min: Option<u32>,
    pub cw_max: Option<u32>,
    pub slot_us: Option<f64>,
    pub sifs_us: Option<f64>,
    /// PLCP preamble + header duration.
    pub plcp_us: Option<f64>,
    pub ll_delay_us: Option<f64>,
    /// Data MAC header + FCS (ns-2: 34, four addresses; standard three-address: 28).
    pub data_header_bytes: Option<u32>,
    /// Send at once on a medium idle for DIFS (§9.2.5.1); ns-2 always backs off.
    pub immediate_access: Option<bool>,
    pub eifs: Option<EifsKind>,
    /// ACK data frames that did not follow our CTS (§9.2.8); ns-2 discards them.
    pub ack_data_without_cts: Option<bool>,
    /// Backoff drawn from 0..=CW (§9.2.4); ns-2 draws 0..=CW−1.
    pub backoff_includes_cw: Option<bool>,
    /// ns-2's ARP before the first packet to each next hop.
    pub arp: Option<bool>,
}

fn opt_positive(path: &str, v: Option<f64>) -> Result<(), ScenarioError> {
    v.map_or(Ok(()), |v| positive(path, v))
}

fn us(v: f64) -> SimDuration {
    SimDuration::from_secs_f64(v * 1e-6)
}

impl RadioSpec {
    pub fn validate(&self) -> Result<(), ScenarioError> {
        for (k, v) in [
            ("tx_power_w", self.tx_power_w),
            ("frequency_mhz", self.frequency_mhz),
            ("antenna_height_m", self.antenna_height_m),
            ("tx_antenna_gain", self.tx_antenna_gain),
            ("rx_antenna_gain", self.rx_antenna_gain),
            ("system_loss", self.system_loss),
            ("rx_threshold_w", self.rx_threshold_w),
            ("cs_threshold_w", self.cs_threshold_w),
            ("rx_range_m", self.rx_range_m),
            ("cs_range_m", self.cs_range_m),
            ("capture_threshold", self.capture_threshold),
            ("sinr_threshold", self.sinr_threshold),
            ("path_loss_exponent", self.path_loss_exponent),
            ("reference_distance_m", self.reference_distance_m),
        ] {
            opt_positive(&format!("radio.{k}"), v)?;
        }
        if let Some(n) = self.noise_w {
            non_negative("radio.noise_w", n)?;
        }
        if let Some(s) = self.shadowing_sigma_db {
            non_negative("radio.shadowing_sigma_db", s)?;
        }
        if self.rx_threshold_w.is_some() && self.rx_range_m.is_some() {
            return Err(ScenarioError::new(
                "radio.rx_range_m",
                "give either rx_threshold_w or rx_range_m, not both",
            ));
        }
        if self.cs_threshold_w.is_some() && self.cs_range_m.is_some() {
            return Err(ScenarioError::new(
                "radio.cs_range_m",
                "give either cs_threshold_w or cs_range_m, not both",
            ));
        }
        if self.propagation != PropagationKind::Shadowing {
            for (k, v) in [
                ("path_loss_exponent", self.path_loss_exponent),
                ("shadowing_sigma_db", self.shadowing_sigma_db),
                ("reference_distance_m", self.reference_distance_m),
            ] {
                if v.is_some() {
                    return Err(ScenarioError::new(
                        format!("radio.{k}"),
                        "only applies with propagation = \"shadowing\"",
                    ));
                }
            }
        }
        match self.reception {
            ReceptionKind::Capture if self.sinr_threshold.is_some() || self.noise_w.is_some() => {
                return Err(ScenarioError::new(
                    "radio.reception",
                    "sinr_threshold and noise_w need reception = \"sinr\"",
                ));
            }
            ReceptionKind::Sinr if self.capture_threshold.is_some() => {
                return Err(ScenarioError::new(
                    "radio.capture_threshold",
                    "only applies with reception = \"capture\"",
                ));
            }
            _ => {}
        }
        let p = self.params();
        if p.cs_threshold_w > p.rx_threshold_w {
            return Err(ScenarioError::new(
                "radio.cs_threshold_w",
                format!("{:.4e} W is above the receive threshold {:.4e} W (carrier sense must reach at least as far as reception)", p.cs_threshold_w, p.rx_threshold_w),
            ));
        }
        Ok(())
    }

    /// The radio parameters with ns-2 defaults for everything left out.
    pub fn params(&self) -> RadioParams {
        let mut p = RadioParams::default();
        if let Some(f) = self.frequency_mhz {
            p.antennas.wavelength_m = SPEED_OF_LIGHT_MPS / (f * 1e6);
        }
        if let Some(h) = self.antenna_height_m {
            p.antennas.tx_height_m = h;
            p.antennas.rx_height_m = h;
        }
        if let Some(g) = self.tx_antenna_gain {
            p.antennas.tx_gain = g;
        }
        if let Some(g) = self.rx_antenna_gain {
            p.antennas.rx_gain = g;
        }
        if let Some(l) = self.system_loss {
            p.antennas.system_loss = l;
        }
        if let Some(pt) = self.tx_power_w {
            p.tx_power_w = pt;
        }
        p.propagation = match self.propagation {
            PropagationKind::FreeSpace => Propagation::FreeSpace,
            PropagationKind::TwoRayGround => Propagation::TwoRayGround,
            // ns-2 `Propagation/Shadowing` defaults: β = 2, σ = 4 dB, d0 = 1 m.
            PropagationKind::Shadowing => Propagation::Shadowing {
                path_loss_exponent: self.path_loss_exponent.unwrap_or(2.0),
                sigma_db: self.shadowing_sigma_db.unwrap_or(4.0),
                d0_m: self.reference_distance_m.unwrap_or(1.0),
            },
        };
        let at_range = |d: f64| p.propagation.mean_rx_w(&p.antennas, p.tx_power_w, d);
        if let Some(t) = self.rx_threshold_w {
            p.rx_threshold_w = t;
        } else if let Some(d) = self.rx_range_m {
            p.rx_threshold_w = at_range(d);
        }
        if let Some(t) = self.cs_threshold_w {
            p.cs_threshold_w = t;
        } else if let Some(d) = self.cs_range_m {
            p.cs_threshold_w = at_range(d);
        }
        p.reception = match self.reception {
            ReceptionKind::Capture => Reception::Capture {
                capture_threshold: self.capture_threshold.unwrap_or(10.0),
            },
            // SINR threshold defaults to ns-2's capture ratio (10 dB); noise to
            // thermal noise over 22 MHz (−100.6 dBm) — see docs/wireless.md.
            ReceptionKind::Sinr => Reception::Sinr {
                sinr_threshold: self.sinr_threshold.unwrap_or(10.0),
                noise_w: self.noise_w.unwrap_or(8.7e-14),
            },
        };
        p
    }
}

impl MacSpec {
    /// The FRN MAC parameters when `kind = "frn"`.
    pub fn frn_params(&self) -> Option<crate::mac::FrnParams> {
        (self.kind == super::MacKind::Frn).then(|| {
            self.frn
                .as_ref()
                .map_or_else(Default::default, |f| f.params())
        })
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        match (&self.frn, self.kind) {
            (Some(f), super::MacKind::Frn) => f.validate()?,
            (Some(_), _) => {
                return Err(ScenarioError::new(
                    "mac.frn",
                    "only applies with kind = \"frn\"",
                ))
            }
            (None, _) => {}
        }
        if self.kind == super::MacKind::Frn {
            if self.arp == Some(true) {
                return Err(ScenarioError::new(
                    "mac.arp",
                    "true is not allowed with kind = \"frn\" (FRN has no ARP)",
                ));
            }
            for (key, given) in [
                ("rts_threshold_bytes", self.rts_threshold_bytes.is_some()),
                ("short_retry_limit", self.short_retry_limit.is_some()),
                ("long_retry_limit", self.long_retry_limit.is_some()),
                ("cw_min", self.cw_min.is_some()),
                ("cw_max", self.cw_max.is_some()),
            ] {
                if given {
                    return Err(ScenarioError::new(
                        format!("mac.{key}"),
                        "is an 802.11 DCF key; it does not apply with kind = \"frn\"",
                    ));
                }
            }
        }
        // Bounded so frame and timer times stay far inside u64 nanoseconds.
        for (k, v) in [
            ("data_rate_mbps", self.data_rate_mbps),
            ("basic_rate_mbps", self.basic_rate_mbps),
        ] {
            if let Some(v) = v {
                within(&format!("mac.{k}"), v, 1e-3, 1e5)?;
            }
        }
        for (k, v) in [("slot_us", self.slot_us), ("sifs_us", self.sifs_us)] {
            if let Some(v) = v {
                within(&format!("mac.{k}"), v, 1e-3, 1e6)?;
            }
        }
        for (k, v) in [("plcp_us", self.plcp_us), ("ll_delay_us", self.ll_delay_us)] {
            if let Some(v) = v {
                within(&format!("mac.{k}"), v, 0.0, 1e6)?;
            }
        }
        for (k, v) in [
            ("short_retry_limit", self.short_retry_limit),
            ("long_retry_limit", self.long_retry_limit),
        ] {
            if v == Some(0) {
                return Err(ScenarioError::new(
                    format!("mac.{k}"),
                    "0 is out of range (allowed: >= 1)",
                ));
            }
        }
        if let Some(h) = self.data_header_bytes {
            if h > 100 {
                return Err(ScenarioError::new(
                    "mac.data_header_bytes",
                    format!("{h} is out of range (allowed: 0..=100 bytes)"),
                ));
            }
        }
        let p = self.params();
        let pow2m1 = |v: u32| (v + 1).is_power_of_two();
        if !pow2m1(p.cw_min) || p.cw_min < 1 {
            return Err(ScenarioError::new(
                "mac.cw_min",
                format!(
                    "{} is not allowed (allowed: 2^k − 1, e.g. 15, 31, 63)",
                    p.cw_min
                ),
            ));
        }
        if !pow2m1(p.cw_max) || p.cw_max < p.cw_min {
            return Err(ScenarioError::new(
                "mac.cw_max",
                format!(
                    "{} is not allowed (allowed: 2^k − 1 and >= cw_min = {})",
                    p.cw_max, p.cw_min
                ),
            ));
        }
        Ok(())
    }

    pub fn params(&self) -> MacParams {
        let d = MacParams::default();
        MacParams {
            cw_min: self.cw_min.unwrap_or(d.cw_min),
            cw_max: self.cw_max.unwrap_or(d.cw_max),
            slot: self.slot_us.map_or(d.slot, us),
            sifs: self.sifs_us.map_or(d.sifs, us),
            plcp: self.plcp_us.map_or(d.plcp, us),
            basic_rate_bps: self.basic_rate_mbps.map_or(d.basic_rate_bps, |r| r * 1e6),
            data_rate_bps: self.data_rate_mbps.map_or(d.data_rate_bps, |r| r * 1e6),
            rts_threshold_bytes: self.rts_threshold_bytes.unwrap_or(d.rts_threshold_bytes),
            short_retry_limit: self.short_retry_limit.unwrap_or(d.short_retry_limit),
            long_retry_limit: self.long_retry_limit.unwrap_or(d.long_retry_limit),
            ll_delay: self.ll_delay_us.map_or(d.ll_delay, us),
            data_header_bytes: self.data_header_bytes.unwrap_or(d.data_header_bytes),
            immediate_access: self.immediate_access.unwrap_or(d.immediate_access),
            eifs_mode: match self.eifs {
                None => d.eifs_mode,
                Some(EifsKind::Ns2) => EifsMode::Ns2,
                Some(EifsKind::Standard) => EifsMode::Standard,
            },
            ack_data_without_cts: self.ack_data_without_cts.unwrap_or(d.ack_data_without_cts),
            backoff_includes_cw: self.backoff_includes_cw.unwrap_or(d.backoff_includes_cw),
            // FRN has no ARP: relays are addressed by the routing table.
            arp: self
                .arp
                .unwrap_or(d.arp && self.kind == super::MacKind::Dcf),
        }
    }
}
