//! `[routing.aodv]`: the given keys of [`aodv::Params`] (declared there once),
//! over ns-2's defaults or RFC 3561's (`preset = "rfc3561"` or the scenario's
//! `fidelity = "standard"`), and their cross-key checks;
//! `[routing.dsr]`: the same for DSR ([`dsr::Params`], over the `fidelity`
//! profile) (docs/routing.md).

use super::{num, ScenarioError};
use crate::param::{Fidelity, Overrides, ParamSet};
use crate::routing::aodv::{self, LinkDetection, Rules};
use crate::routing::dsr;
use serde::Deserialize;

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

/// `[routing.dsr]`: the keys a scenario gives, each declared once in
/// [`dsr::Params`] (unit, range, source); unset keys take the `fidelity` profile's value.
pub type DsrSpec = Overrides<dsr::Params>;

/// The DSR parameters of a `[routing.dsr]` section (or of none) under `fidelity`.
pub fn dsr_params(spec: Option<&DsrSpec>, fidelity: Fidelity) -> dsr::Params {
    let base = dsr::Params::for_fidelity(fidelity);
    let Some(spec) = spec else {
        return base;
    };
    let mut q = spec.apply(base);
    if !spec.given("gratuitous_replies") {
        // Route shortening needs the tap: off with it unless asked for
        // (validation rejects asking for it without the tap).
        q.gratuitous_replies = base.gratuitous_replies && q.promiscuous;
    }
    q
}

pub(super) fn validate_dsr(spec: &DsrSpec, fidelity: Fidelity) -> Result<(), ScenarioError> {
    let p = |k: &str| format!("routing.dsr.{k}");
    let q = dsr_params(Some(spec), fidelity);
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
    if spec.given("gratuitous_replies") && q.gratuitous_replies && !q.promiscuous {
        return Err(ScenarioError::new(
            p("gratuitous_replies"),
            "needs promiscuous = true (route shortening works on overheard packets)",
        ));
    }
    let only = [
        (
            "grat_reply_holdoff_s",
            q.gratuitous_replies,
            "gratuitous_replies = true",
        ),
        (
            "grat_holdoff_bug",
            q.gratuitous_replies,
            "gratuitous_replies = true",
        ),
        ("max_salvage_count", q.salvage, "salvage = true"),
        ("salvage_requests", q.salvage, "salvage = true"),
        ("error_keeps_salvage_count", q.salvage, "salvage = true"),
        (
            "nonprop_request_timeout_ms",
            q.ring_zero_search,
            "ring_zero_search = true",
        ),
        (
            "error_hold_s",
            q.propagate_last_error,
            "propagate_last_error = true",
        ),
    ];
    for (key, enabled, needs) in only {
        if spec.given(key) && !enabled {
            return Err(ScenarioError::new(
                p(key),
                format!("only applies with {needs}"),
            ));
        }
    }
    Ok(())
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
