//! The classic comparison of Broch, Maltz, Johnson, Hu, Jetcheva, "A performance
//! comparison of multi-hop wireless ad hoc network routing protocols", MobiCom
//! 1998: 50 nodes in 1500 m × 300 m, random waypoint with maximum speed 20 m/s
//! and pause time P, 10 CBR sources of 4 packets/s of 64 bytes, 900 s.
//!
//! Flow endpoints and start times are drawn from the scenario's own random
//! stream (seeded here, not in the simulator) so every protocol sees the same
//! traffic; sources start in the first 180 s, as in Broch et al.

use manetlab_core::sim::{stream, Component};
use rand::Rng;

pub const NODES: u32 = 50;

pub fn scenario(protocol: &str, pause_s: f64, seed: u64, duration_s: f64) -> String {
    let mut text = format!(
        "name = \"broch-{protocol}-pause{pause_s}\"\nseed = {seed}\nduration_s = {duration_s}\n\
         [area]\nwidth_m = 1500\nheight_m = 300\n[nodes]\ncount = {NODES}\n[radio]\n[mac]\ndata_rate_mbps = 2\n\
         [routing]\nprotocol = \"{protocol}\"\n\
         [mobility]\nmodel = \"random_waypoint\"\nmax_speed_mps = 20\npause_s = {pause_s}\n"
    );
    // Traffic pattern: a stream of its own (entity = seed), independent of the protocol.
    let mut rng = stream(seed, 1_000_000, Component::Application);
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    while pairs.len() < 10 {
        let (a, b) = (rng.gen_range(0..NODES), rng.gen_range(0..NODES));
        if a != b && !pairs.contains(&(a, b)) {
            pairs.push((a, b));
        }
    }
    for (a, b) in pairs {
        let start: f64 = rng.gen_range(0.0..180.0_f64.min(duration_s / 2.0));
        text += &format!("[[flows]]\nkind = \"cbr\"\nsrc = {a}\ndst = {b}\npacket_size_bytes = 64\ninterval_s = 0.25\nstart_s = {start:.3}\n");
    }
    text
}
