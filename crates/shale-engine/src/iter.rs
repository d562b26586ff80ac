//! Internal iterators: cursors over internal keys (`user_key | seq/type`) in internal-key
//! order. The trait ([`InternalIterator`]), pinning and the small iterators are in
//! `shale_format::iter` (tables and blocks implement it); here are the iterators of the
//! engine: merging, level, range deletions and the user-facing `DBIter`.

pub use shale_format::iter::*;

pub mod db_iter;
pub mod level;
pub mod merging;
pub mod range_del;

pub use db_iter::DBIter;
pub use level::{FileOpener, LevelFile, LevelIterator};
pub use merging::MergingIterator;
pub use range_del::{FragmentedTombstones, RangeTombstone, TombstoneFragment};

/// What Shale does not build yet for column families with user-defined timestamps.
pub fn ts_unsupported(what: &str) -> crate::Error {
    crate::Error::not_supported(format!(
        "{what} in a column family with user-defined timestamps are not supported by Shale"
    ))
}
