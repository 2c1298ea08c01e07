//! Helpers shared by integration tests (and examples via #[path]).
#[allow(dead_code)]
pub mod bianchi;
#[allow(dead_code)]
pub mod broch;
#[allow(dead_code)]
pub mod relay;
#[allow(dead_code)]
pub mod traced;
