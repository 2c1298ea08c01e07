//! The routing protocols' control messages as one transport header. A new
//! protocol registers here: one variant and one arm of [`RoutingMessage::wire`].

use super::WireFormat;

/// A routing protocol's control message, carried as a packet's transport header
/// (`TransportHeader::Routing`, `ip.proto = Manet`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoutingMessage {
    Aodv(super::aodv::AodvMessage),
    Dsdv(super::dsdv::DsdvMessage),
    Dsr(super::dsr::DsrMessage),
    Frn(super::frn::FrnMessage),
}

impl RoutingMessage {
    /// The message behind the trait every protocol's messages implement: its
    /// size and its rendering in ns-2 traces and pcap files.
    pub fn wire(&self) -> &dyn WireFormat {
        match self {
            RoutingMessage::Aodv(m) => m,
            RoutingMessage::Dsdv(m) => m,
            RoutingMessage::Dsr(m) => m,
            RoutingMessage::Frn(m) => m,
        }
    }

    /// Bytes after the IP header, as ns-2 counts them.
    pub fn size_bytes(&self) -> u32 {
        self.wire().size_bytes()
    }
}
