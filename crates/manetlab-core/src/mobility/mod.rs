//! Node mobility: where every node is at any instant.
//!
//! Sources: the CMU/ns-2 wireless model (ns-2.35 `indep-utils/cmu-scen-gen/setdest`,
//! `MobileNode::setdest`), Navidi & Camp, "Stationary distributions for the random
//! waypoint mobility model", IEEE TMC 3(1), 2004. Parameters, units, defaults and
//! every difference from ns-2 are in docs/mobility.md.
//!
//! Every model produces one [`Trajectory`] per node: sorted piecewise-linear legs
//! evaluated lazily ([`Trajectory::position_at`], O(log legs), or a
//! [`TrajectoryCursor`] for monotone queries). Nothing here schedules events; the
//! event loop asks for positions and [`Trajectory::next_change_after`].
//!
//! - [`placement`]: static positions (explicit, chain, grid, uniform random).
//! - [`waypoint`]: random waypoint as ns-2 `setdest` v1, with a minimum speed and
//!   Navidi & Camp steady-state initialisation.
//! - [`scripted`]: per-node `(time, destination, speed)` lists with ns-2 semantics.
//! - [`ns2`]: read and write ns-2 movement files.
//! - [`connectivity`]: link changes, pair connectivity and hop counts over time.
//!
//! Determinism: a node's random movement draws only from
//! `sim::stream(seed, node_id, Component::Mobility)`, so the same seed gives the
//! same trajectory whatever else (other nodes, flows) the scenario contains.

pub mod connectivity;
pub mod ns2;
pub mod placement;
pub mod scripted;
pub mod trajectory;
pub mod waypoint;

pub use connectivity::{ConnectivityTimeline, LinkChange};
pub use ns2::{read_ns2_movement, write_ns2_movement, Ns2Movement, Ns2ParseError};
pub use scripted::{scripted_trajectory, signal_loss, SetDest};
pub use trajectory::{
    Leg, LegCache, LegPiece, Position, Trajectory, TrajectoryBuilder, TrajectoryCursor,
};
pub use waypoint::{RandomWaypoint, RwpInit};

use serde::{Deserialize, Serialize};

/// The rectangle nodes move in: `[0, width_m) × [0, height_m)` (m), as ns-2's flat grid.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Area {
    pub width_m: f64,
    pub height_m: f64,
}

impl Area {
    pub fn new(width_m: f64, height_m: f64) -> Area {
        Area { width_m, height_m }
    }

    /// Whether `p` lies in the closed rectangle.
    pub fn contains(&self, p: Position) -> bool {
        (0.0..=self.width_m).contains(&p[0]) && (0.0..=self.height_m).contains(&p[1])
    }

    fn validate(&self, key: &str) -> Result<(), MobilityError> {
        for (name, v) in [("width_m", self.width_m), ("height_m", self.height_m)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(MobilityError::invalid(
                    format!("{key}.{name}"),
                    v,
                    "a finite number > 0",
                ));
            }
        }
        Ok(())
    }
}

/// A mobility parameter that cannot be used: the key, its value and what is allowed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{key} = {value}: must be {allowed}")]
pub struct MobilityError {
    pub key: String,
    pub value: String,
    pub allowed: String,
}

impl MobilityError {
    pub fn invalid(
        key: impl Into<String>,
        value: impl ToString,
        allowed: impl Into<String>,
    ) -> Self {
        MobilityError {
            key: key.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}
