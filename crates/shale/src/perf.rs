//! rust-rocksdb's `perf` module: perf levels, the `PerfContext` metrics and memory-usage
//! reports (`MemoryUsageBuilder`, `get_memory_usage_stats`: RocksDB's `MemoryUtil`). Perf
//! contexts are not counted yet (issue 14): `set_perf_stats` records the level.

use crate::db::{DBCommon, DBInner, DbInner};
use crate::error::Result;
use crate::options::Cache;
use crate::thread_mode::ThreadMode;
use crate::transactions::TransactionDB;
use crate::DB;

/// What the perf context measures, as rust-rocksdb's `PerfStatsLevel`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(i32)]
pub enum PerfStatsLevel {
    Uninitialized = 0,
    Disable,
    EnableCount,
    EnableTimeExceptForMutex,
    EnableTimeAndCPUTimeExceptForMutex,
    EnableTime,
    OutOfBound,
}

/// A perf-context counter, as rust-rocksdb's `PerfMetric`.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum PerfMetric {
    UserKeyComparisonCount = 0,
    BlockCacheHitCount = 1,
    BlockReadCount = 2,
    BlockReadByte = 3,
    BlockReadTime = 4,
    BlockChecksumTime = 5,
    BlockDecompressTime = 6,
    GetReadBytes = 7,
    MultigetReadBytes = 8,
    IterReadBytes = 9,
    InternalKeySkippedCount = 10,
    InternalDeleteSkippedCount = 11,
    InternalRecentSkippedCount = 12,
    InternalMergeCount = 13,
    GetSnapshotTime = 14,
    GetFromMemtableTime = 15,
    GetFromMemtableCount = 16,
    GetPostProcessTime = 17,
    GetFromOutputFilesTime = 18,
    SeekOnMemtableTime = 19,
    SeekOnMemtableCount = 20,
    NextOnMemtableCount = 21,
    PrevOnMemtableCount = 22,
    SeekChildSeekTime = 23,
    SeekChildSeekCount = 24,
    SeekMinHeapTime = 25,
    SeekMaxHeapTime = 26,
    SeekInternalSeekTime = 27,
    FindNextUserEntryTime = 28,
    WriteWalTime = 29,
    WriteMemtableTime = 30,
    WriteDelayTime = 31,
    WritePreAndPostProcessTime = 32,
    DbMutexLockNanos = 33,
    DbConditionWaitNanos = 34,
    MergeOperatorTimeNanos = 35,
    ReadIndexBlockNanos = 36,
    ReadFilterBlockNanos = 37,
    NewTableBlockIterNanos = 38,
    NewTableIteratorNanos = 39,
    BlockSeekNanos = 40,
    FindTableNanos = 41,
    BloomMemtableHitCount = 42,
    BloomMemtableMissCount = 43,
    BloomSstHitCount = 44,
    BloomSstMissCount = 45,
    KeyLockWaitTime = 46,
    KeyLockWaitCount = 47,
    EnvNewSequentialFileNanos = 48,
    EnvNewRandomAccessFileNanos = 49,
    EnvNewWritableFileNanos = 50,
    EnvReuseWritableFileNanos = 51,
    EnvNewRandomRwFileNanos = 52,
    EnvNewDirectoryNanos = 53,
    EnvFileExistsNanos = 54,
    EnvGetChildrenNanos = 55,
    EnvGetChildrenFileAttributesNanos = 56,
    EnvDeleteFileNanos = 57,
    EnvCreateDirNanos = 58,
    EnvCreateDirIfMissingNanos = 59,
    EnvDeleteDirNanos = 60,
    EnvGetFileSizeNanos = 61,
    EnvGetFileModificationTimeNanos = 62,
    EnvRenameFileNanos = 63,
    EnvLinkFileNanos = 64,
    EnvLockFileNanos = 65,
    EnvUnlockFileNanos = 66,
    EnvNewLoggerNanos = 67,
    TotalMetricCount = 68,
}

thread_local! {
    static PERF_LEVEL: std::cell::Cell<i32> = const { std::cell::Cell::new(PerfStatsLevel::Disable as i32) };
}

/// Sets this thread's perf level. Nothing is counted at any level until issue 14, so a
/// `PerfContext` reads zero; the level is kept for when it is.
pub fn set_perf_stats(lvl: PerfStatsLevel) {
    PERF_LEVEL.with(|l| l.set(lvl as i32));
}

/// A thread's perf counters, as rust-rocksdb's `PerfContext`.
#[derive(Default)]
pub struct PerfContext {
    _private: (),
}

impl PerfContext {
    pub fn reset(&mut self) {}

    /// The counters as text. Shale counts none yet (issue 14), so it says that.
    pub fn report(&self, exclude_zero_counters: bool) -> String {
        let _ = exclude_zero_counters;
        String::new()
    }

    /// A counter's value: 0, nothing is counted until issue 14.
    pub fn metric(&self, id: PerfMetric) -> u64 {
        let _ = id;
        0
    }
}

/// Memory use of databases and caches, as rust-rocksdb's `MemoryUsageStats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsageStats {
    pub mem_table_total: u64,
    pub mem_table_unflushed: u64,
    pub mem_table_readers_total: u64,
    pub cache_total: u64,
}

/// A memory-usage report, as rust-rocksdb's `MemoryUsage` (RocksDB's
/// `MemoryUtil::GetApproximateMemoryUsageByType`): memtables of every family of the databases
/// (`rocksdb.size-all-mem-tables`), those not yet flushed (`rocksdb.cur-size-all-mem-tables`),
/// table readers (`rocksdb.estimate-table-readers-mem`), and the usage of each distinct cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsage {
    mem_table_total: u64,
    mem_table_unflushed: u64,
    mem_table_readers_total: u64,
    cache_total: u64,
}

impl MemoryUsage {
    pub fn approximate_mem_table_total(&self) -> u64 {
        self.mem_table_total
    }

    pub fn approximate_mem_table_unflushed(&self) -> u64 {
        self.mem_table_unflushed
    }

    pub fn approximate_mem_table_readers_total(&self) -> u64 {
        self.mem_table_readers_total
    }

    pub fn approximate_cache_total(&self) -> u64 {
        self.cache_total
    }
}

/// Collects databases and caches for a memory report, as rust-rocksdb's
/// `MemoryUsageBuilder`; it borrows what it is given.
pub struct MemoryUsageBuilder<'a> {
    dbs: Vec<&'a DbInner>,
    caches: Vec<&'a Cache>,
}

impl<'a> MemoryUsageBuilder<'a> {
    pub fn new() -> Result<Self> {
        Ok(MemoryUsageBuilder { dbs: Vec::new(), caches: Vec::new() })
    }

    pub fn add_tx_db<T: ThreadMode>(&mut self, db: &'a TransactionDB<T>) {
        self.dbs.push(&db.db.inner);
    }

    pub fn add_db<T: ThreadMode, D: DBInner>(&mut self, db: &'a DBCommon<T, D>) {
        self.dbs.push(&db.inner);
    }

    pub fn add_cache(&mut self, cache: &'a Cache) {
        self.caches.push(cache);
    }

    pub fn build(&self) -> Result<MemoryUsage> {
        let mut mu = MemoryUsage {
            mem_table_total: 0,
            mem_table_unflushed: 0,
            mem_table_readers_total: 0,
            cache_total: 0,
        };
        for db in &self.dbs {
            let handles: Vec<_> = db.handles.read().iter().flatten().cloned().collect();
            for h in handles.iter().filter(|h| !h.is_dropped()) {
                let p = |name: &str| db.int_property(h, name).unwrap_or(0);
                mu.mem_table_total += p("rocksdb.size-all-mem-tables");
                mu.mem_table_unflushed += p("rocksdb.cur-size-all-mem-tables");
                mu.mem_table_readers_total += p("rocksdb.estimate-table-readers-mem");
            }
        }
        // Each cache once, however many times it was added.
        let mut seen: Vec<*const crate::cache::BlockCache> = Vec::new();
        for c in &self.caches {
            let ptr = std::sync::Arc::as_ptr(&c.0);
            if !seen.contains(&ptr) {
                seen.push(ptr);
                mu.cache_total += c.0.usage() as u64;
            }
        }
        Ok(mu)
    }
}

/// Memory use of the given databases and caches (rust-rocksdb's `get_memory_usage_stats`).
pub fn get_memory_usage_stats(dbs: Option<&[&DB]>, caches: Option<&[&Cache]>) -> Result<MemoryUsageStats> {
    let mut builder = MemoryUsageBuilder::new()?;
    for db in dbs.unwrap_or_default() {
        builder.add_db(db);
    }
    for cache in caches.unwrap_or_default() {
        builder.add_cache(cache);
    }
    let mu = builder.build()?;
    Ok(MemoryUsageStats {
        mem_table_total: mu.approximate_mem_table_total(),
        mem_table_unflushed: mu.approximate_mem_table_unflushed(),
        mem_table_readers_total: mu.approximate_mem_table_readers_total(),
        cache_total: mu.approximate_cache_total(),
    })
}
