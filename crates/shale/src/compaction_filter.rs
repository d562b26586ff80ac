//! rust-rocksdb's `compaction_filter` module: `Decision`, `CompactionFilter`,
//! `CompactionFilterFn` and `CompactionFilterCallback`, and how Shale holds a family's filter
//! or filter factory ([`FilterSlot`], [`FactorySlot`]).
//!
//! Where filters run (`compaction/job.rs`): in compactions only (not flushes, as RocksDB's
//! default), on the newest version of each user key when it is a Put, `level` being the
//! compaction's start level. `Remove` turns the entry into a deletion at the same sequence
//! (so older versions stay hidden; it is dropped at the bottommost level), `Change` keeps the
//! key with the new value. Merge operands and merge results are not passed to filters (as
//! rust-rocksdb's filters, which implement only RocksDB's `Filter`). Shale asks a filter only
//! about versions no snapshot can see (newer than the latest snapshot): RocksDB 11 asks
//! regardless of snapshots (`IgnoreSnapshots()` is always true there), so a snapshot reader
//! in RocksDB may see a filtered value disappear; in Shale it does not.
//! When both a filter and a factory are set, the filter is used, as RocksDB does.

use std::ffi::{CStr, CString};
use std::sync::Mutex;

use crate::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};

/// What a compaction filter decides for one entry.
#[derive(Debug, Copy, Clone)]
pub enum Decision {
    /// Keep the entry.
    Keep,
    /// Drop the entry.
    Remove,
    /// Keep the key with this value instead.
    Change(&'static [u8]),
}

/// A filter run over the entries a compaction reads.
pub trait CompactionFilter {
    fn filter(&mut self, level: u32, key: &[u8], value: &[u8]) -> Decision;

    fn name(&self) -> &CStr;
}

/// A closure usable as a compaction filter.
pub trait CompactionFilterFn: FnMut(u32, &[u8], &[u8]) -> Decision {}

impl<F> CompactionFilterFn for F where F: FnMut(u32, &[u8], &[u8]) -> Decision + Send + 'static {}

/// A named closure as a compaction filter, as rust-rocksdb's.
pub struct CompactionFilterCallback<F>
where
    F: CompactionFilterFn,
{
    pub name: CString,
    pub filter_fn: F,
}

impl<F> CompactionFilter for CompactionFilterCallback<F>
where
    F: CompactionFilterFn,
{
    fn name(&self) -> &CStr {
        self.name.as_c_str()
    }

    fn filter(&mut self, level: u32, key: &[u8], value: &[u8]) -> Decision {
        (self.filter_fn)(level, key, value)
    }
}

/// A family's compaction filter (`set_compaction_filter`), shared by its compactions: one
/// call at a time.
pub(crate) struct FilterSlot {
    name: String,
    filter: Mutex<Box<dyn CompactionFilter + Send>>,
}

impl FilterSlot {
    pub(crate) fn new(f: impl CompactionFilter + Send + 'static) -> FilterSlot {
        FilterSlot { name: f.name().to_string_lossy().into_owned(), filter: Mutex::new(Box::new(f)) }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Runs the filter. A filter that panicked in an earlier call (its lock poisoned) is in
    /// an unknown state and never runs again: the call panics in its turn, which the
    /// compaction's job boundary turns into a halt of the database (`db/halt.rs`), rather
    /// than deciding on a guess.
    pub(crate) fn filter(&self, level: u32, key: &[u8], value: &[u8]) -> Decision {
        match self.filter.lock() {
            Ok(mut f) => f.filter(level, key, value),
            Err(_) => std::panic::panic_any(format!(
                "the compaction filter {} panicked in an earlier compaction; its state is unknown",
                self.name
            )),
        }
    }
}

/// A factory with its filter type erased.
trait DynFactory {
    fn create_boxed(&mut self, ctx: CompactionFilterContext) -> Box<dyn CompactionFilter>;
    fn name(&self) -> String;
}

// `F: 'static` makes `F::Filter: 'static` (a projection outlives what its inputs outlive).
impl<F: CompactionFilterFactory + 'static> DynFactory for F {
    fn create_boxed(&mut self, ctx: CompactionFilterContext) -> Box<dyn CompactionFilter> {
        Box::new(self.create(ctx))
    }

    fn name(&self) -> String {
        CompactionFilterFactory::name(self).to_string_lossy().into_owned()
    }
}

/// A family's compaction filter factory (`set_compaction_filter_factory`).
pub(crate) struct FactorySlot {
    name: String,
    factory: Mutex<Box<dyn DynFactory>>,
}

// SAFETY: rust-rocksdb's `set_compaction_filter_factory` takes any `F: CompactionFilterFactory
// + 'static` (no `Send` bound) and RocksDB calls it, and the filters it makes, from its
// background compaction threads; Shale keeps that signature and does the same. The factory is
// only ever reached through the mutex (one thread at a time), and each filter it makes lives
// and dies inside one compaction job on one thread. A factory holding thread-bound state (an
// `Rc`, say) is as unsound here as it is with rust-rocksdb.
unsafe impl Send for FactorySlot {}
// SAFETY: as above; every access goes through the mutex.
unsafe impl Sync for FactorySlot {}

impl FactorySlot {
    pub(crate) fn new<F: CompactionFilterFactory + 'static>(f: F) -> FactorySlot {
        FactorySlot { name: DynFactory::name(&f), factory: Mutex::new(Box::new(f)) }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// A filter for a compaction described by `ctx` (to be used and dropped on the calling
    /// thread, by that compaction only).
    pub(crate) fn create(&self, ctx: CompactionFilterContext) -> Box<dyn CompactionFilter> {
        // As `FilterSlot::filter`: a factory that panicked before never runs again.
        match self.factory.lock() {
            Ok(mut f) => f.create_boxed(ctx),
            Err(_) => std::panic::panic_any(format!(
                "the compaction filter factory {} panicked in an earlier compaction; its state is unknown",
                self.name
            )),
        }
    }
}
