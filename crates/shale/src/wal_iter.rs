//! `DBWALIterator` and `get_updates_since`, as rust-rocksdb's: the write batches of the WALs
//! still on disk, each with its first sequence number, from the first batch that starts
//! after the requested sequence number (rust-rocksdb skips the batch holding it).
//!
//! The WALs are read from the WAL directory and from its `archive/`, where obsolete WALs go
//! with `WAL_ttl_seconds` or `WAL_size_limit_MB` (`db/wal_archive.rs`), as RocksDB's
//! `WalManager::GetSortedWalFiles`. Without the archive a WAL is deleted once its
//! memtables are flushed: asking for updates older than the oldest WAL still on disk is
//! NotFound, as RocksDB says when the WAL is gone.

use crate::batch::WriteBatch;
use crate::db::filename::{self, FileType};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::{LogReader, WalRecoveryMode};

/// An iterator over `(sequence number, write batch)` read back from the WAL.
pub struct DBWALIterator {
    batches: std::vec::IntoIter<(u64, WriteBatch)>,
}

impl DBWALIterator {
    /// Whether another batch follows.
    pub fn valid(&self) -> bool {
        self.batches.len() > 0
    }

    /// The batches were read when the iterator was made, so it holds no error.
    pub fn status(&self) -> Result<()> {
        Ok(())
    }
}

impl Iterator for DBWALIterator {
    type Item = Result<(u64, WriteBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next().map(Ok)
    }
}

/// Reads every WAL of the database in the WAL directory `dir` and its archive (oldest
/// first) and keeps the batches starting after `since`. `last_sequence` is the database's
/// last sequence number.
pub(crate) fn updates_since(
    fs: &dyn FileSystem,
    dir: &std::path::Path,
    since: u64,
    last_sequence: u64,
) -> Result<DBWALIterator> {
    if since > last_sequence {
        // RocksDB's answer to a sequence number from the future.
        return Err(Error::not_found(format!(
            "Requested sequence not yet written in the db: {since} (last sequence {last_sequence})"
        )));
    }
    let archive = filename::wal_archive_dir(dir);
    let list = |d: &std::path::Path| -> Result<Vec<u64>> {
        Ok(fs
            .children(d)?
            .iter()
            .filter_map(|n| match filename::parse_file_name(n) {
                Some(FileType::Wal(number)) => Some(number),
                _ => None,
            })
            .collect())
    };
    let mut wals = list(dir)?;
    if fs.file_exists(&archive) {
        wals.extend(list(&archive)?);
    }
    wals.sort_unstable();
    wals.dedup();
    let mut batches = Vec::new();
    let mut first_seen: Option<u64> = None;
    for number in wals {
        // Archived since it was listed: read from the archive, as RocksDB's
        // `WalManager::ReadFirstRecord` retries there.
        let live = filename::wal_file(dir, number);
        let archived = filename::wal_file(&archive, number);
        let file = match fs.new_sequential_file(&live) {
            Err(_) if !fs.file_exists(&live) && fs.file_exists(&archived) => {
                fs.new_sequential_file(&archived)
            }
            r => r,
        };
        let file = match file {
            Ok(f) => f,
            // Deleted by a flush since it was listed: its batches are in tables now.
            Err(_) if !fs.file_exists(&live) && !fs.file_exists(&archived) => continue,
            Err(e) => return Err(e),
        };
        // The live WAL may end in a record being written: stop quietly at a torn tail.
        let mut reader = LogReader::new(
            file,
            format!("{number:06}.log"),
            number,
            WalRecoveryMode::TolerateCorruptedTailRecords,
        );
        let mut record = Vec::new();
        while reader.read_record(&mut record)? {
            if record.len() < crate::batch::HEADER_SIZE {
                return Err(Error::corruption(format!(
                    "log record too small in {number:06}.log at offset {}",
                    reader.last_record_offset()
                )));
            }
            let batch = WriteBatch::from_data(&record);
            let seq = batch.sequence();
            first_seen.get_or_insert(seq);
            if seq > since {
                batches.push((seq, batch));
            }
        }
    }
    // The batch right after `since` must be on disk, unless nothing was written after it.
    let wanted = since.saturating_add(1);
    if wanted <= last_sequence && first_seen.is_none_or(|first| first > wanted) {
        return Err(Error::not_found(format!(
            "get_updates_since: the WAL holding sequence {wanted} is no longer on disk"
        )));
    }
    Ok(DBWALIterator { batches: batches.into_iter() })
}
