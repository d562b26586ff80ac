//! Compaction filters as the engine calls them: a family's one filter shared by its
//! compactions ([`CompactionFilterCore`]), or a factory that makes one filter per
//! subcompaction ([`CompactionFilterFactoryCore`], [`SubcompactionFilter`]). The facade's
//! rust-rocksdb filters (`shale::compaction_filter`) implement these; the compaction driver
//! binds the one in force to a compaction's level and hands it to the job as a
//! [`KeyFilter`](super::job::KeyFilter).

use super::job::FilterDecision;

/// What a factory is told about the compaction it makes a filter for (RocksDB's
/// `CompactionFilter::Context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterContext {
    /// The compaction reads every table of the family.
    pub is_full_compaction: bool,
    /// The compaction was asked for (`compact_range`), not picked.
    pub is_manual_compaction: bool,
}

/// A family's compaction filter, called from any compaction thread.
pub trait CompactionFilterCore: Send + Sync {
    /// The filter's name (RocksDB's `CompactionFilter::Name()`).
    fn name(&self) -> &str;

    /// The decision for the newest version of `key`, a Put of `value`, in a compaction from
    /// `level`.
    fn filter(&self, level: u32, key: &[u8], value: &[u8]) -> FilterDecision;
}

/// A filter a factory made for one subcompaction: used and dropped on that subcompaction's
/// thread.
pub trait SubcompactionFilter {
    fn filter(&mut self, level: u32, key: &[u8], value: &[u8]) -> FilterDecision;
}

/// A family's compaction filter factory, called from any compaction thread.
pub trait CompactionFilterFactoryCore: Send + Sync {
    /// The factory's name (RocksDB's `CompactionFilterFactory::Name()`).
    fn name(&self) -> &str;

    /// A filter for one subcompaction of a compaction described by `ctx`.
    fn create(&self, ctx: FilterContext) -> Box<dyn SubcompactionFilter>;
}
