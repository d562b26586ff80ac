//! Shale: an LSM-tree key-value store with RocksDB's on-disk formats and the API of the
//! `rocksdb` crate (rust-rocksdb).
//!
//! Layout of the crate, top down: `db` (the database: open, write, read, flush,
//! compaction driver), `compaction` (picker and job), `version` (MANIFEST edits and file
//! sets), `table` (block-based SST format), `memtable`, `wal` (log format), `batch`
//! (WriteBatch encoding), `iter` (merging and user iterators), `cache`, `fs` (file-system
//! layer), and the shared `key`, `comparator`, `coding` and `error`.

pub mod backup;
pub mod batch;
pub mod blob;
pub mod cache;
mod cf_ref;
pub mod checkpoint;
pub use shale_base::coding;
pub mod compaction;
pub mod compaction_filter;
pub mod compaction_filter_factory;
pub mod comparator;
pub mod db;
mod env;
use shale_base::error;
mod ffi_util;
pub use shale_base::fs;
pub mod iter;
mod iter_range;
pub mod key;
pub mod memtable;
pub mod merge_operator;
pub mod merge_operators;
pub mod options;
mod options_api;
pub mod options_file;
mod options_load;
mod options_table;
pub mod perf;
pub mod properties;
pub(crate) mod rate_limiter;
mod slice_transform;
mod sst_file_writer;
pub mod statistics;
pub mod table;
mod thread_mode;
mod transactions;
pub mod version;
pub mod wal;
mod wal_iter;
pub mod wide_columns;

pub use batch::{WriteBatch, WriteBatchIterator, WriteBatchIteratorCf, WriteBatchWithTransaction};
pub use cf_ref::AsColumnFamilyRef;
pub use compaction_filter::Decision as CompactionDecision;
pub use comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator, U64TsComparator};
pub use db::{
    ColumnFamily, ColumnFamilyDescriptor, ColumnFamilyMetaData, ColumnFamilyTtl, DBCommon, DBIterator,
    DBIteratorWithThreadMode, DBPinnableSlice, DBRawIterator, DBRawIteratorWithThreadMode, DBWithThreadMode,
    Direction, IteratorMode, LiveFile, Range, Snapshot, SnapshotWithThreadMode, DB,
    DEFAULT_COLUMN_FAMILY_NAME,
};
pub use env::Env;
pub use error::{Error, ErrorKind, Result};
pub use ffi_util::CStrLike;
pub use iter_range::{IterateBounds, PrefixRange};
pub use merge_operator::MergeOperands;
pub use options::{
    BlockBasedOptions, Cache, DBCompressionType, DBRecoveryMode, FlushOptions, Options, ReadOptions,
    WriteOptions,
};
pub use options_api::{
    BlockBasedIndexType, BlockBasedTablePinningTier, BottommostLevelCompaction, ChecksumType, CompactOptions,
    CompactionPri, CuckooTableOptions, DBCompactionStyle, DBPath, DataBlockIndexType, FifoCompactOptions,
    InfoLogger, IngestExternalFileOptions, KeyEncodingType, LogLevel, LruCacheOptions, MemtableFactory,
    PlainTableFactoryOptions, ReadTier, UniversalCompactOptions, UniversalCompactionStopStyle,
    WaitForCompactOptions, WriteBufferManager,
};
pub use perf::{PerfContext, PerfMetric, PerfStatsLevel};
pub use slice_transform::SliceTransform;
pub use sst_file_writer::SstFileWriter;
pub use table::builder::IndexShorteningMode;
pub use thread_mode::{
    BoundColumnFamily, ColumnFamilyRef, DBAccess, MultiThreaded, SingleThreaded, ThreadMode,
};
pub use transactions::{
    OptimisticTransactionDB, OptimisticTransactionOptions, Transaction, TransactionDB, TransactionDBOptions,
    TransactionOptions,
};
pub use wal_iter::DBWALIterator;
