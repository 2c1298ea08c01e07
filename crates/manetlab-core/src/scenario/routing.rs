//! `[routing.aodv]`: the given keys of [`aodv::Params`] (declared there once),
//! over ns-2's defaults or RFC 3561's (`preset = "rfc3561"` or the scenario's
//! `fidelity = "standard"`), and their cross-key checks;
//! `[routing.dsr]`: the same for DSR ([`dsr::Params`], ns-2 defaults)
//! (docs/routing.md).

use super::{dur, num, ScenarioError};
use crate::param::{Fidelity, Overrides, ParamSet};
use crate::routing::aodv::{self, LinkDetection, Rules};
use crate::routing::dsr;
use serde::{Deserialize, Serialize};

/// `[routing.aodv]`: the keys a scenario gives, each declared once in
/// [`aodv::Params`] (unit, range, source); unset keys take the profile's value:
/// `preset` (`"ns2"` or `"rfc3561"`) when given, else the scenario's `fidelity`.
pub type AodvSpec = Overrides<aodv::Params>;

/// The AODV parameters of a `[routing.aodv]` section (or of none) under `fidelity`.
pub fn aodv_params(spec: Option<&AodvSpec>, fidelity: Fidelity) -> aodv::Params {
    let Some(spec) = spec else {
        return aodv::Params::profile(fidelity);
    };
    let mut base = aodv::Params::profile(spec.profile.unwrap_or(fidelity));
    if let Some(v) = spec.value("rules") {
        // `rules` decides the default of the ns-2 bug switches, which only
        // ns-2's rules have; the other keys are then set over it.
        base = base.under_rules(Rules::deserialize(v).expect("checked when read"));
    }
    spec.apply(base)
}

pub(super) fn validate_aodv(spec: &AodvSpec, fidelity: Fidelity) -> Result<(), ScenarioError> {
    let p = |k: &str| format!("routing.aodv.{k}");
    let q = aodv_params(Some(spec), fidelity);
    if q.ttl_start > q.net_diameter {
        return Err(ScenarioError::new(
            p("ttl_start"),
            format!(
                "{} is out of range (allowed: 1..={} = net_diameter_hops)",
                q.ttl_start, q.net_diameter
            ),
        ));
    }
    if q.ttl_threshold > q.net_diameter {
        return Err(ScenarioError::new(
            p("ttl_threshold"),
            format!(
                "{} is out of range (allowed: <= {} = net_diameter_hops)",
                q.ttl_threshold, q.net_diameter
            ),
        ));
    }
    if q.link_detection != LinkDetection::Hello {
        for key in ["hello_interval_s", "allowed_hello_loss"] {
            if spec.given(key) {
                return Err(ScenarioError::new(
                    p(key),
                    "only applies with link_detection = \"hello\" (link_detection is \"mac\")",
                ));
            }
        }
    }
    if q.rules != Rules::Ns2 {
        for key in [
            "first_request_network_wide",
            "local_repair_timer_bug",
            "reply_lifetime_wraps",
            "route_purge_interval_s",
        ] {
            if spec.given(key) {
                return Err(ScenarioError::new(
                    p(key),
                    "only applies with rules = \"ns2\" (rules is \"rfc3561\")",
                ));
            }
        }
    }
    for key in [
        "local_add_ttl",
        "max_repair_ttl",
        "local_repair_timer_bug",
        "local_repair_new_seq",
    ] {
        if spec.given(key) && !q.local_repair {
            return Err(ScenarioError::new(
                p(key),
                "only applies with local_repair = true",
            ));
        }
    }
    if spec.given("reply_lifetime_wraps") && !q.intermediate_replies {
        // Only an intermediate node's reply carries the wrapped lifetime.
        return Err(ScenarioError::new(
            p("reply_lifetime_wraps"),
            "only applies with intermediate_replies = true",
        ));
    }
    Ok(())
}

/// `[routing.dsr]`: every key optional; unset keys take ns-2's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DsrSpec {
    pub send_buffer_pkts: Option<u32>,
    pub release_spacing_ms: Option<f64>,
    pub send_buffer_timeout_s: Option<f64>,
    pub request_period_ms: Option<f64>,
    pub max_request_period_s: Option<f64>,
    pub request_backoff_factor: Option<u32>,
    pub backoff_counts_first_cycle: Option<bool>,
    pub salvage_requests: Option<u32>,
    pub ring_zero_search: Option<bool>,
    pub nonprop_request_timeout_ms: Option<f64>,
    pub max_route_len: Option<u8>,
    pub broadcast_jitter_ms: Option<f64>,
    pub reply_from_cache: Option<bool>,
    pub promiscuous: Option<bool>,
    pub gratuitous_replies: Option<bool>,
    pub grat_reply_holdoff_s: Option<f64>,
    pub salvage: Option<bool>,
    pub max_salvage_count: Option<u8>,
    pub propagate_last_error: Option<bool>,
    pub error_hold_s: Option<f64>,
    pub primary_cache_paths: Option<u32>,
    pub secondary_cache_paths: Option<u32>,
    pub tcp_ip_header_twice: Option<bool>,
    pub flow_state: Option<bool>,
    pub request_size_bug: Option<bool>,
    pub grat_holdoff_bug: Option<bool>,
    pub learned_route_resets_backoff: Option<bool>,
    pub error_keeps_salvage_count: Option<bool>,
    pub unwrapped_error_copies_packet: Option<bool>,
    pub buffer_poll_ms: Option<f64>,
}

impl DsrSpec {
    /// The DSR parameters: the given keys over the `fidelity` profile.
    pub fn params(&self, fidelity: Fidelity) -> dsr::Params {
        let d = dsr::Params::for_fidelity(fidelity);
        let promiscuous = self.promiscuous.unwrap_or(d.promiscuous);
        dsr::Params {
            send_buffer_pkts: self.send_buffer_pkts.unwrap_or(d.send_buffer_pkts),
            release_spacing: dur(self.release_spacing_ms, 1e-3, d.release_spacing),
            send_buffer_timeout: dur(self.send_buffer_timeout_s, 1.0, d.send_buffer_timeout),
            request_period: dur(self.request_period_ms, 1e-3, d.request_period),
            max_request_period: dur(self.max_request_period_s, 1.0, d.max_request_period),
            request_backoff_factor: self
                .request_backoff_factor
                .unwrap_or(d.request_backoff_factor),
            backoff_counts_first_cycle: self
                .backoff_counts_first_cycle
                .unwrap_or(d.backoff_counts_first_cycle),
            salvage_requests: self.salvage_requests.unwrap_or(d.salvage_requests),
            ring_zero_search: self.ring_zero_search.unwrap_or(d.ring_zero_search),
            nonprop_request_timeout: dur(
                self.nonprop_request_timeout_ms,
                1e-3,
                d.nonprop_request_timeout,
            ),
            max_route_len: self.max_route_len.unwrap_or(d.max_route_len),
            broadcast_jitter: dur(self.broadcast_jitter_ms, 1e-3, d.broadcast_jitter),
            reply_from_cache: self.reply_from_cache.unwrap_or(d.reply_from_cache),
            promiscuous,
            // Route shortening needs the tap: off with it unless asked for
            // (validation rejects asking for it without the tap).
            gratuitous_replies: self
                .gratuitous_replies
                .unwrap_or(d.gratuitous_replies && promiscuous),
            grat_reply_holdoff: dur(self.grat_reply_holdoff_s, 1.0, d.grat_reply_holdoff),
            salvage: self.salvage.unwrap_or(d.salvage),
            max_salvage_count: self.max_salvage_count.unwrap_or(d.max_salvage_count),
            propagate_last_error: self.propagate_last_error.unwrap_or(d.propagate_last_error),
            error_hold: dur(self.error_hold_s, 1.0, d.error_hold),
            primary_cache_paths: self.primary_cache_paths.unwrap_or(d.primary_cache_paths),
            secondary_cache_paths: self
                .secondary_cache_paths
                .unwrap_or(d.secondary_cache_paths),
            tcp_ip_header_twice: self.tcp_ip_header_twice.unwrap_or(d.tcp_ip_header_twice),
            flow_state: self.flow_state.unwrap_or(d.flow_state),
            request_size_bug: self.request_size_bug.unwrap_or(d.request_size_bug),
            grat_holdoff_bug: self.grat_holdoff_bug.unwrap_or(d.grat_holdoff_bug),
            learned_route_resets_backoff: self
                .learned_route_resets_backoff
                .unwrap_or(d.learned_route_resets_backoff),
            error_keeps_salvage_count: self
                .error_keeps_salvage_count
                .unwrap_or(d.error_keeps_salvage_count),
            unwrapped_error_copies_packet: self
                .unwrapped_error_copies_packet
                .unwrap_or(d.unwrapped_error_copies_packet),
            buffer_poll: dur(self.buffer_poll_ms, 1e-3, d.buffer_poll),
        }
    }

    pub(super) fn validate(&self, fidelity: Fidelity) -> Result<(), ScenarioError> {
        let p = |k: &str| format!("routing.dsr.{k}");
        let times: [(&str, Option<f64>, f64, bool); 9] = [
            ("buffer_poll_ms", self.buffer_poll_ms, 1e-3, false),
            ("release_spacing_ms", self.release_spacing_ms, 1e-3, false),
            (
                "send_buffer_timeout_s",
                self.send_buffer_timeout_s,
                1.0,
                true,
            ),
            ("request_period_ms", self.request_period_ms, 1e-3, true),
            ("max_request_period_s", self.max_request_period_s, 1.0, true),
            (
                "nonprop_request_timeout_ms",
                self.nonprop_request_timeout_ms,
                1e-3,
                true,
            ),
            ("broadcast_jitter_ms", self.broadcast_jitter_ms, 1e-3, false),
            (
                "grat_reply_holdoff_s",
                self.grat_reply_holdoff_s,
                1.0,
                false,
            ),
            ("error_hold_s", self.error_hold_s, 1.0, false),
        ];
        super::check_times(&p, &times)?;
        let q = self.params(fidelity);
        if q.send_buffer_pkts == 0 {
            return Err(ScenarioError::new(
                p("send_buffer_pkts"),
                "0 is out of range (allowed: >= 1)",
            ));
        }
        if !(1..=16).contains(&q.request_backoff_factor) {
            return Err(ScenarioError::new(
                p("request_backoff_factor"),
                format!(
                    "{} is out of range (allowed: 1..=16)",
                    q.request_backoff_factor
                ),
            ));
        }
        if q.salvage_requests > 15 {
            return Err(ScenarioError::new(
                p("salvage_requests"),
                format!("{} is out of range (allowed: 0..=15)", q.salvage_requests),
            ));
        }
        if q.max_route_len < 2 {
            return Err(ScenarioError::new(
                p("max_route_len"),
                format!(
                    "{} is out of range (allowed: 2..=255 addresses)",
                    q.max_route_len
                ),
            ));
        }
        for (key, v) in [
            ("primary_cache_paths", q.primary_cache_paths),
            ("secondary_cache_paths", q.secondary_cache_paths),
        ] {
            if !(1..=100_000).contains(&v) {
                return Err(ScenarioError::new(
                    p(key),
                    format!("{v} is out of range (allowed: 1..=100000)"),
                ));
            }
        }
        if q.max_request_period < q.request_period {
            return Err(ScenarioError::new(
                p("max_request_period_s"),
                format!(
                    "{} is below request_period_ms = {} ms",
                    num(q.max_request_period.as_secs_f64()),
                    num(q.request_period.as_secs_f64() * 1e3)
                ),
            ));
        }
        if self.gratuitous_replies == Some(true) && !q.promiscuous {
            return Err(ScenarioError::new(
                p("gratuitous_replies"),
                "needs promiscuous = true (route shortening works on overheard packets)",
            ));
        }
        let only = [
            (
                "grat_reply_holdoff_s",
                self.grat_reply_holdoff_s.is_some(),
                q.gratuitous_replies,
                "gratuitous_replies = true",
            ),
            (
                "grat_holdoff_bug",
                self.grat_holdoff_bug.is_some(),
                q.gratuitous_replies,
                "gratuitous_replies = true",
            ),
            (
                "max_salvage_count",
                self.max_salvage_count.is_some(),
                q.salvage,
                "salvage = true",
            ),
            (
                "salvage_requests",
                self.salvage_requests.is_some(),
                q.salvage,
                "salvage = true",
            ),
            (
                "error_keeps_salvage_count",
                self.error_keeps_salvage_count.is_some(),
                q.salvage,
                "salvage = true",
            ),
            (
                "nonprop_request_timeout_ms",
                self.nonprop_request_timeout_ms.is_some(),
                q.ring_zero_search,
                "ring_zero_search = true",
            ),
            (
                "error_hold_s",
                self.error_hold_s.is_some(),
                q.propagate_last_error,
                "propagate_last_error = true",
            ),
        ];
        for (key, given, enabled, needs) in only {
            if given && !enabled {
                return Err(ScenarioError::new(
                    p(key),
                    format!("only applies with {needs}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::routing::aodv::Rules;
    use crate::scenario::Scenario;

    fn aodv(keys: &str) -> Result<Scenario, String> {
        let text = format!("duration_s = 1\n[nodes]\ncount = 2\n[radio]\n[routing]\nprotocol = \"aodv\"\n[routing.aodv]\n{keys}\n");
        Scenario::from_toml_str(&text).map_err(|e| e.to_string())
    }

    #[test]
    fn aodv_ns2_rule_keys_are_validated() {
        let p = aodv("").unwrap().aodv_params();
        assert_eq!(
            (
                p.rules,
                p.first_request_network_wide,
                p.repair_timer_bug,
                p.local_repair_new_seq
            ),
            (Rules::Ns2, true, true, false)
        );
        let q = aodv("preset = \"rfc3561\"").unwrap().aodv_params();
        assert_eq!(
            (
                q.rules,
                q.first_request_network_wide,
                q.repair_timer_bug,
                q.release_spacing.0
            ),
            (Rules::Rfc3561, false, false, 0)
        );
        assert!(p.reply_lifetime_wraps && !q.reply_lifetime_wraps);
        assert!(
            !aodv("reply_lifetime_wraps = false")
                .unwrap()
                .aodv_params()
                .reply_lifetime_wraps
        );
        let e = aodv("rules = \"rfc3561\"\nreply_lifetime_wraps = true").unwrap_err();
        assert!(
            e.contains("routing.aodv.reply_lifetime_wraps") && e.contains("rules = \"ns2\""),
            "{e}"
        );
        let e = aodv("intermediate_replies = false\nreply_lifetime_wraps = false").unwrap_err();
        assert!(
            e.contains("routing.aodv.reply_lifetime_wraps")
                && e.contains("intermediate_replies = true"),
            "{e}"
        );
        let e = aodv("rules = \"rfc3561\"\nfirst_request_network_wide = false").unwrap_err();
        assert!(
            e.contains("routing.aodv.first_request_network_wide") && e.contains("rules = \"ns2\""),
            "{e}"
        );
        let e = aodv("local_repair = false\nlocal_repair_timer_bug = false").unwrap_err();
        assert!(
            e.contains("local_repair_timer_bug") && e.contains("local_repair = true"),
            "{e}"
        );
        let e = aodv("release_spacing_ms = -1").unwrap_err();
        assert!(
            e.contains("routing.aodv.release_spacing_ms") && e.contains("out of range"),
            "{e}"
        );
        let e = aodv("route_purge_interval_s = 0").unwrap_err();
        assert!(e.contains("route_purge_interval_s"), "{e}");
        let e = aodv("rules = \"ns3\"").unwrap_err();
        assert!(e.contains("rules"), "{e}");
    }
}
