//! Opening a database from the user's `Options` and column-family descriptors: validation,
//! the write buffer manager made from `db_write_buffer_size`, the engine's `DbConfig` and
//! each family's `CfConfig` and options record, the LOG's options dump; then the engine's
//! steps (`open.rs`) in order, and the `DB` over what they built. Also `list_cf` and
//! `destroy` from `Options`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::cf::{CfHandle, SuperVersion, DEFAULT_COLUMN_FAMILY_NAME};
use super::column_family::ColumnFamily;
use super::filename;
use super::info_log::InfoLog;
use super::open::*;
use super::readonly::DbMode;
use super::stats_history::PERSISTENT_STATS_COLUMN_FAMILY_NAME as STATS_CF;
use super::table_cache::TableCache;
use super::{CfState, DBWithThreadMode, DbInner, ThreadMode};
use crate::cf_descriptor::ColumnFamilyDescriptor;
use crate::error::{Error, Result};
use crate::fs::{default_fs, FileSystem};
use crate::key::InternalKeyComparator;
use crate::memtable::write_buffer_manager::WriteBufferManagerState;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::edit::VersionEdit;
use crate::version::manifest::{self, ManifestWriter};
use crate::version::set::VersionSet;
use crate::version::{Version, VersionBuilder};
use crate::wal::LogWriter;
use shale_engine::config::DbConfig;

pub(crate) fn open<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    descs: Vec<ColumnFamilyDescriptor>,
) -> Result<DBWithThreadMode<T>> {
    open_as(opts, path, descs, false)
}

/// `open`; `repair`: the open `DB::repair` makes to replay the WALs, which skips a batch
/// whose timestamp sizes differ from its families' (RocksDB's Repairer).
pub(crate) fn open_as<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    mut descs: Vec<ColumnFamilyDescriptor>,
    repair: bool,
) -> Result<DBWithThreadMode<T>> {
    // RocksDB's DBImpl::ValidateOptions: the families' checks come before the DB options'.
    for o in descs.iter().map(|d| &d.options).chain(std::iter::once(opts)) {
        o.check_blob_direct_write(
            opts.enable_pipelined_write,
            opts.allow_concurrent_memtable_write,
            opts.unordered_write,
            opts.two_write_queues,
        )?;
        o.check_udt_not_persisted(opts.atomic_flush, opts.allow_concurrent_memtable_write)?;
    }
    opts.check_supported()?;
    // RocksDB's DBImpl::ValidateOptions.
    if !opts.write_dbid_to_manifest && !opts.write_identity_file {
        return Err(Error::invalid_argument(
            "write_dbid_to_manifest and write_identity_file cannot both be false",
        ));
    }
    opts.dbopt.validate()?;
    // RocksDB 11.8.1's DBImpl::ValidateOptions (of the DB options only: the descriptors'
    // copies of these fields are not read, as RocksDB's ColumnFamilyOptions lack them).
    if opts.db_paths.len() > 4 {
        return Err(Error::not_supported("More than four DB paths are not supported yet. "));
    }
    if opts.keep_log_file_num == 0 {
        return Err(Error::invalid_argument("keep_log_file_num must be greater than 0"));
    }
    opts.dbmisc.validate()?;
    // The hidden stats family has RocksDB's `OptimizeForPersistentStats` options whatever the
    // caller names it with (`stats_history.rs`).
    for d in &mut descs {
        if d.name == STATS_CF {
            d.options = super::stats_history_api::stats_cf_options();
        }
    }
    for d in &descs {
        d.options.check_supported()?;
        d.options.check_validate_options()?;
    }
    // `opts` is the default family's options unless a descriptor names that family.
    if !descs.iter().any(|d| d.name == DEFAULT_COLUMN_FAMILY_NAME) {
        opts.check_validate_options()?;
    }
    // The memtable budget of the whole database (RocksDB: the given write buffer manager,
    // else one of its own when `db_write_buffer_size` is set), shared by every family.
    let mut db_opts = opts.clone();
    if db_opts.write_buffer_manager.is_none() && db_opts.db_write_buffer_size > 0 {
        db_opts.write_buffer_manager =
            Some(Arc::new(WriteBufferManagerState::new(db_opts.db_write_buffer_size, false)));
    }
    let opts = &db_opts;
    // The engine's view of the DB-wide options, built once (`Options::engine_db_config`).
    let mut config = opts.engine_db_config(path);
    for o in descs.iter().map(|d| &d.options).chain(std::iter::once(opts)) {
        Options::check_with_db(&config, o)?;
    }
    for d in &mut descs {
        d.options.write_buffer_manager = config.write_buffer_manager.clone();
        // The database's rate limiter throttles every family's flushes and compactions.
        d.options.rate_limiter = config.rate_limiter.clone();
        // RocksDB's statistics are a DB option every family's memtables count into
        // (`rocksdb.number.keys.updated`).
        d.options.statistics = config.statistics.clone();
        // `allow_data_in_errors` is DB-wide in RocksDB; each family's memtables take it.
        d.options.dbmisc.adopt_db_wide(&config);
    }
    // With `use_fsync` the default file system syncs with fsync; a file system given with
    // `set_file_system` syncs as it implements `sync`.
    let fs = config.fs.clone().unwrap_or_else(|| {
        if config.use_fsync {
            Arc::new(crate::fs::PosixFsyncFileSystem)
        } else {
            default_fs()
        }
    });
    // `is_fd_close_on_exec = false`: the file system's opens leave descriptors inheritable.
    let fs = if config.is_fd_close_on_exec { fs } else { fs.without_close_on_exec().unwrap_or(fs) };
    // The file options `set_db_options` may change, shared with the database (`live_options`).
    let file_writes = super::buffered_fs::LiveFileWrites::new(&config);
    let fs = super::buffered_fs::BufferedWritesFs::wrap(
        fs,
        file_writes.clone(),
        crate::fs::ReadFileOptions {
            direct: config.use_direct_reads,
            mmap: config.allow_mmap_reads,
            // Each table and blob file opened for reads (`Options::set_advise_random_on_open`).
            advise_random: config.advise_random_on_open,
        },
        crate::fs::WriteFileOptions {
            max_buffer_size: 0,
            direct: config.use_direct_io_for_flush_and_compaction,
            mmap: config.allow_mmap_writes,
        },
    );
    // RocksDB creates the directory (to hold LOCK) whatever create_if_missing says; a
    // missing database is then reported by the CURRENT check below as InvalidArgument.
    fs.create_dir_all(path)?;
    let lock = fs.lock_file(&filename::lock_file(path))?;
    // RocksDB creates every table directory at open (db_paths, the families' cf_paths).
    for o in descs.iter().map(|d| &d.options).chain(std::iter::once(opts)) {
        for (dir, _) in super::paths::table_dirs(path, &config.db_paths, &o.cf_paths) {
            fs.create_dir_all(&dir)?;
        }
    }
    // RocksDB creates the WAL directory, and with the WAL archive on its `archive/`.
    fs.create_dir_all(&config.wal_dir)?;
    if config.wal_archive_on() {
        fs.create_dir_all(&filename::wal_archive_dir(&config.wal_dir))?;
    }
    let current = manifest::current_file_path(path);
    // `best_efforts_recovery` reads no CURRENT: the newest MANIFEST that replays (`best_efforts.rs`).
    let best_efforts = if config.best_efforts_recovery {
        super::best_efforts::recover(&*fs, path, &config, opts, &descs)?
    } else {
        None
    };
    let exists = if config.best_efforts_recovery { best_efforts.is_some() } else { fs.file_exists(&current) };
    let mut is_new_db = false;
    if !exists {
        if !config.create_if_missing {
            return Err(Error::invalid_argument(format!(
                "{}: does not exist (create_if_missing is false)",
                current.display()
            )));
        }
        new_db(&*fs, path, opts.comparator.name(), opts.persist_user_defined_timestamps)?;
        is_new_db = true;
    } else if config.error_if_exists {
        return Err(Error::invalid_argument(format!("{}: exists (error_if_exists is true)", path.display())));
    }
    let probe = match &best_efforts {
        Some(r) => path.join(manifest::descriptor_file_name(r.manifest_number)),
        None => current.clone(),
    };
    check_direct_io(&*fs, &probe, &config)?;
    let info_log = match &opts.info_logger {
        Some(u) => InfoLog::for_user(u.clone()),
        None => InfoLog::open(&fs, path, &config.db_log_dir, &super::info_log::LogFiles::of(&config))?
            .with_level(config.info_log_level),
    };
    info_log.header(format_args!("Shale version: {}", env!("CARGO_PKG_VERSION")));
    info_log.header(format_args!("DB path: {}", path.display()));
    info_log.header(format_args!("Fast CRC32 supported: {}", fast_crc32_supported()));
    super::options_dump::log_db_options(&info_log, opts);
    if opts.mfst.async_wal_precreate && config.recycle_log_file_num != 0 {
        info_log.log_at(
            shale_engine::config::LogLevel::Warn,
            format_args!("async_wal_precreate is disabled since recycle_log_file_num is non-zero"),
        );
    }

    let recovered = match best_efforts {
        Some(r) => r,
        None => manifest::recover_with_readahead(&*fs, path, config.log_readahead_size)?,
    };
    // Which families the caller opens, with which options.
    with_default_family(&mut descs, opts, config.allow_ingest_behind);
    for d in &descs {
        // RocksDB's DBImpl::ValidateOptions.
        if d.name == DEFAULT_COLUMN_FAMILY_NAME && d.options.disallow_memtable_writes {
            return Err(Error::invalid_argument(
                "Default column family cannot use disallow_memtable_writes=true",
            ));
        }
    }
    // The hidden stats family is opened whenever the MANIFEST holds it, named or not (as
    // RocksDB's VersionEditHandler opens it); unnamed, it gets no handle.
    let stats_cf_exists = recovered.column_families.values().any(|c| c.name == STATS_CF);
    let stats_cf_hidden = !descs.iter().any(|d| d.name == STATS_CF);
    if stats_cf_exists && stats_cf_hidden {
        let mut o = super::stats_history_api::stats_cf_options();
        o.write_buffer_manager = config.write_buffer_manager.clone();
        o.rate_limiter = config.rate_limiter.clone();
        o.statistics = config.statistics.clone();
        descs.push(ColumnFamilyDescriptor::new(STATS_CF, o));
    }
    let mut missing_in_db = Vec::new();
    for d in &descs {
        if !recovered.column_families.values().any(|c| c.name == d.name) {
            // With `persist_stats_to_disk` the stats family is created at open anyway.
            let stats_made_anyway = d.name == STATS_CF && config.persist_stats_to_disk;
            if !config.create_missing_column_families && !stats_made_anyway {
                return Err(Error::invalid_argument(format!("Column family not found: {}", d.name)));
            }
            missing_in_db.push(d.clone());
        }
    }
    let not_opened: Vec<&str> = recovered
        .column_families
        .values()
        .filter(|c| !descs.iter().any(|d| d.name == c.name))
        .map(|c| c.name.as_str())
        .collect();
    if !not_opened.is_empty() {
        return Err(Error::invalid_argument(format!(
            "Column families not opened: {}",
            not_opened.join(", ")
        )));
    }

    let table_cache = new_table_cache(&fs, path, &config);
    // The database's id, then the identities every table this open writes records
    // (RocksDB's "rocksdb.creating.db.identity", ".session.identity", ".host.identity").
    let db_id = setup_db_id(&*fs, path, recovered.db_id.as_deref(), config.write_identity_file)?;
    let mut with_ids = opts.clone();
    // The WAL directory as RocksDB's SanitizeOptions leaves it: empty when it is the
    // database directory (`DbInner::wal_dir`).
    let wal_dir = config.wal_dir.clone();
    with_ids.wal_dir = if wal_dir == path { std::path::PathBuf::new() } else { wal_dir.clone() };
    with_ids.table_ids = Some(Arc::new(crate::options::table_ids(db_id.clone(), &opts.db_host_id)));
    config.table_ids = with_ids.table_ids.clone();
    let opts = &with_ids;
    let mut cfs = recovered_cf_states(&recovered, &descs, &table_cache, path, &config)?;
    // `open_files_async`: a background thread opens them once the database is open.
    if !config.open_files_async {
        load_tables(&table_cache, &cfs, &config)?;
    }
    // The counts the compaction picker weighs, before the database is shared (RocksDB's
    // `Recover` runs `PrepareAppend` with `!skip_stats_update_on_db_open`; `file_stats.rs`).
    if !config.skip_stats_update_on_db_open {
        for cf in cfs.values() {
            super::file_stats::init_file_stats(&table_cache, &cf.handle, &cf.current, Some(&info_log));
        }
    }

    let mut next_file_number = recovered.next_file_number.max(recovered.manifest_number + 1);
    let mut last_sequence = recovered.last_sequence;
    // Replay the WALs (none with `best_efforts_recovery`, whose new files are numbered above
    // every file of the directories).
    let wals = if config.best_efforts_recovery { Vec::new() } else { wal_numbers(&*fs, &wal_dir)? };
    if config.best_efforts_recovery {
        let used = super::best_efforts::max_file_number(&*fs, &[path, &wal_dir]);
        next_file_number = next_file_number.max(used + 1);
    }
    // RocksDB's MaybeUpdateNextFileNumber: no new file takes the number of a data file
    // already there, such as a blob file blob direct write was appending to when the
    // process stopped (numbered after the MANIFEST's last record; `blob_direct.rs`). Only
    // tables and blob files are counted here (RocksDB counts every kind, which would renumber
    // what follows a reopen of every database).
    let data_dirs = super::paths::table_dirs(path, &config.db_paths, &[]).into_iter().map(|(d, _)| d);
    for dir in std::iter::once(path.to_path_buf()).chain(data_dirs) {
        let Ok(children) = fs.children(&dir) else { continue };
        for name in children {
            if let Some(filename::FileType::Table(n) | filename::FileType::Blob(n)) =
                filename::parse_file_name(&name)
            {
                next_file_number = next_file_number.max(n + 1);
            }
        }
    }
    check_some_wal(&config, exists, &wals)?;
    // RocksDB's `MaybeUpdateNextFileNumber`, before recovery writes anything: a file at or
    // above the MANIFEST's next file number (`optimize_manifest_for_recovery` records the
    // number only then).
    let file_number_advanced = {
        let mut dirs: Vec<&Path> = vec![path, &wal_dir];
        dirs.extend(config.db_paths.iter().map(|(d, _)| d.as_path()));
        super::best_efforts::max_file_number(&*fs, &dirs) >= recovered.next_file_number
    };
    if config.track_and_verify_wals_in_manifest && !config.best_efforts_recovery {
        super::wal_tracking::check_wals(&*fs, &wal_dir, &recovered.wals, &wals)?;
    }
    let mut new_files: Vec<RecoveredTable> = Vec::new();
    let to_replay = wals_to_replay(&wals, &recovered, &cfs, config.allow_2pc);
    let min_wal_number = replay_floor(&recovered, &cfs, config.allow_2pc);
    for &n in &wals {
        next_file_number = next_file_number.max(n + 1);
    }
    let fsr: &dyn FileSystem = &*fs;
    let mut recovery_ctx = RecoveryCtx {
        fs: fsr,
        path,
        wal_dir: &wal_dir,
        next_file_number: &mut next_file_number,
        new_files: &mut new_files,
        read_only: false,
        prepared: Default::default(),
        min_wal_number,
        verify_timestamp_sizes_only: false,
        repair,
    };
    // RocksDB's RecoverLogFiles events (`info_log.rs`): with WALs in the directory, one job
    // from `recovery_started` to `recovery_finished` (or `recovery_failed`).
    let recovery_job = (!wals.is_empty()).then(|| {
        let job = info_log.new_job_id();
        let mut w = super::info_log::JsonWriter::event();
        w.field("job", job).field("event", "recovery_started");
        w.array("wal_files", wals.iter().copied());
        info_log.event(w);
        job
    });
    let replayed = (|| -> Result<()> {
        replay_wals(&mut recovery_ctx, &config, &to_replay, &mut cfs, &mut last_sequence, &info_log)?;
        // `avoid_flush_during_recovery` (resolved off with `allow_2pc`, RocksDB's
        // SanitizeOptions):
        // the memtables keep what was replayed, unless one filled during replay and was
        // flushed; then every family is, as RocksDB's
        // `MaybeFlushFinalMemtableOrRestoreActiveLogFiles`.
        if config.avoid_flush_during_recovery && recovery_ctx.new_files.is_empty() {
            return Ok(());
        }
        // Write what the WALs held to level-0 tables.
        for (id, cf) in cfs.iter_mut() {
            if !cf.mem.is_empty() || cf.mem.num_range_deletes() > 0 {
                if let Some(t) = recovery_table(
                    fsr,
                    path,
                    &cf.handle,
                    &cf.mem,
                    recovery_ctx.next_file_number,
                    config.statistics.as_deref(),
                    super::flush::FlushChecks::of(&config),
                )? {
                    if let Some(job) = recovery_job {
                        super::info_log::log_table_created(
                            &info_log,
                            &table_cache,
                            job,
                            &cf.handle,
                            &t.0,
                            Some(0),
                        );
                    }
                    recovery_ctx.new_files.push((*id, t.0, t.1));
                }
                cf.mem = Arc::new(MemTable::new(cf.handle.icmp.clone(), 0));
            }
        }
        Ok(())
    })();
    if let Some(job) = recovery_job {
        let mut w = super::info_log::JsonWriter::event();
        w.field("job", job);
        match &replayed {
            Ok(()) => w.field("event", "recovery_finished").field("status", "OK"),
            Err(e) => w.field("event", "recovery_failed").field("status", e.to_string()),
        };
        info_log.event(w);
    }
    replayed?;
    let prepared = std::mem::take(&mut recovery_ctx.prepared);
    if !new_files.is_empty() {
        fs.sync_dir(path)?;
    }
    // New WAL, new MANIFEST.
    let wal_number = next_file_number;
    let manifest_number = next_file_number + 1;
    next_file_number += 2;
    let wal_file = fs.new_writable_file(&filename::wal_file(&wal_dir, wal_number))?;
    // RocksDB's DBImpl::Open sizes the first WAL's preallocation from the largest write
    // buffer of the families opened.
    let max_write_buffer_size = descs.iter().map(|d| d.options.write_buffer_size as u64).max().unwrap_or(0);
    let wal_file = crate::fs::Preallocating::wrap(wal_file, config.wal_preallocation(max_write_buffer_size));
    let mut wal_writer = LogWriter::new(wal_file, wal_number)
        .with_bytes_per_sync(config.wal_bytes_per_sync)
        .with_strict_range_sync(config.strict_bytes_per_sync)
        .with_recycling(config.recycle_log_file_num > 0)
        .with_track_and_verify_wals(config.track_and_verify_wals);
    // The first WAL of an open names no predecessor (RocksDB's `DBImpl::Open` passes an
    // empty `PredecessorWALInfo`).
    wal_writer.add_compression_type_record(config.wal_compression)?;
    // Prepared transactions still undecided are written again to the new WAL (the old
    // ones go once the MANIFEST names it), so a crash before their decision keeps them.
    prepared.relog(&mut wal_writer, last_sequence)?;
    wal_writer.sync()?;
    if wal_dir != path {
        // The database directory is synced with CURRENT below; the WAL's is its own.
        fs.sync_dir(&wal_dir)?;
    }
    // Each family's recovery edit (`reuse_manifest_on_open` appends them; else the new
    // MANIFEST's snapshot holds their result): the tables written from the WALs, then the
    // family's new log number below.
    let mut cf_edits: BTreeMap<u32, VersionEdit> = BTreeMap::new();
    for (id, meta, blobs) in new_files {
        if let Some(cf) = cfs.get_mut(&id) {
            let mut b = VersionBuilder::new(&cf.current);
            let mut e = VersionEdit { column_family: id, blob_file_additions: blobs, ..Default::default() };
            e.new_files.push((0, meta));
            b.apply(&e)?;
            cf.set_current(Arc::new(b.build()));
            let all =
                cf_edits.entry(id).or_insert_with(|| VersionEdit { column_family: id, ..Default::default() });
            all.new_files.append(&mut e.new_files);
            all.blob_file_additions.append(&mut e.blob_file_additions);
        }
    }
    // A family whose memtable kept replayed data (`avoid_flush_during_recovery`) keeps its
    // log number, so the WALs that hold that data stay alive (and are replayed again by
    // the next open) until it is flushed.
    let mut min_kept_log: Option<u64> = None;
    for cf in cfs.values_mut() {
        if !cf.mem.is_empty() || cf.mem.num_range_deletes() > 0 {
            min_kept_log = Some(min_kept_log.map_or(cf.log_number, |m: u64| m.min(cf.log_number)));
        } else {
            cf.log_number = wal_number;
            cf.mem = cf.handle.new_memtable(wal_number);
            cf.mem.set_earliest_seqno(last_sequence);
            let id = cf.handle.id;
            cf_edits
                .entry(id)
                .or_insert_with(|| VersionEdit { column_family: id, ..Default::default() })
                .log_number = Some(wal_number);
        }
        cf.install_super_version();
    }
    // RocksDB's RestoreAliveLogFiles: the WALs backing unflushed data are alive, with their
    // sizes counted toward `max_total_wal_size`.
    let kept_wals: Vec<(u64, u64)> = match min_kept_log {
        Some(min) => {
            let mut v = Vec::new();
            for &n in wals.iter().filter(|&&n| n >= min && n < wal_number) {
                v.push((n, fs.file_size(&filename::wal_file(&wal_dir, n))?));
            }
            v
        }
        None => Vec::new(),
    };
    let max_column_family = recovered.max_column_family.max(cfs.keys().copied().max().unwrap_or(0));
    let manifest_db_id = config.write_dbid_to_manifest.then_some(db_id);
    let snapshot = super::versions::snapshot_edits(
        &cfs,
        next_file_number,
        last_sequence,
        max_column_family,
        manifest_db_id.as_deref(),
    );
    // The recovered WAL set (`track_and_verify_wals_in_manifest`): when recovery kept the
    // replayed data in the memtables (`avoid_flush_during_recovery`), RocksDB records no WAL
    // deletion and its new MANIFEST carries the whole set (WriteCurrentStateToManifest), so
    // the WALs kept alive stay verified at the next open; after a recovery flush every
    // recovered WAL is below the new minimum and the set is emptied.
    let carried_wals: BTreeMap<u64, Option<u64>> =
        if config.track_and_verify_wals_in_manifest && min_kept_log.is_some() {
            recovered.wals.clone()
        } else {
            BTreeMap::new()
        };
    let mut snapshot = snapshot;
    if !carried_wals.is_empty() {
        let wal_additions = carried_wals
            .iter()
            .map(|(&number, &synced_size)| crate::version::edit::WalAddition { number, synced_size })
            .collect();
        // After the DB id record, which comes first as in RocksDB.
        let at = usize::from(manifest_db_id.is_some());
        snapshot.insert(at, VersionEdit { wal_additions, ..Default::default() });
    }
    // `optimize_manifest_for_recovery` (not with best-efforts recovery, which needs the
    // MANIFEST rewritten): only the recovery edits that change something.
    let optimize = config.optimize_manifest_for_recovery && !config.best_efforts_recovery;
    let edits = recovery_edits(
        &config,
        RecoveryEditsCtx {
            recovered: &recovered,
            max_wal: wals.last().copied(),
            cf_ids: cfs.keys().copied().collect(),
            cf_edits,
            manifest_db_id: manifest_db_id.as_deref(),
            all_flushed: min_kept_log.is_none(),
            file_number_advanced,
            wal_number,
            next_file_number,
            last_sequence,
        },
        optimize,
    );
    let reused = if config.reuse_manifest_on_open && !config.best_efforts_recovery {
        let edits = edits.clone();
        reuse_manifest(fsr, path, &config, &info_log, &recovered, edits, (next_file_number, last_sequence))?
    } else {
        None
    };
    // With nothing to record RocksDB's open writes no MANIFEST (its LogAndApply of no edit):
    // CURRENT keeps naming the recovered one, and the first change writes a new one.
    let unwritten = reused.is_none() && optimize && edits.is_empty();
    let manifest = match reused {
        Some(w) => w,
        None if unwritten => {
            // The new WAL's name is made durable as CURRENT's rename would have.
            fs.sync_dir(path)?;
            ManifestWriter::unopened(recovered.manifest_number, recovered.manifest_size)
        }
        None => {
            let w = ManifestWriter::create(fsr, path, manifest_number, &snapshot)?;
            manifest::set_current_file(fsr, path, manifest_number, next_file_number)?;
            w
        }
    };
    let manifest_number = manifest.number();
    let manifest_reused = manifest_number == recovered.manifest_number;
    if !config.write_identity_file {
        // RocksDB deletes an obsolete IDENTITY once recovery succeeded (its id is in the
        // MANIFEST now), so the two cannot disagree later.
        let identity = filename::identity_file(path);
        if fs.file_exists(&identity) {
            fs.remove_file(&identity)?;
            fs.sync_dir(path)?;
        }
    }
    let versions = VersionSet::new(
        fs.clone(),
        path,
        manifest,
        next_file_number,
        last_sequence,
        config.max_manifest_file_size,
    )
    .with_manifest_space_amp(config.max_manifest_space_amp_pct)
    .with_db_id(manifest_db_id);
    let versions = if manifest_reused { versions.with_reused_manifest() } else { versions };
    if unwritten {
        versions.roll_manifest_next();
    }
    let parts =
        InnerParts { fs: fs.clone(), versions, table_cache, info_log, lock, max_column_family, file_writes };
    let hooks = Box::new(super::options_writer::RocksOptionsHooks::new(opts.clone()));
    let inner = new_inner(path, hooks, config, parts, wal_writer, wal_number, DbMode::ReadWrite);
    inner.prep_tracker().set_recovered(prepared, wal_number);
    {
        let mut st = inner.lock_state();
        for &(n, size) in kept_wals.iter().rev() {
            st.alive_wals.push_front(n);
            inner.wal_total.closed(n, size);
        }
        // Deleted from the set (a WalDeletion record) once every family flushed past them.
        st.tracked_wals = carried_wals;
        for (id, cf) in cfs {
            inner.publish_active_memtable(id, Some(&cf));
            inner.set_handle(id, Some(cf.handle.clone()));
            st.cfs.insert(id, cf);
        }
        inner.wal_total.refresh(&st);
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in ids {
            inner.stall_changed(&mut st, id);
            inner.schedule_compaction(&mut st, id);
        }
        inner.purge_unreferenced(&mut st);
        // `async_wal_precreate`: the first WAL after this one is made ahead (RocksDB schedules
        // it once the open's obsolete files are deleted).
        inner.maybe_schedule_wal_precreate(&mut st, max_write_buffer_size);
    }
    // The families' options go to the LOG without the DB mutex.
    let handles: Vec<_> = inner.lock_state().cfs.values().map(|cf| cf.handle.clone()).collect();
    for h in &handles {
        inner.hooks.log_cf_options(&inner, h)?;
    }
    inner.hooks.write_options_file(&inner)?;
    inner.info_log.log(format_args!(
        "Recovered to sequence {last_sequence}; WAL {wal_number}, MANIFEST-{manifest_number:06}"
    ));

    let mut threads = super::scheduler::start_background_threads(&inner)?;
    if inner.config.open_files_async {
        threads.push(super::open_async::start(&inner)?);
    }
    let mut db = into_db::<T>(inner, threads)?;
    // Families the caller names that the database lacks: created together, with one
    // MANIFEST write and one OPTIONS file.
    let missing: Vec<(String, Options)> = missing_in_db
        .into_iter()
        .filter(|d| d.name != DEFAULT_COLUMN_FAMILY_NAME)
        .map(|d| (d.name, d.options))
        .collect();
    let stats_cf_created = missing.iter().any(|(n, _)| n == STATS_CF);
    if !missing.is_empty() {
        for handle in super::create_cf::create_cfs(&db.inner, &missing)? {
            db.cfs.insert_handle(&handle.name.clone(), ColumnFamily::new(handle));
        }
    }
    if stats_cf_hidden {
        db.cfs.remove_handle(STATS_CF);
    }
    if db.inner.config.persist_stats_to_disk {
        super::stats_history_api::init_stats_cf(&db.inner, stats_cf_created)?;
    }
    // The sequence-number-to-time mapping (`preserve_internal_time_seconds`): a new
    // database starts at sequence 100 with pairs for 1..=100 (RocksDB's
    // `PrepopulateSeqnoToTimeMapping`), then the first sample is taken (its periodic task's
    // run at registration).
    if is_new_db {
        if let Some(seq) = db.inner.prepopulate_seqno_time() {
            db.inner.start_sequence_at(seq)?;
        }
    }
    db.inner.record_seqno_time(shale_engine::db::seqno_time::Sampling::Register);
    // The stats history's first run, which records the tickers the next one subtracts (the
    // periodic task's run at registration, RocksDB's `run_immediately`), done here so that
    // what follows open falls in the first period.
    if db.inner.config.stats_persist_period_sec > 0 {
        db.inner.persist_stats();
    }
    Ok(db)
}

/// The families of `descs` the MANIFEST holds, each with its recovered Version and an empty
/// memtable (the WALs are replayed into it next). Checks comparators and levels.
pub(crate) fn recovered_cf_states(
    recovered: &manifest::RecoveredManifest,
    descs: &[ColumnFamilyDescriptor],
    table_cache: &TableCache,
    path: &Path,
    config: &DbConfig,
) -> Result<BTreeMap<u32, CfState>> {
    let mut cfs = BTreeMap::new();
    for (id, rc) in &recovered.column_families {
        let Some(d) = descs.iter().find(|d| d.name == rc.name) else { continue };
        // RocksDB's VersionEditHandler: the comparator and `persist_user_defined_timestamps`
        // against what the MANIFEST records (`ValidateUserDefinedTimestampsOptions`).
        let mut mark_no_udt = false;
        if let Some(stored) = &rc.comparator {
            mark_no_udt = shale_engine::db::timestamps::validate_udt_options(
                d.options.comparator.as_ref(),
                stored,
                d.options.persist_user_defined_timestamps,
                rc.persist_user_defined_timestamps.unwrap_or(true),
            )?;
        }
        let icmp = InternalKeyComparator::new(d.options.comparator.clone());
        let ts = icmp.timestamp_size();
        let files = rc
            .files
            .iter()
            .map(|(l, f)| {
                let mut f = f.clone();
                shale_engine::db::timestamps::pad_file_boundaries(&mut f, ts, mark_no_udt);
                (*l, Arc::new(f))
            })
            .collect::<Vec<_>>();
        if let Some((l, _)) = files.iter().find(|(l, _)| *l as i32 >= d.options.num_levels) {
            return Err(Error::invalid_argument(format!(
                "db has more levels than options.num_levels: file at level {l}, num_levels {}",
                d.options.num_levels
            )));
        }
        let version = Arc::new(
            Version::new(icmp.clone(), d.options.num_levels as usize, files)
                .with_blob_files(&rc.blob_files)
                .with_compact_cursors(&rc.compact_cursors),
        );
        version.check_consistency_with(d.options.force_consistency_checks)?;
        let mem = Arc::new(
            MemTable::for_write_buffer(
                icmp,
                0,
                d.options.sanitized_arena_block_size(),
                d.options.write_buffer_manager.clone(),
            )
            .with_bloom_of(&d.options.memtable_config()),
        );
        let sv = SuperVersion::new(1, mem.clone(), Vec::new(), version.clone());
        let dirs = super::paths::table_dirs(path, &config.db_paths, &d.options.cf_paths);
        let mut cf_opts = d.options.clone();
        cf_opts.table_ids = config.table_ids.clone();
        if dirs.len() > 1 {
            // RocksDB's SanitizeOptions: dynamic level sizes and several paths do not go
            // together.
            cf_opts.level_compaction_dynamic_level_bytes = false;
        }
        let (cf_config, record) =
            super::dyn_options::settings_of(super::dyn_options::sanitized_at_open(cf_opts));
        let handle = Arc::new(
            CfHandle::new(*id, &rc.name, cf_config, record, &table_cache.default_block_cache, sv)
                .with_table_dirs(dirs),
        );
        if !rc.full_history_ts_low.is_empty() {
            *handle.full_history_ts_low.lock() = rc.full_history_ts_low.clone();
        }
        cfs.insert(*id, CfState::new(handle, mem, version, rc.log_number));
    }
    Ok(cfs)
}

/// The handle of every installed family, and the database over `inner`.
pub(crate) fn into_db<T: ThreadMode>(
    inner: Arc<DbInner>,
    threads: Vec<std::thread::JoinHandle<()>>,
) -> Result<DBWithThreadMode<T>> {
    let mut handles = BTreeMap::new();
    {
        let st = inner.lock_state();
        for cf in st.cfs.values() {
            handles.insert(cf.handle.name.clone(), ColumnFamily::new(cf.handle.clone()));
        }
    }
    let default_cf = handles
        .get(DEFAULT_COLUMN_FAMILY_NAME)
        .map(|c| ColumnFamily::new(c.handle.clone()))
        .ok_or_else(|| Error::corruption("no default column family"))?;
    Ok(DBWithThreadMode::<T>::from_parts(inner, handles, default_cf, threads))
}

pub(crate) fn list_cf(opts: &Options, path: &Path) -> Result<Vec<String>> {
    super::open::list_cf(&opts.engine_db_config(path), path)
}

pub(crate) fn destroy(opts: &Options, path: &Path) -> Result<()> {
    super::open::destroy(&opts.engine_db_config(path), path)
}

/// The families an open names, completed as rust-rocksdb completes them: with no
/// descriptors the default family gets the DB's options; a list that names other families
/// but not "default" opens it with `Options::default()`. Each family's options are then
/// sanitized for `allow_ingest_behind`.
pub(super) fn with_default_family(
    descs: &mut Vec<ColumnFamilyDescriptor>,
    opts: &Options,
    allow_ingest_behind: bool,
) {
    if !descs.iter().any(|d| d.name == DEFAULT_COLUMN_FAMILY_NAME) {
        let default_opts = if descs.is_empty() { opts.clone() } else { Options::default() };
        descs.insert(0, ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, default_opts));
    }
    for d in descs.iter_mut() {
        d.options.sanitize_cf(allow_ingest_behind);
    }
}

/// The table cache of an open (read-write, read-only or secondary): families without a
/// block cache of their own share a 32 MiB one, as RocksDB 11.8.1's default table factory
/// does (`BlockBasedTableFactory::InitializeOptions`: `HyperClockCacheOptions{32 MiB}`, so an
/// AutoHyperClockCache, estimated entry charge 0, of one shard: shards of at least 32 MiB).
pub(super) fn new_table_cache(fs: &Arc<dyn FileSystem>, path: &Path, config: &DbConfig) -> TableCache {
    let default_cache = Arc::new(crate::cache::BlockCache::new_hyper_clock(32 << 20, -1, false));
    TableCache::new(
        fs.clone(),
        path.to_path_buf(),
        config.max_open_files,
        default_cache,
        config.statistics.clone(),
        config.row_cache.clone(),
    )
    .with_unique_id_check(config.verify_sst_unique_id_in_manifest)
}
