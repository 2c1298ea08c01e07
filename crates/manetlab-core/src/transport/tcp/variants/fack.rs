//! Forward Acknowledgment (Mathis & Mahdavi, "Forward Acknowledgment: Refining
//! TCP Congestion Control", SIGCOMM 1996; ns-2 `Agent/TCP/Fack`).
//!
//! snd.fack is the forward-most SACKed byte. Recovery starts at three duplicate
//! ACKs or when snd.fack − snd.una > 3 segments; every unSACKed segment below
//! snd.fack is taken as lost; data is sent while awnd = snd.nxt − snd.fack +
//! retran_data < cwnd (the engine's pipe with the FACK loss rule computes exactly
//! this). ssthresh = cwnd = max(FlightSize/2, 2) on entry.
//! Deviations: no "overdamping"/"rampdown" refinements of the paper's §4.

use crate::transport::tcp::cc::{CongestionControl, Recovery};

pub struct Fack;

impl CongestionControl for Fack {
    fn name(&self) -> &'static str {
        "fack"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Fack
    }
}
