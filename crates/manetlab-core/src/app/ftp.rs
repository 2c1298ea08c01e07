//! FTP over TCP (ns-2 `Application/FTP`): a bulk transfer that keeps the TCP
//! sender's buffer full. Either an infinite backlog (the default, as the papers
//! use it) or a file of `file_bytes` bytes, whose completion time — when the
//! sender receives the ACK of its last byte — is reported. `stop_s` ends the
//! file at the bytes already handed down (ns-2 `$ftp stop`).

/// What an FTP application asks of its TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ftp {
    /// None: infinite backlog.
    pub file_bytes: Option<u64>,
}

impl Ftp {
    pub fn new(file_bytes: Option<u64>) -> Self {
        Ftp { file_bytes }
    }
}
