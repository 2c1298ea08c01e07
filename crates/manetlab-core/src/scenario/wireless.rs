//! The `[radio]` and `[mac]` sections: keys with units, ns-2 defaults, and their
//! conversion into the PHY/MAC parameter structs (docs/wireless.md).

use super::{non_negative, positive, ScenarioError};
use crate::mac::MacParams;
use crate::param::{Fidelity, Overrides, ParamSet};
use crate::phy::{Propagation, RadioParams, Reception, SPEED_OF_LIGHT_MPS};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde::{Deserializer, Serializer};

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

/// `[mac]`: the MAC `kind`, FRN's table, and the given keys of [`MacParams`]
/// (declared there once) over the `fidelity` profile's values.
#[derive(Clone, Debug, Default)]
pub struct MacSpec {
    /// `"dcf"` (802.11, default) or `"frn"` (paper 003's slotted MAC).
    pub kind: super::MacKind,
    /// FRN MAC parameters (`kind = "frn"` only; docs/frn.md).
    pub frn: Option<super::FrnMacSpec>,
    /// The DCF keys given (`data_rate_mbps`, `eifs`, ...).
    pub params: Overrides<MacParams>,
}

impl<'de> Deserialize<'de> for MacSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MacSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of MAC parameters")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MacSpec, A::Error> {
                let mut m = MacSpec::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" => m.kind = map.next_value()?,
                        "frn" => m.frn = Some(map.next_value()?),
                        _ => {
                            if !m.params.read_key(&key, &mut map)? {
                                return Err(Overrides::<MacParams>::unknown_key(
                                    &key,
                                    &["kind", "frn"],
                                ));
                            }
                        }
                    }
                }
                Ok(m)
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for MacSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", &self.kind)?;
        if let Some(f) = &self.frn {
            m.serialize_entry("frn", f)?;
        }
        self.params.serialize_into(&mut m)?;
        m.end()
    }
}

fn opt_positive(path: &str, v: Option<f64>) -> Result<(), ScenarioError> {
    v.map_or(Ok(()), |v| positive(path, v))
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

    pub fn validate(&self, fidelity: Fidelity) -> Result<(), ScenarioError> {
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
            if self.params.value("arp") == Some(&serde_json::Value::Bool(true)) {
                return Err(ScenarioError::new(
                    "mac.arp",
                    "true is not allowed with kind = \"frn\" (FRN has no ARP)",
                ));
            }
            for key in [
                "rts_threshold_bytes",
                "short_retry_limit",
                "long_retry_limit",
                "cw_min",
                "cw_max",
            ] {
                if self.params.given(key) {
                    return Err(ScenarioError::new(
                        format!("mac.{key}"),
                        "is an 802.11 DCF key; it does not apply with kind = \"frn\"",
                    ));
                }
            }
        }
        // Each key's range was checked when read (MacParams' declaration);
        // what is left are checks across keys.
        let p = self.params(fidelity);
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

    /// The DCF parameters: the given keys over the `fidelity` profile (FRN
    /// has no ARP unless asked for, which validation refuses).
    pub fn params(&self, fidelity: Fidelity) -> MacParams {
        let mut base = MacParams::profile(fidelity);
        // FRN has no ARP: relays are addressed by the routing table.
        base.arp &= self.kind == super::MacKind::Dcf;
        self.params.apply(base)
    }
}
