//! Perf context, as RocksDB's: perf levels, the `PerfContext` metrics and the per-thread
//! counters (`Field`, RocksDB's `PerfContext` members in its order) added where RocksDB adds
//! them when the thread's perf level asks for it; see the callers of `count` and `PerfTimer`.
//! `shale::perf` re-exports this and adds the memory-usage reports, which read databases.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

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

/// `PerfMetric` (rust-rocksdb's numbering, RocksDB's C API `rocksdb_perfcontext_metric`) to
/// the field it reads.
const METRIC_FIELDS: [Field; PerfMetric::TotalMetricCount as usize] = [
    Field::UserKeyComparisonCount,
    Field::BlockCacheHitCount,
    Field::BlockReadCount,
    Field::BlockReadByte,
    Field::BlockReadTime,
    Field::BlockChecksumTime,
    Field::BlockDecompressTime,
    Field::GetReadBytes,
    Field::MultigetReadBytes,
    Field::IterReadBytes,
    Field::InternalKeySkippedCount,
    Field::InternalDeleteSkippedCount,
    Field::InternalRecentSkippedCount,
    Field::InternalMergeCount,
    Field::GetSnapshotTime,
    Field::GetFromMemtableTime,
    Field::GetFromMemtableCount,
    Field::GetPostProcessTime,
    Field::GetFromOutputFilesTime,
    Field::SeekOnMemtableTime,
    Field::SeekOnMemtableCount,
    Field::NextOnMemtableCount,
    Field::PrevOnMemtableCount,
    Field::SeekChildSeekTime,
    Field::SeekChildSeekCount,
    Field::SeekMinHeapTime,
    Field::SeekMaxHeapTime,
    Field::SeekInternalSeekTime,
    Field::FindNextUserEntryTime,
    Field::WriteWalTime,
    Field::WriteMemtableTime,
    Field::WriteDelayTime,
    Field::WritePreAndPostProcessTime,
    Field::DbMutexLockNanos,
    Field::DbConditionWaitNanos,
    Field::MergeOperatorTimeNanos,
    Field::ReadIndexBlockNanos,
    Field::ReadFilterBlockNanos,
    Field::NewTableBlockIterNanos,
    Field::NewTableIteratorNanos,
    Field::BlockSeekNanos,
    Field::FindTableNanos,
    Field::BloomMemtableHitCount,
    Field::BloomMemtableMissCount,
    Field::BloomSstHitCount,
    Field::BloomSstMissCount,
    Field::KeyLockWaitTime,
    Field::KeyLockWaitCount,
    Field::EnvNewSequentialFileNanos,
    Field::EnvNewRandomAccessFileNanos,
    Field::EnvNewWritableFileNanos,
    Field::EnvReuseWritableFileNanos,
    Field::EnvNewRandomRwFileNanos,
    Field::EnvNewDirectoryNanos,
    Field::EnvFileExistsNanos,
    Field::EnvGetChildrenNanos,
    Field::EnvGetChildrenFileAttributesNanos,
    Field::EnvDeleteFileNanos,
    Field::EnvCreateDirNanos,
    Field::EnvCreateDirIfMissingNanos,
    Field::EnvDeleteDirNanos,
    Field::EnvGetFileSizeNanos,
    Field::EnvGetFileModificationTimeNanos,
    Field::EnvRenameFileNanos,
    Field::EnvLinkFileNanos,
    Field::EnvLockFileNanos,
    Field::EnvUnlockFileNanos,
    Field::EnvNewLoggerNanos,
];

/// RocksDB 11.8.1's `PerfContext` fields, in its `DEF_PERF_CONTEXT_METRICS` order (the order
/// of `PerfContext::ToString`).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[allow(dead_code)]
#[repr(usize)]
pub enum Field {
    UserKeyComparisonCount,
    BlockCacheHitCount,
    BlockReadCount,
    BlockReadByte,
    BlockReadTime,
    BlockReadCpuTime,
    BlockCacheIndexHitCount,
    BlockCacheStandaloneHandleCount,
    BlockCacheRealHandleCount,
    IndexBlockReadCount,
    BlockCacheFilterHitCount,
    FilterBlockReadCount,
    CompressionDictBlockReadCount,
    BlockCacheIndexReadByte,
    BlockCacheFilterReadByte,
    BlockCacheCompressionDictReadByte,
    BlockCacheReadByte,
    SecondaryCacheHitCount,
    CompressedSecCacheInsertRealCount,
    CompressedSecCacheInsertDummyCount,
    CompressedSecCacheUncompressedBytes,
    CompressedSecCacheCompressedBytes,
    BlockChecksumTime,
    BlockDecompressTime,
    BlockDecompressCount,
    GetReadBytes,
    MultigetReadBytes,
    IterReadBytes,
    BlobCacheHitCount,
    BlobCacheReadByte,
    BlobReadCount,
    BlobReadByte,
    BlobReadTime,
    BlobChecksumTime,
    BlobDecompressTime,
    InternalKeySkippedCount,
    InternalDeleteSkippedCount,
    InternalRecentSkippedCount,
    InternalMergeCount,
    InternalMergePointLookupCount,
    InternalRangeDelReseekCount,
    GetSnapshotTime,
    GetFromMemtableTime,
    GetFromMemtableCount,
    GetPostProcessTime,
    GetFromOutputFilesTime,
    SeekOnMemtableTime,
    SeekOnMemtableCount,
    NextOnMemtableCount,
    PrevOnMemtableCount,
    SeekChildSeekTime,
    SeekChildSeekCount,
    SeekMinHeapTime,
    SeekMaxHeapTime,
    SeekInternalSeekTime,
    FindNextUserEntryTime,
    WriteWalTime,
    WriteMemtableTime,
    WriteDelayTime,
    WriteSchedulingFlushesCompactionsTime,
    WritePreAndPostProcessTime,
    WriteThreadWaitNanos,
    DbMutexLockNanos,
    DbConditionWaitNanos,
    MergeOperatorTimeNanos,
    ReadIndexBlockNanos,
    ReadFilterBlockNanos,
    NewTableBlockIterNanos,
    NewTableIteratorNanos,
    BlockSeekNanos,
    FindTableNanos,
    BloomMemtableHitCount,
    BloomMemtableMissCount,
    BloomSstHitCount,
    BloomSstMissCount,
    KeyLockWaitTime,
    KeyLockWaitCount,
    EnvNewSequentialFileNanos,
    EnvNewRandomAccessFileNanos,
    EnvNewWritableFileNanos,
    EnvReuseWritableFileNanos,
    EnvNewRandomRwFileNanos,
    EnvNewDirectoryNanos,
    EnvFileExistsNanos,
    EnvGetChildrenNanos,
    EnvGetChildrenFileAttributesNanos,
    EnvDeleteFileNanos,
    EnvCreateDirNanos,
    EnvCreateDirIfMissingNanos,
    EnvDeleteDirNanos,
    EnvGetFileSizeNanos,
    EnvGetFileModificationTimeNanos,
    EnvRenameFileNanos,
    EnvLinkFileNanos,
    EnvLockFileNanos,
    EnvUnlockFileNanos,
    EnvNewLoggerNanos,
    GetCpuNanos,
    IterNextCpuNanos,
    IterPrevCpuNanos,
    IterSeekCpuNanos,
    IterNextCount,
    IterPrevCount,
    IterSeekCount,
    EncryptDataNanos,
    DecryptDataNanos,
    NumberAsyncSeek,
    FileIngestionNanos,
    FileIngestionBlockingLiveWritesNanos,
    DataBlockReadByte,
    IndexBlockReadByte,
    FilterBlockReadByte,
    CompressionDictBlockReadByte,
    MetadataBlockReadByte,
    MultiscanPrepareCount,
    MultiscanBlocksPrefetched,
    MultiscanBlocksFromCache,
    MultiscanPrefetchBytes,
    MultiscanIoRequests,
    MultiscanIoCoalescedNonadjacent,
}

const FIELD_COUNT: usize = 120;

/// The fields' names, as `PerfContext::ToString` prints them.
const FIELD_NAMES: [&str; FIELD_COUNT] = [
    "user_key_comparison_count",
    "block_cache_hit_count",
    "block_read_count",
    "block_read_byte",
    "block_read_time",
    "block_read_cpu_time",
    "block_cache_index_hit_count",
    "block_cache_standalone_handle_count",
    "block_cache_real_handle_count",
    "index_block_read_count",
    "block_cache_filter_hit_count",
    "filter_block_read_count",
    "compression_dict_block_read_count",
    "block_cache_index_read_byte",
    "block_cache_filter_read_byte",
    "block_cache_compression_dict_read_byte",
    "block_cache_read_byte",
    "secondary_cache_hit_count",
    "compressed_sec_cache_insert_real_count",
    "compressed_sec_cache_insert_dummy_count",
    "compressed_sec_cache_uncompressed_bytes",
    "compressed_sec_cache_compressed_bytes",
    "block_checksum_time",
    "block_decompress_time",
    "block_decompress_count",
    "get_read_bytes",
    "multiget_read_bytes",
    "iter_read_bytes",
    "blob_cache_hit_count",
    "blob_cache_read_byte",
    "blob_read_count",
    "blob_read_byte",
    "blob_read_time",
    "blob_checksum_time",
    "blob_decompress_time",
    "internal_key_skipped_count",
    "internal_delete_skipped_count",
    "internal_recent_skipped_count",
    "internal_merge_count",
    "internal_merge_point_lookup_count",
    "internal_range_del_reseek_count",
    "get_snapshot_time",
    "get_from_memtable_time",
    "get_from_memtable_count",
    "get_post_process_time",
    "get_from_output_files_time",
    "seek_on_memtable_time",
    "seek_on_memtable_count",
    "next_on_memtable_count",
    "prev_on_memtable_count",
    "seek_child_seek_time",
    "seek_child_seek_count",
    "seek_min_heap_time",
    "seek_max_heap_time",
    "seek_internal_seek_time",
    "find_next_user_entry_time",
    "write_wal_time",
    "write_memtable_time",
    "write_delay_time",
    "write_scheduling_flushes_compactions_time",
    "write_pre_and_post_process_time",
    "write_thread_wait_nanos",
    "db_mutex_lock_nanos",
    "db_condition_wait_nanos",
    "merge_operator_time_nanos",
    "read_index_block_nanos",
    "read_filter_block_nanos",
    "new_table_block_iter_nanos",
    "new_table_iterator_nanos",
    "block_seek_nanos",
    "find_table_nanos",
    "bloom_memtable_hit_count",
    "bloom_memtable_miss_count",
    "bloom_sst_hit_count",
    "bloom_sst_miss_count",
    "key_lock_wait_time",
    "key_lock_wait_count",
    "env_new_sequential_file_nanos",
    "env_new_random_access_file_nanos",
    "env_new_writable_file_nanos",
    "env_reuse_writable_file_nanos",
    "env_new_random_rw_file_nanos",
    "env_new_directory_nanos",
    "env_file_exists_nanos",
    "env_get_children_nanos",
    "env_get_children_file_attributes_nanos",
    "env_delete_file_nanos",
    "env_create_dir_nanos",
    "env_create_dir_if_missing_nanos",
    "env_delete_dir_nanos",
    "env_get_file_size_nanos",
    "env_get_file_modification_time_nanos",
    "env_rename_file_nanos",
    "env_link_file_nanos",
    "env_lock_file_nanos",
    "env_unlock_file_nanos",
    "env_new_logger_nanos",
    "get_cpu_nanos",
    "iter_next_cpu_nanos",
    "iter_prev_cpu_nanos",
    "iter_seek_cpu_nanos",
    "iter_next_count",
    "iter_prev_count",
    "iter_seek_count",
    "encrypt_data_nanos",
    "decrypt_data_nanos",
    "number_async_seek",
    "file_ingestion_nanos",
    "file_ingestion_blocking_live_writes_nanos",
    "data_block_read_byte",
    "index_block_read_byte",
    "filter_block_read_byte",
    "compression_dict_block_read_byte",
    "metadata_block_read_byte",
    "multiscan_prepare_count",
    "multiscan_blocks_prefetched",
    "multiscan_blocks_from_cache",
    "multiscan_prefetch_bytes",
    "multiscan_io_requests",
    "multiscan_io_coalesced_nonadjacent",
];

/// Set once any thread asks for a perf level above `Disable`: until then every count and
/// timer is one relaxed load of this flag (no thread-local access), which matters on the
/// hottest paths (RocksDB counts `user_key_comparison_count` on every key comparison).
static ANY_ENABLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static PERF_LEVEL: Cell<u8> = const { Cell::new(PerfStatsLevel::Disable as u8) };
    static COUNTERS: [Cell<u64>; FIELD_COUNT] = const { [const { Cell::new(0) }; FIELD_COUNT] };
}

/// Sets this thread's perf level (RocksDB's `SetPerfLevel`): from `EnableCount` the perf
/// context counts, from `EnableTimeExceptForMutex` it also times (the clock is read only
/// then), and at `EnableTime` it times the DB mutex too.
pub fn set_perf_stats(lvl: PerfStatsLevel) {
    if lvl as u8 > PerfStatsLevel::Disable as u8 {
        ANY_ENABLED.store(true, Ordering::Relaxed);
    }
    PERF_LEVEL.with(|l| l.set(lvl as u8));
}

/// This thread's perf level.
#[inline]
pub fn level() -> u8 {
    if !ANY_ENABLED.load(Ordering::Relaxed) {
        return PerfStatsLevel::Disable as u8;
    }
    PERF_LEVEL.with(|l| l.get())
}

/// Adds `n` to this thread's counter `f` when the perf level counts (RocksDB's
/// `PERF_COUNTER_ADD`). Inlined to one test of a global flag; the rest is out of line.
#[inline(always)]
pub fn count(f: Field, n: u64) {
    if ANY_ENABLED.load(Ordering::Relaxed) {
        count_enabled(f, n);
    }
}

#[cold]
#[inline(never)]
fn count_enabled(f: Field, n: u64) {
    if PERF_LEVEL.with(|l| l.get()) >= PerfStatsLevel::EnableCount as u8 {
        add(f, n);
    }
}

#[inline]
fn add(f: Field, n: u64) {
    COUNTERS.with(|c| {
        let c = &c[f as usize];
        c.set(c.get().wrapping_add(n));
    });
}

/// True when this thread's perf level times (above `EnableCount`).
#[inline]
pub fn timing() -> bool {
    level() >= PerfStatsLevel::EnableTimeExceptForMutex as u8
}

/// Times a scope into a perf counter in nanoseconds when the perf level times (RocksDB's
/// `PERF_TIMER_GUARD`); the clock is not read otherwise.
pub struct PerfTimer {
    field: Field,
    start: Option<Instant>,
}

impl PerfTimer {
    #[inline(always)]
    pub fn new(field: Field) -> Self {
        if !ANY_ENABLED.load(Ordering::Relaxed) {
            return PerfTimer { field, start: None };
        }
        PerfTimer { field, start: timing().then(Instant::now) }
    }

    /// A timer of the DB mutex, which only `EnableTime` times (RocksDB's
    /// `PERF_CONDITIONAL_TIMER_FOR_MUTEX_GUARD`).
    #[inline(always)]
    pub fn for_mutex(field: Field) -> Self {
        if !ANY_ENABLED.load(Ordering::Relaxed) {
            return PerfTimer { field, start: None };
        }
        PerfTimer { field, start: (level() >= PerfStatsLevel::EnableTime as u8).then(Instant::now) }
    }
}

impl Drop for PerfTimer {
    #[inline]
    fn drop(&mut self) {
        if let Some(t) = self.start {
            add(self.field, t.elapsed().as_nanos() as u64);
        }
    }
}

/// The calling thread's perf counters, as rust-rocksdb's `PerfContext` (RocksDB's
/// thread-local `get_perf_context()`): what it reads and resets are the counters of the
/// thread that calls it, so it is not `Send`.
#[derive(Default)]
pub struct PerfContext {
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl PerfContext {
    /// Zeroes this thread's counters (RocksDB's `PerfContext::Reset`).
    pub fn reset(&mut self) {
        COUNTERS.with(|c| c.iter().for_each(|x| x.set(0)));
    }

    /// RocksDB's `PerfContext::ToString`: `name = value` for every counter in RocksDB's
    /// order, separated by `, ` (zeroes left out with `exclude_zero_counters`).
    pub fn report(&self, exclude_zero_counters: bool) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        COUNTERS.with(|c| {
            for (name, v) in FIELD_NAMES.iter().zip(c.iter()) {
                let v = v.get();
                if !exclude_zero_counters || v > 0 {
                    let _ = write!(s, "{name} = {v}, ");
                }
            }
        });
        let keep = s.trim_end_matches([',', ' ']).len();
        s.truncate(keep);
        s
    }

    /// A counter of this thread (0 for `TotalMetricCount`, as RocksDB's C API).
    pub fn metric(&self, id: PerfMetric) -> u64 {
        match METRIC_FIELDS.get(id as usize) {
            Some(f) => COUNTERS.with(|c| c[*f as usize].get()),
            None => 0,
        }
    }
}
