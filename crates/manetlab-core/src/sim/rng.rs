//! Independent random streams (common random numbers).
//!
//! Every random decision draws from a stream identified by `(run seed, entity,
//! component)`. The stream's 256-bit state is derived by the documented hash
//! below, so adding a flow or a node creates new streams without changing the
//! draws of any existing one: two runs that differ only in their TCP variant see
//! the same mobility, the same link errors and the same cross traffic.
//!
//! Derivation (see docs/kernel.md): `k = splitmix64(seed ^ splitmix64(entity ^
//! splitmix64(component)))`, then the Xoshiro256++ state is filled with four
//! successive SplitMix64 outputs starting from `k` (the seeding procedure its
//! authors recommend). `entity` is a node id, flow id or link id depending on the
//! component; components are distinct constants so that e.g. node 3's mobility and
//! flow 3's application never share a stream.

use rand::SeedableRng;
pub use rand_xoshiro::Xoshiro256PlusPlus as SimRng;

/// Which part of the model a stream belongs to. The numeric values are part of
/// the reproducibility contract: never renumber, only append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Component {
    /// Node placement (uniform random positions); entity = 0 (one stream per run).
    Placement = 1,
    /// Node mobility; entity = node id.
    Mobility = 2,
    /// Application traffic randomness (CBR jitter); entity = flow id.
    Application = 3,
    /// Point-to-point link packet errors; entity = 2·link id + direction.
    LinkError = 4,
    /// 802.11 MAC backoff; entity = node id.
    Mac = 5,
    /// Radio/propagation randomness (shadowing); entity = node id.
    Phy = 6,
    /// Routing protocol jitter; entity = node id.
    Routing = 7,
    /// Fault processes; entity = node or link id.
    Faults = 8,
    /// Transport-layer randomness; entity = flow id.
    Transport = 9,
    /// Queue disciplines (RED/LRED drop decisions); entity = node id.
    Queue = 10,
    /// Traffic generators (`[[traffic.cbrgen]]`: pairs and start times); entity =
    /// the generator's `stream`.
    TrafficGen = 11,
}

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 64-bit key of stream `(seed, entity, component)`.
pub fn stream_key(seed: u64, entity: u64, component: Component) -> u64 {
    splitmix64(seed ^ splitmix64(entity ^ splitmix64(component as u64)))
}

/// A fresh generator for stream `(seed, entity, component)`.
pub fn stream(seed: u64, entity: u64, component: Component) -> SimRng {
    // seed_from_u64 expands the key with SplitMix64, as Xoshiro's authors recommend.
    SimRng::seed_from_u64(stream_key(seed, entity, component))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn draws(mut r: SimRng) -> Vec<u64> {
        (0..8).map(|_| r.gen()).collect()
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        assert_eq!(
            draws(stream(1, 3, Component::Mobility)),
            draws(stream(1, 3, Component::Mobility))
        );
        assert_ne!(
            draws(stream(1, 3, Component::Mobility)),
            draws(stream(2, 3, Component::Mobility))
        );
        assert_ne!(
            draws(stream(1, 3, Component::Mobility)),
            draws(stream(1, 4, Component::Mobility))
        );
        assert_ne!(
            draws(stream(1, 3, Component::Mobility)),
            draws(stream(1, 3, Component::Application))
        );
    }

    #[test]
    fn key_derivation_is_pinned() {
        // Pin the documented hash: changing it silently would change every result.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(
            stream_key(0, 0, Component::Placement),
            splitmix64(splitmix64(splitmix64(1)))
        );
    }
}
