//! Scripted movement: per-node lists of `(time, destination, speed)`.
//!
//! Source: ns-2 `$ns_ at t "$node_(i) setdest x y v"` (`MobileNode::set_destination`):
//! at `t` the node starts moving in a straight line from wherever it is towards
//! `(x, y)` at `v` m/s, and stops on arrival; a later setdest overrides the
//! movement in progress. Paper 001's scenario I is written this way (node 0 from
//! (50, 90) to (420, 100) at 5 m/s from t = 0.1 s, then to (2, 450) at 25 m/s from
//! t = 100 s, …).
//!
//! Commands are applied in time order; commands with equal times apply in the
//! order given, as ns-2's scheduler runs equal-time events in insertion order.

use serde::{Deserialize, Serialize};

use super::{MobilityError, Position, Trajectory, TrajectoryBuilder};
use crate::sim::SimTime;

/// One `setdest` command.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SetDest {
    /// When the node starts towards `dest_m` (s).
    pub time_s: f64,
    /// Destination `[x_m, y_m]`.
    pub dest_m: Position,
    /// Speed (m/s); 0 stops the node where it is.
    pub speed_mps: f64,
}

/// The trajectory of a node that starts at `start_m` and obeys `moves`.
/// `key` names the list in errors (e.g. `"mobility.nodes[3].moves"`).
pub fn scripted_trajectory(
    start_m: Position,
    moves: &[SetDest],
    key: &str,
) -> Result<Trajectory, MobilityError> {
    if !(start_m[0].is_finite() && start_m[1].is_finite()) {
        return Err(MobilityError::invalid(
            format!("{key}.start_m"),
            format!("{start_m:?}"),
            "finite coordinates",
        ));
    }
    for (i, m) in moves.iter().enumerate() {
        if !(m.time_s.is_finite() && m.time_s >= 0.0) {
            return Err(MobilityError::invalid(
                format!("{key}[{i}].time_s"),
                m.time_s,
                "a finite number >= 0",
            ));
        }
        if !(m.speed_mps.is_finite() && m.speed_mps >= 0.0) {
            return Err(MobilityError::invalid(
                format!("{key}[{i}].speed_mps"),
                m.speed_mps,
                "a finite number >= 0",
            ));
        }
        if !(m.dest_m[0].is_finite() && m.dest_m[1].is_finite()) {
            return Err(MobilityError::invalid(
                format!("{key}[{i}].dest_m"),
                format!("{:?}", m.dest_m),
                "finite coordinates",
            ));
        }
    }
    let mut order: Vec<&SetDest> = moves.iter().collect();
    order.sort_by(|a, b| a.time_s.total_cmp(&b.time_s)); // stable: equal times keep input order
    let mut b = TrajectoryBuilder::new(start_m);
    for m in order {
        b.setdest(SimTime::from_secs_f64(m.time_s), m.dest_m, m.speed_mps);
    }
    Ok(b.finish())
}

/// Signal loss by movement (paper 003's "a relay moves out of range and returns"):
/// the node, standing at `home_m`, leaves at `leave_s` for `away_m` at `speed_mps`
/// and at `return_s` heads back home at the same speed. Put `away_m` beyond radio
/// range of the node's neighbours; the link breaks as the node crosses the range
/// and comes back as it returns.
pub fn signal_loss(
    home_m: Position,
    away_m: Position,
    leave_s: f64,
    return_s: f64,
    speed_mps: f64,
) -> Vec<SetDest> {
    vec![
        SetDest {
            time_s: leave_s,
            dest_m: away_m,
            speed_mps,
        },
        SetDest {
            time_s: return_s,
            dest_m: home_m,
            speed_mps,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &Trajectory, s: f64) -> Position {
        t.position_at(SimTime::from_secs_f64(s))
    }

    fn close(a: Position, b: Position) -> bool {
        (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6
    }

    #[test]
    fn paper_001_scenario_i_node_0() {
        // (50, 90) → (420, 100) at 5 m/s from 0.1 s; at 100 s → (2, 450) at 25 m/s.
        let moves = [
            SetDest {
                time_s: 100.0,
                dest_m: [2.0, 450.0],
                speed_mps: 25.0,
            },
            SetDest {
                time_s: 0.1,
                dest_m: [420.0, 100.0],
                speed_mps: 5.0,
            },
        ];
        let t = scripted_trajectory([50.0, 90.0], &moves, "moves").unwrap();
        let d1 = (370.0f64).hypot(10.0); // 370.135 m: arrives at 0.1 + 74.027 s
        let arrive = 0.1 + d1 / 5.0;
        assert!(close(at(&t, 0.1), [50.0, 90.0]));
        let f = (50.0 - 0.1) * 5.0 / d1;
        assert!(close(at(&t, 50.0), [50.0 + f * 370.0, 90.0 + f * 10.0]));
        assert!(close(at(&t, arrive + 1.0), [420.0, 100.0]));
        // Second leg: 418 m west, 350 m north at 25 m/s.
        let d2 = (418.0f64).hypot(350.0);
        let g = 10.0 * 25.0 / d2;
        assert!(close(at(&t, 110.0), [420.0 - g * 418.0, 100.0 + g * 350.0]));
        assert!(close(at(&t, 100.0 + d2 / 25.0 + 0.5), [2.0, 450.0]));
    }

    #[test]
    fn bad_commands_are_typed_errors() {
        let e = scripted_trajectory(
            [0.0, 0.0],
            &[SetDest {
                time_s: -1.0,
                dest_m: [1.0, 1.0],
                speed_mps: 1.0,
            }],
            "m",
        )
        .unwrap_err();
        assert_eq!(e.key, "m[0].time_s");
        let e = scripted_trajectory(
            [0.0, 0.0],
            &[SetDest {
                time_s: 1.0,
                dest_m: [1.0, 1.0],
                speed_mps: f64::NAN,
            }],
            "m",
        )
        .unwrap_err();
        assert_eq!(e.key, "m[0].speed_mps");
    }

    #[test]
    fn signal_loss_goes_out_and_comes_back() {
        let moves = signal_loss([200.0, 0.0], [200.0, 400.0], 10.0, 30.0, 20.0);
        let t = scripted_trajectory([200.0, 0.0], &moves, "m").unwrap();
        assert!(close(at(&t, 10.0), [200.0, 0.0]));
        assert!(close(at(&t, 25.0), [200.0, 300.0]));
        assert!(close(at(&t, 30.0), [200.0, 400.0]));
        assert!(close(at(&t, 40.0), [200.0, 200.0]));
        assert!(close(at(&t, 60.0), [200.0, 0.0]));
    }
}
