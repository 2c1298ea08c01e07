//! Forward Acknowledgment: ns-2.35 `Agent/TCP/Fack` by default, or the published
//! algorithm (Mathis & Mahdavi, "Forward Acknowledgment: Refining TCP Congestion
//! Control", SIGCOMM 1996) with `flows[].tcp.fack_rules = "mathis"`.
//!
//! **"ns2"** (default, `tcp-fack.cc` on `scoreboard.cc`, with `TCPSink/Sack1`; the
//! engine is `recovery/fack_ns2.rs`):
//! * fack = the highest segment SACKed or acked; "duplicate ACKs" are counted as
//!   fack − last_ack − 1, so recovery starts once the highest SACK lies three or more
//!   segments above the cumulative ACK. No limited transmit: outside recovery the
//!   sender only sends on an ACK that leaves that count at 0.
//! * Entering recovery: ssthresh = ⌊min(cwnd, window_)/2⌋ ≥ 2 and **cwnd = 1**
//!   (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`), the first hole is resent,
//!   the timer restarts; recover = the next segment to send.
//! * In recovery every ACK (duplicate or not) opens cwnd as in slow start / avoidance
//!   (`opencwnd`); segments go out while snd_nxt − fack − 1 + retran_data < ⌊cwnd⌋:
//!   first every unSACKed, unretransmitted segment below fack (ns-2's scoreboard),
//!   then new data within `window_` of the cumulative ACK.
//! * A retransmission is taken as lost again when a SACK covers a segment sent after
//!   it (`CheckSndNxt`); the sender then stops sending until the timeout — and since
//!   every ACK restarts the timer (`newtimer`), that happens only once ACKs stop.
//! * Recovery ends on an ACK with no SACK blocks that covers `recover` (a segment sent
//!   after the fast retransmit). A timeout does not end it: ssthresh halves, cwnd = 1,
//!   the scoreboard is cleared and sending goes back to the cumulative ACK. With
//!   nothing outstanding (a lost retransmission stopped sending, then everything was
//!   acked short of `recover`) it restarts at `windowInit_` without backoff instead.
//! * Every ACK that is not a plain new ACK restarts the timer and gives an RTT sample
//!   from the sink's timestamp echo (`oldack`'s `rtt_update`): the send time of the
//!   newest segment that arrived in order (`TCPSink` `ts_echo_bugfix_`), so duplicate
//!   ACKs during a loss give ever longer samples.
//! * `rampdown_` and `ss-div4_` are off in ns-2.35 (`ns-default.tcl`) and not modelled.
//!
//! **"mathis"**: snd.fack is the forward-most SACKed byte. Recovery starts at three
//! duplicate ACKs or when snd.fack − snd.una > 3 segments; every unSACKed segment
//! below snd.fack is taken as lost; data is sent while awnd = snd.nxt − snd.fack +
//! retran_data < cwnd (the engine's RFC 6675 pipe with the FACK loss rule computes
//! exactly this). ssthresh = ⌊min(cwnd, window_)/2⌋ ≥ 2, cwnd = min(cwnd, window_)/2 on entry. Deviations: no
//! "overdamping"/"rampdown" refinements of the paper's §4.

use crate::transport::tcp::cc::{CongestionControl, Recovery};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::variants::Variant;

/// Registry entry (`fack_rules` is checked with the table: its allowed values).
pub const VARIANT: Variant = Variant::new("fack", |cfg| {
    Box::new(Fack {
        mathis: FackParams::from_config(cfg).rules == FackRules::Mathis,
    })
});

/// Which FACK (scenario key `flows[].tcp.fack_rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FackRules {
    /// `"ns2"` (default): ns-2.35's `Agent/TCP/Fack`.
    #[default]
    Ns2,
    /// `"mathis"`: Mathis & Mahdavi 1996 with RFC 6675's pipe.
    Mathis,
}

/// FACK's parameters.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FackParams {
    /// The rule set. Default [`FackRules::Ns2`]. Key `fack_rules`.
    pub rules: FackRules,
}

impl FackParams {
    /// The flow's value, the default where the key is absent.
    pub fn from_config(cfg: &TcpConfig) -> Self {
        FackParams {
            rules: match cfg.fack_rules.as_deref() {
                Some("mathis") => FackRules::Mathis,
                Some(_) | None => FackRules::Ns2,
            },
        }
    }
}

pub struct Fack {
    /// Mathis & Mahdavi's rules instead of ns-2.35's (`fack_rules = "mathis"`).
    pub mathis: bool,
}

impl CongestionControl for Fack {
    fn name(&self) -> &'static str {
        "fack"
    }
    fn recovery(&self) -> Recovery {
        if self.mathis {
            Recovery::Fack
        } else {
            Recovery::FackNs2
        }
    }
}
