//! rust-rocksdb's `statistics` module (the `Ticker` and `Histogram` names, `StatsLevel`,
//! `HistogramData`) and the statistics object behind `Options::enable_statistics`
//! (RocksDB's `StatisticsImpl`, `monitoring/statistics.cc`).
//!
//! # Counting
//!
//! A [`Statistics`] object is shared (`Arc`) by the `Options` that enabled it and every
//! database opened with them, as RocksDB's `shared_ptr<Statistics>`. Its counters are split in
//! shards (RocksDB keeps one per core): a thread adds to the shard it was given at its first
//! count (round robin), with relaxed atomic adds, so counting never takes a lock and threads
//! on different shards never write the same cache line. Reading (`get_ticker_count`,
//! `to_string`) sums the shards.
//!
//! Histograms use RocksDB's buckets (`HistogramBucketMapper`: 1, 2, then each limit 1.5 times
//! the last, kept to two significant digits, up to `u64::MAX`) and its interpolated
//! percentiles, so `P50 : ... P95 : ...` read the same for the same samples.
//!
//! # Levels
//!
//! The object keeps RocksDB 11.8.1's `StatsLevel` value ([`rocks_level`]: kDisableAll =
//! kExceptTickers = 0, kExceptHistogramOrTimers = 1, kExceptTimers = 2, kExceptDetailedTimers
//! = 3, kExceptTimeForMutex = 4, kAll = 5), and gates as RocksDB does: tickers count above
//! kExceptTickers, histograms above kExceptHistogramOrTimers, timings (the `*.micros`
//! histograms) above kExceptTimers, the DB mutex's waits above kExceptTimeForMutex. The
//! default is kExceptDetailedTimers (3), RocksDB's.
//!
//! rust-rocksdb 0.25's [`StatsLevel`] is numbered differently (DisableAll = 0, then 2..=6: it
//! skips 1), and its `set_statistics_level` hands the discriminant to RocksDB's C API
//! `rocksdb_options_set_statistics_level`, which clamps it to 0..=5 and casts it to RocksDB's
//! enum. So under rust-rocksdb `ExceptHistogramOrTimers` (2) sets RocksDB's kExceptTimers,
//! `ExceptTimers` (3) kExceptDetailedTimers, `ExceptDetailedTimers` (4) kExceptTimeForMutex,
//! and `ExceptTimeForMutex` (5) and `All` (6) both kAll; [`Statistics::set_level`] does the
//! same, and the LOG prints the value RocksDB holds.
//!
//! # Text
//!
//! `to_string` prints, as RocksDB's `StatisticsImpl::ToString`, one line per ticker
//! (`<name> COUNT : <n>`) then one per histogram
//! (`<name> P50 : %f P95 : %f P99 : %f P100 : %f COUNT : <n> SUM : <n>`), every one of
//! RocksDB 11.8.1's tickers and histograms in its order, including the 18 histograms that
//! rust-rocksdb 0.25's `Histogram` enum does not name (printed, never recorded: see
//! [`UNCOUNTED_HISTOGRAMS`]).

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::Instant;

/// A name that is not a ticker or histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameParseError;

impl std::fmt::Display for NameParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unrecognized statistic name")
    }
}

impl std::error::Error for NameParseError {}

/// How much the statistics object collects, as rust-rocksdb 0.25's `StatsLevel`, with its
/// discriminants (one above RocksDB 11.8.1's numbering past DisableAll: see the module
/// comment for the level each one sets).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(u8)]
pub enum StatsLevel {
    DisableAll = 0,
    ExceptHistogramOrTimers = 2,
    ExceptTimers,
    ExceptDetailedTimers,
    ExceptTimeForMutex,
    All,
}

/// RocksDB 11.8.1's `StatsLevel` values (`include/rocksdb/statistics.h`), which the
/// statistics object holds.
pub mod rocks_level {
    pub const DISABLE_ALL: u8 = 0;
    pub const EXCEPT_TICKERS: u8 = DISABLE_ALL;
    pub const EXCEPT_HISTOGRAM_OR_TIMERS: u8 = 1;
    pub const EXCEPT_TIMERS: u8 = 2;
    pub const EXCEPT_DETAILED_TIMERS: u8 = 3;
    pub const EXCEPT_TIME_FOR_MUTEX: u8 = 4;
    pub const ALL: u8 = 5;
}

impl StatsLevel {
    /// The RocksDB level rust-rocksdb 0.25's `set_statistics_level(self)` sets: the
    /// discriminant, clamped to RocksDB's range as `rocksdb_options_set_statistics_level`.
    pub fn rocksdb_level(self) -> u8 {
        (self as u8).min(rocks_level::ALL)
    }
}

/// A histogram's summary, as rust-rocksdb's `HistogramData` (RocksDB's `HistogramData`).
#[derive(Debug, Clone, Default)]
pub struct HistogramData {
    median: f64,
    average: f64,
    p95: f64,
    p99: f64,
    max: f64,
    min: f64,
    sum: u64,
    count: u64,
    std_dev: f64,
}

impl HistogramData {
    pub fn new() -> HistogramData {
        HistogramData::default()
    }

    pub fn median(&self) -> f64 {
        self.median
    }

    pub fn average(&self) -> f64 {
        self.average
    }

    pub fn p95(&self) -> f64 {
        self.p95
    }

    pub fn p99(&self) -> f64 {
        self.p99
    }

    pub fn max(&self) -> f64 {
        self.max
    }

    pub fn min(&self) -> f64 {
        self.min
    }

    pub fn sum(&self) -> u64 {
        self.sum
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn std_dev(&self) -> f64 {
        self.std_dev
    }
}

/// RocksDB's tickers, with their names (`name()`).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(u32)]
pub enum Ticker {
    BlockCacheMiss,
    BlockCacheHit,
    BlockCacheAdd,
    BlockCacheAddFailures,
    BlockCacheIndexMiss,
    BlockCacheIndexHit,
    BlockCacheIndexAdd,
    BlockCacheIndexBytesInsert,
    BlockCacheFilterMiss,
    BlockCacheFilterHit,
    BlockCacheFilterAdd,
    BlockCacheFilterBytesInsert,
    BlockCacheDataMiss,
    BlockCacheDataHit,
    BlockCacheDataAdd,
    BlockCacheDataBytesInsert,
    BlockCacheBytesRead,
    BlockCacheBytesWrite,
    BlockCacheCompressionDictMiss,
    BlockCacheCompressionDictHit,
    BlockCacheCompressionDictAdd,
    BlockCacheCompressionDictBytesInsert,
    BlockCacheAddRedundant,
    BlockCacheIndexAddRedundant,
    BlockCacheFilterAddRedundant,
    BlockCacheDataAddRedundant,
    BlockCacheCompressionDictAddRedundant,
    SecondaryCacheHits,
    SecondaryCacheFilterHits,
    SecondaryCacheIndexHits,
    SecondaryCacheDataHits,
    CompressedSecondaryCacheDummyHits,
    CompressedSecondaryCacheHits,
    CompressedSecondaryCachePromotions,
    CompressedSecondaryCachePromotionSkips,
    BloomFilterUseful,
    BloomFilterFullPositive,
    BloomFilterFullTruePositive,
    BloomFilterPrefixChecked,
    BloomFilterPrefixUseful,
    BloomFilterPrefixTruePositive,
    PersistentCacheHit,
    PersistentCacheMiss,
    SimBlockCacheHit,
    SimBlockCacheMiss,
    MemtableHit,
    MemtableMiss,
    GetHitL0,
    GetHitL1,
    GetHitL2AndUp,
    CompactionKeyDropNewerEntry,
    CompactionKeyDropObsolete,
    CompactionKeyDropRangeDel,
    CompactionKeyDropUser,
    CompactionRangeDelDropObsolete,
    CompactionOptimizedDelDropObsolete,
    CompactionCancelled,
    CompactionAborted,
    NumberKeysWritten,
    NumberKeysRead,
    NumberKeysUpdated,
    BytesWritten,
    BytesRead,
    NumberDbSeek,
    NumberDbNext,
    NumberDbPrev,
    NumberDbSeekFound,
    NumberDbNextFound,
    NumberDbPrevFound,
    IterBytesRead,
    NumberIterSkip,
    NumberOfReseeksInIteration,
    NoIteratorCreated,
    NoIteratorDeleted,
    NoFileOpens,
    NoFileErrors,
    StallMicros,
    DbMutexWaitMicros,
    NumberMultigetCalls,
    NumberMultigetKeysRead,
    NumberMultigetBytesRead,
    NumberMultigetKeysFound,
    NumberMergeFailures,
    GetUpdatesSinceCalls,
    WalFileSynced,
    WalFileBytes,
    WalPrecreateHit,
    WalPrecreateMiss,
    WalPrecreateWaited,
    WalPrecreateWaitMicros,
    WalPrecreateFailed,
    WriteDoneBySelf,
    WriteDoneByOther,
    WriteWithWal,
    CompactReadBytes,
    CompactWriteBytes,
    FlushWriteBytes,
    CompactReadBytesMarked,
    CompactReadBytesPeriodic,
    CompactReadBytesTtl,
    CompactWriteBytesMarked,
    CompactWriteBytesPeriodic,
    CompactWriteBytesTtl,
    NumberDirectLoadTableProperties,
    NumberSuperversionAcquires,
    NumberSuperversionReleases,
    NumberSuperversionCleanups,
    NumberBlockCompressed,
    NumberBlockDecompressed,
    BytesCompressedFrom,
    BytesCompressedTo,
    BytesCompressionBypassed,
    BytesCompressionRejected,
    NumberBlockCompressionBypassed,
    NumberBlockCompressionRejected,
    BytesDecompressedFrom,
    BytesDecompressedTo,
    MergeOperationTotalTime,
    FilterOperationTotalTime,
    CompactionCpuTotalTime,
    RowCacheHit,
    RowCacheMiss,
    ReadAmpEstimateUsefulBytes,
    ReadAmpTotalReadBytes,
    NumberRateLimiterDrains,
    RateLimiterBytesRead,
    RateLimiterBytesWrite,
    RateLimiterRequestsRead,
    RateLimiterRequestsWrite,
    RateLimiterDelayedRequestsRead,
    RateLimiterDelayedRequestsWrite,
    RateLimiterTotalWaitMicrosRead,
    RateLimiterTotalWaitMicrosWrite,
    BlobDbNumPut,
    BlobDbNumWrite,
    BlobDbNumGet,
    BlobDbNumMultiget,
    BlobDbNumSeek,
    BlobDbNumNext,
    BlobDbNumPrev,
    BlobDbNumKeysWritten,
    BlobDbNumKeysRead,
    BlobDbBytesWritten,
    BlobDbBytesRead,
    BlobDbWriteInlinedDeprecated,
    BlobDbWriteInlinedTtlDeprecated,
    BlobDbWriteBlob,
    BlobDbWriteBlobTtl,
    BlobDbBlobFileBytesWritten,
    BlobDbBlobFileBytesRead,
    BlobDbBlobFileSynced,
    BlobDbBlobIndexExpiredCount,
    BlobDbBlobIndexExpiredSize,
    BlobDbBlobIndexEvictedCount,
    BlobDbBlobIndexEvictedSize,
    BlobDbGcNumFiles,
    BlobDbGcNumNewFiles,
    BlobDbGcFailures,
    BlobDbGcNumKeysRelocated,
    BlobDbGcBytesRelocated,
    BlobDbFifoNumFilesEvicted,
    BlobDbFifoNumKeysEvicted,
    BlobDbFifoBytesEvicted,
    BlobDbCacheMiss,
    BlobDbCacheHit,
    BlobDbCacheAdd,
    BlobDbCacheAddFailures,
    BlobDbCacheBytesRead,
    BlobDbCacheBytesWrite,
    TxnPrepareMutexOverhead,
    TxnOldCommitMapMutexOverhead,
    TxnDuplicateKeyOverhead,
    TxnSnapshotMutexOverhead,
    TxnGetTryAgain,
    FilesMarkedTrash,
    FilesDeletedFromTrashQueue,
    FilesDeletedImmediately,
    ErrorHandlerBgErrorCount,
    ErrorHandlerBgIoErrorCount,
    ErrorHandlerBgRetryableIoErrorCount,
    ErrorHandlerAutoresumeCount,
    ErrorHandlerAutoresumeRetryTotalCount,
    ErrorHandlerAutoresumeSuccessCount,
    MemtablePayloadBytesAtFlush,
    MemtableGarbageBytesAtFlush,
    VerifyChecksumReadBytes,
    BackupReadBytes,
    BackupWriteBytes,
    RemoteCompactReadBytes,
    RemoteCompactWriteBytes,
    RemoteCompactResumedBytes,
    HotFileReadBytes,
    WarmFileReadBytes,
    CoolFileReadBytes,
    ColdFileReadBytes,
    IceFileReadBytes,
    HotFileReadCount,
    WarmFileReadCount,
    CoolFileReadCount,
    ColdFileReadCount,
    IceFileReadCount,
    LastLevelReadBytes,
    LastLevelReadCount,
    NonLastLevelReadBytes,
    NonLastLevelReadCount,
    LastLevelSeekFiltered,
    LastLevelSeekFilterMatch,
    LastLevelSeekData,
    LastLevelSeekDataUsefulNoFilter,
    LastLevelSeekDataUsefulFilterMatch,
    NonLastLevelSeekFiltered,
    NonLastLevelSeekFilterMatch,
    NonLastLevelSeekData,
    NonLastLevelSeekDataUsefulNoFilter,
    NonLastLevelSeekDataUsefulFilterMatch,
    BlockChecksumComputeCount,
    BlockChecksumMismatchCount,
    MultigetCoroutineCount,
    ReadAsyncMicros,
    AsyncReadErrorCount,
    TableOpenPrefetchTailMiss,
    TableOpenPrefetchTailHit,
    TimestampFilterTableChecked,
    TimestampFilterTableFiltered,
    ReadaheadTrimmed,
    FifoMaxSizeCompactions,
    FifoTtlCompactions,
    FifoChangeTemperatureCompactions,
    PrefetchBytes,
    PrefetchBytesUseful,
    PrefetchHits,
    SstFooterCorruptionCount,
    FileReadCorruptionRetryCount,
    FileReadCorruptionRetrySuccessCount,
    NumberWbwiIngest,
    SstUserDefinedIndexLoadFailCount,
    MultiscanPrepareCalls,
    MultiscanPrepareErrors,
    MultiscanBlocksPrefetched,
    MultiscanBlocksFromCache,
    MultiscanPrefetchBytes,
    MultiscanPrefetchBlocksWasted,
    MultiscanIoRequests,
    MultiscanIoCoalescedNonadjacent,
    MultiscanSeekErrors,
    PrefetchMemoryBytesGranted,
    PrefetchMemoryBytesReleased,
    PrefetchMemoryRequestsBlocked,
    ReadPathRangeTombstonesInserted,
    ReadPathRangeTombstonesDiscarded,
    FileOpenMetadataRetrieved,
    FileOpenMetadataPassed,
    ManifestValidationFailureCount,
    FlushReasonWriteBufferFull,
    FlushReasonWriteBufferManager,
    FlushReasonMemtableMaxRangeDeletions,
    AtomicFlushRequestReasonWriteBufferFull,
    AtomicFlushRequestReasonWriteBufferManager,
    AtomicFlushRequestReasonMemtableMaxRangeDeletions,
    AtomicFlushRequestReasonOther,
    CheckpointReadBytes,
    CheckpointWriteBytes,
    FileSubmitAsyncReadFallback,
}

impl Ticker {
    /// RocksDB's name of this statistic.
    pub const fn name(&self) -> &'static str {
        match self {
            Ticker::BlockCacheMiss => "rocksdb.block.cache.miss",
            Ticker::BlockCacheHit => "rocksdb.block.cache.hit",
            Ticker::BlockCacheAdd => "rocksdb.block.cache.add",
            Ticker::BlockCacheAddFailures => "rocksdb.block.cache.add.failures",
            Ticker::BlockCacheIndexMiss => "rocksdb.block.cache.index.miss",
            Ticker::BlockCacheIndexHit => "rocksdb.block.cache.index.hit",
            Ticker::BlockCacheIndexAdd => "rocksdb.block.cache.index.add",
            Ticker::BlockCacheIndexBytesInsert => "rocksdb.block.cache.index.bytes.insert",
            Ticker::BlockCacheFilterMiss => "rocksdb.block.cache.filter.miss",
            Ticker::BlockCacheFilterHit => "rocksdb.block.cache.filter.hit",
            Ticker::BlockCacheFilterAdd => "rocksdb.block.cache.filter.add",
            Ticker::BlockCacheFilterBytesInsert => "rocksdb.block.cache.filter.bytes.insert",
            Ticker::BlockCacheDataMiss => "rocksdb.block.cache.data.miss",
            Ticker::BlockCacheDataHit => "rocksdb.block.cache.data.hit",
            Ticker::BlockCacheDataAdd => "rocksdb.block.cache.data.add",
            Ticker::BlockCacheDataBytesInsert => "rocksdb.block.cache.data.bytes.insert",
            Ticker::BlockCacheBytesRead => "rocksdb.block.cache.bytes.read",
            Ticker::BlockCacheBytesWrite => "rocksdb.block.cache.bytes.write",
            Ticker::BlockCacheCompressionDictMiss => "rocksdb.block.cache.compression.dict.miss",
            Ticker::BlockCacheCompressionDictHit => "rocksdb.block.cache.compression.dict.hit",
            Ticker::BlockCacheCompressionDictAdd => "rocksdb.block.cache.compression.dict.add",
            Ticker::BlockCacheCompressionDictBytesInsert => {
                "rocksdb.block.cache.compression.dict.bytes.insert"
            }
            Ticker::BlockCacheAddRedundant => "rocksdb.block.cache.add.redundant",
            Ticker::BlockCacheIndexAddRedundant => "rocksdb.block.cache.index.add.redundant",
            Ticker::BlockCacheFilterAddRedundant => "rocksdb.block.cache.filter.add.redundant",
            Ticker::BlockCacheDataAddRedundant => "rocksdb.block.cache.data.add.redundant",
            Ticker::BlockCacheCompressionDictAddRedundant => {
                "rocksdb.block.cache.compression.dict.add.redundant"
            }
            Ticker::SecondaryCacheHits => "rocksdb.secondary.cache.hits",
            Ticker::SecondaryCacheFilterHits => "rocksdb.secondary.cache.filter.hits",
            Ticker::SecondaryCacheIndexHits => "rocksdb.secondary.cache.index.hits",
            Ticker::SecondaryCacheDataHits => "rocksdb.secondary.cache.data.hits",
            Ticker::CompressedSecondaryCacheDummyHits => "rocksdb.compressed.secondary.cache.dummy.hits",
            Ticker::CompressedSecondaryCacheHits => "rocksdb.compressed.secondary.cache.hits",
            Ticker::CompressedSecondaryCachePromotions => "rocksdb.compressed.secondary.cache.promotions",
            Ticker::CompressedSecondaryCachePromotionSkips => {
                "rocksdb.compressed.secondary.cache.promotion.skips"
            }
            Ticker::BloomFilterUseful => "rocksdb.bloom.filter.useful",
            Ticker::BloomFilterFullPositive => "rocksdb.bloom.filter.full.positive",
            Ticker::BloomFilterFullTruePositive => "rocksdb.bloom.filter.full.true.positive",
            Ticker::BloomFilterPrefixChecked => "rocksdb.bloom.filter.prefix.checked",
            Ticker::BloomFilterPrefixUseful => "rocksdb.bloom.filter.prefix.useful",
            Ticker::BloomFilterPrefixTruePositive => "rocksdb.bloom.filter.prefix.true.positive",
            Ticker::PersistentCacheHit => "rocksdb.persistent.cache.hit",
            Ticker::PersistentCacheMiss => "rocksdb.persistent.cache.miss",
            Ticker::SimBlockCacheHit => "rocksdb.sim.block.cache.hit",
            Ticker::SimBlockCacheMiss => "rocksdb.sim.block.cache.miss",
            Ticker::MemtableHit => "rocksdb.memtable.hit",
            Ticker::MemtableMiss => "rocksdb.memtable.miss",
            Ticker::GetHitL0 => "rocksdb.l0.hit",
            Ticker::GetHitL1 => "rocksdb.l1.hit",
            Ticker::GetHitL2AndUp => "rocksdb.l2andup.hit",
            Ticker::CompactionKeyDropNewerEntry => "rocksdb.compaction.key.drop.new",
            Ticker::CompactionKeyDropObsolete => "rocksdb.compaction.key.drop.obsolete",
            Ticker::CompactionKeyDropRangeDel => "rocksdb.compaction.key.drop.range_del",
            Ticker::CompactionKeyDropUser => "rocksdb.compaction.key.drop.user",
            Ticker::CompactionRangeDelDropObsolete => "rocksdb.compaction.range_del.drop.obsolete",
            Ticker::CompactionOptimizedDelDropObsolete => "rocksdb.compaction.optimized.del.drop.obsolete",
            Ticker::CompactionCancelled => "rocksdb.compaction.cancelled",
            Ticker::CompactionAborted => "rocksdb.compaction.aborted",
            Ticker::NumberKeysWritten => "rocksdb.number.keys.written",
            Ticker::NumberKeysRead => "rocksdb.number.keys.read",
            Ticker::NumberKeysUpdated => "rocksdb.number.keys.updated",
            Ticker::BytesWritten => "rocksdb.bytes.written",
            Ticker::BytesRead => "rocksdb.bytes.read",
            Ticker::NumberDbSeek => "rocksdb.number.db.seek",
            Ticker::NumberDbNext => "rocksdb.number.db.next",
            Ticker::NumberDbPrev => "rocksdb.number.db.prev",
            Ticker::NumberDbSeekFound => "rocksdb.number.db.seek.found",
            Ticker::NumberDbNextFound => "rocksdb.number.db.next.found",
            Ticker::NumberDbPrevFound => "rocksdb.number.db.prev.found",
            Ticker::IterBytesRead => "rocksdb.db.iter.bytes.read",
            Ticker::NumberIterSkip => "rocksdb.number.iter.skip",
            Ticker::NumberOfReseeksInIteration => "rocksdb.number.reseeks.iteration",
            Ticker::NoIteratorCreated => "rocksdb.num.iterator.created",
            Ticker::NoIteratorDeleted => "rocksdb.num.iterator.deleted",
            Ticker::NoFileOpens => "rocksdb.no.file.opens",
            Ticker::NoFileErrors => "rocksdb.no.file.errors",
            Ticker::StallMicros => "rocksdb.stall.micros",
            Ticker::DbMutexWaitMicros => "rocksdb.db.mutex.wait.micros",
            Ticker::NumberMultigetCalls => "rocksdb.number.multiget.get",
            Ticker::NumberMultigetKeysRead => "rocksdb.number.multiget.keys.read",
            Ticker::NumberMultigetBytesRead => "rocksdb.number.multiget.bytes.read",
            Ticker::NumberMultigetKeysFound => "rocksdb.number.multiget.keys.found",
            Ticker::NumberMergeFailures => "rocksdb.number.merge.failures",
            Ticker::GetUpdatesSinceCalls => "rocksdb.getupdatessince.calls",
            Ticker::WalFileSynced => "rocksdb.wal.synced",
            Ticker::WalFileBytes => "rocksdb.wal.bytes",
            Ticker::WalPrecreateHit => "rocksdb.wal.precreate.hit",
            Ticker::WalPrecreateMiss => "rocksdb.wal.precreate.miss",
            Ticker::WalPrecreateWaited => "rocksdb.wal.precreate.waited",
            Ticker::WalPrecreateWaitMicros => "rocksdb.wal.precreate.wait.micros",
            Ticker::WalPrecreateFailed => "rocksdb.wal.precreate.failed",
            Ticker::WriteDoneBySelf => "rocksdb.write.self",
            Ticker::WriteDoneByOther => "rocksdb.write.other",
            Ticker::WriteWithWal => "rocksdb.write.wal",
            Ticker::CompactReadBytes => "rocksdb.compact.read.bytes",
            Ticker::CompactWriteBytes => "rocksdb.compact.write.bytes",
            Ticker::FlushWriteBytes => "rocksdb.flush.write.bytes",
            Ticker::CompactReadBytesMarked => "rocksdb.compact.read.marked.bytes",
            Ticker::CompactReadBytesPeriodic => "rocksdb.compact.read.periodic.bytes",
            Ticker::CompactReadBytesTtl => "rocksdb.compact.read.ttl.bytes",
            Ticker::CompactWriteBytesMarked => "rocksdb.compact.write.marked.bytes",
            Ticker::CompactWriteBytesPeriodic => "rocksdb.compact.write.periodic.bytes",
            Ticker::CompactWriteBytesTtl => "rocksdb.compact.write.ttl.bytes",
            Ticker::NumberDirectLoadTableProperties => "rocksdb.number.direct.load.table.properties",
            Ticker::NumberSuperversionAcquires => "rocksdb.number.superversion_acquires",
            Ticker::NumberSuperversionReleases => "rocksdb.number.superversion_releases",
            Ticker::NumberSuperversionCleanups => "rocksdb.number.superversion_cleanups",
            Ticker::NumberBlockCompressed => "rocksdb.number.block.compressed",
            Ticker::NumberBlockDecompressed => "rocksdb.number.block.decompressed",
            Ticker::BytesCompressedFrom => "rocksdb.bytes.compressed.from",
            Ticker::BytesCompressedTo => "rocksdb.bytes.compressed.to",
            Ticker::BytesCompressionBypassed => "rocksdb.bytes.compression_bypassed",
            Ticker::BytesCompressionRejected => "rocksdb.bytes.compression.rejected",
            Ticker::NumberBlockCompressionBypassed => "rocksdb.number.block_compression_bypassed",
            Ticker::NumberBlockCompressionRejected => "rocksdb.number.block_compression_rejected",
            Ticker::BytesDecompressedFrom => "rocksdb.bytes.decompressed.from",
            Ticker::BytesDecompressedTo => "rocksdb.bytes.decompressed.to",
            Ticker::MergeOperationTotalTime => "rocksdb.merge.operation.time.nanos",
            Ticker::FilterOperationTotalTime => "rocksdb.filter.operation.time.nanos",
            Ticker::CompactionCpuTotalTime => "rocksdb.compaction.total.time.cpu_micros",
            Ticker::RowCacheHit => "rocksdb.row.cache.hit",
            Ticker::RowCacheMiss => "rocksdb.row.cache.miss",
            Ticker::ReadAmpEstimateUsefulBytes => "rocksdb.read.amp.estimate.useful.bytes",
            Ticker::ReadAmpTotalReadBytes => "rocksdb.read.amp.total.read.bytes",
            Ticker::NumberRateLimiterDrains => "rocksdb.number.rate_limiter.drains",
            Ticker::RateLimiterBytesRead => "rocksdb.rate.limiter.bytes.read",
            Ticker::RateLimiterBytesWrite => "rocksdb.rate.limiter.bytes.write",
            Ticker::RateLimiterRequestsRead => "rocksdb.rate.limiter.requests.read",
            Ticker::RateLimiterRequestsWrite => "rocksdb.rate.limiter.requests.write",
            Ticker::RateLimiterDelayedRequestsRead => "rocksdb.rate.limiter.delayed.requests.read",
            Ticker::RateLimiterDelayedRequestsWrite => "rocksdb.rate.limiter.delayed.requests.write",
            Ticker::RateLimiterTotalWaitMicrosRead => "rocksdb.rate.limiter.total.wait.micros.read",
            Ticker::RateLimiterTotalWaitMicrosWrite => "rocksdb.rate.limiter.total.wait.micros.write",
            Ticker::BlobDbNumPut => "rocksdb.blobdb.num.put",
            Ticker::BlobDbNumWrite => "rocksdb.blobdb.num.write",
            Ticker::BlobDbNumGet => "rocksdb.blobdb.num.get",
            Ticker::BlobDbNumMultiget => "rocksdb.blobdb.num.multiget",
            Ticker::BlobDbNumSeek => "rocksdb.blobdb.num.seek",
            Ticker::BlobDbNumNext => "rocksdb.blobdb.num.next",
            Ticker::BlobDbNumPrev => "rocksdb.blobdb.num.prev",
            Ticker::BlobDbNumKeysWritten => "rocksdb.blobdb.num.keys.written",
            Ticker::BlobDbNumKeysRead => "rocksdb.blobdb.num.keys.read",
            Ticker::BlobDbBytesWritten => "rocksdb.blobdb.bytes.written",
            Ticker::BlobDbBytesRead => "rocksdb.blobdb.bytes.read",
            Ticker::BlobDbWriteInlinedDeprecated => "rocksdb.blobdb.write.inlined",
            Ticker::BlobDbWriteInlinedTtlDeprecated => "rocksdb.blobdb.write.inlined.ttl",
            Ticker::BlobDbWriteBlob => "rocksdb.blobdb.write.blob",
            Ticker::BlobDbWriteBlobTtl => "rocksdb.blobdb.write.blob.ttl",
            Ticker::BlobDbBlobFileBytesWritten => "rocksdb.blobdb.blob.file.bytes.written",
            Ticker::BlobDbBlobFileBytesRead => "rocksdb.blobdb.blob.file.bytes.read",
            Ticker::BlobDbBlobFileSynced => "rocksdb.blobdb.blob.file.synced",
            Ticker::BlobDbBlobIndexExpiredCount => "rocksdb.blobdb.blob.index.expired.count",
            Ticker::BlobDbBlobIndexExpiredSize => "rocksdb.blobdb.blob.index.expired.size",
            Ticker::BlobDbBlobIndexEvictedCount => "rocksdb.blobdb.blob.index.evicted.count",
            Ticker::BlobDbBlobIndexEvictedSize => "rocksdb.blobdb.blob.index.evicted.size",
            Ticker::BlobDbGcNumFiles => "rocksdb.blobdb.gc.num.files",
            Ticker::BlobDbGcNumNewFiles => "rocksdb.blobdb.gc.num.new.files",
            Ticker::BlobDbGcFailures => "rocksdb.blobdb.gc.failures",
            Ticker::BlobDbGcNumKeysRelocated => "rocksdb.blobdb.gc.num.keys.relocated",
            Ticker::BlobDbGcBytesRelocated => "rocksdb.blobdb.gc.bytes.relocated",
            Ticker::BlobDbFifoNumFilesEvicted => "rocksdb.blobdb.fifo.num.files.evicted",
            Ticker::BlobDbFifoNumKeysEvicted => "rocksdb.blobdb.fifo.num.keys.evicted",
            Ticker::BlobDbFifoBytesEvicted => "rocksdb.blobdb.fifo.bytes.evicted",
            Ticker::BlobDbCacheMiss => "rocksdb.blobdb.cache.miss",
            Ticker::BlobDbCacheHit => "rocksdb.blobdb.cache.hit",
            Ticker::BlobDbCacheAdd => "rocksdb.blobdb.cache.add",
            Ticker::BlobDbCacheAddFailures => "rocksdb.blobdb.cache.add.failures",
            Ticker::BlobDbCacheBytesRead => "rocksdb.blobdb.cache.bytes.read",
            Ticker::BlobDbCacheBytesWrite => "rocksdb.blobdb.cache.bytes.write",
            Ticker::TxnPrepareMutexOverhead => "rocksdb.txn.overhead.mutex.prepare",
            Ticker::TxnOldCommitMapMutexOverhead => "rocksdb.txn.overhead.mutex.old.commit.map",
            Ticker::TxnDuplicateKeyOverhead => "rocksdb.txn.overhead.duplicate.key",
            Ticker::TxnSnapshotMutexOverhead => "rocksdb.txn.overhead.mutex.snapshot",
            Ticker::TxnGetTryAgain => "rocksdb.txn.get.tryagain",
            Ticker::FilesMarkedTrash => "rocksdb.files.marked.trash",
            Ticker::FilesDeletedFromTrashQueue => "rocksdb.files.marked.trash.deleted",
            Ticker::FilesDeletedImmediately => "rocksdb.files.deleted.immediately",
            Ticker::ErrorHandlerBgErrorCount => "rocksdb.error.handler.bg.error.count",
            Ticker::ErrorHandlerBgIoErrorCount => "rocksdb.error.handler.bg.io.error.count",
            Ticker::ErrorHandlerBgRetryableIoErrorCount => {
                "rocksdb.error.handler.bg.retryable.io.error.count"
            }
            Ticker::ErrorHandlerAutoresumeCount => "rocksdb.error.handler.autoresume.count",
            Ticker::ErrorHandlerAutoresumeRetryTotalCount => {
                "rocksdb.error.handler.autoresume.retry.total.count"
            }
            Ticker::ErrorHandlerAutoresumeSuccessCount => "rocksdb.error.handler.autoresume.success.count",
            Ticker::MemtablePayloadBytesAtFlush => "rocksdb.memtable.payload.bytes.at.flush",
            Ticker::MemtableGarbageBytesAtFlush => "rocksdb.memtable.garbage.bytes.at.flush",
            Ticker::VerifyChecksumReadBytes => "rocksdb.verify_checksum.read.bytes",
            Ticker::BackupReadBytes => "rocksdb.backup.read.bytes",
            Ticker::BackupWriteBytes => "rocksdb.backup.write.bytes",
            Ticker::RemoteCompactReadBytes => "rocksdb.remote.compact.read.bytes",
            Ticker::RemoteCompactWriteBytes => "rocksdb.remote.compact.write.bytes",
            Ticker::RemoteCompactResumedBytes => "rocksdb.remote.compact.resumed.bytes",
            Ticker::HotFileReadBytes => "rocksdb.hot.file.read.bytes",
            Ticker::WarmFileReadBytes => "rocksdb.warm.file.read.bytes",
            Ticker::CoolFileReadBytes => "rocksdb.cool.file.read.bytes",
            Ticker::ColdFileReadBytes => "rocksdb.cold.file.read.bytes",
            Ticker::IceFileReadBytes => "rocksdb.ice.file.read.bytes",
            Ticker::HotFileReadCount => "rocksdb.hot.file.read.count",
            Ticker::WarmFileReadCount => "rocksdb.warm.file.read.count",
            Ticker::CoolFileReadCount => "rocksdb.cool.file.read.count",
            Ticker::ColdFileReadCount => "rocksdb.cold.file.read.count",
            Ticker::IceFileReadCount => "rocksdb.ice.file.read.count",
            Ticker::LastLevelReadBytes => "rocksdb.last.level.read.bytes",
            Ticker::LastLevelReadCount => "rocksdb.last.level.read.count",
            Ticker::NonLastLevelReadBytes => "rocksdb.non.last.level.read.bytes",
            Ticker::NonLastLevelReadCount => "rocksdb.non.last.level.read.count",
            Ticker::LastLevelSeekFiltered => "rocksdb.last.level.seek.filtered",
            Ticker::LastLevelSeekFilterMatch => "rocksdb.last.level.seek.filter.match",
            Ticker::LastLevelSeekData => "rocksdb.last.level.seek.data",
            Ticker::LastLevelSeekDataUsefulNoFilter => "rocksdb.last.level.seek.data.useful.no.filter",
            Ticker::LastLevelSeekDataUsefulFilterMatch => "rocksdb.last.level.seek.data.useful.filter.match",
            Ticker::NonLastLevelSeekFiltered => "rocksdb.non.last.level.seek.filtered",
            Ticker::NonLastLevelSeekFilterMatch => "rocksdb.non.last.level.seek.filter.match",
            Ticker::NonLastLevelSeekData => "rocksdb.non.last.level.seek.data",
            Ticker::NonLastLevelSeekDataUsefulNoFilter => "rocksdb.non.last.level.seek.data.useful.no.filter",
            Ticker::NonLastLevelSeekDataUsefulFilterMatch => {
                "rocksdb.non.last.level.seek.data.useful.filter.match"
            }
            Ticker::BlockChecksumComputeCount => "rocksdb.block.checksum.compute.count",
            Ticker::BlockChecksumMismatchCount => "rocksdb.block.checksum.mismatch.count",
            Ticker::MultigetCoroutineCount => "rocksdb.multiget.coroutine.count",
            Ticker::ReadAsyncMicros => "rocksdb.read.async.micros",
            Ticker::AsyncReadErrorCount => "rocksdb.async.read.error.count",
            Ticker::TableOpenPrefetchTailMiss => "rocksdb.table.open.prefetch.tail.miss",
            Ticker::TableOpenPrefetchTailHit => "rocksdb.table.open.prefetch.tail.hit",
            Ticker::TimestampFilterTableChecked => "rocksdb.timestamp.filter.table.checked",
            Ticker::TimestampFilterTableFiltered => "rocksdb.timestamp.filter.table.filtered",
            Ticker::ReadaheadTrimmed => "rocksdb.readahead.trimmed",
            Ticker::FifoMaxSizeCompactions => "rocksdb.fifo.max.size.compactions",
            Ticker::FifoTtlCompactions => "rocksdb.fifo.ttl.compactions",
            Ticker::FifoChangeTemperatureCompactions => "rocksdb.fifo.change_temperature.compactions",
            Ticker::PrefetchBytes => "rocksdb.prefetch.bytes",
            Ticker::PrefetchBytesUseful => "rocksdb.prefetch.bytes.useful",
            Ticker::PrefetchHits => "rocksdb.prefetch.hits",
            Ticker::SstFooterCorruptionCount => "rocksdb.footer.corruption.count",
            Ticker::FileReadCorruptionRetryCount => "rocksdb.file.read.corruption.retry.count",
            Ticker::FileReadCorruptionRetrySuccessCount => "rocksdb.file.read.corruption.retry.success.count",
            Ticker::NumberWbwiIngest => "rocksdb.number.wbwi.ingest",
            Ticker::SstUserDefinedIndexLoadFailCount => "rocksdb.sst.user.defined.index.load.fail.count",
            Ticker::MultiscanPrepareCalls => "rocksdb.multiscan.prepare.calls",
            Ticker::MultiscanPrepareErrors => "rocksdb.multiscan.prepare.errors",
            Ticker::MultiscanBlocksPrefetched => "rocksdb.multiscan.blocks.prefetched",
            Ticker::MultiscanBlocksFromCache => "rocksdb.multiscan.blocks.from.cache",
            Ticker::MultiscanPrefetchBytes => "rocksdb.multiscan.prefetch.bytes",
            Ticker::MultiscanPrefetchBlocksWasted => "rocksdb.multiscan.prefetch.blocks.wasted",
            Ticker::MultiscanIoRequests => "rocksdb.multiscan.io.requests",
            Ticker::MultiscanIoCoalescedNonadjacent => "rocksdb.multiscan.io.coalesced.nonadjacent",
            Ticker::MultiscanSeekErrors => "rocksdb.multiscan.seek.errors",
            Ticker::PrefetchMemoryBytesGranted => "rocksdb.prefetch.memory.bytes.granted",
            Ticker::PrefetchMemoryBytesReleased => "rocksdb.prefetch.memory.bytes.released",
            Ticker::PrefetchMemoryRequestsBlocked => "rocksdb.prefetch.memory.requests.blocked",
            Ticker::ReadPathRangeTombstonesInserted => "rocksdb.read.path.range.tombstones.inserted",
            Ticker::ReadPathRangeTombstonesDiscarded => "rocksdb.read.path.range.tombstones.discarded",
            Ticker::FileOpenMetadataRetrieved => "rocksdb.file.open.metadata.retrieved",
            Ticker::FileOpenMetadataPassed => "rocksdb.file.open.metadata.passed",
            Ticker::ManifestValidationFailureCount => "rocksdb.manifest.validation.failure.count",
            Ticker::FlushReasonWriteBufferFull => "rocksdb.flush.reason.write_buffer_full",
            Ticker::FlushReasonWriteBufferManager => "rocksdb.flush.reason.write_buffer_manager",
            Ticker::FlushReasonMemtableMaxRangeDeletions => {
                "rocksdb.flush.reason.memtable_max_range_deletions"
            }
            Ticker::AtomicFlushRequestReasonWriteBufferFull => {
                "rocksdb.atomic_flush.request.reason.write_buffer_full"
            }
            Ticker::AtomicFlushRequestReasonWriteBufferManager => {
                "rocksdb.atomic_flush.request.reason.write_buffer_manager"
            }
            Ticker::AtomicFlushRequestReasonMemtableMaxRangeDeletions => {
                "rocksdb.atomic_flush.request.reason.memtable_max_range_deletions"
            }
            Ticker::AtomicFlushRequestReasonOther => "rocksdb.atomic_flush.request.reason.other",
            Ticker::CheckpointReadBytes => "rocksdb.checkpoint.read.bytes",
            Ticker::CheckpointWriteBytes => "rocksdb.checkpoint.write.bytes",
            Ticker::FileSubmitAsyncReadFallback => "rocksdb.file.submit.async.read.fallback",
        }
    }

    /// Every variant, in RocksDB's order.
    pub fn iter() -> std::slice::Iter<'static, Ticker> {
        static ALL: &[Ticker] = &[
            Ticker::BlockCacheMiss,
            Ticker::BlockCacheHit,
            Ticker::BlockCacheAdd,
            Ticker::BlockCacheAddFailures,
            Ticker::BlockCacheIndexMiss,
            Ticker::BlockCacheIndexHit,
            Ticker::BlockCacheIndexAdd,
            Ticker::BlockCacheIndexBytesInsert,
            Ticker::BlockCacheFilterMiss,
            Ticker::BlockCacheFilterHit,
            Ticker::BlockCacheFilterAdd,
            Ticker::BlockCacheFilterBytesInsert,
            Ticker::BlockCacheDataMiss,
            Ticker::BlockCacheDataHit,
            Ticker::BlockCacheDataAdd,
            Ticker::BlockCacheDataBytesInsert,
            Ticker::BlockCacheBytesRead,
            Ticker::BlockCacheBytesWrite,
            Ticker::BlockCacheCompressionDictMiss,
            Ticker::BlockCacheCompressionDictHit,
            Ticker::BlockCacheCompressionDictAdd,
            Ticker::BlockCacheCompressionDictBytesInsert,
            Ticker::BlockCacheAddRedundant,
            Ticker::BlockCacheIndexAddRedundant,
            Ticker::BlockCacheFilterAddRedundant,
            Ticker::BlockCacheDataAddRedundant,
            Ticker::BlockCacheCompressionDictAddRedundant,
            Ticker::SecondaryCacheHits,
            Ticker::SecondaryCacheFilterHits,
            Ticker::SecondaryCacheIndexHits,
            Ticker::SecondaryCacheDataHits,
            Ticker::CompressedSecondaryCacheDummyHits,
            Ticker::CompressedSecondaryCacheHits,
            Ticker::CompressedSecondaryCachePromotions,
            Ticker::CompressedSecondaryCachePromotionSkips,
            Ticker::BloomFilterUseful,
            Ticker::BloomFilterFullPositive,
            Ticker::BloomFilterFullTruePositive,
            Ticker::BloomFilterPrefixChecked,
            Ticker::BloomFilterPrefixUseful,
            Ticker::BloomFilterPrefixTruePositive,
            Ticker::PersistentCacheHit,
            Ticker::PersistentCacheMiss,
            Ticker::SimBlockCacheHit,
            Ticker::SimBlockCacheMiss,
            Ticker::MemtableHit,
            Ticker::MemtableMiss,
            Ticker::GetHitL0,
            Ticker::GetHitL1,
            Ticker::GetHitL2AndUp,
            Ticker::CompactionKeyDropNewerEntry,
            Ticker::CompactionKeyDropObsolete,
            Ticker::CompactionKeyDropRangeDel,
            Ticker::CompactionKeyDropUser,
            Ticker::CompactionRangeDelDropObsolete,
            Ticker::CompactionOptimizedDelDropObsolete,
            Ticker::CompactionCancelled,
            Ticker::CompactionAborted,
            Ticker::NumberKeysWritten,
            Ticker::NumberKeysRead,
            Ticker::NumberKeysUpdated,
            Ticker::BytesWritten,
            Ticker::BytesRead,
            Ticker::NumberDbSeek,
            Ticker::NumberDbNext,
            Ticker::NumberDbPrev,
            Ticker::NumberDbSeekFound,
            Ticker::NumberDbNextFound,
            Ticker::NumberDbPrevFound,
            Ticker::IterBytesRead,
            Ticker::NumberIterSkip,
            Ticker::NumberOfReseeksInIteration,
            Ticker::NoIteratorCreated,
            Ticker::NoIteratorDeleted,
            Ticker::NoFileOpens,
            Ticker::NoFileErrors,
            Ticker::StallMicros,
            Ticker::DbMutexWaitMicros,
            Ticker::NumberMultigetCalls,
            Ticker::NumberMultigetKeysRead,
            Ticker::NumberMultigetBytesRead,
            Ticker::NumberMultigetKeysFound,
            Ticker::NumberMergeFailures,
            Ticker::GetUpdatesSinceCalls,
            Ticker::WalFileSynced,
            Ticker::WalFileBytes,
            Ticker::WalPrecreateHit,
            Ticker::WalPrecreateMiss,
            Ticker::WalPrecreateWaited,
            Ticker::WalPrecreateWaitMicros,
            Ticker::WalPrecreateFailed,
            Ticker::WriteDoneBySelf,
            Ticker::WriteDoneByOther,
            Ticker::WriteWithWal,
            Ticker::CompactReadBytes,
            Ticker::CompactWriteBytes,
            Ticker::FlushWriteBytes,
            Ticker::CompactReadBytesMarked,
            Ticker::CompactReadBytesPeriodic,
            Ticker::CompactReadBytesTtl,
            Ticker::CompactWriteBytesMarked,
            Ticker::CompactWriteBytesPeriodic,
            Ticker::CompactWriteBytesTtl,
            Ticker::NumberDirectLoadTableProperties,
            Ticker::NumberSuperversionAcquires,
            Ticker::NumberSuperversionReleases,
            Ticker::NumberSuperversionCleanups,
            Ticker::NumberBlockCompressed,
            Ticker::NumberBlockDecompressed,
            Ticker::BytesCompressedFrom,
            Ticker::BytesCompressedTo,
            Ticker::BytesCompressionBypassed,
            Ticker::BytesCompressionRejected,
            Ticker::NumberBlockCompressionBypassed,
            Ticker::NumberBlockCompressionRejected,
            Ticker::BytesDecompressedFrom,
            Ticker::BytesDecompressedTo,
            Ticker::MergeOperationTotalTime,
            Ticker::FilterOperationTotalTime,
            Ticker::CompactionCpuTotalTime,
            Ticker::RowCacheHit,
            Ticker::RowCacheMiss,
            Ticker::ReadAmpEstimateUsefulBytes,
            Ticker::ReadAmpTotalReadBytes,
            Ticker::NumberRateLimiterDrains,
            Ticker::RateLimiterBytesRead,
            Ticker::RateLimiterBytesWrite,
            Ticker::RateLimiterRequestsRead,
            Ticker::RateLimiterRequestsWrite,
            Ticker::RateLimiterDelayedRequestsRead,
            Ticker::RateLimiterDelayedRequestsWrite,
            Ticker::RateLimiterTotalWaitMicrosRead,
            Ticker::RateLimiterTotalWaitMicrosWrite,
            Ticker::BlobDbNumPut,
            Ticker::BlobDbNumWrite,
            Ticker::BlobDbNumGet,
            Ticker::BlobDbNumMultiget,
            Ticker::BlobDbNumSeek,
            Ticker::BlobDbNumNext,
            Ticker::BlobDbNumPrev,
            Ticker::BlobDbNumKeysWritten,
            Ticker::BlobDbNumKeysRead,
            Ticker::BlobDbBytesWritten,
            Ticker::BlobDbBytesRead,
            Ticker::BlobDbWriteInlinedDeprecated,
            Ticker::BlobDbWriteInlinedTtlDeprecated,
            Ticker::BlobDbWriteBlob,
            Ticker::BlobDbWriteBlobTtl,
            Ticker::BlobDbBlobFileBytesWritten,
            Ticker::BlobDbBlobFileBytesRead,
            Ticker::BlobDbBlobFileSynced,
            Ticker::BlobDbBlobIndexExpiredCount,
            Ticker::BlobDbBlobIndexExpiredSize,
            Ticker::BlobDbBlobIndexEvictedCount,
            Ticker::BlobDbBlobIndexEvictedSize,
            Ticker::BlobDbGcNumFiles,
            Ticker::BlobDbGcNumNewFiles,
            Ticker::BlobDbGcFailures,
            Ticker::BlobDbGcNumKeysRelocated,
            Ticker::BlobDbGcBytesRelocated,
            Ticker::BlobDbFifoNumFilesEvicted,
            Ticker::BlobDbFifoNumKeysEvicted,
            Ticker::BlobDbFifoBytesEvicted,
            Ticker::BlobDbCacheMiss,
            Ticker::BlobDbCacheHit,
            Ticker::BlobDbCacheAdd,
            Ticker::BlobDbCacheAddFailures,
            Ticker::BlobDbCacheBytesRead,
            Ticker::BlobDbCacheBytesWrite,
            Ticker::TxnPrepareMutexOverhead,
            Ticker::TxnOldCommitMapMutexOverhead,
            Ticker::TxnDuplicateKeyOverhead,
            Ticker::TxnSnapshotMutexOverhead,
            Ticker::TxnGetTryAgain,
            Ticker::FilesMarkedTrash,
            Ticker::FilesDeletedFromTrashQueue,
            Ticker::FilesDeletedImmediately,
            Ticker::ErrorHandlerBgErrorCount,
            Ticker::ErrorHandlerBgIoErrorCount,
            Ticker::ErrorHandlerBgRetryableIoErrorCount,
            Ticker::ErrorHandlerAutoresumeCount,
            Ticker::ErrorHandlerAutoresumeRetryTotalCount,
            Ticker::ErrorHandlerAutoresumeSuccessCount,
            Ticker::MemtablePayloadBytesAtFlush,
            Ticker::MemtableGarbageBytesAtFlush,
            Ticker::VerifyChecksumReadBytes,
            Ticker::BackupReadBytes,
            Ticker::BackupWriteBytes,
            Ticker::RemoteCompactReadBytes,
            Ticker::RemoteCompactWriteBytes,
            Ticker::RemoteCompactResumedBytes,
            Ticker::HotFileReadBytes,
            Ticker::WarmFileReadBytes,
            Ticker::CoolFileReadBytes,
            Ticker::ColdFileReadBytes,
            Ticker::IceFileReadBytes,
            Ticker::HotFileReadCount,
            Ticker::WarmFileReadCount,
            Ticker::CoolFileReadCount,
            Ticker::ColdFileReadCount,
            Ticker::IceFileReadCount,
            Ticker::LastLevelReadBytes,
            Ticker::LastLevelReadCount,
            Ticker::NonLastLevelReadBytes,
            Ticker::NonLastLevelReadCount,
            Ticker::LastLevelSeekFiltered,
            Ticker::LastLevelSeekFilterMatch,
            Ticker::LastLevelSeekData,
            Ticker::LastLevelSeekDataUsefulNoFilter,
            Ticker::LastLevelSeekDataUsefulFilterMatch,
            Ticker::NonLastLevelSeekFiltered,
            Ticker::NonLastLevelSeekFilterMatch,
            Ticker::NonLastLevelSeekData,
            Ticker::NonLastLevelSeekDataUsefulNoFilter,
            Ticker::NonLastLevelSeekDataUsefulFilterMatch,
            Ticker::BlockChecksumComputeCount,
            Ticker::BlockChecksumMismatchCount,
            Ticker::MultigetCoroutineCount,
            Ticker::ReadAsyncMicros,
            Ticker::AsyncReadErrorCount,
            Ticker::TableOpenPrefetchTailMiss,
            Ticker::TableOpenPrefetchTailHit,
            Ticker::TimestampFilterTableChecked,
            Ticker::TimestampFilterTableFiltered,
            Ticker::ReadaheadTrimmed,
            Ticker::FifoMaxSizeCompactions,
            Ticker::FifoTtlCompactions,
            Ticker::FifoChangeTemperatureCompactions,
            Ticker::PrefetchBytes,
            Ticker::PrefetchBytesUseful,
            Ticker::PrefetchHits,
            Ticker::SstFooterCorruptionCount,
            Ticker::FileReadCorruptionRetryCount,
            Ticker::FileReadCorruptionRetrySuccessCount,
            Ticker::NumberWbwiIngest,
            Ticker::SstUserDefinedIndexLoadFailCount,
            Ticker::MultiscanPrepareCalls,
            Ticker::MultiscanPrepareErrors,
            Ticker::MultiscanBlocksPrefetched,
            Ticker::MultiscanBlocksFromCache,
            Ticker::MultiscanPrefetchBytes,
            Ticker::MultiscanPrefetchBlocksWasted,
            Ticker::MultiscanIoRequests,
            Ticker::MultiscanIoCoalescedNonadjacent,
            Ticker::MultiscanSeekErrors,
            Ticker::PrefetchMemoryBytesGranted,
            Ticker::PrefetchMemoryBytesReleased,
            Ticker::PrefetchMemoryRequestsBlocked,
            Ticker::ReadPathRangeTombstonesInserted,
            Ticker::ReadPathRangeTombstonesDiscarded,
            Ticker::FileOpenMetadataRetrieved,
            Ticker::FileOpenMetadataPassed,
            Ticker::ManifestValidationFailureCount,
            Ticker::FlushReasonWriteBufferFull,
            Ticker::FlushReasonWriteBufferManager,
            Ticker::FlushReasonMemtableMaxRangeDeletions,
            Ticker::AtomicFlushRequestReasonWriteBufferFull,
            Ticker::AtomicFlushRequestReasonWriteBufferManager,
            Ticker::AtomicFlushRequestReasonMemtableMaxRangeDeletions,
            Ticker::AtomicFlushRequestReasonOther,
            Ticker::CheckpointReadBytes,
            Ticker::CheckpointWriteBytes,
            Ticker::FileSubmitAsyncReadFallback,
        ];
        ALL.iter()
    }
}

impl std::str::FromStr for Ticker {
    type Err = NameParseError;

    fn from_str(s: &str) -> Result<Ticker, NameParseError> {
        Ticker::iter().find(|t| t.name() == s).copied().ok_or(NameParseError)
    }
}

/// RocksDB's histograms, with their names (`name()`).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(u32)]
pub enum Histogram {
    DbGet,
    DbWrite,
    CompactionTime,
    CompactionCpuTime,
    SubcompactionSetupTime,
    TableSyncMicros,
    CompactionOutfileSyncMicros,
    WalFileSyncMicros,
    ManifestFileSyncMicros,
    TableOpenIoMicros,
    DbMultiget,
    ReadBlockCompactionMicros,
    ReadBlockGetMicros,
    WriteRawBlockMicros,
    NumFilesInSingleCompaction,
    DbSeek,
    WriteStall,
    SstReadMicros,
    FileReadFlushMicros,
    FileReadCompactionMicros,
    FileReadDbOpenMicros,
    FileReadGetMicros,
    FileReadMultigetMicros,
    FileReadDbIteratorMicros,
    FileReadVerifyDbChecksumMicros,
    FileReadVerifyFileChecksumsMicros,
    SstWriteMicros,
    FileWriteFlushMicros,
    FileWriteCompactionMicros,
    FileWriteDbOpenMicros,
    NumSubcompactionsScheduled,
    BytesPerRead,
    BytesPerWrite,
    BytesPerMultiget,
    CompressionTimesNanos,
    DecompressionTimesNanos,
    ReadNumMergeOperands,
    BlobDbKeySize,
    BlobDbValueSize,
    BlobDbWriteMicros,
    BlobDbGetMicros,
    BlobDbMultigetMicros,
    BlobDbSeekMicros,
    BlobDbNextMicros,
    BlobDbPrevMicros,
    BlobDbBlobFileWriteMicros,
    BlobDbBlobFileReadMicros,
    BlobDbBlobFileSyncMicros,
    BlobDbCompressionMicros,
    BlobDbDecompressionMicros,
    FlushTime,
    SstBatchSize,
    MultigetIoBatchSize,
    NumIndexAndFilterBlocksReadPerLevel,
    NumSstReadPerLevel,
    NumLevelReadPerMultiget,
    ErrorHandlerAutoresumeRetryCount,
    AsyncReadBytes,
    PollWaitMicros,
    PrefetchedBytesDiscarded,
    AsyncPrefetchAbortMicros,
    TableOpenPrefetchTailReadBytes,
}

impl Histogram {
    /// RocksDB's name of this statistic.
    pub const fn name(&self) -> &'static str {
        match self {
            Histogram::DbGet => "rocksdb.db.get.micros",
            Histogram::DbWrite => "rocksdb.db.write.micros",
            Histogram::CompactionTime => "rocksdb.compaction.times.micros",
            Histogram::CompactionCpuTime => "rocksdb.compaction.times.cpu_micros",
            Histogram::SubcompactionSetupTime => "rocksdb.subcompaction.setup.times.micros",
            Histogram::TableSyncMicros => "rocksdb.table.sync.micros",
            Histogram::CompactionOutfileSyncMicros => "rocksdb.compaction.outfile.sync.micros",
            Histogram::WalFileSyncMicros => "rocksdb.wal.file.sync.micros",
            Histogram::ManifestFileSyncMicros => "rocksdb.manifest.file.sync.micros",
            Histogram::TableOpenIoMicros => "rocksdb.table.open.io.micros",
            Histogram::DbMultiget => "rocksdb.db.multiget.micros",
            Histogram::ReadBlockCompactionMicros => "rocksdb.read.block.compaction.micros",
            Histogram::ReadBlockGetMicros => "rocksdb.read.block.get.micros",
            Histogram::WriteRawBlockMicros => "rocksdb.write.raw.block.micros",
            Histogram::NumFilesInSingleCompaction => "rocksdb.numfiles.in.singlecompaction",
            Histogram::DbSeek => "rocksdb.db.seek.micros",
            Histogram::WriteStall => "rocksdb.db.write.stall",
            Histogram::SstReadMicros => "rocksdb.sst.read.micros",
            Histogram::FileReadFlushMicros => "rocksdb.file.read.flush.micros",
            Histogram::FileReadCompactionMicros => "rocksdb.file.read.compaction.micros",
            Histogram::FileReadDbOpenMicros => "rocksdb.file.read.db.open.micros",
            Histogram::FileReadGetMicros => "rocksdb.file.read.get.micros",
            Histogram::FileReadMultigetMicros => "rocksdb.file.read.multiget.micros",
            Histogram::FileReadDbIteratorMicros => "rocksdb.file.read.db.iterator.micros",
            Histogram::FileReadVerifyDbChecksumMicros => "rocksdb.file.read.verify.db.checksum.micros",
            Histogram::FileReadVerifyFileChecksumsMicros => "rocksdb.file.read.verify.file.checksums.micros",
            Histogram::SstWriteMicros => "rocksdb.sst.write.micros",
            Histogram::FileWriteFlushMicros => "rocksdb.file.write.flush.micros",
            Histogram::FileWriteCompactionMicros => "rocksdb.file.write.compaction.micros",
            Histogram::FileWriteDbOpenMicros => "rocksdb.file.write.db.open.micros",
            Histogram::NumSubcompactionsScheduled => "rocksdb.num.subcompactions.scheduled",
            Histogram::BytesPerRead => "rocksdb.bytes.per.read",
            Histogram::BytesPerWrite => "rocksdb.bytes.per.write",
            Histogram::BytesPerMultiget => "rocksdb.bytes.per.multiget",
            Histogram::CompressionTimesNanos => "rocksdb.compression.times.nanos",
            Histogram::DecompressionTimesNanos => "rocksdb.decompression.times.nanos",
            Histogram::ReadNumMergeOperands => "rocksdb.read.num.merge_operands",
            Histogram::BlobDbKeySize => "rocksdb.blobdb.key.size",
            Histogram::BlobDbValueSize => "rocksdb.blobdb.value.size",
            Histogram::BlobDbWriteMicros => "rocksdb.blobdb.write.micros",
            Histogram::BlobDbGetMicros => "rocksdb.blobdb.get.micros",
            Histogram::BlobDbMultigetMicros => "rocksdb.blobdb.multiget.micros",
            Histogram::BlobDbSeekMicros => "rocksdb.blobdb.seek.micros",
            Histogram::BlobDbNextMicros => "rocksdb.blobdb.next.micros",
            Histogram::BlobDbPrevMicros => "rocksdb.blobdb.prev.micros",
            Histogram::BlobDbBlobFileWriteMicros => "rocksdb.blobdb.blob.file.write.micros",
            Histogram::BlobDbBlobFileReadMicros => "rocksdb.blobdb.blob.file.read.micros",
            Histogram::BlobDbBlobFileSyncMicros => "rocksdb.blobdb.blob.file.sync.micros",
            Histogram::BlobDbCompressionMicros => "rocksdb.blobdb.compression.micros",
            Histogram::BlobDbDecompressionMicros => "rocksdb.blobdb.decompression.micros",
            Histogram::FlushTime => "rocksdb.db.flush.micros",
            Histogram::SstBatchSize => "rocksdb.sst.batch.size",
            Histogram::MultigetIoBatchSize => "rocksdb.multiget.io.batch.size",
            Histogram::NumIndexAndFilterBlocksReadPerLevel => {
                "rocksdb.num.index.and.filter.blocks.read.per.level"
            }
            Histogram::NumSstReadPerLevel => "rocksdb.num.sst.read.per.level",
            Histogram::NumLevelReadPerMultiget => "rocksdb.num.level.read.per.multiget",
            Histogram::ErrorHandlerAutoresumeRetryCount => "rocksdb.error.handler.autoresume.retry.count",
            Histogram::AsyncReadBytes => "rocksdb.async.read.bytes",
            Histogram::PollWaitMicros => "rocksdb.poll.wait.micros",
            Histogram::PrefetchedBytesDiscarded => "rocksdb.prefetched.bytes.discarded",
            Histogram::AsyncPrefetchAbortMicros => "rocksdb.async.prefetch.abort.micros",
            Histogram::TableOpenPrefetchTailReadBytes => "rocksdb.table.open.prefetch.tail.read.bytes",
        }
    }

    /// Every variant, in RocksDB's order.
    pub fn iter() -> std::slice::Iter<'static, Histogram> {
        static ALL: &[Histogram] = &[
            Histogram::DbGet,
            Histogram::DbWrite,
            Histogram::CompactionTime,
            Histogram::CompactionCpuTime,
            Histogram::SubcompactionSetupTime,
            Histogram::TableSyncMicros,
            Histogram::CompactionOutfileSyncMicros,
            Histogram::WalFileSyncMicros,
            Histogram::ManifestFileSyncMicros,
            Histogram::TableOpenIoMicros,
            Histogram::DbMultiget,
            Histogram::ReadBlockCompactionMicros,
            Histogram::ReadBlockGetMicros,
            Histogram::WriteRawBlockMicros,
            Histogram::NumFilesInSingleCompaction,
            Histogram::DbSeek,
            Histogram::WriteStall,
            Histogram::SstReadMicros,
            Histogram::FileReadFlushMicros,
            Histogram::FileReadCompactionMicros,
            Histogram::FileReadDbOpenMicros,
            Histogram::FileReadGetMicros,
            Histogram::FileReadMultigetMicros,
            Histogram::FileReadDbIteratorMicros,
            Histogram::FileReadVerifyDbChecksumMicros,
            Histogram::FileReadVerifyFileChecksumsMicros,
            Histogram::SstWriteMicros,
            Histogram::FileWriteFlushMicros,
            Histogram::FileWriteCompactionMicros,
            Histogram::FileWriteDbOpenMicros,
            Histogram::NumSubcompactionsScheduled,
            Histogram::BytesPerRead,
            Histogram::BytesPerWrite,
            Histogram::BytesPerMultiget,
            Histogram::CompressionTimesNanos,
            Histogram::DecompressionTimesNanos,
            Histogram::ReadNumMergeOperands,
            Histogram::BlobDbKeySize,
            Histogram::BlobDbValueSize,
            Histogram::BlobDbWriteMicros,
            Histogram::BlobDbGetMicros,
            Histogram::BlobDbMultigetMicros,
            Histogram::BlobDbSeekMicros,
            Histogram::BlobDbNextMicros,
            Histogram::BlobDbPrevMicros,
            Histogram::BlobDbBlobFileWriteMicros,
            Histogram::BlobDbBlobFileReadMicros,
            Histogram::BlobDbBlobFileSyncMicros,
            Histogram::BlobDbCompressionMicros,
            Histogram::BlobDbDecompressionMicros,
            Histogram::FlushTime,
            Histogram::SstBatchSize,
            Histogram::MultigetIoBatchSize,
            Histogram::NumIndexAndFilterBlocksReadPerLevel,
            Histogram::NumSstReadPerLevel,
            Histogram::NumLevelReadPerMultiget,
            Histogram::ErrorHandlerAutoresumeRetryCount,
            Histogram::AsyncReadBytes,
            Histogram::PollWaitMicros,
            Histogram::PrefetchedBytesDiscarded,
            Histogram::AsyncPrefetchAbortMicros,
            Histogram::TableOpenPrefetchTailReadBytes,
        ];
        ALL.iter()
    }
}

impl std::str::FromStr for Histogram {
    type Err = NameParseError;

    fn from_str(s: &str) -> Result<Histogram, NameParseError> {
        Histogram::iter().find(|t| t.name() == s).copied().ok_or(NameParseError)
    }
}

/// Tickers RocksDB 11.8.1 has (its `TICKER_ENUM_MAX`); `Ticker`'s variants, in its order.
pub const TICKER_COUNT: usize = 263;

/// Every histogram RocksDB 11.8.1 prints, in its order (`HistogramsNameMap`).
pub const ROCKSDB_HISTOGRAM_NAMES: [&str; 80] = [
    "rocksdb.db.get.micros",
    "rocksdb.db.write.micros",
    "rocksdb.compaction.times.micros",
    "rocksdb.compaction.times.cpu_micros",
    "rocksdb.subcompaction.setup.times.micros",
    "rocksdb.table.sync.micros",
    "rocksdb.compaction.outfile.sync.micros",
    "rocksdb.wal.file.sync.micros",
    "rocksdb.manifest.file.sync.micros",
    "rocksdb.table.open.io.micros",
    "rocksdb.db.multiget.micros",
    "rocksdb.read.block.compaction.micros",
    "rocksdb.read.block.get.micros",
    "rocksdb.write.raw.block.micros",
    "rocksdb.numfiles.in.singlecompaction",
    "rocksdb.db.seek.micros",
    "rocksdb.db.write.stall",
    "rocksdb.sst.read.micros",
    "rocksdb.file.read.flush.micros",
    "rocksdb.file.read.compaction.micros",
    "rocksdb.file.read.db.open.micros",
    "rocksdb.file.read.get.micros",
    "rocksdb.file.read.multiget.micros",
    "rocksdb.file.read.db.iterator.micros",
    "rocksdb.file.read.verify.db.checksum.micros",
    "rocksdb.file.read.verify.file.checksums.micros",
    "rocksdb.sst.write.micros",
    "rocksdb.file.write.flush.micros",
    "rocksdb.file.write.compaction.micros",
    "rocksdb.file.write.db.open.micros",
    "rocksdb.num.subcompactions.scheduled",
    "rocksdb.bytes.per.read",
    "rocksdb.bytes.per.write",
    "rocksdb.bytes.per.multiget",
    "rocksdb.compression.times.nanos",
    "rocksdb.decompression.times.nanos",
    "rocksdb.read.num.merge_operands",
    "rocksdb.blobdb.key.size",
    "rocksdb.blobdb.value.size",
    "rocksdb.blobdb.write.micros",
    "rocksdb.blobdb.get.micros",
    "rocksdb.blobdb.multiget.micros",
    "rocksdb.blobdb.seek.micros",
    "rocksdb.blobdb.next.micros",
    "rocksdb.blobdb.prev.micros",
    "rocksdb.blobdb.blob.file.write.micros",
    "rocksdb.blobdb.blob.file.read.micros",
    "rocksdb.blobdb.blob.file.sync.micros",
    "rocksdb.blobdb.compression.micros",
    "rocksdb.blobdb.decompression.micros",
    "rocksdb.db.flush.micros",
    "rocksdb.sst.batch.size",
    "rocksdb.multiget.io.batch.size",
    "rocksdb.num.index.and.filter.blocks.read.per.level",
    "rocksdb.num.sst.read.per.level",
    "rocksdb.num.level.read.per.multiget",
    "rocksdb.error.handler.autoresume.retry.count",
    "rocksdb.async.read.bytes",
    "rocksdb.poll.wait.micros",
    "rocksdb.compaction.prefetch.bytes",
    "rocksdb.prefetched.bytes.discarded",
    "rocksdb.async.prefetch.abort.micros",
    "rocksdb.table.open.prefetch.tail.read.bytes",
    "rocksdb.num.op.per.transaction",
    "rocksdb.multiscan.op.prepare.iterators.micros",
    "rocksdb.multiscan.prepare.micros",
    "rocksdb.multiscan.blocks.per.prepare",
    "rocksdb.iodispatcher.async.read.observed.completion.micros",
    "rocksdb.iodispatcher.async.read.poll.wait.micros",
    "rocksdb.iodispatcher.async.read.prefetch.lead.micros",
    "rocksdb.block.key.distribution.cv",
    "rocksdb.ingest.external.file.prepare.micros",
    "rocksdb.ingest.external.file.run.micros",
    "rocksdb.rate.limiter.wait.micros.read",
    "rocksdb.rate.limiter.wait.micros.write",
    "rocksdb.flush.memtable.memory.bytes",
    "rocksdb.flush.memtable.total.data.size.bytes",
    "rocksdb.flush.write_buffer_full.memtable.memory.bytes",
    "rocksdb.flush.write_buffer_manager.memtable.memory.bytes",
    "rocksdb.open.and.compact.db.open.micros",
];

/// Histograms RocksDB 11.8.1 prints that rust-rocksdb 0.25's `Histogram` does not name: Shale
/// prints them (empty) so the text has every line RocksDB's has, and records none of them (no
/// caller could read them through rust-rocksdb's API, and most belong to features Shale does
/// not have: transactions' op counts, multiscan, the I/O dispatcher, ingestion timings, rate
/// limiter waits, write-buffer-manager flushes, OpenAndCompact).
pub const UNCOUNTED_HISTOGRAMS: [&str; 18] = [
    "rocksdb.compaction.prefetch.bytes",
    "rocksdb.num.op.per.transaction",
    "rocksdb.multiscan.op.prepare.iterators.micros",
    "rocksdb.multiscan.prepare.micros",
    "rocksdb.multiscan.blocks.per.prepare",
    "rocksdb.iodispatcher.async.read.observed.completion.micros",
    "rocksdb.iodispatcher.async.read.poll.wait.micros",
    "rocksdb.iodispatcher.async.read.prefetch.lead.micros",
    "rocksdb.block.key.distribution.cv",
    "rocksdb.ingest.external.file.prepare.micros",
    "rocksdb.ingest.external.file.run.micros",
    "rocksdb.rate.limiter.wait.micros.read",
    "rocksdb.rate.limiter.wait.micros.write",
    "rocksdb.flush.memtable.memory.bytes",
    "rocksdb.flush.memtable.total.data.size.bytes",
    "rocksdb.flush.write_buffer_full.memtable.memory.bytes",
    "rocksdb.flush.write_buffer_manager.memtable.memory.bytes",
    "rocksdb.open.and.compact.db.open.micros",
];

/// Histograms recorded (rust-rocksdb's `Histogram` variants).
const HIST_COUNT: usize = 62;

/// Values below this find their bucket in a table instead of a binary search (most byte
/// counts and microsecond timings are small).
const SMALL_VALUES: usize = 1024;

/// RocksDB's `HistogramBucketMapper` limits, computed at compile time: 1, 2, then 1.5 times
/// the last, two significant digits kept, while not above `u64::MAX` (at most 128 of them;
/// the count is in `.1`).
const fn rocksdb_limits() -> ([u64; 128], usize) {
    let mut v = [0u64; 128];
    v[0] = 1;
    v[1] = 2;
    let mut n = 2;
    let mut val = 2.0f64;
    loop {
        val *= 1.5;
        if val > u64::MAX as f64 {
            break;
        }
        let mut b = val as u64;
        let mut pow = 1u64;
        while b / 10 > 10 {
            b /= 10;
            pow *= 10;
        }
        v[n] = b * pow;
        n += 1;
    }
    (v, n)
}

const LIMITS_WALK: ([u64; 128], usize) = rocksdb_limits();

/// Buckets per histogram (109, RocksDB's).
const NUM_BUCKETS: usize = LIMITS_WALK.1;

/// The bucket limits (`bucket_limits`).
static LIMITS: [u64; NUM_BUCKETS] = {
    let mut a = [0u64; NUM_BUCKETS];
    let mut i = 0;
    while i < NUM_BUCKETS {
        a[i] = LIMITS_WALK.0[i];
        i += 1;
    }
    a
};

/// The bucket of each value below `SMALL_VALUES`: bucket i holds the values up to limits[i].
static SMALL: [u8; SMALL_VALUES] = {
    let mut t = [0u8; SMALL_VALUES];
    let mut i = 0;
    let mut x = 0;
    while x < SMALL_VALUES {
        while x as u64 > LIMITS_WALK.0[i] {
            i += 1;
        }
        t[x] = i as u8;
        x += 1;
    }
    t
};

/// RocksDB's `HistogramBucketMapper` limits: 1, 2, then 1.5 times the last, two significant
/// digits kept, while not above `u64::MAX` (also the buckets of `shale bench`'s histograms).
pub fn bucket_limits() -> &'static [u64] {
    &LIMITS
}

fn search_bucket(limits: &[u64], value: u64) -> usize {
    let last = limits.len() - 1;
    if value >= limits[last] {
        last
    } else {
        limits.partition_point(|&l| l < value)
    }
}

/// The bucket of `value`: the first whose limit is at least it (the last for larger ones).
#[inline(always)]
fn bucket_index(value: u64) -> usize {
    if value < SMALL_VALUES as u64 {
        SMALL[value as usize] as usize
    } else {
        search_bucket(&LIMITS, value)
    }
}

/// One histogram's counts (RocksDB's `HistogramStat`), buckets inline: a sample finds its
/// counters at fixed offsets from the shard, with no pointer to follow.
struct HistStat {
    min: AtomicU64,
    max: AtomicU64,
    num: AtomicU64,
    sum: AtomicU64,
    sum_squares: AtomicU64,
    buckets: [AtomicU64; NUM_BUCKETS],
}

impl HistStat {
    const fn new() -> Self {
        HistStat {
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            num: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            sum_squares: AtomicU64::new(0),
            buckets: [const { AtomicU64::new(0) }; NUM_BUCKETS],
        }
    }

    /// Adds a sample as RocksDB's `HistogramStat::Add` does: plain loads and stores, not
    /// atomic read-modify-writes (a shard is mostly one thread's; a sample lost to two
    /// threads sharing one is accepted, as in RocksDB), min and max stored only when they move.
    #[inline(always)]
    fn add(&self, value: u64) {
        let bump =
            |a: &AtomicU64, n: u64| a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        bump(&self.buckets[bucket_index(value)], 1);
        if value < self.min.load(Ordering::Relaxed) {
            self.min.store(value, Ordering::Relaxed);
        }
        if value > self.max.load(Ordering::Relaxed) {
            self.max.store(value, Ordering::Relaxed);
        }
        bump(&self.num, 1);
        bump(&self.sum, value);
        bump(&self.sum_squares, value.wrapping_mul(value));
    }

    fn clear(&self) {
        self.min.store(u64::MAX, Ordering::Relaxed);
        for a in [&self.max, &self.num, &self.sum, &self.sum_squares] {
            a.store(0, Ordering::Relaxed);
        }
        for b in self.buckets.iter() {
            b.store(0, Ordering::Relaxed);
        }
    }
}

/// A histogram summed over the shards, for reading.
struct Merged {
    min: u64,
    max: u64,
    num: u64,
    sum: u64,
    sum_squares: u64,
    buckets: Vec<u64>,
}

impl Merged {
    fn new(n: usize) -> Self {
        Merged { min: u64::MAX, max: 0, num: 0, sum: 0, sum_squares: 0, buckets: vec![0; n] }
    }

    fn merge(&mut self, h: &HistStat) {
        self.min = self.min.min(h.min.load(Ordering::Relaxed));
        self.max = self.max.max(h.max.load(Ordering::Relaxed));
        self.num += h.num.load(Ordering::Relaxed);
        self.sum = self.sum.wrapping_add(h.sum.load(Ordering::Relaxed));
        self.sum_squares = self.sum_squares.wrapping_add(h.sum_squares.load(Ordering::Relaxed));
        for (m, b) in self.buckets.iter_mut().zip(h.buckets.iter()) {
            *m += b.load(Ordering::Relaxed);
        }
    }

    /// RocksDB's `HistogramStat::Percentile`: linear within the bucket, clamped to min/max.
    fn percentile(&self, limits: &[u64], p: f64) -> f64 {
        let threshold = self.num as f64 * (p / 100.0);
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            cumulative += count;
            if cumulative as f64 >= threshold {
                let left = if b == 0 { 0 } else { limits[b - 1] };
                let right = limits[b];
                let left_sum = cumulative - count;
                let pos = if count != 0 { (threshold - left_sum as f64) / count as f64 } else { 0.0 };
                let mut r = left as f64 + (right - left) as f64 * pos;
                if r < self.min as f64 {
                    r = self.min as f64;
                }
                if r > self.max as f64 {
                    r = self.max as f64;
                }
                return r;
            }
        }
        self.max as f64
    }

    fn data(&self, limits: &[u64]) -> HistogramData {
        let n = self.num as f64;
        let (average, std_dev) = if self.num == 0 {
            (0.0, 0.0)
        } else {
            let s = self.sum as f64;
            let var = (self.sum_squares as f64 * n - s * s) / (n * n);
            (s / n, var.max(0.0).sqrt())
        };
        HistogramData {
            median: self.percentile(limits, 50.0),
            average,
            p95: self.percentile(limits, 95.0),
            p99: self.percentile(limits, 99.0),
            max: self.max as f64,
            min: self.min as f64,
            sum: self.sum,
            count: self.num,
            std_dev,
        }
    }
}

/// One shard of counters, on its own cache lines; histograms inline, so a count is one
/// address computed from the shard's.
#[repr(align(128))]
struct Shard {
    tickers: [AtomicU64; TICKER_COUNT],
    hists: [HistStat; HIST_COUNT],
}

impl Shard {
    const fn new() -> Shard {
        Shard {
            tickers: [const { AtomicU64::new(0) }; TICKER_COUNT],
            hists: [const { HistStat::new() }; HIST_COUNT],
        }
    }
}

/// The statistics object (RocksDB's `StatisticsImpl`). See the module comment.
pub struct Statistics {
    level: AtomicU8,
    shards: Box<[Shard]>,
    /// `shards.len() - 1` (a power of two less one).
    mask: usize,
}

impl std::fmt::Debug for Statistics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Statistics(level {}, {} shards)", self.level.load(Ordering::Relaxed), self.shards.len())
    }
}

/// The shard a thread adds to, assigned round robin at its first count; `mask` is a power of
/// two less one, so it picks it (no division on the counting path).
#[inline(always)]
fn shard_index(mask: usize) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        // Const-initialised: reading it needs no lazy-init check.
        static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    }
    let mine = MINE.with(|m| {
        let v = m.get();
        if v != usize::MAX {
            return v;
        }
        let v = NEXT.fetch_add(1, Ordering::Relaxed);
        m.set(v);
        v
    });
    mine & mask
}

impl Default for Statistics {
    fn default() -> Self {
        Self::new()
    }
}

impl Statistics {
    /// Statistics at RocksDB's default level (`kExceptDetailedTimers`), one shard per core
    /// (a power of two, at most 64).
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
        let shards = cores.next_power_of_two().clamp(1, 64);
        Statistics {
            level: AtomicU8::new(rocks_level::EXCEPT_DETAILED_TIMERS),
            mask: shards - 1,
            shards: (0..shards).map(|_| Shard::new()).collect(),
        }
    }

    /// rust-rocksdb's `set_statistics_level`: RocksDB's level [`StatsLevel::rocksdb_level`].
    pub fn set_level(&self, level: StatsLevel) {
        self.level.store(level.rocksdb_level(), Ordering::Relaxed);
    }

    /// RocksDB's `get_stats_level()`: a [`rocks_level`] value.
    pub fn level(&self) -> u8 {
        self.level.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn shard(&self) -> &Shard {
        &self.shards[shard_index(self.mask)]
    }

    /// Adds `n` to `ticker` (RocksDB's `RecordTick`).
    #[inline]
    pub fn record_tick(&self, ticker: Ticker, n: u64) {
        if self.level() == rocks_level::EXCEPT_TICKERS {
            return;
        }
        self.shard().tickers[ticker as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// Adds several tickers at once: one level check and one shard lookup for all; zero
    /// counts are skipped (the write and read paths count four to six tickers each).
    #[inline]
    pub fn record_ticks(&self, ticks: &[(Ticker, u64)]) {
        if self.level() == rocks_level::EXCEPT_TICKERS {
            return;
        }
        let shard = self.shard();
        for &(t, n) in ticks {
            if n != 0 {
                shard.tickers[t as usize].fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// Adds a sample to a histogram (RocksDB's `RecordInHistogram`).
    #[inline]
    pub fn record_in_histogram(&self, h: Histogram, value: u64) {
        if self.level() <= rocks_level::EXCEPT_HISTOGRAM_OR_TIMERS {
            return;
        }
        self.shard().hists[h as usize].add(value);
    }

    /// True when timings are recorded (above `kExceptTimers`): callers read the clock only then.
    #[inline]
    pub fn timers_enabled(&self) -> bool {
        self.level() > rocks_level::EXCEPT_TIMERS
    }

    /// Adds a timing to a histogram (RocksDB's `reportTimeToHistogram`).
    #[inline]
    pub fn report_time(&self, h: Histogram, micros: u64) {
        if self.timers_enabled() {
            self.shard().hists[h as usize].add(micros);
        }
    }

    /// The clock in nanoseconds when timers are recorded (RocksDB's StopWatch start).
    #[inline]
    pub fn timer_start(&self) -> Option<u64> {
        self.timers_enabled().then(clock_nanos)
    }

    /// One write's counts: its time since `started` in `rocksdb.db.write.micros` (None:
    /// not timed), and for a write leader its group's counts as RocksDB's `WriteImpl`
    /// records them (keys and bytes, the leader's write and its followers', writes and bytes
    /// through the WAL, the group's size in `rocksdb.bytes.per.write`). One level check and
    /// one shard lookup for all.
    #[inline]
    pub fn record_write(&self, started: Option<u64>, group: Option<WriteGroupCounts>) {
        let level = self.level();
        if level == rocks_level::EXCEPT_TICKERS {
            return;
        }
        let shard = self.shard();
        if let Some(g) = group {
            let t = &shard.tickers;
            t[Ticker::NumberKeysWritten as usize].fetch_add(g.keys, Ordering::Relaxed);
            t[Ticker::BytesWritten as usize].fetch_add(g.bytes, Ordering::Relaxed);
            t[Ticker::WriteDoneBySelf as usize].fetch_add(1, Ordering::Relaxed);
            if g.writers > 1 {
                t[Ticker::WriteDoneByOther as usize].fetch_add(g.writers - 1, Ordering::Relaxed);
            }
            if g.wal {
                t[Ticker::WriteWithWal as usize].fetch_add(g.writers, Ordering::Relaxed);
                t[Ticker::WalFileBytes as usize].fetch_add(g.bytes, Ordering::Relaxed);
            }
            if level > rocks_level::EXCEPT_HISTOGRAM_OR_TIMERS {
                shard.hists[Histogram::BytesPerWrite as usize].add(g.bytes);
            }
        }
        // The level was checked when the clock was read (as RocksDB's StopWatch does).
        if let Some(t) = started {
            let micros = clock_nanos().saturating_sub(t) / 1000;
            shard.hists[Histogram::DbWrite as usize].add(micros);
        }
    }

    /// One point read's counts as RocksDB's `DBImpl::GetImpl` records them: its time since
    /// `started` in `rocksdb.db.get.micros` (None: not timed), a key read, the found value's
    /// bytes (`found`, 0 when none) in `rocksdb.bytes.read`, and the same size in
    /// `rocksdb.bytes.per.read` for every read, found or not (RocksDB records 0 for a miss).
    /// One level check and one shard lookup for all.
    #[inline]
    pub fn record_get(&self, started: Option<u64>, found: u64) {
        let level = self.level();
        if level == rocks_level::EXCEPT_TICKERS {
            return;
        }
        let shard = self.shard();
        shard.tickers[Ticker::NumberKeysRead as usize].fetch_add(1, Ordering::Relaxed);
        if found != 0 {
            shard.tickers[Ticker::BytesRead as usize].fetch_add(found, Ordering::Relaxed);
        }
        if level > rocks_level::EXCEPT_HISTOGRAM_OR_TIMERS {
            shard.hists[Histogram::BytesPerRead as usize].add(found);
        }
        // The level was checked when the clock was read (as RocksDB's StopWatch does).
        if let Some(t) = started {
            let micros = clock_nanos().saturating_sub(t) / 1000;
            shard.hists[Histogram::DbGet as usize].add(micros);
        }
    }

    /// The ticker's count, summed over the shards.
    pub fn ticker_count(&self, ticker: Ticker) -> u64 {
        self.shards.iter().map(|s| s.tickers[ticker as usize].load(Ordering::Relaxed)).sum()
    }

    fn merged(&self, index: usize) -> Merged {
        let mut m = Merged::new(bucket_limits().len());
        for s in self.shards.iter() {
            m.merge(&s.hists[index]);
        }
        m
    }

    /// The histogram's summary, summed over the shards.
    pub fn histogram_data(&self, h: Histogram) -> HistogramData {
        self.merged(h as usize).data(bucket_limits())
    }

    /// Zeroes every ticker and histogram (RocksDB's `Statistics::Reset`).
    pub fn reset(&self) {
        for s in self.shards.iter() {
            for t in s.tickers.iter() {
                t.store(0, Ordering::Relaxed);
            }
            for h in s.hists.iter() {
                h.clear();
            }
        }
    }

    /// RocksDB's `StatisticsImpl::ToString` text: every ticker, then every histogram.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::with_capacity(20000);
        for t in Ticker::iter() {
            let _ = writeln!(out, "{} COUNT : {}", t.name(), self.ticker_count(*t));
        }
        for name in ROCKSDB_HISTOGRAM_NAMES {
            let d = match name.parse::<Histogram>() {
                Ok(h) if self.shards.iter().any(|s| s.hists[h as usize].num.load(Ordering::Relaxed) > 0) => {
                    self.histogram_data(h)
                }
                // Nothing recorded: RocksDB's line of an empty histogram, without the merge
                // and the float formatting (most histograms of a run are empty).
                _ => {
                    out.push_str(name);
                    out.push_str(EMPTY_HISTOGRAM_LINE);
                    continue;
                }
            };
            let _ = writeln!(
                out,
                "{} P50 : {:.6} P95 : {:.6} P99 : {:.6} P100 : {:.6} COUNT : {} SUM : {}",
                name, d.median, d.p95, d.p99, d.max, d.count, d.sum
            );
        }
        out
    }
}

/// What RocksDB prints after an empty histogram's name (`HistogramImpl` with no sample).
const EMPTY_HISTOGRAM_LINE: &str =
    " P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 SUM : 0\n";

/// The monotonic clock in nanoseconds: one vDSO call, without `Instant`'s checked
/// arithmetic (the timers of the write and read paths read it twice per operation).
#[inline]
pub fn clock_nanos() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call writes only it.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// What a write leader's group adds to the statistics (`Statistics::record_write`).
#[derive(Clone, Copy)]
pub struct WriteGroupCounts {
    pub keys: u64,
    pub bytes: u64,
    pub writers: u64,
    pub wal: bool,
}

/// Times a scope into a histogram when the statistics record timings (RocksDB's
/// `StopWatch`): the clock is read only then.
pub struct StopWatch<'a> {
    stats: Option<&'a Statistics>,
    hist: Histogram,
    start: Option<u64>,
}

impl<'a> StopWatch<'a> {
    #[inline]
    pub fn new(stats: Option<&'a Statistics>, hist: Histogram) -> Self {
        let start = match stats {
            Some(s) if s.timers_enabled() => Some(clock_nanos()),
            _ => None,
        };
        StopWatch { stats, hist, start }
    }
}

impl Drop for StopWatch<'_> {
    #[inline]
    fn drop(&mut self) {
        if let (Some(s), Some(t)) = (self.stats, self.start) {
            // The level was checked when the clock was read (as RocksDB's StopWatch does).
            let micros = clock_nanos().saturating_sub(t) / 1000;
            s.shard().hists[self.hist as usize].add(micros);
        }
    }
}

/// Adds to a ticker of optional statistics.
#[inline]
pub fn record_tick(stats: Option<&Statistics>, ticker: Ticker, n: u64) {
    if let Some(s) = stats {
        s.record_tick(ticker, n);
    }
}

/// The tickers Shale counts, each where RocksDB counts it (see the callers of
/// `record_tick`). Every other ticker has its reason in [`why_not_counted`].
pub const COUNTED_TICKERS: &[Ticker] = &[
    // Each request of a table write (flush, compaction, FIFO's trivial copy) to the rate
    // limiter (`rate_limiter.rs`, RocksDB's GenericRateLimiter::Request).
    Ticker::NumberRateLimiterDrains,
    Ticker::RateLimiterBytesWrite,
    Ticker::RateLimiterRequestsWrite,
    Ticker::RateLimiterDelayedRequestsWrite,
    Ticker::RateLimiterTotalWaitMicrosWrite,
    // Each read of a table file (`io_stats.rs`, RocksDB's RecordIOStats).
    Ticker::LastLevelReadBytes,
    Ticker::LastLevelReadCount,
    Ticker::NonLastLevelReadBytes,
    Ticker::NonLastLevelReadCount,
    Ticker::HotFileReadBytes,
    Ticker::WarmFileReadBytes,
    Ticker::CoolFileReadBytes,
    Ticker::ColdFileReadBytes,
    Ticker::IceFileReadBytes,
    Ticker::HotFileReadCount,
    Ticker::WarmFileReadCount,
    Ticker::CoolFileReadCount,
    Ticker::ColdFileReadCount,
    Ticker::IceFileReadCount,
    Ticker::NumberKeysUpdated,
    Ticker::PrefetchBytes,
    Ticker::PrefetchBytesUseful,
    Ticker::PrefetchHits,
    Ticker::BlockCacheMiss,
    Ticker::BlockCacheHit,
    Ticker::BlockCacheAdd,
    Ticker::BlockCacheDataMiss,
    Ticker::BlockCacheDataHit,
    Ticker::BlockCacheDataAdd,
    Ticker::BlockCacheDataBytesInsert,
    Ticker::BlockCacheBytesRead,
    Ticker::BlockCacheBytesWrite,
    Ticker::BloomFilterUseful,
    Ticker::BloomFilterFullPositive,
    Ticker::BloomFilterFullTruePositive,
    Ticker::BloomFilterPrefixChecked,
    Ticker::BloomFilterPrefixUseful,
    Ticker::BloomFilterPrefixTruePositive,
    Ticker::MemtableHit,
    Ticker::MemtableMiss,
    Ticker::GetHitL0,
    Ticker::GetHitL1,
    Ticker::GetHitL2AndUp,
    Ticker::NumberKeysWritten,
    Ticker::NumberKeysRead,
    Ticker::BytesWritten,
    Ticker::BytesRead,
    Ticker::NumberDbSeek,
    Ticker::NumberOfReseeksInIteration,
    Ticker::NumberDbNext,
    Ticker::NumberDbPrev,
    Ticker::NumberDbSeekFound,
    Ticker::NumberDbNextFound,
    Ticker::NumberDbPrevFound,
    Ticker::IterBytesRead,
    Ticker::NoIteratorCreated,
    Ticker::NoIteratorDeleted,
    Ticker::NoFileOpens,
    Ticker::NoFileErrors,
    Ticker::StallMicros,
    Ticker::NumberMultigetCalls,
    Ticker::NumberMultigetKeysRead,
    Ticker::NumberMultigetBytesRead,
    Ticker::NumberMultigetKeysFound,
    Ticker::WalFileSynced,
    Ticker::WalFileBytes,
    Ticker::WriteDoneBySelf,
    Ticker::WriteDoneByOther,
    Ticker::WriteWithWal,
    Ticker::CompactReadBytes,
    Ticker::CompactWriteBytes,
    Ticker::FlushWriteBytes,
    Ticker::CompactionKeyDropNewerEntry,
    Ticker::CompactionKeyDropObsolete,
    Ticker::CompactionKeyDropRangeDel,
    Ticker::CompactionKeyDropUser,
    Ticker::DbMutexWaitMicros,
    Ticker::GetUpdatesSinceCalls,
    Ticker::FilesDeletedImmediately,
    Ticker::ErrorHandlerBgErrorCount,
    Ticker::ErrorHandlerBgIoErrorCount,
    // With `cache_index_and_filter_blocks` (table/reader.rs; tests/api/statistics_feature_tickers.rs).
    Ticker::BlockCacheIndexMiss,
    Ticker::BlockCacheIndexHit,
    Ticker::BlockCacheIndexAdd,
    Ticker::BlockCacheIndexBytesInsert,
    Ticker::BlockCacheFilterMiss,
    Ticker::BlockCacheFilterHit,
    Ticker::BlockCacheFilterAdd,
    Ticker::BlockCacheFilterBytesInsert,
    // A strict-capacity cache refusing an insert (table/reader.rs).
    Ticker::BlockCacheAddFailures,
    // The row cache (db/table_cache.rs).
    Ticker::RowCacheHit,
    Ticker::RowCacheMiss,
    // FIFO compaction's deletions, by reason (db/compact.rs).
    Ticker::FifoMaxSizeCompactions,
    Ticker::FifoTtlCompactions,
    Ticker::FifoChangeTemperatureCompactions,
    // Integrated BlobDB, where RocksDB 11.8.1's counts them: blob file bytes and syncs
    // (blob/writer.rs, blob/reader.rs), the blob cache (blob/reader.rs BlobFetcher), garbage
    // collection's relocations (compaction/job.rs, db/compact.rs);
    // tests/api/statistics_blob_tickers.rs.
    Ticker::BlobDbBlobFileBytesWritten,
    Ticker::BlobDbBlobFileBytesRead,
    Ticker::BlobDbBlobFileSynced,
    Ticker::BlobDbCacheMiss,
    Ticker::BlobDbCacheHit,
    Ticker::BlobDbCacheAdd,
    Ticker::BlobDbCacheAddFailures,
    Ticker::BlobDbCacheBytesRead,
    Ticker::BlobDbCacheBytesWrite,
    Ticker::BlobDbGcNumKeysRelocated,
    Ticker::BlobDbGcBytesRelocated,
    // A merge operator's failure, wherever a full merge runs (merge_operator.rs;
    // tests/api/statistics_merge_failures.rs).
    Ticker::NumberMergeFailures,
    // `read_amp_bytes_per_bit`'s bitmap of each data block read (table/block.rs
    // ReadAmpBitmap; tests/api/read_amp_bitmap.rs).
    Ticker::ReadAmpEstimateUsefulBytes,
    Ticker::ReadAmpTotalReadBytes,
    // An iterator's range conversion (`min_tombstones_for_range_conversion`; shale-engine
    // iter/db_iter.rs RangeConv; tests/api/option_rows_mtrc.rs).
    Ticker::ReadPathRangeTombstonesInserted,
    Ticker::ReadPathRangeTombstonesDiscarded,
];

/// Why Shale does not count `t` (None: it does, see [`COUNTED_TICKERS`]). Most name features
/// Shale does not have, where RocksDB also reads 0 without them; the rest are left to do and
/// say where they would be counted.
pub fn why_not_counted(t: Ticker) -> Option<&'static str> {
    use Ticker::*;
    if COUNTED_TICKERS.contains(&t) {
        return None;
    }
    let name = t.name();
    Some(match t {
        BlockCacheIndexAddRedundant | BlockCacheFilterAddRedundant => {
            "not counted: the cache's insert does not report a key already present \
             (cache/block_cache.rs), so two readers that miss the same index or filter block \
             at once and both insert it are not told apart"
        }
        BlockCacheCompressionDictMiss
        | BlockCacheCompressionDictHit
        | BlockCacheCompressionDictAdd
        | BlockCacheCompressionDictBytesInsert
        | BlockCacheCompressionDictAddRedundant => {
            "compression dictionaries are held by the table reader, never in the block cache"
        }
        BlockCacheAddRedundant | BlockCacheDataAddRedundant => {
            "not counted: the cache's insert does not report a key already present \
             (cache/block_cache.rs), so two readers inserting the same block are not told apart"
        }
        SecondaryCacheHits
        | SecondaryCacheFilterHits
        | SecondaryCacheIndexHits
        | SecondaryCacheDataHits
        | CompressedSecondaryCacheDummyHits
        | CompressedSecondaryCacheHits
        | CompressedSecondaryCachePromotions
        | CompressedSecondaryCachePromotionSkips => "no secondary cache in Shale",
        PersistentCacheHit | PersistentCacheMiss => "no persistent cache in Shale",
        SimBlockCacheHit | SimBlockCacheMiss => "no simulated cache in Shale",
        CompactionRangeDelDropObsolete => {
            "not counted yet: range tombstones dropped at the bottommost level are not told \
             apart in compaction/job.rs"
        }
        CompactionOptimizedDelDropObsolete => {
            "no optimized deletion marking (SingleDelete optimisation) in Shale"
        }
        CompactionCancelled | CompactionAborted => "not counted yet (db/compact.rs)",
        NumberIterSkip => "not counted yet: internal entries skipped inside the iterator (iter/, issue 13's)",
        WalPrecreateHit
        | WalPrecreateMiss
        | WalPrecreateWaited
        | WalPrecreateWaitMicros
        | WalPrecreateFailed => "Shale does not create WAL files ahead of use",
        CompactReadBytesMarked
        | CompactReadBytesPeriodic
        | CompactReadBytesTtl
        | CompactWriteBytesMarked
        | CompactWriteBytesPeriodic
        | CompactWriteBytesTtl => "no marked-for-compaction, periodic or TTL compactions in Shale",
        NumberDirectLoadTableProperties => "not counted yet (table properties read at open)",
        NumberSuperversionAcquires | NumberSuperversionReleases | NumberSuperversionCleanups => {
            "not counted yet (db/cf.rs SuperVersion)"
        }
        NumberBlockCompressed
        | NumberBlockDecompressed
        | BytesCompressedFrom
        | BytesCompressedTo
        | BytesCompressionBypassed
        | BytesCompressionRejected
        | NumberBlockCompressionBypassed
        | NumberBlockCompressionRejected
        | BytesDecompressedFrom
        | BytesDecompressedTo => {
            "not counted yet: block compression happens in table/format.rs and builder.rs, \
             which take no statistics"
        }
        MergeOperationTotalTime => "not timed yet: merge operators run untimed (merge_operator.rs)",
        FilterOperationTotalTime => "not timed yet (compaction filters, compaction/job.rs)",
        CompactionCpuTotalTime => "not timed yet (per-thread CPU time of compaction jobs)",
        RateLimiterBytesRead
        | RateLimiterRequestsRead
        | RateLimiterDelayedRequestsRead
        | RateLimiterTotalWaitMicrosRead => {
            "zero, as in RocksDB: rust-rocksdb's rate limiters are kWritesOnly, so no read asks \
             them (rate_limiter.rs)"
        }
        TxnPrepareMutexOverhead
        | TxnOldCommitMapMutexOverhead
        | TxnDuplicateKeyOverhead
        | TxnSnapshotMutexOverhead
        | TxnGetTryAgain => "not counted by transactions yet (issue 16)",
        FilesMarkedTrash | FilesDeletedFromTrashQueue => "no SstFileManager trash in Shale",
        ErrorHandlerBgRetryableIoErrorCount
        | ErrorHandlerAutoresumeCount
        | ErrorHandlerAutoresumeRetryTotalCount
        | ErrorHandlerAutoresumeSuccessCount => "not counted yet (db/error_handler.rs)",
        MemtablePayloadBytesAtFlush | MemtableGarbageBytesAtFlush => "not counted yet (db/flush.rs)",
        VerifyChecksumReadBytes => "not counted yet (verify_checksum)",
        BackupReadBytes | BackupWriteBytes | CheckpointReadBytes | CheckpointWriteBytes => {
            "not counted yet (backup.rs, checkpoint.rs: issue 17's)"
        }
        RemoteCompactReadBytes | RemoteCompactWriteBytes | RemoteCompactResumedBytes => {
            "no remote compaction in Shale"
        }
        LastLevelSeekFiltered
        | LastLevelSeekFilterMatch
        | LastLevelSeekData
        | LastLevelSeekDataUsefulNoFilter
        | LastLevelSeekDataUsefulFilterMatch
        | NonLastLevelSeekFiltered
        | NonLastLevelSeekFilterMatch
        | NonLastLevelSeekData
        | NonLastLevelSeekDataUsefulNoFilter
        | NonLastLevelSeekDataUsefulFilterMatch => {
            "not counted yet: the table reader does not know its level"
        }
        BlockChecksumComputeCount | BlockChecksumMismatchCount => {
            "not counted yet: checksums are verified in table/format.rs, which takes no statistics"
        }
        MultigetCoroutineCount | FileSubmitAsyncReadFallback => {
            "no asynchronous MultiGet and no io_uring submission in Shale (async_io's background \
             reads are plain reads on a thread: table/prefetch.rs)"
        }
        ReadAsyncMicros | AsyncReadErrorCount => {
            "not counted yet: async_io's background reads (table/prefetch.rs) count their bytes \
             and waits, not the time to start one or a failed one (its error fails the read)"
        }
        TableOpenPrefetchTailMiss | TableOpenPrefetchTailHit => "not counted yet (table open reads)",
        TimestampFilterTableChecked | TimestampFilterTableFiltered => {
            "not counted yet: reads with a timestamp do not skip tables by their timestamp \
             range (db/timestamps.rs), which is where RocksDB counts these"
        }
        ReadaheadTrimmed => {
            "not counted yet: an iterator's readahead (table/prefetch.rs) is not trimmed to \
             iterate_upper_bound and the block cache (auto_readahead_size)"
        }
        PrefetchMemoryBytesGranted | PrefetchMemoryBytesReleased | PrefetchMemoryRequestsBlocked => {
            "no prefetch memory limit in Shale: each iterator's readahead buffer is its own"
        }
        SstFooterCorruptionCount | FileReadCorruptionRetryCount | FileReadCorruptionRetrySuccessCount => {
            "not counted yet: Shale does not retry corrupt reads"
        }
        NumberWbwiIngest => "no WriteBatchWithIndex ingestion in Shale",
        SstUserDefinedIndexLoadFailCount => "no user-defined indexes in Shale",
        MultiscanPrepareCalls
        | MultiscanPrepareErrors
        | MultiscanBlocksPrefetched
        | MultiscanBlocksFromCache
        | MultiscanPrefetchBytes
        | MultiscanPrefetchBlocksWasted
        | MultiscanIoRequests
        | MultiscanIoCoalescedNonadjacent
        | MultiscanSeekErrors => "no multiscan in Shale",
        FileOpenMetadataRetrieved | FileOpenMetadataPassed => "not counted yet (table cache open)",
        ManifestValidationFailureCount => "not counted yet (version/manifest)",
        FlushReasonWriteBufferFull | FlushReasonWriteBufferManager | FlushReasonMemtableMaxRangeDeletions => {
            "not counted yet: flushes do not carry RocksDB's reasons (db/flush.rs)"
        }
        AtomicFlushRequestReasonWriteBufferFull
        | AtomicFlushRequestReasonWriteBufferManager
        | AtomicFlushRequestReasonMemtableMaxRangeDeletions
        | AtomicFlushRequestReasonOther => {
            "not counted yet: atomic flushes do not carry RocksDB's request reasons (db/flush.rs)"
        }
        _ if name.starts_with("rocksdb.blobdb") => {
            "counted only by RocksDB's legacy stacked BlobDB (utilities/blob_db), which \
             rust-rocksdb does not open; RocksDB 11.8.1's integrated BlobDB, which Shale's is, \
             never counts it (it reads 0 in RocksDB too)"
        }
        _ => "not counted yet",
    })
}

/// A database iterator's counts (RocksDB's `DBIter` and its `LocalStatistics`): creation and
/// deletion, seeks (timed into `rocksdb.db.seek.micros`, counted at once as RocksDB does),
/// and `next`/`prev` steps, kept in plain fields and added to the statistics when the
/// iterator is dropped, so a scan pays no atomic add per step.
pub struct IterCounts {
    stats: Option<std::sync::Arc<Statistics>>,
    next: u64,
    next_found: u64,
    prev: u64,
    prev_found: u64,
    bytes: u64,
}

impl IterCounts {
    pub fn new(stats: Option<std::sync::Arc<Statistics>>) -> Self {
        if let Some(s) = &stats {
            s.record_tick(Ticker::NoIteratorCreated, 1);
        }
        IterCounts { stats, next: 0, next_found: 0, prev: 0, prev_found: 0, bytes: 0 }
    }

    /// Whether the bytes of the entries an iterator lands on are counted: statistics on, or
    /// this thread's perf level counts (`iter_read_bytes`). When not, a step need not read
    /// the entry's key and value lengths.
    #[inline]
    pub fn counts_bytes(&self) -> bool {
        self.stats.is_some() || crate::perf::level() >= crate::perf::PerfStatsLevel::EnableCount as u8
    }

    /// Starts timing a seek (None when nothing is timed).
    #[inline]
    pub fn seek_start(&self) -> Option<Instant> {
        self.stats.as_ref().filter(|s| s.timers_enabled()).map(|_| Instant::now())
    }

    /// A seek ended; `found`: the bytes of the entry it landed on.
    #[inline]
    pub fn seek_done(&self, started: Option<Instant>, timed: bool, found: Option<usize>) {
        // The perf context's counts, as RocksDB's DBIter::Seek.
        crate::perf::count(crate::perf::Field::IterSeekCount, 1);
        if let Some(n) = found {
            crate::perf::count(crate::perf::Field::IterReadBytes, n as u64);
        }
        let Some(s) = &self.stats else { return };
        s.record_tick(Ticker::NumberDbSeek, 1);
        if let Some(n) = found {
            s.record_tick(Ticker::NumberDbSeekFound, 1);
            s.record_tick(Ticker::IterBytesRead, n as u64);
        }
        if let (Some(t), true) = (started, timed) {
            s.report_time(Histogram::DbSeek, t.elapsed().as_micros() as u64);
        }
    }

    #[inline]
    pub fn next_done(&mut self, found: Option<usize>) {
        crate::perf::count(crate::perf::Field::IterNextCount, 1);
        self.next += 1;
        if let Some(n) = found {
            crate::perf::count(crate::perf::Field::IterReadBytes, n as u64);
            self.next_found += 1;
            self.bytes += n as u64;
        }
    }

    #[inline]
    pub fn prev_done(&mut self, found: Option<usize>) {
        crate::perf::count(crate::perf::Field::IterPrevCount, 1);
        self.prev += 1;
        if let Some(n) = found {
            crate::perf::count(crate::perf::Field::IterReadBytes, n as u64);
            self.prev_found += 1;
            self.bytes += n as u64;
        }
    }

    /// Adds the steps counted so far to the statistics.
    pub fn flush(&mut self) {
        if let Some(s) = &self.stats {
            for (t, n) in [
                (Ticker::NumberDbNext, self.next),
                (Ticker::NumberDbNextFound, self.next_found),
                (Ticker::NumberDbPrev, self.prev),
                (Ticker::NumberDbPrevFound, self.prev_found),
                (Ticker::IterBytesRead, self.bytes),
            ] {
                if n > 0 {
                    s.record_tick(t, n);
                }
            }
        }
        (self.next, self.next_found, self.prev, self.prev_found, self.bytes) = (0, 0, 0, 0, 0);
    }
}

impl Drop for IterCounts {
    fn drop(&mut self) {
        self.flush();
        if let Some(s) = &self.stats {
            s.record_tick(Ticker::NoIteratorDeleted, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_follow_rocksdb_order_and_counts() {
        assert_eq!(Ticker::iter().len(), TICKER_COUNT);
        for (i, t) in Ticker::iter().enumerate() {
            assert_eq!(*t as usize, i, "{t:?}");
        }
        assert_eq!(Histogram::iter().len(), HIST_COUNT);
        for (i, h) in Histogram::iter().enumerate() {
            assert_eq!(*h as usize, i, "{h:?}");
        }
        // The printed histograms: rust-rocksdb's, plus the uncounted ones, nothing else.
        for name in ROCKSDB_HISTOGRAM_NAMES {
            assert!(name.parse::<Histogram>().is_ok() != UNCOUNTED_HISTOGRAMS.contains(&name), "{name}");
        }
    }

    #[test]
    fn every_ticker_is_counted_or_explained() {
        let mut uncounted = Vec::new();
        for t in Ticker::iter() {
            match why_not_counted(*t) {
                None => assert!(COUNTED_TICKERS.contains(t)),
                Some(why) => {
                    assert_ne!(why, "not counted yet", "{} needs its reason", t.name());
                    uncounted.push(format!("{}: {why}", t.name()));
                }
            }
        }
        assert_eq!(uncounted.len() + COUNTED_TICKERS.len(), TICKER_COUNT);
        println!("{} tickers not counted:\n{}", uncounted.len(), uncounted.join("\n"));
    }

    #[test]
    fn bucket_limits_are_rocksdb_s() {
        let l = bucket_limits();
        assert_eq!(l.len(), 109, "RocksDB's HistogramStat has 109 buckets");
        // RocksDB's familiar limits (its histogram dumps print `( 6, 10 ]`, `( 76, 110 ]` ...).
        assert_eq!(&l[..12], &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110]);
        assert_eq!(l[12], 170);
        assert_eq!(l[13], 250);
        assert_eq!(bucket_index(0), 0);
        assert_eq!(bucket_index(1), 0);
        assert_eq!(bucket_index(3), 2);
        assert_eq!(bucket_index(5), 4);
        assert_eq!(bucket_index(u64::MAX), l.len() - 1);
        // The table agrees with the search everywhere below its end and just past it.
        for v in 0..2000 {
            assert_eq!(bucket_index(v), search_bucket(l, v), "{v}");
        }
        // The compile-time walk is RocksDB's: each limit 1.5 times the last, two digits kept.
        let mut val = 2.0f64;
        for &limit in &l[2..] {
            val *= 1.5;
            let mut b = val as u64;
            let mut pow = 1u64;
            while b / 10 > 10 {
                b /= 10;
                pow *= 10;
            }
            assert_eq!(limit, b * pow);
        }
        assert!(val * 1.5 > u64::MAX as f64);
    }

    #[test]
    fn histogram_summary_and_percentiles() {
        let s = Statistics::new();
        s.set_level(StatsLevel::All);
        for v in 1..=100u64 {
            s.record_in_histogram(Histogram::DbGet, v);
        }
        let d = s.histogram_data(Histogram::DbGet);
        assert_eq!(d.count(), 100);
        assert_eq!(d.sum(), 5050);
        assert_eq!(d.max(), 100.0);
        assert_eq!(d.min(), 1.0);
        assert!((d.average() - 50.5).abs() < 1e-9);
        assert!((d.std_dev() - 28.866).abs() < 0.01, "{}", d.std_dev());
        // Interpolated within RocksDB's buckets: 50 falls in (34, 51]; 50 samples of 100 lie at or
        // below 34 + 16, so the median is 34 + 17 * (50 - 34) / 17 = 50.
        assert!((d.median() - 50.0).abs() < 1e-9, "{}", d.median());
        // P95 and P99 fall in (76, 110], interpolated past the largest sample: clamped to it.
        assert_eq!((d.p95(), d.p99()), (100.0, 100.0));
        let empty = s.histogram_data(Histogram::DbWrite);
        assert_eq!((empty.count(), empty.median(), empty.max()), (0, 0.0, 0.0));
    }

    #[test]
    fn levels_gate_tickers_histograms_and_timers() {
        let s = Statistics::new();
        assert_eq!(s.level(), rocks_level::EXCEPT_DETAILED_TIMERS, "RocksDB's default");
        s.set_level(StatsLevel::DisableAll);
        assert_eq!(s.level(), rocks_level::DISABLE_ALL);
        s.record_tick(Ticker::BytesRead, 5);
        s.record_in_histogram(Histogram::BytesPerRead, 5);
        assert_eq!(s.ticker_count(Ticker::BytesRead), 0);
        assert_eq!(s.histogram_data(Histogram::BytesPerRead).count(), 0);
        // rust-rocksdb's ExceptHistogramOrTimers is 2: RocksDB's kExceptTimers, so histograms
        // are recorded and timings are not.
        s.set_level(StatsLevel::ExceptHistogramOrTimers);
        assert_eq!(s.level(), rocks_level::EXCEPT_TIMERS);
        s.record_tick(Ticker::BytesRead, 5);
        s.record_in_histogram(Histogram::BytesPerRead, 5);
        s.report_time(Histogram::DbGet, 5);
        assert_eq!(s.ticker_count(Ticker::BytesRead), 5);
        assert_eq!(s.histogram_data(Histogram::BytesPerRead).count(), 1);
        assert_eq!(s.histogram_data(Histogram::DbGet).count(), 0);
        assert!(!s.timers_enabled());
        // ExceptTimers is 3: RocksDB's kExceptDetailedTimers, so timings are recorded.
        s.set_level(StatsLevel::ExceptTimers);
        assert_eq!(s.level(), rocks_level::EXCEPT_DETAILED_TIMERS);
        s.report_time(Histogram::DbGet, 5);
        assert_eq!(s.histogram_data(Histogram::DbGet).count(), 1);
        s.set_level(StatsLevel::ExceptDetailedTimers);
        assert_eq!(s.level(), rocks_level::EXCEPT_TIME_FOR_MUTEX);
        // ExceptTimeForMutex (5) and All (6, clamped) are both RocksDB's kAll.
        s.set_level(StatsLevel::ExceptTimeForMutex);
        assert_eq!(s.level(), rocks_level::ALL);
        s.set_level(StatsLevel::All);
        assert_eq!(s.level(), rocks_level::ALL);
        s.reset();
        assert_eq!(s.ticker_count(Ticker::BytesRead), 0);
        assert_eq!(s.histogram_data(Histogram::DbGet).count(), 0);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let s = std::sync::Arc::new(Statistics::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        s.record_tick(Ticker::NumberKeysWritten, 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(s.ticker_count(Ticker::NumberKeysWritten), 8000);
    }

    #[test]
    fn text_has_rocksdb_lines_in_rocksdb_format() {
        let s = Statistics::new();
        s.record_tick(Ticker::BlockCacheMiss, 3);
        s.record_in_histogram(Histogram::DbWrite, 7);
        let text = s.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), TICKER_COUNT + ROCKSDB_HISTOGRAM_NAMES.len());
        assert_eq!(lines[0], "rocksdb.block.cache.miss COUNT : 3");
        assert_eq!(lines[1], "rocksdb.block.cache.hit COUNT : 0");
        assert_eq!(
            lines[TICKER_COUNT + 1],
            "rocksdb.db.write.micros P50 : 7.000000 P95 : 7.000000 P99 : 7.000000 P100 : 7.000000 COUNT : 1 SUM : 7"
        );
        assert_eq!(
            lines[TICKER_COUNT],
            "rocksdb.db.get.micros P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 SUM : 0"
        );
        assert!(text.ends_with("rocksdb.open.and.compact.db.open.micros P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 SUM : 0\n"));
    }
}
