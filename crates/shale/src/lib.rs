//! Shale: an LSM-tree key-value store with RocksDB's on-disk formats and the API of the
//! `rocksdb` crate (rust-rocksdb).
//!
//! This crate is the rust-rocksdb facade over the engine (`shale_engine::db`): `db` (the
//! `DB` types and thread modes, the calls on them, and the open path that turns `Options`
//! and column-family descriptors into the engine's configuration), `write_batch`
//! (rust-rocksdb's WriteBatch over the engine's `Batch`), and the rest of the rust-rocksdb
//! API (`options` and the one option table, transactions, backup, checkpoint, `perf`,
//! `SstFileWriter`). `options_engine` turns the user's `Options` into the engine's
//! configuration. Inside the crate the options tier (`options*`, `cf_descriptor`, `env`)
//! imports nothing of `db`, and `db` none of the API modules above it (`transactions`,
//! `backup`, `checkpoint`, `perf`, ...): docs/architecture.md, "Crates".
//!
//! Below it, three crates (docs/architecture.md, "Crates"): `shale-engine` (the database:
//! the WriteBatch encoding, memtables, iterators, versions and the MANIFEST, compaction
//! pickers and jobs, and `db`, on the engine's own config and per-call settings), `shale-format` (the on-disk formats: `key`, `comparator`, `wal`, `table`,
//! `blob`, `version::edit`, `options_file`, `wide_columns`, and the leaves they use) and
//! `shale-base` (`fs`, `coding`, `error`, checksums, compression). Their modules are used
//! here under the old names (`crate::version`, `crate::table`, ...).

pub mod backup;
pub mod write_batch;
pub use shale_format::blob;
pub use shale_format::cache;
/// The old name of `write_batch`, for the paths inside the crate.
pub use write_batch as batch;
mod cf_descriptor;
mod cf_ref;
pub mod checkpoint;
pub use shale_base::coding;
pub mod compaction_filter;
pub mod compaction_filter_factory;
pub use shale_format::comparator;
pub mod db;
mod env;
use shale_base::error;
mod ffi_util;
pub use shale_base::fs;
mod iter_range;
pub use shale_format::key;
pub mod merge_operator;
pub mod merge_operators;
pub mod options;
mod options_api;
mod options_dbfile;
mod options_dbmisc;
mod options_dbopt;
mod options_dbwal;
mod options_engine;
mod options_mfst;
pub use shale_format::options_file;
mod options_load;
mod options_table;
mod options_tbl;
pub use options_tbl::PrepopulateBlockCache;
pub mod perf;
pub mod properties;
pub(crate) use shale_format::rate_limiter;
use shale_format::slice_transform;
mod sst_file_writer;
pub use shale_format::statistics;
pub use shale_format::table;
mod transactions;
pub use shale_format::wal;
mod wal_iter;
pub use shale_format::wide_columns;

// The engine's modules, under the paths the facade's code has always used.
pub(crate) use shale_engine::{compaction, iter, memtable, version};

pub use batch::{WriteBatch, WriteBatchIterator, WriteBatchIteratorCf, WriteBatchWithTransaction};
pub use cf_ref::AsColumnFamilyRef;
pub use compaction_filter::Decision as CompactionDecision;
pub use comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator, U64TsComparator};
pub use db::thread_mode::{
    BoundColumnFamily, ColumnFamilyRef, DBAccess, MultiThreaded, SingleThreaded, ThreadMode,
};
pub use db::{
    ColumnFamily, ColumnFamilyDescriptor, ColumnFamilyMetaData, ColumnFamilyTtl, DBCommon, DBIterator,
    DBIteratorWithThreadMode, DBPinnableSlice, DBRawIterator, DBRawIteratorWithThreadMode, DBWithThreadMode,
    Direction, IteratorMode, LiveFile, Range, Snapshot, SnapshotWithThreadMode, StatsHistoryIterator, DB,
    DEFAULT_COLUMN_FAMILY_NAME, PERSISTENT_STATS_COLUMN_FAMILY_NAME,
};
pub use env::{Env, MockSystemClock, SystemClock};
pub use error::{Error, ErrorKind, Result};
pub use ffi_util::CStrLike;
pub use iter_range::{IterateBounds, PrefixRange};
pub use merge_operator::MergeOperands;
pub use options::{
    BlockBasedOptions, Cache, DBCompressionType, DBRecoveryMode, FlushOptions, Options, ReadOptions,
    SstPartitionerFactory, WriteOptions,
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
pub use transactions::{
    OptimisticTransactionDB, OptimisticTransactionOptions, Transaction, TransactionDB, TransactionDBOptions,
    TransactionOptions,
};
pub use wal_iter::DBWALIterator;
