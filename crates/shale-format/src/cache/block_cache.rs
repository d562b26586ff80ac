//! The block cache: a sharded, byte-weighted cache of uncompressed blocks, and of the other
//! entries RocksDB keeps in it (index and filter blocks with `cache_index_and_filter_blocks`,
//! memtable reservations of a `WriteBufferManager`, rows of a row cache, the entry-statistics
//! collector). Two replacement policies, as RocksDB's `NewLRUCache` and `HyperClockCache`:
//! [`lru`](super::lru) (LRU with a high-priority pool) and [`clock`](super::clock) (CLOCK).
//!
//! # Charges, pinning and capacity
//!
//! Each entry is charged its bytes plus [`ENTRY_METADATA`] for its bookkeeping (RocksDB's
//! default `kFullChargeCacheMetadata`), so an entry of charge 0 still counts. An entry whose
//! value someone besides the cache holds (a reader using a block, a table reader pinning its
//! index, a reservation's owner) is pinned: counted in `usage` and `pinned_usage`, never
//! evicted. The capacity is split evenly over 2^num_shard_bits shards (RocksDB's default:
//! shards of at least 512 KiB for LRU, 32 MiB for HyperClockCache, at most 64); with
//! `strict_capacity_limit` an insert that does not fit in its shard fails with RocksDB's
//! `MemoryLimit` status (`Aborted`), otherwise the cache goes over its capacity while the
//! entries it holds are pinned.
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

use std::any::Any;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::clock::{ClockShard, FixedTable};
use super::entry_stats::{Collector, EntryStats, ScanHook, Walkable, DATA_BLOCK};
use super::lru::LruShard;
use crate::error::{Error, ErrorKind, Result};
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

    /// The key base of table `file_number` of the same database open.
    pub fn for_file(&self, file_number: u64) -> Self {
        OffsetableCacheKey { session: self.session, file_number }
    }

    /// The key of the block at `offset` in this file.
    pub fn with_offset(&self, offset: u64) -> CacheKey {
        CacheKey { session: self.session, file_number: self.file_number, offset }
    }

    /// The row-cache key of `user_key` in this file as seen at `seq` (0: by any read that
    /// sees the whole file), as RocksDB's `TableCache::CreateRowCacheKeyPrefix`.
    pub fn row_key(&self, seq: u64, user_key: &[u8]) -> Key {
        let mut k = Vec::with_capacity(24 + user_key.len());
        k.extend_from_slice(&self.session.to_le_bytes());
        k.extend_from_slice(&self.file_number.to_le_bytes());
        k.extend_from_slice(&seq.to_le_bytes());
        k.extend_from_slice(user_key);
        Key::Row(k.into_boxed_slice())
    }
}

/// A block's key in the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    session: u64,
    file_number: u64,
    offset: u64,
}

/// Any entry's key: a block of a table file, a row of a row cache, or a reservation (memory
/// charged to the cache by its owner, RocksDB's dummy entries).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Block(CacheKey),
    Row(Box<[u8]>),
    Reservation(u64),
}

/// A cached value; an entry is pinned while the count of this `Arc` is above one.
pub type Value = Arc<dyn Any + Send + Sync>;

/// Bytes charged per entry for its bookkeeping besides its own charge.
pub const ENTRY_METADATA: usize = 64;

/// RocksDB's `CacheEntryRole`, as indexes into `entry_stats::ROLES`.
pub mod role {
    pub const DATA_BLOCK: u8 = 0;
    pub const FILTER_BLOCK: u8 = 1;
    pub const INDEX_BLOCK: u8 = 4;
    pub const WRITE_BUFFER: u8 = 6;
    pub const MISC: u8 = 13;
}

/// A small multiply-rotate hasher (keys are a few words or a short byte string).
#[derive(Default, Clone, Copy)]
pub struct FxBuild;

pub struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        // Spread the low bits into the high ones (shards take the top bits).
        let h = self.0;
        h ^ (h >> 29) ^ (h << 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    fn write_u8(&mut self, x: u8) {
        self.add(x as u64);
    }

    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
}

impl BuildHasher for FxBuild {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

/// RocksDB's `Cache::Priority`: which LRU pool an entry joins (`lru.rs`), or in the clock
/// shard the countdown an entry starts with (3, 2 and 1, RocksDB's `GetInitialCountdown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Index and filter blocks with `cache_index_and_filter_blocks_with_high_priority`.
    High,
    /// Data blocks, other metadata blocks, rows, reservations.
    Low,
    /// Blobs of a blob cache, blocks a compaction warms with `kFlushAndCompaction`.
    Bottom,
}

impl Priority {
    /// High or low, as the `high_pri` flag of `insert` says (callers without the bottom pool).
    pub fn of(high_pri: bool) -> Self {
        if high_pri {
            Priority::High
        } else {
            Priority::Low
        }
    }
}

/// What a shard did with an insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// The entry is in the cache.
    Kept,
    /// Not kept, and no error: a fixed clock table whose entries are all pinned, under a
    /// limit that is not strict (as if inserted and evicted at once).
    Dropped,
    /// Refused under the strict limit: no room within the capacity.
    NoRoom,
    /// Refused under the strict limit: no slot within a fixed table's occupancy limit.
    NoSlot,
    /// Not kept, and no error: a read's insert gave up on a lock another thread held
    /// ([`Shard::insert_nowait`]). The insert did not take place, which the caller counts as
    /// RocksDB counts an `Insert` that returned non-OK (an add failure, no add).
    Busy,
}

/// Something a test holds (a stripe's lock guard) until it drops it.
#[cfg(test)]
pub trait Held {}
#[cfg(test)]
impl<T> Held for T {}

/// One shard of a cache: the operations the LRU and clock shards share.
pub trait Shard: Send + Sync {
    /// The entry of `key`; a shard may miss rather than wait for a lock another thread
    /// holds (the clock shard: see `clock.rs`).
    fn lookup(&self, key: &Key) -> Option<Value>;
    /// `lookup` that finds every entry the shard holds, waiting for a lock if need be: for a
    /// read that may not do I/O, where a miss is an error (`Incomplete`), not a file read.
    fn lookup_wait(&self, key: &Key) -> Option<Value> {
        self.lookup(key)
    }
    /// Nothing is inserted unless the outcome is `Kept`.
    fn insert(&self, key: Key, value: Value, charge: usize, role: u8, high_pri: bool) -> Insert;
    /// `insert` with one of RocksDB's three priorities; a cache without a bottom pool treats
    /// bottom as low.
    fn insert_with_priority(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
    ) -> Insert {
        self.insert(key, value, charge, role, priority == Priority::High)
    }
    /// The insert a read makes to keep what it read (a block, a blob, a row): a shard may
    /// give up rather than wait for a lock another thread holds, and keep nothing
    /// ([`Insert::Busy`]), as the clock shard does; the LRU shard waits.
    fn insert_nowait(&self, key: Key, value: Value, charge: usize, role: u8, priority: Priority) -> Insert {
        self.insert_with_priority(key, value, charge, role, priority)
    }
    /// Removes `key`'s entry; true when there was one.
    fn erase(&self, key: &Key) -> bool;
    fn usage(&self) -> usize;
    fn set_capacity(&self, capacity: usize);
    fn set_strict_capacity_limit(&self, strict: bool);
    /// Calls `f(role, charge, pinned)` for every entry.
    fn for_each(&self, f: &mut dyn FnMut(u8, usize, bool));
    /// Whether the entry sits in the high-priority pool (LRU; None for clock or absent).
    #[cfg(test)]
    fn in_high_pool(&self, key: &Key) -> Option<bool>;
    /// The LRU pool the entry sits in (None for clock or absent).
    #[cfg(test)]
    fn pool_of(&self, _key: &Key) -> Option<Priority> {
        None
    }
    /// The bytes charged to the high, low and bottom LRU pools (None for clock).
    #[cfg(test)]
    fn pool_usages(&self) -> Option<[usize; 3]> {
        None
    }
    /// Every lock of the shard a read's insert may give up on, held until dropped (none for
    /// LRU, whose inserts wait).
    #[cfg(test)]
    fn hold_all(&self) -> Vec<Box<dyn Held + '_>> {
        Vec::new()
    }
}

/// The replacement policy of a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    Lru,
    HyperClock,
}

/// RocksDB's `LRUCacheOptions` (the fields Shale builds).
#[derive(Debug, Clone)]
pub struct LruOptions {
    pub capacity: usize,
    /// < 0: RocksDB's default (shards of at least 512 KiB, at most 64 shards).
    pub num_shard_bits: i32,
    pub strict_capacity_limit: bool,
    /// The share of the capacity kept for high-priority entries (and entries that were hit).
    pub high_pri_pool_ratio: f64,
    /// The share of the capacity kept for low-priority entries (data blocks), above the
    /// bottom pool (blobs); RocksDB's default 0: low and bottom entries share one pool.
    pub low_pri_pool_ratio: f64,
}

impl Default for LruOptions {
    fn default() -> Self {
        LruOptions {
            capacity: 0,
            num_shard_bits: -1,
            strict_capacity_limit: false,
            high_pri_pool_ratio: 0.5,
            low_pri_pool_ratio: 0.0,
        }
    }
}

impl LruOptions {
    /// RocksDB's `LRUCacheOptions::MakeSharedCache` makes no cache (nullptr) of these
    /// options: `num_shard_bits` 20 or more, a ratio outside [0, 1], or ratios summing above 1.
    pub fn invalid(&self) -> bool {
        let bad = |r: f64| !(0.0..=1.0).contains(&r);
        self.num_shard_bits >= 20
            || bad(self.high_pri_pool_ratio)
            || bad(self.low_pri_pool_ratio)
            || self.high_pri_pool_ratio + self.low_pri_pool_ratio > 1.0
    }
}

/// RocksDB's `GetDefaultCacheShardBits`.
fn default_shard_bits(capacity: usize, min_shard_size: usize) -> u32 {
    let mut bits = 0;
    let mut shards = capacity / min_shard_size;
    loop {
        shards >>= 1;
        if shards == 0 {
            return bits;
        }
        bits += 1;
        if bits >= 6 {
            return bits;
        }
    }
}

/// RocksDB's `HyperClockCacheOptions` (the fields Shale builds).
#[derive(Debug, Clone, Default)]
pub struct HyperClockOptions {
    pub capacity: usize,
    /// 0: an AutoHyperClockCache (its table grows); above 0: a FixedHyperClockCache, whose
    /// slot table is sized from each shard's capacity and this estimate of an entry's charge.
    pub estimated_entry_charge: usize,
    /// < 0: RocksDB's default (shards of at least 32 MiB, at most 64 shards).
    pub num_shard_bits: i32,
    pub strict_capacity_limit: bool,
}

/// The block cache. Cheap to share behind an `Arc`.
pub struct BlockCache {
    kind: CacheKind,
    /// A HyperClockCache's `estimated_entry_charge` (0: automatic table; always 0 for LRU).
    estimated_entry_charge: usize,
    /// Bytes charged per entry besides its own charge: [`ENTRY_METADATA`], or 0 for a fixed
    /// clock table, whose slots are charged once, up front.
    entry_metadata: usize,
    shards: Vec<Box<dyn Shard>>,
    shard_bits: u32,
    /// Bytes; changed in place by `set_capacity`, so every holder of the cache sees it.
    capacity: AtomicUsize,
    strict: AtomicBool,
    high_pri_pool_ratio: f64,
    low_pri_pool_ratio: f64,
    /// Block-cache entry statistics, shared by every database using this cache.
    entry_stats: Collector,
    next_reservation: AtomicU64,
    /// The entry-statistics collector's own entry (see `stats_collector_entry`).
    collector_entry: parking_lot::Mutex<std::sync::Weak<CacheReservation>>,
}

fn per_shard(capacity: usize, shards: usize) -> usize {
    capacity.div_ceil(shards.max(1))
}

impl BlockCache {
    /// An LRU cache of `capacity_bytes` with RocksDB's default options.
    pub fn new(capacity_bytes: usize) -> Self {
        Self::new_lru(&LruOptions { capacity: capacity_bytes, ..LruOptions::default() })
    }

    /// RocksDB's `NewLRUCache(opts)`.
    pub fn new_lru(opts: &LruOptions) -> Self {
        let bits = if opts.num_shard_bits < 0 {
            default_shard_bits(opts.capacity, 512 * 1024)
        } else {
            (opts.num_shard_bits as u32).min(19)
        };
        // Callers reject what RocksDB rejects (`LruOptions::invalid`); what reaches here is
        // kept within RocksDB's bounds all the same.
        let ratio = opts.high_pri_pool_ratio.clamp(0.0, 1.0);
        let low_ratio = opts.low_pri_pool_ratio.clamp(0.0, 1.0 - ratio);
        let n = 1usize << bits;
        let shards = (0..n)
            .map(|_| {
                Box::new(LruShard::new(
                    per_shard(opts.capacity, n),
                    ratio,
                    low_ratio,
                    opts.strict_capacity_limit,
                )) as Box<dyn Shard>
            })
            .collect();
        let mut c =
            Self::with_shards(CacheKind::Lru, shards, bits, opts.capacity, opts.strict_capacity_limit, ratio);
        c.low_pri_pool_ratio = low_ratio;
        c
    }

    /// An AutoHyperClockCache: RocksDB's `HyperClockCacheOptions(capacity, 0)`.
    pub fn new_hyper_clock(capacity_bytes: usize, num_shard_bits: i32, strict: bool) -> Self {
        Self::new_hyper_clock_opts(&HyperClockOptions {
            capacity: capacity_bytes,
            estimated_entry_charge: 0,
            num_shard_bits,
            strict_capacity_limit: strict,
        })
    }

    /// RocksDB's `HyperClockCacheOptions::MakeSharedCache`: an AutoHyperClockCache when the
    /// estimated entry charge is 0, else a FixedHyperClockCache whose shards each hold at most
    /// their table's occupancy limit of entries (`clock.rs`).
    pub fn new_hyper_clock_opts(opts: &HyperClockOptions) -> Self {
        let bits = if opts.num_shard_bits < 0 {
            default_shard_bits(opts.capacity, 32 * 1024 * 1024)
        } else {
            (opts.num_shard_bits as u32).min(19)
        };
        let n = 1usize << bits;
        let shard_capacity = per_shard(opts.capacity, n);
        let est = opts.estimated_entry_charge;
        let fixed = (est > 0).then(|| FixedTable::new(shard_capacity, est));
        let strict = opts.strict_capacity_limit;
        let shards = (0..n)
            .map(|_| Box::new(ClockShard::new(shard_capacity, strict, fixed)) as Box<dyn Shard>)
            .collect();
        let mut c = Self::with_shards(CacheKind::HyperClock, shards, bits, opts.capacity, strict, 0.0);
        c.estimated_entry_charge = est;
        if est > 0 {
            c.entry_metadata = 0;
        }
        c
    }

    fn with_shards(
        kind: CacheKind,
        shards: Vec<Box<dyn Shard>>,
        shard_bits: u32,
        capacity: usize,
        strict: bool,
        high_pri_pool_ratio: f64,
    ) -> Self {
        BlockCache {
            kind,
            estimated_entry_charge: 0,
            entry_metadata: ENTRY_METADATA,
            shards,
            shard_bits,
            capacity: AtomicUsize::new(capacity),
            strict: AtomicBool::new(strict),
            high_pri_pool_ratio,
            low_pri_pool_ratio: 0.0,
            entry_stats: Collector::default(),
            next_reservation: AtomicU64::new(1),
            collector_entry: parking_lot::Mutex::new(std::sync::Weak::new()),
        }
    }

    pub fn kind(&self) -> CacheKind {
        self.kind
    }

    /// A HyperClockCache's `estimated_entry_charge` (0: an automatic table, or LRU).
    pub fn estimated_entry_charge(&self) -> usize {
        self.estimated_entry_charge
    }

    /// RocksDB's `Cache::Name()` of this cache: LRUCache, AutoHyperClockCache or
    /// FixedHyperClockCache.
    pub fn name(&self) -> &'static str {
        match self.kind {
            CacheKind::Lru => "LRUCache",
            CacheKind::HyperClock if self.estimated_entry_charge > 0 => "FixedHyperClockCache",
            CacheKind::HyperClock => "AutoHyperClockCache",
        }
    }

    fn shard(&self, key: &Key) -> &dyn Shard {
        let h =
            if self.shard_bits == 0 { 0 } else { (FxBuild.hash_one(key) >> (64 - self.shard_bits)) as usize };
        self.shards[h & (self.shards.len() - 1)].as_ref()
    }

    /// The entry of `key`, if cached (a hit moves it as the policy says).
    pub fn lookup(&self, key: &Key) -> Option<Value> {
        self.shard(key).lookup(key)
    }

    /// Caches `value` under `key`, charged `charge` bytes (plus [`ENTRY_METADATA`]). Fails
    /// with RocksDB's MemoryLimit (`Aborted`) when the limit is strict and pinned entries
    /// leave no room.
    pub fn insert_entry(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        high_pri: bool,
    ) -> Result<()> {
        self.insert_with_priority(key, value, charge, role, Priority::of(high_pri))
    }

    /// `insert_entry` with one of RocksDB's three priorities (`Priority::Bottom` for blobs).
    pub fn insert_with_priority(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
    ) -> Result<()> {
        self.insert_in(key, value, charge, role, priority, false).map(|_| ())
    }

    /// `insert_entry` for what a read brought in (a metadata block): the shard may give up
    /// rather than wait for a lock another thread holds, and then keeps nothing
    /// ([`Shard::insert_nowait`]); the next read of the block reads it again. `Ok(false)`:
    /// the insert gave up and did not take place (the caller counts an add failure).
    pub fn fill_entry(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        high_pri: bool,
    ) -> Result<bool> {
        self.insert_in(key, value, charge, role, Priority::of(high_pri), true)
    }

    fn insert_in(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
        nowait: bool,
    ) -> Result<bool> {
        let shard = self.shard(&key);
        let charge = charge + self.entry_metadata;
        let outcome = if nowait {
            shard.insert_nowait(key, value, charge, role, priority)
        } else {
            shard.insert_with_priority(key, value, charge, role, priority)
        };
        let what = match outcome {
            Insert::Kept | Insert::Dropped => return Ok(true),
            Insert::Busy => return Ok(false),
            Insert::NoRoom if self.kind == CacheKind::Lru => "Insert failed due to LRU cache being full.",
            Insert::NoRoom => "Insert failed because unable to evict entries to stay within capacity limit.",
            Insert::NoSlot => {
                "Insert failed because unable to evict entries to stay within table occupancy limit."
            }
        };
        Err(Error::new(ErrorKind::Aborted, format!("Memory limit reached: {what}")))
    }

    /// Removes `key`'s entry (its value lives on while a reader holds it); true when there
    /// was one.
    pub fn erase(&self, key: &Key) -> bool {
        self.shard(key).erase(key)
    }

    /// The cached data block of `key` (a miss, rather than a wait, when another thread
    /// holds the clock shard's lock: see [`Shard::lookup`]).
    pub fn get(&self, key: &CacheKey) -> Option<Arc<Block>> {
        self.lookup(&Key::Block(*key)).and_then(|v| v.downcast::<Block>().ok())
    }

    /// The cached data block of `key`, waiting for a lock another thread holds: for reads
    /// that may not do I/O ([`Shard::lookup_wait`]).
    pub fn get_wait(&self, key: &CacheKey) -> Option<Arc<Block>> {
        let key = Key::Block(*key);
        self.shard(&key).lookup_wait(&key).and_then(|v| v.downcast::<Block>().ok())
    }

    /// Caches a data block a read brought in (low priority); as [`BlockCache::fill_entry`],
    /// it may keep nothing rather than wait for a lock another thread holds (`Ok(false)`).
    pub fn insert(&self, key: CacheKey, block: Arc<Block>) -> Result<bool> {
        self.fill_block(key, block, Priority::Low)
    }

    /// Caches a block (or a blob) a read brought in with `priority`; as
    /// [`BlockCache::fill_entry`], it may keep nothing rather than wait for a lock another
    /// thread holds (`Ok(false)`).
    pub fn fill_block(&self, key: CacheKey, block: Arc<Block>, priority: Priority) -> Result<bool> {
        let charge = block.size() + block.extra_memory();
        self.insert_in(Key::Block(key), block, charge, role::DATA_BLOCK, priority, true)
    }

    /// Holds every lock a read's insert may give up on until the guards are dropped.
    #[cfg(test)]
    pub fn hold_all(&self) -> Vec<Box<dyn Held + '_>> {
        self.shards.iter().flat_map(|s| s.hold_all()).collect()
    }

    /// Caches a data block (or a blob, as a block of its bytes) with `priority`: RocksDB puts
    /// blobs and blocks a compaction warms in the bottom pool.
    pub fn insert_block(&self, key: CacheKey, block: Arc<Block>, priority: Priority) -> Result<()> {
        // A read-amplification bitmap and per-entry checksums are charged with their block,
        // as RocksDB's `Block::ApproximateMemoryUsage`.
        let charge = block.size() + block.extra_memory();
        self.insert_with_priority(Key::Block(key), block, charge, role::DATA_BLOCK, priority)
    }

    /// Bytes charged for the entries held now (pinned or not).
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.usage()).sum()
    }

    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    pub fn strict_capacity_limit(&self) -> bool {
        self.strict.load(Ordering::Relaxed)
    }

    pub fn high_pri_pool_ratio(&self) -> f64 {
        self.high_pri_pool_ratio
    }

    /// The LRU low-priority pool's share of the capacity (0 for clock).
    pub fn low_pri_pool_ratio(&self) -> f64 {
        self.low_pri_pool_ratio
    }

    /// log2 of the number of shards (RocksDB's `num_shard_bits`).
    pub fn num_shard_bits(&self) -> u32 {
        self.shard_bits
    }

    /// Changes the capacity in place (RocksDB's `Cache::SetCapacity`): every database sharing
    /// the cache sees it; shrinking evicts unpinned entries until the usage fits.
    pub fn set_capacity(&self, capacity_bytes: usize) {
        self.capacity.store(capacity_bytes, Ordering::Relaxed);
        let n = self.shards.len();
        for s in &self.shards {
            s.set_capacity(per_shard(capacity_bytes, n));
        }
    }

    /// RocksDB's `SetStrictCapacityLimit`.
    pub fn set_strict_capacity_limit(&self, strict: bool) {
        self.strict.store(strict, Ordering::Relaxed);
        for s in &self.shards {
            s.set_strict_capacity_limit(strict);
        }
    }

    /// Bytes charged for entries held outside the cache right now (a reader using a block, a
    /// pinned index or filter, a reservation), as RocksDB's `GetPinnedUsage`. It walks the
    /// cache, so it costs time in the number of entries: for reports, not hot paths.
    pub fn pinned_usage(&self) -> usize {
        let mut n = 0;
        for s in &self.shards {
            s.for_each(&mut |_, charge, pinned| {
                if pinned {
                    n += charge;
                }
            });
        }
        n
    }

    /// Whether `key` sits in the LRU high-priority pool (tests).
    #[cfg(test)]
    pub fn in_high_pool(&self, key: &Key) -> Option<bool> {
        self.shard(key).in_high_pool(key)
    }

    /// The LRU pool `key` sits in (tests).
    #[cfg(test)]
    pub fn pool_of(&self, key: &Key) -> Option<Priority> {
        self.shard(key).pool_of(key)
    }

    /// Bytes in the high, low and bottom LRU pools over all shards (tests).
    #[cfg(test)]
    pub fn pool_usages(&self) -> Option<[usize; 3]> {
        let mut t = [0; 3];
        for s in &self.shards {
            let u = s.pool_usages()?;
            for p in 0..3 {
                t[p] += u[p];
            }
        }
        Some(t)
    }

    /// Charges `bytes` of `role` to the cache until the returned reservation is dropped (RocksDB's
    /// dummy entries of a `CacheReservationManager`); pinned while held.
    pub fn reserve(self: &Arc<Self>, bytes: usize, role: u8) -> Result<CacheReservation> {
        let key = Key::Reservation(self.next_reservation.fetch_add(1, Ordering::Relaxed));
        let token: Arc<()> = Arc::new(());
        // Low priority: a pinned entry is never evicted, and must not crowd the high pool.
        self.insert_entry(key.clone(), token.clone(), bytes, role, false)?;
        Ok(CacheReservation { cache: self.clone(), key, _token: token })
    }
}

impl BlockCache {
    /// The entry RocksDB's `InternalStats` puts in each family's block cache at open for the
    /// cache's `CacheEntryStatsCollector` (`CacheEntryStatsCollector::GetShared`): one per
    /// cache, role misc, charge 0 (so only its metadata counts), high priority, held (pinned)
    /// while any family using the cache is open. It is why an unread cache's usage is not 0.
    pub fn stats_collector_entry(self: &Arc<Self>) -> Option<Arc<CacheReservation>> {
        let mut g = self.collector_entry.lock();
        if let Some(e) = g.upgrade() {
            return Some(e);
        }
        let e = Arc::new(self.reserve(0, role::MISC).ok()?);
        *g = Arc::downgrade(&e);
        Some(e)
    }
}

/// Memory charged to a cache (see [`BlockCache::reserve`]); released when dropped.
pub struct CacheReservation {
    cache: Arc<BlockCache>,
    key: Key,
    _token: Arc<()>,
}

impl Drop for CacheReservation {
    fn drop(&mut self) {
        self.cache.erase(&self.key);
    }
}

impl std::fmt::Debug for CacheReservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheReservation({:?})", self.key)
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
        // RocksDB's `CacheEntryRoleStats::BeginCollection`: Name()@address#pid.
        format!("{}@{:p}#{}", self.name(), self as *const Self, std::process::id())
    }

    fn capacity(&self) -> u64 {
        BlockCache::capacity(self) as u64
    }

    fn usage(&self) -> u64 {
        BlockCache::usage(self) as u64
    }

    fn for_each_entry(&self, f: &mut dyn FnMut(usize, u64)) {
        for s in &self.shards {
            s.for_each(&mut |role, charge, _| f(role as usize, charge as u64));
        }
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCache({:?}, usage {} of {})", self.kind, self.usage(), self.capacity())
    }
}

// The data role is the same index in `entry_stats`.
const _: () = assert!(DATA_BLOCK == role::DATA_BLOCK as usize);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::block::BlockBuilder;

    fn block(n: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(b"k", &vec![7u8; n]);
        Arc::new(Block::new(b.finish().to_vec()).unwrap())
    }

    fn lru(capacity: usize, bits: i32, strict: bool, ratio: f64) -> BlockCache {
        BlockCache::new_lru(&LruOptions {
            capacity,
            num_shard_bits: bits,
            strict_capacity_limit: strict,
            high_pri_pool_ratio: ratio,
            low_pri_pool_ratio: 0.0,
        })
    }

    #[test]
    fn get_insert_and_capacity_bound() {
        for c in [BlockCache::new(64 * 1024), BlockCache::new_hyper_clock(64 * 1024, -1, false)] {
            let f1 = OffsetableCacheKey::new(1, 1);
            assert!(c.get(&f1.with_offset(0)).is_none());
            c.insert(f1.with_offset(0), block(100)).unwrap();
            assert_eq!(c.get(&f1.with_offset(0)).unwrap().size(), block(100).size());
            assert!(c.get(&OffsetableCacheKey::new(1, 2).with_offset(0)).is_none());
            let f3 = OffsetableCacheKey::new(1, 3);
            for i in 0..200 {
                c.insert(f3.with_offset(i), block(4000)).unwrap();
            }
            assert!(c.usage() <= c.capacity(), "{:?}: {} > {}", c.kind(), c.usage(), c.capacity());
            assert!(c.usage() > 0);
        }
    }

    #[test]
    fn set_capacity_in_place_and_pinned_usage() {
        for c in [BlockCache::new(1 << 20), BlockCache::new_hyper_clock(1 << 20, -1, false)] {
            let f = OffsetableCacheKey::unique();
            for i in 0..100 {
                c.insert(f.with_offset(i), block(4000)).unwrap();
            }
            assert!(c.usage() > 300_000);
            assert_eq!(c.pinned_usage(), 0, "nothing held outside the cache");
            let held = c.get(&f.with_offset(99)).unwrap();
            assert_eq!(c.pinned_usage(), held.size() + ENTRY_METADATA);
            c.set_capacity(64 * 1024);
            assert_eq!(c.capacity(), 64 * 1024);
            assert!(c.usage() <= 64 * 1024, "shrinking evicts: {}", c.usage());
            assert!(c.get(&f.with_offset(99)).is_some(), "a pinned block is not evicted");
            drop(held);
            assert_eq!(c.pinned_usage(), 0);
        }
    }

    #[test]
    fn same_file_number_in_two_sessions_never_shares_a_key() {
        let c = BlockCache::new(1 << 20);
        let (s1, s2) = (new_cache_session(), new_cache_session());
        assert_ne!(s1, s2);
        c.insert(OffsetableCacheKey::new(s1, 7).with_offset(0), block(10)).unwrap();
        assert!(c.get(&OffsetableCacheKey::new(s2, 7).with_offset(0)).is_none());
        assert!(c.get(&OffsetableCacheKey::new(s1, 7).with_offset(0)).is_some());
        assert_ne!(OffsetableCacheKey::unique(), OffsetableCacheKey::unique());
    }

    #[test]
    fn default_shard_bits_follow_rocksdb() {
        assert_eq!(default_shard_bits(8 << 20, 512 * 1024), 4);
        assert_eq!(default_shard_bits(1 << 30, 512 * 1024), 6);
        assert_eq!(default_shard_bits(100, 512 * 1024), 0);
        assert_eq!(default_shard_bits(64 << 20, 32 << 20), 1);
        assert_eq!(BlockCache::new(8 << 20).num_shard_bits(), 4);
    }

    /// With the limit strict, an insert that finds only pinned entries fails with RocksDB's
    /// MemoryLimit; without it the cache goes over its capacity.
    #[test]
    fn strict_capacity_limit_fails_inserts_when_full_of_pinned_entries() {
        for strict_cache in [lru(40_000, 0, true, 0.5), BlockCache::new_hyper_clock(40_000, 0, true)] {
            let f = OffsetableCacheKey::unique();
            let mut held = Vec::new();
            for i in 0..9 {
                strict_cache.insert(f.with_offset(i), block(4000)).unwrap();
                held.push(strict_cache.get(&f.with_offset(i)).unwrap());
            }
            let e = strict_cache.insert(f.with_offset(100), block(4000)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Aborted);
            assert!(e.to_string().contains("Memory limit reached"), "{e}");
            assert!(strict_cache.usage() <= 40_000);
            assert_eq!(strict_cache.pinned_usage(), strict_cache.usage());
            // Releasing one makes room again.
            held.pop();
            strict_cache.insert(f.with_offset(100), block(4000)).unwrap();
            assert!(strict_cache.get(&f.with_offset(8)).is_none(), "the released block was evicted");
            // Not strict: the insert succeeds and the usage goes over.
            strict_cache.set_strict_capacity_limit(false);
            held.push(strict_cache.get(&f.with_offset(100)).unwrap());
            strict_cache.insert(f.with_offset(101), block(4000)).unwrap();
            assert!(strict_cache.usage() > 40_000);
        }
    }

    /// RocksDB's high-priority pool: high-priority entries (and entries that were hit) outlive
    /// a stream of low-priority inserts while they fit in the pool.
    #[test]
    fn high_pri_pool_keeps_high_priority_entries() {
        let c = lru(100 * 1024, 0, false, 0.5);
        let f = OffsetableCacheKey::unique();
        let charge = 4096;
        let ins = |i: u64, high: bool| {
            let k = Key::Block(f.with_offset(i));
            c.insert_entry(k, Arc::new(()), charge - ENTRY_METADATA, role::INDEX_BLOCK, high).unwrap();
        };
        for i in 0..5 {
            ins(i, true);
        }
        // A low-priority entry hit once is promoted to the pool too.
        ins(10, false);
        assert!(c.lookup(&Key::Block(f.with_offset(10))).is_some());
        assert_eq!(c.in_high_pool(&Key::Block(f.with_offset(10))), Some(true));
        for i in 100..200 {
            ins(i, false);
        }
        for i in (0..5).chain([10]) {
            assert!(c.lookup(&Key::Block(f.with_offset(i))).is_some(), "high-pri entry {i} was evicted");
        }
        assert!(c.lookup(&Key::Block(f.with_offset(100))).is_none(), "the oldest low-pri entry goes first");
        assert!(c.lookup(&Key::Block(f.with_offset(199))).is_some());
        // Overflowing the pool (50 KiB) demotes its oldest entries to the low pool.
        for i in 1000..1020 {
            ins(i, true);
        }
        assert_eq!(c.in_high_pool(&Key::Block(f.with_offset(1019))), Some(true));
        assert!(
            c.lookup(&Key::Block(f.with_offset(0))).is_none(),
            "the pool's oldest entry was demoted then evicted"
        );
        assert!(c.usage() <= c.capacity());

        // Without a pool, the same stream evicts them in LRU order.
        let c = lru(100 * 1024, 0, false, 0.0);
        let k0 = Key::Block(f.with_offset(0));
        c.insert_entry(k0.clone(), Arc::new(()), 4000, role::INDEX_BLOCK, true).unwrap();
        for i in 100..200 {
            c.insert_entry(Key::Block(f.with_offset(i)), Arc::new(()), 4000, role::DATA_BLOCK, false)
                .unwrap();
        }
        assert!(c.lookup(&k0).is_none());
    }

    /// A one-shard LRU cache of `n` entries of `UNIT` bytes with the two pool ratios.
    fn pools(n: usize, high: f64, low: f64) -> BlockCache {
        BlockCache::new_lru(&LruOptions {
            capacity: n * UNIT,
            num_shard_bits: 0,
            strict_capacity_limit: false,
            high_pri_pool_ratio: high,
            low_pri_pool_ratio: low,
        })
    }

    const UNIT: usize = 1000;

    fn put(c: &BlockCache, k: u64, p: Priority) {
        let key = Key::Block(OffsetableCacheKey::new(0, 0).with_offset(k));
        c.insert_with_priority(key, Arc::new(()), UNIT - ENTRY_METADATA, role::DATA_BLOCK, p).unwrap();
    }

    fn pool(c: &BlockCache, k: u64) -> Option<Priority> {
        c.pool_of(&Key::Block(OffsetableCacheKey::new(0, 0).with_offset(k)))
    }

    fn hit(c: &BlockCache, k: u64) -> bool {
        c.lookup(&Key::Block(OffsetableCacheKey::new(0, 0).with_offset(k))).is_some()
    }

    /// RocksDB's three pools (`LRUCacheShard::LRU_Insert`, `MaintainPoolSize`): 10 entries,
    /// a high pool of 2, a low pool of 3. Each priority joins its pool; a full pool passes
    /// its oldest entry down one pool; eviction takes the bottom pool's oldest first, then
    /// the low pool's, then the high pool's; a hit goes to the high pool.
    #[test]
    fn three_pools_insert_overflow_and_evict_in_rocksdb_order() {
        use Priority::{Bottom, High, Low};
        let c = pools(10, 0.2, 0.3);
        assert_eq!(c.low_pri_pool_ratio(), 0.3);
        for k in 0..5 {
            put(&c, k, Bottom);
        }
        for k in 10..13 {
            put(&c, k, Low);
        }
        for k in 20..22 {
            put(&c, k, High);
        }
        assert_eq!(c.pool_usages(), Some([2 * UNIT, 3 * UNIT, 5 * UNIT]));
        assert_eq!((pool(&c, 0), pool(&c, 10), pool(&c, 20)), (Some(Bottom), Some(Low), Some(High)));

        // Full: a bottom insert evicts the bottom pool's oldest.
        put(&c, 5, Bottom);
        assert_eq!(pool(&c, 0), None);
        // A low insert evicts the bottom pool's next oldest; the low pool overflows and its
        // oldest (10) moves to the head of the bottom pool.
        put(&c, 13, Low);
        assert_eq!(pool(&c, 1), None);
        assert_eq!((pool(&c, 10), pool(&c, 13)), (Some(Bottom), Some(Low)));
        // A high insert: bottom's oldest (2) goes; high overflows into low (20), low into
        // bottom (11).
        put(&c, 22, High);
        assert_eq!(pool(&c, 2), None);
        assert_eq!((pool(&c, 20), pool(&c, 11), pool(&c, 22)), (Some(Low), Some(Bottom), Some(High)));
        assert_eq!(c.pool_usages(), Some([2 * UNIT, 3 * UNIT, 5 * UNIT]));

        // A hit joins the high pool, pushing its oldest down.
        assert!(hit(&c, 3));
        assert_eq!((pool(&c, 3), pool(&c, 21)), (Some(High), Some(Low)));
        assert_eq!(pool(&c, 12), Some(Bottom), "the low pool's oldest went down");

        // Eviction order: a stream of bottom inserts takes the bottom pool whole (5 entries,
        // oldest first) and never reaches the low and high pools.
        let low_high = [13, 20, 21, 22, 3];
        for k in 100..150 {
            put(&c, k, Bottom);
            for &kept in &low_high {
                assert!(pool(&c, kept).is_some(), "{kept} evicted by bottom insert {k}");
            }
        }
        assert_eq!(c.pool_usages(), Some([2 * UNIT, 3 * UNIT, 5 * UNIT]));
        assert_eq!(pool(&c, 144), None);
        assert_eq!(pool(&c, 145), Some(Bottom));
        // A stream of low inserts passes the low pool's entries to the bottom pool, where
        // they are evicted; the high pool stays.
        for k in 200..220 {
            put(&c, k, Low);
        }
        for k in [13, 20, 21] {
            assert_eq!(pool(&c, k), None, "{k}");
        }
        assert_eq!((pool(&c, 22), pool(&c, 3)), (Some(High), Some(High)));
        assert_eq!((pool(&c, 219), pool(&c, 215)), (Some(Low), Some(Bottom)));
        assert!(c.usage() <= c.capacity());
    }

    /// Without a high pool, high-priority entries and hits join the low pool; without a low
    /// pool, low-priority entries (and overflow from the high pool) join the bottom pool;
    /// with neither the cache is one LRU list, whatever the priority.
    #[test]
    fn missing_pools_fall_through_as_rocksdb() {
        use Priority::{Bottom, High, Low};
        let c = pools(10, 0.0, 0.5);
        put(&c, 1, High);
        put(&c, 2, Bottom);
        assert_eq!((pool(&c, 1), pool(&c, 2)), (Some(Low), Some(Bottom)));
        assert!(hit(&c, 2));
        assert_eq!(pool(&c, 2), Some(Low), "a hit entry joins the low pool");

        let c = pools(10, 0.5, 0.0);
        put(&c, 1, Low);
        put(&c, 2, Bottom);
        assert_eq!((pool(&c, 1), pool(&c, 2)), (Some(Bottom), Some(Bottom)));
        for k in 10..16 {
            put(&c, k, High);
        }
        assert_eq!(pool(&c, 10), Some(Bottom), "high overflow passes the empty low pool");
        assert_eq!(c.pool_usages(), Some([5 * UNIT, 0, 3 * UNIT]));

        let c = pools(4, 0.0, 0.0);
        put(&c, 1, High);
        put(&c, 2, Low);
        put(&c, 3, Bottom);
        put(&c, 4, High);
        assert!(hit(&c, 1));
        put(&c, 5, High);
        assert_eq!(pool(&c, 2), None, "plain LRU: the least recently used goes");
        assert!([1, 3, 4, 5].iter().all(|&k| pool(&c, k) == Some(Bottom)));
    }

    /// Pinned entries are passed by in every pool; shrinking the capacity shrinks the pools
    /// (RocksDB's `SetCapacity` then `MaintainPoolSize`).
    #[test]
    fn pools_follow_capacity_and_skip_pinned_entries() {
        use Priority::{Bottom, Low};
        let c = pools(10, 0.2, 0.4);
        for k in 0..4 {
            put(&c, k, Low);
        }
        for k in 10..16 {
            put(&c, k, Bottom);
        }
        let held = c.lookup(&Key::Block(OffsetableCacheKey::new(0, 0).with_offset(10))).unwrap();
        assert_eq!(pool(&c, 10), Some(Priority::High));
        drop(held);
        let pinned = c.lookup(&Key::Block(OffsetableCacheKey::new(0, 0).with_offset(11))).unwrap();
        c.set_capacity(5 * UNIT);
        assert!(c.usage() <= 5 * UNIT);
        let [h, l, _] = c.pool_usages().unwrap();
        assert!(h <= UNIT && l <= 2 * UNIT, "{h} {l}");
        assert!(pool(&c, 11).is_some(), "a pinned entry stays");
        for k in 100..120 {
            put(&c, k, Bottom);
        }
        assert!(pool(&c, 11).is_some(), "a pinned entry stays");
        drop(pinned);
    }

    /// RocksDB's `MakeSharedCache` refusals.
    #[test]
    fn pool_ratios_are_checked_as_rocksdb() {
        let o = |h, l| LruOptions { high_pri_pool_ratio: h, low_pri_pool_ratio: l, ..LruOptions::default() };
        assert!(!o(0.5, 0.5).invalid());
        assert!(!o(0.0, 1.0).invalid());
        assert!(o(0.6, 0.5).invalid());
        assert!(o(-0.1, 0.0).invalid());
        assert!(o(0.0, 1.1).invalid());
        assert!(LruOptions { num_shard_bits: 20, ..LruOptions::default() }.invalid());
    }

    /// `estimated_entry_charge` picks RocksDB's cache: 0 an AutoHyperClockCache, above 0 a
    /// FixedHyperClockCache whose shards hold at most their table's occupancy limit of
    /// entries (4 shards of 1 MiB with a 64 KiB estimate: 26 each), entries charged without
    /// per-entry metadata; under the strict limit a full table of pinned entries refuses with
    /// RocksDB's message.
    #[test]
    fn estimated_entry_charge_makes_a_fixed_table() {
        let opts = |est, strict| HyperClockOptions {
            capacity: 4 << 20,
            estimated_entry_charge: est,
            num_shard_bits: 2,
            strict_capacity_limit: strict,
        };
        let auto = BlockCache::new_hyper_clock_opts(&opts(0, false));
        assert_eq!((auto.name(), auto.usage()), ("AutoHyperClockCache", 0));
        let fixed = BlockCache::new_hyper_clock_opts(&opts(64 << 10, false));
        assert_eq!((fixed.name(), fixed.estimated_entry_charge()), ("FixedHyperClockCache", 64 << 10));
        assert_eq!(fixed.usage(), 4 * 2048, "four tables of 32 slots");
        let f = OffsetableCacheKey::unique();
        let entries = |c: &BlockCache| {
            let mut n = 0;
            c.for_each_entry(&mut |_, _| n += 1);
            n
        };
        for i in 0..1000 {
            auto.insert(f.with_offset(i), block(100)).unwrap();
            fixed.insert(f.with_offset(i), block(100)).unwrap();
        }
        assert_eq!(entries(&auto), 1000);
        assert_eq!(entries(&fixed), 4 * 26);
        let b = block(100).size();
        assert_eq!(fixed.usage(), 4 * 2048 + 4 * 26 * b);
        assert_eq!(auto.usage(), 1000 * (b + ENTRY_METADATA));
        let strict = BlockCache::new_hyper_clock_opts(&opts(64 << 10, true));
        let mut held = Vec::new();
        let mut err = None;
        for i in 0..1000 {
            match strict.insert(f.with_offset(i), block(100)) {
                Ok(_) => held.push(strict.get(&f.with_offset(i)).unwrap()),
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        let e = err.expect("a full table of pinned entries refuses");
        assert_eq!(e.kind(), ErrorKind::Aborted);
        assert!(
            e.to_string().contains(
                "Insert failed because unable to evict entries to stay within table occupancy limit."
            ),
            "{e}"
        );
        assert!(held.len() <= 4 * 26);
    }

    /// The clock cache stays within its capacity under a stream of inserts and hits from many
    /// threads, and keeps entries that are hit.
    #[test]
    fn hyper_clock_usage_bound_and_hits() {
        let c = Arc::new(BlockCache::new_hyper_clock(256 * 1024, 2, false));
        let f = OffsetableCacheKey::unique();
        let hot = f.with_offset(u64::MAX);
        c.insert(hot, block(1000)).unwrap();
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..2000u64 {
                        c.insert(f.with_offset(t * 1_000_000 + i), block(3000)).unwrap();
                        assert!(c.usage() <= c.capacity() + 4 * (3000 + 200));
                        let _ = c.get(&f.with_offset(t * 1_000_000 + i / 2));
                    }
                })
            })
            .collect();
        for (i, t) in threads.into_iter().enumerate() {
            t.join().unwrap_or_else(|_| panic!("thread {i}"));
            // Hit the hot entry between the threads' ends: it must survive the sweeps.
        }
        assert!(c.usage() <= c.capacity(), "{} > {}", c.usage(), c.capacity());
        let mut n = 0;
        c.for_each_entry(&mut |role, _| {
            assert_eq!(role, DATA_BLOCK);
            n += 1;
        });
        assert!(n > 40, "{n}");
    }

    #[test]
    fn clock_keeps_entries_that_are_hit() {
        let c = BlockCache::new_hyper_clock(64 * 1024, 0, false);
        let f = OffsetableCacheKey::unique();
        let hot = f.with_offset(u64::MAX);
        c.insert(hot, block(1000)).unwrap();
        for i in 0..1000 {
            assert!(c.get(&hot).is_some(), "a hot entry hit between inserts stays (insert {i})");
            c.insert(f.with_offset(i), block(4000)).unwrap();
        }
        assert!(c.usage() <= c.capacity());
    }

    #[test]
    fn reservations_are_pinned_until_dropped() {
        let c = Arc::new(BlockCache::new(1 << 20));
        let r = c.reserve(256 * 1024, role::WRITE_BUFFER).unwrap();
        assert_eq!(c.usage(), 256 * 1024 + ENTRY_METADATA);
        assert_eq!(c.pinned_usage(), c.usage());
        let f = OffsetableCacheKey::unique();
        for i in 0..1000 {
            c.insert(f.with_offset(i), block(4000)).unwrap();
        }
        assert!(c.pinned_usage() >= 256 * 1024, "a reservation is never evicted");
        drop(r);
        assert_eq!(c.pinned_usage(), 0);
        let mut roles = [0u64; 14];
        c.for_each_entry(&mut |role, _| roles[role] += 1);
        assert_eq!(roles[role::WRITE_BUFFER as usize], 0);
    }
}
