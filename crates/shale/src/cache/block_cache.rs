//! A sharded, byte-weighted cache of uncompressed blocks. Backed by `quick_cache`
//! (CLOCK-Pro eviction).
//!
//! # Keys
//!
//! A block is keyed by a [`CacheKey`]: the [`OffsetableCacheKey`] of its table file plus the
//! block's offset in that file, as RocksDB's `OffsetableCacheKey` / `CacheKey`. One `Cache`
//! may be shared by several databases (rust-rocksdb's documented pattern), and a database may
//! be destroyed and created again in the same process with the same cache, so a file number
//! alone names nothing: two tables numbered 7 in two databases must never share a key, or one
//! database reads the other's blocks (cache hits skip the checksum check).
//!
//! ```text
//!   CacheKey = +-----------------+-----------------+-----------------+
//!              | session (u64)   | file number     | block offset    |
//!              +-----------------+-----------------+-----------------+
//!              \____ OffsetableCacheKey (one per table file) ____/
//! ```
//!
//! `session` stands where RocksDB puts the DB session id: every database open (and every table
//! opened outside a database, e.g. by `sst_dump`) draws a fresh value from a process-wide
//! counter, so it is unique in the process by construction, not by chance. Within one open,
//! file numbers are never reused, so no two table files ever share an `OffsetableCacheKey`.
//! RocksDB derives its key from the session id recorded in the table's properties so that keys
//! stay stable across processes for a persistent secondary cache; Shale's caches live and die
//! with the process, so the in-process counter is enough and cannot collide. The key stays
//! stable across a table reader closed and opened again in the same database open
//! (`max_open_files`), so its cached blocks are found again.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::entry_stats::{Collector, EntryStats, ScanHook, Walkable, DATA_BLOCK};
use crate::table::block::Block;

/// The next cache session; 0 is never handed out.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// A fresh cache session, never returned before in this process (RocksDB's DB session id, as
/// far as the cache is concerned).
pub fn new_cache_session() -> u64 {
    NEXT_SESSION.fetch_add(1, Ordering::Relaxed)
}

/// The per-file part of a block's cache key: unique to one table file of one database open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetableCacheKey {
    session: u64,
    file_number: u64,
}

impl OffsetableCacheKey {
    /// The key base of table `file_number` of the database open that drew `session` from
    /// [`new_cache_session`].
    pub fn new(session: u64, file_number: u64) -> Self {
        OffsetableCacheKey { session, file_number }
    }

    /// A key base shared with no other file: for a table opened outside a database.
    pub fn unique() -> Self {
        OffsetableCacheKey { session: new_cache_session(), file_number: 0 }
    }

    /// The key of the block at `offset` in this file.
    pub fn with_offset(&self, offset: u64) -> CacheKey {
        CacheKey { session: self.session, file_number: self.file_number, offset }
    }
}

/// A block's key in the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    session: u64,
    file_number: u64,
    offset: u64,
}

#[derive(Clone, Copy, Default)]
struct BlockWeighter;

impl Weighter<CacheKey, Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &CacheKey, block: &Arc<Block>) -> u64 {
        // Charge the block bytes plus a little bookkeeping, never zero.
        block.size() as u64 + 64
    }
}

/// The block cache. Cheap to share behind an `Arc`.
pub struct BlockCache {
    cache: Cache<CacheKey, Arc<Block>, BlockWeighter>,
    /// Bytes; changed in place by `set_capacity`, so every holder of the cache sees it.
    capacity: AtomicUsize,
    /// Block-cache entry statistics, shared by every database using this cache.
    entry_stats: Collector,
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: usize) -> Self {
        // quick_cache sizes its tables from an item estimate; assume 4 KiB blocks.
        let items = (capacity_bytes / 4096).max(16);
        BlockCache {
            cache: Cache::with_weighter(items, capacity_bytes as u64, BlockWeighter),
            capacity: AtomicUsize::new(capacity_bytes),
            entry_stats: Collector::default(),
        }
    }

    pub fn get(&self, key: &CacheKey) -> Option<Arc<Block>> {
        self.cache.get(key)
    }

    pub fn insert(&self, key: CacheKey, block: Arc<Block>) {
        self.cache.insert(key, block);
    }

    /// Bytes charged for the blocks held now.
    pub fn usage(&self) -> usize {
        self.cache.weight() as usize
    }

    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// log2 of the number of shards (RocksDB's `num_shard_bits`, for the LOG): quick_cache
    /// makes `4 * cores` shards (a power of two), halved until each holds 32 estimated items.
    pub(crate) fn num_shard_bits(&self) -> u32 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let items = (self.capacity() / 4096).max(16) as u64;
        let mut shards = (cores * 4).next_power_of_two() as u64;
        while shards > 1 && items.div_ceil(shards) < 32 {
            shards /= 2;
        }
        shards.trailing_zeros()
    }

    /// Changes the capacity in place (RocksDB's `Cache::SetCapacity`): every database sharing
    /// the cache sees it; shrinking evicts blocks until the usage fits.
    pub fn set_capacity(&self, capacity_bytes: usize) {
        self.capacity.store(capacity_bytes, Ordering::Relaxed);
        self.cache.set_capacity(capacity_bytes as u64);
    }

    /// Bytes charged for blocks that a reader holds right now besides the cache (an iterator
    /// positioned in the block, a read in flight), as RocksDB's `GetPinnedUsage`. It walks
    /// the cache, so it costs time in the number of blocks cached: for reports, not hot paths.
    pub fn pinned_usage(&self) -> usize {
        // The walk's own clone and the cache's make two references; more is a reader's.
        self.cache
            .iter()
            .filter(|(_, b)| Arc::strong_count(b) > 2)
            .map(|(k, b)| BlockWeighter.weight(&k, &b) as usize)
            .sum()
    }
}

impl BlockCache {
    /// Walks the cache for entry statistics unless the last walk is recent enough
    /// (`foreground`: RocksDB's 10 s / 10x rule, else 180 s / 500x), and returns the result.
    /// Takes no database lock.
    pub fn collect_entry_stats(&self, foreground: bool) -> EntryStats {
        let (secs, factor) = if foreground { (10, 10) } else { (180, 500) };
        self.entry_stats.collect(self, secs, factor);
        self.entry_stats.last()
    }

    /// The last entry statistics, without walking.
    pub fn last_entry_stats(&self) -> EntryStats {
        self.entry_stats.last()
    }

    /// Runs `hook` during every entry-statistics walk (tests).
    pub fn set_entry_scan_hook(&self, hook: Option<ScanHook>) {
        self.entry_stats.set_hook(hook);
    }
}

impl Walkable for BlockCache {
    fn id(&self) -> String {
        format!("ShaleClockCache@{:p}#{}", self as *const Self, std::process::id())
    }

    fn capacity(&self) -> u64 {
        BlockCache::capacity(self) as u64
    }

    fn usage(&self) -> u64 {
        BlockCache::usage(self) as u64
    }

    fn for_each_entry(&self, f: &mut dyn FnMut(usize, u64)) {
        // Only data blocks are cached (see `entry_stats`).
        for (k, b) in self.cache.iter() {
            f(DATA_BLOCK, BlockWeighter.weight(&k, &b));
        }
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCache(usage {} of {})", self.usage(), self.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::block::BlockBuilder;

    fn block(n: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(b"k", &vec![7u8; n]);
        Arc::new(Block::new(b.finish().to_vec()).unwrap())
    }

    #[test]
    fn get_insert_and_capacity_bound() {
        let c = BlockCache::new(64 * 1024);
        let f1 = OffsetableCacheKey::new(1, 1);
        assert!(c.get(&f1.with_offset(0)).is_none());
        c.insert(f1.with_offset(0), block(100));
        assert_eq!(c.get(&f1.with_offset(0)).unwrap().size(), block(100).size());
        assert!(c.get(&OffsetableCacheKey::new(1, 2).with_offset(0)).is_none());
        let f3 = OffsetableCacheKey::new(1, 3);
        for i in 0..200 {
            c.insert(f3.with_offset(i), block(4000));
        }
        assert!(c.usage() <= c.capacity(), "{} > {}", c.usage(), c.capacity());
        assert!(c.usage() > 0);
    }

    #[test]
    fn set_capacity_in_place_and_pinned_usage() {
        let c = BlockCache::new(1 << 20);
        let f = OffsetableCacheKey::unique();
        for i in 0..100 {
            c.insert(f.with_offset(i), block(4000));
        }
        assert!(c.usage() > 300_000);
        assert_eq!(c.pinned_usage(), 0, "nothing held outside the cache");
        let held = c.get(&f.with_offset(99)).unwrap();
        assert_eq!(c.pinned_usage(), held.size() + 64);
        drop(held);
        assert_eq!(c.pinned_usage(), 0);
        c.set_capacity(64 * 1024);
        assert_eq!(c.capacity(), 64 * 1024);
        assert!(c.usage() <= 64 * 1024, "shrinking evicts: {}", c.usage());
    }

    #[test]
    fn same_file_number_in_two_sessions_never_shares_a_key() {
        let c = BlockCache::new(1 << 20);
        let (s1, s2) = (new_cache_session(), new_cache_session());
        assert_ne!(s1, s2);
        c.insert(OffsetableCacheKey::new(s1, 7).with_offset(0), block(10));
        assert!(c.get(&OffsetableCacheKey::new(s2, 7).with_offset(0)).is_none());
        assert!(c.get(&OffsetableCacheKey::new(s1, 7).with_offset(0)).is_some());
        assert_ne!(OffsetableCacheKey::unique(), OffsetableCacheKey::unique());
    }
}
