//! Wired links.

pub mod p2p;
