//! The parts of a family's configuration that the database (flush, compaction driver,
//! reads, write path) reads besides the pickers: blob file settings, the table's metadata
//! caching rule, and the user's callbacks as the engine calls them. Built by the facade with
//! the rest of [`CfConfig`](super::CfConfig).

use std::sync::Arc;

use crate::compaction::filter::{CompactionFilterCore, CompactionFilterFactoryCore};
use crate::merge::MergeOperatorCore;
use crate::table::reader::MetaCachePolicy;
use shale_base::compression::CompressionType;

/// BlobDB's write-side settings (`enable_blob_files`, `min_blob_size`, `blob_file_size`,
/// `blob_compression_type`, `blob_file_starting_level`,
/// `blob_compaction_readahead_size`); garbage collection is [`BlobGc`](super::BlobGc).
#[derive(Debug, Clone, PartialEq)]
pub struct BlobSettings {
    pub enable_blob_files: bool,
    pub min_blob_size: u64,
    pub blob_file_size: u64,
    pub compression: CompressionType,
    /// `blob_compression_opts` (helper cfblob, issue 33): the codec's settings blobs are
    /// compressed with (level, zlib's window bits and strategy, ZSTD's checksum).
    pub compression_opts: shale_base::compression::CodecOpts,
    /// Flushes and compactions write blob files only at output levels at least this.
    pub file_starting_level: i32,
    pub compaction_readahead_size: u64,
    /// `prepopulate_blob_cache` kFlushOnly: a flush puts the blobs it writes into the
    /// family's blob cache.
    pub prepopulate_cache: bool,
    /// `enable_blob_direct_write` as sanitized (only with blob files): writes put values of
    /// at least `min_blob_size` into blob files themselves (`db/blob_direct.rs`). Taken
    /// when the family is opened; immutable.
    pub direct_write: bool,
    /// `blob_direct_write_partitions` as sanitized (at least 1): blob files open at once.
    pub direct_write_partitions: u32,
}

impl Default for BlobSettings {
    fn default() -> Self {
        BlobSettings {
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            compression: CompressionType::None,
            compression_opts: shale_base::compression::CodecOpts::default(),
            file_starting_level: 0,
            compaction_readahead_size: 0,
            prepopulate_cache: false,
            direct_write: false,
            direct_write_partitions: 1,
        }
    }
}

/// Which writers put the data blocks of the tables they write into the block cache
/// (RocksDB's `prepopulate_block_cache`: kDisable none, kFlushOnly flushes,
/// kFlushAndCompaction both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrepopulateBlocks {
    pub flushes: bool,
    pub compactions: bool,
}

/// When an index or filter block stays pinned (RocksDB's `PinningTier`, its fallbacks
/// resolved by the facade).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    Never,
    /// Level-0 tables no larger than 1.5 × `write_buffer_size` (flushed and similar).
    FlushedLike,
    Always,
}

/// How a family's tables keep their index and filter blocks (RocksDB's
/// `cache_index_and_filter_blocks` and the pinning tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaPinning {
    pub cache_index_and_filter_blocks: bool,
    pub high_priority: bool,
    /// An unpartitioned index and filter.
    pub unpartitioned: Pin,
    /// The top level of a partitioned index or filter.
    pub top_level: Pin,
    /// The partitions of a partitioned index or filter.
    pub partitions: Pin,
}

impl Default for MetaPinning {
    fn default() -> Self {
        MetaPinning {
            cache_index_and_filter_blocks: false,
            high_priority: true,
            unpartitioned: Pin::Never,
            // `pin_top_level_index_and_filter` is on by default.
            top_level: Pin::Always,
            partitions: Pin::Never,
        }
    }
}

impl MetaPinning {
    /// The policy of a table of `level` (None: not known) and `file_size`, in a family
    /// whose write buffers are `write_buffer_size` (RocksDB's
    /// `PrefetchIndexAndFilterBlocks`).
    pub fn policy(&self, level: Option<usize>, file_size: u64, write_buffer_size: usize) -> MetaCachePolicy {
        let flushed_like = level == Some(0) && file_size <= (1.5 * write_buffer_size as f64) as u64;
        let pinned = |p: Pin| match p {
            Pin::Never => false,
            Pin::FlushedLike => flushed_like,
            Pin::Always => true,
        };
        MetaCachePolicy {
            cache_index_and_filter_blocks: self.cache_index_and_filter_blocks,
            high_priority: self.high_priority,
            pin: pinned(self.unpartitioned),
            pin_top_level: pinned(self.top_level),
            pin_partitions: pinned(self.partitions),
        }
    }
}

/// The user's callbacks of a family, as the engine calls them.
#[derive(Clone, Default)]
pub struct CfCallbacks {
    pub merge_operator: Option<Arc<dyn MergeOperatorCore>>,
    /// Used when set, even with a factory (as RocksDB).
    pub compaction_filter: Option<Arc<dyn CompactionFilterCore>>,
    pub compaction_filter_factory: Option<Arc<dyn CompactionFilterFactoryCore>>,
}

impl CfCallbacks {
    /// The merge operator, borrowed.
    pub fn merge(&self) -> Option<&dyn MergeOperatorCore> {
        self.merge_operator.as_deref()
    }
}

impl std::fmt::Debug for CfCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CfCallbacks")
            .field("merge_operator", &self.merge_operator.as_ref().map(|m| m.name()))
            .field("compaction_filter", &self.compaction_filter.as_ref().map(|m| m.name()))
            .field("compaction_filter_factory", &self.compaction_filter_factory.as_ref().map(|m| m.name()))
            .finish()
    }
}
