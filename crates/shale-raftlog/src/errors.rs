//! raft-engine's error type, with the same variants, so code matching on
//! `Error::EntryCompacted` or `Error::Full` keeps compiling.
//!
//! Errors from Shale's file-system layer (`shale_base::Error`, kind plus RocksDB-style
//! message) are mapped by kind: IO errors become `Io` (keeping the OS error code),
//! corruption becomes `Corruption`, invalid arguments `InvalidArgument`, anything else
//! `Other`.

use std::fmt;
use std::io::Error as IoError;

/// The error of every fallible raft log operation.
#[derive(Debug)]
pub enum Error {
    InvalidArgument(String),
    Corruption(String),
    Io(IoError),
    /// A protobuf message failed to encode or decode.
    #[cfg(feature = "protobuf")]
    Protobuf(protobuf::ProtobufError),
    /// The operation failed in a way that a retry may fix (a full disk after rotating to a
    /// new file).
    TryAgain(String),
    /// The entry asked for was compacted away.
    EntryCompacted,
    /// The entry asked for does not exist (yet).
    EntryNotFound,
    /// The batch grew past the largest size a batch may have.
    Full,
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(s) => write!(f, "Invalid Argument: {s}"),
            Error::Corruption(s) => write!(f, "Corruption: {s}"),
            Error::Io(e) => write!(f, "IO Error: {e:?}"),
            #[cfg(feature = "protobuf")]
            Error::Protobuf(e) => write!(f, "Protobuf Error: {e}"),
            Error::TryAgain(s) => write!(f, "TryAgain Error: {s}"),
            Error::EntryCompacted => write!(f, "Entry Compacted"),
            Error::EntryNotFound => write!(f, "Entry Not Found"),
            Error::Full => write!(f, "Full"),
            Error::Other(e) => write!(f, "Other Error: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            #[cfg(feature = "protobuf")]
            Error::Protobuf(e) => Some(e),
            Error::Other(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<IoError> for Error {
    fn from(e: IoError) -> Error {
        Error::Io(e)
    }
}

#[cfg(feature = "protobuf")]
impl From<protobuf::ProtobufError> for Error {
    fn from(e: protobuf::ProtobufError) -> Error {
        Error::Protobuf(e)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for Error {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Error {
        Error::Other(e)
    }
}

impl From<shale_base::Error> for Error {
    fn from(e: shale_base::Error) -> Error {
        use shale_base::ErrorKind;
        match e.kind() {
            ErrorKind::IOError => {
                let kind = match e.os_code() {
                    Some(code) => IoError::from_raw_os_error(code).kind(),
                    None => std::io::ErrorKind::Other,
                };
                // Keep Shale's message (it names the file and operation) and the OS code.
                Error::Io(IoError::new(kind, ShaleIoError(e)))
            }
            // Carry the text after Shale's prefix: this type's Display prints its own.
            ErrorKind::Corruption => Error::Corruption(e.state().to_string()),
            ErrorKind::InvalidArgument => Error::InvalidArgument(e.state().to_string()),
            _ => Error::Other(Box::new(e)),
        }
    }
}

/// A Shale IO error carried inside a `std::io::Error`.
#[derive(Debug)]
struct ShaleIoError(shale_base::Error);

impl fmt::Display for ShaleIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ShaleIoError {}

impl Error {
    /// The OS error code behind an IO error, when there is one (ENOSPC, EIO, ...).
    pub fn os_code(&self) -> Option<i32> {
        match self {
            Error::Io(e) => e.raw_os_error().or_else(|| {
                e.get_ref().and_then(|inner| inner.downcast_ref::<ShaleIoError>()).and_then(|s| s.0.os_code())
            }),
            _ => None,
        }
    }

    /// A copy with the same kind, message and OS code (the type is not `Clone`: an `Io`
    /// or `Other` error owns a boxed source, which is copied as its text).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io(io) => {
                let shale = io.get_ref().and_then(|inner| inner.downcast_ref::<ShaleIoError>());
                Error::Io(match (shale, io.raw_os_error()) {
                    (Some(s), _) => IoError::new(io.kind(), ShaleIoError(s.0.clone())),
                    (None, Some(code)) => IoError::from_raw_os_error(code),
                    (None, None) => IoError::new(io.kind(), io.to_string()),
                })
            }
            Error::Corruption(s) => Error::Corruption(s.clone()),
            Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
            Error::TryAgain(s) => Error::TryAgain(s.clone()),
            Error::EntryCompacted => Error::EntryCompacted,
            Error::EntryNotFound => Error::EntryNotFound,
            Error::Full => Error::Full,
            #[cfg(feature = "protobuf")]
            Error::Protobuf(e) => Error::Other(e.to_string().into()),
            Error::Other(e) => Error::Other(e.to_string().into()),
        }
    }

    pub(crate) fn corruption(msg: impl fmt::Display) -> Error {
        Error::Corruption(msg.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shale_errors_map_by_kind() {
        let e: Error = shale_base::Error::io_code("append 0001.raftlog", libc_enospc()).into();
        assert!(matches!(e, Error::Io(_)));
        assert_eq!(e.os_code(), Some(libc_enospc()));
        assert!(e.to_string().contains("0001.raftlog"), "{e}");
        let e: Error = shale_base::Error::corruption("bad batch").into();
        assert!(matches!(e, Error::Corruption(ref s) if s.contains("bad batch")));
    }

    #[test]
    fn converted_messages_carry_one_prefix() {
        let e: Error = shale_base::Error::corruption("bad batch in 0001.raftlog at offset 64").into();
        assert_eq!(e.to_string(), "Corruption: bad batch in 0001.raftlog at offset 64");
        let e: Error = shale_base::Error::invalid_argument("region 7 is empty").into();
        assert_eq!(e.to_string(), "Invalid Argument: region 7 is empty");
    }

    fn libc_enospc() -> i32 {
        28
    }
}
