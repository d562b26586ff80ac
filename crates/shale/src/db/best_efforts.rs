//! Best-efforts recovery (RocksDB's `best_efforts_recovery`, default false): an open that
//! finds table or blob files of the MANIFEST missing or cut short (an incomplete copy of
//! the database directory) recovers each column family at the latest point in time whose
//! files are all there, instead of failing.
//!
//! As RocksDB 11.8.1's `DBImpl::Recover` and `VersionSet::TryRecover` do:
//! - CURRENT is not read: the non-empty MANIFESTs of the directory are tried newest first,
//!   and the first that replays is recovered (`manifest::recover_best_efforts`); none means
//!   a new database (created with `create_if_missing`, InvalidArgument otherwise);
//! - each family is replayed to its last edit after which every table it holds exists with
//!   the size the MANIFEST records, and every blob file it keeps exists
//!   (`Replay::add_point_in_time`, RocksDB's `VersionEditHandlerPointInTime`);
//! - no WAL is replayed ("BER does not yet attempt to recover any WAL files");
//! - every file number in the directory counts as used, so nothing new takes the number of
//!   a file left behind.
//!
//! The open then writes a new MANIFEST naming the recovered state and points CURRENT at it,
//! as every open does. RocksDB also accepts a version whose only missing files are a suffix
//! of level-0 files (its newest flushes) when no atomic flush is in the history; Shale
//! recovers the point before those flushes, which holds the same files unless a compaction
//! came after them.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::fs::FileSystem;
use crate::version::manifest::{self, RecoveredManifest};
use crate::{ColumnFamilyDescriptor, Options};
use shale_engine::config::DbConfig;
use shale_format::filename::{self, FileType};

/// The directories a table of the database may be in: the database's, `db_paths` and each
/// family's `cf_paths` (a table's path id is resolved only once the families are built).
fn table_dirs(
    path: &Path,
    config: &DbConfig,
    opts: &Options,
    descs: &[ColumnFamilyDescriptor],
) -> Vec<PathBuf> {
    let mut dirs = vec![path.to_path_buf()];
    for o in descs.iter().map(|d| &d.options).chain(std::iter::once(opts)) {
        for (dir, _) in super::paths::table_dirs(path, &config.db_paths, &o.cf_paths) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The MANIFEST state best-efforts recovery finds in `path` (see the module comment); None
/// when the directory holds no non-empty MANIFEST.
pub(super) fn recover(
    fs: &dyn FileSystem,
    path: &Path,
    config: &DbConfig,
    opts: &Options,
    descs: &[ColumnFamilyDescriptor],
) -> Result<Option<RecoveredManifest>> {
    if !fs.file_exists(path) {
        return Ok(None);
    }
    let dirs = table_dirs(path, config, opts, descs);
    let present = |_cf: u32,
                   files: &[(u32, crate::version::edit::FileMetaData)],
                   blobs: &shale_engine::version::blob_files::BlobFiles| {
        files.iter().all(|(_, f)| {
            dirs.iter()
                .any(|d| fs.file_size(&filename::table_file(d, f.number)).is_ok_and(|n| n == f.file_size))
        }) && blobs.keys().all(|&n| fs.file_exists(&crate::blob::reader::blob_file_path(path, n)))
    };
    manifest::recover_best_efforts(fs, path, config.log_readahead_size, &present)
}

/// The largest file number among the files of `dirs` (0 when none has one): best-efforts
/// recovery numbers new files above it (RocksDB's `MarkFileNumberUsed` over the directory).
pub(super) fn max_file_number(fs: &dyn FileSystem, dirs: &[&Path]) -> u64 {
    let mut max = 0;
    for dir in dirs {
        let Ok(children) = fs.children(dir) else { continue };
        for name in children {
            let n = match filename::parse_file_name(&name) {
                Some(
                    FileType::Wal(n)
                    | FileType::Table(n)
                    | FileType::Blob(n)
                    | FileType::Manifest(n)
                    | FileType::Options(n)
                    | FileType::Temp(n),
                ) => n,
                _ => 0,
            };
            max = max.max(n);
        }
    }
    max
}
