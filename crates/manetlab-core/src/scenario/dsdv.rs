//! `[routing.dsdv]`: DSDV parameters with units and ns-2 defaults, and their
//! conversion into [`dsdv::Params`] (docs/routing.md).

use super::{dur, num, ScenarioError};
use crate::routing::dsdv;
use serde::{Deserialize, Serialize};

/// `[routing.dsdv]`: every key optional; unset keys take ns-2's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DsdvSpec {
    pub periodic_update_interval_s: Option<f64>,
    pub min_update_periods: Option<u32>,
    pub initial_settling_time_s: Option<f64>,
    pub settling_alpha: Option<f64>,
    pub min_triggered_update_interval_s: Option<f64>,
    pub broadcast_jitter_ms: Option<f64>,
    pub startup_jitter_s: Option<f64>,
    pub link_layer_detection: Option<bool>,
    pub trigger_on_new_seq: Option<bool>,
    pub queue_pkts: Option<u32>,
    pub tcp_ip_header_twice: Option<bool>,
    pub release_through_recv: Option<bool>,
    pub stale_advert_bug: Option<bool>,
}

impl DsdvSpec {
    /// The DSDV parameters: the given keys over the `fidelity` profile.
    pub fn params(&self, fidelity: crate::param::Fidelity) -> dsdv::Params {
        let d = dsdv::Params::for_fidelity(fidelity);
        dsdv::Params {
            periodic_update_interval: dur(
                self.periodic_update_interval_s,
                1.0,
                d.periodic_update_interval,
            ),
            min_update_periods: self.min_update_periods.unwrap_or(d.min_update_periods),
            initial_settling_time: dur(self.initial_settling_time_s, 1.0, d.initial_settling_time),
            settling_alpha: self.settling_alpha.unwrap_or(d.settling_alpha),
            min_triggered_update_interval: dur(
                self.min_triggered_update_interval_s,
                1.0,
                d.min_triggered_update_interval,
            ),
            broadcast_jitter: dur(self.broadcast_jitter_ms, 1e-3, d.broadcast_jitter),
            startup_jitter: dur(self.startup_jitter_s, 1.0, d.startup_jitter),
            link_layer_detection: self.link_layer_detection.unwrap_or(d.link_layer_detection),
            trigger_on_new_seq: self.trigger_on_new_seq.unwrap_or(d.trigger_on_new_seq),
            queue_pkts: self.queue_pkts.unwrap_or(d.queue_pkts),
            tcp_ip_header_twice: self.tcp_ip_header_twice.unwrap_or(d.tcp_ip_header_twice),
            release_through_recv: self.release_through_recv.unwrap_or(d.release_through_recv),
            stale_advert_bug: self.stale_advert_bug.unwrap_or(d.stale_advert_bug),
        }
    }

    pub(super) fn validate(&self, fidelity: crate::param::Fidelity) -> Result<(), ScenarioError> {
        let p = |k: &str| format!("routing.dsdv.{k}");
        // Times: up to 10⁶ s keeps every timer inside simulated time.
        let times: [(&str, Option<f64>, f64, bool); 5] = [
            (
                "periodic_update_interval_s",
                self.periodic_update_interval_s,
                1.0,
                true,
            ),
            (
                "initial_settling_time_s",
                self.initial_settling_time_s,
                1.0,
                false,
            ),
            (
                "min_triggered_update_interval_s",
                self.min_triggered_update_interval_s,
                1.0,
                false,
            ),
            ("broadcast_jitter_ms", self.broadcast_jitter_ms, 1e-3, false),
            ("startup_jitter_s", self.startup_jitter_s, 1.0, false),
        ];
        super::check_times(&p, &times)?;
        if let Some(a) = self.settling_alpha {
            if !(a.is_finite() && (0.0..=1.0).contains(&a)) {
                return Err(ScenarioError::new(
                    p("settling_alpha"),
                    format!("{} is out of range (allowed: 0 <= value <= 1)", num(a)),
                ));
            }
        }
        if let Some(n) = self.min_update_periods {
            if !(1..=1000).contains(&n) {
                return Err(ScenarioError::new(
                    p("min_update_periods"),
                    format!("{n} is out of range (allowed: 1..=1000)"),
                ));
            }
        }
        if self.queue_pkts == Some(0) {
            return Err(ScenarioError::new(
                p("queue_pkts"),
                "0 is out of range (allowed: >= 1)",
            ));
        }
        let q = self.params(fidelity);
        if q.neighbour_timeout().as_secs_f64() > 1e6 {
            return Err(ScenarioError::new(
                p("min_update_periods"),
                format!("{} periods of {} s is out of range (allowed: a neighbour timeout <= 1000000 s)", q.min_update_periods, num(q.periodic_update_interval.as_secs_f64())),
            ));
        }
        Ok(())
    }
}
