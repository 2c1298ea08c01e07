//! The physical layer: propagation, the shared channel, and each node's radio.
//!
//! The reception model is ns-2's CMU model by default (see `radio.rs`), with a
//! cumulative-interference SINR mode as an option. Defaults are ns-2's
//! (`Phy/WirelessPhy`, MODEL_DEFAULTS.md); docs/wireless.md lists every parameter.

pub mod channel;
pub mod propagation;
pub mod radio;

pub use channel::{Channel, Neighbor};
pub use propagation::{Antennas, Propagation, SPEED_OF_LIGHT_MPS};
pub use radio::{CaptureParams, Radio, RadioExtra, RxResult};

/// How a radio decides whether a frame survives overlapping transmissions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reception {
    /// ns-2: the frame being received survives an overlap if it is at least
    /// `capture_threshold` times stronger than the newcomer; otherwise both are lost.
    Capture { capture_threshold: f64 },
    /// Cumulative interference: the frame survives if its power over noise plus the
    /// sum of all overlapping signals stays ≥ `sinr_threshold` for its whole duration.
    Sinr { sinr_threshold: f64, noise_w: f64 },
}

/// Everything the radio and channel need (ns-2 defaults in `Default`).
#[derive(Clone, Copy, Debug)]
pub struct RadioParams {
    pub propagation: Propagation,
    pub antennas: Antennas,
    /// Transmit power (W), ns-2 `Pt_` = 0.28183815.
    pub tx_power_w: f64,
    /// A frame at or above this power can be decoded (W), ns-2 `RXThresh_` (250 m two-ray).
    pub rx_threshold_w: f64,
    /// Carrier is sensed busy at or above this power (W), ns-2 `CSThresh_` (550 m two-ray).
    pub cs_threshold_w: f64,
    pub reception: Reception,
}

/// ns-2's 914 MHz Lucent WaveLAN.
pub const DEFAULT_FREQUENCY_HZ: f64 = 914e6;

impl RadioParams {
    /// Decoding range (m): where the mean power equals RXThresh, the unit-disk
    /// range of connectivity reports, static routes and `scope = "links"`.
    pub fn rx_range_m(&self) -> f64 {
        self.propagation
            .range_m(&self.antennas, self.tx_power_w, self.rx_threshold_w)
    }
}

impl Default for RadioParams {
    fn default() -> Self {
        RadioParams {
            propagation: Propagation::TwoRayGround,
            antennas: Antennas {
                tx_gain: 1.0,
                rx_gain: 1.0,
                tx_height_m: 1.5,
                rx_height_m: 1.5,
                system_loss: 1.0,
                wavelength_m: SPEED_OF_LIGHT_MPS / DEFAULT_FREQUENCY_HZ,
            },
            tx_power_w: 0.28183815,
            rx_threshold_w: 3.652e-10,
            cs_threshold_w: 1.559e-11,
            reception: Reception::Capture {
                capture_threshold: 10.0,
            },
        }
    }
}
