//! Helpers shared by integration tests (and examples via #[path]).
pub mod bianchi;
#[allow(dead_code)]
pub mod broch;
