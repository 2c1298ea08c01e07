//! Applications: traffic sources that hand payloads to a transport.

pub mod cbr;
pub mod ftp;
pub mod ns2_traffic;
