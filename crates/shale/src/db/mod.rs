//! The database: rust-rocksdb's `DB` over Shale's engine.
//!
//! Concurrency, in one place (what guards what):
//! - `DbInner::state` (a Mutex) guards every column family's memtable list and current
//!   Version, the MANIFEST writer, file numbering, pending outputs and background-work flags.
//!   Background threads wait on `bg_cv` with it.
//! - `DbInner::writers` (a Mutex + `write_cv`) is the group-commit queue: the writer at its
//!   front is the leader and alone touches `wal` and inserts into the active memtables.
//!   Memtables are switched only by a leader (in `make_room_for_write`), so a leader's
//!   memtables stay active for its whole write.
//! - `DbInner::wal` (a Mutex) is the current WAL; only the write leader locks it.
//! - `DbInner::last_sequence` (atomic) is the last sequence readers may see; a leader stores
//!   it with Release after its memtable inserts.
//! - Each `CfHandle::super_version` (a RwLock around an Arc) is what readers take: the active
//!   memtable, the immutable ones and the current Version. Replaced under `state`.
//! - `DbInner::snapshots` (a Mutex) holds the sequence numbers of live snapshots.

mod cf;
mod common;
mod compact;
mod compat;
mod error_handler;
pub(crate) mod filename;
mod flush;
mod info_log;
mod iterator;
mod open;
mod options_writer;
mod pinnable;
mod properties;
mod read;
mod snapshot;
mod table_cache;
mod write;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use parking_lot::{Condvar, Mutex as PlMutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystemRef};
use crate::memtable::MemTable;
use crate::options::Options;
pub use crate::thread_mode::{MultiThreaded, SingleThreaded, ThreadMode};
use crate::version::manifest::ManifestWriter;
use crate::version::Version;
use crate::wal::LogWriter;

pub use cf::{ColumnFamily, ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_NAME};
pub use common::{ColumnFamilyMetaData, ColumnFamilyTtl, LiveFile, Range};
pub use iterator::{
    DBIterator, DBIteratorWithThreadMode, DBRawIterator, DBRawIteratorWithThreadMode, Direction, IteratorMode,
};
pub use pinnable::DBPinnableSlice;
pub use snapshot::{Snapshot, SnapshotWithThreadMode};

pub(crate) use cf::CfHandle;
use error_handler::ErrorHandler;
use info_log::InfoLog;
use table_cache::TableCache;
use write::WriteQueue;

/// A Shale database, as rust-rocksdb's `DBCommon`: `T` is the thread mode (how column-family
/// handles are held, see `crate::thread_mode`), `I` the kind of database behind it.
/// `DB` is `DBWithThreadMode<SingleThreaded>` (or `<MultiThreaded>` with the
/// `multi-threaded-cf` feature).
pub struct DBCommon<T: ThreadMode, I: DBInner> {
    pub(crate) inner: Arc<DbInner>,
    /// Handles by name, held as the thread mode holds them.
    pub(crate) cfs: T,
    default_cf: ColumnFamily,
    threads: Vec<JoinHandle<()>>,
    pub(crate) kind: I,
}

/// What kind of database a `DBCommon` is, as rust-rocksdb's `DBInner` trait.
pub trait DBInner: crate::thread_mode::sealed::Sealed {}

/// The plain (non-transactional) database kind, as rust-rocksdb's `DBWithThreadModeInner`.
pub struct DBWithThreadModeInner {
    _private: (),
}

impl crate::thread_mode::sealed::Sealed for DBWithThreadModeInner {}
impl DBInner for DBWithThreadModeInner {}

/// A database with the given thread mode, as rust-rocksdb's `DBWithThreadMode`.
pub type DBWithThreadMode<T> = DBCommon<T, DBWithThreadModeInner>;

/// The database type of rust-rocksdb: single-threaded column-family handles, or
/// multi-threaded ones with the `multi-threaded-cf` feature.
#[cfg(not(feature = "multi-threaded-cf"))]
pub type DB = DBWithThreadMode<SingleThreaded>;
/// The database type of rust-rocksdb: single-threaded column-family handles, or
/// multi-threaded ones with the `multi-threaded-cf` feature.
#[cfg(feature = "multi-threaded-cf")]
pub type DB = DBWithThreadMode<MultiThreaded>;

pub(crate) struct DbInner {
    pub path: PathBuf,
    pub fs: FileSystemRef,
    pub opts: Options,
    pub state: PlMutex<DbState>,
    pub bg_cv: Condvar,
    pub writers: PlMutex<WriteQueue>,
    pub write_cv: Condvar,
    pub wal: Mutex<WalState>,
    pub last_sequence: AtomicU64,
    pub shutting_down: AtomicBool,
    /// Set by a write made without the WAL: close flushes the memtables then.
    pub unpersisted: AtomicBool,
    pub table_cache: TableCache,
    pub snapshots: Mutex<BTreeMap<u64, usize>>,
    pub info_log: InfoLog,
    pub stats: Stats,
    _lock: Box<dyn FileLock>,
}

/// State guarded by `DbInner::state`.
pub(crate) struct DbState {
    pub cfs: BTreeMap<u32, CfState>,
    pub manifest: ManifestWriter,
    pub next_file_number: u64,
    /// Files being written that no Version names yet (never purged).
    pub pending_outputs: BTreeSet<u64>,
    pub max_column_family: u32,
    /// WAL numbers still on disk, oldest first (the last is the current WAL).
    pub alive_wals: VecDeque<u64>,
    /// Versions still referenced by readers; their files must stay.
    pub live_versions: Vec<Weak<Version>>,
    pub flush_running: bool,
    pub compaction_running: bool,
    pub manual_compaction_waiting: usize,
    /// The background error, its severity and recovery (RocksDB's ErrorHandler). A hard
    /// or worse error stops writes; reads continue.
    pub errors: ErrorHandler,
    pub flush_requests: usize,
    /// A MANIFEST write failed: whether its record reached the file is unknown, so the next
    /// change starts a new MANIFEST, and no table or MANIFEST is removed until then.
    pub manifest_write_failed: bool,
}

/// One column family's mutable state, guarded by `DbInner::state`.
pub(crate) struct CfState {
    pub handle: Arc<CfHandle>,
    pub mem: Arc<MemTable>,
    /// Immutable memtables, oldest first, each with the WAL number that began after it.
    pub imm: Vec<(Arc<MemTable>, u64)>,
    pub current: Arc<Version>,
    /// WALs below this number hold nothing of this column family that is not in its tables.
    pub log_number: u64,
    /// Per level: the key after which the next compaction of that level starts.
    pub compact_pointer: Vec<Vec<u8>>,
}

/// The active WAL, guarded by `DbInner::wal`.
pub(crate) struct WalState {
    pub writer: LogWriter,
    pub number: u64,
    /// Bytes written to this WAL that are not yet fsynced.
    pub unsynced: bool,
    /// The active memtable of every column family, for the write leader. Changed only with
    /// write leadership held (memtable switch, column family create/drop), under `state`.
    pub mems: Vec<(u32, Arc<MemTable>)>,
}

/// Counters behind `rocksdb.stats` and friends (atomics, updated without locks).
#[derive(Default)]
pub(crate) struct Stats {
    pub flushes: AtomicU64,
    pub flush_bytes: AtomicU64,
    pub compactions: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub write_groups: AtomicU64,
    pub writes: AtomicU64,
    pub stall_micros: AtomicU64,
}

impl DbInner {
    pub fn lock_state(&self) -> MutexGuard<'_, DbState> {
        self.state.lock()
    }

    /// A new file number, registered as a pending output until `release_output`.
    pub fn new_output_number(&self) -> u64 {
        let mut st = self.lock_state();
        let n = st.next_file_number;
        st.next_file_number += 1;
        st.pending_outputs.insert(n);
        n
    }

    pub fn cf_handle_by_id(&self, id: u32) -> Option<Arc<CfHandle>> {
        self.lock_state().cfs.get(&id).map(|c| c.handle.clone())
    }

    /// The earliest live snapshot, or None.
    pub fn snapshot_list(&self) -> Vec<u64> {
        self.snapshots.lock().map(|s| s.keys().copied().collect()).unwrap_or_default()
    }

    /// Republishes every family's active memtable to the write leader.
    pub fn refresh_active_memtables(&self, st: &DbState) {
        let mems = st.cfs.iter().map(|(id, c)| (*id, c.mem.clone())).collect();
        self.wal.lock().unwrap_or_else(|p| p.into_inner()).mems = mems;
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Opens the database at `path` with default options (it must exist).
    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, path)
    }

    /// Opens the database at `path` with only the default column family.
    pub fn open<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Self> {
        Self::open_cf_descriptors(opts, path, Vec::<ColumnFamilyDescriptor>::new())
    }

    /// Opens the database with the named column families, each with `opts`.
    pub fn open_cf<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let descs: Vec<ColumnFamilyDescriptor> =
            cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), opts.clone())).collect();
        Self::open_cf_descriptors(opts, path, descs)
    }

    /// Opens the database with column families described by name and options.
    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let db = open::open::<T>(opts, path.as_ref(), cfs.into_iter().collect())?;
        // RocksDB's LOG header states the allocator; Shale uses the system allocator (the
        // `jemalloc` feature is accepted for rust-rocksdb's sake and changes nothing).
        db.inner.info_log.log(format_args!("Jemalloc supported: 0"));
        Ok(db)
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Names of the column families recorded in the database's MANIFEST.
    pub fn list_cf<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Vec<String>> {
        open::list_cf(opts, path.as_ref())
    }

    /// Removes the database's files and directory. Fails if the database is open.
    pub fn destroy<P: AsRef<Path>>(opts: &Options, path: P) -> Result<()> {
        open::destroy(opts, path.as_ref())
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The latest sequence number, as rust-rocksdb's `latest_sequence_number`.
    pub fn latest_sequence_number(&self) -> u64 {
        self.inner.last_sequence.load(Ordering::Acquire)
    }

    /// Lets writes resume after a hard background error whose cause has gone (RocksDB's
    /// Resume): starts a new WAL, flushes every memtable, and clears the error once that is
    /// durable. Fails (and keeps writes stopped) while the cause is still there, and after a
    /// fatal or unrecoverable error, which need a reopen. See `db/error_handler.rs`.
    pub fn resume(&self) -> Result<()> {
        self.inner.recover(true)
    }

    pub(crate) fn default_handle(&self) -> &ColumnFamily {
        &self.default_cf
    }

    /// Creates a column family whatever the thread mode (used by open).
    pub(crate) fn create_cf_internal(&mut self, name: &str, opts: &Options) -> Result<()> {
        if self.cfs.get_handle(name).is_some() {
            return Err(Error::invalid_argument(format!("Column family already exists: {name}")));
        }
        let cf = self.create_cf_handle(name, opts)?;
        self.cfs.insert_handle(name, cf);
        Ok(())
    }

    pub(crate) fn create_cf_handle(&self, name: &str, opts: &Options) -> Result<ColumnFamily> {
        Ok(ColumnFamily { handle: cf::create_cf(&self.inner, name, opts)? })
    }

    pub(crate) fn check_droppable(&self, name: &str, cf: Option<&ColumnFamily>) -> Result<ColumnFamily> {
        if name == DEFAULT_COLUMN_FAMILY_NAME {
            return Err(Error::invalid_argument("Can't drop default column family"));
        }
        cf.map(ColumnFamily::clone_handle)
            .ok_or_else(|| Error::invalid_argument(format!("Invalid column family: {name}")))
    }

    pub(crate) fn drop_cf_handle(&self, cf: &ColumnFamily) -> Result<()> {
        cf::drop_cf(&self.inner, &cf.handle)
    }

    /// Drops a column family whatever the thread mode.
    pub(crate) fn drop_cf_internal(&mut self, name: &str) -> Result<()> {
        let cf = self.check_droppable(name, self.cfs.get_handle(name).as_ref())?;
        self.drop_cf_handle(&cf)?;
        self.cfs.remove_handle(name);
        Ok(())
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    pub(crate) fn from_parts(
        inner: Arc<DbInner>,
        cfs: BTreeMap<String, ColumnFamily>,
        default_cf: ColumnFamily,
        threads: Vec<JoinHandle<()>>,
    ) -> Self {
        let cfs = T::new_cf_map(cfs);
        DBCommon { inner, cfs, default_cf, threads, kind: DBWithThreadModeInner { _private: () } }
    }
}

impl<T: ThreadMode, I: DBInner> Drop for DBCommon<T, I> {
    fn drop(&mut self) {
        open::close(&self.inner);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
