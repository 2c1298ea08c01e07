//! Transport protocols: UDP and TCP (with its congestion-control variants).

pub mod tcp;
pub mod udp;

pub use crate::wire::TransportNotice;
