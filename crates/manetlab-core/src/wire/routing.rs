//! The routing protocols' control messages as one transport header.

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
    /// Bytes after the IP header, as ns-2 counts them.
    pub fn size_bytes(&self) -> u32 {
        match self {
            RoutingMessage::Aodv(m) => m.size_bytes(),
            RoutingMessage::Dsdv(m) => m.size_bytes(),
            RoutingMessage::Dsr(m) => m.size_bytes(),
            RoutingMessage::Frn(m) => m.size_bytes(),
        }
    }
}
