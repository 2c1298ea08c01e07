//! `[routing.dsdv]`: the given keys of [`dsdv::Params`] (declared there once,
//! with units, ranges and ns-2 sources) over the `fidelity` profile, and the
//! check across keys (docs/routing.md).

use super::{num, ScenarioError};
use crate::param::{Fidelity, Overrides};
use crate::routing::dsdv;

/// `[routing.dsdv]`: the keys a scenario gives; unset keys take the profile's value.
pub type DsdvSpec = Overrides<dsdv::Params>;

/// The DSDV parameters of a `[routing.dsdv]` section (or of none) under `fidelity`.
pub fn dsdv_params(spec: Option<&DsdvSpec>, fidelity: Fidelity) -> dsdv::Params {
    let base = dsdv::Params::for_fidelity(fidelity);
    spec.map_or(base, |s| s.apply(base))
}

pub(super) fn validate_dsdv(spec: &DsdvSpec, fidelity: Fidelity) -> Result<(), ScenarioError> {
    let q = dsdv_params(Some(spec), fidelity);
    if q.neighbour_timeout().as_secs_f64() > 1e6 {
        return Err(ScenarioError::new(
            "routing.dsdv.min_update_periods",
            format!(
                "{} periods of {} s is out of range (allowed: a neighbour timeout <= 1000000 s)",
                q.min_update_periods,
                num(q.periodic_update_interval.as_secs_f64())
            ),
        ));
    }
    Ok(())
}
