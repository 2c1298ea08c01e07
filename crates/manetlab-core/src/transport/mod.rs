//! Transport protocols: UDP here; TCP and its variants in the TCP issue.

pub mod udp;
