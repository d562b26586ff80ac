//! raft-engine 0.4.2's `Config` and `RecoveryMode`, same fields and defaults.

use crate::format::Version;
use crate::util::ReadableSize;
use crate::{Error, Result};

const MIN_RECOVERY_READ_BLOCK_SIZE: u64 = 512;

/// What recovery does with a damaged log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecoveryMode {
    /// Any damage fails `Engine::open` with a Corruption error naming file and offset.
    AbsoluteConsistency,
    /// Damage at the end of the newest file of a queue is cut off (a torn write);
    /// damage anywhere else fails the open.
    TolerateTailCorruption,
    /// Damage anywhere is cut off: a damaged file keeps its valid prefix.
    TolerateAnyCorruption,
}

/// The engine's configuration (raft-engine's fields and defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Directory of the log files.
    pub dir: String,
    /// A second directory used when `dir` is full. Not supported yet: `open` refuses it.
    pub spill_dir: Option<String>,
    pub recovery_mode: RecoveryMode,
    /// Minimum read size while recovering (Shale reads at least 1 MiB at a time).
    pub recovery_read_block_size: ReadableSize,
    /// Threads reading log files in parallel during recovery.
    pub recovery_threads: usize,
    /// Entries blobs at least this long are LZ4-compressed; 0 disables compression.
    pub batch_compression_threshold: ReadableSize,
    /// LZ4 acceleration, as raft-engine's: each step up is a little faster and compresses a
    /// little less; liblz4 takes 0 as 1 and caps it at 65537 (raft-engine passes it as
    /// `level as i32`). None: 1. Set, the entries blobs are compressed by liblz4's
    /// `LZ4_compress_fast`, byte for byte as raft-engine compresses them (see `util.rs`).
    pub compression_level: Option<usize>,
    /// Deprecated in raft-engine (it warns and ignores it); accepted and unused, as there.
    pub bytes_per_sync: Option<ReadableSize>,
    /// Format of new log files.
    pub format_version: Version,
    /// A file is sealed and a new one started once it reaches this size (with
    /// `prefill_next_file`, the first files after open are shorter: `prefill_first_file_size`).
    pub target_file_size: ReadableSize,
    /// When the append queue is larger than this, purge rewrites lagging regions into the
    /// rewrite queue and asks for stale ones to be compacted.
    pub purge_threshold: ReadableSize,
    /// When the rewrite queue is larger than this (default: max(purge_threshold / 10,
    /// target_file_size)) and mostly garbage, purge rewrites it.
    pub purge_rewrite_threshold: Option<ReadableSize>,
    /// Garbage ratio of the rewrite queue above which it is rewritten.
    pub purge_rewrite_garbage_ratio: f64,
    /// raft-engine uses it only with its nightly `swap` feature and otherwise warns and
    /// ignores it; accepted and unused, as there.
    pub memory_limit: Option<ReadableSize>,
    /// Keep purged append files as `.raftlog.reserved` files (V2 only); see `pipe.rs`.
    pub enable_log_recycle: bool,
    /// Create reserved files at open (raft-engine's): up to `prefill_limit` / target file
    /// size x 1.5 of them (and no more than the recycle capacity leaves beside the append
    /// files), each `target_file_size` bytes; reserved files beyond that count are removed
    /// at open. Shale writes each as a log file header then zeros, synced; on the real
    /// file system, a rotation then takes such a file in place (renamed to the new log
    /// file's name, batches written over its zeros), so the active file's size does not
    /// change while batches go in (see `pipe.rs`). Needs `enable_log_recycle`.
    pub prefill_for_recycle: bool,
    /// The bytes of reserved files `prefill_for_recycle` prepares; None: `purge_threshold`
    /// (set so by `sanitize`, as raft-engine does).
    pub prefill_limit: Option<ReadableSize>,
    /// Shale's own, not in raft-engine (on by default): keep a recovery index file
    /// (`NNN.raftlog.idx`) beside each sealed log file, so recovery reads the batches'
    /// headers and footers from it instead of scanning the log file. The log files keep
    /// raft-engine's format; raft-engine ignores the index files, and an index that does
    /// not match its log file is not used. Off: recovery scans every file, as
    /// raft-engine's does. See `index_file.rs` and docs/raftlog-format.md.
    pub recovery_index_files: bool,
    /// Shale's own, not in raft-engine (default 0: off; 8 MiB is the measured setting): a
    /// thread keeps
    /// this many bytes of zeros written and synced past the active append file's batches,
    /// so that a commit's `fdatasync` overwrites blocks rather than growing the file (a
    /// journal commit on ext4). The file is cut back to its batches when sealed and when
    /// the engine is dropped; after a crash, recovery cuts the zeros. Only on the real
    /// file system (`PosixFileSystem`); see `prefill.rs` and docs/raftlog-format.md. Off by
    /// default: on a quiet machine it gave 1.10x raft-engine's sync-write throughput but a
    /// P99 commit latency of about 7.5 ms against 1 ms (docs/benchmarks.md);
    /// `prefill_next_file` was faster at a lower tail in every measured round. Exclusive
    /// with `prefill_next_file`, which is on by default: set that false to use this.
    pub prefill_zeros_ahead: ReadableSize,
    /// Shale's own, not in raft-engine (default true): a thread prepares the next append
    /// file ahead of rotation (header, then zeros, synced, directory synced) under a name
    /// neither engine reads (`prefill.raftlog.next`); at rotation, and at open for the
    /// first active file, it is renamed to the new file's name and batches overwrite its
    /// zeros, so the active file's size never changes and no zeros are written into it.
    /// The zeros go 256 KiB at a time (`sync_file_range`), paced on the active file; a
    /// rotation does not wait for a file not ready yet (the new file is then created
    /// fresh). Open waits for the first one, which is short (4 MiB of zeros, or the target
    /// size when smaller); each next file is twice its predecessor's size, up to
    /// `target_file_size`, each sealed when full (so the first files after open are
    /// shorter than the target: 4, 8, 16, ... MiB). Only on the real file system
    /// (`PosixFileSystem`); exclusive with `prefill_zeros_ahead`. On by default: it
    /// writes faster than raft-engine 0.4.2 with sync on (docs/benchmarks.md, "Session
    /// 11 (raft)"). See `prefill.rs` and docs/raftlog-format.md.
    pub prefill_next_file: bool,
    /// Shale's own, not in raft-engine (default 4 MiB): with `prefill_next_file`, the size
    /// of the first file prepared after open (the one open waits for); each next one is
    /// twice its predecessor's, up to `target_file_size`. At `target_file_size` (or above)
    /// every file is the target size and open waits for a whole one, as before session
    /// 11. 0 is refused.
    pub prefill_first_file_size: ReadableSize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            dir: String::new(),
            spill_dir: None,
            recovery_mode: RecoveryMode::TolerateTailCorruption,
            recovery_read_block_size: ReadableSize::kb(16),
            recovery_threads: 4,
            batch_compression_threshold: ReadableSize::kb(8),
            compression_level: None,
            bytes_per_sync: None,
            format_version: Version::V2,
            target_file_size: ReadableSize::mb(128),
            purge_threshold: ReadableSize::gb(10),
            purge_rewrite_threshold: None,
            purge_rewrite_garbage_ratio: 0.6,
            memory_limit: None,
            enable_log_recycle: true,
            prefill_for_recycle: false,
            prefill_limit: None,
            recovery_index_files: true,
            prefill_zeros_ahead: ReadableSize(0),
            prefill_next_file: true,
            prefill_first_file_size: ReadableSize::mb(4),
        }
    }
}

impl Config {
    /// Checks the configuration and fills in derived defaults, as raft-engine's.
    pub fn sanitize(&mut self) -> Result<()> {
        if self.purge_threshold.0 < self.target_file_size.0 {
            return Err(Error::InvalidArgument("purge-threshold < target-file-size".to_owned()));
        }
        if self.target_file_size.0 == 0 {
            return Err(Error::InvalidArgument("target-file-size must be positive".to_owned()));
        }
        if self.purge_rewrite_threshold.is_none() {
            self.purge_rewrite_threshold =
                Some(ReadableSize(std::cmp::max(self.purge_threshold.0 / 10, self.target_file_size.0)));
        }
        if self.recovery_read_block_size.0 < MIN_RECOVERY_READ_BLOCK_SIZE {
            self.recovery_read_block_size = ReadableSize(MIN_RECOVERY_READ_BLOCK_SIZE);
        }
        if self.recovery_threads < 1 {
            self.recovery_threads = 1;
        }
        if self.enable_log_recycle && !self.format_version.has_log_signing() {
            return Err(Error::InvalidArgument(format!(
                "format version {} doesn't support log recycle, use 2 or above",
                self.format_version
            )));
        }
        if !self.enable_log_recycle && self.prefill_for_recycle {
            return Err(Error::InvalidArgument(
                "prefill is not allowed when log recycle is disabled".to_owned(),
            ));
        }
        if !self.prefill_for_recycle && self.prefill_limit.is_some() {
            self.prefill_limit = None;
        }
        if self.prefill_for_recycle && self.prefill_limit.is_none() {
            self.prefill_limit = Some(self.purge_threshold);
        }
        Ok(())
    }

    /// Refuses what Shale does not do (yet) rather than ignoring it.
    pub(crate) fn check_supported(&self) -> Result<()> {
        if self.spill_dir.is_some() {
            return Err(Error::InvalidArgument("spill_dir is not supported by shale-raftlog yet".to_owned()));
        }
        if self.prefill_next_file && self.prefill_zeros_ahead.0 > 0 {
            return Err(Error::InvalidArgument(
                "prefill_next_file (on by default) and prefill_zeros_ahead are exclusive: set prefill_next_file false to use prefill_zeros_ahead".to_owned(),
            ));
        }
        if self.prefill_first_file_size.0 == 0 {
            return Err(Error::InvalidArgument("prefill_first_file_size must be above 0".to_owned()));
        }
        if !(0.0..=1.0).contains(&self.purge_rewrite_garbage_ratio) {
            return Err(Error::InvalidArgument(format!(
                "purge_rewrite_garbage_ratio {} is not within [0, 1]",
                self.purge_rewrite_garbage_ratio
            )));
        }
        Ok(())
    }

    /// How many reserved files `prefill_for_recycle` prepares at open (raft-engine's
    /// `prefill_capacity`; 0 when off).
    pub(crate) fn prefill_capacity(&self) -> usize {
        if !self.enable_log_recycle || !self.format_version.has_log_signing() {
            return 0;
        }
        let limit = self.prefill_limit.unwrap_or(ReadableSize(0)).0;
        if self.prefill_for_recycle && limit >= self.target_file_size.0 {
            std::cmp::min((limit / self.target_file_size.0) as usize * 3 / 2, u32::MAX as usize)
        } else {
            0
        }
    }

    /// How many purged files are kept for recycling.
    pub(crate) fn recycle_capacity(&self) -> usize {
        if !self.format_version.has_log_signing() || !self.enable_log_recycle {
            return 0;
        }
        std::cmp::min((self.purge_threshold.0 / self.target_file_size.0) as usize * 3 / 2, u32::MAX as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_raft_engine() {
        let c = Config::default();
        assert_eq!(c.recovery_mode, RecoveryMode::TolerateTailCorruption);
        assert_eq!(c.batch_compression_threshold, ReadableSize::kb(8));
        assert_eq!(c.target_file_size, ReadableSize::mb(128));
        assert_eq!(c.purge_threshold, ReadableSize::gb(10));
        assert_eq!(c.format_version, Version::V2);
        assert!(c.enable_log_recycle);
        // Shale's own field, not raft-engine's: on (see the field's comment).
        assert!(c.recovery_index_files);
        // Shale's own prefill settings: the next file zeroed ahead (on), zeros ahead in
        // place (off; exclusive with it).
        assert_eq!(c.prefill_zeros_ahead, ReadableSize(0));
        assert!(c.prefill_next_file);
        assert_eq!(c.prefill_first_file_size, ReadableSize::mb(4));
        let mut c2 = c.clone();
        c2.sanitize().unwrap();
        assert_eq!(c2.purge_rewrite_threshold, Some(ReadableSize::gb(1)));
    }

    #[test]
    fn sanitize_and_support_checks() {
        let mut c = Config {
            target_file_size: ReadableSize::mb(5),
            purge_threshold: ReadableSize::mb(3),
            ..Config::default()
        };
        assert!(c.sanitize().is_err());
        let mut c = Config { format_version: Version::V1, ..Config::default() };
        assert!(c.sanitize().is_err());
        c.enable_log_recycle = false;
        c.sanitize().unwrap();
        let c = Config { spill_dir: Some("/x".into()), ..Config::default() };
        assert!(matches!(c.check_supported(), Err(Error::InvalidArgument(m)) if m.contains("spill_dir")));
        // Every LZ4 acceleration is taken, as raft-engine takes it.
        for l in [0, 1, 3, 65537, usize::MAX] {
            Config { compression_level: Some(l), ..Config::default() }.check_supported().unwrap();
        }
    }

    #[test]
    fn prefill_capacity_as_raft_engine() {
        let mut c = Config {
            target_file_size: ReadableSize::mb(1),
            purge_threshold: ReadableSize::mb(10),
            prefill_for_recycle: true,
            ..Config::default()
        };
        c.sanitize().unwrap();
        // prefill_limit defaults to purge_threshold: 10 files, x 1.5.
        assert_eq!(c.prefill_limit, Some(ReadableSize::mb(10)));
        assert_eq!(c.prefill_capacity(), 15);
        c.check_supported().unwrap();
        let c = Config { prefill_limit: Some(ReadableSize::kb(512)), ..c };
        assert_eq!(c.prefill_capacity(), 0);
        let mut c = Config { prefill_for_recycle: false, prefill_limit: Some(ReadableSize::mb(4)), ..c };
        c.sanitize().unwrap();
        assert_eq!(c.prefill_limit, None);
        assert_eq!(c.prefill_capacity(), 0);
        let mut c = Config { prefill_for_recycle: true, enable_log_recycle: false, ..Config::default() };
        assert!(c.sanitize().is_err());
    }

    #[test]
    fn prefill_options_refused_together_or_empty() {
        Config::default().check_supported().unwrap();
        // Zeros ahead in place need the next file (on by default) off.
        let c =
            Config { prefill_zeros_ahead: ReadableSize::mb(8), prefill_next_file: true, ..Config::default() };
        assert!(c.check_supported().is_err());
        Config { prefill_next_file: false, ..c }.check_supported().unwrap();
        let c = Config { prefill_first_file_size: ReadableSize(0), ..Config::default() };
        assert!(c.check_supported().is_err());
    }
}
