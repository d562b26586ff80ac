//! A sharded, byte-weighted cache of uncompressed blocks, keyed by (table cache id,
//! block offset). Backed by `quick_cache` (CLOCK-Pro eviction).

use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::table::block::Block;

#[derive(Clone, Copy, Default)]
struct BlockWeighter;

impl Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        // Charge the block bytes plus a little bookkeeping, never zero.
        block.size() as u64 + 64
    }
}

/// The block cache. Cheap to share behind an `Arc`.
pub struct BlockCache {
    cache: Cache<(u64, u64), Arc<Block>, BlockWeighter>,
    capacity: usize,
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: usize) -> Self {
        // quick_cache sizes its tables from an item estimate; assume 4 KiB blocks.
        let items = (capacity_bytes / 4096).max(16);
        BlockCache {
            cache: Cache::with_weighter(items, capacity_bytes as u64, BlockWeighter),
            capacity: capacity_bytes,
        }
    }

    pub fn get(&self, cache_id: u64, offset: u64) -> Option<Arc<Block>> {
        self.cache.get(&(cache_id, offset))
    }

    pub fn insert(&self, cache_id: u64, offset: u64, block: Arc<Block>) {
        self.cache.insert((cache_id, offset), block);
    }

    /// Bytes charged for the blocks held now.
    pub fn usage(&self) -> usize {
        self.cache.weight() as usize
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCache(usage {} of {})", self.usage(), self.capacity)
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
        assert!(c.get(1, 0).is_none());
        c.insert(1, 0, block(100));
        assert_eq!(c.get(1, 0).unwrap().size(), block(100).size());
        assert!(c.get(2, 0).is_none());
        for i in 0..200 {
            c.insert(3, i, block(4000));
        }
        assert!(c.usage() <= c.capacity(), "{} > {}", c.usage(), c.capacity());
        assert!(c.usage() > 0);
    }
}
