//! Radio propagation models, as ns-2's `Propagation/FreeSpace`,
//! `Propagation/TwoRayGround` and `Propagation/Shadowing` (Rappaport, *Wireless
//! Communications*, §4.2, §4.6, §4.9).
//!
//! All powers are in watts, distances in metres. Antenna gains and the system
//! loss are linear factors (ns-2's `Gt_`, `Gr_`, `L_`).

use crate::sim::SimRng;
use rand_distr_normal::standard_normal;

/// Speed of light (m/s), as ns-2's `SPEED_OF_LIGHT`.
pub const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;

/// The parameters every model shares (ns-2 `Phy/WirelessPhy` + `Antenna/OmniAntenna`).
#[derive(Clone, Copy, Debug)]
pub struct Antennas {
    pub tx_gain: f64,
    pub rx_gain: f64,
    pub tx_height_m: f64,
    pub rx_height_m: f64,
    pub system_loss: f64,
    pub wavelength_m: f64,
}

impl Antennas {
    /// Friis free-space received power (Rappaport eq. 4.1).
    pub fn friis_w(&self, pt_w: f64, d_m: f64) -> f64 {
        let l = self.wavelength_m;
        pt_w * self.tx_gain * self.rx_gain * l * l
            / ((4.0 * std::f64::consts::PI).powi(2) * d_m * d_m * self.system_loss)
    }

    /// Two-ray ground crossover distance 4π·ht·hr/λ: Friis below, d⁻⁴ above.
    pub fn crossover_m(&self) -> f64 {
        4.0 * std::f64::consts::PI * self.tx_height_m * self.rx_height_m / self.wavelength_m
    }

    /// Two-ray ground received power (Rappaport eq. 4.52), Friis below the crossover.
    pub fn two_ray_w(&self, pt_w: f64, d_m: f64) -> f64 {
        if d_m < self.crossover_m() {
            return self.friis_w(pt_w, d_m);
        }
        let (ht, hr) = (self.tx_height_m, self.rx_height_m);
        pt_w * self.tx_gain * self.rx_gain * ht * ht * hr * hr / (d_m.powi(4) * self.system_loss)
    }
}

/// Which model, with its own parameters.
#[derive(Clone, Copy, Debug)]
pub enum Propagation {
    FreeSpace,
    TwoRayGround,
    /// Log-normal shadowing: mean power falls as d^−β from a Friis reference at
    /// `d0_m`; each reception adds a zero-mean Gaussian of `sigma_db` (in dB).
    Shadowing {
        path_loss_exponent: f64,
        sigma_db: f64,
        d0_m: f64,
    },
}

impl Propagation {
    /// Mean received power at distance `d_m` (no random shadowing term); see
    /// [`MeanRx`], which holds the formulas.
    pub fn mean_rx_w(&self, a: &Antennas, pt_w: f64, d_m: f64) -> f64 {
        MeanRx::new(self, a, pt_w).at(d_m)
    }

    /// Received power of one reception whose mean power `mean_w` is known (the
    /// channel has it for every receiver): times a log-normal draw for shadowing.
    #[inline]
    pub fn rx_from_mean_w(&self, mean_w: f64, rng: &mut SimRng) -> f64 {
        match *self {
            Propagation::Shadowing { sigma_db, .. } if sigma_db > 0.0 => {
                mean_w * 10f64.powf(sigma_db * standard_normal(rng) / 10.0)
            }
            _ => mean_w,
        }
    }

    pub fn is_random(&self) -> bool {
        matches!(self, Propagation::Shadowing { sigma_db, .. } if *sigma_db > 0.0)
    }

    /// Largest distance at which the mean power is still ≥ `threshold_w`
    /// (found by bisection, so it holds for every model). For shadowing the
    /// caller widens this by the spread it wants to keep (see `Channel`).
    pub fn range_m(&self, a: &Antennas, pt_w: f64, threshold_w: f64) -> f64 {
        let (mut lo, mut hi) = (0.01, 1.0);
        while self.mean_rx_w(a, pt_w, hi) >= threshold_w {
            hi *= 2.0;
            if hi > 1e9 {
                return hi;
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.mean_rx_w(a, pt_w, mid) >= threshold_w {
                lo = mid
            } else {
                hi = mid
            }
        }
        lo
    }
}

/// The mean received power of one model, transmit power and antenna set, with
/// every factor that does not depend on distance computed once (the channel
/// evaluates it for every receiver of every frame). The one place of the
/// formulas: Friis ([`Antennas::friis_w`]) below the crossover, two-ray ground
/// ([`Antennas::two_ray_w`]) above it, shadowing's `p0 · (d0 / d)^β` from a
/// Friis reference at `d0`; bit-identical to those (the same operations on the
/// same values in the same order, only the constant prefixes hoisted; tested).
#[derive(Clone, Copy, Debug)]
pub struct MeanRx {
    kind: MeanRxKind,
}

#[derive(Clone, Copy, Debug)]
enum MeanRxKind {
    /// Friis: `num / (four_pi_sq · d · d · loss)`; two-ray above `crossover_m`:
    /// `two_ray_num / (d⁴ · loss)`.
    Friis {
        num: f64,
        four_pi_sq: f64,
        loss: f64,
        crossover_m: f64,
        two_ray_num: f64,
    },
    /// `p0` up to `d0_m`, then `p0 · (d0_m / d)^β`.
    Shadowing { p0: f64, d0_m: f64, exponent: f64 },
}

impl MeanRx {
    pub fn new(model: &Propagation, a: &Antennas, pt_w: f64) -> MeanRx {
        let l = a.wavelength_m;
        let num = pt_w * a.tx_gain * a.rx_gain * l * l;
        let four_pi_sq = (4.0 * std::f64::consts::PI).powi(2);
        let (ht, hr) = (a.tx_height_m, a.rx_height_m);
        let kind = match *model {
            Propagation::FreeSpace => MeanRxKind::Friis {
                num,
                four_pi_sq,
                loss: a.system_loss,
                crossover_m: f64::INFINITY,
                two_ray_num: 0.0,
            },
            Propagation::TwoRayGround => MeanRxKind::Friis {
                num,
                four_pi_sq,
                loss: a.system_loss,
                crossover_m: a.crossover_m(),
                two_ray_num: pt_w * a.tx_gain * a.rx_gain * ht * ht * hr * hr,
            },
            Propagation::Shadowing {
                path_loss_exponent,
                d0_m,
                ..
            } => MeanRxKind::Shadowing {
                p0: a.friis_w(pt_w, d0_m),
                d0_m,
                exponent: path_loss_exponent,
            },
        };
        MeanRx { kind }
    }

    /// Mean received power (W) at `d_m`.
    #[inline]
    pub fn at(&self, d_m: f64) -> f64 {
        self.visit(At(d_m))
    }

    /// Mean received powers (W) at two distances (the paired law; tests compare it with [`at`](Self::at)).
    #[inline]
    pub fn at2(&self, d_m: [f64; 2]) -> [f64; 2] {
        self.visit(At2(d_m))
    }

    /// Hand `v` this model's law, distance (m) → mean power (W), with the
    /// choice of model made once: a loop over many receivers inside
    /// [`MeanRxVisitor::visit`] then has no branch on the model. The second
    /// law is the first at two distances at once (bit-identical per lane: the
    /// same operations in the same order, `powi(4)` being `(d·d)·(d·d)`), so
    /// the divisions of two receivers can share one packed instruction.
    #[inline(always)]
    pub fn visit<V: MeanRxVisitor>(&self, v: V) -> V::Output {
        // Co-located antennas: clamp to 1 cm so Friis stays finite.
        match self.kind {
            MeanRxKind::Friis {
                num,
                four_pi_sq,
                loss,
                crossover_m,
                two_ray_num,
            } => v.visit(
                move |d_m: f64| {
                    let d = d_m.max(0.01);
                    if d < crossover_m {
                        num / (four_pi_sq * d * d * loss)
                    } else {
                        two_ray_num / (d.powi(4) * loss)
                    }
                },
                move |d_m: [f64; 2]| {
                    // Both formulas as `n / (k · loss)`: pick `n` and `k` per lane, divide once.
                    let lane = |d_m: f64| {
                        let d = d_m.max(0.01);
                        if d < crossover_m {
                            (num, four_pi_sq * d * d)
                        } else {
                            let d2 = d * d;
                            (two_ray_num, d2 * d2)
                        }
                    };
                    let ((n0, k0), (n1, k1)) = (lane(d_m[0]), lane(d_m[1]));
                    crate::mobility::trajectory::div2([n0, n1], [k0 * loss, k1 * loss])
                },
            ),
            MeanRxKind::Shadowing { p0, d0_m, exponent } => {
                let law = move |d_m: f64| {
                    let d = d_m.max(0.01);
                    if d <= d0_m {
                        p0
                    } else {
                        p0 * (d0_m / d).powf(exponent)
                    }
                };
                v.visit(law, move |d_m: [f64; 2]| [law(d_m[0]), law(d_m[1])])
            }
        }
    }
}

/// Code run with one model's law ([`MeanRx::visit`]): `law` at one distance,
/// `law2` at two (the same results as `law` on each).
pub trait MeanRxVisitor {
    type Output;
    fn visit(
        self,
        law: impl Fn(f64) -> f64 + Copy,
        law2: impl Fn([f64; 2]) -> [f64; 2] + Copy,
    ) -> Self::Output;
}

/// [`MeanRx::at`]: the law at one distance.
struct At(f64);

impl MeanRxVisitor for At {
    type Output = f64;
    #[inline(always)]
    fn visit(
        self,
        law: impl Fn(f64) -> f64 + Copy,
        _: impl Fn([f64; 2]) -> [f64; 2] + Copy,
    ) -> f64 {
        law(self.0)
    }
}

/// [`MeanRx::at2`]: the two-distance law.
struct At2([f64; 2]);

impl MeanRxVisitor for At2 {
    type Output = [f64; 2];
    #[inline(always)]
    fn visit(
        self,
        _: impl Fn(f64) -> f64 + Copy,
        law2: impl Fn([f64; 2]) -> [f64; 2] + Copy,
    ) -> [f64; 2] {
        law2(self.0)
    }
}

/// A standard normal deviate (Box–Muller on the run's own stream, so draws are
/// reproducible without another dependency's sampling order).
mod rand_distr_normal {
    use crate::sim::SimRng;
    use rand::Rng;

    pub fn standard_normal(rng: &mut SimRng) -> f64 {
        // 1 − U keeps the log argument in (0, 1].
        let u1: f64 = 1.0 - rng.gen::<f64>();
        let u2: f64 = rng.gen::<f64>();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{stream, Component};

    /// ns-2 defaults (MODEL_DEFAULTS.md): 914 MHz, 1.5 m antennas, unity gains and loss.
    fn ns2() -> Antennas {
        Antennas {
            tx_gain: 1.0,
            rx_gain: 1.0,
            tx_height_m: 1.5,
            rx_height_m: 1.5,
            system_loss: 1.0,
            wavelength_m: SPEED_OF_LIGHT_MPS / 914e6,
        }
    }
    const PT_W: f64 = 0.28183815;

    fn sig3(x: f64) -> String {
        format!("{:.2e}", x)
    }

    #[test]
    fn two_ray_defaults_give_250_m_and_550_m_ranges() {
        let a = ns2();
        assert_eq!(
            sig3(Propagation::TwoRayGround.mean_rx_w(&a, PT_W, 250.0)),
            sig3(3.652e-10)
        );
        assert_eq!(
            sig3(Propagation::TwoRayGround.mean_rx_w(&a, PT_W, 550.0)),
            sig3(1.559e-11)
        );
        assert!(Propagation::TwoRayGround.mean_rx_w(&a, PT_W, 249.0) >= 3.652e-10);
        assert!(Propagation::TwoRayGround.mean_rx_w(&a, PT_W, 251.0) < 3.652e-10);
        let r = Propagation::TwoRayGround.range_m(&a, PT_W, 3.652e-10);
        assert!((r - 250.0).abs() < 0.05, "range {r}");
    }

    #[test]
    fn crossover_is_about_86_m_and_continuous() {
        let a = ns2();
        let dc = a.crossover_m();
        // ns-2 computes λ from c = 299792458 m/s: 4π·1.5·1.5/0.3280 = 86.20 m.
        assert!((dc - 86.20).abs() < 0.01, "{dc}");
        // At the crossover both formulas agree (that is how it is defined).
        let rel = (a.friis_w(PT_W, dc) - a.two_ray_w(PT_W, dc * (1.0 + 1e-12))).abs()
            / a.friis_w(PT_W, dc);
        assert!(rel < 1e-6);
    }

    #[test]
    fn free_space_falls_with_distance_squared() {
        let a = ns2();
        let p1 = Propagation::FreeSpace.mean_rx_w(&a, 1.0, 100.0);
        let p2 = Propagation::FreeSpace.mean_rx_w(&a, 1.0, 200.0);
        assert!((p1 / p2 - 4.0).abs() < 1e-9);
    }

    /// The hoisted form gives the same bits as the textbook formulas for every
    /// model, across the crossover and the shadowing reference distance.
    #[test]
    fn mean_rx_precomputed_is_bit_identical() {
        let mut a = ns2();
        let (beta, d0) = (2.7, 1.0);
        let reference = |model: &Propagation, a: &Antennas, pt: f64, d_m: f64| {
            let d = d_m.max(0.01);
            match model {
                Propagation::FreeSpace => a.friis_w(pt, d),
                Propagation::TwoRayGround => a.two_ray_w(pt, d),
                Propagation::Shadowing { .. } => {
                    let p0 = a.friis_w(pt, d0);
                    if d <= d0 {
                        p0
                    } else {
                        p0 * (d0 / d).powf(beta)
                    }
                }
            }
        };
        for model in [
            Propagation::FreeSpace,
            Propagation::TwoRayGround,
            Propagation::Shadowing {
                path_loss_exponent: beta,
                sigma_db: 4.0,
                d0_m: d0,
            },
        ] {
            for (pt, gain) in [(PT_W, 1.0), (0.001, 1.7)] {
                a.tx_gain = gain;
                let m = MeanRx::new(&model, &a, pt);
                let mut d = 0.0;
                while d < 3000.0 {
                    assert_eq!(
                        m.at(d).to_bits(),
                        reference(&model, &a, pt, d).to_bits(),
                        "{model:?} at {d} m"
                    );
                    assert_eq!(model.mean_rx_w(&a, pt, d).to_bits(), m.at(d).to_bits());
                    let e = d * 0.7 + 91.0;
                    let pair = m.at2([d, e]);
                    assert_eq!(
                        [pair[0].to_bits(), pair[1].to_bits()],
                        [m.at(d).to_bits(), m.at(e).to_bits()],
                        "{model:?} at {d}, {e} m"
                    );
                    d = d * 1.001 + 0.0037;
                }
                let dc = a.crossover_m();
                for x in [dc, dc.next_up(), dc.next_down(), 1.0, 0.01, 0.0] {
                    assert_eq!(
                        m.at(x).to_bits(),
                        reference(&model, &a, pt, x).to_bits(),
                        "{model:?} at {x} m"
                    );
                    assert_eq!(
                        m.at2([x, dc]).map(f64::to_bits),
                        [m.at(x).to_bits(), m.at(dc).to_bits()],
                        "{model:?} at {x} m"
                    );
                }
            }
        }
    }

    #[test]
    fn shadowing_is_log_normal_around_the_mean() {
        let a = ns2();
        let m = Propagation::Shadowing {
            path_loss_exponent: 2.0,
            sigma_db: 4.0,
            d0_m: 1.0,
        };
        let mean = m.mean_rx_w(&a, PT_W, 100.0);
        // β = 2 from a Friis reference is Friis itself.
        assert!((mean / a.friis_w(PT_W, 100.0) - 1.0).abs() < 1e-9);
        let mut rng = stream(1, 0, Component::Phy);
        let n = 20_000;
        let db: Vec<f64> = (0..n)
            .map(|_| 10.0 * (m.rx_from_mean_w(mean, &mut rng) / mean).log10())
            .collect();
        let mu = db.iter().sum::<f64>() / n as f64;
        let sd = (db.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!(mu.abs() < 0.1, "mean dB offset {mu}");
        assert!((sd - 4.0).abs() < 0.1, "σ {sd}");
    }
}
