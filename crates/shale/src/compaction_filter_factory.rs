//! rust-rocksdb's `compaction_filter_factory` module. Issue 15's, like compaction filters:
//! `Options::set_compaction_filter_factory` is refused at open with NotSupported.

use std::ffi::CStr;

use crate::compaction_filter::CompactionFilter;

/// Makes one compaction filter per compaction.
pub trait CompactionFilterFactory {
    type Filter: CompactionFilter;

    fn create(&mut self, context: CompactionFilterContext) -> Self::Filter;

    fn name(&self) -> &CStr;
}

/// What a factory learns about the compaction it makes a filter for.
#[derive(Debug, Clone, Copy)]
pub struct CompactionFilterContext {
    pub is_full_compaction: bool,
    pub is_manual_compaction: bool,
}
