//! Internal iterators: cursors over internal keys (`user_key | seq/type`) in internal-key
//! order. Memtables, blocks, tables, levels and the merged view all implement
//! [`InternalIterator`]; the user-facing iterator (`db::iter`) sits on top and hides
//! sequence numbers, deletions and range tombstones. The trait and the small iterators here
//! are what tables and blocks need; the merging, level and user iterators are in
//! `shale_engine::iter`, which re-exports this module.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

// What pinned values hang on (Arcs pushed, then dropped): nothing under the lock can
// panic, so a parking_lot lock, which has no poisoned state (`db/halt.rs`).
use parking_lot::Mutex;

use crate::error::Result;

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
    /// `value()` when `value_pinned()`, None otherwise: what the reverse path asks of every
    /// visible entry, in one call (one walk down the iterator tree instead of two).
    /// Requires `valid()`.
    #[inline]
    fn value_if_pinned(&self) -> Option<&[u8]> {
        if self.value_pinned() {
            Some(self.value())
        } else {
            None
        }
    }
    /// Gives the iterator (and those below it) the place to leave what holds the bytes of
    /// values it moves away from while pinning is on ([`PinnedData`], RocksDB's
    /// `SetPinnedItersMgr`). An iterator whose values stay put anyway, or that never
    /// reports them pinned, ignores it.
    fn set_pinned_data(&mut self, pins: &PinRef) {
        let _ = pins;
    }
}

pub type BoxedIterator = Box<dyn InternalIterator>;

/// The `InternalIterator` methods a wrapper that rewrites keys or skips entries passes
/// through to the iterator in its field `$inner`: validity, the value, its pinning and the
/// status. Each wrapper writes only its moves and its `key`.
#[macro_export]
macro_rules! forward_iter_values {
    ($inner:ident) => {
        fn valid(&self) -> bool {
            self.$inner.valid()
        }
        fn value(&self) -> &[u8] {
            self.$inner.value()
        }
        fn status(&self) -> $crate::error::Result<()> {
            self.$inner.status()
        }
        fn value_pinned(&self) -> bool {
            self.$inner.value_pinned()
        }
        fn value_if_pinned(&self) -> Option<&[u8]> {
            self.$inner.value_if_pinned()
        }
        fn set_pinned_data(&mut self, pins: &$crate::iter::PinRef) {
            self.$inner.set_pinned_data(pins);
        }
    };
}

/// The four moves that need no target (`seek_to_first`, `seek_to_last`, `next`, `prev`)
/// for a wrapper: move the iterator in its field `$inner`, then call `$forward` after a
/// forward move and `$backward` after a backward one (a wrapper's own step: rewrite the
/// key, or skip entries it hides).
#[macro_export]
macro_rules! forward_iter_moves {
    ($inner:ident, $forward:ident, $backward:ident) => {
        fn seek_to_first(&mut self) {
            self.$inner.seek_to_first();
            self.$forward();
        }
        fn seek_to_last(&mut self) {
            self.$inner.seek_to_last();
            self.$backward();
        }
        fn next(&mut self) {
            self.$inner.next();
            self.$forward();
        }
        fn prev(&mut self) {
            self.$inner.prev();
            self.$backward();
        }
    };
}

/// What iterators below one `DBIter` let go of while pinning is on, kept until the
/// `DBIter` releases it (RocksDB's `PinnedIteratorsManager`).
///
/// ```text
/// DBIter ── owns ──> PinnedData { enabled, blocks: [Arc<Block>..], iters: [Box<iter>..] }
///   └── MergingIterator                                   ^            ^
///         ├── TableIter ── steps into another data block ─┘            |
///         └── LevelIterator ── moves to another file: the old file's iterator
/// ```
/// A table iterator whose values lie in a data block says they are pinned
/// (`InternalIterator::value_pinned`) only while pinning is on: then the block a value
/// lies in stays alive after the iterator steps into another block, and a level iterator
/// keeps the iterator of a file it leaves, until `release`. `DBIter` turns pinning on
/// while it walks backward (the value of the key it returns was read before it stepped
/// past that key's entries: RocksDB's `TempPinData`) and releases at its next step; with
/// `pin_data` it is on, and nothing is released, for the iterator's whole life.
///
/// Only the `DBIter` that owns it and the iterators it owns touch it, one call at a time;
/// the mutex makes it shareable between them (the iterators are `Send`), uncontended.
#[derive(Default)]
pub struct PinnedData {
    enabled: AtomicBool,
    /// How many owners `held` has (read without the lock).
    count: AtomicUsize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// Owners of bytes (data blocks).
    blocks: Vec<Arc<dyn Any + Send + Sync>>,
    /// Iterators let go of (with what they hold).
    iters: Vec<BoxedIterator>,
}

/// A shared [`PinnedData`].
pub type PinRef = Arc<PinnedData>;

impl PinnedData {
    /// Whether what iterators let go of is kept.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled.load(AtomicOrdering::Relaxed)
    }

    pub fn set_enabled(&self, on: bool) {
        if self.enabled() != on {
            self.enabled.store(on, AtomicOrdering::Relaxed);
        }
    }

    fn held(&self) -> parking_lot::MutexGuard<'_, Held> {
        self.held.lock()
    }

    /// Keeps `owner` (what holds the bytes of values handed out) until `release`.
    pub fn pin(&self, owner: Arc<dyn Any + Send + Sync>) {
        let mut held = self.held();
        held.blocks.push(owner);
        self.count.store(held.blocks.len() + held.iters.len(), AtomicOrdering::Relaxed);
    }

    /// Keeps an iterator let go of (and what its values lie in) until `release`.
    pub fn pin_iter(&self, it: BoxedIterator) {
        let mut held = self.held();
        held.iters.push(it);
        self.count.store(held.blocks.len() + held.iters.len(), AtomicOrdering::Relaxed);
    }

    /// How many owners are kept.
    #[inline]
    pub fn pinned(&self) -> usize {
        self.count.load(AtomicOrdering::Relaxed)
    }

    /// Lets go of everything kept.
    #[inline]
    pub fn release(&self) {
        if self.pinned() != 0 {
            self.release_all();
        }
    }

    #[inline(never)]
    fn release_all(&self) {
        // Dropped after the lock: an iterator's drop must not find it held.
        let old = {
            let mut held = self.held();
            self.count.store(0, AtomicOrdering::Relaxed);
            std::mem::take(&mut *held)
        };
        drop(old);
    }
}

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
    err: crate::error::Error,
}

impl ErrorIterator {
    pub fn new(err: crate::error::Error) -> Self {
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
