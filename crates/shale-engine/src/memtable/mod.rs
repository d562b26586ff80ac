//! The memtable: recent writes, in memory, sorted by internal key.
//!
//! Two skiplists (see [`skiplist`]): point entries (Value, Deletion, SingleDeletion, Merge)
//! and range tombstones. Every entry is stored inline in its skiplist node, right after the
//! node's tower of next pointers, in the list's arena as
//!
//! ```text
//! varint32 ikey_len | ikey = user_key | fixed64 LE (seq << 8 | type) | varint32 value_len | value
//! ```
//! (RocksDB's memtable entry encoding; in a family with user-defined timestamps a deletion's
//! type byte is 0x14, kTypeDeletionWithTimestamp). A range tombstone `[start, end)` is stored
//! with `user_key = start`, type RangeDeletion and `value = end`.
//!
//! Per-key protection (`memtable_protection_bytes_per_key` = N of 1, 2, 4, 8, as RocksDB's):
//! a point entry's stored value is followed by N checksum bytes, as in RocksDB's entry,
//!
//! ```text
//! ... | varint32 (value_len + N) | value | checksum: N bytes
//! ```
//! the low N bytes (little-endian) of an XXH3 of the user key, the 8 trailer bytes and the
//! value (RocksDB's `ProtectionInfo` mixes the same fields; the bytes never leave memory, so
//! the hash need not be RocksDB's). Every read of an entry's value checks them first
//! (`get`, version walks, iterators and so flushes), and answers Corruption with RocksDB's
//! message when they disagree. The skip list and the vector store the bytes as part of the
//! value; only this module adds and strips them. Range tombstones carry none (Shale keeps
//! them in a list of their own).
//!
//! `paranoid_memory_checks` (RocksDB's): an iterator's (and so a flush's) every step must
//! move strictly forward (or backward) in key order, as RocksDB's `NextAndValidate` /
//! `PrevAndValidate`, a version walk's too, and a seek may not land before its target;
//! Corruption ("Out-of-order keys found in skiplist.") otherwise. RocksDB's `Get` and `Seek`
//! also compare each pair of nodes their search passes at every level; Shale's search
//! (`skiplist.rs`) does not, so a list out of order only above level 0 goes unnoticed by a
//! point lookup until an iterator or flush steps over it.
//!
//! Why hand-written rather than a `BTreeMap` or a crossbeam skiplist: entries are encoded
//! inline in an arena (one allocation per many entries, no per-node `Box`), and ordering
//! uses the runtime [`InternalKeyComparator`] — user comparators are runtime values, which a
//! `K: Ord` map could only take by storing a comparator `Arc` in every key.
//!
//! With a prefix extractor or whole-key filtering and `memtable_prefix_bloom_size_ratio`
//! above 0, a Bloom filter ([`bloom`]) records each point entry's prefix (and key); `get` and
//! prefix seeks ([`MemTable::iter_prefix_filtered`]) pass over the memtable when it proves
//! the key or prefix absent, as RocksDB's.
//!
//! With `MemtableFactory::Vector` (RocksDB's VectorRep, [`vector`]) the point entries go
//! into a vector instead, in arrival order, sorted by reads; the point skip list then only
//! lends its arena (it stays empty).
//!
//! Concurrency: `add` and `add_concurrently` may be called from any number of threads at
//! once (the skiplist links with compare-and-swap; `add_concurrently` also allocates from a
//! per-thread shard of the arena); `get`, iterators and the counters never block and may run
//! concurrently with them. Counters are atomics updated after the entry is linked.

pub mod arena;
pub mod bloom;
pub mod skiplist;
pub mod vector;
pub mod write_buffer_manager;

use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as MemOrder};
use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{
    pack_seq_and_type, trailer, InternalKeyComparator, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER,
};
use skiplist::{SkipList, SkipListIter};
use vector::{VectorIter, VectorRep};
use write_buffer_manager::WriteBufferManagerState;

/// Arena block size for point entries.
const POINT_ARENA_BLOCK: usize = arena::DEFAULT_BLOCK_SIZE;
/// Arena block size for range tombstones (rare, so small blocks).
const TOMBSTONE_ARENA_BLOCK: usize = 16 << 10;

/// An in-memory, sorted write buffer. Share it through `Arc`.
///
/// Laid out for many memtables written at random (a thousand column families): every field
/// a write reads or writes outside the skiplist comes first, in the struct's first cache
/// line (`repr(C, align(64))`: the line starts the struct, the `Arc`'s counts sit in the
/// line before it), so a write to a family not written for a while misses on one line of
/// its memtable, which [`InsertHint::prefetch`] can ask for early.
#[repr(C, align(64))]
pub struct MemTable {
    /// Blob direct write: the blob files this memtable's blob indexes point into, handed
    /// over when it was switched; its flush seals them and adds them to the MANIFEST
    /// (`db/blob_direct.rs`).
    pub direct_blobs: parking_lot::Mutex<crate::blob_direct::Generation>,
    // The write's line.
    points: Arc<SkipList>,
    num_entries: AtomicU64,
    /// RocksDB's `data_size_`: the bytes `MemTable::Add` encodes, summed over the entries
    /// added ([`MemTable::data_size`]).
    data_size: AtomicU64,
    num_range_deletes: AtomicU64,
    first_seqno: AtomicU64,
    earliest_seqno: AtomicU64,
    /// The prefix (and whole-key) Bloom, if the family's options ask for one.
    bloom: Option<Box<bloom::MemTableBloom>>,
    num_deletes: AtomicU64,
    /// `icmp.timestamp_size() > 0`, kept here for the write's entry encoding.
    timestamps: bool,
    /// The newest u64 timestamp added (RocksDB's `MemTable::GetNewestUDT`, which a family
    /// with `persist_user_defined_timestamps = false` flushes by), valid once `has_udt`.
    newest_udt: AtomicU64,
    has_udt: AtomicBool,
    /// Point entries go to `vector` (a vector memtable), not to `points`.
    is_vector: bool,
    // Read by writes of merges, reads, flushes.
    icmp: InternalKeyComparator,
    id: u64,
    /// The family's `max_successive_merges` when this memtable was made (0: off).
    max_successive_merges: usize,
    /// The family's `memtable_max_range_deletions` when this memtable was made (0: none).
    max_range_deletions: u64,
    /// `memtable_protection_bytes_per_key` when this memtable was made (0: none).
    protection: u8,
    /// `paranoid_memory_checks` when this memtable was made.
    paranoid: bool,
    /// `memtable_verify_per_key_checksum_on_seek` (with `protection` above 0) when this
    /// memtable was made: skip-list searches check every entry they compare against.
    verify_on_seek: bool,
    /// The database's `allow_data_in_errors`: Corruption messages name keys.
    data_in_errors: bool,
    /// RocksDB's `MemTable::MarkForFlush`: an iterator scanned more hidden entries of this
    /// (active) memtable than `memtable_op_scan_flush_trigger` allows; the write path then
    /// switches it and flushes it however small it is ([`MemTable::should_flush_now`]).
    marked_for_flush: std::sync::atomic::AtomicBool,
    /// `memtable_insert_with_hint_prefix_extractor`: a splice kept per prefix that a
    /// writer's insert of a key with that prefix starts from ([`InsertHints`]).
    insert_hints: Option<Box<InsertHints>>,
    /// Skip-list inserts started from an insert hint (`hinted_inserts`).
    hinted_inserts: AtomicU64,
    /// A hash memtable factory (HashSkipList, HashLinkList) with this prefix extractor:
    /// prefix iterators see one prefix's bucket only (see [`MemTable::iter_prefix_filtered`]).
    hash_buckets: Option<crate::slice_transform::SliceTransformRef>,
    /// `inplace_update_support`: the striped locks (`inplace_update_num_locks` of them) that
    /// [`MemTable::update`] writes a value under and every reader of a value reads it under.
    inplace: Option<InPlace>,
    tombstones: SkipList,
    /// The vector memtable's entries (`MemtableFactory::Vector`); `points` lends its arena.
    vector: Option<Arc<VectorRep>>,
    /// RocksDB's `is_immutable_` and `immutable_mutex_`: set by [`MemTable::mark_immutable`]
    /// under the write lock, so no [`MemTable::add_redundant_range_tombstone`] (which adds
    /// under the read lock) lands after the memtable was switched out.
    immutable: AtomicBool,
    immutable_lock: parking_lot::RwLock<()>,
    /// RocksDB's `ingest_seqno_barrier_`: the largest sequence an ingestion assigned while
    /// this memtable was active; read-path range tombstones below it are refused.
    ingest_barrier: AtomicU64,
}

/// RocksDB's `memtable_insert_with_hint_prefix_extractor` (`MemTable::Add` with
/// `insert_hints_`): a skip-list insert by the write leader (not a concurrent one) of a key
/// in the extractor's domain starts from the splice the last insert of the same prefix
/// left, so keys that arrive in order within a prefix link in O(1). The hints' memory is
/// part of the memtable's usage, as RocksDB counts its `insert_hints_` map.
struct InsertHints {
    extractor: crate::slice_transform::SliceTransformRef,
    hints: parking_lot::Mutex<std::collections::HashMap<Vec<u8>, skiplist::InsertHint>>,
    /// The bytes of the map's hints and prefixes.
    bytes: AtomicU64,
}

/// In-place updates (RocksDB's `inplace_update_support`, `MemTable::Update`): a Put whose
/// key's newest entry here is of the same type with a value at least as long overwrites
/// that value (the entry keeps its sequence, so older snapshots no longer see the old value,
/// as RocksDB documents). The write happens under the key's stripe of `locks`; readers of
/// values (`get`, `for_each_version`, iterators) take the same stripe and copy the value out,
/// so no reader ever sees a value half written.
struct InPlace {
    locks: Box<[parking_lot::RwLock<()>]>,
    /// Counts `rocksdb.number.keys.updated`.
    stats: Option<Arc<shale_format::statistics::Statistics>>,
}

impl InPlace {
    fn lock(&self, user_key: &[u8]) -> &parking_lot::RwLock<()> {
        let i = xxhash_rust::xxh3::xxh3_64(user_key) % self.locks.len() as u64;
        &self.locks[i as usize]
    }
}

/// What the write leader keeps of an active memtable to prefetch an insert's lines outside
/// the skiplist's nodes (see [`InsertHint::prefetch`]): its point list, so that neither
/// step has to load the list's address from the memtable (a miss the prefetch should hide).
#[derive(Clone)]
pub struct InsertHint {
    points: Arc<SkipList>,
}

impl InsertHint {
    /// Asks the CPU to start loading what inserting a point entry into `mem` (the memtable
    /// this hint was made from) reads and writes outside the skiplist's nodes: the
    /// memtable's first line (the counters, the list pointer, the Bloom pointer) and the
    /// point list's own struct (its head tower, height, and the arena's state and lock).
    /// With many memtables written at random those lines are cold; the write leader asks
    /// for them before its WAL write, so the misses overlap it. Loads nothing itself.
    #[inline]
    pub fn prefetch(&self, mem: &Arc<MemTable>) {
        debug_assert!(Arc::ptr_eq(&mem.points, &self.points));
        prefetch_lines(Arc::as_ptr(mem) as usize, 64);
        prefetch_lines(Arc::as_ptr(&self.points) as usize, std::mem::size_of::<SkipList>());
    }

    /// The second step of [`InsertHint::prefetch`], once its lines arrived (after the WAL
    /// write): asks for the lines the next point entry's node and value will be written to
    /// (the point list's arena tail, read under its lock when that is free at once), and
    /// for the first node the skiplist search for `key_start` loads (`key_start`: the user
    /// key's first 8 bytes, or all of it when shorter), so that these misses overlap.
    #[inline]
    pub fn prefetch_next_entry(&self, key_start: &[u8]) {
        self.points.prefetch_next_node();
        self.points.prefetch_search_start(key_start);
    }
}

/// Asks the CPU to start loading the cache lines of `len` bytes at `addr` (a hint: it never
/// faults, so a stale address is harmless).
#[inline(always)]
fn prefetch_lines(addr: usize, len: usize) {
    let mut line = addr & !63;
    while line < addr + len {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never
        // faults, whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch(line as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
        line += 64;
    }
}

impl MemTable {
    /// What the write leader keeps to prefetch this memtable's insert lines.
    pub fn insert_hint(&self) -> InsertHint {
        InsertHint { points: Arc::clone(&self.points) }
    }

    /// This memtable with the Bloom filter `o` asks for (RocksDB's memtable prefix Bloom:
    /// `memtable_prefix_bloom_size_ratio`, the prefix extractor,
    /// `memtable_whole_key_filtering`), and the family's `max_successive_merges`, as RocksDB's
    /// `ImmutableMemTableOptions` captures it. Call before the first `add`.
    pub fn with_bloom_of(mut self, o: &crate::config::MemTableConfig) -> MemTable {
        self.max_successive_merges = o.max_successive_merges;
        self.max_range_deletions = o.max_range_deletions;
        self.protection = o.protection_bytes_per_key;
        self.paranoid = o.paranoid_memory_checks;
        // RocksDB's key_validation_callback_ exists only with protection bytes to check.
        self.verify_on_seek = o.verify_checksum_on_seek && o.protection_bytes_per_key > 0;
        self.data_in_errors = o.allow_data_in_errors;
        // RocksDB's memtable arena takes `memtable_huge_page_size` (its one arena holds
        // point entries and range tombstones alike; here each list has its arena).
        if o.huge_page_size > 0 {
            self.points.set_huge_page_size(o.huge_page_size);
            self.tombstones.set_huge_page_size(o.huge_page_size);
        }
        self.bloom = bloom::MemTableBloom::for_options(
            o.write_buffer_size,
            o.prefix_bloom_ratio,
            o.prefix_extractor.clone(),
            o.whole_key_filtering,
        )
        .map(|b| Box::new(b.with_timestamp_size(self.icmp.timestamp_size())));
        if o.inplace_update_support {
            // RocksDB sizes its lock array with `inplace_update_num_locks` (0 would leave it
            // no stripe to hash to; one lock then).
            let n = o.inplace_update_num_locks.max(1);
            self.inplace = Some(InPlace {
                locks: (0..n).map(|_| parking_lot::RwLock::new(())).collect(),
                stats: o.statistics.clone(),
            });
        }
        if let Some(reserve) = o.vector_rep {
            self.vector = Some(Arc::new(VectorRep::new(Arc::clone(&self.points), reserve)));
            self.is_vector = true;
        }
        if let Some(x) = &o.insert_with_hint_prefix_extractor {
            // RocksDB: only the skip list implements it; other representations ignore it.
            if o.vector_rep.is_none() && !o.hash_rep {
                self.insert_hints = Some(Box::new(InsertHints {
                    extractor: x.clone(),
                    hints: parking_lot::Mutex::new(std::collections::HashMap::new()),
                    bytes: AtomicU64::new(0),
                }));
            }
        }
        if o.hash_rep {
            // RocksDB falls back to the skip list when there is no prefix extractor.
            self.hash_buckets = o.prefix_extractor.clone();
        }
        self
    }

    /// How many blocks of the memtable's arenas are on huge pages (`memtable_huge_page_size`).
    pub fn huge_page_blocks(&self) -> usize {
        self.points.huge_blocks() + self.tombstones.huge_blocks()
    }

    /// RocksDB's `memtable_max_range_deletions` reached (its `ShouldFlushNow`): the memtable
    /// holds as many range deletions as the family's option said when it was made, and is
    /// to be switched and flushed however small it is.
    pub fn range_deletions_full(&self) -> bool {
        self.max_range_deletions > 0 && self.num_range_deletes() >= self.max_range_deletions
    }

    /// RocksDB's `MemTable::MarkForFlush` (`memtable_op_scan_flush_trigger`): the write
    /// path switches and flushes this memtable at the next write to its family.
    pub fn mark_for_flush(&self) {
        self.marked_for_flush.store(true, MemOrder::Relaxed);
    }

    /// Whether an iterator marked this memtable for flush ([`MemTable::mark_for_flush`]).
    pub fn is_marked_for_flush(&self) -> bool {
        self.marked_for_flush.load(MemOrder::Relaxed)
    }

    /// RocksDB's `MemTable::ShouldFlushNow` apart from the size test: marked for flush by an
    /// iterator, or `memtable_max_range_deletions` reached.
    pub fn should_flush_now(&self) -> bool {
        self.is_marked_for_flush() || self.range_deletions_full()
    }

    /// The family's `max_successive_merges` when this memtable was made.
    pub fn max_successive_merges(&self) -> usize {
        self.max_successive_merges
    }

    /// How many merge operands of `user_key` with sequence <= `snapshot` lie on top of its
    /// entries here, newest first, counting at most `limit` (RocksDB's
    /// `MemTable::CountSuccessiveMergeEntries`; range tombstones are not looked at).
    pub fn count_successive_merges(&self, user_key: &[u8], snapshot: SequenceNumber, limit: usize) -> usize {
        let mut n = 0;
        // RocksDB's CountSuccessiveMergeEntries reads types only: no checksum is checked,
        // and the walk cannot fail.
        let walk = self.walk_versions(user_key, snapshot, false, None, |_, _, t, _| {
            if t != ValueType::Merge || n >= limit {
                return false;
            }
            n += 1;
            n < limit
        });
        debug_assert!(walk.is_ok(), "an unchecked walk has no error to give");
        n
    }

    /// Whether the memtable has a Bloom filter.
    pub fn has_bloom(&self) -> bool {
        self.bloom.is_some()
    }

    /// An empty memtable ordered by `icmp`; `id` is the caller's identifier for it.
    pub fn new(icmp: InternalKeyComparator, id: u64) -> MemTable {
        MemTable::with_arena_block_size(icmp, id, POINT_ARENA_BLOCK)
    }

    /// An empty memtable whose point entries take arena blocks of `arena_block_size` bytes
    /// (the family's sanitized `arena_block_size`: by default an eighth of the write buffer
    /// size, at most 1 MiB, as RocksDB's). Its arenas are charged to `tracker` (the
    /// database's write buffer manager), if any.
    pub fn for_write_buffer(
        icmp: InternalKeyComparator,
        id: u64,
        arena_block_size: usize,
        tracker: Option<Arc<WriteBufferManagerState>>,
    ) -> MemTable {
        MemTable::build(icmp, id, arena_block_size, tracker)
    }

    fn with_arena_block_size(icmp: InternalKeyComparator, id: u64, block: usize) -> MemTable {
        MemTable::build(icmp, id, block, None)
    }

    fn build(
        icmp: InternalKeyComparator,
        id: u64,
        block: usize,
        tracker: Option<Arc<WriteBufferManagerState>>,
    ) -> MemTable {
        MemTable {
            direct_blobs: parking_lot::Mutex::new(Default::default()),
            points: Arc::new(SkipList::with_tracker(icmp.clone(), block, tracker.clone())),
            tombstones: SkipList::with_tracker(icmp.clone(), TOMBSTONE_ARENA_BLOCK, tracker),
            timestamps: icmp.timestamp_size() > 0,
            newest_udt: AtomicU64::new(0),
            has_udt: AtomicBool::new(false),
            icmp,
            id,
            num_entries: AtomicU64::new(0),
            data_size: AtomicU64::new(0),
            num_deletes: AtomicU64::new(0),
            num_range_deletes: AtomicU64::new(0),
            first_seqno: AtomicU64::new(MAX_SEQUENCE_NUMBER),
            earliest_seqno: AtomicU64::new(MAX_SEQUENCE_NUMBER),
            bloom: None,
            hash_buckets: None,
            inplace: None,
            vector: None,
            is_vector: false,
            max_successive_merges: 0,
            max_range_deletions: 0,
            protection: 0,
            paranoid: false,
            verify_on_seek: false,
            data_in_errors: false,
            marked_for_flush: std::sync::atomic::AtomicBool::new(false),
            insert_hints: None,
            hinted_inserts: AtomicU64::new(0),
            immutable: AtomicBool::new(false),
            immutable_lock: parking_lot::RwLock::new(()),
            ingest_barrier: AtomicU64::new(0),
        }
    }

    /// The newest u64 user-defined timestamp added, None when none was (or the family has
    /// no timestamps).
    pub fn newest_udt(&self) -> Option<u64> {
        self.has_udt.load(MemOrder::Relaxed).then(|| self.newest_udt.load(MemOrder::Relaxed))
    }

    /// The memtable became immutable (switched out for a flush): its memory stops counting
    /// as active in the write buffer manager.
    pub fn mark_immutable(&self) {
        {
            let _w = self.immutable_lock.write();
            self.immutable.store(true, MemOrder::Relaxed);
        }
        if let Some(v) = &self.vector {
            v.mark_immutable();
        }
        self.points.done_allocating();
        self.tombstones.done_allocating();
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// RocksDB's `MemTable::AddLogicallyRedundantRangeTombstone` (the read path's range
    /// conversion, `min_tombstones_for_range_conversion`): adds the range tombstone
    /// `[start, end)` at `seq` as a concurrent writer would, unless the memtable became
    /// immutable, an ingestion into the family is under way (`ingest_lock`, the family's,
    /// held shared by every ingestion: taken exclusively here without waiting), or `seq` is
    /// below the sequence of an ingestion made while this memtable was active. Returns
    /// whether it was added.
    pub fn add_redundant_range_tombstone(
        &self,
        seq: SequenceNumber,
        start: &[u8],
        end: &[u8],
        ingest_lock: &parking_lot::RwLock<()>,
    ) -> bool {
        if self.immutable.load(MemOrder::Relaxed) {
            return false;
        }
        let _r = self.immutable_lock.read();
        if self.immutable.load(MemOrder::Relaxed) {
            return false;
        }
        let Some(_ingest) = ingest_lock.try_write() else { return false };
        if seq < self.ingest_barrier.load(MemOrder::Relaxed) {
            return false;
        }
        self.add_impl(seq, ValueType::RangeDeletion, start, end, true)
    }

    /// RocksDB's `MemTable::BumpIngestSeqnoBarrier`: an ingestion assigned `seq` while this
    /// memtable was active.
    pub fn bump_ingest_barrier(&self, seq: SequenceNumber) {
        self.ingest_barrier.fetch_max(seq, MemOrder::Relaxed);
    }

    pub fn comparator(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    /// Adds one entry. For `RangeDeletion`, `user_key` is the start and `value` the end
    /// user key of the deleted range `[start, end)`. Returns false (adding nothing) when an
    /// entry with the same user key, sequence and type is already present.
    ///
    /// # Panics
    /// If the key or value is 4 GiB or longer.
    pub fn add(&self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) -> bool {
        self.add_impl(seq, t, user_key, value, false)
    }

    #[inline]
    fn add_impl(
        &self,
        seq: SequenceNumber,
        t: ValueType,
        user_key: &[u8],
        value: &[u8],
        concurrent: bool,
    ) -> bool {
        self.add_hinted(seq, t, user_key, value, concurrent, None)
    }

    /// As [`MemTable::add`], for writers adding to this memtable at the same time (the
    /// members of a write group with `allow_concurrent_memtable_write`): the skiplist's
    /// memory comes from a per-thread shard of its arena.
    pub fn add_concurrently(&self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) -> bool {
        self.add_impl(seq, t, user_key, value, true)
    }

    /// As [`MemTable::add_concurrently`], starting a point entry's skip-list insert from
    /// `hint`, the splice the writer's previous insert through it left (RocksDB's
    /// `InsertKeyWithHintConcurrently` with `memtable_insert_hint_per_batch`). The hint is
    /// the caller's (one per batch and memtable), so its memory is not this memtable's. A
    /// vector memtable and range deletions insert without it, as RocksDB's reps do.
    pub fn add_concurrently_with_hint(
        &self,
        seq: SequenceNumber,
        t: ValueType,
        user_key: &[u8],
        value: &[u8],
        hint: &mut skiplist::InsertHint,
    ) -> bool {
        self.add_hinted(seq, t, user_key, value, true, Some(hint))
    }

    /// Skip-list inserts that started from an insert hint (a prefix's, or a batch's).
    pub fn hinted_inserts(&self) -> u64 {
        self.hinted_inserts.load(MemOrder::Relaxed)
    }

    /// A Put (of type `t`: Value, BlobIndex or WideColumnEntity) as RocksDB's
    /// `MemTable::Update` makes it with `inplace_update_support`: when the newest entry of
    /// `user_key` here has type `t` and a value at least as long as `value`, that value is
    /// overwritten in place (the entry keeps its sequence; `seq` is used by nothing) and
    /// `rocksdb.number.keys.updated` counts one; otherwise the entry is added as by
    /// [`MemTable::add`]. Without `inplace_update_support`, or for any other type, it is
    /// [`MemTable::add`]. Single writer only (RocksDB refuses `inplace_update_support` with
    /// `allow_concurrent_memtable_write`). Returns as `add` does (true when updated).
    pub fn put(&self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) -> bool {
        if let Some(ip) = &self.inplace {
            if matches!(t, ValueType::Value | ValueType::BlobIndex | ValueType::WideColumnEntity)
                && self.update_in_place(ip, seq, t, user_key, value)
            {
                shale_format::statistics::record_tick(
                    ip.stats.as_deref(),
                    shale_format::statistics::Ticker::NumberKeysUpdated,
                    1,
                );
                return true;
            }
        }
        self.add(seq, t, user_key, value)
    }

    /// Whether `put` overwrote the newest entry of `user_key` in place.
    fn update_in_place(
        &self,
        ip: &InPlace,
        seq: SequenceNumber,
        t: ValueType,
        user_key: &[u8],
        value: &[u8],
    ) -> bool {
        let seq = seq.min(MAX_SEQUENCE_NUMBER);
        let lookup = if self.timestamps {
            crate::key::lookup_key_ts(user_key, seq)
        } else {
            crate::key::lookup_key(user_key, seq)
        };
        // With per-key protection the new value carries the checksum of the entry it goes
        // into, which keeps its own sequence: find that entry first (this is the only
        // writer, so the overwrite below finds the same one).
        let protected;
        let (value, entry) = if self.protection > 0 {
            let mut it = self.point_iter();
            it.seek(&lookup);
            if !it.valid() {
                return false;
            }
            let ikey = it.key().to_vec();
            protected = self.protect(&ikey, value);
            (&protected[..], Some(ikey))
        } else {
            (value, None)
        };
        let accept = |ikey: &[u8]| {
            if self.icmp.compare_user(crate::key::user_key(ikey), user_key) != Ordering::Equal {
                return None;
            }
            if entry.as_deref().is_some_and(|e| e != ikey) {
                return None;
            }
            let tr = trailer(ikey);
            if tr & 0xff != t as u64 {
                return None;
            }
            // The entry's own key bytes pick the stripe, as every reader's do.
            Some(ip.lock(crate::key::user_key(ikey)).write())
        };
        // SAFETY: with `inplace` set, writes to this memtable are single-threaded (the
        // family's writes are serialized: RocksDB's ValidateOptions, matched by the facade,
        // refuses concurrent memtable writes with in-place updates), and every value reader
        // of this memtable (`get`, `for_each_version`, the iterators) reads under the key's
        // read lock, which excludes the write guard `accept` returns.
        unsafe {
            match &self.vector {
                Some(v) => v.overwrite_value(&lookup, value, accept),
                None => self.points.overwrite_value(&lookup, value, accept),
            }
        }
    }

    /// `add_impl` with a concurrent writer's batch hint (`add_concurrently_with_hint`).
    #[inline]
    fn add_hinted(
        &self,
        seq: SequenceNumber,
        t: ValueType,
        user_key: &[u8],
        value: &[u8],
        concurrent: bool,
        batch_hint: Option<&mut skiplist::InsertHint>,
    ) -> bool {
        let seq = seq.min(MAX_SEQUENCE_NUMBER);
        let packed = crate::key::pack_seq_and_type_ts(seq, t, self.timestamps);
        if self.timestamps && user_key.len() >= crate::comparator::U64_TS_SIZE {
            let ts = &user_key[user_key.len() - crate::comparator::U64_TS_SIZE..];
            self.newest_udt.fetch_max(crate::comparator::decode_u64_ts(ts), MemOrder::Relaxed);
            self.has_udt.store(true, MemOrder::Relaxed);
        }
        let list = if t == ValueType::RangeDeletion { &self.tombstones } else { &self.points };
        if t != ValueType::RangeDeletion {
            // Before the entry is linked, so a reader that can see it sees its bits too.
            if let Some(b) = &self.bloom {
                b.add(user_key);
            }
        }
        let protected;
        // RocksDB's `encoded_len` (its `MemTable::Add`): the internal key and the value with
        // their varint32 lengths, and the protection bytes, whatever the entry's type.
        let encoded = (crate::coding::varint_length(user_key.len() as u64 + 8)
            + user_key.len()
            + 8
            + crate::coding::varint_length(value.len() as u64)
            + value.len()
            + usize::from(self.protection)) as u64;
        let value = if self.protection > 0 && t != ValueType::RangeDeletion {
            // The internal key and the protected value on the stack when they are short
            // (no allocation per write): RocksDB encodes the entry and then its checksum
            // straight into the node; here the value and its checksum bytes go to the
            // node in one piece.
            let mut ikey: smallvec::SmallVec<[u8; 64]> =
                smallvec::SmallVec::with_capacity(user_key.len() + 8);
            ikey.extend_from_slice(user_key);
            ikey.extend_from_slice(&packed.to_le_bytes());
            protected = self.protect(&ikey, value);
            &protected[..]
        } else {
            value
        };
        let inserted = if self.is_vector && t != ValueType::RangeDeletion {
            match &self.vector {
                Some(v) => v.insert(user_key, packed, value, concurrent),
                None => false,
            }
        } else if concurrent {
            match batch_hint.filter(|_| t != ValueType::RangeDeletion) {
                Some(hint) => {
                    self.hinted_inserts.fetch_add(1, MemOrder::Relaxed);
                    list.insert_concurrently_with_hint(user_key, packed, value, hint)
                }
                None => list.insert_concurrently(user_key, packed, value),
            }
        } else if let Some(h) = self.insert_hints.as_deref().filter(|_| t != ValueType::RangeDeletion) {
            match h.extractor.transform(user_key).filter(|_| h.extractor.in_domain(user_key)) {
                Some(prefix) => {
                    let mut map = h.hints.lock();
                    if !map.contains_key(prefix) {
                        h.bytes.fetch_add(
                            (skiplist::InsertHint::SIZE + prefix.len() + 32) as u64,
                            MemOrder::Relaxed,
                        );
                    }
                    let hint = map.entry(prefix.to_vec()).or_default();
                    self.hinted_inserts.fetch_add(1, MemOrder::Relaxed);
                    list.insert_with_hint(user_key, packed, value, hint)
                }
                None => list.insert(user_key, packed, value),
            }
        } else {
            list.insert(user_key, packed, value)
        };
        if !inserted {
            return false;
        }
        self.num_entries.fetch_add(1, MemOrder::Relaxed);
        self.data_size.fetch_add(encoded, MemOrder::Relaxed);
        match t {
            ValueType::Deletion => {
                self.num_deletes.fetch_add(1, MemOrder::Relaxed);
            }
            ValueType::RangeDeletion => {
                self.num_range_deletes.fetch_add(1, MemOrder::Relaxed);
            }
            _ => {}
        }
        // Sequences mostly grow: a plain load skips the locked read-modify-write (a full
        // barrier) when the minimum stays; `fetch_min` is only ever lowering, so a writer
        // that sees a value at or below `seq` has nothing to do.
        if seq < self.first_seqno.load(MemOrder::Relaxed) {
            self.first_seqno.fetch_min(seq, MemOrder::Relaxed);
        }
        if seq < self.earliest_seqno.load(MemOrder::Relaxed) {
            self.earliest_seqno.fetch_min(seq, MemOrder::Relaxed);
        }
        true
    }

    /// [`MemTable::try_get`] for tests, which never corrupt an entry.
    #[cfg(test)]
    pub fn get(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
    ) -> Option<(SequenceNumber, ValueType, Vec<u8>)> {
        self.try_get(user_key, snapshot).expect("memtable entry checks")
    }

    /// The newest point entry of `user_key` with sequence <= `snapshot`:
    /// `(sequence, type, value)`. Range tombstones are not consulted (see
    /// [`MemTable::max_covering_tombstone_seq`]). Corruption when the entry's protection
    /// bytes or (with `paranoid_memory_checks`) the order of the search's landing disagree.
    pub fn try_get(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
    ) -> Result<Option<(SequenceNumber, ValueType, Vec<u8>)>> {
        if self.bloom.as_ref().and_then(|b| b.get_may_contain(user_key)) == Some(false) {
            return Ok(None);
        }
        let packed = pack_seq_and_type(snapshot.min(MAX_SEQUENCE_NUMBER), crate::key::VALUE_TYPE_FOR_LOOKUP)
            .to_le_bytes();
        let mut stack = [0u8; 128];
        let heap;
        let lookup: &[u8] = if user_key.len() + 8 <= stack.len() {
            stack[..user_key.len()].copy_from_slice(user_key);
            stack[user_key.len()..user_key.len() + 8].copy_from_slice(&packed);
            &stack[..user_key.len() + 8]
        } else {
            heap = [user_key, &packed[..]].concat();
            &heap
        };
        if let Some(ip) = &self.inplace {
            // Values may be overwritten in place: read the entry's value under its lock,
            // never another key's.
            let mut it = self.point_iter();
            it.seek(lookup);
            if !it.valid() {
                return Ok(None);
            }
            self.check_landing(it.key(), lookup)?;
            if self.icmp.compare_user(crate::key::user_key(it.key()), user_key) != Ordering::Equal {
                return Ok(None);
            }
            let tr = trailer(it.key());
            let Some(t) = ValueType::from_u8((tr & 0xff) as u8) else { return Ok(None) };
            let _g = ip.lock(crate::key::user_key(it.key())).read();
            let value = self.unprotect(it.key(), it.value())?;
            return Ok(Some((tr >> 8, t, value.to_vec())));
        }
        let found = match &self.vector {
            Some(v) => v.seek_entry(lookup),
            None if self.verify_on_seek => {
                self.points.seek_entry_checked(lookup, |k, v| self.check_entry(k, v))?
            }
            None => self.points.seek_entry(lookup),
        };
        let Some((ikey, value)) = found else { return Ok(None) };
        self.check_landing(ikey, lookup)?;
        if self.icmp.compare_user(crate::key::user_key(ikey), user_key) != Ordering::Equal {
            return Ok(None);
        }
        let tr = trailer(ikey);
        let Some(t) = ValueType::from_u8((tr & 0xff) as u8) else { return Ok(None) };
        let value = self.unprotect(ikey, value)?;
        Ok(Some((tr >> 8, t, value.to_vec())))
    }

    /// `memtable_protection_bytes_per_key`: `value` followed by its entry's checksum bytes
    /// (see the module comment), for the entry of internal key `ikey`.
    fn protect(&self, ikey: &[u8], value: &[u8]) -> smallvec::SmallVec<[u8; 256]> {
        let n = usize::from(self.protection);
        let sum = entry_checksum(ikey, value).to_le_bytes();
        let mut out = smallvec::SmallVec::with_capacity(value.len() + n);
        out.extend_from_slice(value);
        out.extend_from_slice(&sum[..n]);
        out
    }

    /// The value of the point entry `ikey` from its `stored` bytes, its checksum bytes (if
    /// the memtable keeps them) checked and taken off: Corruption, with RocksDB's message,
    /// when they disagree.
    #[inline]
    fn unprotect<'a>(&self, ikey: &[u8], stored: &'a [u8]) -> Result<&'a [u8]> {
        let n = usize::from(self.protection);
        if n == 0 {
            return Ok(stored);
        }
        let corrupted = || {
            let mut msg = "Corrupted memtable entry, per key-value checksum verification failed.".to_string();
            // RocksDB's `MemTable::VerifyEntryChecksum` words, with `allow_data_in_errors`.
            if self.data_in_errors && ikey.len() >= 8 {
                let t = trailer(ikey);
                msg.push_str(&format!(
                    "Unrecognized value type: {}. User key: {}. seq: {}.",
                    t & 0xff,
                    upper_hex(crate::key::user_key(ikey)),
                    t >> 8
                ));
            }
            crate::error::Error::corruption(msg)
        };
        let Some(split) = stored.len().checked_sub(n) else { return Err(corrupted()) };
        let (value, sum) = stored.split_at(split);
        if entry_checksum(ikey, value).to_le_bytes()[..n] != *sum {
            return Err(corrupted());
        }
        Ok(value)
    }

    /// `memtable_verify_per_key_checksum_on_seek`: the protection bytes of an entry a search
    /// compares against on its way (RocksDB's `MemTable::ValidateKey`).
    #[inline]
    fn check_entry(&self, ikey: &[u8], stored: &[u8]) -> Result<()> {
        self.unprotect(ikey, stored).map(|_| ())
    }

    /// `memtable_verify_per_key_checksum_on_seek`: the search for `target` an iterator's or
    /// a version walk's seek makes, run once more checking every entry it compares against
    /// (RocksDB's `SeekAndValidate`); nothing to do for a vector memtable (RocksDB checks
    /// only in its skip lists), when the option is off, or with in-place updates (an entry
    /// passed on the way may be being rewritten under its key's lock, which this check does
    /// not take: it would read a value half written; entries read are checked under it).
    fn check_seek_path(&self, target: &[u8]) -> Result<()> {
        if !self.verify_on_seek || self.vector.is_some() || self.inplace.is_some() {
            return Ok(());
        }
        self.points.seek_entry_checked(target, |k, v| self.check_entry(k, v)).map(|_| ())
    }

    /// `paranoid_memory_checks`: a search for `target` may not land before it.
    #[inline]
    fn check_landing(&self, found: &[u8], target: &[u8]) -> Result<()> {
        if self.paranoid && self.icmp.compare(found, target) == Ordering::Less {
            return Err(self.out_of_order(target, found));
        }
        Ok(())
    }

    /// [`MemTable::try_for_each_version`] for tests, which never corrupt an entry.
    #[cfg(test)]
    pub fn for_each_version(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
        f: impl FnMut(SequenceNumber, ValueType, &[u8]) -> bool,
    ) {
        self.try_for_each_version(user_key, snapshot, f).expect("memtable entry checks")
    }

    /// For a point read of `user_key` (RocksDB's `MemTable::Get` and batched `MultiGet`):
    /// false when the memtable's Bloom proves the key absent. Counts the perf context's
    /// `bloom_memtable_hit_count`/`bloom_memtable_miss_count` for each check, as RocksDB's;
    /// an empty memtable is not checked (RocksDB's `Get` returns before its Bloom).
    pub fn get_may_contain(&self, user_key: &[u8]) -> bool {
        if self.is_empty() {
            return true;
        }
        self.bloom.as_ref().and_then(|b| b.get_may_contain(user_key)) != Some(false)
    }

    /// Calls `f(sequence, type, value)` on the point entries of `user_key` with sequence <=
    /// `snapshot`, newest first, until it returns false (a merge lookup's walk, RocksDB's
    /// `MemTable::Get` with `SaveValue` going on past merge operands). Corruption, and no
    /// call for it, when an entry's protection bytes or (with `paranoid_memory_checks`) the
    /// walk's key order disagree.
    pub fn try_for_each_version(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
        mut f: impl FnMut(SequenceNumber, ValueType, &[u8]) -> bool,
    ) -> Result<()> {
        self.walk_versions(user_key, snapshot, true, None, |_, s, t, v| f(s, t, v))
    }

    /// [`MemTable::try_for_each_version`] giving `f` each entry's user key too (in a family
    /// with user-defined timestamps, with the version's own timestamp, which a blob record
    /// of the entry repeats: RocksDB's `SaveValue` passes `parsed_key.user_key` on).
    pub fn try_for_each_version_keyed(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
        f: impl FnMut(&[u8], SequenceNumber, ValueType, &[u8]) -> bool,
    ) -> Result<()> {
        self.walk_versions(user_key, snapshot, true, None, f)
    }

    /// [`MemTable::try_for_each_version`] for one key of a sorted batch
    /// (`memtable_batch_lookup_optimization`, RocksDB's batched `MemTable::MultiGet`): a
    /// skip-list memtable searches from `finger`, the path the batch's previous key left;
    /// other representations look each key up alone, as RocksDB's do. The keys a finger
    /// serves must come in the comparator's order.
    pub fn try_for_each_version_batched(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
        finger: &mut skiplist::Finger,
        mut f: impl FnMut(SequenceNumber, ValueType, &[u8]) -> bool,
    ) -> Result<()> {
        self.walk_versions(user_key, snapshot, true, Some(finger), |_, s, t, v| f(s, t, v))
    }

    /// The walk of `try_for_each_version`; `checked`: verify protection bytes and order.
    fn walk_versions(
        &self,
        user_key: &[u8],
        snapshot: SequenceNumber,
        checked: bool,
        finger: Option<&mut skiplist::Finger>,
        mut f: impl FnMut(&[u8], SequenceNumber, ValueType, &[u8]) -> bool,
    ) -> Result<()> {
        let seq = snapshot.min(MAX_SEQUENCE_NUMBER);
        let lookup = if self.icmp.timestamp_size() > 0 {
            crate::key::lookup_key_ts(user_key, seq)
        } else {
            crate::key::lookup_key(user_key, seq)
        };
        if checked {
            self.check_seek_path(&lookup)?;
        }
        let mut it = match (&self.vector, finger) {
            // A plain lookup borrows the list (no `Arc` clone: see `SkipListCursor`).
            (None, None) => GetCursor::Skip(self.points.cursor(&lookup)),
            (_, finger) => {
                let mut it = self.point_iter();
                match (&mut it, finger) {
                    (PointIter::Skip(s), Some(finger)) => s.seek_with_finger(&lookup, finger),
                    (it, _) => it.seek(&lookup),
                }
                GetCursor::Iter(it)
            }
        };
        let paranoid = checked && self.paranoid;
        let mut prev: Vec<u8> = Vec::new();
        if paranoid && it.valid() {
            self.check_landing(it.key(), &lookup)?;
        }
        while it.valid() {
            let ikey = it.key();
            if paranoid {
                if !prev.is_empty() && self.icmp.compare(&prev, ikey) != Ordering::Less {
                    return Err(self.out_of_order(&prev, ikey));
                }
                prev.clear();
                prev.extend_from_slice(ikey);
            }
            // With timestamps `user_key` carries the read timestamp: every older version of
            // the key follows it.
            if self.icmp.compare_user_without_ts(crate::key::user_key(ikey), user_key) != Ordering::Equal {
                return Ok(());
            }
            let tr = trailer(ikey);
            if let Some(t) = ValueType::from_u8((tr & 0xff) as u8) {
                // With in-place updates the value is read under its key's lock.
                let _g = self.inplace.as_ref().map(|ip| ip.lock(crate::key::user_key(ikey)).read());
                let value = if checked {
                    self.unprotect(ikey, it.value())?
                } else {
                    let stored = it.value();
                    &stored[..stored.len().saturating_sub(usize::from(self.protection))]
                };
                if !f(crate::key::user_key(ikey), tr >> 8, t, value) {
                    return Ok(());
                }
            }
            it.next();
        }
        Ok(())
    }

    /// The largest sequence <= `snapshot` of a range tombstone `[start, end)` that contains
    /// `user_key` (by the user comparator); 0 when none does.
    pub fn max_covering_tombstone_seq(&self, user_key: &[u8], snapshot: SequenceNumber) -> SequenceNumber {
        if self.tombstones.is_empty() {
            return 0;
        }
        let mut best = 0;
        self.tombstones.for_each_while(|ikey, end| {
            // Tombstones are sorted by start key: once a start is past the key, stop.
            if self.icmp.compare_user(crate::key::user_key(ikey), user_key) == Ordering::Greater {
                return false;
            }
            let seq = trailer(ikey) >> 8;
            if seq <= snapshot && seq > best && self.icmp.compare_user(user_key, end) == Ordering::Less {
                best = seq;
            }
            true
        });
        best
    }

    /// An iterator over the point entries in internal-key order. It holds the memtable
    /// alive, and sees entries added after its creation when it reaches them.
    pub fn iter(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(MemTableIterator {
            inner: self.point_iter(),
            mem: Arc::clone(self),
            prefix_seek: false,
            excluded: false,
            bucket: None,
            copied: self.inplace.as_ref().map(|_| Vec::new()),
            error: None,
            last_key: Vec::new(),
        })
    }

    /// `iter` for a prefix seek (RocksDB's `GetDynamicPrefixIterator`): a seek (or
    /// seek_for_prev) whose target's prefix the memtable's Bloom excludes leaves the
    /// iterator invalid. With a hash memtable factory it also behaves as RocksDB's hash
    /// memtables do: a seek positions within the target's prefix bucket, stepping stops at
    /// the bucket's end, and `seek_to_first` / `seek_to_last` find nothing (RocksDB: "prefix
    /// iterator does not support total order"). Shale keeps one skip list either way; the
    /// buckets are its runs of one prefix. Otherwise the same as `iter`.
    pub fn iter_prefix_filtered(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(MemTableIterator {
            inner: self.point_iter(),
            mem: Arc::clone(self),
            prefix_seek: self.bloom.is_some(),
            excluded: false,
            bucket: self.hash_buckets.as_ref().map(|_| None),
            copied: self.inplace.as_ref().map(|_| Vec::new()),
            error: None,
            last_key: Vec::new(),
        })
    }

    /// Whether a prefix seek under the family's extractor `current` may use this memtable's
    /// prefix Bloom: the Bloom was built with the same extractor (RocksDB's
    /// `MemTableIterator` uses its Bloom only while the memtable's extractor is the
    /// family's; `set_options` may have changed it since this memtable was made). Compared
    /// by name, which names a built-in extractor's function fully.
    pub fn prefix_bloom_matches(&self, current: &crate::slice_transform::SliceTransformRef) -> bool {
        match self.bloom.as_ref().and_then(|b| b.extractor.as_ref()) {
            Some(own) => Arc::ptr_eq(own, current) || own.name() == current.name(),
            None => true,
        }
    }

    /// A cursor over the point entries: the skip list's, or the vector's sorted view.
    fn point_iter(&self) -> PointIter {
        match &self.vector {
            Some(v) => PointIter::Vector(v.iter()),
            None => PointIter::Skip(self.points.iter()),
        }
    }

    /// The vector memtable's representation, if this is one (`MemtableFactory::Vector`).
    pub fn vector_rep(&self) -> Option<&Arc<VectorRep>> {
        self.vector.as_ref()
    }

    /// All range tombstones in order: (start internal key with type RangeDeletion, end user key).
    pub fn range_tombstones(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::with_capacity(self.num_range_deletes() as usize);
        self.tombstones.for_each_while(|k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        });
        out
    }

    /// Bytes of arena memory in use by both lists.
    ///
    /// Checked after every write; the range tombstone list, which allocates nothing until
    /// its first insert, is read only once it has entries (one cache line fewer per write
    /// with many memtables).
    pub fn approximate_memory_usage(&self) -> usize {
        if let Some(v) = &self.vector {
            // RocksDB's: the arena, a pointer per entry in the vector, and the range
            // tombstone skip list (its head is in the arena from the start).
            return self.points.arena_memory_usage()
                + v.memory_usage()
                + self.tombstones.memory_usage()
                + self.bloom.as_ref().map_or(0, |b| b.bloom.size());
        }
        let tombstones = if self.num_range_deletes.load(MemOrder::Relaxed) > 0 {
            self.tombstones.memory_usage()
        } else {
            0
        };
        self.points.memory_usage()
            + tombstones
            + self.bloom.as_ref().map_or(0, |b| b.bloom.size())
            + self.insert_hints.as_ref().map_or(0, |h| h.bytes.load(MemOrder::Relaxed) as usize)
    }

    /// How many prefixes have an insert hint (`memtable_insert_with_hint_prefix_extractor`).
    pub fn insert_hint_count(&self) -> usize {
        self.insert_hints.as_ref().map_or(0, |h| h.hints.lock().len())
    }

    /// Entries added, range tombstones included (as RocksDB counts them).
    pub fn num_entries(&self) -> u64 {
        self.num_entries.load(MemOrder::Relaxed)
    }

    /// RocksDB's `MemTable::get_data_size`: per entry added (range tombstones included) the
    /// bytes `MemTable::Add` encodes, varint32 internal key length, internal key, varint32
    /// value length, value, and the entry's protection bytes. Kept as entries are added, as
    /// RocksDB's, so a flush reads it at once rather than walking the memtable.
    pub fn data_size(&self) -> u64 {
        self.data_size.load(MemOrder::Relaxed)
    }

    /// Deletion entries added (type Deletion only, as RocksDB counts them).
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes.load(MemOrder::Relaxed)
    }

    pub fn num_range_deletes(&self) -> u64 {
        self.num_range_deletes.load(MemOrder::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        let points_empty = match &self.vector {
            Some(v) => v.is_empty(),
            None => self.points.is_empty(),
        };
        points_empty && self.tombstones.is_empty()
    }

    /// The smallest sequence added, or `MAX_SEQUENCE_NUMBER` when empty.
    pub fn first_seqno(&self) -> SequenceNumber {
        self.first_seqno.load(MemOrder::Relaxed)
    }

    /// A lower bound on the sequences this memtable holds or will hold: what was set with
    /// [`MemTable::set_earliest_seqno`], lowered by any smaller sequence added;
    /// `MAX_SEQUENCE_NUMBER` when neither happened.
    pub fn earliest_seqno(&self) -> SequenceNumber {
        self.earliest_seqno.load(MemOrder::Relaxed)
    }

    pub fn set_earliest_seqno(&self, seq: SequenceNumber) {
        self.earliest_seqno.store(seq, MemOrder::Relaxed);
    }
}

/// The per-key protection checksum of the point entry `ikey` (user key and 8 trailer bytes)
/// with value `value` (see the module comment); its low bytes are kept.
/// (`shale_format::key::kv_checksum`, shared with the blocks' protection).
fn entry_checksum(ikey: &[u8], value: &[u8]) -> u64 {
    crate::key::kv_checksum(ikey, value)
}

impl MemTable {
    /// `paranoid_memory_checks`' answer to entries out of key order: RocksDB's
    /// `InlineSkipList::Corruption` message, which with `allow_data_in_errors` names the two
    /// keys (here the internal keys, in upper-case hex as RocksDB's `Slice::ToString(true)`).
    fn out_of_order(&self, prev: &[u8], next: &[u8]) -> crate::error::Error {
        let mut msg = "Out-of-order keys found in skiplist.".to_string();
        if self.data_in_errors {
            msg.push_str(&format!(" prev key: {} next key: {}", upper_hex(prev), upper_hex(next)));
        }
        crate::error::Error::corruption(msg)
    }
}

/// Bytes in upper-case hex, RocksDB's `Slice::ToString(/*hex=*/true)`.
fn upper_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

impl std::fmt::Debug for MemTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTable")
            .field("id", &self.id)
            .field("entries", &self.num_entries())
            .field("memory", &self.approximate_memory_usage())
            .finish()
    }
}

/// The memtable's point iterator; keeps the memtable alive.
/// A memtable's point cursor: over the skip list or over the vector memtable's sorted view.
enum PointIter {
    Skip(SkipListIter),
    Vector(VectorIter),
}

/// The cursor of a point lookup's walk (`MemTable::walk_versions`): the skip list borrowed,
/// or an iterator of its own (a vector memtable, a batched lookup's finger).
enum GetCursor<'a> {
    Skip(skiplist::SkipListCursor<'a>),
    Iter(PointIter),
}

impl GetCursor<'_> {
    #[inline]
    fn valid(&self) -> bool {
        match self {
            GetCursor::Skip(c) => c.valid(),
            GetCursor::Iter(it) => it.valid(),
        }
    }
    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            GetCursor::Skip(c) => c.key(),
            GetCursor::Iter(it) => it.key(),
        }
    }
    #[inline]
    fn value(&self) -> &[u8] {
        match self {
            GetCursor::Skip(c) => c.value(),
            GetCursor::Iter(it) => it.value(),
        }
    }
    #[inline]
    fn next(&mut self) {
        match self {
            GetCursor::Skip(c) => c.next(),
            GetCursor::Iter(it) => it.next(),
        }
    }
}

macro_rules! point_iter_call {
    ($self:expr, $it:ident => $e:expr) => {
        match $self {
            PointIter::Skip($it) => $e,
            PointIter::Vector($it) => $e,
        }
    };
}

impl InternalIterator for PointIter {
    #[inline]
    fn valid(&self) -> bool {
        point_iter_call!(self, it => it.valid())
    }
    fn seek_to_first(&mut self) {
        point_iter_call!(self, it => it.seek_to_first())
    }
    fn seek_to_last(&mut self) {
        point_iter_call!(self, it => it.seek_to_last())
    }
    fn seek(&mut self, target: &[u8]) {
        point_iter_call!(self, it => it.seek(target))
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        point_iter_call!(self, it => it.seek_for_prev(target))
    }
    #[inline]
    fn next(&mut self) {
        point_iter_call!(self, it => it.next())
    }
    fn prev(&mut self) {
        point_iter_call!(self, it => it.prev())
    }
    #[inline]
    fn key(&self) -> &[u8] {
        point_iter_call!(self, it => it.key())
    }
    #[inline]
    fn value(&self) -> &[u8] {
        point_iter_call!(self, it => it.value())
    }
    fn status(&self) -> Result<()> {
        point_iter_call!(self, it => it.status())
    }
    #[inline]
    fn value_pinned(&self) -> bool {
        point_iter_call!(self, it => it.value_pinned())
    }
    #[inline]
    fn value_if_pinned(&self) -> Option<&[u8]> {
        point_iter_call!(self, it => it.value_if_pinned())
    }
}

struct MemTableIterator {
    inner: PointIter,
    mem: Arc<MemTable>,
    /// Seeks check the memtable's prefix Bloom.
    prefix_seek: bool,
    /// The last seek's prefix is not in the memtable: the iterator is invalid.
    excluded: bool,
    /// Hash memtable prefix iteration: Some(the bucket's prefix, None: no bucket).
    bucket: Option<Option<Vec<u8>>>,
    /// With in-place updates: the current entry's value, copied under its key's lock (the
    /// arena's bytes may be rewritten while the iterator stands on them).
    copied: Option<Vec<u8>>,
    /// What a check of the current entry found wrong (protection bytes, key order): the
    /// iterator is invalid with this status until it is positioned again.
    error: Option<crate::error::Error>,
    /// `paranoid_memory_checks`: the key the iterator stood on before a step.
    last_key: Vec<u8>,
}

impl MemTableIterator {
    /// Prefix seek: whether the Bloom may hold the prefix of internal key `target`.
    fn prefix_may_match(&self, target: &[u8]) -> bool {
        if !self.prefix_seek || target.len() < 8 {
            return true;
        }
        self.mem.bloom.as_ref().is_none_or(|b| b.seek_may_match(crate::key::user_key(target)))
    }

    /// Hash memtable: enters the bucket of internal key `target`'s prefix.
    fn enter_bucket(&mut self, target: &[u8]) {
        if let (Some(b), Some(t)) = (self.bucket.as_mut(), &self.mem.hash_buckets) {
            let uk = if target.len() >= 8 { crate::key::user_key(target) } else { target };
            *b = t.transform(uk).map(|p| p.to_vec());
        }
    }

    /// With in-place updates: copies the current entry's value under its key's lock. With
    /// per-key protection: checks the entry's checksum bytes (RocksDB's iterator checks each
    /// entry it is positioned on).
    fn load(&mut self) {
        if self.excluded || !self.inner.valid() {
            if let Some(buf) = self.copied.as_mut() {
                buf.clear();
            }
            return;
        }
        let (mem, inner) = (&self.mem, &self.inner);
        let _g = mem.inplace.as_ref().map(|ip| ip.lock(crate::key::user_key(inner.key())).read());
        match mem.unprotect(inner.key(), inner.value()) {
            Ok(v) => {
                if let Some(buf) = self.copied.as_mut() {
                    buf.clear();
                    buf.extend_from_slice(v);
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Before a step: remembers the key stepped from (`paranoid_memory_checks`).
    fn before_step(&mut self) {
        if self.mem.paranoid && self.valid() {
            self.last_key.clear();
            self.last_key.extend_from_slice(self.inner.key());
        }
    }

    /// After a step: with `paranoid_memory_checks`, the new key is strictly after (`forward`)
    /// or before the one stepped from.
    fn after_step(&mut self, forward: bool) {
        if !self.mem.paranoid || self.excluded || !self.inner.valid() || self.last_key.is_empty() {
            return;
        }
        let want = if forward { Ordering::Less } else { Ordering::Greater };
        if self.mem.icmp.compare(&self.last_key, self.inner.key()) != want {
            self.error = Some(self.mem.out_of_order(&self.last_key, self.inner.key()));
        }
    }

    /// After a seek to `target`: with `paranoid_memory_checks`, the entry landed on is not
    /// before the target.
    fn after_seek(&mut self, target: &[u8]) {
        if self.excluded || !self.inner.valid() {
            return;
        }
        if let Err(e) = self.mem.check_landing(self.inner.key(), target) {
            self.error = Some(e);
        }
    }

    /// Hash memtable: the iterator is invalid once it leaves its bucket.
    fn check_bucket(&mut self) {
        let (Some(b), Some(t)) = (&self.bucket, &self.mem.hash_buckets) else { return };
        if self.excluded || !self.inner.valid() {
            return;
        }
        let uk = crate::key::user_key(self.inner.key());
        let inside = match (b, t.transform(uk)) {
            (Some(b), Some(p)) => self.mem.icmp.compare_user(b, p) == Ordering::Equal,
            _ => false,
        };
        self.excluded = !inside;
    }
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        !self.excluded && self.error.is_none() && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.error = None;
        // A hash memtable's prefix iterator has no total order: it finds nothing.
        self.excluded = self.bucket.is_some();
        self.inner.seek_to_first();
        self.load();
    }
    fn seek_to_last(&mut self) {
        self.error = None;
        self.excluded = self.bucket.is_some();
        self.inner.seek_to_last();
        self.load();
    }
    fn seek(&mut self, target: &[u8]) {
        self.error = None;
        self.excluded = !self.prefix_may_match(target);
        if !self.excluded {
            self.enter_bucket(target);
            self.inner.seek(target);
            self.after_seek(target);
            self.check_bucket();
            if self.error.is_none() && self.bucket.is_none() {
                if let Err(e) = self.mem.check_seek_path(target) {
                    self.error = Some(e);
                }
            }
        }
        self.load();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.error = None;
        self.excluded = !self.prefix_may_match(target);
        if !self.excluded {
            self.enter_bucket(target);
            self.inner.seek_for_prev(target);
            // `paranoid_memory_checks`: not past the target.
            if self.mem.paranoid
                && !self.excluded
                && self.inner.valid()
                && self.mem.icmp.compare(self.inner.key(), target) == Ordering::Greater
            {
                self.error = Some(self.mem.out_of_order(target, self.inner.key()));
            }
            self.check_bucket();
            // RocksDB's SeekForPrev validates the search for the target as Seek does.
            if self.error.is_none() && self.bucket.is_none() {
                if let Err(e) = self.mem.check_seek_path(target) {
                    self.error = Some(e);
                }
            }
        }
        self.load();
    }
    fn next(&mut self) {
        self.before_step();
        self.inner.next();
        self.after_step(true);
        self.check_bucket();
        self.load();
    }
    fn prev(&mut self) {
        self.before_step();
        self.inner.prev();
        self.after_step(false);
        self.check_bucket();
        self.load();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        match &self.copied {
            Some(v) => v,
            None => {
                let stored = self.inner.value();
                // `load` checked the bytes taken off here.
                &stored[..stored.len().saturating_sub(usize::from(self.mem.protection))]
            }
        }
    }
    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.inner.status()
    }
    /// Arena values are pinned, but with in-place updates the iterator's copy is not.
    fn value_pinned(&self) -> bool {
        self.copied.is_none() && self.inner.value_pinned()
    }
    fn value_if_pinned(&self) -> Option<&[u8]> {
        if self.copied.is_some() {
            return None;
        }
        self.inner.value_if_pinned().map(|v| &v[..v.len().saturating_sub(usize::from(self.mem.protection))])
    }
}

#[cfg(test)]
mod inplace_tests;
#[cfg(test)]
mod protection_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod vector_tests;
