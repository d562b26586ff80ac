//! Typed errors, shaped like RocksDB's `Status` and rust-rocksdb's `Error`.
//!
//! Every error has a kind (RocksDB's status code) and a message. The message is
//! rendered the way RocksDB renders a status (`"Corruption: bad block in 000012.sst
//! at offset 4096"`), so log lines and user-visible strings read the same as they
//! would with RocksDB.

use std::fmt;

/// The kind of an error: RocksDB's status codes, as rust-rocksdb's `ErrorKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    NotFound,
    Corruption,
    NotSupported,
    InvalidArgument,
    IOError,
    MergeInProgress,
    Incomplete,
    ShutdownInProgress,
    TimedOut,
    Aborted,
    Busy,
    Expired,
    TryAgain,
    CompactionTooLarge,
    ColumnFamilyDropped,
    Unknown,
}

impl ErrorKind {
    /// The prefix RocksDB's `Status::ToString` puts before the message.
    fn prefix(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "NotFound: ",
            ErrorKind::Corruption => "Corruption: ",
            ErrorKind::NotSupported => "Not implemented: ",
            ErrorKind::InvalidArgument => "Invalid argument: ",
            ErrorKind::IOError => "IO error: ",
            ErrorKind::MergeInProgress => "Merge in progress: ",
            ErrorKind::Incomplete => "Result incomplete: ",
            ErrorKind::ShutdownInProgress => "Shutdown in progress: ",
            ErrorKind::TimedOut => "Operation timed out: ",
            ErrorKind::Aborted => "Operation aborted: ",
            ErrorKind::Busy => "Resource busy: ",
            ErrorKind::Expired => "Operation expired: ",
            ErrorKind::TryAgain => "Operation failed. Try again.: ",
            ErrorKind::CompactionTooLarge => "Compaction too large: ",
            ErrorKind::ColumnFamilyDropped => "Column family dropped: ",
            ErrorKind::Unknown => "Unknown: ",
        }
    }
}

/// An error from Shale: a kind plus RocksDB-style message.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The OS error number behind an IO error, when there was one (ENOSPC, EIO, ...).
    os_code: Option<i32>,
}

impl Error {
    /// An error of `kind`; `msg` is the text after RocksDB's kind prefix.
    pub fn new(kind: ErrorKind, msg: impl fmt::Display) -> Error {
        Error { kind, message: format!("{}{}", kind.prefix(), msg), os_code: None }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The whole message, as rust-rocksdb's `Error::into_string`.
    pub fn into_string(self) -> String {
        self.message
    }

    /// The message without the kind's prefix, as RocksDB's `Status::getState()`: the text to
    /// carry into another error type that prints its own prefix.
    pub fn state(&self) -> &str {
        self.message.strip_prefix(self.kind.prefix()).unwrap_or(&self.message)
    }

    /// The OS error code of an IO error, if it came from the OS.
    pub fn os_code(&self) -> Option<i32> {
        self.os_code
    }

    /// True for an IO error caused by a full disk (ENOSPC), which RocksDB calls `NoSpace`.
    pub fn is_no_space(&self) -> bool {
        self.os_code == Some(libc::ENOSPC)
    }

    pub fn corruption(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Corruption, msg)
    }

    pub fn not_found(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::NotFound, msg)
    }

    pub fn not_supported(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::NotSupported, msg)
    }

    pub fn invalid_argument(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::InvalidArgument, msg)
    }

    pub fn busy(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Busy, msg)
    }

    pub fn shutdown(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::ShutdownInProgress, msg)
    }

    /// An IO error with the context it happened in (usually an operation and a path).
    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Error {
        let mut e = Error::new(ErrorKind::IOError, format!("{context}: {err}"));
        e.os_code = err.raw_os_error();
        e
    }

    /// An IO error that did not come from the OS.
    pub fn io_msg(msg: impl fmt::Display) -> Error {
        Error::new(ErrorKind::IOError, msg)
    }

    /// An IO error carrying an explicit OS code (used by fault-injecting file systems).
    pub fn io_code(msg: impl fmt::Display, code: i32) -> Error {
        let mut e = Error::new(ErrorKind::IOError, msg);
        e.os_code = Some(code);
        e
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error {{ message: {:?} }}", self.message)
    }
}

impl std::error::Error for Error {}

impl AsRef<str> for Error {
    fn as_ref(&self) -> &str {
        &self.message
    }
}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.message
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_rocksdb_prefixes() {
        let e = Error::corruption("bad block in 000012.sst at offset 4096");
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.to_string(), "Corruption: bad block in 000012.sst at offset 4096");
        let e = Error::invalid_argument("x");
        assert_eq!(e.state(), "x");
        assert_eq!(e.into_string(), "Invalid argument: x");
    }

    #[test]
    fn io_errors_keep_os_code() {
        let e = Error::io("write /x", std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(e.is_no_space());
        assert_eq!(e.kind(), ErrorKind::IOError);
        assert!(e.to_string().starts_with("IO error: write /x: "));
    }
}
