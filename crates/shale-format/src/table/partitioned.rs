//! Reading partitioned (two-level) indexes and partitioned filters (written by
//! `partitioned_builder.rs`), as RocksDB writes them with
//! `index_type = kTwoLevelIndexSearch` (table property "rocksdb.block.based.table.index.type"
//! = 2) and `partition_filters = true` (metaindex key
//! "partitionedfilter.rocksdb.BuiltinBloomFilter").
//!
//! ```text
//! file : data block* | filter partition* | top-level filter index | meta blocks
//!        | index partition* | top-level index | metaindex | footer
//!
//! top-level index (footer's index handle, or "rocksdb.index" for format_version >= 6):
//!        an index block, entry = last separator of partition i -> handle of partition i
//! index partition i : an ordinary index block, separator -> data block handle
//! top-level filter index (metaindex "partitionedfilter.<policy>"):
//!        an index block, entry = key of filter partition j -> handle of filter partition j
//! filter partition j : an ordinary full filter (filter.rs)
//! ```
//! Both top levels and the index partitions use the table's index encoding: keys are
//! internal keys, or user keys when "rocksdb.index.key.is.user.key" is 1; values are full
//! handles, or (format_version >= 4, "rocksdb.index.value.is.delta.encoded" = 1) handles
//! delta-encoded against the entry before (the partitions of each kind are written one
//! after another, so the next offset is the previous offset + size + 5), full at each
//! restart point. A partitioned index never carries first keys (RocksDB's sub-index
//! builders are built with `include_first_key = false`).
//!
//! A filter partition's key is the index partition's key when filters are coupled to
//! index partitions, else ("rocksdb.block.based.table.decoupled.partitioned.filters" = 1,
//! RocksDB 9.7's option, the default since 10.6) the last user key added to the partition
//! followed by sequence number 0 and type deletion (the smallest internal key of that user
//! key). A lookup seeks the top-level filter index to its internal key and asks the
//! partition found, or the last partition when the key is past every entry (RocksDB's
//! `GetFilterPartitionHandle`). At each cut the writer also adds the prefix of the next
//! partition's first key to the partition it closes, and the prefix of its last key to the
//! next partition, so prefix seeks find the right partition too.
//!
//! [`PartitionedIndexIter`] walks the index partitions as one index (RocksDB's
//! `PartitionedIndexIterator`): a seek positions the top level, then the partition it
//! names, and steps over partitions whose entries are exhausted.

use std::sync::Arc;

use crate::error::Result;
use crate::key::InternalKeyComparator;

use super::block::{Block, IndexBlockIter, IndexFormat};
use super::format::BlockHandle;
use super::reader::{in_file, Table};

/// A cursor over a partitioned index: the top-level index and the partition it points at.
/// Errors carry the file name and the offset of the block they come from.
pub(super) struct PartitionedIndexIter {
    top: IndexBlockIter,
    /// The top-level index block's handle (named in errors).
    top_handle: BlockHandle,
    part: Option<IndexBlockIter>,
    part_handle: BlockHandle,
    icmp: InternalKeyComparator,
    format: IndexFormat,
    status: Result<()>,
}

impl PartitionedIndexIter {
    pub(super) fn new(
        top: Arc<Block>,
        top_handle: BlockHandle,
        icmp: InternalKeyComparator,
        format: IndexFormat,
    ) -> Self {
        PartitionedIndexIter {
            top: top.index_iter(&icmp, format.binary()),
            top_handle,
            part: None,
            part_handle: BlockHandle::default(),
            icmp,
            format,
            status: Ok(()),
        }
    }

    pub(super) fn valid(&self) -> bool {
        self.status.is_ok() && self.part.as_ref().is_some_and(|p| p.valid())
    }

    /// Loads the partition the top level is at; false (the cursor invalid, an error
    /// recorded) when the top level is exhausted or the partition cannot be read.
    fn load(&mut self, t: &Table) -> bool {
        if !self.top.valid() {
            self.part = None;
            if let Err(e) = self.top.status() {
                self.status = Err(in_file(e, t.file_name(), self.top_handle));
            }
            return false;
        }
        let h = self.top.handle();
        if self.part.is_some() && self.part_handle == h {
            return true;
        }
        match t.index_partition(h) {
            Ok(b) => {
                self.part = Some(b.index_iter(&self.icmp, self.format));
                self.part_handle = h;
                true
            }
            Err(e) => {
                self.part = None;
                self.status = Err(e);
                false
            }
        }
    }

    /// False (and the error recorded) when the partition cursor failed.
    fn part_ok(&mut self, t: &Table) -> bool {
        if let Some(Err(e)) = self.part.as_ref().map(|p| p.status()) {
            self.status = Err(in_file(e, t.file_name(), self.part_handle));
            self.part = None;
        }
        self.status.is_ok()
    }

    fn skip_forward(&mut self, t: &Table) {
        while self.part_ok(t) && !self.part.as_ref().is_some_and(|p| p.valid()) {
            if !self.top.valid() {
                self.part = None;
                return;
            }
            self.top.next();
            if !self.load(t) {
                return;
            }
            if let Some(p) = self.part.as_mut() {
                p.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self, t: &Table) {
        while self.part_ok(t) && !self.part.as_ref().is_some_and(|p| p.valid()) {
            if !self.top.valid() {
                self.part = None;
                return;
            }
            self.top.prev();
            if !self.load(t) {
                return;
            }
            if let Some(p) = self.part.as_mut() {
                p.seek_to_last();
            }
        }
    }

    pub(super) fn seek_to_first(&mut self, t: &Table) {
        self.status = Ok(());
        self.top.seek_to_first();
        if self.load(t) {
            if let Some(p) = self.part.as_mut() {
                p.seek_to_first();
            }
        }
        self.skip_forward(t);
    }

    pub(super) fn seek_to_last(&mut self, t: &Table) {
        self.status = Ok(());
        self.top.seek_to_last();
        if self.load(t) {
            if let Some(p) = self.part.as_mut() {
                p.seek_to_last();
            }
        }
        self.skip_backward(t);
    }

    /// Positions at the first index entry whose key is >= `target` (an internal key).
    pub(super) fn seek(&mut self, t: &Table, target: &[u8]) {
        self.status = Ok(());
        self.top.seek(target);
        if self.load(t) {
            if let Some(p) = self.part.as_mut() {
                p.seek(target);
            }
        }
        self.skip_forward(t);
    }

    pub(super) fn next(&mut self, t: &Table) {
        if let Some(p) = self.part.as_mut() {
            p.next();
        }
        self.skip_forward(t);
    }

    pub(super) fn prev(&mut self, t: &Table) {
        if let Some(p) = self.part.as_mut() {
            p.prev();
        }
        self.skip_backward(t);
    }

    pub(super) fn key(&self) -> &[u8] {
        self.part.as_ref().map(|p| p.key()).unwrap_or(&[])
    }

    pub(super) fn handle(&self) -> BlockHandle {
        self.part.as_ref().map(|p| p.handle()).unwrap_or_default()
    }

    pub(super) fn status(&self) -> Result<()> {
        self.status.clone()
    }
}
