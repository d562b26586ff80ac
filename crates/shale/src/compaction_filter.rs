//! rust-rocksdb's `compaction_filter` module: `Decision`, `CompactionFilter` and
//! `CompactionFilterFn`. Running filters during compaction is issue 15's; until then
//! `Options::set_compaction_filter` is refused at open with NotSupported.

use std::ffi::CStr;

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
