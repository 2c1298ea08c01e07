//! Typed indices into the simulator's arenas.

use std::fmt;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize { self.0 as usize }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{}", self.0) }
        }
    };
}

id_type!(/// A node, `0..nodes.count`.
    NodeId);
id_type!(/// A flow, in scenario order.
    FlowId);
id_type!(/// A point-to-point (duplex) link, in scenario order.
    LinkId);
