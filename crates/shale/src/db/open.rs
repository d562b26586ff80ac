//! Opening (create, recover, replay WALs), closing, destroying and listing a database.
//!
//! Open follows RocksDB: take LOCK; create a new database or read CURRENT and the MANIFEST;
//! replay the WALs the MANIFEST does not cover into memtables; write what was replayed to
//! level-0 tables; start a new WAL and a new MANIFEST naming everything; point CURRENT at
//! it; remove the files no longer needed.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::ranks;
use parking_lot::{Condvar, Mutex as PlMutex, RwLock};
use shale_base::lock_rank::Ranked;

use super::cf::{CfHandle, SuperVersion, DEFAULT_COLUMN_FAMILY_NAME};
use super::column_family::ColumnFamily;
use super::filename::{self, FileType};
use super::info_log::InfoLog;
use super::readonly::DbMode;
use super::scheduler::JobQueues;
use super::stats_history::PERSISTENT_STATS_COLUMN_FAMILY_NAME as STATS_CF;
use super::table_cache::TableCache;
use super::write_controller::WriteController;
use super::{CfState, DBWithThreadMode, DbInner, DbState, Stats, ThreadMode, WalState};
use crate::cf_descriptor::ColumnFamilyDescriptor;
use crate::env::fill_random;
use crate::error::{Error, Result};
use crate::fs::{default_fs, FileLock, FileSystem, FileSystemRef};
use crate::key::InternalKeyComparator;
use crate::memtable::write_buffer_manager::WriteBufferManagerState;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::manifest::{self, ManifestWriter};
use crate::version::set::VersionSet;
use crate::version::{Version, VersionBuilder};
use crate::wal::{LogReader, LogWriter};
use shale_engine::batch::Batch as WriteBatch;
use shale_engine::config::DbConfig;

pub(crate) fn open<T: ThreadMode>(
    opts: &Options,
    path: &Path,
    mut descs: Vec<ColumnFamilyDescriptor>,
) -> Result<DBWithThreadMode<T>> {
    opts.check_supported()?;
    // RocksDB's DBImpl::ValidateOptions.
    if !opts.write_dbid_to_manifest && !opts.write_identity_file {
        return Err(Error::invalid_argument(
            "write_dbid_to_manifest and write_identity_file cannot both be false",
        ));
    }
    opts.dbopt.validate()?;
    // The hidden stats family has RocksDB's `OptimizeForPersistentStats` options whatever the
    // caller names it with (`stats_history.rs`).
    for d in &mut descs {
        if d.name == STATS_CF {
            d.options = super::stats_history::stats_cf_options();
        }
    }
    for d in &descs {
        d.options.check_supported()?;
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
    let fs = super::buffered_fs::BufferedWritesFs::wrap(
        fs,
        config.writable_file_max_buffer_size,
        config.bytes_per_sync,
        config.strict_bytes_per_sync,
        crate::fs::ReadFileOptions { direct: config.use_direct_reads, mmap: config.allow_mmap_reads },
        crate::fs::WriteFileOptions {
            max_buffer_size: 0,
            direct: config.use_direct_io_for_flush_and_compaction,
            mmap: config.allow_mmap_writes,
        },
        config.manifest_preallocation(),
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
    if !exists {
        if !config.create_if_missing {
            return Err(Error::invalid_argument(format!(
                "{}: does not exist (create_if_missing is false)",
                current.display()
            )));
        }
        new_db(&*fs, path, opts)?;
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

    let recovered = match best_efforts {
        Some(r) => r,
        None => manifest::recover_with_readahead(&*fs, path, config.log_readahead_size)?,
    };
    // Which families the caller opens, with which options.
    // As rust-rocksdb: with no descriptors the default family gets the DB's options; a
    // list that names other families but not "default" opens it with `Options::default()`.
    if !descs.iter().any(|d| d.name == DEFAULT_COLUMN_FAMILY_NAME) {
        let default_opts = if descs.is_empty() { opts.clone() } else { Options::default() };
        descs.insert(0, ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, default_opts));
    }
    for d in &mut descs {
        d.options.sanitize_ingest_behind(config.allow_ingest_behind);
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
        let mut o = super::stats_history::stats_cf_options();
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

    let default_cache = Arc::new(crate::cache::BlockCache::new(32 << 20));
    let table_cache = TableCache::new(
        fs.clone(),
        path.to_path_buf(),
        config.max_open_files,
        default_cache,
        config.statistics.clone(),
        config.row_cache.clone(),
    )
    .with_unique_id_check(config.verify_sst_unique_id_in_manifest);
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
    load_tables(&table_cache, &cfs, &config)?;

    let mut next_file_number = recovered.next_file_number.max(recovered.manifest_number + 1);
    let mut last_sequence = recovered.last_sequence;
    // Replay the WALs (none with `best_efforts_recovery`, whose new files are numbered above
    // every file of the directories).
    let wals = if config.best_efforts_recovery { Vec::new() } else { wal_numbers(&*fs, &wal_dir)? };
    if config.best_efforts_recovery {
        let used = super::best_efforts::max_file_number(&*fs, &[path, &wal_dir]);
        next_file_number = next_file_number.max(used + 1);
    }
    check_some_wal(&config, exists, &wals)?;
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
                        super::info_log::log_table_created(&info_log, &table_cache, job, &cf.handle, &t.0);
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
    for (id, meta, blobs) in new_files {
        if let Some(cf) = cfs.get_mut(&id) {
            let mut b = VersionBuilder::new(&cf.current);
            let mut e = VersionEdit { column_family: id, blob_file_additions: blobs, ..Default::default() };
            e.new_files.push((0, meta));
            b.apply(&e)?;
            cf.set_current(Arc::new(b.build()));
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
    let manifest = ManifestWriter::create(fsr, path, manifest_number, &snapshot)?;
    manifest::set_current_file(fsr, path, manifest_number, next_file_number)?;
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
    .with_db_id(manifest_db_id);
    let parts = InnerParts { fs: fs.clone(), versions, table_cache, info_log, lock, max_column_family };
    let inner = new_inner(path, opts, config, parts, wal_writer, wal_number, DbMode::ReadWrite);
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
        inner.wal_total.refresh(&inner.config, &st);
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in ids {
            inner.stall_changed(&mut st, id);
            inner.schedule_compaction(&mut st, id);
        }
        inner.purge_unreferenced(&mut st);
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

    let threads = super::scheduler::start_background_threads(&inner)?;
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
        super::stats_history::init_stats_cf(&db.inner, stats_cf_created)?;
    }
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
pub(super) fn recovered_cf_states(
    recovered: &manifest::RecoveredManifest,
    descs: &[ColumnFamilyDescriptor],
    table_cache: &TableCache,
    path: &Path,
    config: &DbConfig,
) -> Result<BTreeMap<u32, CfState>> {
    let mut cfs = BTreeMap::new();
    for (id, rc) in &recovered.column_families {
        let Some(d) = descs.iter().find(|d| d.name == rc.name) else { continue };
        let given = d.options.comparator.name();
        if let Some(stored) = &rc.comparator {
            if stored != given {
                return Err(Error::invalid_argument(format!(
                    "{given}: does not match existing comparator {stored}"
                )));
            }
        }
        let icmp = InternalKeyComparator::new(d.options.comparator.clone());
        if icmp.timestamp_size() > 0 && rc.persist_user_defined_timestamps == Some(false) {
            return Err(Error::not_supported(format!(
                "column family {}: user-defined timestamps not persisted in its files \
                 (persist_user_defined_timestamps=false)",
                rc.name
            )));
        }
        let files = rc.files.iter().map(|(l, f)| (*l, Arc::new(f.clone()))).collect::<Vec<_>>();
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
        let (cf_config, record) = super::dyn_options::settings_of(cf_opts);
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

/// The WAL numbers in `path`, ascending.
pub(super) fn wal_numbers(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u64>> {
    let mut wals: Vec<u64> = fs
        .children(path)?
        .iter()
        .filter_map(|n| match filename::parse_file_name(n) {
            Some(FileType::Wal(n)) => Some(n),
            _ => None,
        })
        .collect();
    wals.sort_unstable();
    Ok(wals)
}

/// RocksDB's check of the file options against the file system at open (`DBImpl::Recover`):
/// CURRENT opened with direct reads; when that fails and a plain open works, direct I/O is
/// what the file system lacks.
fn check_direct_io(fs: &dyn crate::fs::FileSystem, current: &Path, config: &DbConfig) -> Result<()> {
    // RocksDB opens CURRENT with `use_direct_reads |= use_direct_io_for_flush_and_compaction`
    // (mmap reads, when asked for, win over direct reads).
    let direct = config.use_direct_reads || config.use_direct_io_for_flush_and_compaction;
    if !direct || config.allow_mmap_reads {
        return Ok(());
    }
    let direct = crate::fs::ReadFileOptions { direct: true, mmap: false };
    if let Err(e) = fs.new_random_access_file_with(current, direct) {
        return Err(match fs.new_random_access_file(current) {
            Ok(_) => Error::invalid_argument("Direct I/O is not supported by the specified DB."),
            Err(_) => Error::invalid_argument(format!("Found options incompatible with filesystem: {e}")),
        });
    }
    Ok(())
}

/// Of the WALs on disk (`wals`, ascending), those recovery replays, ascending: RocksDB's
/// SetupLogFilesRecovery/ProcessLogFile skip a WAL below the MANIFEST's
/// min_log_number_to_keep and, without two-phase commit, below every family's log number.
/// With two-phase commit a WAL older than every family's log number is still on disk only
/// because it holds a prepare section (`db/twopc.rs`): it is replayed too (its
/// other entries are older than the families' log numbers and skipped). A read-write, a
/// read-only and a secondary open all use this rule (RocksDB's DBImplReadOnly runs the
/// same Recover).
pub(super) fn wals_to_replay(
    wals: &[u64],
    recovered: &manifest::RecoveredManifest,
    cfs: &BTreeMap<u32, CfState>,
    allow_2pc: bool,
) -> Vec<u64> {
    let floor = replay_floor(recovered, cfs, allow_2pc);
    wals.iter().copied().filter(|&n| n >= floor).collect()
}

/// The oldest WAL recovery replays (RocksDB's `min_wal_number` of `SetupLogFilesRecovery`):
/// see [`wals_to_replay`].
pub(super) fn replay_floor(
    recovered: &manifest::RecoveredManifest,
    cfs: &BTreeMap<u32, CfState>,
    allow_2pc: bool,
) -> u64 {
    let mut floor = recovered.min_log_number_to_keep.max(recovered.prev_log_number);
    if !allow_2pc {
        floor = floor.max(cfs.values().map(|c| c.log_number).min().unwrap_or(0));
    }
    floor
}

/// `track_and_verify_wals`: an existing database must have a WAL (RocksDB's `Recover`,
/// before any is read; not with `best_efforts_recovery`, which reads none).
pub(super) fn check_some_wal(config: &DbConfig, existed: bool, wals: &[u64]) -> Result<()> {
    if config.track_and_verify_wals && existed && !config.best_efforts_recovery && wals.is_empty() {
        return Err(Error::corruption("Opening an existing DB with no WAL files"));
    }
    Ok(())
}

/// What a database needs besides its WAL to be built.
pub(super) struct InnerParts {
    pub fs: FileSystemRef,
    pub versions: VersionSet,
    pub table_cache: TableCache,
    pub info_log: InfoLog,
    pub lock: Box<dyn FileLock>,
    pub max_column_family: u32,
}

/// The database's shared state, with no family installed yet.
pub(super) fn new_inner(
    path: &Path,
    opts: &Options,
    config: DbConfig,
    parts: InnerParts,
    wal_writer: LogWriter,
    wal_number: u64,
    mode: DbMode,
) -> Arc<DbInner> {
    let InnerParts { fs, versions, table_cache, info_log, lock, max_column_family } = parts;
    let (max_flushes, max_compactions) = (config.max_background_flushes, config.max_background_compactions);
    let fs_for_blobs = fs.clone();
    let write_control = WriteController::new(config.delayed_write_rate);
    let blob_stats = config.statistics.clone();
    let wal_total = super::wal_limit::WalTotal::new(&config);
    Arc::new(DbInner {
        path: path.to_path_buf(),
        fs,
        hooks: Box::new(super::options_writer::RocksOptionsHooks::new(opts.clone())),
        config,
        compaction_service: Ranked::new(ranks::COMPACTION_SERVICE, PlMutex::new(None)),
        state: Ranked::new(
            ranks::DB_MUTEX,
            PlMutex::new(DbState {
                cfs: BTreeMap::new(),
                max_column_family,
                alive_wals: VecDeque::from([wal_number]),
                wal_recycle: VecDeque::new(),
                min_wal_to_recycle: wal_number,
                pending_wal_additions: Vec::new(),
                tracked_wals: BTreeMap::new(),
                wals_deleted_before: 0,
                jobs: JobQueues::new(max_flushes, max_compactions),
                manifest_busy: false,
                errors: super::error_handler::ErrorHandler::new(),
                obsolete_tables: Vec::new(),
                obsolete_blobs: Vec::new(),
                stopped_cfs: 0,
                delayed_cfs: 0,
                speedup_cfs: 0,
                file_deletion_holds: 0,
                atomic_flush_busy: false,
                refitting_level: false,
                purge_job: None,
            }),
        ),
        work_cv: Condvar::new(),
        done_cv: Condvar::new(),
        manifest_cv: Condvar::new(),
        writers: Ranked::new(ranks::WRITERS, PlMutex::new(Default::default())),
        write_yield_credit: Default::default(),
        mem_writers: Default::default(),
        wal: Ranked::new(
            ranks::WAL,
            Mutex::new(WalState {
                writer: wal_writer,
                number: wal_number,
                unsynced: false,
                unsynced_writes: 0,
                dir_synced: true,
            }),
        ),
        wal_meta: Ranked::new(
            ranks::WAL_META,
            PlMutex::new(super::WalMeta {
                closed: Vec::new(),
                synced_closed: Vec::new(),
                mems: Arc::new(Vec::new()),
                full: Vec::new(),
            }),
        ),
        versions,
        handles: Ranked::new(ranks::HANDLES, RwLock::new(Vec::new())),
        write_control,
        shutting_down: AtomicBool::new(false),
        unpersisted: AtomicBool::new(false),
        oldest_snapshot_released: std::sync::atomic::AtomicU64::new(0),
        bottommost_threshold: std::sync::atomic::AtomicU64::new(u64::MAX),
        bottommost_recheck: AtomicBool::new(false),
        has_obsolete: AtomicBool::new(false),
        purge_requested: AtomicBool::new(false),
        table_cache,
        blob_cache: Arc::new(crate::blob::BlobFileCache::new(fs_for_blobs, path.to_path_buf(), blob_stats)),
        snapshots: Ranked::new(ranks::SNAPSHOTS, Mutex::new(BTreeMap::new())),
        info_log,
        stats: Stats::default(),
        mode,
        prep: Ranked::new(ranks::PREP, PlMutex::new(Default::default())),
        ts_families: AtomicBool::new(false),
        mems_hint: std::sync::atomic::AtomicUsize::new(0),
        halted: std::sync::OnceLock::new(),
        wal_total,
        wal_archive_purged_at: std::sync::atomic::AtomicU64::new(0),
        low_pri_limiter: crate::rate_limiter::RateLimiter::new(1 << 20, 100_000, 10, false),
        _lock: lock,
    })
}

/// The handle of every installed family, and the database over `inner`.
pub(super) fn into_db<T: ThreadMode>(
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

/// Opens the live tables before the WALs are replayed, as RocksDB's `LoadTableHandlers`
/// does: all of them with `max_open_files = -1`, else up to 16 per column family, on up to
/// `max_file_opening_threads` threads (RocksDB's: each thread takes the next file; 1 or
/// less: this thread only). Opening reads each table's footer, metaindex, properties, index
/// and filter blocks, so with `paranoid_checks` (the default) a damaged one fails the open
/// with Corruption (the first such file in level order), and a missing one too
/// ("Corruption: IO error: ... No such file ..."). Without it the errors are left for the
/// reads that need the table.
pub(super) fn load_tables(
    table_cache: &TableCache,
    cfs: &BTreeMap<u32, CfState>,
    config: &DbConfig,
) -> Result<()> {
    let limit = if config.max_open_files < 0 {
        usize::MAX
    } else {
        // A quarter of the table cache (see TableCache::new), at most 16.
        ((config.max_open_files as usize).saturating_sub(10).max(16) / 4).min(16)
    };
    let files: Vec<_> = cfs
        .values()
        .flat_map(|cf| cf.current.all_files().take(limit).map(move |(level, f)| (cf, level, f)))
        .collect();
    let open = |i: usize| -> Result<()> {
        let (cf, level, f) = files[i];
        match table_cache.get_at(&cf.handle, f, Some(level as usize)) {
            Ok(_) => Ok(()),
            Err(_) if !config.paranoid_checks => Ok(()),
            Err(e) if e.os_code() == Some(libc::ENOENT) => Err(Error::corruption(format!("Corruption: {e}"))),
            Err(e) => Err(e),
        }
    };
    let threads = usize::try_from(config.max_file_opening_threads).unwrap_or(1).clamp(1, files.len().max(1));
    if threads == 1 {
        return (0..files.len()).try_for_each(open);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, Error)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut failed = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= files.len() {
                            return failed;
                        }
                        if let Err(e) = open(i) {
                            failed.push((i, e));
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join().unwrap_or_else(|_| vec![(0, Error::corruption("a table-opening thread panicked"))])
            })
            .collect()
    });
    match results.into_iter().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// A level-0 table written from a WAL at open, with the blob files it refers to.
pub(super) type RecoveredTable = (u32, FileMetaData, Vec<crate::version::edit::BlobFileAddition>);

/// Writes a memtable recovered from the WALs to a level-0 table numbered from
/// `next_file_number`; with BlobDB its large values go to blob files numbered after it, as
/// RocksDB's recovery flush writes them (BlobFileCreationReason::kRecovery).
fn recovery_table(
    fs: &dyn FileSystem,
    path: &Path,
    cf: &super::cf::CfHandle,
    mem: &Arc<MemTable>,
    next_file_number: &mut u64,
    stats: Option<&crate::statistics::Statistics>,
    checks: super::flush::FlushChecks,
) -> Result<Option<(FileMetaData, Vec<crate::version::edit::BlobFileAddition>)>> {
    let number = *next_file_number;
    let next = std::cell::Cell::new(number + 1);
    let blob_number = || {
        let n = next.get();
        next.set(n + 1);
        n
    };
    let r = super::flush::write_level0_table_of(
        fs,
        path,
        cf,
        std::slice::from_ref(mem),
        number,
        &[],
        Some(&blob_number),
        stats,
        checks,
        0,
        None,
        // RocksDB warms no cache with a recovery's tables (reason kRecovery).
        None,
    );
    *next_file_number = next.get();
    r
}

pub(super) struct RecoveryCtx<'a> {
    pub fs: &'a dyn FileSystem,
    pub path: &'a Path,
    /// Where the WALs are (`Options::wal_dir_of`).
    pub wal_dir: &'a Path,
    pub next_file_number: &'a mut u64,
    pub new_files: &'a mut Vec<RecoveredTable>,
    /// Read-only and secondary opens write no table: full memtables stay in memory.
    pub read_only: bool,
    /// Prepared two-phase-commit sections met so far and not yet decided
    /// (`db/twopc.rs`).
    pub prepared: super::twopc::RecoveredPrepared,
    /// The oldest WAL recovery needs ([`replay_floor`]): with `track_and_verify_wals`, a
    /// first replayed WAL whose recorded predecessor is this one or newer misses a WAL.
    pub min_wal_number: u64,
}

/// Where point-in-time recovery stands across WALs (RocksDB's `stop_replay_for_corruption`,
/// `next_sequence` and `corrupted_wal_number` in RecoverLogFiles).
#[derive(Debug)]
struct ReplayState {
    /// A damaged record ended a WAL: later records are dropped until a WAL's first batch
    /// begins at `next_sequence`.
    pub stopped: bool,
    /// The sequence number after the last batch replayed (none yet: `u64::MAX`).
    pub next_sequence: u64,
    /// The WAL where replay stopped.
    pub corrupted_wal: u64,
    /// The last WAL replayed whole, as the next one's predecessor record must name it
    /// (RocksDB's `UpdatePredecessorWALInfo`: number, size on disk, starting sequence of
    /// its last batch).
    pub observed: Option<crate::wal::PredecessorWalInfo>,
}

impl Default for ReplayState {
    fn default() -> Self {
        ReplayState { stopped: false, next_sequence: u64::MAX, corrupted_wal: u64::MAX, observed: None }
    }
}

/// RocksDB's MaybeHandleStopReplayForCorruptionForInconsistency: after point-in-time
/// recovery stopped in WAL N, a family with tables whose log number is past N holds data
/// newer than the hole: the open fails.
fn check_stop_for_corruption(replay: &ReplayState, cfs: &BTreeMap<u32, CfState>) -> Result<()> {
    if !replay.stopped {
        return Ok(());
    }
    for cf in cfs.values() {
        let has_tables =
            (0..cf.current.num_levels()).any(|l| cf.current.files(l).iter().any(|f| f.file_size > 0));
        if cf.log_number > replay.corrupted_wal && has_tables {
            return Err(Error::corruption(format!(
                "Column family inconsistency: SST file contains data beyond the point of corruption in CF {}. \
                 WAL recovery stopped at corruption point, but SST files contain newer data.",
                cf.handle.name
            )));
        }
    }
    Ok(())
}

/// RocksDB's RecoverLogFiles: replays `wals` (ascending) under `config.wal_recovery_mode`.
/// One code path for the read-write open, the read-only open and the secondary's open and
/// catch-ups (`readonly.rs`), as RocksDB's `DBImpl::Recover` serves both its read-write and
/// read-only opens. Point-in-time recovery: after a damaged record the later WALs are
/// dropped, unless one starts exactly at the next sequence number; a family whose tables
/// are newer than the damaged WAL then fails the open.
pub(super) fn replay_wals(
    ctx: &mut RecoveryCtx<'_>,
    config: &DbConfig,
    wals: &[u64],
    cfs: &mut BTreeMap<u32, CfState>,
    last_sequence: &mut u64,
    info_log: &InfoLog,
) -> Result<()> {
    let mut replay = ReplayState::default();
    for &wal in wals {
        let was_stopped = replay.stopped;
        if replay_wal(ctx, config, wal, cfs, last_sequence, info_log, &mut replay)? && !was_stopped {
            info_log.log(format_args!("Point-in-time recovery stopped at a corrupt record in WAL {wal}"));
        }
    }
    check_stop_for_corruption(&replay, cfs)
}

/// The rules WAL replay follows: `wal_recovery_mode`, except that with `paranoid_checks` off
/// RocksDB's `InitializeLogReader` gives the log reader no status to report damage into, so
/// every damaged record is skipped and replay goes on: SkipAnyCorruptedRecord's rule.
fn replay_mode(config: &DbConfig) -> crate::wal::WalRecoveryMode {
    if config.paranoid_checks {
        config.wal_recovery_mode
    } else {
        crate::wal::WalRecoveryMode::SkipAnyCorruptedRecord
    }
}

/// Replays one WAL into the memtables. Returns true when point-in-time recovery is stopped
/// after it (`replay.stopped`): a corrupt record ended it, or an earlier one did and this
/// WAL did not begin at the next sequence number (it was dropped).
fn replay_wal(
    ctx: &mut RecoveryCtx<'_>,
    config: &DbConfig,
    wal: u64,
    cfs: &mut BTreeMap<u32, CfState>,
    last_sequence: &mut u64,
    info_log: &InfoLog,
    replay: &mut ReplayState,
) -> Result<bool> {
    let path = filename::wal_file(ctx.wal_dir, wal);
    // `log_readahead_size`: RocksDB's WAL reader reads ahead that much.
    let file = crate::fs::ReadaheadSequentialFile::wrap(
        ctx.fs.new_sequential_file(&path)?,
        config.log_readahead_size,
    );
    let name = format!("{wal:06}.log");
    let mode = replay_mode(config);
    // `track_and_verify_wals`: the WAL's predecessor record is checked, unless replay is
    // stopped by an earlier corruption (RocksDB's `stop_replay_for_corruption`).
    let check = (config.track_and_verify_wals && !replay.stopped).then_some(crate::wal::PredecessorCheck {
        observed: replay.observed,
        min_wal_number_to_keep: ctx.min_wal_number,
    });
    let mut reader = LogReader::new(file, name.clone(), wal, mode).with_predecessor_check(check);
    // The starting sequence of the last batch read (RocksDB's `last_seqno_observed`).
    let mut last_seqno_observed = 0u64;
    let mut record = Vec::new();
    let mut records = 0u64;
    // A record shorter than a batch header ended point-in-time replay of this WAL.
    let mut too_small = false;
    while reader.read_record(&mut record)? {
        if record.len() < 12 {
            // RocksDB's ProcessLogRecord reports it as a corruption ("log record too small"):
            // skipped in SkipAnyCorruptedRecord, a stop in PointInTime (HandleNonOkStatus...),
            // an error in the other two modes.
            match mode {
                crate::wal::WalRecoveryMode::SkipAnyCorruptedRecord => continue,
                crate::wal::WalRecoveryMode::PointInTime => {
                    info_log.log(format_args!(
                        "{name}: dropping {} bytes; Corruption: log record too small (offset {})",
                        record.len(),
                        reader.last_record_offset()
                    ));
                    too_small = true;
                    break;
                }
                _ => {
                    return Err(Error::corruption(format!(
                        "log record too small in {name} at offset {}",
                        reader.last_record_offset()
                    )))
                }
            }
        }
        let batch = WriteBatch::from_data(&record);
        last_seqno_observed = batch.sequence();
        if replay.stopped {
            // RocksDB's MaybeReviseStopReplayForCorruption: a WAL written after an earlier
            // point-in-time recovery continues the sequence; anything else is dropped.
            if mode == crate::wal::WalRecoveryMode::PointInTime && batch.sequence() == replay.next_sequence {
                replay.stopped = false;
            } else {
                info_log.log(format_args!(
                    "{name}: dropping {} bytes (after a corrupt record in an earlier WAL)",
                    ctx.fs.file_size(&path).unwrap_or(0)
                ));
                return Ok(true);
            }
        }
        check_wal_timestamp_sizes(&batch, reader.recorded_timestamp_sizes(), cfs, &name)?;
        check_memtable_writes_allowed(&batch, wal, cfs)?;
        let mut seq = batch.sequence();
        // Entries of a prepare section go to the prepared transaction, not the memtables;
        // a commit marker inserts its transaction's entries (RocksDB's MemTableInserter
        // in recovery).
        let mut insert = |seq: &mut u64, e: &crate::batch::BatchEntry<'_>| {
            if let Some(cf) = cfs.get(&e.cf_id) {
                if wal >= cf.log_number {
                    cf.mem.put(*seq, e.value_type, e.key, e.value);
                }
            }
            *seq += 1;
        };
        let prepared = &mut ctx.prepared;
        batch.for_each_wal_record(&mut |r| prepared.replay(config, wal, r, &mut seq, &mut insert))?;
        if seq > batch.sequence() {
            *last_sequence = (*last_sequence).max(seq - 1);
        }
        replay.next_sequence = seq;
        records += 1;
        // A memtable that fills during replay goes to a level-0 table at once.
        for (id, cf) in cfs.iter_mut().filter(|_| !ctx.read_only) {
            if cf.mem.approximate_memory_usage() >= cf.handle.config().write_buffer_size {
                if let Some(t) = recovery_table(
                    ctx.fs,
                    ctx.path,
                    &cf.handle,
                    &cf.mem,
                    ctx.next_file_number,
                    config.statistics.as_deref(),
                    super::flush::FlushChecks::of(config),
                )? {
                    ctx.new_files.push((*id, t.0, t.1));
                }
                // The family's own kind of memtable (its factory, Bloom, in-place updates),
                // as RocksDB's recovery makes with `CreateNewMemtable`.
                cf.mem = cf.handle.new_memtable(0);
            }
        }
    }
    info_log.log(format_args!("Recovered {records} records from WAL {name}"));
    if reader.stopped_at_corruption() || too_small {
        replay.stopped = true;
        // A failed predecessor check names the WAL it found missing or mismatched.
        replay.corrupted_wal = reader.corrupted_log_number().unwrap_or(wal);
    } else {
        replay.observed = Some(crate::wal::PredecessorWalInfo {
            log_number: wal,
            size_bytes: ctx.fs.file_size(&path)?,
            last_seqno_recorded: last_seqno_observed,
        });
    }
    Ok(replay.stopped)
}

/// `disallow_memtable_writes`: a WAL record for such a family fails the open, as RocksDB's
/// MemTableInserter does (the option can be set between opens, not over unflushed writes).
fn check_memtable_writes_allowed(batch: &WriteBatch, wal: u64, cfs: &BTreeMap<u32, CfState>) -> Result<()> {
    if !cfs.values().any(|c| c.handle.config().disallow_memtable_writes) {
        return Ok(());
    }
    batch.for_each(&mut |e| match cfs.get(&e.cf_id) {
        Some(c) if c.handle.config().disallow_memtable_writes && wal >= c.log_number => {
            Err(Error::invalid_argument("This column family has disallow_memtable_writes=true"))
        }
        _ => Ok(()),
    })
}

/// The keys of a WAL batch carry the timestamp size the WAL recorded for their family
/// (RocksDB 8+'s record type 10; none recorded: no timestamps). Shale reads them only when
/// that is the family's size now; RocksDB would strip or pad them, Shale refuses.
fn check_wal_timestamp_sizes(
    batch: &WriteBatch,
    recorded: &[(u32, u16)],
    cfs: &BTreeMap<u32, CfState>,
    wal_name: &str,
) -> Result<()> {
    if recorded.is_empty() && cfs.values().all(|c| c.handle.icmp.timestamp_size() == 0) {
        return Ok(());
    }
    let mut checked: Vec<u32> = Vec::new();
    batch.for_each(&mut |e| {
        if checked.contains(&e.cf_id) {
            return Ok(());
        }
        checked.push(e.cf_id);
        let Some(cf) = cfs.get(&e.cf_id) else { return Ok(()) };
        let running = cf.handle.icmp.timestamp_size();
        let logged = recorded.iter().find(|(id, _)| *id == e.cf_id).map_or(0, |(_, s)| *s as usize);
        if running != logged {
            return Err(Error::not_supported(format!(
                "{wal_name} holds keys of column family {} with {logged}-byte timestamps; the family has \
                 {running}-byte ones (reconciling timestamp sizes is not supported by Shale)",
                cf.handle.name
            )));
        }
        Ok(())
    })
}

fn new_db(fs: &dyn FileSystem, path: &Path, opts: &Options) -> Result<()> {
    let edit = VersionEdit {
        comparator: Some(opts.comparator.name().to_string()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..Default::default()
    };
    ManifestWriter::create(fs, path, 1, &[edit])?;
    // The IDENTITY file is written by `setup_db_id` once recovery has read this MANIFEST.
    manifest::set_current_file(fs, path, 1, 2)
}

/// The database's id, as RocksDB's `SetupDBId` settles it: the MANIFEST's when it records
/// one (the IDENTITY file is rewritten when it is missing or says otherwise), else the
/// IDENTITY file's, else a new one written to IDENTITY.
/// With `write_file` false (`write_identity_file`) nothing is written: the id lives in the
/// MANIFEST, and the caller deletes a leftover IDENTITY once recovery has succeeded.
fn setup_db_id(
    fs: &dyn FileSystem,
    path: &Path,
    in_manifest: Option<&str>,
    write_file: bool,
) -> Result<String> {
    let write_identity = |fs: &dyn FileSystem, path: &Path, id: &str| -> Result<()> {
        if write_file {
            write_identity(fs, path, id)
        } else {
            Ok(())
        }
    };
    let p = filename::identity_file(path);
    let in_file = if fs.file_exists(&p) {
        let raw = crate::fs::read_file(fs, &p)?;
        Some(String::from_utf8_lossy(&raw).trim_end_matches('\n').to_string())
    } else {
        None
    };
    match (in_manifest, in_file) {
        (Some(m), Some(f)) if m == f => Ok(f),
        (Some(m), _) => {
            write_identity(fs, path, m)?;
            Ok(m.to_string())
        }
        (None, Some(f)) if !f.is_empty() => Ok(f),
        (None, _) => {
            let id = new_db_id();
            write_identity(fs, path, &id)?;
            Ok(id)
        }
    }
}

/// Replaces the IDENTITY file atomically (temporary file synced, renamed, directory synced).
fn write_identity(fs: &dyn FileSystem, path: &Path, id: &str) -> Result<()> {
    let tmp = path.join("IDENTITY.dbtmp");
    crate::fs::write_file_synced(fs, &tmp, format!("{id}\n").as_bytes())?;
    fs.rename(&tmp, &filename::identity_file(path))?;
    fs.sync_dir(path)
}

/// A random (version 4) UUID, as RocksDB's `GenerateUniqueId`.
fn new_db_id() -> String {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Stops background work. Called from `DB::drop` before the threads are joined.
pub(crate) fn close(inner: &Arc<DbInner>) {
    // Writes made without the WAL exist only in memtables: flush them, as RocksDB does
    // unless `avoid_flush_during_shutdown` (its CancelAllBackgroundWork).
    if inner.unpersisted.load(Ordering::Acquire) && !inner.config.avoid_flush_during_shutdown {
        if let Err(e) = inner.flush_memtables(true, None) {
            inner.info_log.log_at(crate::LogLevel::Error, format_args!("flush at close failed: {e}"));
        }
    }
    inner.run_queued_trivial_moves_at_close();
    inner.shutting_down.store(true, Ordering::Release);
    {
        let mut st = inner.lock_state();
        // RocksDB's close waits for scheduled purges; the pool is stopping, so do them here.
        if inner.purge_requested.swap(false, Ordering::AcqRel) {
            inner.purge_now(&mut st);
        }
        inner.work_cv.notify_all();
        inner.done_cv.notify_all();
        inner.manifest_cv.notify_all();
    }
    // A poisoned WAL lock has halted the database (`halt.rs`): its buffer is not written.
    if let Ok(mut wal) = inner.lock_or_halt(&inner.wal, "WAL") {
        let _ = wal.writer.flush();
    }
    inner.info_log.log(format_args!("Shutdown complete"));
}

pub(crate) fn list_cf(opts: &Options, path: &Path) -> Result<Vec<String>> {
    let config = opts.engine_db_config(path);
    let fs = config.fs.clone().unwrap_or_else(default_fs);
    let recovered = manifest::recover(&*fs, path)?;
    Ok(recovered.column_families.values().map(|c| c.name.clone()).collect())
}

pub(crate) fn destroy(opts: &Options, path: &Path) -> Result<()> {
    let config = opts.engine_db_config(path);
    let fs = config.fs.clone().unwrap_or_else(default_fs);
    if !fs.file_exists(path) {
        return Ok(());
    }
    let lock_path = filename::lock_file(path);
    let lock = fs.lock_file(&lock_path)?;
    // RocksDB's DestroyDB: the tables in every db_path too (and the path directories
    // left empty).
    for (dir, _) in config.db_paths.iter().filter(|(d, _)| d != path) {
        let Ok(children) = fs.children(dir) else { continue };
        for name in children {
            if let Some(FileType::Table(_)) = filename::parse_file_name(&name) {
                fs.remove_file(&dir.join(&name))?;
            }
        }
        let _ = fs.remove_dir(dir);
    }
    // The WAL archive, then the WAL directory when it is not the database's (RocksDB's
    // DestroyDB removes both once empty).
    let wal_dir = config.wal_dir.clone();
    let archive = filename::wal_archive_dir(&wal_dir);
    let wal_dirs = if wal_dir == path { vec![archive] } else { vec![archive, wal_dir] };
    for dir in &wal_dirs {
        let Ok(children) = fs.children(dir) else { continue };
        for name in children {
            if let Some(FileType::Wal(_)) = filename::parse_file_name(&name) {
                fs.remove_file(&dir.join(&name))?;
            }
        }
        let _ = fs.remove_dir(dir);
    }
    for name in fs.children(path)? {
        if let Some(t) = filename::parse_file_name(&name) {
            if t != FileType::Lock {
                fs.remove_file(&path.join(&name))?;
            }
        }
    }
    drop(lock);
    let _ = fs.remove_file(&lock_path);
    // RocksDB leaves a directory that still holds foreign files.
    let _ = fs.remove_dir(path);
    Ok(())
}

/// RocksDB's LOG header line "Fast CRC32 supported: ..." (`crc32c::IsFastCrc32Supported`,
/// same texts), saying what Shale's CRC32C uses: the `crc32c` crate picks the SSE4.2 or
/// ARMv8 CRC instruction at run time. (RocksDB on x86 reports whether it was compiled with
/// SSE4.2, so the same machine may print "Not supported on x86" there.)
fn fast_crc32_supported() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("sse4.2") {
            "Supported on x86"
        } else {
            "Not supported on x86"
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("crc") {
            "Supported on Arm64"
        } else {
            "Not supported on Arm64"
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "Not supported on x86"
    }
}
