//! Medium access control: IEEE 802.11 DCF (`dcf.rs`) with its frames and timing.

pub mod dcf;
pub mod frame;

pub use dcf::{Dcf, MacAction, MacTimer};
pub use frame::{Frame, FrameKind, MacParams};
