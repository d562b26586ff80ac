//! Shale's LSM engine, between the on-disk formats (`shale-format`) and the rust-rocksdb
//! facade (`shale`). It knows nothing of rust-rocksdb's names: it runs on its own
//! configuration ([`config::DbConfig`], [`config::CfConfig`], [`config::MemTableConfig`]) and
//! its own callbacks ([`merge::MergeOperatorCore`], [`compaction::job::FilterDecision`]),
//! which the facade builds from the user's `Options` once per change.
//!
//! - `memtable`: the skip list and its arena, the memtable Bloom filter, the write buffer
//!   manager's accounting.
//! - `iter`: the internal iterators (merging, level, range deletions) and `DBIter`, which
//!   turns internal entries into what a user sees at a sequence number.
//! - `version`: versions, the builder that applies edits, the MANIFEST (writer, recovery,
//!   the one replay `ldb` also uses).
//! - `compaction`: the pure pickers (level, universal, FIFO, TTL), the compaction job, and
//!   the remote-compaction service's wire format.
//! - `config`: the engine's database-wide, per-family and per-call settings; `merge`: the
//!   merge operator interface.
//! - `batch`: RocksDB's WriteBatch encoding (`Batch`), what the write path applies and the
//!   WAL holds.
//! - `db`: the database over them: `DbInner` and its locks (`db/mod.rs`), the write path,
//!   WAL sync, flush, the compaction driver, the scheduler, the open's steps (recovery, WAL
//!   replay, new WAL and MANIFEST), read-only and secondary instances, point reads and the
//!   merged iterator of a SuperVersion, snapshots, properties, ingestion, repair's MANIFEST
//!   rebuild, the info LOG. It calls the layer above only through `db::layer_hooks`
//!   (the OPTIONS file, a family's options in the LOG) and the opaque record each family's
//!   `db::cf_settings::CfSettings` keeps beside its `CfConfig`.
//!
//! This is an internal crate of Shale: items are `pub` where the facade (`shale`) or the
//! tools (`shale-cli`) use them. It may import `shale-base` and `shale-format` only. For the
//! paths inside the moved modules, the format's modules are re-exported under the names they
//! had in `shale` (`crate::key`, `crate::table`, ...).

pub use shale_base::error::{Error, ErrorKind, Result};
pub use shale_base::{coding, error, fs};
pub use shale_format::{
    blob, cache, comparator, file_checksum, key, options_file, perf, rate_limiter, slice_transform,
    statistics, table, wal, wide_columns,
};

pub mod batch;
pub mod blob_direct;
pub mod compaction;
pub mod config;
pub mod db;
pub mod iter;
pub mod memtable;
pub mod merge;
pub mod read_sample;
pub mod version;
