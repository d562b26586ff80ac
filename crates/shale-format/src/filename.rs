//! Names of the files in a database directory, as RocksDB names them (file/filename.cc).
//!
//! ```text
//! 000012.log        WAL            000014.sst     table file
//! MANIFEST-000005   version log    CURRENT        names the live MANIFEST
//! OPTIONS-000007    options        IDENTITY       the database's unique id
//! LOCK              process lock   LOG, LOG.old.* info log
//! 000009.dbtmp      temporary file (CURRENT / OPTIONS being written)
//! 000015.blob       blob file (BlobDB)
//! ```

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Wal(u64),
    Table(u64),
    /// A blob file, `NNNNNN.blob` (BlobDB).
    Blob(u64),
    Manifest(u64),
    Options(u64),
    Temp(u64),
    Current,
    Lock,
    Identity,
    InfoLog,
    OldInfoLog,
}

pub fn wal_file(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

/// The WAL archive of a WAL directory (RocksDB's `ArchivalDirectory`).
pub fn wal_archive_dir(wal_dir: &Path) -> PathBuf {
    wal_dir.join("archive")
}

pub fn table_file(dir: &Path, number: u64) -> PathBuf {
    dir.join(table_file_name(number))
}

pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

pub fn lock_file(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}

pub fn identity_file(dir: &Path) -> PathBuf {
    dir.join("IDENTITY")
}

pub fn info_log_file(dir: &Path) -> PathBuf {
    dir.join("LOG")
}

/// Classifies a directory entry; None for files that are not the database's.
pub fn parse_file_name(name: &str) -> Option<FileType> {
    let num = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    Some(match name {
        "CURRENT" => FileType::Current,
        "LOCK" => FileType::Lock,
        "IDENTITY" => FileType::Identity,
        "LOG" => FileType::InfoLog,
        _ if name.starts_with("LOG.old.") => FileType::OldInfoLog,
        _ => {
            if let Some(rest) = name.strip_prefix("MANIFEST-") {
                FileType::Manifest(num(rest)?)
            } else if let Some(rest) = name.strip_prefix("OPTIONS-") {
                FileType::Options(num(rest.trim_end_matches(".dbtmp"))?)
            } else if let Some(n) = name.strip_suffix(".log") {
                FileType::Wal(num(n)?)
            } else if let Some(n) = name.strip_suffix(".sst") {
                FileType::Table(num(n)?)
            } else if let Some(n) = name.strip_suffix(".blob") {
                FileType::Blob(num(n)?)
            } else if let Some(n) = name.strip_suffix(".dbtmp") {
                FileType::Temp(num(n)?)
            } else {
                return None;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Path::new("/db");
        assert_eq!(wal_file(d, 12), Path::new("/db/000012.log"));
        assert_eq!(parse_file_name("000012.log"), Some(FileType::Wal(12)));
        assert_eq!(parse_file_name("1234567.sst"), Some(FileType::Table(1234567)));
        assert_eq!(parse_file_name("MANIFEST-000005"), Some(FileType::Manifest(5)));
        assert_eq!(parse_file_name("OPTIONS-000007"), Some(FileType::Options(7)));
        assert_eq!(parse_file_name("LOG.old.1700000000"), Some(FileType::OldInfoLog));
        assert_eq!(parse_file_name("x.sst"), None);
        assert_eq!(parse_file_name("MANIFEST-"), None);
    }
}
