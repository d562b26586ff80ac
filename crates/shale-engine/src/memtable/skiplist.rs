//! An arena-backed skiplist of memtable entries, laid out as RocksDB's `InlineSkipList`:
//! concurrent writers, lock-free readers.
//!
//! A node is one arena allocation: its tower of next pointers, stored *before* the entry,
//! then the encoded entry inline. The node pointer points at its level-0 next pointer;
//! level `i` lives `8 * i` bytes below it, and the entry starts 8 bytes above it.
//!
//! ```text
//!   base (8-aligned)                          node
//!   |                                         |
//!   v                                         v
//!   +-----------+-----+---------+---------+---------+--------------------------------------------------+
//!   | next[h-1] | ... | next[2] | next[1] | next[0] | varint32 ikey_len | ikey | varint32 vlen | value |
//!   +-----------+-----+---------+---------+---------+--------------------------------------------------+
//!   ikey  = user_key | fixed64 LE (seq << 8 | type)
//!   value = the memtable's stored value: with `memtable_protection_bytes_per_key` its last
//!           bytes are the entry's checksum (added and checked by [`super::MemTable`]).
//! ```
//! No length, height or value-pointer field: the height is known only while the node is
//! inserted, and the entry is found from its varints. With db_bench's 16-byte keys and
//! 100-byte values a node takes `8 * 4/3` bytes of tower on average, 126 of entry and at
//! most 7 of alignment, as in RocksDB, so both memtables hold about as many entries when
//! their arenas reach the write buffer size.
//!
//! Heights are drawn as RocksDB's (`kBranching_ = 4`, `kMaxHeight_ = 12`): each extra level
//! with probability 1/4. Nodes are ordered by the runtime [`InternalKeyComparator`] on
//! `ikey`.
//!
//! Inserts (RocksDB's `Insert<UseCAS = true>`): a *splice* is, at each level below its
//! height, a node before the key (`prev[i]`) and the node after it (`next[i]`). A fresh
//! splice is filled by one search from the top ([`SkipList::recompute_splice_levels`]).
//! [`SkipList::insert`] keeps the splice of its last insert (RocksDB's `seq_splice_`) and,
//! for the next key, first checks whether a low level of it still brackets the key: for
//! keys inserted in increasing order the level-0 pair (previous node, its successor) does,
//! and the insert links without any search, O(1) at the tail. A splice that does not
//! bracket the key is recomputed from the top (RocksDB's `allow_partial_splice_fix =
//! false` for `seq_splice_`). The hinted inserts ([`SkipList::insert_with_hint`],
//! [`SkipList::insert_concurrently_with_hint`]) fix a splice partially, as RocksDB's
//! `InsertWithHint`: they walk up from level 0 to the lowest level that still brackets the
//! key (passing over at once the levels whose failing node is the same) and search only
//! below it, O(log d) for a key d nodes away from the last. For the kept splice of random
//! keys that walk costs more than it saves (the bracketing level is near the top: `link`
//! took 2,203 instructions an insert with it against 1,876 without, callgrind, db_bench
//! fillrandom of 200,000 keys), so the kept splice stays all-or-nothing, as RocksDB's.
//! [`SkipList::insert_concurrently`] starts from an empty splice, as RocksDB's
//! `InsertConcurrently`.
//!
//! Prefetching: in a list far larger than the cache a search is a chain of misses, one per
//! node compared. At each node of a level above 0 the insert's search asks for the node it
//! would compare first one level down (the current node's next there) beside the one it
//! compares now, so the miss of each descent overlaps the last one of the level above
//! (random inserts into a 480,000-entry list took about 18% less CPU time); as RocksDB's
//! search, it also asks for the node after the one it compares. A lookup's search
//! (`find_greater_or_equal`) asks for the same two nodes (db_bench
//! fillrandom then readrandom of 400,000 keys, all in the memtable: 8% less user CPU for
//! the whole run). A scan asks for the entry
//! of the node after the one it stands on, which loads while the caller reads the current
//! entry (a flush builds its blocks meanwhile).
//!
//! Concurrency: any number of writers and readers at once; readers never lock. A node is
//! fully written (entry bytes and its own next pointers) before it is linked, level by
//! level from the bottom, with a compare-and-swap on its predecessor's next pointer
//! (`Release`); readers follow links with `Acquire` loads, so a reader that reaches a node
//! sees all of it. A swap that fails (another writer linked a node there) searches that
//! level again from the same predecessor, which stays before the key (nodes are never
//! removed). [`SkipList::insert`] allocates under the arena's mutex;
//! [`SkipList::insert_concurrently`] allocates from a shard of the arena
//! ([`super::arena::ConcurrentArena`]) when the mutex is busy. `prev` searches from the top
//! for the last node before the current key (RocksDB's `FindLessThan`): nodes have no back
//! link, which keeps them as small as RocksDB's. Nodes are never unlinked or modified (other
//! than their links, and values overwritten in place under the caller's lock, see
//! [`SkipList::overwrite_value`]) and the arena lives as long as the list, so references
//! handed to readers stay valid.

use std::cmp::Ordering;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering as MemOrder};
use std::sync::Arc;

use super::arena::{Bump, ConcurrentArena};
use super::write_buffer_manager::WriteBufferManagerState;
use crate::coding::varint_length;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::InternalKeyComparator;

/// The tallest tower a node may have (RocksDB's `kMaxHeight_` default).
pub const MAX_HEIGHT: usize = 12;

/// Bytes of one next pointer.
const SLOT: usize = std::mem::size_of::<AtomicPtr<u8>>();

/// The head node's tower: `links[MAX_HEIGHT - 1 - i]` is level `i`, so the head pointer (the
/// last element) has its levels below it, as any node.
#[repr(C)]
struct HeadTower {
    links: [AtomicPtr<u8>; MAX_HEIGHT],
}

thread_local! {
    /// This thread's xorshift64 state for node heights (never 0 once seeded).
    static HEIGHT_RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
thread_local! {
    /// Tests only: a height every node this thread makes gets (0: random), so a test can
    /// lay out a list whose search paths it knows.
    static FORCED_HEIGHT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Tests only: nodes this thread makes from now on get `height` (0: random again).
#[cfg(test)]
pub(crate) fn force_height_for_tests(height: usize) {
    FORCED_HEIGHT.with(|h| h.set(height.min(MAX_HEIGHT)));
}

/// Seeds the height generators of new threads apart from each other.
static RNG_SEEDS: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);

/// A height in `1..=MAX_HEIGHT` where each extra level has probability 1/4 (RocksDB's
/// branching factor 4): one more level per pair of zero bits at the bottom of a random
/// word (a per-thread generator, so concurrent inserters share nothing).
fn random_height() -> usize {
    #[cfg(test)]
    if let h @ 1.. = FORCED_HEIGHT.with(|h| h.get()) {
        return h;
    }
    HEIGHT_RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            // splitmix64 of a counter: distinct, well-mixed seeds per thread.
            let mut z = RNG_SEEDS.fetch_add(0x9E37_79B9_7F4A_7C15, MemOrder::Relaxed);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x = (z ^ (z >> 31)) | 1;
        }
        // xorshift64: never yields 0 from a non-zero seed.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.set(x);
        1 + ((x.trailing_zeros() / 2) as usize).min(MAX_HEIGHT - 1)
    })
}

/// A node's place at each level below `height` (see the module comment): `prev[i]` before
/// the key, `next[i]` the node after it (null: the end). Levels nest: `prev[i + 1]` is at or
/// before `prev[i]`, `next[i + 1]` at or after `next[i]`; `prev[height]` is the head and
/// `next[height]` null. `head` is the head pointer the splice's nodes were found from: the
/// list may move between inserts (before it is shared), and a splice kept from before a
/// move is not used.
struct Splice {
    height: usize,
    head: *mut u8,
    prev: [*mut u8; MAX_HEIGHT + 1],
    next: [*mut u8; MAX_HEIGHT + 1],
}

impl Splice {
    const EMPTY: Splice = Splice {
        height: 0,
        head: ptr::null_mut(),
        prev: [ptr::null_mut(); MAX_HEIGHT + 1],
        next: [ptr::null_mut(); MAX_HEIGHT + 1],
    };
}

// SAFETY: the pointers name nodes of the list's own arena (or null), read only by the list
// that owns the splice, behind its mutex.
unsafe impl Send for Splice {}

/// An entry's internal key and stored value.
pub type Entry<'a> = (&'a [u8], &'a [u8]);

/// A sorted set of encoded entries (see the module comment). Share it through `Arc`.
///
/// Laid out in two parts (`repr(C, align(64))`): first what every search reads (the
/// comparator, the head's tower, the height), which changes only when a node links at the
/// head or grows the list; then, from a cache line of its own ([`LineAligned`]), what
/// every insert writes (the kept splice's lock and contents, the arena's bump state and
/// usage). Reader threads then keep the first lines in their caches while a writer inserts
/// on another core, instead of missing on them at every lookup; the `Arc`'s counts sit in
/// the line before the list.
#[repr(C, align(64))]
pub struct SkipList {
    icmp: InternalKeyComparator,
    /// The head node's tower, in the list itself rather than its arena (every search starts
    /// here). The head pointer is computed from it ([`SkipList::head`]), never stored in a
    /// node or a kept splice: a list may move between inserts.
    head_tower: HeadTower,
    /// Height of the tallest node linked so far (>= 1).
    max_height: AtomicUsize,
    /// The splice of the last [`SkipList::insert`], taken with a try-lock (an insert that
    /// finds it busy starts from an empty one).
    splice: LineAligned<parking_lot::Mutex<Splice>>,
    arena: ConcurrentArena,
}

/// A value starting a cache line of its own (see [`SkipList`]'s layout).
#[repr(align(64))]
struct LineAligned<T>(T);

impl<T> std::ops::Deref for LineAligned<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

// SAFETY: the raw pointers in a SkipList point into its own arena, which it owns and frees
// only on drop. Shared state that changes after construction is either atomic (next
// pointers, max_height, usage) or guarded by a lock (the arena's bump state, the kept
// splice). Entry bytes are written before their node is published with Release and are
// immutable afterwards (but for in-place value overwrites under the caller's lock), so any
// thread may read them and the list may move threads.
unsafe impl Send for SkipList {}
// SAFETY: see the Send impl above.
unsafe impl Sync for SkipList {}

/// The level-`level` next pointer of `node`.
///
/// # Safety
/// `node` is a node pointer of this module (the head, or a node allocated by an insert with
/// a tower taller than `level`) whose arena is alive for `'a`.
#[inline(always)]
unsafe fn slot<'a>(node: *mut u8, level: usize) -> &'a AtomicPtr<u8> {
    // SAFETY: per the contract the slot lies inside the node's allocation (or the head's
    // tower), is pointer-aligned (nodes are allocated 8-aligned and the node pointer is a
    // whole number of slots past the start) and initialized memory (fresh zero pages, or
    // an earlier memtable's bytes in a recycled arena region: never read as a link before
    // `link` stores it, which it does before it publishes the node at that level).
    unsafe { &*node.cast::<AtomicPtr<u8>>().sub(level) }
}

/// Asks the CPU to start loading the cache line at `p` (a hint; never faults).
#[inline(always)]
fn prefetch_at(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the CPU to start loading the cache line at `p` to write it (a hint; never faults).
#[inline(always)]
fn prefetch_for_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_ET0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the CPU to start loading the entry of the node after `node` (null: nothing), so that
/// a scan's next step finds it in cache: the caller reads `node`'s entry meanwhile.
#[inline(always)]
fn prefetch_after(node: *mut u8) {
    if !node.is_null() {
        // SAFETY: a non-null node of a scan is a linked node of the live list; level 0 exists.
        let after = unsafe { slot(node, 0) }.load(MemOrder::Relaxed);
        if !after.is_null() {
            // The entry's first two lines: its key and most of a short value.
            let e = entry_of(after);
            prefetch_at(e);
            prefetch_at(e.wrapping_add(64));
        }
    }
}

/// Decodes the varint32 at `p`, returning the value and the pointer past it.
///
/// # Safety
/// `p` points at a complete varint32 written by [`write_varint32`] inside live memory.
#[inline]
pub(super) unsafe fn read_varint32(p: *const u8) -> (usize, *const u8) {
    // SAFETY: the varint is complete, so every byte read up to its last is in bounds.
    unsafe {
        let b = *p;
        if b < 0x80 {
            return (b as usize, p.add(1));
        }
        let mut result = (b & 0x7f) as u32;
        let mut q = p.add(1);
        let mut shift = 7;
        loop {
            let b = *q;
            q = q.add(1);
            result |= ((b & 0x7f) as u32) << shift;
            if b < 0x80 || shift >= 28 {
                return (result as usize, q);
            }
            shift += 7;
        }
    }
}

/// Where the entry of `node` starts (its key's varint length).
#[inline(always)]
fn entry_of(node: *mut u8) -> *mut u8 {
    node.wrapping_add(SLOT)
}

/// The internal key of a non-head node.
///
/// # Safety
/// `node` is a fully written, non-head node whose arena is alive for `'a`.
#[inline]
unsafe fn node_key<'a>(node: *mut u8) -> &'a [u8] {
    // SAFETY: a written entry starts one slot past the node pointer with a varint length
    // followed by that many key bytes, all inside the node's allocation.
    unsafe {
        let (len, p) = read_varint32(entry_of(node));
        std::slice::from_raw_parts(p, len)
    }
}

/// The value of a non-head node.
///
/// # Safety
/// As for [`node_key`].
#[inline]
unsafe fn node_value<'a>(node: *mut u8) -> &'a [u8] {
    // SAFETY: the value's varint length follows the key, and the value bytes follow it,
    // all inside the node's allocation.
    unsafe {
        let (klen, p) = read_varint32(entry_of(node));
        let (vlen, v) = read_varint32(p.add(klen));
        std::slice::from_raw_parts(v, vlen)
    }
}

/// Writes `v` as a varint32 at `dst[pos..]`; returns the position after it.
pub(super) fn write_varint32(dst: &mut [u8], mut pos: usize, mut v: u32) -> usize {
    while v >= 0x80 {
        dst[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    dst[pos] = v as u8;
    pos + 1
}

/// The encoded length of an entry.
///
/// # Panics
/// If the internal key or the value is 4 GiB or longer (the encoding's length limit).
fn entry_len(user_key: &[u8], value: &[u8]) -> usize {
    let ikey_len = user_key.len() + 8;
    assert!(
        u32::try_from(ikey_len).is_ok() && u32::try_from(value.len()).is_ok(),
        "memtable entry too large: key {} bytes, value {} bytes",
        user_key.len(),
        value.len()
    );
    varint_length(ikey_len as u64) + ikey_len + varint_length(value.len() as u64) + value.len()
}

/// Writes `varint32(ikey_len) | user_key | trailer | varint32(vlen) | value` at `dst`.
///
/// # Safety
/// `dst` is valid for writes of the encoded length ([`entry_len`]) and overlaps none of the
/// slices.
#[inline]
unsafe fn encode_entry(dst: *mut u8, user_key: &[u8], trailer: u64, value: &[u8]) {
    /// Writes `v` as a varint32 at `p`; returns the pointer past it.
    ///
    /// # Safety
    /// `p` is valid for the varint's bytes.
    #[inline(always)]
    unsafe fn varint(mut p: *mut u8, mut v: u32) -> *mut u8 {
        // SAFETY: per the contract, every byte written is inside the varint's room.
        unsafe {
            while v >= 0x80 {
                *p = (v as u8) | 0x80;
                v >>= 7;
                p = p.add(1);
            }
            *p = v as u8;
            p.add(1)
        }
    }
    // SAFETY: per the contract, the writes stay inside the entry's `entry_len` bytes, laid
    // out in this order.
    unsafe {
        let mut p = varint(dst, (user_key.len() + 8) as u32);
        ptr::copy_nonoverlapping(user_key.as_ptr(), p, user_key.len());
        p = p.add(user_key.len());
        ptr::write_unaligned(p.cast::<u64>(), trailer.to_le());
        p = varint(p.add(8), value.len() as u32);
        ptr::copy_nonoverlapping(value.as_ptr(), p, value.len());
    }
}

impl SkipList {
    /// An empty list ordered by `icmp`, allocating from blocks of `arena_block_size` bytes.
    pub fn new(icmp: InternalKeyComparator, arena_block_size: usize) -> SkipList {
        SkipList::with_tracker(icmp, arena_block_size, None)
    }

    /// As [`SkipList::new`], the arena charged to a write buffer manager.
    pub fn with_tracker(
        icmp: InternalKeyComparator,
        arena_block_size: usize,
        tracker: Option<Arc<WriteBufferManagerState>>,
    ) -> SkipList {
        SkipList {
            icmp,
            head_tower: HeadTower { links: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())) },
            max_height: AtomicUsize::new(1),
            splice: LineAligned(parking_lot::Mutex::new(Splice::EMPTY)),
            arena: ConcurrentArena::new(arena_block_size, tracker),
        }
    }

    /// The head node pointer: its level-0 next pointer, the last of `head_tower`, so levels
    /// 1..MAX_HEIGHT lie below it as in any node. Valid while `&self` is (the list does not
    /// move while borrowed).
    #[inline(always)]
    fn head(&self) -> *mut u8 {
        // The pointer comes from the whole array, so it may address any of its slots; the
        // slots are atomics (interior mutability), so writing through it is allowed.
        ptr::addr_of!(self.head_tower).cast::<u8>().wrapping_add((MAX_HEIGHT - 1) * SLOT).cast_mut()
    }

    /// Asks the CPU to start loading, for writing, the line where the next node of
    /// [`SkipList::insert`] goes (the bottom of the arena's free span). Takes the arena's
    /// lock only if it is free at once.
    pub fn prefetch_next_node(&self) {
        if let Some((start, len)) = self.arena.free_span() {
            if len > 0 {
                prefetch_for_write(start as *const u8);
                prefetch_for_write(start.wrapping_add(64) as *const u8);
            }
        }
    }

    /// Asks the CPU to start loading the first node a search loads: the one the head's top
    /// level links to. (`user_key` is not needed by this layout; kept for the caller's
    /// shape.)
    pub fn prefetch_search_start(&self, _user_key: &[u8]) {
        let top = self.max_height.load(MemOrder::Relaxed) - 1;
        // SAFETY: the head has MAX_HEIGHT slots, and max_height <= MAX_HEIGHT.
        let n = unsafe { slot(self.head(), top) }.load(MemOrder::Acquire);
        if !n.is_null() {
            prefetch_at(entry_of(n));
        }
    }

    /// Regular arena blocks from huge pages of `size` bytes (`memtable_huge_page_size`;
    /// [`super::arena::Arena::set_huge_page_size`]). Call before the first insert.
    pub fn set_huge_page_size(&self, size: usize) {
        self.arena.with_main(|a| a.set_huge_page_size(size));
    }

    /// How many arena blocks are on huge pages.
    pub fn huge_blocks(&self) -> usize {
        self.arena.with_main(|a| a.huge_blocks())
    }

    /// No more inserts are expected: the arena stops counting as active memory.
    pub fn done_allocating(&self) {
        self.arena.done_allocating();
    }

    pub fn comparator(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    /// Bytes of arena in use (readable while a writer inserts), plus the head node's tower:
    /// RocksDB allocates its head node from the arena, so an empty memtable reports more than
    /// 0 bytes (rust-rocksdb's memory-usage tests check `mem_table_total > 0` after a flush).
    pub fn memory_usage(&self) -> usize {
        self.arena.memory_usage() + std::mem::size_of_val(&self.head_tower)
    }

    pub fn is_empty(&self) -> bool {
        self.first().is_null()
    }

    /// Bytes of the arena in use (without the head's tower).
    pub fn arena_memory_usage(&self) -> usize {
        self.arena.memory_usage()
    }

    /// `bytes` bytes of the list's arena (contents unspecified: see [`super::arena`]), linked
    /// to nothing: storage for the entries of another representation of the same memtable's
    /// points (the vector memtable, [`super::vector`]), so they are charged and freed with
    /// the list. `concurrent`: the caller is one of several writers at once (memory from the
    /// arena while its lock is free, else from a shard, as [`SkipList::insert_concurrently`]).
    pub fn allocate_unlinked(&self, bytes: usize, concurrent: bool) -> std::ptr::NonNull<u8> {
        if concurrent {
            if let Some(p) = self.arena.try_main(|a| a.allocate_aligned(bytes, 1)) {
                return p;
            }
            return self.arena.with_shard(|s| s.bottom(bytes, 1));
        }
        self.arena.with_main(|a| a.allocate_aligned(bytes, 1))
    }

    /// Inserts the entry `user_key | trailer -> value`. Returns false (inserting nothing)
    /// when an entry with an equal internal key is already present. Safe beside concurrent
    /// readers and inserters; starts from the splice of the previous `insert` when it is
    /// free (see the module comment).
    ///
    /// # Panics
    /// If the internal key or the value is 4 GiB or longer (the encoding's length limit).
    pub fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> bool {
        self.insert_impl(user_key, trailer, value, false)
    }

    /// As [`SkipList::insert`], for writers inserting into the list at the same time
    /// (RocksDB's `InsertConcurrently`): memory comes from the arena itself while its lock is
    /// found free, then from a shard of the arena, so the writers share no lock in the
    /// common case; the search starts from an empty splice.
    pub fn insert_concurrently(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> bool {
        self.insert_impl(user_key, trailer, value, true)
    }

    /// [`SkipList::insert`] (`concurrent`: [`SkipList::insert_concurrently`]).
    fn insert_impl(&self, user_key: &[u8], trailer: u64, value: &[u8], concurrent: bool) -> bool {
        let (node, height) = self.new_node(user_key, trailer, value, concurrent);
        if concurrent {
            let mut splice = Splice::EMPTY;
            return self.link(node, height, &mut splice, false);
        }
        let Some(mut kept) = self.splice.try_lock() else {
            let mut splice = Splice::EMPTY;
            return self.link(node, height, &mut splice, false);
        };
        self.refresh_splice(&mut kept);
        self.link(node, height, &mut kept, false)
    }

    /// A node of random height holding `user_key | trailer -> value`, not yet linked: its
    /// pointer and height. Memory from the arena itself, or with `concurrent` from a shard
    /// of it while the arena's lock is taken (see [`SkipList::insert_concurrently`]).
    #[inline]
    fn new_node(&self, user_key: &[u8], trailer: u64, value: &[u8], concurrent: bool) -> (*mut u8, usize) {
        let height = random_height();
        let len = entry_len(user_key, value);
        let size = height * SLOT + len;
        let base = if concurrent {
            match self.arena.try_main(|a| a.allocate_aligned(size, SLOT)) {
                Some(p) => p,
                None => self.arena.with_shard(|s| s.bottom(size, SLOT)),
            }
        } else {
            self.arena.with_main(|a| a.allocate_aligned(size, SLOT))
        };
        // SAFETY: the allocation holds `height` slots then the entry; the node pointer is the
        // last slot.
        let node = unsafe { base.as_ptr().add((height - 1) * SLOT) };
        // SAFETY: the entry's `len` bytes lie inside the fresh allocation, which no other
        // thread can reach before the node is linked and which the slices (caller memory)
        // do not overlap.
        unsafe { encode_entry(entry_of(node), user_key, trailer, value) };
        (node, height)
    }

    /// A kept splice names the head by its address when it was kept: a list that moved since
    /// (before it was shared) starts it afresh.
    #[inline]
    fn refresh_splice(&self, splice: &mut Splice) {
        let head = self.head();
        if splice.head != head {
            splice.height = 0;
            splice.head = head;
        }
    }

    /// Links the written `node` of `height` into every level below it, starting from
    /// `splice` (RocksDB's `InlineSkipList::Insert<UseCAS = true>`; `partial`: its
    /// `allow_partial_splice_fix`, see the module comment), and leaves in `splice` the place
    /// after the node. Returns false, linking nothing, when an entry with an equal key is
    /// present (the node's memory is simply left unused).
    fn link(&self, node: *mut u8, height: usize, splice: &mut Splice, partial: bool) -> bool {
        // SAFETY: the node's entry is fully written and the arena outlives this call.
        let key = unsafe { node_key(node) };
        // Raise the list's height first: readers that see the new height before the head's
        // new links find null there and descend.
        let mut max_height = self.max_height.load(MemOrder::Relaxed);
        while height > max_height {
            match self.max_height.compare_exchange_weak(
                max_height,
                height,
                MemOrder::Relaxed,
                MemOrder::Relaxed,
            ) {
                Ok(_) => {
                    max_height = height;
                    break;
                }
                Err(m) => max_height = m,
            }
        }
        let head = self.head();
        let mut recompute = 0;
        if splice.height < max_height {
            // Never used, or the list grew taller since: search everything from the top.
            splice.prev[max_height] = head;
            splice.next[max_height] = ptr::null_mut();
            splice.height = max_height;
            recompute = max_height;
        } else {
            // Find the lowest level of the kept splice that still brackets the key; levels
            // below it are searched from there. A level that is not tight (nodes linked
            // inside it since) is passed over; one that does not bracket the key sends the
            // search to the top, or with `partial` on to the first level whose node on
            // that side differs.
            while recompute < max_height {
                let (p, n) = (splice.prev[recompute], splice.next[recompute]);
                // SAFETY: `p` is the head or a node linked at `recompute`.
                if unsafe { slot(p, recompute) }.load(MemOrder::Acquire) != n {
                    recompute += 1;
                } else if p != head && !self.key_is_after_node(key, p) {
                    // The key is before the splice.
                    if !partial {
                        recompute = max_height;
                    } else {
                        // Levels whose left node is the same need no more comparisons.
                        while recompute < max_height && splice.prev[recompute] == p {
                            recompute += 1;
                        }
                    }
                } else if self.key_is_after_node(key, n) {
                    // The key is after the splice.
                    if !partial {
                        recompute = max_height;
                    } else {
                        while recompute < max_height && splice.next[recompute] == n {
                            recompute += 1;
                        }
                    }
                } else {
                    break;
                }
            }
        }
        if recompute > 0 {
            self.recompute_splice_levels(key, splice, recompute);
        }
        let mut splice_valid = true;
        for level in 0..height {
            loop {
                if level == 0 {
                    // `prev[0]` is before the key (a search or the check above put it there):
                    // the key is a duplicate only when `next[0]` equals it.
                    if self.is_equal(splice.next[0], key) {
                        return false;
                    }
                }
                // SAFETY: `node` is unpublished at this level and has `height` slots;
                // `prev[level]` is the head or a node linked at `level`, so it has a slot
                // there. The Release swap publishes the node's entry and its link at this
                // level to Acquire readers.
                let linked = unsafe {
                    slot(node, level).store(splice.next[level], MemOrder::Relaxed);
                    slot(splice.prev[level], level)
                        .compare_exchange(splice.next[level], node, MemOrder::Release, MemOrder::Relaxed)
                        .is_ok()
                };
                if linked {
                    break;
                }
                let (p, n) = self.find_splice_for_level(key, splice.prev[level], ptr::null_mut(), level);
                splice.prev[level] = p;
                splice.next[level] = n;
                if level > 0 {
                    splice_valid = false;
                }
            }
        }
        if splice_valid {
            // The node is now before the next key of an ascending run at every level it has.
            for p in &mut splice.prev[..height] {
                *p = node;
            }
        } else {
            splice.height = 0;
        }
        true
    }

    /// Fills `splice` at levels `0..level` for `key`, each from the level above
    /// (RocksDB's `RecomputeSpliceLevels`).
    fn recompute_splice_levels(&self, key: &[u8], splice: &mut Splice, level: usize) {
        for i in (0..level).rev() {
            let (p, n) = self.find_splice_for_level(key, splice.prev[i + 1], splice.next[i + 1], i);
            splice.prev[i] = p;
            splice.next[i] = n;
        }
    }

    /// At `level`, from `before` (the head or a node before `key` linked at `level`): the
    /// last node before `key` and the one after it (null at the end); the walk stops at
    /// `after` (a node known not before `key`, or null).
    fn find_splice_for_level(
        &self,
        key: &[u8],
        before: *mut u8,
        after: *mut u8,
        level: usize,
    ) -> (*mut u8, *mut u8) {
        let mut x = before;
        loop {
            // SAFETY: `x` is the head or a node linked at `level`, so it has a slot there.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            if level > 0 {
                // The search goes down from `x` once `next` proves to be after the key, and
                // the first node it then compares is `x`'s next one level down: ask for it
                // now, beside `next`, so the two misses overlap (a miss a level, in a list
                // far larger than the cache, where the walk is a chain of them).
                // SAFETY: `x` has a slot at `level`, so at `level - 1` too.
                let below = unsafe { slot(x, level - 1) }.load(MemOrder::Relaxed);
                if !below.is_null() && below != next {
                    prefetch_at(entry_of(below));
                }
            }
            if !next.is_null() && next != after {
                // SAFETY: a non-null link points at a published node with a slot at `level`.
                prefetch_at(unsafe { slot(next, level) }.load(MemOrder::Relaxed));
            }
            if next == after || !self.key_is_after_node(key, next) {
                return (x, next);
            }
            x = next;
        }
    }

    /// True when `n` is a node (not null) whose key is before `key`.
    #[inline]
    fn key_is_after_node(&self, key: &[u8], n: *mut u8) -> bool {
        // SAFETY: a non-null link points at a published, fully written node.
        !n.is_null() && self.icmp.compare_uncounted(unsafe { node_key(n) }, key) == Ordering::Less
    }

    /// True when `n` is a node (not null) whose key equals `key`.
    #[inline]
    fn is_equal(&self, n: *mut u8, key: &[u8]) -> bool {
        // SAFETY: a non-null link points at a published, fully written node.
        !n.is_null() && self.icmp.compare_uncounted(unsafe { node_key(n) }, key) == Ordering::Equal
    }

    /// True when an entry with internal key equal to `ikey` is present.
    pub fn contains(&self, ikey: &[u8]) -> bool {
        self.seek_entry(ikey).is_some_and(|(k, _)| self.icmp.compare(k, ikey) == Ordering::Equal)
    }

    /// The (internal key, value) of the first entry with key >= `target`.
    pub fn seek_entry(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = self.find_greater_or_equal(target);
        // SAFETY: a non-null result is a linked node; the list (and arena) outlive `&self`.
        (!n.is_null()).then(|| unsafe { (node_key(n), node_value(n)) })
    }

    /// Overwrites, in place, the value of the first entry with key >= `target` with `value`
    /// (RocksDB's `MemTable::Update`): when `value` is no longer than the entry's value and
    /// `accept(ikey)` (given the entry's internal key) returns a guard, the new varint
    /// length and bytes are written over the old ones while the guard is held. Returns
    /// whether it wrote. The key and links are never touched.
    ///
    /// # Safety
    /// The caller is the only thread adding to or overwriting in this list while this runs,
    /// and every reader of an entry's value (its length or bytes) excludes the guard
    /// `accept` returns for that entry for as long as it reads or holds the value.
    pub unsafe fn overwrite_value<G>(
        &self,
        target: &[u8],
        value: &[u8],
        accept: impl FnOnce(&[u8]) -> Option<G>,
    ) -> bool {
        let n = self.find_greater_or_equal(target);
        if n.is_null() {
            return false;
        }
        // SAFETY: `n` is a linked, written node of this live list. Its value's varint and
        // bytes are only written by this list's single writer (the caller, per the contract);
        // the new varint is no longer than the old (a smaller number) and the new bytes no
        // more than the old, so both stay inside the old entry.
        unsafe {
            let (klen, p) = read_varint32(entry_of(n));
            let vpos = p.add(klen).cast_mut();
            let (old_len, _) = read_varint32(vpos);
            if value.len() > old_len {
                return false;
            }
            let Some(_guard) = accept(node_key(n)) else { return false };
            let mut varint = [0u8; 5];
            let vn = write_varint32(&mut varint, 0, value.len() as u32);
            ptr::copy_nonoverlapping(varint.as_ptr(), vpos, vn);
            ptr::copy_nonoverlapping(value.as_ptr(), vpos.add(vn), value.len());
            true
        }
    }

    /// Calls `f(ikey, value)` on entries in order from the first until it returns false.
    pub fn for_each_while(&self, mut f: impl FnMut(&[u8], &[u8]) -> bool) {
        let mut n = self.first();
        while !n.is_null() {
            // SAFETY: `n` is a linked node of this live list.
            let (k, v) = unsafe { (node_key(n), node_value(n)) };
            if !f(k, v) {
                return;
            }
            // SAFETY: as above; level 0 exists on every node.
            n = unsafe { slot(n, 0) }.load(MemOrder::Acquire);
        }
    }

    /// A cursor over the list that keeps it alive.
    pub fn iter(self: &Arc<Self>) -> SkipListIter {
        SkipListIter { list: Arc::clone(self), node: ptr::null_mut() }
    }

    fn first(&self) -> *mut u8 {
        // SAFETY: the head has MAX_HEIGHT slots.
        unsafe { slot(self.head(), 0) }.load(MemOrder::Acquire)
    }

    /// [`SkipList::seek_entry`] calling `check(ikey, value)` on every entry the search
    /// compares against on its way, the one it lands on included (RocksDB's
    /// `FindGreaterOrEqual` with a `key_validation_callback`); the first error ends it.
    pub fn seek_entry_checked<E>(
        &self,
        target: &[u8],
        mut check: impl FnMut(&[u8], &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<Entry<'_>>, E> {
        let mut failed = None;
        let n = self.find_greater_or_equal_visiting(target, |n| {
            // SAFETY: the search hands over linked, written nodes of this live list.
            let (k, v) = unsafe { (node_key(n), node_value(n)) };
            match check(k, v) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        // SAFETY: a non-null result is a linked node; the list (and arena) outlive `&self`.
        Ok((!n.is_null()).then(|| unsafe { (node_key(n), node_value(n)) }))
    }

    /// The first node with key >= `key` (null if none): RocksDB's `FindGreaterOrEqual`.
    #[inline]
    fn find_greater_or_equal(&self, key: &[u8]) -> *mut u8 {
        self.find_greater_or_equal_visiting(key, |_| true)
    }

    /// `find_greater_or_equal` calling `visit` on each node it compares against (before the
    /// comparison); when `visit` returns false the search stops and answers null.
    #[inline(always)]
    fn find_greater_or_equal_visiting(&self, key: &[u8], mut visit: impl FnMut(*mut u8) -> bool) -> *mut u8 {
        let mut x = self.head();
        let mut level = self.max_height.load(MemOrder::Relaxed) - 1;
        // A node already found >= key at a higher level need not be compared again.
        let mut last_bigger: *mut u8 = ptr::null_mut();
        // The perf context's user_key_comparison_count, added once per search.
        let mut comparisons = 0u64;
        loop {
            // SAFETY: `x` is the head (MAX_HEIGHT slots) or a node reached through a link at
            // a level >= `level`, so it has a slot at `level`.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            // As the insert's search (`find_splice_for_level`): ask for the two nodes the
            // next step may compare, `x`'s next one level down (if `next` proves not before
            // the key) and `next`'s successor at this level (if it does), so their misses
            // overlap this comparison's instead of following it.
            if level > 0 {
                // SAFETY: `x` has a slot at `level`, so at `level - 1` too.
                let below = unsafe { slot(x, level - 1) }.load(MemOrder::Relaxed);
                if !below.is_null() && below != next {
                    prefetch_at(entry_of(below));
                }
            }
            if !next.is_null() && next != last_bigger {
                // SAFETY: a non-null link points at a published node with a slot at `level`.
                let after = unsafe { slot(next, level) }.load(MemOrder::Relaxed);
                if !after.is_null() {
                    prefetch_at(entry_of(after));
                }
            }
            let cmp = if next.is_null() || next == last_bigger {
                Ordering::Greater
            } else {
                if !visit(next) {
                    return ptr::null_mut();
                }
                comparisons += 1;
                // SAFETY: a non-null link points at a published, fully written node.
                self.icmp.compare_uncounted(unsafe { node_key(next) }, key)
            };
            if cmp == Ordering::Less {
                x = next;
            } else if cmp == Ordering::Equal || level == 0 {
                crate::perf::count(crate::perf::Field::UserKeyComparisonCount, comparisons);
                return next;
            } else {
                last_bigger = next;
                level -= 1;
            }
        }
    }

    /// The last node before `key` (or at or before it, when `inclusive`), every node when
    /// `key` is None; the head when there is none (RocksDB's `FindLessThan`, `FindLast`).
    fn find_last_before(&self, key: Option<&[u8]>, inclusive: bool) -> *mut u8 {
        let mut x = self.head();
        let mut level = self.max_height.load(MemOrder::Relaxed) - 1;
        let mut last_bigger: *mut u8 = ptr::null_mut();
        loop {
            // SAFETY: as in `find_greater_or_equal`.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            let advance = !next.is_null()
                && next != last_bigger
                && key.is_none_or(|k| {
                    // SAFETY: a non-null link points at a published, fully written node.
                    match self.icmp.compare(unsafe { node_key(next) }, k) {
                        Ordering::Less => true,
                        Ordering::Equal => inclusive,
                        Ordering::Greater => false,
                    }
                });
            if advance {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                last_bigger = next;
                level -= 1;
            }
        }
    }
}

/// A forward cursor over a list it borrows, for one point lookup ([`SkipList::cursor`]):
/// as [`SkipListIter`] without the `Arc` clone, whose atomic add and subtract on the
/// list's count would write, at every lookup, a cache line every reader thread writes.
pub struct SkipListCursor<'a> {
    /// The current node; null when not valid.
    node: *mut u8,
    /// The list's borrow, which keeps its nodes alive.
    list: std::marker::PhantomData<&'a SkipList>,
}

impl SkipList {
    /// A cursor on the first entry with key >= `target` (not valid if none).
    #[inline]
    pub fn cursor(&self, target: &[u8]) -> SkipListCursor<'_> {
        SkipListCursor { node: self.find_greater_or_equal(target), list: std::marker::PhantomData }
    }
}

impl<'a> SkipListCursor<'a> {
    #[inline]
    pub fn valid(&self) -> bool {
        !self.node.is_null()
    }

    /// Steps to the next entry (not valid past the last; an invalid cursor stays so).
    #[inline]
    pub fn next(&mut self) {
        if self.node.is_null() {
            return;
        }
        // SAFETY: a non-null node is a linked node of the borrowed (live) list; level 0
        // exists on every node.
        self.node = unsafe { slot(self.node, 0) }.load(MemOrder::Acquire);
    }

    /// The current entry's internal key. Call only while valid.
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        assert!(self.valid(), "key() on an invalid skiplist cursor");
        // SAFETY: a valid cursor is on a linked, written node of the list it borrows for 'a.
        unsafe { node_key(self.node) }
    }

    /// The current entry's stored value. Call only while valid.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        assert!(self.valid(), "value() on an invalid skiplist cursor");
        // SAFETY: as in `key`.
        unsafe { node_value(self.node) }
    }
}

/// An [`InternalIterator`] over a skiplist; holds an `Arc` of the list, so its keys and
/// values stay valid while the iterator lives.
pub struct SkipListIter {
    list: Arc<SkipList>,
    /// The current node; null when not valid. Never the head.
    node: *mut u8,
}

// SAFETY: `node` points into the arena of `list`, which the iterator keeps alive through
// its Arc; the list is Send + Sync, and the node is only read.
unsafe impl Send for SkipListIter {}

impl SkipListIter {
    fn set_from_search(&mut self, n: *mut u8) {
        self.node = if n == self.list.head() { ptr::null_mut() } else { n };
    }
}

impl InternalIterator for SkipListIter {
    #[inline]
    fn valid(&self) -> bool {
        !self.node.is_null()
    }

    fn seek_to_first(&mut self) {
        self.node = self.list.first();
    }

    fn seek_to_last(&mut self) {
        let n = self.list.find_last_before(None, false);
        self.set_from_search(n);
    }

    fn seek(&mut self, target: &[u8]) {
        self.node = self.list.find_greater_or_equal(target);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let n = self.list.find_last_before(Some(target), true);
        self.set_from_search(n);
    }

    #[inline]
    fn next(&mut self) {
        assert!(self.valid(), "next() on an invalid skiplist iterator");
        // SAFETY: a valid iterator is on a linked node of the live list; level 0 exists.
        self.node = unsafe { slot(self.node, 0) }.load(MemOrder::Acquire);
        prefetch_after(self.node);
    }

    fn prev(&mut self) {
        assert!(self.valid(), "prev() on an invalid skiplist iterator");
        // SAFETY: a valid iterator is on a linked, written node of the live list.
        let key = unsafe { node_key(self.node) };
        let n = self.list.find_last_before(Some(key), false);
        self.set_from_search(n);
    }

    #[inline]
    fn key(&self) -> &[u8] {
        assert!(self.valid(), "key() on an invalid skiplist iterator");
        // SAFETY: a valid iterator is on a linked, written node; the Arc keeps it alive.
        unsafe { node_key(self.node) }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        assert!(self.valid(), "value() on an invalid skiplist iterator");
        // SAFETY: as in `key`.
        unsafe { node_value(self.node) }
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }

    /// A value lies in the arena (inline in its node), which is never freed while the list
    /// lives, and the iterator holds the list.
    #[inline]
    fn value_pinned(&self) -> bool {
        true
    }
    #[inline]
    fn value_if_pinned(&self) -> Option<&[u8]> {
        Some(self.value())
    }
}

// ---- helper cfmisc (issue 33): `memtable_batch_lookup_optimization` ----

/// The search path one lookup of a sorted batch leaves for the next (RocksDB's "finger", a
/// `Splice` reused by `InlineSkipList::MultiGet`): at each level a node before the last key
/// looked up and one not before it, so the next, larger key is looked up from the lowest
/// level whose bracket still holds it, in O(log d) for a distance d, not O(log n).
/// It holds the list it was last used on, so its nodes stay alive as long as it does.
pub struct Finger {
    splice: Box<Splice>,
    list: Option<Arc<SkipList>>,
}

impl Default for Finger {
    fn default() -> Self {
        Finger { splice: Box::new(Splice::EMPTY), list: None }
    }
}

impl SkipList {
    /// RocksDB's `FindGreaterOrEqualWithFinger`: the first node with key >= `key` (null if
    /// none), searched from `finger`, which it leaves bracketing `key`. The keys a finger
    /// is used for must come in non-decreasing order; the finger must have been last used
    /// on this list, or be reset ([`SkipListIter::seek_with_finger`] sees to both). Counts its comparisons in the perf context's `user_key_comparison_count`.
    fn find_greater_or_equal_with_finger(&self, key: &[u8], finger: &mut Finger) -> *mut u8 {
        let f = &mut *finger.splice;
        let head = self.head();
        let max_height = self.max_height.load(MemOrder::Relaxed);
        let mut comparisons = 0u64;
        // True when `n` is a node whose key is before `key` (null: false).
        let after = |n: *mut u8, comparisons: &mut u64| {
            if n.is_null() {
                return false;
            }
            *comparisons += 1;
            self.key_is_after_node(key, n)
        };
        let start = if f.height == 0 || f.head != head {
            let top = max_height - 1;
            f.head = head;
            f.prev[top] = head;
            f.next[top] = ptr::null_mut();
            f.height = max_height;
            top
        } else {
            // The list grew taller since the last lookup.
            while f.height < max_height {
                f.prev[f.height] = head;
                f.next[f.height] = ptr::null_mut();
                f.height += 1;
            }
            // The lowest level whose bracket still holds `key`.
            let mut level = 0;
            while level < max_height - 1 && after(f.next[level], &mut comparisons) {
                level += 1;
            }
            if after(f.next[level], &mut comparisons) {
                f.prev[level] = head;
                f.next[level] = ptr::null_mut();
            }
            level
        };
        for level in (0..=start).rev() {
            let (before, bound) = if level == start {
                (f.prev[level], f.next[level])
            } else {
                (f.prev[level + 1], f.next[level + 1])
            };
            let mut x = before;
            let next = loop {
                // SAFETY: `x` is the head or a node linked at `level` (a bracket's left node
                // at this level or the one above, or a node reached at this level), so it
                // has a slot there.
                let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
                if next == bound || !after(next, &mut comparisons) {
                    break next;
                }
                x = next;
            };
            f.prev[level] = x;
            f.next[level] = next;
        }
        crate::perf::count(crate::perf::Field::UserKeyComparisonCount, comparisons);
        f.next[0]
    }
}

/// The splice an insert leaves for the next insert of the same prefix
/// (`memtable_insert_with_hint_prefix_extractor`, RocksDB's `InsertWithHint`): kept by the
/// memtable per prefix, used by one writer at a time.
pub struct InsertHint {
    splice: Box<Splice>,
}

impl Default for InsertHint {
    fn default() -> Self {
        InsertHint { splice: Box::new(Splice::EMPTY) }
    }
}

impl InsertHint {
    /// The bytes a hint takes (for the memtable's memory usage).
    pub const SIZE: usize = std::mem::size_of::<Splice>();
}

impl SkipList {
    /// [`SkipList::insert_concurrently`] starting from `hint`, the splice the same writer's
    /// last insert through it left (RocksDB's `InsertWithHintConcurrently`): other writers
    /// may link nodes inside it meanwhile, which `link` finds (a level no longer tight is
    /// searched again, a failed compare-and-swap retried), so the hint only saves search.
    pub fn insert_concurrently_with_hint(
        &self,
        user_key: &[u8],
        trailer: u64,
        value: &[u8],
        hint: &mut InsertHint,
    ) -> bool {
        self.insert_hinted(user_key, trailer, value, hint, true)
    }

    /// [`SkipList::insert`] starting from `hint`, the splice the last insert through it left
    /// (RocksDB's `InlineSkipList::InsertWithHint`), which it leaves after the new node. For
    /// one writer at a time (not beside `insert_concurrently`).
    pub fn insert_with_hint(
        &self,
        user_key: &[u8],
        trailer: u64,
        value: &[u8],
        hint: &mut InsertHint,
    ) -> bool {
        self.insert_hinted(user_key, trailer, value, hint, false)
    }

    /// The two hinted inserts (`concurrent`: [`SkipList::insert_concurrently_with_hint`]): the
    /// hint's splice refreshed, then linked with RocksDB's partial splice fix.
    fn insert_hinted(
        &self,
        user_key: &[u8],
        trailer: u64,
        value: &[u8],
        hint: &mut InsertHint,
        concurrent: bool,
    ) -> bool {
        let (node, height) = self.new_node(user_key, trailer, value, concurrent);
        self.refresh_splice(&mut hint.splice);
        self.link(node, height, &mut hint.splice, true)
    }
}

impl SkipListIter {
    /// `seek(target)` from `finger` (see [`Finger`]).
    pub fn seek_with_finger(&mut self, target: &[u8], finger: &mut Finger) {
        if !finger.list.as_ref().is_some_and(|l| Arc::ptr_eq(l, &self.list)) {
            // A finger of another list (or a new one): start from the top.
            finger.splice.height = 0;
            finger.list = Some(Arc::clone(&self.list));
        }
        self.node = self.list.find_greater_or_equal_with_finger(target, finger);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::ReverseBytewiseComparator;
    use crate::key::{bytewise_internal_comparator, make_internal_key, pack_seq_and_type, ValueType};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::cmp::Reverse;
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicU64;

    const TYPES: [ValueType; 4] =
        [ValueType::Value, ValueType::Deletion, ValueType::Merge, ValueType::SingleDeletion];

    /// Checks `list` against `model` (entries by `model_key`): a full scan both ways, then at
    /// every probe a seek and a step back, and a seek for prev and a step forward.
    fn check_scans_and_probes<K: Ord + Clone>(
        list: &Arc<SkipList>,
        model: &BTreeMap<K, (Vec<u8>, Vec<u8>)>,
        probes: &[(Vec<u8>, u64)],
        model_key: impl Fn(&[u8], u64) -> K,
    ) {
        let entries: Vec<_> = model.values().cloned().collect();
        let mut it = list.iter();
        it.seek_to_first();
        for (k, v) in &entries {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, v) in entries.iter().rev() {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.prev();
        }
        assert!(!it.valid());
        let cur = |it: &SkipListIter| it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
        for (uk, tr) in probes {
            let target = [&uk[..], &tr.to_le_bytes()].concat();
            let mk = model_key(uk, *tr);
            it.seek(&target);
            assert_eq!(cur(&it).as_ref(), model.range(mk.clone()..).next().map(|e| e.1));
            if it.valid() {
                it.prev();
                assert_eq!(cur(&it).as_ref(), model.range(..mk.clone()).next_back().map(|e| e.1));
            }
            it.seek_for_prev(&target);
            assert_eq!(cur(&it).as_ref(), model.range(..=mk.clone()).next_back().map(|e| e.1));
            if it.valid() {
                it.next();
                let after = model.range((std::ops::Bound::Excluded(mk), std::ops::Bound::Unbounded)).next();
                assert_eq!(cur(&it).as_ref(), after.map(|e| e.1));
            }
        }
    }

    fn check_against_model<K: Ord + Clone>(icmp: InternalKeyComparator, model_key: fn(&[u8], u64) -> K) {
        check_against_model_with(icmp, model_key, random_user_key)
    }

    fn check_against_model_with<K: Ord + Clone>(
        icmp: InternalKeyComparator,
        model_key: fn(&[u8], u64) -> K,
        random_user_key: fn(&mut SmallRng) -> Vec<u8>,
    ) {
        let mut rng = SmallRng::seed_from_u64(42);
        let list = Arc::new(SkipList::new(icmp, 4096));
        let mut model: BTreeMap<K, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
        for i in 0..3000 {
            let uk = random_user_key(&mut rng);
            let tr = pack_seq_and_type(rng.gen_range(0..40), TYPES[rng.gen_range(0..4)]);
            // Lengths of one and two varint bytes, and some past a quarter block (their own
            // arena block).
            let len = [0, 5, 16, 127, 128, 2000][i % 6];
            let value: Vec<u8> = format!("v{i}-").bytes().cycle().take(len).collect();
            let ikey = [&uk[..], &tr.to_le_bytes()].concat();
            let fresh = !model.contains_key(&model_key(&uk, tr));
            assert_eq!(list.insert(&uk, tr, &value), fresh, "duplicate detection");
            if fresh {
                model.insert(model_key(&uk, tr), (ikey, value));
            }
        }
        // Seeks at every key and at random probes between keys.
        let mut probes: Vec<(Vec<u8>, u64)> =
            model.values().map(|(k, _)| (k[..k.len() - 8].to_vec(), crate::key::trailer(k))).collect();
        for _ in 0..3000 {
            let seq = [0, 1, 20, 39, 40, 1000, crate::key::MAX_SEQUENCE_NUMBER][rng.gen_range(0..7)];
            probes.push((random_user_key(&mut rng), pack_seq_and_type(seq, ValueType::RangeDeletion)));
            probes.push((random_user_key(&mut rng), pack_seq_and_type(seq, ValueType::Deletion)));
        }
        check_scans_and_probes(&list, &model, &probes, model_key);
    }

    #[test]
    fn matches_model_bytewise() {
        check_against_model(bytewise_internal_comparator(), |uk, tr| (uk.to_vec(), Reverse(tr)));
    }

    /// Keys sharing long prefixes, empty keys, 0x00 and 0xff bytes.
    #[test]
    fn matches_model_bytewise_adversarial_prefixes() {
        check_against_model_with(
            bytewise_internal_comparator(),
            |uk, tr| (uk.to_vec(), Reverse(tr)),
            adversarial_user_key,
        );
    }

    #[test]
    fn matches_model_reverse() {
        let icmp = InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator));
        check_against_model(icmp, |uk, tr| (Reverse(uk.to_vec()), Reverse(tr)));
    }

    #[test]
    fn empty_list_and_duplicates() {
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        assert!(list.is_empty());
        let mut it = list.iter();
        assert!(!it.valid());
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"anything");
        assert!(!it.valid());
        it.seek_for_prev(b"anything");
        assert!(!it.valid());

        let tr = pack_seq_and_type(5, ValueType::Value);
        assert!(list.insert(b"k", tr, b"one"));
        assert!(!list.insert(b"k", tr, b"two"), "equal internal key is refused");
        assert!(list.insert(b"k", pack_seq_and_type(5, ValueType::Merge), b"three"));
        assert!(list.contains(&make_internal_key(b"k", 5, ValueType::Value)));
        assert!(!list.contains(&make_internal_key(b"k", 4, ValueType::Value)));
        it.seek_to_first();
        assert_eq!(it.value(), b"three", "same sequence: the higher type sorts first");
        it.next();
        assert_eq!(it.value(), b"one");
    }

    /// `insert_with_hint` fixes its splice partially (RocksDB's `allow_partial_splice_fix`):
    /// one hint takes keys just after, just before, far after and far before its last key,
    /// equal keys (refused), and keys between two levels' nodes; the list matches a model
    /// after every phase, and a duplicate is refused whatever the hint's state.
    #[test]
    fn hinted_inserts_fix_the_splice_partially() {
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        type Model = BTreeMap<(Vec<u8>, Reverse<u64>), (Vec<u8>, Vec<u8>)>;
        let mut model: Model = BTreeMap::new();
        let mut hint = InsertHint::default();
        let mut rng = SmallRng::seed_from_u64(7);
        let key = |i: u64| format!("k{i:08}").into_bytes();
        let insert = |i: u64, seq: u64, model: &mut Model, hint: &mut InsertHint| {
            let uk = key(i);
            let tr = pack_seq_and_type(seq, ValueType::Value);
            let fresh = !model.contains_key(&(uk.clone(), Reverse(tr)));
            assert_eq!(list.insert_with_hint(&uk, tr, b"v", hint), fresh, "key {i} seq {seq}");
            if fresh {
                model.insert(
                    (uk.clone(), Reverse(tr)),
                    ([&uk[..], &tr.to_le_bytes()].concat(), b"v".to_vec()),
                );
            }
        };
        // A spread of keys so that the list has several levels.
        for i in 0..2000 {
            insert(i * 10, 1, &mut model, &mut hint);
        }
        let check = |model: &Model| {
            let probes: Vec<(Vec<u8>, u64)> =
                (0..200).map(|j| (key(j * 97), pack_seq_and_type(2, ValueType::Value))).collect();
            check_scans_and_probes(&list, model, &probes, |uk, tr| (uk.to_vec(), Reverse(tr)));
        };
        check(&model);
        // Walks from the hint's last key by steps of every size, both ways, and repeats.
        let mut at = 10_000u64;
        for step in 0..4000u64 {
            let d = [1u64, 3, 9, 40, 300, 2500, 19_000][rng.gen_range(0..7)];
            at = if rng.gen_bool(0.5) { at.saturating_sub(d) } else { (at + d).min(20_000) };
            let seq = if step % 7 == 0 { 1 } else { rng.gen_range(1..4) };
            insert(at, seq, &mut model, &mut hint);
        }
        check(&model);
        // A hint kept from before the list grew taller (its height below the list's).
        let mut short = InsertHint::default();
        insert(5, 9, &mut model, &mut short);
        for i in 0..3000 {
            insert(30_000 + i, 1, &mut model, &mut hint);
        }
        insert(6, 9, &mut model, &mut short);
        insert(29_999, 9, &mut model, &mut short);
        check(&model);
    }

    /// `insert_concurrently_with_hint` (`memtable_insert_hint_per_batch`): threads insert
    /// runs of sequential keys at once, each from its own hint, interleaved with the others'
    /// runs (so a hint's splice goes stale between inserts); every entry is linked once, in
    /// order both ways, and an equal internal key is refused.
    #[test]
    fn concurrent_hinted_inserts_keep_order() {
        const THREADS: u64 = 4;
        const PER_THREAD: u64 = 3000;
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        // Thread t's i-th key: the runs of all threads interleave in key order.
        let key = |t: u64, i: u64| format!("key{:05}{t}", i).into_bytes();
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let list = &list;
                s.spawn(move || {
                    let mut hint = InsertHint::default();
                    for i in 0..PER_THREAD {
                        let tr = pack_seq_and_type(t * PER_THREAD + i + 1, ValueType::Value);
                        assert!(list.insert_concurrently_with_hint(&key(t, i), tr, b"v", &mut hint));
                    }
                    let tr = pack_seq_and_type(t * PER_THREAD + 1, ValueType::Value);
                    assert!(!list.insert_concurrently_with_hint(&key(t, 0), tr, b"v", &mut hint));
                });
            }
        });
        let mut it = list.iter();
        it.seek_to_first();
        let mut n = 0;
        let mut last: Option<Vec<u8>> = None;
        while it.valid() {
            if let Some(p) = &last {
                assert!(p.as_slice() < it.key(), "forward order");
            }
            last = Some(it.key().to_vec());
            n += 1;
            it.next();
        }
        assert_eq!(n, THREADS * PER_THREAD);
        it.seek_to_last();
        let mut back = 0;
        while it.valid() {
            back += 1;
            it.prev();
        }
        assert_eq!(back, n);
    }

    /// Many threads insert at once (most through `insert_concurrently`, one through
    /// `insert`), some racing on the same keys; then the list must be in order forwards,
    /// stepping back must give the same order backwards, and every entry must be found.
    #[test]
    fn concurrent_inserts_keep_order_back_links_and_entries() {
        const THREADS: u64 = 8;
        const PER_THREAD: u64 = 4000;
        // Small blocks, so shards refill and large values go to the main arena often.
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        let key = |i: u64| format!("key{:07}", (i * 7919) % (THREADS * PER_THREAD)).into_bytes();
        let value =
            |i: u64| -> Vec<u8> { format!("v{i}-").bytes().cycle().take((i % 40) as usize).collect() };
        let wins: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let list = &list;
                    s.spawn(move || {
                        let mut won = 0;
                        for j in 0..PER_THREAD {
                            let i = t * PER_THREAD + j;
                            let tr = pack_seq_and_type(i + 1, ValueType::Value);
                            let ok = if t == 0 {
                                list.insert(&key(i), tr, &value(i))
                            } else {
                                list.insert_concurrently(&key(i), tr, &value(i))
                            };
                            assert!(ok, "a fresh key is inserted");
                            // Every thread also races for one shared entry per step: exactly
                            // one insert of an equal internal key wins.
                            let shared = pack_seq_and_type(j + 1, ValueType::Merge);
                            if list.insert_concurrently(b"shared", shared, b"s") {
                                won += 1;
                            }
                        }
                        won
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(wins.iter().sum::<u64>(), PER_THREAD, "each shared entry inserted exactly once");
        let icmp = bytewise_internal_comparator();
        let mut forward: Vec<Vec<u8>> = Vec::new();
        let mut it = list.iter();
        it.seek_to_first();
        while it.valid() {
            if let Some(p) = forward.last() {
                assert_eq!(icmp.compare(p, it.key()), Ordering::Less, "forward order");
            }
            forward.push(it.key().to_vec());
            it.next();
        }
        assert_eq!(forward.len() as u64, THREADS * PER_THREAD + PER_THREAD);
        let mut backward: Vec<Vec<u8>> = Vec::new();
        it.seek_to_last();
        while it.valid() {
            backward.push(it.key().to_vec());
            it.prev();
        }
        backward.reverse();
        assert!(backward == forward, "prev gives the forward order reversed");
        for i in 0..THREADS * PER_THREAD {
            let ikey = make_internal_key(&key(i), i + 1, ValueType::Value);
            let (k, v) = list.seek_entry(&ikey).expect("entry present");
            assert_eq!((k, v), (&ikey[..], &value(i)[..]));
        }
        let used = list.memory_usage();
        assert!(used > (THREADS * PER_THREAD * 30) as usize && used < 8 << 20, "usage {used}");
    }

    /// Arena memory is not zeroed (a recycled region holds an earlier memtable's bytes, and
    /// debug builds scribble over every region): lists whose nodes lie in regions, one after
    /// the other (the second on the first's regions when no other test took them), filled by
    /// plain and by concurrent inserts, match the model.
    #[test]
    fn lists_on_unzeroed_regions_match_the_model() {
        for round in 0..2u64 {
            let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 64 << 10));
            let mut model = BTreeMap::new();
            let mut rng = SmallRng::seed_from_u64(round);
            for i in 0..20_000u64 {
                let uk = random_user_key(&mut rng);
                let tr = pack_seq_and_type(i + 1, TYPES[(i % 4) as usize]);
                let value: Vec<u8> = format!("v{i}-").bytes().cycle().take((i % 60) as usize).collect();
                let fresh = if round == 0 {
                    list.insert(&uk, tr, &value)
                } else {
                    list.insert_concurrently(&uk, tr, &value)
                };
                assert!(fresh, "sequence numbers differ: every internal key is new");
                model.insert((uk.clone(), Reverse(tr)), ([&uk[..], &tr.to_le_bytes()].concat(), value));
            }
            assert!(list.arena_memory_usage() > 3 * (64 << 10), "past the first two blocks: regions");
            let probes: Vec<(Vec<u8>, u64)> =
                model.keys().step_by(40).map(|(k, Reverse(t))| (k.clone(), *t)).collect();
            check_scans_and_probes(&list, &model, &probes, |uk, tr| (uk.to_vec(), Reverse(tr)));
        }
    }

    /// The head lives in the list itself: a list filled, then moved (into an `Arc`, as a
    /// memtable is), must keep no pointer to where it was. Stepping back from the first
    /// node ends the iteration.
    #[test]
    fn list_moved_after_inserts_keeps_its_links() {
        let list = SkipList::new(bytewise_internal_comparator(), 4096);
        for i in [5u8, 1, 9, 3, 7] {
            assert!(list.insert(&[b'k', i], pack_seq_and_type(u64::from(i), ValueType::Value), &[i]));
        }
        let list = Arc::new(list);
        assert!(list.insert(b"k\x00", pack_seq_and_type(20, ValueType::Value), b"first"));
        let mut it = list.iter();
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push(it.key().to_vec());
            it.prev();
        }
        back.reverse();
        let mut fwd = Vec::new();
        it.seek_to_first();
        while it.valid() {
            fwd.push(it.key().to_vec());
            it.next();
        }
        assert_eq!(fwd.len(), 6);
        assert_eq!(back, fwd);
        it.seek(&make_internal_key(b"k\x00", 20, ValueType::Value));
        assert_eq!(it.value(), b"first");
        it.prev();
        assert!(!it.valid(), "stepping back from the first node ends the iteration");
    }

    fn check_insert_order(icmp: InternalKeyComparator, keys: &[Vec<u8>]) {
        let list = Arc::new(SkipList::new(icmp.clone(), 4096));
        let mut want: Vec<Vec<u8>> = Vec::new();
        for (i, uk) in keys.iter().enumerate() {
            let seq = i as u64 + 1;
            assert!(list.insert(uk, pack_seq_and_type(seq, ValueType::Value), uk), "fresh key {i}");
            // The same internal key again is refused, wherever the splice stands.
            assert!(!list.insert(uk, pack_seq_and_type(seq, ValueType::Value), b"dup"), "duplicate {i}");
            want.push(make_internal_key(uk, seq, ValueType::Value));
        }
        want.sort_by(|a, b| icmp.compare(a, b));
        let mut it = list.iter();
        it.seek_to_first();
        for k in &want {
            assert!(it.valid());
            assert_eq!(it.key(), &k[..]);
            assert_eq!(it.value(), crate::key::user_key(k));
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for k in want.iter().rev() {
            assert!(it.valid());
            assert_eq!(it.key(), &k[..]);
            it.prev();
        }
        assert!(!it.valid());
        for k in &want {
            assert!(list.contains(k));
        }
    }

    fn seq_key(i: u64) -> Vec<u8> {
        // db_bench's key shape: a big-endian number, then padding.
        [i.to_be_bytes(), *b"00000000"].concat()
    }

    #[test]
    fn sequential_reverse_and_interleaved_inserts_keep_order() {
        let n = 5000u64;
        let ascending: Vec<Vec<u8>> = (0..n).map(seq_key).collect();
        let descending: Vec<Vec<u8>> = (0..n).rev().map(seq_key).collect();
        // Two ascending runs interleaved, one descending beside one ascending, and runs that
        // restart below their last key (the splice must be dropped, not trusted).
        let two_runs: Vec<Vec<u8>> =
            (0..n).map(|i| seq_key(if i % 2 == 0 { i } else { n * 2 + i })).collect();
        let up_down: Vec<Vec<u8>> = (0..n).map(|i| seq_key(if i % 2 == 0 { n + i } else { n - i })).collect();
        let sawtooth: Vec<Vec<u8>> = (0..n).map(|i| seq_key((i % 100) * 1000 + i / 100)).collect();
        // Keys sharing their 8-byte prefix (the prefix filters decide nothing), ascending
        // then descending.
        let shared: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let j = if i < n / 2 { i } else { n * 2 - i };
                [&b"samepfx!"[..], &j.to_be_bytes()].concat()
            })
            .collect();
        // Short keys (zero-padded prefixes) ascending.
        let short: Vec<Vec<u8>> = (0..n).map(|i| (i as u16).to_be_bytes()[..2].to_vec()).collect();
        for keys in [&ascending, &descending, &two_runs, &up_down, &sawtooth, &shared, &short] {
            check_insert_order(bytewise_internal_comparator(), keys);
            check_insert_order(InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator)), keys);
        }
    }

    /// Same user key at rising sequences (an overwrite run): each insert goes before the
    /// previous one (newer sequences sort first).
    #[test]
    fn overwrites_of_one_key_keep_order() {
        let keys: Vec<Vec<u8>> = (0..3000).map(|_| b"the-one-key".to_vec()).collect();
        check_insert_order(bytewise_internal_comparator(), &keys);
    }

    /// One thread inserts ascending keys with `insert` (the splice path) while others insert
    /// keys between them with `insert_concurrently`: the splice goes stale under it (nodes
    /// linked inside its brackets), and the list must still come out whole and in order.
    #[test]
    fn sequential_insert_beside_concurrent_inserters() {
        const N: u64 = 6000;
        const OTHERS: u64 = 3;
        let list = SkipList::new(bytewise_internal_comparator(), 4096);
        std::thread::scope(|s| {
            let list = &list;
            s.spawn(move || {
                for i in 0..N {
                    assert!(list.insert(&seq_key(i * 4), pack_seq_and_type(i + 1, ValueType::Value), b"seq"));
                }
            });
            for t in 1..=OTHERS {
                s.spawn(move || {
                    for i in 0..N {
                        let k = seq_key(i * 4 + t);
                        assert!(list.insert_concurrently(
                            &k,
                            pack_seq_and_type(i + 1, ValueType::Value),
                            b"c"
                        ));
                    }
                });
            }
        });
        let icmp = bytewise_internal_comparator();
        let mut forward: Vec<Vec<u8>> = Vec::new();
        list.for_each_while(|k, _| {
            forward.push(k.to_vec());
            true
        });
        assert_eq!(forward.len() as u64, N * (OTHERS + 1));
        for w in forward.windows(2) {
            assert_eq!(icmp.compare(&w[0], &w[1]), Ordering::Less, "forward order");
        }
        for (j, k) in forward.iter().enumerate() {
            assert_eq!(crate::key::user_key(k), &seq_key(j as u64)[..], "every key once, in place");
        }
        let list = Arc::new(list);
        let mut backward: Vec<Vec<u8>> = Vec::new();
        let mut it = list.iter();
        it.seek_to_last();
        while it.valid() {
            backward.push(it.key().to_vec());
            it.prev();
        }
        backward.reverse();
        assert!(backward == forward, "prev gives the forward order reversed");
    }

    /// With the splice of the last insert, keys in increasing or decreasing order are
    /// linked without a search: almost no node is loaded by a search per insert (against
    /// 2 to 6 for random keys, `insert_search_loads_few_nodes`).

    #[test]
    fn large_entries_round_trip() {
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        let big_key = vec![b'k'; 300];
        let big_value = vec![7u8; 100_000];
        assert!(list.insert(&big_key, pack_seq_and_type(1, ValueType::Value), &big_value));
        assert!(list.insert(b"a", pack_seq_and_type(2, ValueType::Value), b""));
        let mut it = list.iter();
        it.seek_to_last();
        assert_eq!(crate::key::user_key(it.key()), &big_key[..]);
        assert_eq!(it.value(), &big_value[..]);
        it.prev();
        assert_eq!(it.key(), &make_internal_key(b"a", 2, ValueType::Value)[..]);
        assert_eq!(it.value(), b"");
        assert!(list.memory_usage() > 100_000);
    }

    fn random_user_key(rng: &mut SmallRng) -> Vec<u8> {
        let len = rng.gen_range(0..5);
        (0..len).map(|_| b"abcd\x00\xff"[rng.gen_range(0..6)]).collect()
    }

    /// User keys sharing long stems, shorter than, as long as and longer than 8 bytes, with
    /// 0x00 and 0xff bytes.
    fn adversarial_user_key(rng: &mut SmallRng) -> Vec<u8> {
        const STEMS: [&[u8]; 5] = [
            b"",
            b"\x00\x00\x00\x00\x00\x00\x00\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\xff",
            b"prefix_a",
            b"prefix_",
        ];
        let stem = STEMS[rng.gen_range(0..STEMS.len())];
        let cut = rng.gen_range(0..=stem.len());
        let mut k = stem[..cut].to_vec();
        for _ in 0..rng.gen_range(0..4) {
            k.push(b"\x00\x01a\xfe\xff"[rng.gen_range(0..5)]);
        }
        k
    }

    /// Bytewise order through the comparator trait, counting every comparison.
    struct CountingComparator(AtomicU64);

    impl crate::comparator::Comparator for CountingComparator {
        fn name(&self) -> &str {
            "test.Counting"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            self.0.fetch_add(1, MemOrder::Relaxed);
            a.cmp(b)
        }
    }

    /// With the splice of the last insert, keys in increasing order are linked without a
    /// search (about one comparison per insert: the previous node against the key), where
    /// keys in random order cost a search from the top each.
    #[test]
    fn sequential_inserts_use_the_splice() {
        let per_insert = |keys: &[u64]| {
            let cmp = Arc::new(CountingComparator(AtomicU64::new(0)));
            let list = SkipList::new(InternalKeyComparator::new(cmp.clone()), 128 << 10);
            let mut counted = 0;
            for (i, &k) in keys.iter().enumerate() {
                if i == 1000 {
                    counted = cmp.0.load(MemOrder::Relaxed);
                }
                assert!(list.insert(&seq_key(k), pack_seq_and_type(i as u64 + 1, ValueType::Value), b"v"));
            }
            (cmp.0.load(MemOrder::Relaxed) - counted) as f64 / (keys.len() - 1000) as f64
        };
        let ascending: Vec<u64> = (0..5000).collect();
        let mut rng = SmallRng::seed_from_u64(3);
        let random: Vec<u64> = (0..5000).map(|_| rng.gen()).collect();
        let (seq, rnd) = (per_insert(&ascending), per_insert(&random));
        assert!(seq <= 1.5, "{seq} comparisons per ascending insert");
        assert!(rnd >= 8.0, "{rnd} comparisons per random insert");
    }

    /// Heights follow RocksDB's branching factor 4: about a quarter of the nodes of each
    /// height reach the next level, and none exceeds MAX_HEIGHT.
    #[test]
    fn heights_quarter_per_level() {
        const N: u64 = 400_000;
        let mut at_least = [0u64; MAX_HEIGHT + 1];
        for _ in 0..N {
            let h = random_height();
            assert!((1..=MAX_HEIGHT).contains(&h), "height {h}");
            for c in &mut at_least[1..=h] {
                *c += 1;
            }
        }
        assert_eq!(at_least[1], N);
        for level in 2..=5 {
            let ratio = at_least[level] as f64 / at_least[level - 1] as f64;
            assert!((0.22..0.28).contains(&ratio), "level {level}: {ratio} of the level below");
        }
    }

    /// A db_bench entry (16-byte key, 100-byte value: 126 encoded bytes) takes its encoding,
    /// 2 bytes to the next 8-byte boundary and 8 * 4/3 bytes of tower on average: about
    /// 138.7 bytes of arena, as in RocksDB's InlineSkipList.
    #[test]
    fn db_bench_entries_take_what_rocksdb_takes() {
        let list = SkipList::new(bytewise_internal_comparator(), 8 << 20);
        let mut rng = SmallRng::seed_from_u64(9);
        let value = [b'x'; 100];
        let n = 100_000u64;
        for i in 0..n {
            let uk = [rng.gen::<u64>().to_be_bytes(), *b"00000000"].concat();
            assert!(list.insert(&uk, pack_seq_and_type(i + 1, ValueType::Value), &value));
        }
        let per = list.arena_memory_usage() as f64 / n as f64;
        assert!((136.0..141.5).contains(&per), "{per} arena bytes per entry");
    }

    /// An in-place overwrite takes shorter or equal values (the varint may shrink) and
    /// refuses longer ones.
    #[test]
    fn overwrite_value_in_place() {
        let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
        let long: Vec<u8> = vec![b'l'; 200];
        assert!(list.insert(b"a", pack_seq_and_type(1, ValueType::Value), &long));
        assert!(list.insert(b"b", pack_seq_and_type(1, ValueType::Value), b"next"));
        let target = make_internal_key(b"a", 1, ValueType::Value);
        // SAFETY: this test is the only writer and reads no value while overwriting.
        let wrote = unsafe { list.overwrite_value(&target, b"short", |_| Some(())) };
        assert!(wrote);
        // SAFETY: as above.
        let refused = unsafe { list.overwrite_value(&target, &[b'x'; 201], |_| Some(())) };
        assert!(!refused, "a longer value is refused");
        // SAFETY: as above.
        let declined = unsafe { list.overwrite_value(&target, b"s", |_| None::<()>) };
        assert!(!declined, "a declined guard writes nothing");
        let (k, v) = list.seek_entry(&target).expect("entry");
        assert_eq!((k, v), (&target[..], &b"short"[..]));
        let mut it = list.iter();
        it.seek(&target);
        it.next();
        assert_eq!(it.value(), b"next");
    }

    /// An insert that finds the kept splice busy (another `insert` holds it) searches from
    /// an empty splice: many threads calling `insert` at once still build one ordered list.
    #[test]
    fn plain_inserts_from_several_threads() {
        let list = SkipList::new(bytewise_internal_comparator(), 4096);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let list = &list;
                s.spawn(move || {
                    for i in 0..3000u64 {
                        assert!(list.insert(
                            &seq_key(i * 4 + t),
                            pack_seq_and_type(1, ValueType::Value),
                            b"v"
                        ));
                    }
                });
            }
        });
        let mut n = 0u64;
        list.for_each_while(|k, _| {
            assert_eq!(crate::key::user_key(k), &seq_key(n)[..]);
            n += 1;
            true
        });
        assert_eq!(n, 12_000);
    }

    mod layout_proptest {
        use super::*;
        use proptest::prelude::*;

        /// One insert: a short user key, a sequence, a type and a value length.
        fn op() -> impl Strategy<Value = (Vec<u8>, u64, usize, usize)> {
            (
                proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(0xff)], 0..6),
                0u64..8,
                0usize..4,
                prop_oneof![0usize..20, 120usize..140, Just(3000usize)],
            )
        }

        type Model = BTreeMap<(Vec<u8>, Reverse<u64>), (Vec<u8>, Vec<u8>)>;

        /// Checks `list` against `model` (see `check_scans_and_probes`).
        fn check(list: &Arc<SkipList>, model: &Model, probes: &[(Vec<u8>, u64)]) {
            check_scans_and_probes(list, model, probes, |uk, tr| (uk.to_vec(), Reverse(tr)));
        }

        fn entry(op: &(Vec<u8>, u64, usize, usize)) -> (u64, Vec<u8>, Vec<u8>) {
            let (uk, seq, t, vlen) = op;
            let tr = pack_seq_and_type(*seq, TYPES[*t]);
            let value: Vec<u8> = (0..*vlen).map(|i| (i as u8) ^ (*seq as u8)).collect();
            (tr, [&uk[..], &tr.to_le_bytes()].concat(), value)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

            /// Single-writer inserts (through the kept splice) against a BTreeMap.
            #[test]
            fn inserts_match_a_btreemap(ops in proptest::collection::vec(op(), 1..300),
                                        sorted in any::<bool>(),
                                        probes in proptest::collection::vec(op(), 0..40)) {
                let mut ops = ops;
                if sorted {
                    // Ascending runs exercise the splice's tail path.
                    ops.sort();
                }
                let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
                let mut model = Model::new();
                for o in &ops {
                    let (tr, ikey, value) = entry(o);
                    let fresh = !model.contains_key(&(o.0.clone(), Reverse(tr)));
                    prop_assert_eq!(list.insert(&o.0, tr, &value), fresh);
                    if fresh {
                        model.insert((o.0.clone(), Reverse(tr)), (ikey, value));
                    }
                }
                let probes: Vec<_> = probes.iter().map(|o| (o.0.clone(), entry(o).0)).collect();
                check(&list, &model, &probes);
            }

            /// The same entries inserted from three threads at once (two concurrent, one
            /// through the kept splice): the list holds each distinct key once, in order.
            #[test]
            fn concurrent_inserts_match_a_btreemap(ops in proptest::collection::vec(op(), 1..400),
                                                   probes in proptest::collection::vec(op(), 0..40)) {
                let list = Arc::new(SkipList::new(bytewise_internal_comparator(), 4096));
                let mut model = Model::new();
                for o in &ops {
                    let (tr, ikey, value) = entry(o);
                    model.entry((o.0.clone(), Reverse(tr))).or_insert((ikey, value));
                }
                let won: usize = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..3)
                        .map(|t| {
                            let (list, ops) = (&list, &ops);
                            s.spawn(move || {
                                let mut won = 0;
                                // Every thread inserts every op, in its own rotation.
                                for j in 0..ops.len() {
                                    let o = &ops[(j + t * ops.len() / 3) % ops.len()];
                                    let (tr, _, value) = entry(o);
                                    let ok = if t == 0 {
                                        list.insert(&o.0, tr, &value)
                                    } else {
                                        list.insert_concurrently(&o.0, tr, &value)
                                    };
                                    won += usize::from(ok);
                                }
                                won
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().expect("inserter")).sum()
                });
                // Equal internal keys with different values: the first inserted wins; the
                // model keeps the first op's value, so compare values only for unique keys.
                prop_assert_eq!(won, model.len());
                let mut seen = Model::new();
                list.for_each_while(|k, v| {
                    let uk = crate::key::user_key(k).to_vec();
                    seen.insert((uk, Reverse(crate::key::trailer(k))), (k.to_vec(), v.to_vec()));
                    true
                });
                prop_assert_eq!(seen.keys().collect::<Vec<_>>(), model.keys().collect::<Vec<_>>());
                let probes: Vec<_> = probes.iter().map(|o| (o.0.clone(), entry(o).0)).collect();
                check(&list, &seen, &probes);
            }
        }
    }
}
