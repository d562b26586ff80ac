//! Shale: an LSM-tree key-value store with RocksDB's on-disk formats and the API of the
//! `rocksdb` crate (rust-rocksdb).
//!
//! Layout of the crate, top down: `db` (the database: open, write, read, flush,
//! compaction driver), `compaction` (picker and job), `version` (MANIFEST edits and file
//! sets), `table` (block-based SST format), `memtable`, `wal` (log format), `batch`
//! (WriteBatch encoding), `iter` (merging and user iterators), `cache`, `fs` (file-system
//! layer), and the shared `key`, `comparator`, `coding` and `error`.

pub mod batch;
pub mod cache;
mod cf_ref;
pub use shale_base::coding;
pub mod compaction;
pub mod comparator;
pub mod db;
use shale_base::error;
pub use shale_base::fs;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod options;
pub mod options_file;
pub mod table;
pub mod version;
pub mod wal;

pub use batch::{WriteBatch, WriteBatchIterator};
pub use cf_ref::AsColumnFamilyRef;
pub use comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator};
pub use db::{
    ColumnFamily, ColumnFamilyDescriptor, DBIterator, DBPinnableSlice, DBRawIterator, Direction,
    IteratorMode, Snapshot, DB, DEFAULT_COLUMN_FAMILY_NAME,
};
pub use error::{Error, ErrorKind, Result};
pub use options::{
    BlockBasedOptions, Cache, DBCompressionType, DBRecoveryMode, FlushOptions, Options, ReadOptions,
    WriteOptions,
};
