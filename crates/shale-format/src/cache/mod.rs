//! Caches shared by table readers: the block cache (LRU or HyperClockCache), which also
//! serves as row cache and takes memtable reservations.

pub mod block_cache;
mod clock;
pub mod entry_stats;
mod lru;

pub use block_cache::{
    new_cache_session, role, BlockCache, CacheKey, CacheKind, CacheReservation, HyperClockOptions, Key,
    LruOptions, OffsetableCacheKey, Priority,
};
