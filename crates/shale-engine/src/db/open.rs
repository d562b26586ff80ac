//! Opening (create, recover, replay WALs), closing, destroying and listing a database: the
//! engine's steps. The facade's `open_api.rs` runs them in order from the user's `Options`
//! and column-family descriptors.
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

use super::filename::{self, FileType};
use super::info_log::InfoLog;
use super::readonly::DbMode;
use super::scheduler::JobQueues;
use super::table_cache::TableCache;
use super::write_controller::WriteController;
use super::{CfState, DbInner, DbState, Stats, WalState};
use crate::batch::Batch as WriteBatch;
use crate::config::DbConfig;
use crate::error::{Error, Result};
use crate::fs::{default_fs, FileLock, FileSystem, FileSystemRef};
use crate::memtable::MemTable;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::manifest::{self, ManifestWriter};
use crate::version::set::VersionSet;
use crate::wal::{LogReader, LogWriter};
use shale_base::sys::fill_random;

/// The WAL numbers in `path`, ascending.
pub fn wal_numbers(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u64>> {
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
pub fn check_direct_io(fs: &dyn crate::fs::FileSystem, current: &Path, config: &DbConfig) -> Result<()> {
    // RocksDB opens CURRENT with `use_direct_reads |= use_direct_io_for_flush_and_compaction
    // || use_direct_io_for_compaction_reads` (mmap reads, when asked for, win over direct
    // reads).
    let direct = config.use_direct_reads
        || config.use_direct_io_for_flush_and_compaction
        || config.use_direct_io_for_compaction_reads;
    if !direct || config.allow_mmap_reads {
        return Ok(());
    }
    let direct = crate::fs::ReadFileOptions { direct: true, ..Default::default() };
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
pub fn wals_to_replay(
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
pub fn replay_floor(
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
pub fn check_some_wal(config: &DbConfig, existed: bool, wals: &[u64]) -> Result<()> {
    if config.track_and_verify_wals && existed && !config.best_efforts_recovery && wals.is_empty() {
        return Err(Error::corruption("Opening an existing DB with no WAL files"));
    }
    Ok(())
}

/// What a read-write open records about its recovery: the edits RocksDB's recovery hands
/// to its `LogAndApplyForRecovery` ([`recovery_edits`]), which `reuse_manifest_on_open`
/// appends to the MANIFEST it recovered from and `optimize_manifest_for_recovery` thins out.
pub struct RecoveryEditsCtx<'a> {
    pub recovered: &'a manifest::RecoveredManifest,
    /// The largest WAL number in the WAL directory, if any (RocksDB's `RecoverLogFiles`
    /// ran and made its edits when there was one).
    pub max_wal: Option<u64>,
    /// The families open (every one gets its recovery edit when WALs were seen).
    pub cf_ids: Vec<u32>,
    /// Per family, the tables written from the WALs and the new log number (absent when
    /// the family's memtable kept replayed data).
    pub cf_edits: BTreeMap<u32, VersionEdit>,
    /// The DB id the MANIFEST is to record (`write_dbid_to_manifest`).
    pub manifest_db_id: Option<&'a str>,
    /// Every family's memtable is empty after recovery (RocksDB's `flushed || !data_seen`).
    pub all_flushed: bool,
    /// A file of the database's directories is numbered at or above the MANIFEST's next
    /// file number (RocksDB's `MaybeUpdateNextFileNumber` then records the number).
    pub file_number_advanced: bool,
    /// The open's new WAL.
    pub wal_number: u64,
    pub next_file_number: u64,
    pub last_sequence: u64,
}

/// The edits a read-write open records, in RocksDB 11.8.1's order: the DB id when the
/// MANIFEST had none; the next file number; the tracked WALs dropped when
/// `track_and_verify_wals_in_manifest` is off; each family's tables written from the WALs
/// and new log number; then (all memtables empty) the oldest WAL to keep (not with
/// two-phase commit) and the tracked WALs below it deleted. With `optimize` (RocksDB's
/// `optimize_manifest_for_recovery`) an edit that changes nothing is left out: the next
/// file number unless a file reached it, a family's edit unless it adds tables or moves its
/// log number past the one recorded (RocksDB's `ShouldEmitPerColumnFamilyRecoveryEdit`,
/// the new log number being one past the newest WAL), the oldest WAL to keep and the WAL
/// deletion unless they advance. The last edit, when there is one, is for the caller to
/// give the next file number and last sequence.
pub fn recovery_edits(config: &DbConfig, ctx: RecoveryEditsCtx<'_>, optimize: bool) -> Vec<VersionEdit> {
    let r = ctx.recovered;
    let mut edits = Vec::new();
    if r.db_id.is_none() {
        if let Some(id) = ctx.manifest_db_id {
            edits.push(VersionEdit { db_id: Some(id.to_string()), ..Default::default() });
        }
    }
    if !optimize || ctx.file_number_advanced {
        edits.push(VersionEdit { next_file_number: Some(ctx.next_file_number), ..Default::default() });
    }
    if !config.track_and_verify_wals_in_manifest {
        if let Some(&max) = r.wals.keys().next_back() {
            edits.push(VersionEdit { wal_deletion: Some(max + 1), ..Default::default() });
        }
    }
    let mut cf_edits = ctx.cf_edits;
    if let Some(max_wal) = ctx.max_wal {
        let new_min_log = max_wal + 1;
        for id in &ctx.cf_ids {
            let e = cf_edits
                .remove(id)
                .unwrap_or_else(|| VersionEdit { column_family: *id, ..Default::default() });
            let recorded = r.column_families.get(id).map_or(0, |c| c.log_number);
            let advances = e.log_number.is_some() && new_min_log > recorded;
            if !optimize || !e.new_files.is_empty() || advances {
                edits.push(e);
            }
        }
        if ctx.all_flushed {
            let mut e = VersionEdit::default();
            if config.track_and_verify_wals_in_manifest && (!optimize || new_min_log > r.min_wal_to_keep) {
                e.wal_deletion = Some(ctx.wal_number);
            }
            if !config.allow_2pc && (!optimize || new_min_log > r.min_log_number_to_keep) {
                e.min_log_number_to_keep = Some(ctx.wal_number);
            }
            if !optimize || e != VersionEdit::default() {
                edits.push(e);
            }
        }
    }
    // Tables written without WALs to replay (none in practice) still need recording.
    edits.extend(cf_edits.into_values().filter(|e| !e.new_files.is_empty()));
    edits
}

/// `reuse_manifest_on_open` (RocksDB 11.8.1's `VersionSet::ReopenManifestForAppend` and the
/// open's `LogAndApplyForRecovery` appending to it): the MANIFEST CURRENT names is reopened
/// and `edits` ([`recovery_edits`]) appended to it, the last with the next file number and
/// last sequence (none appended when there are none). None (the caller writes a new
/// MANIFEST, as RocksDB falls back) when the file does not end at its last whole record or
/// whole atomic group (a torn tail), the file system cannot reopen it, or it is already at
/// `max_manifest_file_size` (the append would start a new one). Errors are the append's
/// and the directory sync's.
pub fn reuse_manifest(
    fs: &dyn FileSystem,
    path: &Path,
    config: &DbConfig,
    info_log: &InfoLog,
    recovered: &manifest::RecoveredManifest,
    mut edits: Vec<VersionEdit>,
    (next_file_number, last_sequence): (u64, u64),
) -> Result<Option<ManifestWriter>> {
    let r = recovered;
    let name = path.join(manifest::descriptor_file_name(r.manifest_number));
    if r.last_valid_record_end == 0 {
        return Ok(None);
    }
    match fs.file_size(&name) {
        Ok(size) if size == r.last_valid_record_end => {}
        Ok(size) => {
            info_log.log_at(
                crate::config::LogLevel::Warn,
                format_args!(
                    "reuse_manifest_on_open: physical size {size} != last valid record end {} (tail \
                     corruption?); falling back to fresh MANIFEST",
                    r.last_valid_record_end
                ),
            );
            return Ok(None);
        }
        Err(e) => {
            info_log.log_at(
                crate::config::LogLevel::Warn,
                format_args!("reuse_manifest_on_open: {e}; falling back to fresh MANIFEST"),
            );
            return Ok(None);
        }
    }
    let mut writer = match ManifestWriter::reopen(fs, path, r.manifest_number, r.last_valid_record_end) {
        Ok(w) => w,
        Err(e) => {
            info_log.log_at(
                crate::config::LogLevel::Warn,
                format_args!("Failed to reopen MANIFEST for append: {e}"),
            );
            return Ok(None);
        }
    };
    info_log.log(format_args!(
        "Reusing existing MANIFEST file: {} (valid data size: {})",
        name.display(),
        r.last_valid_record_end
    ));
    if edits.is_empty() {
        // RocksDB's LogAndApply of no edit writes nothing.
        fs.sync_dir(path)?;
        return Ok(Some(writer));
    }
    // The open's write then goes through RocksDB's `ProcessManifestWrites`, which starts a
    // new MANIFEST when the one in use is at `max_manifest_file_size` (no compacted size is
    // known for a reused MANIFEST, so that is the whole limit).
    if r.last_valid_record_end >= config.max_manifest_file_size {
        return Ok(None);
    }
    if let Some(last) = edits.last_mut() {
        last.next_file_number = Some(next_file_number);
        last.last_sequence = Some(last_sequence);
    }
    writer.append(&edits)?;
    // The open's new WAL (and tables) are named by no new CURRENT, whose directory sync
    // would have made them durable: sync the directory here.
    fs.sync_dir(path)?;
    Ok(Some(writer))
}

/// What a database needs besides its WAL to be built.
pub struct InnerParts {
    pub fs: FileSystemRef,
    pub versions: VersionSet,
    pub table_cache: TableCache,
    pub info_log: InfoLog,
    pub lock: Box<dyn FileLock>,
    pub max_column_family: u32,
    /// The file options `set_db_options` changes, shared with the file system `fs`
    /// (`buffered_fs.rs`).
    pub file_writes: Arc<super::buffered_fs::LiveFileWrites>,
}

/// The database's shared state, with no family installed yet.
pub fn new_inner(
    path: &Path,
    hooks: Box<dyn super::layer_hooks::LayerHooks>,
    config: DbConfig,
    parts: InnerParts,
    wal_writer: LogWriter,
    wal_number: u64,
    mode: DbMode,
) -> Arc<DbInner> {
    let InnerParts { fs, versions, table_cache, info_log, lock, max_column_family, file_writes } = parts;
    let (max_flushes, max_compactions) = (config.max_background_flushes, config.max_background_compactions);
    let fs_for_blobs = fs.clone();
    let write_control = WriteController::new(config.delayed_write_rate);
    let live_options = super::live_options::LiveDbOptions::new(&config, file_writes);
    let blob_stats = config.statistics.clone();
    let wal_total = super::wal_limit::WalTotal::new(&config);
    let obsolete_period = config.delete_obsolete_files_period_micros;
    Arc::new(DbInner {
        path: path.to_path_buf(),
        fs,
        hooks,
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
                wal_precreate: Default::default(),
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
                to_free: Vec::new(),
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
        delete_obsolete_files_period: std::sync::atomic::AtomicU64::new(obsolete_period),
        live_options,
        db_mutex_spins: std::sync::atomic::AtomicU64::new(0),
        delete_obsolete_files_last_run: std::sync::atomic::AtomicU64::new(super::obsolete::now_micros()),
        purge_requested: AtomicBool::new(false),
        table_cache,
        blob_cache: Arc::new(crate::blob::BlobFileCache::new(fs_for_blobs, path.to_path_buf(), blob_stats)),
        snapshots: Ranked::new(ranks::SNAPSHOTS, Mutex::new(BTreeMap::new())),
        info_log,
        stats: Stats::default(),
        seqno_time: Default::default(),
        mode,
        prep: Ranked::new(ranks::PREP, PlMutex::new(Default::default())),
        ts_families: AtomicBool::new(false),
        mems_hint: std::sync::atomic::AtomicUsize::new(0),
        halted: std::sync::OnceLock::new(),
        wal_total,
        wal_archive_purged_at: std::sync::atomic::AtomicU64::new(0),
        low_pri_limiter: crate::rate_limiter::RateLimiter::new(1 << 20, 100_000, 10, false),
        // RocksDB's trigger task starts one period after the open.
        aged_trigger_at: std::sync::atomic::AtomicU64::new(crate::compaction::picker::unix_now()),
        bg_wakeups: std::sync::atomic::AtomicU64::new(0),
        aged_trigger_claimed: AtomicBool::new(false),
        _lock: lock,
    })
}

/// Opens the live tables before the WALs are replayed, as RocksDB's `LoadTableHandlers`
/// does: all of them with `max_open_files = -1`, else up to 16 per column family, on up to
/// `max_file_opening_threads` threads (RocksDB's: each thread takes the next file; 1 or
/// less: this thread only). Opening reads each table's footer, metaindex, properties, index
/// and filter blocks, so with `paranoid_checks` (the default) a damaged one fails the open
/// with Corruption (the first such file in level order), and a missing one too
/// ("Corruption: IO error: ... No such file ..."). Without it the errors are left for the
/// reads that need the table.
pub fn load_tables(table_cache: &TableCache, cfs: &BTreeMap<u32, CfState>, config: &DbConfig) -> Result<()> {
    let limit = if config.max_open_files < 0 {
        usize::MAX
    } else {
        // A quarter of the table cache (see TableCache::new), at most 16.
        ((config.max_open_files as usize).saturating_sub(10).max(16) / 4).min(16)
    };
    let versions: Vec<_> = cfs.values().map(|cf| (&cf.handle, &*cf.current)).collect();
    open_tables(table_cache, &versions, limit, config)
}

/// Opens the tables of each `(family, version)`, at most `limit` per family (see
/// [`load_tables`]); the first error in their order.
pub fn open_tables(
    table_cache: &TableCache,
    versions: &[(&Arc<super::cf::CfHandle>, &crate::version::Version)],
    limit: usize,
    config: &DbConfig,
) -> Result<()> {
    let files: Vec<_> = versions
        .iter()
        .flat_map(|(h, v)| v.all_files().take(limit).map(move |(level, f)| (*h, level, f)))
        .collect();
    let open = |i: usize| -> Result<()> {
        let (handle, level, f) = files[i];
        match table_cache.get_at(handle, f, Some(level as usize)) {
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
pub type RecoveredTable = (u32, FileMetaData, Vec<crate::version::edit::BlobFileAddition>);

/// Writes a memtable recovered from the WALs to a level-0 table numbered from
/// `next_file_number`; with BlobDB its large values go to blob files numbered after it, as
/// RocksDB's recovery flush writes them (BlobFileCreationReason::kRecovery).
pub fn recovery_table(
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
        // The blob files a recovered WAL's blob indexes name are not registered yet (see
        // `blob_direct.rs`): a merge onto one fails as its read would.
        None,
    );
    *next_file_number = next.get();
    r
}

pub struct RecoveryCtx<'a> {
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
    /// A secondary instance only verifies that each batch's timestamp sizes match its
    /// families' (RocksDB's kVerifyConsistency); a primary or read-only open pads or strips
    /// them (kReconcileInconsistency).
    pub verify_timestamp_sizes_only: bool,
    /// The open of a repair (`DB::repair`'s replay of the WALs): a batch whose timestamp
    /// sizes differ from its families' is skipped, logged "Log #N: ignoring ...", as
    /// RocksDB's Repairer::ConvertLogToTable does (kVerifyConsistency, then ignore).
    pub repair: bool,
}

/// Where point-in-time recovery stands across WALs (RocksDB's `stop_replay_for_corruption`,
/// `next_sequence` and `corrupted_wal_number` in RecoverLogFiles).
#[derive(Debug)]
pub struct ReplayState {
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
pub fn check_stop_for_corruption(replay: &ReplayState, cfs: &BTreeMap<u32, CfState>) -> Result<()> {
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
pub fn replay_wals(
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
pub fn replay_mode(config: &DbConfig) -> crate::wal::WalRecoveryMode {
    if config.paranoid_checks {
        config.wal_recovery_mode
    } else {
        crate::wal::WalRecoveryMode::SkipAnyCorruptedRecord
    }
}

/// Replays one WAL into the memtables. Returns true when point-in-time recovery is stopped
/// after it (`replay.stopped`): a corrupt record ended it, or an earlier one did and this
/// WAL did not begin at the next sequence number (it was dropped).
pub fn replay_wal(
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
        let ts_fixes = match wal_timestamp_fixes(
            &batch,
            reader.recorded_timestamp_sizes(),
            cfs,
            ctx.verify_timestamp_sizes_only || ctx.repair,
        ) {
            Err(e) if ctx.repair => {
                info_log.log(format_args!("Log #{wal}: ignoring {e}"));
                replay.next_sequence = batch.sequence() + u64::from(batch.count());
                continue;
            }
            r => r?,
        };
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
        // A family's timestamp size, for a commit with a commit timestamp (a family not
        // open has no records inserted: 0).
        let ts_size = |id: u32| cfs.get(&id).map_or(0, |c| c.handle.icmp.timestamp_size());
        let prepared = &mut ctx.prepared;
        if ts_fixes.is_empty() {
            batch.for_each_wal_record(&mut |r| {
                prepared.replay(config, wal, r, &mut seq, &mut insert, &ts_size)
            })?;
        } else {
            // RocksDB's TimestampRecoveryHandler: the batch's keys (both ends of a range
            // deletion) get their timestamps stripped or the minimum one appended before
            // anything else sees them, prepared sections included.
            let (mut key_buf, mut end_buf) = (Vec::new(), Vec::new());
            batch.for_each_wal_record(&mut |r| match r {
                crate::batch::WalRecord::Entry(e) => match ts_fixes.iter().find(|(id, _)| *id == e.cf_id) {
                    Some((_, fix)) => {
                        let key = fix.apply(e.key, &mut key_buf, &name)?;
                        let value = if e.value_type == crate::key::ValueType::RangeDeletion {
                            fix.apply(e.value, &mut end_buf, &name)?
                        } else {
                            e.value
                        };
                        let fixed = crate::batch::BatchEntry { key, value, ..e };
                        prepared.replay(
                            config,
                            wal,
                            crate::batch::WalRecord::Entry(fixed),
                            &mut seq,
                            &mut insert,
                            &ts_size,
                        )
                    }
                    None => prepared.replay(
                        config,
                        wal,
                        crate::batch::WalRecord::Entry(e),
                        &mut seq,
                        &mut insert,
                        &ts_size,
                    ),
                },
                marker => prepared.replay(config, wal, marker, &mut seq, &mut insert, &ts_size),
            })?;
        }
        if seq > batch.sequence() {
            *last_sequence = (*last_sequence).max(seq - 1);
        }
        replay.next_sequence = seq;
        records += 1;
        // `enforce_write_buffer_manager_during_recovery` (RocksDB's InsertLogRecordToMemtable):
        // when the write buffer manager says flush, every family with replayed data is
        // flushed, not only one whose memtable is full (a read-only open flushes nothing).
        let wbm_flush = !ctx.read_only
            && config.enforce_write_buffer_manager_during_recovery
            && config.write_buffer_manager.as_ref().is_some_and(|w| w.should_flush());
        // A memtable that fills during replay goes to a level-0 table at once.
        for (id, cf) in cfs.iter_mut().filter(|_| !ctx.read_only) {
            let has_data = !cf.mem.is_empty() || cf.mem.num_range_deletes() > 0;
            if (wbm_flush && has_data)
                || cf.mem.approximate_memory_usage() >= cf.handle.config().write_buffer_size
            {
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
                // Written out: its memory stops counting as active in the write buffer
                // manager (the open's first memtable is still held by the family's
                // SuperVersion until recovery ends), as RocksDB's flushed memtable leaves it.
                cf.mem.mark_immutable();
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
pub fn check_memtable_writes_allowed(
    batch: &WriteBatch,
    wal: u64,
    cfs: &BTreeMap<u32, CfState>,
) -> Result<()> {
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

/// How a replayed WAL entry's key changes to fit its family's timestamp size now (RocksDB's
/// `RecoveryType`, util/udt_util.cc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsFix {
    /// The WAL recorded `n`-byte timestamps, the family has none: they are cut off.
    Strip(usize),
    /// The WAL recorded none, the family has `n`-byte ones: the minimum (zero) is appended.
    Pad(usize),
}

impl TsFix {
    fn apply<'a>(self, key: &'a [u8], buf: &'a mut Vec<u8>, wal_name: &str) -> Result<&'a [u8]> {
        match self {
            TsFix::Strip(n) => {
                key.get(..key.len().wrapping_sub(n)).filter(|_| key.len() >= n).ok_or_else(|| {
                    Error::corruption(format!(
                        "{wal_name}: a key of {} bytes is shorter than its {n}-byte timestamp",
                        key.len()
                    ))
                })
            }
            TsFix::Pad(n) => {
                buf.clear();
                buf.extend_from_slice(key);
                buf.resize(key.len() + n, 0);
                Ok(buf)
            }
        }
    }
}

/// RocksDB 11.8.1's `HandleWriteBatchTimestampSizeDifference` for one WAL batch: the keys
/// carry the timestamp size the WAL recorded for their family before the batch (record
/// type 10; none recorded: none). For each family of the batch still open whose size now
/// differs: strip (recorded, none now), pad (none recorded, some now), or refuse (two
/// different sizes). A secondary instance (`verify_only`) refuses any difference. Families
/// dropped since are left as they are.
pub fn wal_timestamp_fixes(
    batch: &WriteBatch,
    recorded: &[(u32, u16)],
    cfs: &BTreeMap<u32, CfState>,
    verify_only: bool,
) -> Result<Vec<(u32, TsFix)>> {
    let fix_of = |id: u32, running: usize| -> std::result::Result<Option<TsFix>, ()> {
        let logged = recorded.iter().find(|(c, _)| *c == id).map(|(_, s)| *s as usize);
        match (running, logged) {
            (0, None) => Ok(None),
            (0, Some(n)) => Ok(Some(TsFix::Strip(n))),
            (r, None) => Ok(Some(TsFix::Pad(r))),
            (r, Some(n)) if r == n => Ok(None),
            _ => Err(()),
        }
    };
    // The quick path: every open family agrees with what the WAL recorded.
    if cfs.iter().all(|(id, c)| fix_of(*id, c.handle.icmp.timestamp_size()) == Ok(None)) {
        return Ok(Vec::new());
    }
    let mut fixes: Vec<(u32, TsFix)> = Vec::new();
    let mut checked: Vec<u32> = Vec::new();
    batch.for_each(&mut |e| {
        if checked.contains(&e.cf_id) {
            return Ok(());
        }
        checked.push(e.cf_id);
        let Some(cf) = cfs.get(&e.cf_id) else { return Ok(()) };
        match fix_of(e.cf_id, cf.handle.icmp.timestamp_size()) {
            Ok(None) => Ok(()),
            Ok(Some(_)) | Err(()) if verify_only => {
                Err(Error::invalid_argument("WriteBatch contains timestamp size inconsistency."))
            }
            Ok(Some(fix)) => {
                fixes.push((e.cf_id, fix));
                Ok(())
            }
            Err(()) => Err(Error::invalid_argument(
                "WriteBatch contains unrecoverable timestamp size inconsistency.",
            )),
        }
    })?;
    Ok(fixes)
}

pub fn new_db(fs: &dyn FileSystem, path: &Path, comparator: &str, persist_udt: bool) -> Result<()> {
    let edit = VersionEdit {
        comparator: Some(comparator.to_string()),
        persist_user_defined_timestamps: Some(persist_udt),
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
pub fn setup_db_id(
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
pub fn write_identity(fs: &dyn FileSystem, path: &Path, id: &str) -> Result<()> {
    let tmp = path.join("IDENTITY.dbtmp");
    crate::fs::write_file_synced(fs, &tmp, format!("{id}\n").as_bytes())?;
    fs.rename(&tmp, &filename::identity_file(path))?;
    fs.sync_dir(path)
}

/// A random (version 4) UUID, as RocksDB's `GenerateUniqueId`.
pub fn new_db_id() -> String {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Stops background work. Called from `DB::drop` before the threads are joined.
pub fn close(inner: &Arc<DbInner>) {
    // Writes made without the WAL exist only in memtables: flush them, as RocksDB does
    // unless `avoid_flush_during_shutdown` (its CancelAllBackgroundWork).
    // Blob direct write: a family's write-path blob files reach the MANIFEST only by a
    // flush, so one is made whenever such a family is open (RocksDB 11.8.1's
    // `force_flush_for_blob_direct_write`, whatever `avoid_flush_during_shutdown`).
    let direct_write = inner.mode == super::readonly::DbMode::ReadWrite
        && inner.handles.read().iter().flatten().any(|h| h.direct_write.is_some() && !h.is_dropped());
    if direct_write
        || (inner.unpersisted.load(Ordering::Acquire) && !inner.live_options.avoid_flush_during_shutdown())
    {
        if let Err(e) = inner.flush_memtables(true, None) {
            inner.info_log.log_at(crate::config::LogLevel::Error, format_args!("flush at close failed: {e}"));
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
    // `async_io`'s read threads: what is queued finishes, then they are joined.
    inner.table_cache.read_pool.shutdown();
    inner.info_log.log(format_args!("Shutdown complete"));
}

pub fn list_cf(config: &DbConfig, path: &Path) -> Result<Vec<String>> {
    let fs = config.fs.clone().unwrap_or_else(default_fs);
    let recovered = manifest::recover(&*fs, path)?;
    Ok(recovered.column_families.values().map(|c| c.name.clone()).collect())
}

pub fn destroy(config: &DbConfig, path: &Path) -> Result<()> {
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
pub fn fast_crc32_supported() -> &'static str {
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
