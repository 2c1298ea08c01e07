//! Congestion-control variants, one file each. Each opens with its source and
//! our deviations; registration is one line in `cc::REGISTRY`.

pub mod abra;
pub mod elfn;
pub mod fack;
pub mod fixed_rto;
pub mod mpr;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;
pub mod tcp_ap;
pub mod vegas;
pub mod westwood;

#[cfg(test)]
mod tests;
