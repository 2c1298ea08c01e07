//! Bianchi's saturation-throughput model of 802.11 DCF (G. Bianchi, "Performance
//! analysis of the IEEE 802.11 distributed coordination function", IEEE JSAC
//! 18(3), 2000), with a finite retry limit: a frame is dropped after `attempts`
//! transmissions, so the backoff chain has stages 0..attempts−1 and
//! τ = Σ pⁱ / Σ pⁱ·(Wᵢ+1)/2 (expected attempts per frame over expected slots per
//! frame; Wᵢ = min(2ⁱ, 2ᵐ)·W₀ backoff values in stage i). Collisions last the
//! colliding frame plus EIFS, because every station that was not transmitting
//! saw an errored frame ("EIFS variant").
//!
//! Shared by tests/bianchi.rs and examples/validate_wireless.rs.

use manetlab_core::mac::frame::{ACK_BYTES, CTS_BYTES, RTS_BYTES};
use manetlab_core::mac::MacParams;

#[derive(Clone, Copy, Debug)]
pub struct BianchiResult {
    pub tau: f64,
    pub p: f64,
    /// Payload throughput (bit/s).
    pub throughput_bps: f64,
}

fn tau_of_p(p: f64, w0: f64, m: u32, attempts: u32) -> f64 {
    let (mut num, mut den, mut pi) = (0.0, 0.0, 1.0);
    for i in 0..attempts {
        let wi = w0 * 2f64.powi(i.min(m) as i32);
        num += pi;
        den += pi * (wi + 1.0) / 2.0;
        pi *= p;
    }
    num / den
}

/// The fixed point (τ, p) for `n` stations, by bisection on τ.
pub fn fixed_point(n: u32, mac: &MacParams, attempts: u32) -> (f64, f64) {
    let w0 = (mac.cw_min + 1) as f64;
    let m = ((mac.cw_max + 1) as f64 / w0).log2().round() as u32;
    let p_of = |tau: f64| 1.0 - (1.0 - tau).powi(n as i32 - 1);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        // g(τ) = τ − f(p(τ)) is increasing in τ.
        if mid - tau_of_p(p_of(mid), w0, m, attempts) > 0.0 {
            hi = mid
        } else {
            lo = mid
        }
    }
    let tau = 0.5 * (lo + hi);
    (tau, p_of(tau))
}

/// Saturation throughput for `n` stations sending `msdu_bytes` frames carrying
/// `payload_bytes` of payload, propagation delay `delta_s`.
pub fn saturation(
    n: u32,
    mac: &MacParams,
    rts_cts: bool,
    msdu_bytes: u32,
    payload_bytes: u32,
    delta_s: f64,
) -> BianchiResult {
    let attempts = mac.short_retry_limit;
    let (tau, p) = fixed_point(n, mac, attempts);
    let s = |d: manetlab_core::sim::SimDuration| d.as_secs_f64();
    let (sifs, difs, eifs, slot) = (s(mac.sifs), s(mac.difs()), s(mac.eifs()), s(mac.slot));
    let data = s(mac.data_airtime(msdu_bytes));
    let ack = s(mac.ctrl_airtime(ACK_BYTES));
    let (ts, tc) = if rts_cts {
        let rts = s(mac.ctrl_airtime(RTS_BYTES));
        let cts = s(mac.ctrl_airtime(CTS_BYTES));
        (
            rts + sifs
                + delta_s
                + cts
                + sifs
                + delta_s
                + data
                + sifs
                + delta_s
                + ack
                + difs
                + delta_s,
            rts + eifs + delta_s,
        )
    } else {
        (
            data + sifs + delta_s + ack + difs + delta_s,
            data + eifs + delta_s,
        )
    };
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let ps = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / ptr;
    let e_slot = (1.0 - ptr) * slot + ptr * ps * ts + ptr * (1.0 - ps) * tc;
    BianchiResult {
        tau,
        p,
        throughput_bps: ps * ptr * (payload_bytes as f64 * 8.0) / e_slot,
    }
}

/// The `[mac]` keys that switch every ns-2 departure from the standard to the
/// standard's behaviour (what Bianchi's model assumes), and ARP off.
pub const STANDARD_MAC_KEYS: &str = "immediate_access = true\neifs = \"standard\"\nack_data_without_cts = true\nbackoff_includes_cw = true\narp = false\n";

/// A scenario of `n` saturated senders on a 5 m circle around a sink (node 0);
/// `standard` adds [`STANDARD_MAC_KEYS`] (otherwise ns-2's defaults).
pub fn saturation_scenario(
    n: u32,
    rts_cts: bool,
    payload_bytes: u32,
    duration_s: f64,
    seed: u64,
    standard: bool,
) -> String {
    let mut pos = vec!["[0, 0]".to_string()];
    for i in 0..n {
        let a = 2.0 * std::f64::consts::PI * i as f64 / n as f64;
        pos.push(format!("[{:.6}, {:.6}]", 5.0 * a.cos(), 5.0 * a.sin()));
    }
    let mut text = format!(
        "seed = {seed}\nduration_s = {duration_s}\n[nodes]\ncount = {}\nplacement = {{ kind = \"explicit\", positions_m = [{}] }}\n[radio]\n[mac]\nrts_threshold_bytes = {}\n",
        n + 1,
        pos.join(", "),
        if rts_cts { 0 } else { 65_535 }
    );
    if standard {
        text += STANDARD_MAC_KEYS;
    }
    for i in 1..=n {
        // 50 packets/s per station: far above each one's share of the channel.
        text += &format!("[[flows]]\nkind = \"cbr\"\nsrc = {i}\ndst = 0\npacket_size_bytes = {payload_bytes}\ninterval_s = 0.02\n");
    }
    text
}
