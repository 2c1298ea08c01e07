//! Why a packet copy ends before its destination: every layer reports drops with
//! one of these reasons, and the trace and result writers print its ns-2 code.

/// How many reasons end a packet copy ([`DropReason::PACKET_DROPS`]).
pub const N_PACKET_DROPS: usize = 14;

/// Why a packet was dropped, with ns-2's trace code (docs/metrics.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// Interface/link queue overflow (ns-2 `IFQ`).
    QueueOverflow,
    /// No route to the destination (ns-2 `NRTE`).
    NoRoute,
    /// TTL reached zero (ns-2 `TTL`).
    TtlExpired,
    /// Link error model dropped the packet (ns-2 `ERR`).
    LinkError,
    /// MAC retry limit exhausted (ns-2 `RET`).
    RetryLimit,
    /// A frame for this node was lost to a collision (ns-2 `COL`).
    Collision,
    /// RED/LRED dropped the packet early (ns-2 traces these as queue drops; we
    /// keep them apart as `RED`).
    EarlyDrop,
    /// The node holding the packet is switched off (a fault): its interface queue
    /// is flushed, and whatever it originates, forwards or receives meanwhile is
    /// dropped. Not an ns-2 code (ns-2's CMU model has no node switches); `OFF`.
    NodeOff,
    /// The point-to-point link the packet crossed is down (a fault); `LNK`.
    /// Over the radio a failed link carries no signal at all, so the sender's
    /// MAC reports `RET` instead.
    LinkDown,
    /// A packet waited in a routing protocol's send buffer longer than its
    /// timeout (ns-2 `DROP_RTR_QTIMEOUT`, `TOUT`).
    SendBufferTimeout,
    /// A routing protocol's send buffer was full; the oldest packet is dropped
    /// (ns-2 `DROP_RTR_QFULL`, traced `IFQ` by the routing agent: key `rtr.IFQ`).
    SendBufferFull,
    /// A node received a packet it originated (ns-2 `DROP_RTR_ROUTE_LOOP`, `LOOP`).
    RouteLoop,
    /// Dropped by the routing layer after link-layer feedback: a packet taken
    /// back from the interface queue for a broken link (ns-2
    /// `DROP_RTR_MAC_CALLBACK`, `CBK`).
    MacCallback,
    /// ARP held a packet for an unresolved next hop and a newer one replaced it
    /// (ns-2 `DROP_IFQ_ARP_FULL`, traced `ARP` by the interface queue's drop target).
    ArpHoldReplaced,
    /// FRN: the packet's lifetime in slots ran out (paper 003 §II), in the MAC's
    /// buffer or waiting at its source for a route; `LIFE`.
    LifetimeExpired,
}

impl DropReason {
    /// Every reason that ends a packet copy, in the fixed column order of the
    /// result tables. `Collision` is not among them: a collision loses one
    /// frame, and the sender still holds the packet (it is a MAC counter,
    /// `mac_collisions`). A new variant must be added here (see `index`).
    pub const PACKET_DROPS: [DropReason; N_PACKET_DROPS] = [
        DropReason::QueueOverflow,
        DropReason::EarlyDrop,
        DropReason::NoRoute,
        DropReason::TtlExpired,
        DropReason::SendBufferTimeout,
        DropReason::SendBufferFull,
        DropReason::RouteLoop,
        DropReason::MacCallback,
        DropReason::LinkError,
        DropReason::LinkDown,
        DropReason::NodeOff,
        DropReason::RetryLimit,
        DropReason::ArpHoldReplaced,
        DropReason::LifetimeExpired,
    ];

    /// Position in [`DropReason::PACKET_DROPS`]; `None` for frame-level events.
    /// Exhaustive on purpose: a new reason does not compile until it is placed.
    pub fn index(self) -> Option<usize> {
        Some(match self {
            DropReason::QueueOverflow => 0,
            DropReason::EarlyDrop => 1,
            DropReason::NoRoute => 2,
            DropReason::TtlExpired => 3,
            DropReason::SendBufferTimeout => 4,
            DropReason::SendBufferFull => 5,
            DropReason::RouteLoop => 6,
            DropReason::MacCallback => 7,
            DropReason::LinkError => 8,
            DropReason::LinkDown => 9,
            DropReason::NodeOff => 10,
            DropReason::RetryLimit => 11,
            DropReason::ArpHoldReplaced => 12,
            DropReason::LifetimeExpired => 13,
            DropReason::Collision => return None,
        })
    }

    /// ns-2's three-letter trace code.
    pub const fn code(self) -> &'static str {
        match self {
            DropReason::QueueOverflow => "IFQ",
            DropReason::NoRoute => "NRTE",
            DropReason::TtlExpired => "TTL",
            DropReason::LinkError => "ERR",
            DropReason::RetryLimit => "RET",
            DropReason::Collision => "COL",
            DropReason::EarlyDrop => "RED",
            DropReason::NodeOff => "OFF",
            DropReason::LinkDown => "LNK",
            DropReason::SendBufferTimeout => "TOUT",
            DropReason::SendBufferFull => "IFQ",
            DropReason::RouteLoop => "LOOP",
            DropReason::MacCallback => "CBK",
            DropReason::ArpHoldReplaced => "ARP",
            DropReason::LifetimeExpired => "LIFE",
        }
    }
    /// The layer that dropped it.
    pub fn layer(self) -> &'static str {
        match self {
            DropReason::QueueOverflow | DropReason::EarlyDrop | DropReason::ArpHoldReplaced => {
                "ifq"
            }
            DropReason::NoRoute
            | DropReason::TtlExpired
            | DropReason::SendBufferTimeout
            | DropReason::SendBufferFull
            | DropReason::RouteLoop
            | DropReason::MacCallback
            | DropReason::LifetimeExpired => "rtr",
            DropReason::LinkError | DropReason::LinkDown => "link",
            DropReason::NodeOff => "node",
            DropReason::RetryLimit | DropReason::Collision => "mac",
        }
    }
    /// Key used in result tables: `layer.CODE`.
    pub fn key(self) -> String {
        format!("{}.{}", self.layer(), self.code())
    }
}
