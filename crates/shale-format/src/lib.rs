//! Shale's on-disk formats, below the engine: what the bytes of RocksDB's files are and how
//! to read and write them, one file at a time. No background threads, no database.
//!
//! - `key`: internal keys (`user_key | seq << 8 | type`), [`MAX_SEQUENCE_NUMBER`](key::MAX_SEQUENCE_NUMBER),
//!   the internal-key comparator; `comparator`: the user-key comparators.
//! - `wal`: the log format shared by write-ahead logs and MANIFEST files (reader, writer).
//! - `table`: block-based, plain and cuckoo tables, their blocks, properties and filters.
//! - `blob`: blob files (format, reader, writer) and blob indexes.
//! - `version::edit`: version edits, the MANIFEST's records (encode and decode);
//!   `version::progress`: RocksDB 11's compaction progress records.
//! - `file_checksum`: whole-file checksums of table and blob files (RocksDB's
//!   `FileChecksumGenCrc32c`).
//! - `filename`: the names of a database's files (`000012.log`, `MANIFEST-000005`, ...).
//! - `options_file`: the OPTIONS-NNNNNN text file.
//! - `wide_columns`: the wide-column entity encoding.
//!
//! With them, the leaves they use, which depend on nothing above: `iter` (the
//! `InternalIterator` trait and pinning), `cache` (the block cache tables read through),
//! `slice_transform` (prefix extractors), `rate_limiter`, `perf` (the per-thread perf
//! counters) and `statistics` (tickers and histograms).
//!
//! This is an internal crate of Shale: items are `pub` where the engine (`shale`) or the
//! tools (`shale-cli`) use them, not as a promise of a stable API. `shale` re-exports these
//! modules under their old names (`shale::table`, `shale::key`, ...). It may import
//! `shale-base` only.

pub use shale_base::error::{Error, ErrorKind, Result};
pub use shale_base::{coding, error, fs};

pub mod blob;
pub mod cache;
pub mod comparator;
pub mod file_checksum;
pub mod filename;
pub mod io_stats;
pub mod iter;
pub mod key;
pub mod options_file;
pub mod perf;
pub mod rate_limiter;
pub mod slice_transform;
pub mod statistics;
pub mod table;
pub mod version;
pub mod wal;
pub mod wide_columns;
