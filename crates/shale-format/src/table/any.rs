//! The table-format dispatch: which reader opens a table file (by the magic number in its
//! last 8 bytes) and which builder writes one (by the column family's table factory).
//!
//! ```text
//! magic (last 8 bytes)                    reader
//! 0x88e241b785f4cff7, 0xdb4775248b80fb57  block-based  table/reader.rs   (docs/sst.md)
//! 0x8242229663bf9564, 0x4f3418eb7a8f13b8  plain        table/plain/      (docs/plain-table-format.md)
//! 0x926789d0c5f17873                      cuckoo       table/cuckoo/     (docs/cuckoo-table-format.md)
//! ```
//! Dispatch is one `match` on an enum per call (a point lookup or an iterator's creation),
//! never a trait object per block read: the block-based read path is unchanged.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::InternalIterator;
use crate::slice_transform::SliceTransformRef;

use super::builder::{TableBuildResult, TableBuilder, TableBuilderOptions};
use super::cuckoo::{CuckooOptions, CuckooTable, CuckooTableBuilder};
use super::format::{BLOCK_BASED_TABLE_MAGIC, LEGACY_BLOCK_BASED_TABLE_MAGIC};
use super::meta_tail::{read_magic, CUCKOO_TABLE_MAGIC, LEGACY_PLAIN_TABLE_MAGIC, PLAIN_TABLE_MAGIC};
use super::plain::{PlainTable, PlainTableBuilder, PlainTableOptions};
use super::properties::TableProperties;
use super::reader::MetaCachePolicy;
use super::reader::{PrefixSeek, Table, TableReaderOptions};

/// The table format a column family writes (RocksDB's table factory).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TableFormat {
    #[default]
    BlockBased,
    Plain(PlainTableOptions),
    Cuckoo(CuckooOptions),
}

impl TableFormat {
    /// RocksDB's factory name, as the OPTIONS file writes it.
    pub fn factory_name(&self) -> &'static str {
        match self {
            TableFormat::BlockBased => "BlockBasedTable",
            TableFormat::Plain(_) => "PlainTable",
            TableFormat::Cuckoo(_) => "CuckooTable",
        }
    }
}

/// An open table of any format.
#[derive(Clone)]
pub enum AnyTable {
    Block(Arc<Table>),
    Plain(Arc<PlainTable>),
    Cuckoo(Arc<CuckooTable>),
}

impl AnyTable {
    /// Opens the table `file` with the reader its magic number names. `largest_seqno` and
    /// `prefix_extractor` are the block-based reader's (see `Table::open_for_cf`);
    /// `format` is the column family's table factory (a plain table's `full_scan_mode`).
    pub fn open_for_cf(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
        largest_seqno: u64,
        prefix_extractor: Option<SliceTransformRef>,
        format: &TableFormat,
        meta: MetaCachePolicy,
    ) -> Result<AnyTable> {
        let name = opts.file_name.clone();
        match read_magic(file.as_ref(), file_size, &name)? {
            BLOCK_BASED_TABLE_MAGIC | LEGACY_BLOCK_BASED_TABLE_MAGIC => {
                Table::open_for_cf_cached(file, file_size, opts, largest_seqno, prefix_extractor, meta)
                    .map(AnyTable::Block)
            }
            PLAIN_TABLE_MAGIC | LEGACY_PLAIN_TABLE_MAGIC => {
                let full_scan = matches!(format, TableFormat::Plain(p) if p.full_scan_mode);
                PlainTable::open_for_cf(file, file_size, opts.icmp, &name, full_scan, prefix_extractor)
                    .map(AnyTable::Plain)
            }
            CUCKOO_TABLE_MAGIC => CuckooTable::open(file, file_size, opts.icmp, &name).map(AnyTable::Cuckoo),
            magic => Err(Error::corruption(format!(
                "Bad table magic number: found {magic:#x}, not a block-based, plain or cuckoo table: {name} offset {}",
                file_size - 8
            ))),
        }
    }

    /// `open_for_cf` outside a column family (any largest seqno, no prefix extractor).
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
    ) -> Result<AnyTable> {
        Self::open_for_cf(
            file,
            file_size,
            opts,
            crate::key::MAX_SEQUENCE_NUMBER,
            None,
            &TableFormat::BlockBased,
            MetaCachePolicy::default(),
        )
    }

    /// The block-based reader, if this is a block-based table.
    pub fn as_block(&self) -> Option<&Arc<Table>> {
        match self {
            AnyTable::Block(t) => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub fn get(
        &self,
        lookup_ikey: &[u8],
        reads: impl Into<super::reader::BlockReads>,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self {
            AnyTable::Block(t) => t.get(lookup_ikey, reads),
            AnyTable::Plain(t) => t.get(lookup_ikey),
            AnyTable::Cuckoo(t) => t.get(lookup_ikey),
        }
    }

    /// Key anchors for splitting a compaction (`Table::key_anchors`); empty for plain and
    /// cuckoo tables (RocksDB forms no subcompactions over plain tables).
    pub fn key_anchors(&self) -> Result<Vec<(Vec<u8>, u64)>> {
        match self {
            AnyTable::Block(t) => t.key_anchors(),
            AnyTable::Plain(_) | AnyTable::Cuckoo(_) => Ok(Vec::new()),
        }
    }

    pub fn iter(&self, reads: impl Into<super::reader::BlockReads>) -> Box<dyn InternalIterator> {
        self.iter_with(reads, None)
    }

    /// An iterator; block-based tables check prefix filters as `prefix_seek` says.
    pub fn iter_with(
        &self,
        reads: impl Into<super::reader::BlockReads>,
        prefix_seek: Option<Arc<PrefixSeek>>,
    ) -> Box<dyn InternalIterator> {
        self.iter_bounded(reads, prefix_seek, None)
    }

    /// `iter_with` with RocksDB's `auto_readahead_size` upper bound (block-based tables:
    /// `Table::iter_bounded`; the other formats read whole files or mapped memory).
    pub fn iter_bounded(
        &self,
        reads: impl Into<super::reader::BlockReads>,
        prefix_seek: Option<Arc<PrefixSeek>>,
        readahead_upper: Option<Arc<Vec<u8>>>,
    ) -> Box<dyn InternalIterator> {
        match self {
            AnyTable::Block(t) => t.iter_bounded(reads, prefix_seek, readahead_upper),
            AnyTable::Plain(t) => t.iter(),
            AnyTable::Cuckoo(t) => t.iter(),
        }
    }

    /// The file left the database: a block-based reader erases its cached blocks when it is
    /// dropped, with this effort (RocksDB's `uncache_aggressiveness`; other formats keep no
    /// blocks in the cache).
    pub fn mark_obsolete(&self, uncache_aggressiveness: u32) {
        if let AnyTable::Block(t) = self {
            t.mark_obsolete(uncache_aggressiveness);
        }
    }

    pub fn properties(&self) -> &TableProperties {
        match self {
            AnyTable::Block(t) => t.properties(),
            AnyTable::Plain(t) => t.properties(),
            AnyTable::Cuckoo(t) => t.properties(),
        }
    }

    /// Range tombstones (only block-based tables hold them).
    pub fn range_tombstones(&self) -> &[(Vec<u8>, Vec<u8>)] {
        match self {
            AnyTable::Block(t) => t.range_tombstones(),
            _ => &[],
        }
    }

    pub fn approximate_memory_usage(&self) -> usize {
        match self {
            AnyTable::Block(t) => t.approximate_memory_usage(),
            AnyTable::Plain(t) => t.approximate_memory_usage(),
            AnyTable::Cuckoo(t) => t.approximate_memory_usage(),
        }
    }

    /// Data blocks read from the file since open (plain and cuckoo tables read theirs at open).
    pub fn data_blocks_read(&self) -> u64 {
        match self {
            AnyTable::Block(t) => t.data_blocks_read(),
            _ => 0,
        }
    }

    /// The approximate file offset where `ikey` would be (RocksDB's cuckoo reader answers 0).
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        match self {
            AnyTable::Block(t) => t.approximate_offset_of(ikey),
            AnyTable::Plain(t) => t.approximate_offset_of(ikey),
            AnyTable::Cuckoo(_) => 0,
        }
    }
}

/// A table builder of any format.
pub enum AnyTableBuilder {
    Block(Box<TableBuilder>),
    Plain(Box<PlainTableBuilder>),
    Cuckoo(Box<CuckooTableBuilder>),
}

impl AnyTableBuilder {
    /// A builder of the format `opts.table_format` names.
    pub fn new(opts: TableBuilderOptions, file: Box<dyn WritableFile>) -> Self {
        match opts.table_format.clone() {
            TableFormat::BlockBased => AnyTableBuilder::Block(Box::new(TableBuilder::new(opts, file))),
            TableFormat::Plain(p) => AnyTableBuilder::Plain(Box::new(PlainTableBuilder::new(opts, p, file))),
            TableFormat::Cuckoo(c) => {
                AnyTableBuilder::Cuckoo(Box::new(CuckooTableBuilder::new(opts, c, file)))
            }
        }
    }

    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        match self {
            AnyTableBuilder::Block(b) => b.add(ikey, value),
            AnyTableBuilder::Plain(b) => b.add(ikey, value),
            AnyTableBuilder::Cuckoo(b) => b.add(ikey, value),
        }
    }

    pub fn add_range_tombstone(&mut self, start_ikey: &[u8], end_user_key: &[u8]) -> Result<()> {
        match self {
            AnyTableBuilder::Block(b) => b.add_range_tombstone(start_ikey, end_user_key),
            AnyTableBuilder::Plain(b) => b.add_range_tombstone(start_ikey, end_user_key),
            AnyTableBuilder::Cuckoo(b) => b.add_range_tombstone(start_ikey, end_user_key),
        }
    }

    pub fn set_user_property(&mut self, name: &str, value: Vec<u8>) {
        match self {
            AnyTableBuilder::Block(b) => b.set_user_property(name, value),
            AnyTableBuilder::Plain(b) => b.set_user_property(name, value),
            AnyTableBuilder::Cuckoo(b) => b.set_user_property(name, value),
        }
    }

    /// The table's sequence-number-to-time mapping (`seqno_time.rs`): block-based tables
    /// store it; RocksDB's plain and cuckoo builders drop it.
    pub fn set_seqno_time_mapping(&mut self, encoded: Vec<u8>) {
        if let AnyTableBuilder::Block(b) = self {
            b.set_seqno_time_mapping(encoded);
        }
    }

    pub fn num_entries(&self) -> u64 {
        match self {
            AnyTableBuilder::Block(b) => b.num_entries(),
            AnyTableBuilder::Plain(b) => b.num_entries(),
            AnyTableBuilder::Cuckoo(b) => b.num_entries(),
        }
    }

    pub fn file_size(&self) -> u64 {
        match self {
            AnyTableBuilder::Block(b) => b.file_size(),
            AnyTableBuilder::Plain(b) => b.file_size(),
            AnyTableBuilder::Cuckoo(b) => b.file_size(),
        }
    }

    /// RocksDB's `EstimatedFileSize`: [`Self::file_size`] plus, for a block-based table
    /// with parallel compression, the data blocks still being compressed.
    pub fn estimated_file_size(&self) -> u64 {
        match self {
            AnyTableBuilder::Block(b) => b.estimated_file_size(),
            _ => self.file_size(),
        }
    }

    /// RocksDB's `TableBuilder::EstimatedTailSize`: the block-based builder's estimate; 0
    /// for the other formats, as RocksDB's default.
    pub fn estimated_tail_size(&self) -> u64 {
        match self {
            AnyTableBuilder::Block(b) => b.estimated_tail_size(),
            _ => 0,
        }
    }

    pub fn finish(self) -> Result<TableBuildResult> {
        match self {
            AnyTableBuilder::Block(b) => b.finish(),
            AnyTableBuilder::Plain(b) => b.finish(),
            AnyTableBuilder::Cuckoo(b) => b.finish(),
        }
    }
}
