//! Read-only and secondary opens from the user's `Options` and column-family descriptors
//! (the engine's side, what such an instance refuses and how it catches up, is
//! `readonly.rs`; see its module comment).

use std::path::Path;

use super::info_log::InfoLog;
use super::open::{self, InnerParts};
use super::readonly::{replay, DbMode, NoLock, RefusingFile};
use super::{DBWithThreadMode, ThreadMode};
use crate::cf_descriptor::ColumnFamilyDescriptor;
use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::options::Options;
use crate::version::manifest::{self, ManifestWriter};
use crate::version::set::VersionSet;
use crate::wal::LogWriter;

/// Opens `path` read-only (see the module comment).
pub(crate) fn open_read_only<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    descs: Vec<ColumnFamilyDescriptor>,
    error_if_wal_file_exists: bool,
) -> Result<DBWithThreadMode<T>> {
    open_view(opts, path, descs, DbMode::ReadOnly, InfoLog::none(), error_if_wal_file_exists)
}

/// Opens a secondary instance of the primary at `path`, its info log in `secondary_path`.
pub(crate) fn open_secondary<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    secondary_path: &Path,
    descs: Vec<ColumnFamilyDescriptor>,
) -> Result<DBWithThreadMode<T>> {
    let fs = file_system(opts);
    fs.create_dir_all(secondary_path)?;
    let config = opts.engine_db_config(path);
    let info_log = match &opts.info_logger {
        Some(u) => InfoLog::for_user(u.clone()),
        None => {
            InfoLog::open(&fs, secondary_path, &config.db_log_dir, &super::info_log::LogFiles::of(&config))?
                .with_level(config.info_log_level)
        }
    };
    info_log.log(format_args!("Shale version: {}", env!("CARGO_PKG_VERSION")));
    info_log.log(format_args!("Secondary instance of {}", path.display()));
    open_view(opts, path, descs, DbMode::Secondary, info_log, false)
}

fn file_system(opts: &Options) -> crate::fs::FileSystemRef {
    opts.fs.clone().unwrap_or_else(default_fs)
}

fn open_view<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    mut descs: Vec<ColumnFamilyDescriptor>,
    mode: DbMode,
    info_log: InfoLog,
    error_if_wal_file_exists: bool,
) -> Result<DBWithThreadMode<T>> {
    opts.check_supported()?;
    for d in &descs {
        d.options.check_supported()?;
    }
    // The engine's view of the DB-wide options, built once (`Options::engine_db_config`).
    let config = opts.engine_db_config(path);
    let fs = file_system(opts);
    if mode == DbMode::ReadOnly && config.create_if_missing {
        // RocksDB's "historic behavior": the directory is created, then the missing
        // CURRENT fails the open.
        fs.create_dir_all(path)?;
    }
    // `best_efforts_recovery` in a read-only open (RocksDB's `DBImpl::Recover` takes it in
    // both): the newest MANIFEST that replays, each family at its last complete point in
    // time, and no WAL (`best_efforts.rs`). A secondary does not take it, as RocksDB's.
    let best_efforts = if mode == DbMode::ReadOnly && config.best_efforts_recovery {
        super::best_efforts::recover(&*fs, path, &config, opts, &descs)?
    } else {
        None
    };
    // The WALs are listed before the MANIFEST is read (see the module comment).
    let listed = if best_efforts.is_some() { Vec::new() } else { open::wal_numbers(&*fs, &config.wal_dir)? };
    let recovered = match best_efforts {
        Some(r) => r,
        None => manifest::recover_with_readahead(&*fs, path, config.log_readahead_size)?,
    };
    super::open_api::with_default_family(&mut descs, opts, config.allow_ingest_behind);
    // Unlike a read-write open, a subset of the families may be opened; a family the
    // database lacks is an error whatever create_missing_column_families says.
    for d in &descs {
        if !recovered.column_families.values().any(|c| c.name == d.name) {
            return Err(Error::invalid_argument(format!("Column family not found: {}", d.name)));
        }
    }
    let table_cache = super::open_api::new_table_cache(&fs, path, &config);
    let mut cfs = super::open_api::recovered_cf_states(&recovered, &descs, &table_cache, path, &config)?;
    open::load_tables(&table_cache, &cfs, &config)?;

    if mode == DbMode::ReadOnly {
        // RocksDB's read-only open runs `DBImpl::Recover` (its secondary does not).
        open::check_some_wal(&config, true, &listed)?;
    }
    let wals = open::wals_to_replay(&listed, &recovered, &cfs, config.allow_2pc);
    if error_if_wal_file_exists {
        // Every WAL in the directory, as RocksDB's Recover checks them before choosing
        // which to replay.
        let wal_dir = &config.wal_dir;
        for w in open::wal_numbers(&*fs, wal_dir)? {
            if fs.file_size(&super::filename::wal_file(wal_dir, w))? > 0 {
                return Err(Error::corruption(
                    "The db was opened in readonly mode with error_if_wal_file_exists flag but a \
                     non-empty WAL file already exists",
                ));
            }
        }
    }
    let mut next_file_number = recovered.next_file_number.max(recovered.manifest_number + 1);
    let last_sequence = replay(&*fs, path, &config, mode, &wals, &recovered, &mut cfs, &info_log)?;
    for &w in &wals {
        next_file_number = next_file_number.max(w + 1);
    }
    for cf in cfs.values_mut() {
        cf.install_super_version();
    }
    let max_column_family = recovered.max_column_family.max(cfs.keys().copied().max().unwrap_or(0));
    let versions = VersionSet::new(
        fs.clone(),
        path,
        ManifestWriter::over(Box::new(RefusingFile(mode)), recovered.manifest_number),
        next_file_number,
        last_sequence,
        config.max_manifest_file_size,
    )
    .with_manifest_space_amp(config.max_manifest_space_amp_pct);
    let wal_number = wals.last().copied().unwrap_or(0);
    let wal_writer = LogWriter::new(Box::new(RefusingFile(mode)), wal_number);
    let file_writes = super::buffered_fs::LiveFileWrites::new(&config);
    let parts = InnerParts {
        fs,
        versions,
        table_cache,
        info_log,
        lock: Box::new(NoLock),
        max_column_family,
        file_writes,
    };
    let hooks = Box::new(super::options_writer::RocksOptionsHooks::new(opts.clone()));
    let inner = open::new_inner(path, hooks, config, parts, wal_writer, wal_number, mode);
    {
        let mut st = inner.lock_state();
        for (id, cf) in cfs {
            inner.publish_active_memtable(id, Some(&cf));
            inner.set_handle(id, Some(cf.handle.clone()));
            st.cfs.insert(id, cf);
        }
    }
    inner.info_log.log(format_args!("Opened {:?} at sequence {last_sequence}", mode));
    // No background thread: nothing is flushed, compacted or deleted.
    super::open_api::into_db::<T>(inner, Vec::new())
}
