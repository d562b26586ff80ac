//! Internal iterators: cursors over internal keys (`user_key | seq/type`) in internal-key
//! order. Memtables, blocks, tables, levels and the merged view all implement
//! [`InternalIterator`]; the user-facing iterator (`db::iter`) sits on top and hides
//! sequence numbers, deletions and range tombstones.

use crate::error::Result;

pub mod db_iter;
pub mod level;
pub mod merging;
pub mod range_del;

pub use db_iter::DBIter;
pub use level::{FileOpener, LevelFile, LevelIterator};
pub use merging::MergingIterator;
pub use range_del::{FragmentedTombstones, RangeTombstone, TombstoneFragment};

/// A cursor over sorted internal keys. After any positioning call the iterator is either
/// valid (on an entry) or not; an invalid iterator may carry an error in `status`.
pub trait InternalIterator: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    /// Positions at the first entry with key >= `target` (an internal key).
    fn seek(&mut self, target: &[u8]);
    /// Positions at the last entry with key <= `target` (an internal key).
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Requires `valid()`.
    fn next(&mut self);
    /// Requires `valid()`.
    fn prev(&mut self);
    /// The current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
    /// Whether the bytes of `value()` stay where they are, unchanged, for as long as this
    /// iterator lives, however it moves (RocksDB's `IsValuePinned`): a memtable's values
    /// live in its arena, which the iterator keeps alive. The user-facing iterator then
    /// points at them instead of copying them when it steps back. Requires `valid()`.
    fn value_pinned(&self) -> bool {
        false
    }
}

pub type BoxedIterator = Box<dyn InternalIterator>;

/// An iterator over an in-memory sorted vector of entries; used for tests and for small
/// sets such as range tombstone lists.
pub struct VecIterator {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    cmp: crate::key::InternalKeyComparator,
    pos: usize, // == entries.len() when invalid
}

impl VecIterator {
    /// `entries` must be sorted by `cmp`.
    pub fn new(entries: Vec<(Vec<u8>, Vec<u8>)>, cmp: crate::key::InternalKeyComparator) -> Self {
        let pos = entries.len();
        VecIterator { entries, cmp, pos }
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.pos = 0;
    }
    fn seek_to_last(&mut self) {
        self.pos = if self.entries.is_empty() { 0 } else { self.entries.len() - 1 };
    }
    fn seek(&mut self, target: &[u8]) {
        self.pos = self.entries.partition_point(|(k, _)| self.cmp.compare(k, target).is_lt());
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let n = self.entries.partition_point(|(k, _)| self.cmp.compare(k, target).is_le());
        self.pos = if n == 0 { self.entries.len() } else { n - 1 };
    }
    fn next(&mut self) {
        self.pos += 1;
    }
    fn prev(&mut self) {
        self.pos = if self.pos == 0 { self.entries.len() } else { self.pos - 1 };
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// An empty iterator that reports `err`: stands in when a view cannot be built.
pub struct ErrorIterator {
    err: crate::Error,
}

impl ErrorIterator {
    pub fn new(err: crate::Error) -> Self {
        ErrorIterator { err }
    }
}

impl InternalIterator for ErrorIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn seek_for_prev(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        Err(self.err.clone())
    }
}
