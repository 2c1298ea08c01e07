//! What travels between nodes and between layers: packets with their typed
//! headers and on-the-wire sizes, every protocol's messages and per-packet
//! extensions, the ARP message format, drop reasons and transport notices.
//!
//! `wire` is plain data. It depends only on [`crate::sim`] (time) and
//! [`crate::ids`]; every model layer imports its messages from here and never
//! the reverse, so a protocol's message format can be read, sized and rendered
//! (ns-2 trace fields, pcap bytes) without its state machine. Headers are Rust
//! structs, not byte buffers; a trace or pcap writer serialises them only when
//! asked (docs/architecture.md).

pub mod aodv;
pub mod arp;
mod drop;
pub mod dsdv;
pub mod dsr;
pub mod frn;
mod notice;
mod packet;
pub mod render;
mod routing;
#[cfg(test)]
pub(crate) mod test_support;

pub use drop::{DropReason, N_PACKET_DROPS};
pub use notice::TransportNotice;
pub use packet::*;
pub use render::{Ns2Style, PcapBody, WireFormat};
pub use routing::RoutingMessage;
