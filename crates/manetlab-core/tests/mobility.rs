//! Statistical and end-to-end tests of the mobility and fault models
//! (docs/mobility.md). Every expected value is computed here from the model's
//! definition; tolerances are a stated number of standard errors.

use manetlab_core::faults::{
    FailureScope, FaultKind, FaultSchedule, FaultSpec, LinkEffect, RandomLinkFailures,
};
use manetlab_core::ids::NodeId;
use manetlab_core::mobility::connectivity::{
    sampled_link_changes, sampled_pair, DEFAULT_SAMPLE_STEP,
};
use manetlab_core::mobility::ns2::ns2_movement_string;
use manetlab_core::mobility::{
    read_ns2_movement, scripted_trajectory, Area, ConnectivityTimeline, RandomWaypoint, RwpInit,
    SetDest, Trajectory,
};
use manetlab_core::sim::{SimDuration, SimTime};

fn s(x: f64) -> SimTime {
    SimTime::from_secs_f64(x)
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v.sqrt())
}

fn steady(vmin: f64, vmax: f64, pause_s: f64, area: Area) -> RandomWaypoint {
    RandomWaypoint {
        area,
        min_speed_mps: vmin,
        max_speed_mps: vmax,
        pause_s,
        init: RwpInit::SteadyState,
    }
}

#[test]
fn rwp_positions_stay_in_the_area_and_speeds_in_bounds() {
    let area = Area::new(1500.0, 300.0);
    let until = s(900.0);
    let models = [
        RandomWaypoint::ns2(area, 20.0, 0.0),
        RandomWaypoint {
            min_speed_mps: 5.0,
            ..RandomWaypoint::ns2(area, 20.0, 2.0)
        },
        steady(1.0, 20.0, 0.0, area),
        steady(1.0, 20.0, 10.0, area),
    ];
    for m in &models {
        let tr = m.trajectories(11, 100, until).unwrap();
        for t in &tr {
            for leg in t.legs() {
                assert!(
                    area.contains(leg.from_m) && area.contains(leg.to_m),
                    "{m:?}: {leg:?}"
                );
                if !leg.is_pause() {
                    // Commanded speed in (vmin, vmax] (vmin itself only from the steady-state first leg).
                    assert!(
                        leg.speed_mps >= m.min_speed_mps
                            && leg.speed_mps > 0.0
                            && leg.speed_mps <= m.max_speed_mps
                    );
                    // Realised speed (distance over rounded duration) agrees to 1e-6 relative.
                    let v = t.speed_at(leg.start);
                    assert!(
                        (v - leg.speed_mps).abs() <= 1e-6 * leg.speed_mps,
                        "{v} vs {}",
                        leg.speed_mps
                    );
                }
            }
            let mut c = t.cursor();
            for k in 0..1800 {
                let p = c.position_at(SimTime(k * 500_000_000));
                assert!(area.contains(p), "{m:?} left the area: {p:?}");
            }
            // Legs are generated until the run end (the final pause merges into the open leg).
            assert!(
                t.legs().last().unwrap().start + SimDuration::from_secs_f64(m.pause_s) >= until
            );
        }
    }
}

#[test]
fn rwp_steady_state_mean_speed_matches_navidi_camp() {
    // Speed ~ U[1, 20], pause 0: the stationary speed density is 1/(v·ln 20) on
    // [1, 20], with mean 19/ln 20 ≈ 6.342 m/s and E[V²] = (20² − 1²)/(2·ln 20).
    let (vmin, vmax) = (1.0f64, 20.0f64);
    let mu = (vmax - vmin) / (vmax / vmin).ln();
    let sigma = ((vmax * vmax - vmin * vmin) / (2.0 * (vmax / vmin).ln()) - mu * mu).sqrt();
    let m = steady(vmin, vmax, 0.0, Area::new(1000.0, 1000.0));
    assert!((m.stationary_mean_speed_mps() - mu).abs() < 1e-12);
    let n = 10_000;
    let until = s(2000.0);
    let tr = m.trajectories(5, n, until).unwrap();
    // Nodes are independent, so at any instant the ensemble mean of n speeds has
    // standard error σ/√n ≈ 0.051 m/s; allow 4 standard errors (≈ 3.2 %).
    let tol = 4.0 * sigma / (n as f64).sqrt();
    for t in [0.0, 250.0, 1000.0, 2000.0] {
        let mean = tr.iter().map(|x| x.speed_at(s(t))).sum::<f64>() / n as f64;
        assert!(
            (mean - mu).abs() < tol,
            "t = {t} s: mean speed {mean:.4} vs {mu:.4} ± {tol:.4}"
        );
    }
    // Time-averaged over the whole run (distance / duration): a node's time
    // average has at most the variance of one sample, so the same bound holds.
    let mean_ta = tr
        .iter()
        .map(|x| x.distance_m(until) / until.as_secs_f64())
        .sum::<f64>()
        / n as f64;
    assert!(
        (mean_ta - mu).abs() < tol,
        "time-average {mean_ta:.4} vs {mu:.4}"
    );
}

#[test]
fn rwp_steady_state_with_pause_matches_theory() {
    // Pause 10 s: mean speed E[L]/(E[L]·E[1/V] + p) and paused fraction p/(p + E[L]·E[1/V]).
    let m = steady(1.0, 20.0, 10.0, Area::new(1000.0, 500.0));
    let n = 10_000;
    let tr = m.trajectories(6, n, s(600.0)).unwrap();
    for t in [0.0, 300.0, 600.0] {
        let speeds: Vec<f64> = tr.iter().map(|x| x.speed_at(s(t))).collect();
        let (mean, sd) = mean_sd(&speeds);
        let tol = 4.0 * sd / (n as f64).sqrt();
        assert!(
            (mean - m.stationary_mean_speed_mps()).abs() < tol,
            "t={t}: {mean} vs {}",
            m.stationary_mean_speed_mps()
        );
        let paused = speeds.iter().filter(|&&v| v == 0.0).count() as f64 / n as f64;
        let p = m.stationary_pause_probability();
        let tol_p = 4.0 * (p * (1.0 - p) / n as f64).sqrt();
        assert!((paused - p).abs() < tol_p, "t={t}: paused {paused} vs {p}");
    }
}

#[test]
fn rwp_ns2_v1_speed_decays() {
    // setdest v1: speed U(0, 20], pause 0, nodes start moving at t = 0 with a
    // fresh speed, so the ensemble mean at t = 0 is vmax/2 = 10 (s.e. 20/√12/√n).
    // Slow legs last longer, so the time-stationary mean speed is
    // (vmax − vmin)/ln(vmax/vmin) → 0 as vmin → 0: the mean keeps decaying.
    let vmax = 20.0;
    let m = RandomWaypoint::ns2(Area::new(1000.0, 1000.0), vmax, 0.0);
    let n = 4000;
    let tr = m.trajectories(9, n, s(3600.0)).unwrap();
    let mean_at = |t: f64| tr.iter().map(|x| x.speed_at(s(t))).sum::<f64>() / n as f64;
    let se0 = vmax / 12f64.sqrt() / (n as f64).sqrt();
    let m0 = mean_at(0.0);
    assert!((m0 - vmax / 2.0).abs() < 4.0 * se0, "initial mean {m0}");
    // Later means: each has s.e. below vmax/√12/√n ≈ 0.09 m/s (speeds then are
    // concentrated lower, with smaller spread); the required drops are > 5 s.e.
    let (m100, m900, m3600) = (mean_at(100.0), mean_at(900.0), mean_at(3600.0));
    assert!(
        m900 < 0.6 * m0,
        "after 900 s the mean speed {m900:.2} should be well below {m0:.2}"
    );
    assert!(
        m100 > m900 + 5.0 * se0 && m900 > m3600 + 5.0 * se0,
        "decay: {m100:.3} {m900:.3} {m3600:.3}"
    );
    // And the model itself says so.
    assert_eq!(m.stationary_mean_speed_mps(), 0.0);
}

#[test]
fn scripted_movement_is_analytic_paper_001_scenario_i() {
    // Node 1: (450, 410) → (10, 460) at 5 m/s from 0.1 s; → (490, 40) at 15 m/s from 100 s.
    let moves = [
        SetDest {
            time_s: 0.1,
            dest_m: [10.0, 460.0],
            speed_mps: 5.0,
        },
        SetDest {
            time_s: 100.0,
            dest_m: [490.0, 40.0],
            speed_mps: 15.0,
        },
    ];
    let t = scripted_trajectory([450.0, 410.0], &moves, "nodes[1].moves").unwrap();
    let d1 = (440.0f64).hypot(50.0);
    let expect = |time: f64| -> [f64; 2] {
        if time <= 0.1 {
            [450.0, 410.0]
        } else if time < 100.0 {
            let f = ((time - 0.1) * 5.0 / d1).min(1.0);
            [450.0 - 440.0 * f, 410.0 + 50.0 * f]
        } else {
            let d2 = (480.0f64).hypot(420.0);
            let f = ((time - 100.0) * 15.0 / d2).min(1.0);
            [10.0 + 480.0 * f, 460.0 - 420.0 * f]
        }
    };
    for k in 0..=1600 {
        let time = k as f64 * 0.125;
        let (p, e) = (t.position_at(s(time)), expect(time));
        assert!(
            (p[0] - e[0]).abs() < 1e-6 && (p[1] - e[1]).abs() < 1e-6,
            "t={time}: {p:?} vs {e:?}"
        );
    }
    // A setdest while still moving overrides from the current position.
    let over = [
        SetDest {
            time_s: 0.0,
            dest_m: [100.0, 0.0],
            speed_mps: 2.0,
        },
        SetDest {
            time_s: 10.0,
            dest_m: [20.0, 60.0],
            speed_mps: 4.0,
        }, // at 10 s: (20, 0)
    ];
    let t = scripted_trajectory([0.0, 0.0], &over, "m").unwrap();
    let p = t.position_at(s(17.5)); // 30 m north of (20, 0)
    assert!(
        (p[0] - 20.0).abs() < 1e-9 && (p[1] - 30.0).abs() < 1e-9,
        "{p:?}"
    );
    assert_eq!(t.next_change_after(s(10.0)), Some(s(25.0)));
}

fn assert_same_paths(a: &[Trajectory], b: &[Trajectory], until: f64, tol_m: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for k in 0..=(until * 20.0) as u64 {
            let t = SimTime(k * 50_000_000);
            let (p, q) = (x.position_at(t), y.position_at(t));
            assert!(
                (p[0] - q[0]).abs() < tol_m && (p[1] - q[1]).abs() < tol_m,
                "node {i} at {t}: {p:?} vs {q:?}"
            );
        }
    }
}

#[test]
fn ns2_file_round_trip() {
    let area = Area::new(1500.0, 300.0);
    for m in [
        RandomWaypoint::ns2(area, 20.0, 2.0),
        steady(1.0, 20.0, 0.0, area),
    ] {
        let tr = m.trajectories(21, 20, s(300.0)).unwrap();
        let text = ns2_movement_string(&tr, Some("nodes: 20, pause: 2.00, max speed: 20.00"));
        let back = read_ns2_movement(&text).unwrap();
        assert_eq!(back.node_count(), 20);
        let tr2 = back.trajectories(20).unwrap();
        // The file keeps 12 decimals: positions agree to well under a micrometre.
        assert_same_paths(&tr, &tr2, 300.0, 1e-6);
        for (a, b) in tr.iter().zip(&tr2) {
            let starts = |t: &Trajectory| -> Vec<SimTime> {
                t.legs()
                    .iter()
                    .filter(|l| !l.is_pause() && l.end != SimTime::MAX)
                    .map(|l| l.start)
                    .collect()
            };
            assert_eq!(
                starts(a),
                starts(b),
                "every move starts at the same nanosecond"
            );
        }
        // Writing what we read gives the same file.
        assert_eq!(
            ns2_movement_string(&tr2, Some("nodes: 20, pause: 2.00, max speed: 20.00")),
            text
        );
    }
}

#[test]
fn ns2_setdest_fixture_is_read() {
    let text = include_str!("fixtures/setdest_v1_10nodes_1500x300.tcl");
    let m = read_ns2_movement(text).unwrap();
    assert_eq!(m.node_count(), 10);
    assert_eq!(
        m.god_lines,
        text.lines().filter(|l| l.contains("$god_")).count()
    );
    assert_eq!(
        m.moves.iter().map(Vec::len).sum::<usize>(),
        text.lines().filter(|l| l.contains("setdest")).count()
    );
    assert_eq!(m.initial_m[9], [1159.393045147649, 289.502888027973]);
    let tr = m.trajectories(10).unwrap();
    let area = Area::new(1500.0, 300.0);
    for t in &tr {
        for k in 0..=700 {
            assert!(area.contains(t.position_at(SimTime(k * 100_000_000))));
        }
    }
    // Node 3, from the file: starts at (1417.2516, 143.7933), heads for
    // (826.9662, 205.4967) at 19.5725 m/s at 0 s, for (437.1197, 174.5524) at
    // 13.4339 m/s at 30.3233 s (when it has just arrived) and on at 59.4341 s.
    let p0 = [1417.251581995437, 143.793258390784];
    let p1 = [826.966245135972, 205.496747093574];
    let p2 = [437.119658352889, 174.552414169570];
    let along = |a: [f64; 2], b: [f64; 2], dist: f64| {
        let d = (b[0] - a[0]).hypot(b[1] - a[1]);
        let f = (dist / d).min(1.0);
        [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])]
    };
    let n3 = &tr[3];
    for (t, e) in [
        (15.0, along(p0, p1, 15.0 * 19.572477902738)),
        (
            40.0,
            along(p1, p2, (40.0 - 30.323271331178) * 13.433920463764),
        ),
    ] {
        let p = n3.position_at(s(t));
        assert!(
            (p[0] - e[0]).abs() < 1e-6 && (p[1] - e[1]).abs() < 1e-6,
            "t={t}: {p:?} vs {e:?}"
        );
    }
    // The first leg is 593.5 m at 19.57 m/s: it ends at 30.3233 s, where the next starts.
    assert_eq!(n3.next_change_after(s(1.0)), Some(s(30.323271331178)));
}

#[test]
fn same_seed_same_trajectories_and_node_count_does_not_matter() {
    let area = Area::new(1000.0, 1000.0);
    for m in [
        RandomWaypoint::ns2(area, 20.0, 1.0),
        steady(1.0, 20.0, 5.0, area),
    ] {
        let a = m.trajectories(77, 50, s(500.0)).unwrap();
        let b = m.trajectories(77, 50, s(500.0)).unwrap();
        assert_eq!(a, b);
        let few = m.trajectories(77, 3, s(500.0)).unwrap();
        assert_eq!(&a[..3], &few[..]);
        assert_eq!(m.trajectory(77, NodeId(0), s(500.0)).unwrap(), a[0]);
        let other = m.trajectories(78, 3, s(500.0)).unwrap();
        assert_ne!(other[0], a[0]);
        assert_ne!(a[0], a[1], "nodes draw from different streams");
        assert_eq!(ns2_movement_string(&a, None), ns2_movement_string(&b, None));
    }
}

#[test]
fn fault_process_rate_and_duration_match_configuration() {
    // 50 nodes → 1225 links, λ = 0.01/s, 4000 s: ≈ 4000·1225·λ/(1 + λm) failures
    // (≈ 27 000–45 000). The rate per up-second and the mean duration are both
    // exponential-sample means with relative s.e. 1/√count < 0.7 %, so 5 % is
    // more than 7 standard errors.
    let until = s(4000.0);
    for mean_s in [2.5, 10.0, 20.0] {
        let rate = 0.01;
        let spec = FaultSpec {
            random_link_failures: Some(RandomLinkFailures {
                rate_per_s: rate,
                mean_duration_s: mean_s,
                links: None,
                scope: Some(FailureScope::Pairs),
                effect: LinkEffect::Blocked,
                start_s: 0.0,
            }),
            ..FaultSpec::default()
        };
        let sch = FaultSchedule::build(&spec, 2024, 50, until).unwrap();
        let ev = sch.events();
        assert!(ev.windows(2).all(|w| w[0].time <= w[1].time));
        // Per link: up time and complete outages.
        let mut last: std::collections::HashMap<(NodeId, NodeId), (FaultKind, SimTime)> =
            Default::default();
        let (mut up_ns, mut downs, mut outage_ns, mut outages) = (0u128, 0u64, 0u128, 0u64);
        for e in ev {
            let key = (e.a, e.b.unwrap());
            let (prev_kind, prev_t) = last
                .get(&key)
                .copied()
                .unwrap_or((FaultKind::LinkUp, SimTime::ZERO));
            match e.kind {
                FaultKind::LinkDown => {
                    assert_eq!(prev_kind, FaultKind::LinkUp);
                    up_ns += (e.time.0 - prev_t.0) as u128;
                    downs += 1;
                }
                FaultKind::LinkUp => {
                    assert_eq!(prev_kind, FaultKind::LinkDown);
                    outage_ns += (e.time.0 - prev_t.0) as u128;
                    outages += 1;
                }
                k => panic!("unexpected {k:?}"),
            }
            last.insert(key, (e.kind, e.time));
        }
        // Links that never failed, or are up at the end, were up until `until`.
        let links = 50 * 49 / 2;
        for (_, (k, t)) in last.iter() {
            if *k == FaultKind::LinkUp {
                up_ns += (until.0 - t.0) as u128;
            }
        }
        up_ns += (links - last.len()) as u128 * until.0 as u128;
        let measured_rate = downs as f64 / (up_ns as f64 / 1e9);
        let measured_mean = outage_ns as f64 / 1e9 / outages as f64;
        assert!(downs > 20_000, "{downs}");
        assert!(
            (measured_rate / rate - 1.0).abs() < 0.05,
            "m = {mean_s}: rate {measured_rate}"
        );
        assert!(
            (measured_mean / mean_s - 1.0).abs() < 0.05,
            "m = {mean_s}: mean duration {measured_mean}"
        );
        // Long-run failures per second of run time: λ/(1 + λm).
        let per_run_s = downs as f64 / links as f64 / until.as_secs_f64();
        let expect = rate / (1.0 + rate * mean_s);
        assert!(
            (per_run_s / expect - 1.0).abs() < 0.05,
            "m = {mean_s}: {per_run_s} vs {expect}"
        );
    }
}

#[test]
fn exact_connectivity_agrees_with_sampling() {
    let m = RandomWaypoint::ns2(Area::new(1000.0, 1000.0), 20.0, 0.0);
    let until = s(300.0);
    let tr = m.trajectories(3, 20, until).unwrap();
    let tl = ConnectivityTimeline::exact(&tr, 250.0, until);
    // Changes alternate per pair, starting from the initial state.
    for i in 0..20u32 {
        for j in i + 1..20 {
            let mut up = tl.initially_linked(NodeId(i), NodeId(j));
            for c in tl
                .changes()
                .iter()
                .filter(|c| c.a == NodeId(i) && c.b == NodeId(j))
            {
                assert_ne!(c.up, up);
                up = c.up;
            }
        }
    }
    // Sampling every 10 ms sees (almost) the same changes: it only misses a pair
    // in range for less than a step.
    let fine = SimDuration::from_millis(10);
    let sampled = sampled_link_changes(&tr, 250.0, until, fine);
    let exact = tl.link_change_count();
    assert!(exact > 100, "{exact}");
    assert!(
        sampled <= exact && sampled as f64 >= 0.98 * exact as f64,
        "sampled {sampled} vs exact {exact}"
    );
    for (a, b) in [(0, 1), (2, 7), (5, 19)] {
        let (a, b) = (NodeId(a), NodeId(b));
        let e = tl.pair(a, b);
        let p = sampled_pair(&tr, 250.0, a, b, until, DEFAULT_SAMPLE_STEP);
        assert!(
            (e.connected_fraction - p.connected_fraction).abs() < 0.01,
            "{e:?} vs {p:?}"
        );
        match (e.mean_hops, p.mean_hops) {
            (Some(x), Some(y)) => assert!((x - y).abs() < 0.05, "{e:?} vs {p:?}"),
            (x, y) => assert_eq!(x.is_some(), y.is_some()),
        }
    }
}
