//! RocksDB's block-based table (SST) format: blocks, compression, properties, the
//! table builder and the table reader.

pub mod block;
pub mod block_iter;
pub mod builder;
pub(crate) mod data_block_hash;
pub mod deletion_collector;
pub use shale_base::compression;
pub mod filter;
pub mod format;
pub mod properties;
pub mod reader;

pub use builder::{TableBuildResult, TableBuilder, TableBuilderOptions};
pub use compression::CompressionType;
pub use format::{BlockHandle, ChecksumType, Footer};
pub use properties::TableProperties;
pub use reader::{PrefixSeek, Table, TableReaderOptions};
