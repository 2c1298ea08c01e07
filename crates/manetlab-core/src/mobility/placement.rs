//! Static placements: explicit positions, chain, grid, uniform random.
//!
//! Chain and grid follow the papers' static topologies (an n-hop chain with
//! 200 m spacing is the classic TCP-over-multihop setup, e.g. Fu et al. 2003).
//! Uniform placement follows the kernel's contract for `Component::Placement`
//! (one stream per run, entity 0) and draws x then y for node 0, 1, …, so adding
//! nodes never moves existing ones (the same draws as world/build.rs makes today).

use rand::Rng;

use super::{Area, MobilityError, Position, Trajectory};
use crate::sim::{stream, Component};

/// `n` nodes on the x axis, `spacing_m` apart, node 0 at the origin.
pub fn chain(n: u32, spacing_m: f64) -> Result<Vec<Position>, MobilityError> {
    check_spacing(spacing_m)?;
    Ok((0..n).map(|i| [i as f64 * spacing_m, 0.0]).collect())
}

/// `rows × cols` nodes, row-major (node `r·cols + c` at `(c·spacing, r·spacing)`).
pub fn grid(rows: u32, cols: u32, spacing_m: f64) -> Result<Vec<Position>, MobilityError> {
    check_spacing(spacing_m)?;
    if cols == 0 {
        return Err(MobilityError::invalid("cols", cols, "at least 1"));
    }
    Ok((0..rows * cols)
        .map(|i| [(i % cols) as f64 * spacing_m, (i / cols) as f64 * spacing_m])
        .collect())
}

/// `n` positions uniform in `area` from stream `(seed, 0, Placement)`: x then y per node.
pub fn uniform(n: u32, area: Area, seed: u64) -> Result<Vec<Position>, MobilityError> {
    area.validate("area")?;
    let mut rng = stream(seed, 0, Component::Placement);
    Ok((0..n)
        .map(|_| {
            [
                rng.gen::<f64>() * area.width_m,
                rng.gen::<f64>() * area.height_m,
            ]
        })
        .collect())
}

/// Explicit positions; each must be finite.
pub fn explicit(positions_m: &[Position]) -> Result<Vec<Position>, MobilityError> {
    for (i, p) in positions_m.iter().enumerate() {
        if !(p[0].is_finite() && p[1].is_finite()) {
            return Err(MobilityError::invalid(
                format!("positions_m[{i}]"),
                format!("{p:?}"),
                "finite coordinates",
            ));
        }
    }
    Ok(positions_m.to_vec())
}

/// One stationary trajectory per position.
pub fn stationary(positions_m: &[Position]) -> Vec<Trajectory> {
    positions_m
        .iter()
        .map(|&p| Trajectory::stationary(p))
        .collect()
}

fn check_spacing(spacing_m: f64) -> Result<(), MobilityError> {
    if spacing_m.is_finite() && spacing_m >= 0.0 {
        Ok(())
    } else {
        Err(MobilityError::invalid(
            "spacing_m",
            spacing_m,
            "a finite number >= 0",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_and_grid_positions() {
        assert_eq!(
            chain(3, 200.0).unwrap(),
            vec![[0.0, 0.0], [200.0, 0.0], [400.0, 0.0]]
        );
        let g = grid(2, 3, 10.0).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g[4], [10.0, 10.0]);
        assert!(chain(2, -1.0).is_err());
        assert!(grid(2, 0, 1.0).is_err());
    }

    #[test]
    fn uniform_is_inside_and_prefix_stable() {
        let a = Area::new(1500.0, 300.0);
        let p10 = uniform(10, a, 7).unwrap();
        let p50 = uniform(50, a, 7).unwrap();
        assert_eq!(&p50[..10], &p10[..]);
        assert!(p50.iter().all(|&p| a.contains(p)));
        assert_ne!(uniform(10, a, 8).unwrap(), p10);
        assert!(explicit(&[[f64::NAN, 0.0]]).is_err());
    }
}
