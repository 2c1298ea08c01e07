//! Random waypoint mobility.
//!
//! Sources:
//! - ns-2.35 `indep-utils/cmu-scen-gen/setdest/setdest.cc`, version 1 (CMU 1999):
//!   the start position is uniform in the area; the first "trip" is a pause of
//!   `pause_s`; then repeatedly a destination uniform in the area, a speed
//!   uniform in (0, vmax], straight-line travel, and a constant pause.
//! - Navidi & Camp, "Stationary distributions for the random waypoint mobility
//!   model", IEEE TMC 3(1):99–108, 2004: draw the initial state from the
//!   stationary distribution so that the run starts in steady state (no speed
//!   decay, no density drift towards the centre).
//!
//! Deviations from ns-2 (see docs/mobility.md): a minimum speed `min_speed_mps`
//! (ns-2 v1 has none; with it speeds are uniform in (vmin, vmax]); z is ignored;
//! times are rounded to the nanosecond; the steady-state option samples the
//! full Navidi & Camp state (position on a length-biased leg, 1/v-biased speed,
//! residual pause), whereas ns-2's setdest v2 only biases the first speed.
//!
//! Draw order (part of the reproducibility contract), all from
//! `stream(seed, node, Component::Mobility)`:
//! - `ns2` init: x0, y0; then per leg: dest x, dest y, speed.
//! - `steady_state` init: u (paused?); if paused: x0, y0, residual-pause u; if
//!   moving: repeated (x1, y1, x2, y2, accept-u) until accepted, then the
//!   fraction along the leg, then the speed u; then per leg as above.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Area, MobilityError, Position, Trajectory, TrajectoryBuilder};
use crate::ids::NodeId;
use crate::sim::{stream, Component, SimDuration, SimRng, SimTime};

/// How the initial state of each node is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RwpInit {
    /// As ns-2 setdest v1: uniform start position, first trip a pause.
    /// The average speed then decays over the run (Yoon, Liu, Noble 2003).
    #[default]
    Ns2,
    /// Navidi & Camp 2004 stationary initial state; needs `min_speed_mps > 0`.
    SteadyState,
}

/// Random waypoint parameters. Defaults: `min_speed_mps = 0`, `pause_s = 0`
/// (the papers' setting), `init = ns2`; `area` and `max_speed_mps` are required.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomWaypoint {
    /// Where destinations are drawn (m).
    pub area: Area,
    /// Lower speed bound (m/s); 0 reproduces ns-2's (0, vmax].
    #[serde(default)]
    pub min_speed_mps: f64,
    /// Upper speed bound vmax (m/s), ns-2 `-M`.
    pub max_speed_mps: f64,
    /// Constant pause at each waypoint (s), ns-2 `-p`.
    #[serde(default)]
    pub pause_s: f64,
    #[serde(default)]
    pub init: RwpInit,
}

impl RandomWaypoint {
    /// ns-2 setdest v1 with the given area, vmax and pause.
    pub fn ns2(area: Area, max_speed_mps: f64, pause_s: f64) -> RandomWaypoint {
        RandomWaypoint {
            area,
            min_speed_mps: 0.0,
            max_speed_mps,
            pause_s,
            init: RwpInit::Ns2,
        }
    }

    /// Check every parameter; errors name the key.
    pub fn validate(&self) -> Result<(), MobilityError> {
        self.area.validate("area")?;
        let (vmin, vmax) = (self.min_speed_mps, self.max_speed_mps);
        if !(vmax.is_finite() && vmax > 0.0) {
            return Err(MobilityError::invalid(
                "max_speed_mps",
                vmax,
                "a finite number > 0",
            ));
        }
        if !(vmin.is_finite() && (0.0..=vmax).contains(&vmin)) {
            return Err(MobilityError::invalid(
                "min_speed_mps",
                vmin,
                "a number in [0, max_speed_mps]",
            ));
        }
        if !(self.pause_s.is_finite() && self.pause_s >= 0.0) {
            return Err(MobilityError::invalid(
                "pause_s",
                self.pause_s,
                "a finite number >= 0",
            ));
        }
        if self.init == RwpInit::SteadyState && vmin <= 0.0 {
            // With vmin = 0, E[1/V] is infinite: the stationary regime has every
            // node (almost) stopped, which is exactly the decay being avoided.
            return Err(MobilityError::invalid(
                "min_speed_mps",
                vmin,
                "> 0 when init = \"steady_state\" (no stationary regime exists with speeds near 0)",
            ));
        }
        Ok(())
    }

    /// `E[1/V]` (s/m) for V uniform on [vmin, vmax]; infinite when vmin = 0.
    pub fn mean_inverse_speed_s_per_m(&self) -> f64 {
        let (vmin, vmax) = (self.min_speed_mps, self.max_speed_mps);
        if vmin <= 0.0 {
            f64::INFINITY
        } else if vmax - vmin < 1e-12 * vmax {
            1.0 / vmax
        } else {
            (vmax / vmin).ln() / (vmax - vmin)
        }
    }

    /// Long-run fraction of time a node is paused: `p / (p + E[L]·E[1/V])`.
    pub fn stationary_pause_probability(&self) -> f64 {
        let move_s = mean_leg_length_m(self.area) * self.mean_inverse_speed_s_per_m();
        if self.pause_s == 0.0 {
            0.0
        } else {
            self.pause_s / (self.pause_s + move_s)
        }
    }

    /// Stationary (time- or ensemble-) mean speed (m/s), counting paused nodes as 0:
    /// `E[L] / (E[L]·E[1/V] + p)`. With pause 0 this is `1/E[1/V] =
    /// (vmax − vmin)/ln(vmax/vmin)`, which tends to 0 as vmin → 0 (the decay).
    pub fn stationary_mean_speed_mps(&self) -> f64 {
        let l = mean_leg_length_m(self.area);
        let inv = self.mean_inverse_speed_s_per_m();
        if inv.is_infinite() {
            return 0.0;
        }
        l / (l * inv + self.pause_s)
    }

    /// Node `node`'s trajectory, with legs generated until at least `until`;
    /// after the last generated leg the node stays put (only `[0, until]` is meaningful).
    pub fn trajectory(
        &self,
        seed: u64,
        node: NodeId,
        until: SimTime,
    ) -> Result<Trajectory, MobilityError> {
        self.validate()?;
        let mut rng = stream(seed, node.0 as u64, Component::Mobility);
        let pause = SimDuration::from_secs_f64(self.pause_s);
        let mut b = match self.init {
            RwpInit::Ns2 => {
                let mut b = TrajectoryBuilder::new(self.uniform_point(&mut rng));
                // setdest v1: `time_arrival = TIME + PAUSE`, the first trip is a pause.
                b.pause_until(SimTime::ZERO + pause);
                b
            }
            RwpInit::SteadyState => self.steady_state_start(&mut rng, pause),
        };
        while b.free_at() < until {
            let before = b.free_at();
            let dest = self.uniform_point(&mut rng);
            let speed = self.draw_speed(&mut rng);
            b.move_to(dest, speed);
            let t = b.free_at();
            // In a sub-nanometre area a move takes under 1 ns and is a jump;
            // keep time advancing so generation always ends.
            b.pause_until((t + pause).max(before + SimDuration::from_nanos(1)));
        }
        Ok(b.finish())
    }

    /// Trajectories of nodes `0..n`; node i's depends only on (seed, i, self).
    pub fn trajectories(
        &self,
        seed: u64,
        n: u32,
        until: SimTime,
    ) -> Result<Vec<Trajectory>, MobilityError> {
        (0..n)
            .map(|i| self.trajectory(seed, NodeId(i), until))
            .collect()
    }

    fn uniform_point(&self, rng: &mut SimRng) -> Position {
        [
            rng.gen::<f64>() * self.area.width_m,
            rng.gen::<f64>() * self.area.height_m,
        ]
    }

    /// Speed uniform in (vmin, vmax]: ns-2 v1 draws `uniform() * MAXSPEED` and
    /// asserts it is non-zero; we use 1 − U[0,1) ∈ (0, 1] so 0 cannot occur.
    fn draw_speed(&self, rng: &mut SimRng) -> f64 {
        let u = 1.0 - rng.gen::<f64>();
        self.min_speed_mps + u * (self.max_speed_mps - self.min_speed_mps)
    }

    /// Navidi & Camp 2004, Section 4 (initialisation in the stationary regime).
    fn steady_state_start(&self, rng: &mut SimRng, pause: SimDuration) -> TrajectoryBuilder {
        if rng.gen::<f64>() < self.stationary_pause_probability() {
            // A paused node sits on a waypoint, and waypoints are uniform; the
            // remaining pause of a constant pause p is uniform on (0, p].
            let mut b = TrajectoryBuilder::new(self.uniform_point(rng));
            let residual_s = (1.0 - rng.gen::<f64>()) * pause.as_secs_f64();
            b.pause_until(SimTime::from_secs_f64(residual_s));
            return b;
        }
        // A moving node is on a leg chosen with probability proportional to its
        // length (time spent on a leg ∝ length): accept two uniform points with
        // probability |P1P2| / diagonal. Its position is uniform along the leg.
        let diag_m = self.area.width_m.hypot(self.area.height_m);
        let (p1, p2) = loop {
            let p1 = self.uniform_point(rng);
            let p2 = self.uniform_point(rng);
            let r = (p2[0] - p1[0]).hypot(p2[1] - p1[1]);
            if rng.gen::<f64>() * diag_m < r {
                break (p1, p2);
            }
        };
        let f = rng.gen::<f64>();
        let start = [p1[0] + f * (p2[0] - p1[0]), p1[1] + f * (p2[1] - p1[1])];
        // The speed of a moving node has density ∝ f_V(v)/v; for V uniform on
        // [vmin, vmax] that is 1/(v·ln(vmax/vmin)), sampled by inverting its CDF.
        let (vmin, vmax) = (self.min_speed_mps, self.max_speed_mps);
        let u = rng.gen::<f64>();
        let speed = vmin * (vmax / vmin).powf(u);
        let mut b = TrajectoryBuilder::new(start);
        b.move_to(p2, speed);
        let t = b.free_at();
        b.pause_until(t + pause);
        b
    }
}

/// Mean distance (m) between two points uniform in a `w × h` rectangle, i.e. the
/// mean random-waypoint leg length `E[L]` (Ghosh 1951; used by Navidi & Camp):
/// (1/15)(w³/h² + h³/w² + d(3 − w²/h² − h²/w²)) + (1/6)((h²/w)·ln((w+d)/h) + (w²/h)·ln((h+d)/w)),
/// d = √(w² + h²).
pub fn mean_leg_length_m(area: Area) -> f64 {
    let (w, h) = (area.width_m, area.height_m);
    let d = w.hypot(h);
    let (w2, h2) = (w * w, h * h);
    (w2 * w / h2 + h2 * h / w2 + d * (3.0 - w2 / h2 - h2 / w2)) / 15.0
        + ((h2 / w) * ((w + d) / h).ln() + (w2 / h) * ((h + d) / w).ln()) / 6.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_leg_length_matches_known_values_and_monte_carlo() {
        // Unit square: 0.521405433... (classic square line picking constant).
        assert!((mean_leg_length_m(Area::new(1.0, 1.0)) - 0.521_405_433_2).abs() < 1e-9);
        // Scales linearly.
        assert!((mean_leg_length_m(Area::new(500.0, 500.0)) - 260.702_716_6).abs() < 1e-6);
        // A thin rectangle, against Monte Carlo (200k pairs: s.e. ≈ 0.8 m).
        let a = Area::new(1500.0, 300.0);
        let mut rng = stream(99, 0, Component::Mobility);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let (x1, y1, x2, y2) = (
                rng.gen::<f64>(),
                rng.gen::<f64>(),
                rng.gen::<f64>(),
                rng.gen::<f64>(),
            );
            sum += ((x2 - x1) * 1500.0).hypot((y2 - y1) * 300.0);
        }
        assert!(
            (mean_leg_length_m(a) - sum / n as f64).abs() < 4.0,
            "{} vs {}",
            mean_leg_length_m(a),
            sum / n as f64
        );
    }

    #[test]
    fn validation_names_the_key() {
        let ok = RandomWaypoint::ns2(Area::new(100.0, 100.0), 20.0, 0.0);
        assert!(ok.validate().is_ok());
        let e = RandomWaypoint {
            max_speed_mps: 0.0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "max_speed_mps");
        let e = RandomWaypoint {
            min_speed_mps: 30.0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "min_speed_mps");
        let e = RandomWaypoint {
            init: RwpInit::SteadyState,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "min_speed_mps");
        let e = RandomWaypoint {
            pause_s: -1.0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "pause_s");
        let e = RandomWaypoint {
            area: Area::new(0.0, 5.0),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "area.width_m");
    }

    #[test]
    fn ns2_init_pauses_first_then_moves_with_pauses() {
        let m = RandomWaypoint::ns2(Area::new(1000.0, 1000.0), 20.0, 5.0);
        let t = m
            .trajectory(3, NodeId(0), SimTime::from_secs_f64(500.0))
            .unwrap();
        let legs = t.legs();
        assert!(legs[0].is_pause());
        assert_eq!(legs[0].end, SimTime::from_secs_f64(5.0));
        for pair in legs.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
            assert_eq!(pair[0].to_m, pair[1].from_m);
            // Moves and 5 s pauses alternate.
            assert_ne!(pair[0].is_pause(), pair[1].is_pause());
        }
        for l in legs
            .iter()
            .filter(|l| l.is_pause() && l.end != SimTime::MAX)
        {
            assert_eq!(l.end - l.start, SimDuration::from_secs_f64(5.0));
        }
        assert!(legs.last().unwrap().start >= SimTime::from_secs_f64(500.0));
    }

    #[test]
    fn generation_ends_even_when_moves_are_shorter_than_a_nanosecond() {
        let m = RandomWaypoint::ns2(Area::new(1e-12, 1e-12), 20.0, 0.0);
        let t = m.trajectory(1, NodeId(0), SimTime(10_000)).unwrap();
        assert!(t.legs().len() <= 10_001);
        assert!(Area::new(1e-12, 1e-12).contains(t.position_at(SimTime(5_000))));
    }

    #[test]
    fn stationary_mean_speed_formula() {
        let mut m = RandomWaypoint::ns2(Area::new(1000.0, 1000.0), 20.0, 0.0);
        m.min_speed_mps = 1.0;
        assert!((m.stationary_mean_speed_mps() - 19.0 / 20f64.ln()).abs() < 1e-12);
        m.min_speed_mps = 0.0;
        assert_eq!(m.stationary_mean_speed_mps(), 0.0);
    }
}
