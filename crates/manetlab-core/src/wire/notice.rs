//! Notices the network layer hands to the transport layer (plain data: the
//! routing protocols raise them, TCP senders act on them).

/// A notice from the network layer to the transport layer of a node about its
/// route to `dst` (ELFN, Holland & Vaidya 1999; paper 003's ERDN / ERSN). The
/// simulator hands it to every TCP sender at the node whose flow goes to `dst`;
/// variants that do not use ELFN ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportNotice {
    /// The route to `dst` broke (ERDN / ELFN).
    RouteFailed { dst: crate::ids::NodeId },
    /// A route to `dst` is available again (ERSN).
    RouteReestablished { dst: crate::ids::NodeId },
}
