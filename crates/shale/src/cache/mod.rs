//! Caches shared by table readers.

pub mod block_cache;

pub use block_cache::{new_cache_session, BlockCache, CacheKey, OffsetableCacheKey};
