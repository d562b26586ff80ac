//! rust-rocksdb's `perf` module: perf levels, the `PerfContext` metrics and memory-usage
//! reports. Perf contexts and memory accounting are issue 14's: `set_perf_stats` records the
//! level, and `MemoryUsageBuilder::new` returns NotSupported.

use std::marker::PhantomData;

use crate::db::{DBCommon, DBInner};
use crate::error::{Error, Result};
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

/// A memory-usage report, as rust-rocksdb's `MemoryUsage`. Not built before issue 14: the
/// builder refuses, so no value exists.
pub struct MemoryUsage {
    never: std::convert::Infallible,
}

impl MemoryUsage {
    pub fn approximate_mem_table_total(&self) -> u64 {
        match self.never {}
    }

    pub fn approximate_mem_table_unflushed(&self) -> u64 {
        match self.never {}
    }

    pub fn approximate_mem_table_readers_total(&self) -> u64 {
        match self.never {}
    }

    pub fn approximate_cache_total(&self) -> u64 {
        match self.never {}
    }
}

/// Collects databases and caches for a memory report, as rust-rocksdb's
/// `MemoryUsageBuilder`; it borrows what it is given.
pub struct MemoryUsageBuilder<'a> {
    never: std::convert::Infallible,
    _refs: PhantomData<&'a ()>,
}

impl<'a> MemoryUsageBuilder<'a> {
    /// NotSupported until issue 14.
    pub fn new() -> Result<Self> {
        Err(Error::not_supported(
            "memory usage reports (MemoryUsageBuilder) are not supported by Shale yet (issue 14)",
        ))
    }

    pub fn add_tx_db<T: ThreadMode>(&mut self, db: &'a TransactionDB<T>) {
        let _ = db;
        match self.never {}
    }

    pub fn add_db<T: ThreadMode, D: DBInner>(&mut self, db: &'a DBCommon<T, D>) {
        let _ = db;
        match self.never {}
    }

    pub fn add_cache(&mut self, cache: &'a Cache) {
        let _ = cache;
        match self.never {}
    }

    pub fn build(&self) -> Result<MemoryUsage> {
        match self.never {}
    }
}

/// Memory use of the given databases and caches: NotSupported until issue 14.
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
