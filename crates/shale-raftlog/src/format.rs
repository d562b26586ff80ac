//! Log files: names, queues and the file header (raft-engine 0.4.2's
//! `file_pipe_log/format.rs`).
//!
//! File names (sequence numbers zero-padded to 16 digits):
//! ```text
//! 0000000000000001.raftlog            append queue, file seq 1
//! 0000000000000001.rewrite            rewrite queue, file seq 1
//! 0000000000000007.raftlog.reserved   a recycled file kept for reuse (append queue)
//! LOCK                                the directory lock
//! ```
//! File header, V1 (61 bytes) and V2 (69 bytes):
//! ```text
//! +-------------------------------------------------------+-------------+---------------+
//! | magic "RAFT-LOG-FILE-HEADER-9986AB3E47F320B394C8E84916EB0ED5" (53 bytes) |
//! +-------------------------------------------------------+-------------+---------------+
//! | version: u64 big-endian (1 or 2)  | V2 only: alignment: u64 big-endian (0 = none)   |
//! +-----------------------------------+-------------------------------------------------+
//! ```
//! Then log batches (see `log_batch.rs`) follow back to back. With V2 every batch's item
//! footer checksum is XORed with the low 32 bits of the file's sequence number (the
//! "signature"), so a batch left over from the file's previous life (a recycled file is
//! reused by renaming and overwriting it from the start) fails its checksum and ends the
//! file instead of being replayed. With V2 and a non-zero alignment, zero bytes may pad
//! the space up to the next aligned offset before a batch.

use std::cmp::Ordering;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Which of the two logs a file belongs to.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum LogQueue {
    /// Written by `Engine::write`.
    Append = 0,
    /// Written by purge: live data of old append files, copied before they are removed.
    Rewrite = 1,
}

/// A file's sequence number within its queue.
pub type FileSeq = u64;

/// A log file: queue and sequence number.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub struct FileId {
    pub queue: LogQueue,
    pub seq: FileSeq,
}

impl FileId {
    pub fn new(queue: LogQueue, seq: FileSeq) -> FileId {
        FileId { queue, seq }
    }

    /// The file's name in its directory.
    pub fn build_file_name(&self) -> String {
        match self.queue {
            LogQueue::Append => format!("{:016}{APPEND_SUFFIX}", self.seq),
            LogQueue::Rewrite => format!("{:016}{REWRITE_SUFFIX}", self.seq),
        }
    }

    pub fn build_file_path(&self, dir: &Path) -> PathBuf {
        dir.join(self.build_file_name())
    }

    /// Parses a log file name; None for anything else (reserved files included).
    pub fn parse_file_name(name: &str) -> Option<FileId> {
        if name.len() <= SEQ_WIDTH || !name.is_char_boundary(SEQ_WIDTH) {
            return None;
        }
        let seq = name[..SEQ_WIDTH].parse::<u64>().ok()?;
        match &name[SEQ_WIDTH..] {
            APPEND_SUFFIX => Some(FileId::new(LogQueue::Append, seq)),
            REWRITE_SUFFIX => Some(FileId::new(LogQueue::Rewrite, seq)),
            _ => None,
        }
    }
}

/// Rewrite files order before append files (raft-engine replays the rewrite queue first).
impl Ord for FileId {
    fn cmp(&self, other: &FileId) -> Ordering {
        match (self.queue, other.queue) {
            (LogQueue::Append, LogQueue::Rewrite) => Ordering::Greater,
            (LogQueue::Rewrite, LogQueue::Append) => Ordering::Less,
            _ => self.seq.cmp(&other.seq),
        }
    }
}

impl PartialOrd for FileId {
    fn partial_cmp(&self, other: &FileId) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.build_file_name())
    }
}

const SEQ_WIDTH: usize = 16;
const APPEND_SUFFIX: &str = ".raftlog";
const REWRITE_SUFFIX: &str = ".rewrite";
const RESERVED_SUFFIX: &str = ".raftlog.reserved";
/// The magic string every log file starts with.
pub const LOG_FILE_MAGIC_HEADER: &[u8] = b"RAFT-LOG-FILE-HEADER-9986AB3E47F320B394C8E84916EB0ED5";

/// The name of a recycled (reserved) file.
pub fn build_reserved_file_name(seq: FileSeq) -> String {
    format!("{seq:016}{RESERVED_SUFFIX}")
}

pub fn parse_reserved_file_name(name: &str) -> Option<FileSeq> {
    if name.len() <= SEQ_WIDTH || !name.is_char_boundary(SEQ_WIDTH) || &name[SEQ_WIDTH..] != RESERVED_SUFFIX {
        return None;
    }
    name[..SEQ_WIDTH].parse::<u64>().ok()
}

/// The log file format version.
#[repr(u64)]
#[derive(Clone, Copy, Debug, Eq, PartialEq, Hash, Default, PartialOrd, Ord)]
pub enum Version {
    /// No signature, no alignment.
    #[default]
    V1 = 1,
    /// Batches signed with the file sequence number (needed for log recycling).
    V2 = 2,
}

impl Version {
    pub fn has_log_signing(&self) -> bool {
        matches!(self, Version::V2)
    }

    pub fn from_u64(v: u64) -> Option<Version> {
        match v {
            1 => Some(Version::V1),
            2 => Some(Version::V2),
            _ => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", *self as u64)
    }
}

/// A file's header: format version and (V2) batch alignment.
#[derive(Copy, Clone, Debug, Eq, PartialEq, Default)]
pub struct LogFileFormat {
    pub version: Version,
    pub alignment: u64,
}

impl LogFileFormat {
    pub fn new(version: Version, alignment: u64) -> LogFileFormat {
        LogFileFormat { version, alignment }
    }

    /// Length of the header of a file of `version`.
    pub fn encoded_len(version: Version) -> usize {
        LOG_FILE_MAGIC_HEADER.len() + 8 + if version == Version::V2 { 8 } else { 0 }
    }

    pub fn max_encoded_len() -> usize {
        Self::encoded_len(Version::V2)
    }

    pub fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(LOG_FILE_MAGIC_HEADER);
        buf.extend_from_slice(&(self.version as u64).to_be_bytes());
        if self.version == Version::V2 {
            buf.extend_from_slice(&self.alignment.to_be_bytes());
        }
    }

    /// Decodes the header at the start of `buf` (which may hold more than the header).
    pub fn decode(buf: &[u8]) -> Result<LogFileFormat> {
        if !buf.starts_with(LOG_FILE_MAGIC_HEADER) {
            return Err(Error::corruption("log file magic header mismatch"));
        }
        let rest = &buf[LOG_FILE_MAGIC_HEADER.len()..];
        if rest.len() < 8 {
            return Err(Error::corruption("log file header truncated before its version"));
        }
        let v = u64::from_be_bytes(rest[..8].try_into().map_err(|_| Error::corruption("header"))?);
        let version = Version::from_u64(v)
            .ok_or_else(|| Error::corruption(format!("unrecognized log file version: {v}")))?;
        let mut alignment = 0;
        if version == Version::V2 {
            if rest.len() < 16 {
                return Err(Error::corruption("missing header payload"));
            }
            alignment = u64::from_be_bytes(rest[8..16].try_into().map_err(|_| Error::corruption("header"))?);
        }
        Ok(LogFileFormat { version, alignment })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip() {
        let id = FileId::new(LogQueue::Append, 12);
        assert_eq!(id.build_file_name(), "0000000000000012.raftlog");
        assert_eq!(FileId::parse_file_name("0000000000000012.raftlog"), Some(id));
        assert_eq!(
            FileId::parse_file_name("0000000000000003.rewrite"),
            Some(FileId::new(LogQueue::Rewrite, 3))
        );
        assert_eq!(FileId::parse_file_name("0000000000000003.raftlog.reserved"), None);
        assert_eq!(parse_reserved_file_name("0000000000000003.raftlog.reserved"), Some(3));
        assert_eq!(build_reserved_file_name(3), "0000000000000003.raftlog.reserved");
        assert_eq!(FileId::parse_file_name("LOCK"), None);
        assert_eq!(FileId::parse_file_name("00000000000000ab.raftlog"), None);
        assert_eq!(FileId::parse_file_name("é000000000000000.raftlog"), None);
        assert!(FileId::new(LogQueue::Rewrite, 100) < FileId::new(LogQueue::Append, 1));
    }

    #[test]
    fn header_v1_and_v2() {
        for (fmt, len) in
            [(LogFileFormat::new(Version::V1, 0), 61), (LogFileFormat::new(Version::V2, 4096), 69)]
        {
            let mut buf = Vec::new();
            fmt.encode(&mut buf);
            assert_eq!(buf.len(), len);
            assert_eq!(LogFileFormat::encoded_len(fmt.version), len);
            assert_eq!(LogFileFormat::decode(&buf).unwrap(), fmt);
            assert!(LogFileFormat::decode(&buf[..len - 1]).is_err());
        }
        let mut buf = Vec::new();
        LogFileFormat::new(Version::V1, 0).encode(&mut buf);
        buf[LOG_FILE_MAGIC_HEADER.len() + 7] = 3;
        assert!(matches!(LogFileFormat::decode(&buf), Err(Error::Corruption(m)) if m.contains("version: 3")));
        buf[0] = b'X';
        assert!(LogFileFormat::decode(&buf).is_err());
    }
}
