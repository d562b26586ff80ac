//! The database: `DbInner`, the engine under rust-rocksdb's `DB` (the facade, `shale::db`, holds one).
//!
//! `docs/architecture.md` draws the whole; this is what guards what, and the lock order.
//!
//! The DB layer is small owned parts, each behind its own lock:
//! - `DbInner::writers`: the group-commit queue (`write.rs`). The writer at
//!   its front is the leader; it alone appends to the WAL and inserts into memtables.
//! - `DbInner::state`, **the DB mutex**: per column family its memtable list, current
//!   Version, SuperVersion installs, job flags and write-stall condition (`CfState`); the
//!   flush and compaction queues (`scheduler.rs`); the background error; files waiting to be
//!   deleted. It is never held across file I/O: flushes, compactions, MANIFEST writes and
//!   unlinks release it (`MutexGuard::unlocked`). `work_cv` wakes the background pools
//!   ("work available"), `done_cv` wakes whoever waits for a job ("job done": stalled
//!   writers, manual flush and compaction, recovery), `manifest_cv` waits for the one
//!   MANIFEST change in flight.
//! - `DbInner::wal`: the current WAL, held across its appends and fsyncs; never taken with
//!   the DB mutex held. `DbInner::wal_meta` (a leaf): the closed WALs not yet synced, the
//!   active memtable of every family for the write leader, the families found full; never
//!   held across file I/O, so the DB mutex never waits for a WAL fsync (`wal_sync.rs`).
//! - `DbInner::versions` (`version/set.rs`): file numbers and the last sequence (atomics),
//!   pending outputs, the MANIFEST writer (its own mutex, held only while the MANIFEST is
//!   written, without the DB mutex).
//! - `DbInner::handles`: the open families by id (a RwLock readers take briefly); reads
//!   resolve a family and take its SuperVersion (`CfHandle::super_version`, an RwLock
//!   around an Arc) without the DB mutex.
//! - `DbInner::write_control`: atomics the write leader reads on its fast path (stops,
//!   delays, pending memtable switches, background error), so an ordinary write takes no
//!   DB mutex.
//! - Leaf locks: `snapshots`, the table cache, the block cache, the info log.
//!
//! Lock order (never take an earlier one while holding a later one):
//! `writers` -> `state` (DB mutex) -> `versions.manifest` -> `handles` / a family's
//! `super_version` -> leaf locks; `writers` -> `wal` -> `wal_meta` (and `wal` is never taken
//! with `state` held). The ranks in [`ranks`] put these in one order, each written on its
//! field, and debug builds check every acquisition against it (`shale_base::lock_rank`).

pub mod blob_direct;
pub mod buffered_fs;
pub mod cf;
pub mod cf_settings;
pub mod compact;
pub mod delete_files;
pub mod error_handler;
pub mod fifo_copy;
pub mod file_stats;
pub mod flush;
pub mod halt;
pub mod info_log;
pub mod ingest;
pub mod internal_stats;
pub mod iter_build;
pub mod layer_hooks;
pub mod live_files;
pub mod live_options;
pub mod local_sv;
pub mod manifest_close;
pub mod mempurge;
pub mod obsolete;
pub mod open;
pub mod open_async;
pub mod paths;
pub mod properties;
pub mod read;
pub mod readonly;
pub mod record_count;
pub mod remote_compaction;
pub mod repair;
pub mod scheduler;
pub mod seqno_time;
pub mod snapshots;
pub mod stats_history;
pub mod table_cache;
pub mod timestamps;
pub mod ttl;
pub mod twopc;
pub mod verify_output;
pub mod versions;
pub mod wal_archive;
pub mod wal_limit;
pub mod wal_precreate;
pub mod wal_sync;
pub mod wal_tracking;
pub mod write;
pub mod write_conflict;
pub mod write_controller;
pub use remote_compaction::CompactionService;
pub use shale_format::filename;

use crate::fs::{FileLock, FileSystemRef};
use crate::memtable::MemTable;
use crate::version::edit::FileMetaData;
use crate::version::set::VersionSet;
use crate::wal::LogWriter;
pub use cf::SuperVersion;
pub use cf::DEFAULT_COLUMN_FAMILY_NAME;
pub use cf::{CfHandle, CfState};
pub use error_handler::BgErrorReason;
use error_handler::ErrorHandler;
use info_log::InfoLog;
use parking_lot::{Condvar, Mutex as PlMutex, MutexGuard, RwLock};
use scheduler::JobQueues;
use shale_base::lock_rank::Ranked;
pub use stats_history::PERSISTENT_STATS_COLUMN_FAMILY_NAME;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, Weak};
use table_cache::TableCache;
use write::WriteQueue;
use write_controller::WriteController;

/// The ranks of the DB's locks (`shale_base::lock_rank`): a thread takes them in ascending
/// order only. The engine's VersionSet ranks its own two (`crate::version::set::ranks`):
/// `versions.manifest` at 40, between the DB mutex and `handles`, and
/// `versions.pending_outputs` at 95, a leaf. The families' SuperVersion locks, the caches and
/// the info log are leaves taken last and hold nothing else.
pub mod ranks {
    use shale_base::lock_rank::Rank;
    pub const WRITERS: Rank = Rank::new(10, "writers (the write queue)");
    pub const WAL: Rank = Rank::new(20, "wal (the current WAL)");
    pub const DB_MUTEX: Rank = Rank::new(30, "state (the DB mutex)");
    pub const HANDLES: Rank = Rank::new(50, "handles (the open families)");
    pub const WAL_META: Rank = Rank::new(60, "wal_meta (closed WALs, active memtables)");
    pub const COMPACTION_SERVICE: Rank = Rank::new(70, "compaction_service");
    pub const PREP: Rank = Rank::new(80, "prep (two-phase commit's prepared WALs)");
    pub const SNAPSHOTS: Rank = Rank::new(90, "snapshots");
}

pub struct DbInner {
    pub path: PathBuf,
    pub fs: FileSystemRef,
    /// The layer above's work at family changes: the OPTIONS file, the LOG's dump of a
    /// family's options (`layer_hooks.rs`). It holds the user's DB-wide options.
    pub hooks: Box<dyn layer_hooks::LayerHooks>,
    /// The DB-wide options resolved for the engine (`Options::engine_db_config`, built once
    /// in `open::new_inner`).
    pub config: crate::config::DbConfig,
    /// The DB mutex. Rank `ranks::DB_MUTEX`.
    pub state: Ranked<PlMutex<DbState>>,
    /// Where compactions that rewrite tables run instead of here (RocksDB's
    /// `Options::compaction_service`), if anywhere (`remote_compaction.rs`).
    /// Rank `ranks::COMPACTION_SERVICE`.
    pub compaction_service: Ranked<PlMutex<Option<Arc<dyn CompactionService>>>>,
    /// "Work available": background workers wait here (with `state`).
    pub work_cv: Condvar,
    /// "Job done" (or a stall condition changed): stalled writers, manual flushes and
    /// compactions and recovery wait here (with `state`).
    pub done_cv: Condvar,
    /// The MANIFEST change in flight finished (with `state`).
    pub manifest_cv: Condvar,
    /// The group-commit queue. Rank `ranks::WRITERS`.
    pub writers: Ranked<PlMutex<WriteQueue>>,
    /// The yield credits of waiting writers, one per place a writer waits (RocksDB's
    /// `AdaptationContext`s; indexed by `write::WaitSite`, `write.rs`).
    pub write_yield_credit: [std::sync::atomic::AtomicI32; 3],
    /// `enable_pipelined_write`: groups written to the WAL, waiting to insert into the
    /// memtables (`write.rs`; a leaf lock).
    pub mem_writers: write::MemWriters,
    /// The current WAL (a std lock: the write leader inserts into the memtables under it,
    /// where a user's comparator may panic; poisoned, it halts the database, `halt.rs`).
    /// Rank `ranks::WAL`.
    pub wal: Ranked<Mutex<WalState>>,
    /// The WAL list and the active memtables for the DB mutex's holders. Rank
    /// `ranks::WAL_META`.
    pub wal_meta: Ranked<PlMutex<WalMeta>>,
    pub versions: VersionSet,
    /// Open families by id (None: never existed or dropped).
    /// Rank `ranks::HANDLES`.
    pub handles: Ranked<RwLock<Vec<Option<Arc<CfHandle>>>>>,
    pub write_control: WriteController,
    pub shutting_down: AtomicBool,
    /// Set by a write made without the WAL: close flushes the memtables then.
    pub unpersisted: AtomicBool,
    /// Bottommost-files compactions (RocksDB's `oldest_snapshot_seqnum_` and
    /// `bottommost_files_mark_threshold_`, `snapshot.rs::note_oldest_snapshot`): the oldest
    /// snapshot held when one was last released (the last sequence if none was left; 0 until
    /// then), what the picker compares files' largest sequences with;
    pub oldest_snapshot_released: AtomicU64,
    /// the smallest largest sequence of a bottommost file that was not yet eligible (lowered
    /// by each pick, recomputed by each pass): a release whose oldest snapshot passes it asks
    /// a compaction thread for a pass over the families (`bottommost_recheck`).
    pub bottommost_threshold: AtomicU64,
    pub bottommost_recheck: AtomicBool,
    /// Tables wait in `DbState::obsolete_tables` for their last reader (`obsolete.rs`).
    pub has_obsolete: AtomicBool,
    /// `delete_obsolete_files_period_micros` in force (set at open, changed by
    /// `set_db_options`), and when (microseconds since the epoch) the last full scan for
    /// obsolete files was decided (`obsolete.rs`).
    pub delete_obsolete_files_period: std::sync::atomic::AtomicU64,
    /// The other mutable DB options in force (`live_options.rs`).
    pub live_options: live_options::LiveDbOptions,
    pub delete_obsolete_files_last_run: std::sync::atomic::AtomicU64,
    /// `use_adaptive_mutex`: tries of the DB mutex's spin that found it held
    /// (`lock_state`; the property `rocksdb.shale.db-mutex-spins`).
    pub db_mutex_spins: AtomicU64,
    /// A reader let go of a SuperVersion while tables waited: a flush thread purges soon.
    pub purge_requested: AtomicBool,
    pub table_cache: TableCache,
    /// Open blob files (BlobDB, `blob/reader.rs`).
    pub blob_cache: Arc<crate::blob::BlobFileCache>,
    /// Rank `ranks::SNAPSHOTS`.
    pub snapshots: Ranked<Mutex<BTreeMap<u64, usize>>>,
    pub info_log: InfoLog,
    pub stats: Stats,
    /// The sequence-number-to-time mapping (`seqno_time.rs`). A leaf lock.
    pub seqno_time: parking_lot::Mutex<seqno_time::SeqnoTime>,
    /// Read-write, read-only or secondary (`readonly.rs`): the latter two write no file.
    pub mode: readonly::DbMode,
    /// WALs holding prepare sections of two-phase commits still needed
    /// (`db/twopc.rs`). Rank `ranks::PREP`.
    pub prep: Ranked<PlMutex<twopc::PrepTracker>>,
    /// Some family has user-defined timestamps: writes check their keys (`read.rs`).
    pub ts_families: AtomicBool,
    /// The address of `WalState::mems`' first entry, for writers to prefetch their family's
    /// entry before they take the WAL lock (`write.rs`; only ever an address to prefetch,
    /// never dereferenced, so a stale value is harmless).
    pub mems_hint: std::sync::atomic::AtomicUsize,
    /// Set once, by a panic in a background job or a poisoned engine lock: the database
    /// stopped and every call returns this error (`halt.rs`).
    pub halted: std::sync::OnceLock<crate::error::Error>,
    /// The live WALs' total size against `max_total_wal_size` (`wal_limit.rs`).
    pub wal_total: wal_limit::WalTotal,
    /// When the WAL archive was last purged, seconds since the epoch (`wal_archive.rs`).
    pub wal_archive_purged_at: std::sync::atomic::AtomicU64,
    /// Throttles `WriteOptions::low_pri` writes while compaction is behind (RocksDB's
    /// `WriteController::low_pri_rate_limiter`, 1 MiB/s).
    pub low_pri_limiter: crate::rate_limiter::RateLimiter,
    /// When a quiet database last looked at its families' time-based compactions, seconds
    /// since the epoch (`DbInner::schedule_aged_compactions`).
    pub aged_trigger_at: std::sync::atomic::AtomicU64,
    /// Whether a compaction thread has taken the periodic trigger task (one does).
    pub aged_trigger_claimed: AtomicBool,
    /// How many times a background thread's idle wait ended (notified or at its deadline),
    /// counted for tests: an idle database's threads sleep until told or until a periodic
    /// task of RocksDB's is due, never on a poll (`scheduler.rs`).
    pub bg_wakeups: std::sync::atomic::AtomicU64,
    _lock: Box<dyn FileLock>,
}

/// State guarded by the DB mutex (`DbInner::state`).
pub struct DbState {
    pub cfs: BTreeMap<u32, CfState>,
    pub max_column_family: u32,
    /// WAL numbers still on disk, oldest first (the last is the current WAL).
    pub alive_wals: VecDeque<u64>,
    /// `recycle_log_file_num`: obsolete WALs kept to be reused, oldest first (RocksDB's
    /// `wal_recycle_files_`), and the lowest number that may be kept: the WAL made at open
    /// (RocksDB's `min_wal_number_to_recycle_`; older files may hold another format).
    pub wal_recycle: VecDeque<u64>,
    pub min_wal_to_recycle: u64,
    /// `track_and_verify_wals_in_manifest` (`db/wal_tracking.rs`): closed, synced WALs not
    /// yet written to the MANIFEST; the WALs the MANIFEST tracks (number -> synced size);
    /// the number below which the MANIFEST says WALs are deleted.
    pub pending_wal_additions: Vec<crate::version::edit::WalAddition>,
    pub tracked_wals: BTreeMap<u64, Option<u64>>,
    pub wals_deleted_before: u64,
    /// Flush and compaction queues and what runs (`scheduler.rs`).
    pub jobs: JobQueues,
    /// A MANIFEST change is being written (`versions.rs`); the next waits on `manifest_cv`.
    pub manifest_busy: bool,
    /// The background error, its severity and recovery (RocksDB's ErrorHandler). A hard
    /// or worse error stops writes; reads continue.
    pub errors: ErrorHandler,
    /// Tables removed from some Version, deleted once no Version holds them
    /// (`obsolete.rs`): number and a weak reference to the metadata Versions share.
    pub obsolete_tables: Vec<(u64, Weak<FileMetaData>, std::path::PathBuf)>,
    /// Blob files no Version keeps any more, deleted once no Version holds them.
    pub obsolete_blobs: Vec<(u64, Weak<crate::version::edit::BlobFileAddition>)>,
    /// Families whose write-stall condition is stop / delay (`write_controller.rs`).
    pub stopped_cfs: usize,
    pub delayed_cfs: usize,
    /// Families under compaction pressure (more compactions may run at once).
    pub speedup_cfs: usize,
    /// Holds on file deletion (`disable_file_deletions`, checkpoints and backups copying
    /// files, `live_files.rs`): while above zero no table or WAL is deleted.
    pub file_deletion_holds: usize,
    /// An atomic flush group is being written (`flush.rs`); the next waits.
    pub atomic_flush_busy: bool,
    /// A manual compaction's level change is in progress (`compact.rs::refit_level`):
    /// RocksDB refuses a second one, in any family, with NotSupported.
    pub refitting_level: bool,
    /// The job id the next purge's `table_file_deletion` events carry: the flush or
    /// compaction that just finished (`info_log.rs`); a purge of its own when None.
    pub purge_job: Option<i32>,
    /// `async_wal_precreate`: the next WAL's file, scheduled, being made or made
    /// (`wal_precreate.rs`).
    pub wal_precreate: wal_precreate::Precreate,
}

/// The active WAL, guarded by `DbInner::wal`: held across the current WAL's appends and
/// fsyncs (by the write leader, `flush_wal`, `SyncWAL`), so never taken with the DB mutex
/// held (`wal_sync.rs`).
pub struct WalState {
    pub writer: LogWriter,
    pub number: u64,
    /// Bytes written to this WAL that are not yet fsynced.
    pub unsynced: bool,
    /// Counts the writes that set `unsynced`: a sync made outside the WAL lock clears
    /// `unsynced` only if no write came meanwhile (`wal_sync.rs`).
    pub unsynced_writes: u64,
    /// The WAL directory was synced since the current WAL was created.
    pub dir_synced: bool,
}

/// What the DB mutex's holders need to know of the WALs, guarded by `DbInner::wal_meta`, a
/// leaf lock never held across file I/O (so the DB mutex never waits for a WAL fsync).
pub struct WalMeta {
    /// WALs closed by memtable switches and not yet synced, oldest first (`wal_sync.rs`).
    pub closed: Vec<wal_sync::ClosedWal>,
    /// Closed WALs found synced, for the MANIFEST (`track_and_verify_wals_in_manifest`).
    pub synced_closed: Vec<crate::version::edit::WalAddition>,
    /// `background_close_inactive_wals`: writers of inactive WALs found synced whole, kept
    /// open until the next purge closes them off the writers' path (RocksDB's
    /// `wals_to_free_`, freed by `PurgeObsoleteFiles`).
    pub to_free: Vec<Arc<parking_lot::Mutex<crate::wal::LogWriter>>>,
    /// The active memtable of every family by id, with its write buffer size, for the
    /// write leader. Changed only with write leadership held (memtable switch, column
    /// family create/drop), under the DB mutex. Shared (`Arc`) with the members of a write
    /// group inserting in parallel (`write.rs`); a change copies it if a group still holds it.
    pub mems: Arc<ActiveMems>,
    /// Families whose active memtable the leader found full; the next write switches them
    /// (RocksDB's flush scheduler).
    pub full: Vec<u32>,
}

/// What `WalMeta::set_mem` publishes of a family: its active memtable, write buffer size,
/// `disallow_memtable_writes` and direct-write blob files.
pub type ActiveMemOf = (Arc<MemTable>, usize, bool, Option<Arc<crate::blob_direct::DirectBlobWriter>>);

/// The active memtable of every family by id, with its write buffer size.
pub type ActiveMems = Vec<Option<ActiveMem>>;

/// A family's active memtable as the write leader finds it.
#[derive(Clone)]
pub struct ActiveMem {
    pub mem: Arc<MemTable>,
    /// The family's write buffer size: the memtable is full at this memory usage.
    pub limit: usize,
    /// Where an insert's lines outside the skiplist's nodes are, for prefetching them
    /// before the WAL write (`InsertHint::prefetch`).
    pub hint: crate::memtable::InsertHint,
    /// `disallow_memtable_writes`: a write to the family is refused.
    pub disallow: bool,
    /// `enable_blob_direct_write`: the family's write-path blob files (`blob_direct.rs`).
    pub direct: Option<Arc<crate::blob_direct::DirectBlobWriter>>,
}

impl WalMeta {
    pub fn set_mem(&mut self, id: u32, mem: Option<ActiveMemOf>) {
        let mem = mem.map(|(mem, limit, disallow, direct)| ActiveMem {
            hint: mem.insert_hint(),
            mem,
            limit,
            disallow,
            direct,
        });
        let i = id as usize;
        let mems = Arc::make_mut(&mut self.mems);
        if mems.len() <= i {
            mems.resize(i + 1, None);
        }
        mems[i] = mem;
    }
}

/// How many times an adaptive DB mutex is tried before the thread blocks (glibc's
/// `PTHREAD_MUTEX_ADAPTIVE_NP` spins up to 100 times by default).
const ADAPTIVE_SPINS: u32 = 100;

/// The DB mutex's guard (`DbInner::lock_state`): derefs to parking_lot's guard, so it is
/// passed where a `&mut MutexGuard<'_, DbState>` is taken and waited on with the condition
/// variables. While it lives, this thread counts as holding the DB mutex for the file system
/// layer's debug check that no file is synced under it (`shale_base::fs::db_mutex_check`);
/// [`unlocked`] releases the mutex and the count together.
pub struct DbGuard<'a>(shale_base::lock_rank::RankedGuard<MutexGuard<'a, DbState>>);

impl<'a> std::ops::Deref for DbGuard<'a> {
    type Target = MutexGuard<'a, DbState>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for DbGuard<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for DbGuard<'_> {
    fn drop(&mut self) {
        shale_base::fs::db_mutex_check::exit();
    }
}

/// `MutexGuard::unlocked` for the DB mutex: runs `f` with it released (and this thread not
/// counted as holding it, also if `f` unwinds), then takes it back.
pub fn unlocked<U>(st: &mut MutexGuard<'_, DbState>, f: impl FnOnce() -> U) -> U {
    struct Retake;
    impl Drop for Retake {
        fn drop(&mut self) {
            shale_base::fs::db_mutex_check::enter();
        }
    }
    shale_base::fs::db_mutex_check::exit();
    let _retake = Retake;
    let _rank = shale_base::lock_rank::suspend(ranks::DB_MUTEX);
    MutexGuard::unlocked(st, f)
}

/// Counters behind `rocksdb.stats` and friends (atomics, updated without locks).
pub struct Stats {
    /// When the database opened (RocksDB's `started_at_`: the uptime of the texts).
    pub started: std::time::Instant,
    /// Keys and bytes of the write groups (RocksDB's `kIntStatsNumKeysWritten`,
    /// `kIntStatsBytesWritten`), writes through the WAL and its bytes.
    pub keys_written: AtomicU64,
    pub bytes_written: AtomicU64,
    pub writes_with_wal: AtomicU64,
    pub wal_bytes: AtomicU64,
    /// Writes stopped by the write buffer manager (RocksDB's
    /// `write-buffer-manager-limit-stops`).
    pub wbm_stops: AtomicU64,
    /// The last `dbstats` text's figures (its "Interval" lines start there).
    pub db_snapshot: parking_lot::Mutex<internal_stats::DbSnapshot>,
    /// When the first snapshot at each sequence still held was taken, in seconds since the
    /// epoch (`rocksdb.oldest-snapshot-time`). A leaf lock.
    pub snapshot_times: parking_lot::Mutex<BTreeMap<u64, u64>>,
    pub flushes: AtomicU64,
    pub flush_bytes: AtomicU64,
    pub compactions: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub write_groups: AtomicU64,
    pub writes: AtomicU64,
    /// Microseconds writers spent stopped or delayed.
    pub stall_micros: AtomicU64,
    /// Writes that were delayed / stopped (RocksDB's stall counters).
    pub stall_delays: AtomicU64,
    pub stall_stops: AtomicU64,
    /// The stats history of `stats_persist_period_sec` (`stats_history.rs`). A leaf lock.
    pub history: Mutex<stats_history::StatsHistory>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            started: std::time::Instant::now(),
            keys_written: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            writes_with_wal: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            wbm_stops: AtomicU64::new(0),
            db_snapshot: Default::default(),
            snapshot_times: Default::default(),
            flushes: AtomicU64::new(0),
            flush_bytes: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            compaction_bytes_read: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            wal_syncs: AtomicU64::new(0),
            write_groups: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            stall_micros: AtomicU64::new(0),
            stall_delays: AtomicU64::new(0),
            stall_stops: AtomicU64::new(0),
            history: Default::default(),
        }
    }
}

impl Stats {
    /// The figures of `rocksdb.dbstats`.
    pub fn db_counts(&self) -> internal_stats::DbCounts {
        let g = |a: &AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        let groups = g(&self.write_groups);
        internal_stats::DbCounts {
            write_self: groups,
            write_other: g(&self.writes).saturating_sub(groups),
            keys: g(&self.keys_written),
            bytes: g(&self.bytes_written),
            wal_bytes: g(&self.wal_bytes),
            wal_synced: g(&self.wal_syncs),
            write_with_wal: g(&self.writes_with_wal),
            stall_micros: g(&self.stall_micros),
            wbm_stops: g(&self.wbm_stops),
        }
    }

    pub fn seconds_up(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

impl DbInner {
    /// Where the WALs are: `wal_dir`, or the database directory (`Options::wal_dir_of`).
    pub fn wal_dir(&self) -> PathBuf {
        self.config.wal_dir.clone()
    }

    /// The DB mutex taken as RocksDB's `use_adaptive_mutex` says: adaptive, up to
    /// [`ADAPTIVE_SPINS`] tries (a spin-loop hint between them) before blocking; otherwise
    /// blocking at once.
    fn lock_db_mutex(&self) -> shale_base::lock_rank::RankedGuard<MutexGuard<'_, DbState>> {
        if self.config.use_adaptive_mutex {
            // The order check `lock` makes (a try cannot deadlock, but the spin may end in `lock`).
            shale_base::lock_rank::check(self.state.rank());
            for _ in 0..ADAPTIVE_SPINS {
                if let Some(g) = self.state.try_lock() {
                    return g;
                }
                self.db_mutex_spins.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                std::hint::spin_loop();
            }
        }
        self.state.lock()
    }

    pub fn lock_state(&self) -> DbGuard<'_> {
        // RocksDB's db_mutex_lock_nanos (timed only at PerfStatsLevel::EnableTime).
        let _p = shale_format::perf::PerfTimer::for_mutex(shale_format::perf::Field::DbMutexLockNanos);
        // RocksDB's InstrumentedMutex: DB_MUTEX_WAIT_MICROS only above kExceptTimeForMutex.
        let mut g = if let Some(s) = self
            .config
            .statistics
            .as_deref()
            .filter(|s| s.level() > crate::statistics::rocks_level::EXCEPT_TIME_FOR_MUTEX)
        {
            let t = std::time::Instant::now();
            let g = self.lock_db_mutex();
            s.record_tick(crate::statistics::Ticker::DbMutexWaitMicros, t.elapsed().as_micros() as u64);
            g
        } else {
            self.lock_db_mutex()
        };
        // A halt (`halt.rs`) becomes the background error at the first DB mutex taken after it.
        self.note_halt(&mut g);
        shale_base::fs::db_mutex_check::enter();
        DbGuard(g)
    }

    /// The last sequence number readers may see.
    pub fn last_sequence(&self) -> u64 {
        self.versions.last_sequence()
    }

    /// A new file number, registered as a pending output until `release_output`.
    pub fn new_output_number(&self) -> u64 {
        self.versions.new_output_number()
    }

    /// The open family with this id, without the DB mutex.
    pub fn cf_handle_by_id(&self, id: u32) -> Option<Arc<CfHandle>> {
        self.handles.read().get(id as usize).and_then(|h| h.clone())
    }

    pub fn set_handle(&self, id: u32, h: Option<Arc<CfHandle>>) {
        if h.as_ref().is_some_and(|h| h.icmp.timestamp_size() > 0) {
            self.ts_families.store(true, std::sync::atomic::Ordering::Release);
        }
        let mut hs = self.handles.write();
        let i = id as usize;
        if hs.len() <= i {
            hs.resize(i + 1, None);
        }
        hs[i] = h;
    }

    /// The live snapshots' sequence numbers, ascending. A poisoned snapshot list halts the
    /// database: a flush or compaction must never go on as if no snapshot were live.
    pub fn snapshot_list(&self) -> crate::error::Result<Vec<u64>> {
        Ok(self.lock_or_halt(&self.snapshots, "snapshot list")?.keys().copied().collect())
    }

    /// Publishes family `id`'s active memtable to the write leader (None: dropped).
    pub fn publish_active_memtable(&self, id: u32, cf: Option<&CfState>) {
        let entry = cf.map(|c| {
            (
                c.mem.clone(),
                c.handle.config().write_buffer_size,
                c.handle.config().disallow_memtable_writes,
                c.handle.direct_write.clone(),
            )
        });
        let mut meta = self.wal_meta.lock();
        meta.set_mem(id, entry);
        self.mems_hint.store(meta.mems.as_ptr() as usize, std::sync::atomic::Ordering::Relaxed);
    }
}
