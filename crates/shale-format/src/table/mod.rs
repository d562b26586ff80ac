//! RocksDB's table (SST) formats: the block-based table (blocks, compression, properties,
//! the table builder and the table reader), the plain table (`plain/`) and the cuckoo table
//! (`cuckoo/`), and the dispatch between them by footer magic number (`any.rs`).

pub mod any;
pub mod block;
pub mod block_iter;
pub mod builder;
pub mod cuckoo;
pub mod data_block_hash;
pub mod deletion_collector;
pub use shale_base::compression;
pub mod filter;
pub mod format;
pub mod hash_index;
pub mod meta_tail;
pub mod parallel;
mod partitioned;
mod partitioned_builder;
pub mod plain;
mod prefetch;
pub use prefetch::AutoReadahead;
pub mod properties;
pub mod read_pool;
pub mod reader;
pub mod seqno_time;
pub mod ts_pad;
pub mod unique_id;

pub use any::{AnyTable, AnyTableBuilder, TableFormat};
pub use builder::{TableBuildResult, TableBuilder, TableBuilderOptions, WarmCache};
pub use compression::CompressionType;
pub use format::{BlockHandle, ChecksumType, Footer};
pub use properties::TableProperties;
pub use reader::{PrefixSeek, Table, TableReaderOptions};
