//! What becomes of a WAL no family needs any more, and the WAL archive (RocksDB's
//! `WalManager`).
//!
//! Without `WAL_ttl_seconds` and `WAL_size_limit_MB` (both 0, the default) the WAL is
//! deleted. With either above 0 it is renamed into `archive/` of the WAL directory
//! (RocksDB's `ArchiveWALFile`), where `get_updates_since` still reads it (`wal_iter.rs`),
//! and after every purge of obsolete files the archive is purged as RocksDB's
//! `WalManager::PurgeObsoleteWALFiles` does, at most once per `min(600, max(1, ttl / 2))`
//! seconds (600 without a TTL):
//! - with a TTL, an archived WAL last modified more than `WAL_ttl_seconds` ago is deleted;
//! - with a size limit, empty archived WALs are deleted, and when the others outnumber
//!   `WAL_size_limit_MB * 1 MiB / (the largest archived WAL's size)` the oldest go until
//!   they do not.
//!
//! Files in the archive are not the database's any more: a failure to delete one is
//! written to the LOG and the purge goes on, as RocksDB's.

use std::path::Path;
use std::sync::atomic::Ordering;

use super::filename::{self, FileType};
use super::DbInner;

/// RocksDB's `kDefaultIntervalToDeleteObsoleteWAL` (seconds).
const PURGE_INTERVAL: u64 = 600;

impl DbInner {
    /// Deletes obsolete WAL `number` of `wal_dir`, or moves it to the archive.
    pub fn dispose_wal(&self, wal_dir: &Path, number: u64) {
        let from = filename::wal_file(wal_dir, number);
        if self.config.wal_archive_on() {
            let to = filename::wal_file(&filename::wal_archive_dir(wal_dir), number);
            let status = match self.fs.rename(&from, &to) {
                Ok(()) => "OK".to_string(),
                Err(e) => e.to_string(),
            };
            self.info_log.log(format_args!(
                "Move log file {} to {} -- {status}",
                from.display(),
                to.display()
            ));
        } else {
            let _ = self.fs.remove_file(&from);
        }
    }

    /// RocksDB's `WalManager::PurgeObsoleteWALFiles` (see the module comment). Call
    /// without the DB mutex.
    pub fn purge_wal_archive(&self) {
        let ttl = self.config.wal_ttl_seconds;
        let limit_mb = self.config.wal_size_limit_mb;
        if ttl == 0 && limit_mb == 0 {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let interval = if ttl > 0 { PURGE_INTERVAL.min((ttl / 2).max(1)) } else { PURGE_INTERVAL };
        let mut last = self.wal_archive_purged_at.load(Ordering::Relaxed);
        loop {
            if last.saturating_add(interval) > now {
                return;
            }
            match self.wal_archive_purged_at.compare_exchange_weak(
                last,
                now,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => last = seen,
            }
        }
        let archive = filename::wal_archive_dir(&self.wal_dir());
        let names = match self.fs.children(&archive) {
            Ok(n) => n,
            Err(e) => {
                self.info_log
                    .log_at(crate::config::LogLevel::Error, format_args!("Can't get archive files: {e}"));
                return;
            }
        };
        let warn = |what: &str, path: &Path, e: &dyn std::fmt::Display| {
            self.info_log
                .log_at(crate::config::LogLevel::Warn, format_args!("{what}: {}: {e}", path.display()));
        };
        // Archived WALs kept by the TTL, with their sizes (size limit only).
        let mut kept: Vec<(u64, u64)> = Vec::new();
        let mut largest = 0u64;
        for name in names {
            let Some(FileType::Wal(number)) = filename::parse_file_name(&name) else { continue };
            let path = archive.join(&name);
            if ttl > 0 {
                match self.fs.modified_time(&path) {
                    Ok(mtime) if mtime <= now && now - mtime > ttl => {
                        if let Err(e) = self.fs.remove_file(&path) {
                            warn("Can't delete file", &path, &e);
                        }
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        warn("Can't get file mod time", &path, &e);
                        continue;
                    }
                }
            }
            if limit_mb > 0 {
                match self.fs.file_size(&path) {
                    Ok(0) => {
                        if let Err(e) = self.fs.remove_file(&path) {
                            warn("Unable to delete file", &path, &e);
                        }
                    }
                    Ok(size) => {
                        largest = largest.max(size);
                        kept.push((number, size));
                    }
                    Err(e) => {
                        warn("Unable to get file size", &path, &e);
                        return;
                    }
                }
            }
        }
        if kept.is_empty() || limit_mb == 0 {
            return;
        }
        let keep = usize::try_from(limit_mb.saturating_mul(1 << 20) / largest).unwrap_or(usize::MAX);
        if kept.len() <= keep {
            return;
        }
        kept.sort_unstable();
        let drop_n = kept.len() - keep;
        for (number, _) in kept.into_iter().take(drop_n) {
            let path = filename::wal_file(&archive, number);
            if let Err(e) = self.fs.remove_file(&path) {
                warn("Unable to delete file", &path, &e);
            }
        }
    }
}
