//! The database's API: rust-rocksdb's `DB` (`DBCommon` over a thread mode and a kind) and
//! the calls on it, over the engine's database (`shale_engine::db`, whose `DbInner` it
//! holds). The open path turns the user's `Options` and column-family descriptors into the
//! engine's configuration (`open_api.rs`, `readonly_api.rs`); each call turns its per-call
//! options into the engine's settings (`ReadOptions` derefs to `ReadSettings`,
//! `WriteOptions::engine`), once.

mod best_efforts;
mod column_family;
mod common;
mod compact_api;
mod compat;
mod create_cf;
pub(crate) mod dyn_options;
mod iterator;
mod open_api;
pub(crate) mod options_dump;
pub(crate) mod options_writer;
mod pinnable;
mod properties_api;
mod read_api;
mod readonly_api;
mod remote_compaction_api;
mod repair_api;
mod snapshot;
mod stats_history_api;
pub(crate) mod thread_mode;

pub(crate) use shale_engine::db::*;

pub(crate) use pinnable::pin as pinned_value;
pub(crate) use read_api::HandleOf;
pub use remote_compaction_api::open_and_compact;
pub use shale_engine::db::{
    CompactionService, DEFAULT_COLUMN_FAMILY_NAME, PERSISTENT_STATS_COLUMN_FAMILY_NAME,
};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

pub use crate::cf_descriptor::{ColumnFamilyDescriptor, ColumnFamilyTtl};
use crate::error::{Error, Result};
use crate::options::Options;
pub use column_family::ColumnFamily;
pub use common::{ColumnFamilyMetaData, LiveFile, Range};
pub use iterator::{
    DBIterator, DBIteratorWithThreadMode, DBRawIterator, DBRawIteratorWithThreadMode, Direction, IteratorMode,
};
pub use pinnable::DBPinnableSlice;
pub(crate) use shale_engine::db::iter_build::PrefixMode;
pub use snapshot::{Snapshot, SnapshotWithThreadMode};
pub use stats_history_api::StatsHistoryIterator;
pub use thread_mode::{MultiThreaded, SingleThreaded, ThreadMode};

/// A Shale database, as rust-rocksdb's `DBCommon`: `T` is the thread mode (how column-family
/// handles are held, see `thread_mode.rs`), `I` the kind of database behind it.
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
pub trait DBInner: thread_mode::sealed::Sealed {}

/// The plain (non-transactional) database kind, as rust-rocksdb's `DBWithThreadModeInner`.
pub struct DBWithThreadModeInner {
    _private: (),
}

impl thread_mode::sealed::Sealed for DBWithThreadModeInner {}
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

    /// Opens the database with the named column families. As rust-rocksdb's, every named
    /// family gets `Options::default()` (not `opts`), and so does the default family when
    /// the list names others but not it; with no names, the default family gets `opts`.
    /// To give families options, use `open_cf_descriptors`.
    pub fn open_cf<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let descs: Vec<ColumnFamilyDescriptor> =
            cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default())).collect();
        Self::open_cf_descriptors(opts, path, descs)
    }

    /// Opens the database with column families described by name and options. A list that
    /// does not name "default" opens the default family with `Options::default()` (as
    /// rust-rocksdb does); an empty list opens it with `opts`.
    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let db = open_api::open::<T>(opts, path.as_ref(), cfs.into_iter().collect())?;
        // RocksDB's LOG header states the allocator; Shale uses the system allocator (the
        // `jemalloc` feature is accepted for rust-rocksdb's sake and changes nothing).
        db.inner.info_log.log(format_args!("Jemalloc supported: 0"));
        Ok(db)
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Names of the column families recorded in the database's MANIFEST.
    pub fn list_cf<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Vec<String>> {
        open_api::list_cf(opts, path.as_ref())
    }

    /// Removes the database's files and directory. Fails if the database is open.
    pub fn destroy<P: AsRef<Path>>(opts: &Options, path: P) -> Result<()> {
        open_api::destroy(opts, path.as_ref())
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The latest sequence number, as rust-rocksdb's `latest_sequence_number`.
    pub fn latest_sequence_number(&self) -> u64 {
        self.inner.last_sequence()
    }

    /// With `enable_pipelined_write`: how many write groups began their WAL write while an
    /// earlier group was still to insert into the memtables (the pipeline's overlap). Not
    /// in rust-rocksdb; for Shale's tests and tools.
    #[doc(hidden)]
    pub fn pipelined_write_overlaps(&self) -> u64 {
        self.inner.pipelined_write_overlaps()
    }

    /// How many times a background thread's idle wait has ended (notified or at a periodic
    /// task's deadline). Not in rust-rocksdb; for Shale's tests: an idle database's threads
    /// sleep until told, or until one of RocksDB's periodic tasks is due.
    #[doc(hidden)]
    pub fn background_wakeups(&self) -> u64 {
        self.inner.bg_wakeups.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Lets writes resume after a hard background error whose cause has gone (RocksDB's
    /// Resume): starts a new WAL, flushes every memtable, and clears the error once that is
    /// durable. Fails (and keeps writes stopped) while the cause is still there, and after a
    /// fatal or unrecoverable error, which need a reopen. See `db/error_handler.rs`.
    pub fn resume(&self) -> Result<()> {
        self.inner.check_writable()?;
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
        Ok(ColumnFamily::new(create_cf::create_cf(&self.inner, name, opts)?))
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

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// The same open database as another kind (an `OptimisticTransactionDB`).
    pub(crate) fn into_kind<J: DBInner>(self, kind: J) -> DBCommon<T, J> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: every field of `me` is read exactly once and `me` is never used or
        // dropped afterwards (ManuallyDrop), so each value has exactly one owner; the old
        // kind, `DBWithThreadModeInner`, holds nothing.
        unsafe {
            DBCommon {
                inner: std::ptr::read(&me.inner),
                cfs: std::ptr::read(&me.cfs),
                default_cf: std::ptr::read(&me.default_cf),
                threads: std::ptr::read(&me.threads),
                kind,
            }
        }
    }
}

impl<T: ThreadMode, I: DBInner> Drop for DBCommon<T, I> {
    fn drop(&mut self) {
        open::close(&self.inner);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // The threads `set_db_options` added to the pools.
        for t in self.inner.take_added_threads() {
            let _ = t.join();
        }
        // `optimize_manifest_for_recovery`'s WAL markers, then
        // `verify_manifest_content_on_close`, once no background change can run (RocksDB's
        // CloseHelper order); the close of rust-rocksdb returns nothing, so a failure goes to
        // the LOG.
        if let Err(e) = self.inner.write_wal_markers_on_close() {
            self.inner.info_log.log_at(
                shale_engine::config::LogLevel::Warn,
                format_args!("optimize_manifest_for_recovery close-time write failed: {e}"),
            );
        }
        if let Err(e) = self.inner.verify_manifest_on_close() {
            self.inner.info_log.log_at(
                shale_engine::config::LogLevel::Error,
                format_args!("Unable to close MANIFEST with error -- {e}"),
            );
        }
    }
}

#[cfg(test)]
mod lock_rank_tests {
    use crate::{Options, DB};

    /// The ranks are on the DB's own locks: taking the DB mutex while holding `wal_meta`
    /// (the order reversed) fails, naming both; the documented order passes. Checked in
    /// debug builds and in CI's `ci` profile (debug assertions on for shale-base).
    #[test]
    fn db_locks_taken_out_of_order_are_caught() {
        assert!(shale_base::lock_rank::enabled(), "this test profile does not check lock ranks");
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        let db = DB::open(&o, dir.path()).unwrap();
        let inner = db.inner.clone();
        {
            let _writers = inner.writers.lock();
            let _wal = inner.lock_or_halt(&inner.wal, "WAL").unwrap();
            let _meta = inner.wal_meta.lock();
        }
        {
            let st = inner.lock_state();
            let _handles = inner.handles.read();
            let _meta = inner.wal_meta.lock();
            drop(st);
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _meta = inner.wal_meta.lock();
            let _st = inner.lock_state();
        }));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(
            msg,
            "lock order: state (the DB mutex) (rank 30) taken while this thread holds wal_meta (closed WALs, \
             active memtables) (rank 60)"
        );
        // Nothing is left held: the database works on.
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
    }
}

/// The halt of `shale_engine::db::halt` seen through the API.
#[cfg(test)]
mod halt_tests {
    use crate::{ErrorKind, Options, ReadOptions, DB};

    fn halted(e: &crate::Error) -> bool {
        e.kind() == ErrorKind::Corruption && e.to_string().contains("the snapshot list lock")
    }

    /// A thread that panicked holding the snapshot list: the flush does not go on as if no
    /// snapshot were live (which would drop the version the snapshot reads); it halts the
    /// database, and the snapshot's read returns the error rather than a wrong answer.
    #[test]
    fn a_poisoned_snapshot_list_halts_the_flush_and_the_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        {
            let db = DB::open(&o, dir.path()).unwrap();
            db.put(b"k", b"old").unwrap();
            let snap = db.snapshot();
            db.put(b"k", b"new").unwrap();
            let inner = db.inner.clone();
            let poisoner = std::thread::spawn(move || {
                let _g = inner.snapshots.lock().unwrap();
                panic!("a panic while the snapshot list is locked (on purpose)");
            });
            assert!(poisoner.join().is_err());
            assert!(db.inner.snapshots.is_poisoned());

            let e = db.flush().unwrap_err();
            assert!(halted(&e), "{e}");
            let mut ro = ReadOptions::default();
            ro.set_snapshot(&snap);
            assert!(halted(&db.get_opt(b"k", &ro).unwrap_err()));
            assert!(halted(&db.get(b"k").unwrap_err()));
            assert!(halted(&db.put(b"k", b"later").unwrap_err()));
            drop(snap);
        }
        let db = DB::open(&o, dir.path()).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    }
}

#[cfg(test)]
mod table_stats_tests {
    use crate::statistics::Ticker;
    use crate::{CompactionPri, Options, DB};
    use shale_engine::compaction::picker::{self, Busy};
    use shale_engine::version::edit::FileMetaData;

    /// The compaction picker runs under the DB mutex and reads table counts from the files'
    /// metadata, loaded when their Version was built (`file_stats.rs`), never from a table:
    /// with a table cache (max_open_files 20: 16 open) smaller than level 1's tables, a
    /// kByCompensatedSize pick (which weighs every table's counts) opens none. Debug builds
    /// panic on a table opened under the mutex (`table_cache.rs`).
    #[test]
    fn the_picker_opens_no_table_under_the_db_mutex() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        let mut o = o
            .get_options_from_string(
                "compression=kNoCompression;disable_auto_compactions=true;\
                 level_compaction_dynamic_level_bytes=false;max_bytes_for_level_base=1024;\
                 target_file_size_base=1024;block_based_table_factory={block_size=256}",
            )
            .unwrap();
        o.set_max_open_files(20);
        o.set_compaction_pri(CompactionPri::ByCompensatedSize);
        o.enable_statistics();
        let db = DB::open(&o, dir.path()).unwrap();
        for t in 0..24u32 {
            for i in 0..20u32 {
                db.put(format!("k{:07}", t * 1000 + i), vec![b'v'; 50]).unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range::<&[u8], &[u8]>(None, None);
        let inner = db.inner.clone();
        let st = inner.lock_state();
        let cf = st.cfs.values().find(|c| c.handle.name == "default").unwrap();
        let files = cf.current.files(1);
        assert!(files.len() > 20, "{} tables on level 1", files.len());
        // RocksDB's kMaxInitCount: at most 20 loaded per Version build with a bounded cache.
        let loaded = files.iter().filter(|f| f.table_stats.get().flatten().is_some()).count();
        assert!(loaded >= 20, "{loaded} of {} tables' counts loaded", files.len());
        let mut cfg = cf.handle.config().clone();
        cfg.disable_auto_compactions = false;
        let stats = |f: &FileMetaData| inner.file_stats(&cf.handle, f);
        let busy = Busy { stats: Some(&stats), ..Default::default() };
        let before = o.get_ticker_count(Ticker::NoFileOpens);
        assert!(picker::pick(&cf.current, &cfg, busy).is_some());
        assert_eq!(o.get_ticker_count(Ticker::NoFileOpens), before, "the pick opened a closed table");
        // The check itself: opening a closed table with the mutex held fails a debug build.
        if cfg!(debug_assertions) {
            let closed = files.iter().find(|f| inner.table_cache.reader_memory(f.number) == 0).unwrap();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = inner.table_cache.get(&cf.handle, closed);
            }));
            let msg = *r.unwrap_err().downcast::<String>().unwrap();
            assert!(msg.contains("opened while the DB mutex is held"), "{msg}");
        }
    }
}
