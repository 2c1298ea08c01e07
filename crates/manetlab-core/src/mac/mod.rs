//! Medium access control: IEEE 802.11 DCF (`dcf.rs`) with its frames and timing,
//! and ns-2's ARP (`arp.rs`).

pub mod arp;
pub mod dcf;
pub mod frame;

pub use arp::{ArpMsg, ArpOp, ArpTable};
pub use dcf::{Dcf, MacAction, MacTimer};
pub use frame::{EifsMode, Frame, FrameKind, MacParams};
