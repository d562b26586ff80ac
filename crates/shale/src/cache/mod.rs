//! Caches shared by table readers.

pub mod block_cache;
pub mod entry_stats;

pub use block_cache::{new_cache_session, BlockCache, CacheKey, OffsetableCacheKey};
