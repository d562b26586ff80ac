//! An arena-backed skiplist of memtable entries: concurrent writers, lock-free readers.
//!
//! Each node is one arena allocation: the tower of links, then the encoded entry. A node
//! pointer points at its level-0 next pointer; one pointer past it is the back link (the
//! previous node at level 0), and the entry starts two pointers past it. Levels 1 and up
//! are 16-byte links (16-aligned, so never split across cache lines): the next pointer and
//! a *key bound* of the node it points to (see below); level `i` lives `16 * i` bytes below
//! the node pointer. A node of height 1 (one node in two) has no link.
//!
//! ```text
//!   base                                                    node
//!   |                                                       |
//!   v                                                       v
//!   +----------------------+-----+------------------+---------+------+--------------------------------------------------------+
//!   | next[h-1] bound[h-1] | ... | next[1] bound[1] | next[0] | prev | varint32 ikey_len | ikey | varint32 vlen | value or ptr |
//!   +----------------------+-----+------------------+---------+------+--------------------------------------------------------+
//!   ikey = user_key | fixed64 LE (seq << 8 | type)
//!   value or ptr = the value itself when vlen <= INLINE_VALUE (16),
//!                  else fixed64 LE address of the value's vlen bytes elsewhere in the arena
//!   bound[i] = u64, at most the key prefix of the node next[i] points to
//!   key prefix = the user key's first 8 bytes as a big-endian integer, zero-padded
//! ```
//! Where a node lives in its arena block (see [`super::arena`]) depends on its height. A
//! search touches about `log2(n)` nodes, nearly all of them tall ones (height >= 2, half
//! of the nodes), and only the last step or two at level 0 touch nodes of height 1. So tall
//! nodes are packed densely at the bottom of the block, their long values out of line at
//! its top; a node of height 1 is allocated at the top together with its value (the pointer
//! then names the bytes right after the node). With 1000 memtables of 1M entries in all
//! (`db_bench --num_column_families=1000`, 100-byte values) the entries take 140 MB, searched
//! at random, and the tall nodes the upper levels walk stay in the last-level cache.
//! Nodes are ordered by the runtime [`InternalKeyComparator`] on `ikey`. Heights are drawn
//! with branching factor 2 (RocksDB's list uses 4), capped at [`MAX_HEIGHT`]. The search is
//! a chain of dependent loads, one per node stepped to, and with a thousand memtables written
//! at random nearly each one misses the cache: the steps to the right are what cost. With the
//! bounds, a level costs only the nodes the search moves to (the node that overshoots is
//! decided by the bound, without loading it): about `(b - 1) * log_b(n)` steps for branching
//! factor `b`, which is fewest for `b = 2` (10 for a list of a thousand entries, against 15 for
//! `b = 4`; the profile test `cache_profile_thousand_lists` counts 9.0 against 12.7 nodes
//! compared per insert). The price is towers: one link per node on average instead of a third.
//!
//! Key bounds (bytewise comparator only, without timestamps): for plain byte order, a key
//! prefix greater than another's means the key is greater (a zero-padded byte cannot exceed
//! a real one). So when the bound stored beside a link exceeds the searched key's prefix,
//! the node linked there is greater than the key, and the search goes down a level without
//! loading that node, which with a thousand memtables written at random is a cache miss
//! (the overshooting node of each level). Equal or smaller bounds decide nothing: the node's
//! key is compared in full. Other comparators never read the bounds (they are not kept).
//! Level 0 has none: an insert loads the node after its spot anyway (its back link is
//! swapped), and the bytes are better spent keeping short nodes short.
//! A bound is a lower bound, not the exact prefix, because links change under concurrent
//! inserters: an inserter lowers the predecessor's bound to its node's prefix
//! (`fetch_min`) *before* the swap that links the node, and bounds are only ever lowered.
//! The nodes linked after a predecessor at a level only get smaller over time (each new
//! one is inserted between it and the previous one), so a bound read after the link it
//! belongs to (`Acquire`) is at most the prefix of that linked node. A new node's own bound
//! is copied from its predecessor's before that is lowered: exact for a single writer.
//!
//! Start index (with the key bounds only): once the list has a few dozen nodes, a sorted
//! array of the nodes linked at one level (3, or higher for long lists: at most about 1024
//! listed) and their exact key prefixes lets a search skip the levels above it: a binary
//! search over contiguous prefixes picks the last listed node before the key, and the walk
//! goes on from there at that level. The upper levels cost a dependent cache miss per step
//! with a thousand memtables; the array is a few cache lines. An insert taller than the
//! indexed level + 1 needs the splice above it and searches from the head. The array is
//! rebuilt (a walk of its level) each time the number of tall nodes doubles, by whichever
//! inserter crosses the mark; nodes linked since are found by the walk below, as in any
//! search. A replaced array stays alive until the list drops (a reader may hold it): in all
//! about 4 bytes per node. See [`StartIndex`].
//!
//! Concurrency: any number of writers and readers at once; readers never lock. A node is
//! fully written — entry bytes, its own next pointer and back link — before it is linked,
//! level by level from the bottom, with a compare-and-swap on its predecessor's next pointer
//! (`Release`); readers follow links with `Acquire` loads, so a reader that reaches a node
//! sees all of it. A swap that fails (another writer linked a node there) searches that
//! level again from the same predecessor (RocksDB's `InlineSkipList::InsertConcurrently`).
//! [`SkipList::insert`] allocates under the arena's mutex (one writer at a time keeps the
//! arena's layout above); [`SkipList::insert_concurrently`] allocates from a shard of the
//! arena ([`super::arena::ConcurrentArena`]), for a write group's writers inserting at once.
//! The back link lets `prev` step in O(1) (RocksDB's list searches from the top instead,
//! which makes reverse scans of a large memtable several times slower). It is set before the
//! node is published, and the successor's back link is swapped to the new node after (see
//! `fix_back_link`: a back link only moves forward, and is exact once every inserter has
//! returned). Meanwhile a reader stepping back may skip a node being inserted — one its
//! snapshot cannot see, since an entry's sequence is published only after every insert of
//! its write group returned. Nodes are never unlinked or modified (other than their links
//! and back links) and the arena lives as long as the list, so references handed to
//! readers stay valid.

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

/// The tallest tower a node may have: with branching factor 2, enough for about a million
/// entries before the top level grows long.
pub const MAX_HEIGHT: usize = 20;

const SLOT: usize = std::mem::size_of::<AtomicPtr<u8>>();

/// One level (1 and up) of a node's tower: the next pointer and a lower bound of the key
/// prefix of the node it points to (see the module comment). 16-aligned: one cache line
/// holds both.
#[repr(C, align(16))]
struct Link {
    next: AtomicPtr<u8>,
    bound: AtomicU64,
}

impl Link {
    fn empty() -> Link {
        Link { next: AtomicPtr::new(ptr::null_mut()), bound: AtomicU64::new(u64::MAX) }
    }
}

const LINK: usize = std::mem::size_of::<Link>();
/// Offset of a node's entry from the node pointer: past next[0] and the back link.
const ENTRY: usize = 2 * SLOT;

/// The head node's tower: a node of height [`MAX_HEIGHT`] and its back link (always null).
#[repr(C, align(16))]
struct HeadTower {
    links: [Link; MAX_HEIGHT - 1],
    next0: AtomicPtr<u8>,
    prev: AtomicPtr<u8>,
}
/// Values up to this length are stored in the node; longer ones out of line.
const INLINE_VALUE: usize = 16;

thread_local! {
    /// This thread's xorshift64 state for node heights (never 0 once seeded).
    static HEIGHT_RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Seeds the height generators of new threads apart from each other.
static RNG_SEEDS: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);

/// A height >= 1 where each extra level has probability 1/2: one more level per trailing
/// zero bit of a random word (a per-thread generator, so concurrent inserters share nothing).
fn random_height() -> usize {
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
        1 + (x.trailing_zeros() as usize).min(MAX_HEIGHT - 1)
    })
}

/// A sorted set of encoded entries (see the module comment). Share it through `Arc`.
pub struct SkipList {
    icmp: InternalKeyComparator,
    /// The head node's tower and back link (always null: the `next` of the last element),
    /// in the list itself rather than in its arena: every search starts here, and with a
    /// thousand memtables written at random a separate allocation is one more cache miss per
    /// write. The head pointer is computed from it ([`SkipList::head`]), never stored: a list
    /// may move before its first insert, so no node's back link names the head (null stands
    /// for it). Its bounds start at `u64::MAX` (nothing linked yet: any first node lowers them).
    head_tower: HeadTower,
    /// True when the key bounds are kept and used: a bytewise comparator without timestamps.
    bounds: bool,
    /// Height of the tallest node linked so far (>= 1).
    max_height: AtomicUsize,
    /// The start index (see [`StartIndex`]): null until the list has a few dozen nodes, and
    /// when bounds are not kept. Replaced as the list grows; the one replaced is kept by its
    /// successor (readers may still hold it) and all are freed with the list.
    index: AtomicPtr<StartIndex>,
    /// Nodes inserted with a height of at least [`INDEX_MIN_HEIGHT`] (about one in eight).
    tall: AtomicUsize,
    /// The value of `tall` at which the next start index is built.
    next_index_at: AtomicUsize,
    /// Set while one inserter builds a start index (the others go on without waiting).
    building_index: std::sync::atomic::AtomicBool,
    /// The splice of the last single-writer insert (see [`Splice`]), taken with a try-lock
    /// by [`SkipList::insert`] (an insert that finds it busy searches as usual).
    splice: parking_lot::Mutex<Splice>,
    arena: ConcurrentArena,
}

/// Where the last [`SkipList::insert`] linked its node, kept for the next one (RocksDB's
/// `InlineSkipList::seq_splice_`): at each level `i < levels`, `prev[i]` is a node before
/// that node's key (null stands for the head, as the list may move between inserts) and
/// `next[i]` the node linked after it then (null: the end). The levels nest: `prev[i]` is at
/// or before `prev[i - 1]`, `next[i]` at or after `next[i - 1]`. So when a new key lies
/// after `prev[0]` and not after `next[0]`, and `prev[0]` still links to `next[0]`, the
/// splice holds the new key's place at every level below `levels`: the insert links without
/// searching. That is the case for keys inserted in increasing (or decreasing) order, where
/// a search would walk from the top of the list to its end (or start) for every insert.
/// After an insert the splice brackets the new node and its successor, or, in a descending
/// run (the node went right before the previous insert's), its predecessor and the node.
/// Upper levels may have gained nodes between `prev[i]` and `next[i]` since (inserters of
/// other threads): the link's compare-and-swap then fails and that level is searched again
/// from `prev[i]`, which stays before the key, as after any failed swap.
///
/// The full splice is kept only while the inserts follow each other (the new node linked
/// right after or right before the previous one): for keys in random order it would be
/// written and never used, and with a thousand memtables written at random its lines are
/// cache misses. `last` is the previous insert's node, to tell.
struct Splice {
    /// Levels `0..levels` hold a splice; 0: none.
    levels: usize,
    /// The node of the last `insert` (null: none).
    last: *mut u8,
    /// Key prefixes of `prev[0]` and `next[0]` (with the key bounds only; else 0 and
    /// `u64::MAX`): a key whose prefix is outside them is outside the splice, decided
    /// without loading either node.
    prev_kp: u64,
    next_kp: u64,
    prev: [*mut u8; MAX_HEIGHT],
    next: [*mut u8; MAX_HEIGHT],
}

// SAFETY: the pointers name nodes of the list's own arena (or null), read only by the list
// that owns the splice, behind its mutex.
unsafe impl Send for Splice {}

/// The lowest height of a node a start index lists (its level is at least this minus 1).
const INDEX_MIN_HEIGHT: usize = 4;
/// A start index lists about this many nodes at most: past it, a taller level is indexed.
const INDEX_TARGET_LEN: usize = 1024;
/// The first start index is built when this many nodes of [`INDEX_MIN_HEIGHT`] exist
/// (about 64 nodes in all); each later one when their number has doubled.
const INDEX_FIRST_AT: usize = 8;

/// A sorted array of the nodes linked at one level, `level`, when it was built, with the
/// key prefix of each (exact: read from the node). A search that does not need the
/// splice above `level` starts at the last listed node whose prefix is below the key's —
/// so that node is before the key — instead of walking down from the head: a binary
/// search in a few contiguous cache lines replaces the walk through the upper levels,
/// whose every step is a dependent cache miss with a thousand memtables written at random.
/// Nodes are never unlinked, so a listed node stays a valid start; nodes linked since the
/// index was built are found by the walk at `level` and below, as in any search, and the
/// index is rebuilt each time the list doubles, so that walk stays about one node per level.
/// Kept only with the key bounds (bytewise order without timestamps), where the prefix
/// order agrees with the key order.
struct StartIndex {
    level: usize,
    prefixes: Box<[u64]>,
    nodes: Box<[*mut u8]>,
    /// The index this one replaced: readers that loaded it may still be using it, so it
    /// lives until the list is dropped.
    _older: Option<Box<StartIndex>>,
}

impl StartIndex {
    /// The last listed node whose prefix is below `kp` (so before any key with prefix `kp`).
    #[inline]
    fn start_for(&self, kp: u64) -> Option<*mut u8> {
        let i = self.prefixes.partition_point(|&p| p < kp);
        i.checked_sub(1).map(|i| self.nodes[i])
    }
}

impl Drop for SkipList {
    fn drop(&mut self) {
        let idx = *self.index.get_mut();
        if !idx.is_null() {
            // SAFETY: a non-null `index` came from `Box::into_raw` in `build_index` and is
            // owned by the list alone; no reader outlives `&self`.
            drop(unsafe { Box::from_raw(idx) });
        }
    }
}

// SAFETY: the raw pointers in a SkipList point into its own arena, which it owns and frees
// only on drop. Shared state that changes after construction is either atomic (next
// pointers, back links, max_height, usage) or guarded by the arena's locks (its bump
// state). Entry bytes are written before their node is published with Release and
// are immutable afterwards, so any thread may read them and the list may move threads.
unsafe impl Send for SkipList {}
// SAFETY: see the Send impl above.
unsafe impl Sync for SkipList {}

/// The level-`level` link of `node`, for `level >= 1`.
///
/// # Safety
/// `node` is a node pointer of this module (head or a linked/allocated node) whose arena
/// is alive for `'a`, and `1 <= level` is below the node's height.
#[inline]
unsafe fn link<'a>(node: *mut u8, level: usize) -> &'a Link {
    debug_assert!(level >= 1);
    // SAFETY: per the contract, the link lies inside the node's allocation (or the head's
    // tower), is aligned for a `Link` (a node taller than 1 is allocated 16-aligned and its
    // node pointer is a whole number of links past the start) and was initialized: zeroed
    // by the arena (a null pointer and bound 0 are valid atomics) or by `Link::empty`.
    unsafe { &*node.cast::<Link>().sub(level) }
}

/// The address of the level-`level` next pointer of `node` (for tracing; never dereferenced).
#[inline(always)]
fn slot_addr(node: *mut u8, level: usize) -> *const u8 {
    node.wrapping_sub(level * LINK)
}

/// The level-`level` next pointer of `node`.
///
/// # Safety
/// `node` is a node pointer of this module whose arena is alive for `'a`, and `level` is
/// below the node's height.
#[inline]
unsafe fn slot<'a>(node: *mut u8, level: usize) -> &'a AtomicPtr<u8> {
    if level == 0 {
        // SAFETY: next[0] is at the node pointer, pointer-aligned, inside the allocation
        // and initialized (zeroed by the arena, or null in the head).
        unsafe { &*node.cast::<AtomicPtr<u8>>() }
    } else {
        // SAFETY: per the contract (see `link`).
        unsafe { &link(node, level).next }
    }
}

/// The key prefix of an internal key: the first 8 bytes of its user key as a big-endian
/// integer, zero-padded when shorter. For the bytewise order, `key_prefix(a) > key_prefix(b)`
/// implies `a > b` (and `<` implies `<`): the first differing byte among the first 8 decides
/// both, and where a user key ends its padding 0 is below any byte of the other key, which
/// then has the shorter one as a prefix and sorts after it. Equal prefixes decide nothing.
#[inline]
fn key_prefix(ikey: &[u8]) -> u64 {
    let uk = crate::key::user_key(ikey);
    let mut b = [0u8; 8];
    let n = uk.len().min(8);
    b[..n].copy_from_slice(&uk[..n]);
    u64::from_be_bytes(b)
}

/// Asks the CPU to start loading the cache line of `node`'s entry (a hint; never faults,
/// so a null or stale pointer is harmless).
#[inline(always)]
fn prefetch(node: *mut u8) {
    prefetch_at(node.wrapping_add(ENTRY));
}

/// Asks the CPU to start loading the cache line at `p` (a hint; never faults).
#[inline(always)]
fn prefetch_at(p: *mut u8) {
    touch(trace_kind::PREFETCH, p, 1);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Records, in test builds, that a search or insert touched `len` bytes at `p` (`kind`: see
/// `trace` in the tests); nothing in other builds.
#[inline(always)]
fn touch(kind: u8, p: *const u8, len: usize) {
    #[cfg(test)]
    trace::record(kind, p as usize, len);
    #[cfg(not(test))]
    let _ = (kind, p, len);
}

/// What [`touch`] records.
mod trace_kind {
    /// A next pointer (and its bound) read at level `k`.
    pub const LINK: u8 = 0;
    /// A node's key read at level `k - KEY`.
    pub const KEY: u8 = 16;
    /// A prefetch.
    pub const PREFETCH: u8 = 32;
    /// A new node written.
    pub const NODE_WRITE: u8 = 40;
    /// A new out-of-line value written.
    pub const VALUE_WRITE: u8 = 41;
    /// The successor's back link read and swapped.
    pub const BACK_LINK: u8 = 42;
}

/// Test-only: the memory touched by searches and inserts on this thread while tracing is on
/// (the cache profile test replays it through a cache model).
#[cfg(test)]
mod trace {
    use std::cell::{Cell, RefCell};
    thread_local! {
        pub static ON: Cell<bool> = const { Cell::new(false) };
        pub static EVENTS: RefCell<Vec<(u8, usize, usize)>> = const { RefCell::new(Vec::new()) };
    }
    pub fn record(kind: u8, addr: usize, len: usize) {
        if ON.with(|o| o.get()) {
            EVENTS.with(|e| e.borrow_mut().push((kind, addr, len)));
        }
    }
}

/// Asks the CPU to start loading the cache line at `p` to write it (a hint; never faults).
#[inline(always)]
fn prefetch_for_write(p: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_ET0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The back link of `node` (null for the first node and the head).
///
/// # Safety
/// `node` is the head or a node allocated by `insert` (both have the back-link slot).
#[inline]
unsafe fn prev_slot<'a>(node: *mut u8) -> &'a AtomicPtr<u8> {
    // SAFETY: per the contract the slot is inside the allocation (for the head: its `prev`),
    // pointer-aligned and was initialized (null).
    unsafe { &*node.add(SLOT).cast::<AtomicPtr<u8>>() }
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

/// The internal key of a non-head node.
///
/// # Safety
/// `node` is a fully written, non-head node whose arena is alive for `'a`.
#[inline]
unsafe fn node_key<'a>(node: *mut u8) -> &'a [u8] {
    // SAFETY: a written entry starts one slot past the node pointer with a varint length
    // followed by that many key bytes, all inside the node's allocation.
    unsafe {
        let (len, p) = read_varint32(node.add(ENTRY));
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
        let (klen, p) = read_varint32(node.add(ENTRY));
        let (vlen, v) = read_varint32(p.add(klen));
        if vlen <= INLINE_VALUE {
            std::slice::from_raw_parts(v, vlen)
        } else {
            // The out-of-line value's address, written by `insert` (unaligned).
            let addr = ptr::read_unaligned(v.cast::<u64>());
            std::slice::from_raw_parts(u64::from_le(addr) as usize as *const u8, vlen)
        }
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

/// Writes `varint32(ikey_len) | user_key | trailer | varint32(vlen) | value or ptr` into
/// `dst`, which has exactly the encoded length; `value_at` is the address of the value's
/// out-of-line copy when it is longer than [`INLINE_VALUE`].
fn encode_entry(dst: &mut [u8], user_key: &[u8], trailer: u64, value: &[u8], value_at: usize) {
    let mut pos = write_varint32(dst, 0, (user_key.len() + 8) as u32);
    dst[pos..pos + user_key.len()].copy_from_slice(user_key);
    pos += user_key.len();
    dst[pos..pos + 8].copy_from_slice(&trailer.to_le_bytes());
    pos = write_varint32(dst, pos + 8, value.len() as u32);
    if value.len() <= INLINE_VALUE {
        dst[pos..].copy_from_slice(value);
    } else {
        dst[pos..].copy_from_slice(&(value_at as u64).to_le_bytes());
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
        let arena = ConcurrentArena::new(arena_block_size, tracker);
        let bounds = icmp.user_comparator().is_bytewise() && icmp.timestamp_size() == 0;
        SkipList {
            icmp,
            head_tower: HeadTower {
                links: std::array::from_fn(|_| Link::empty()),
                next0: AtomicPtr::new(ptr::null_mut()),
                prev: AtomicPtr::new(ptr::null_mut()),
            },
            bounds,
            max_height: AtomicUsize::new(1),
            index: AtomicPtr::new(ptr::null_mut()),
            tall: AtomicUsize::new(0),
            next_index_at: AtomicUsize::new(INDEX_FIRST_AT),
            building_index: std::sync::atomic::AtomicBool::new(false),
            splice: parking_lot::Mutex::new(Splice {
                levels: 0,
                last: ptr::null_mut(),
                prev_kp: 0,
                next_kp: u64::MAX,
                prev: [ptr::null_mut(); MAX_HEIGHT],
                next: [ptr::null_mut(); MAX_HEIGHT],
            }),
            arena,
        }
    }

    /// The head node pointer: its level-0 next pointer, after `MAX_HEIGHT - 1` links in
    /// `head_tower`, so levels 1..MAX_HEIGHT lie below it and its back link just above, as
    /// in any node. Valid while `&self` is (the list does not move while borrowed).
    #[inline]
    fn head(&self) -> *mut u8 {
        // The pointer comes from the whole array, so it may address any of its slots; the
        // slots are atomics (interior mutability), so writing through it is allowed.
        ptr::addr_of!(self.head_tower)
            .cast::<u8>()
            .wrapping_add(std::mem::offset_of!(HeadTower, next0))
            .cast_mut()
    }

    /// Asks the CPU to start loading, for writing, the lines where the next node of
    /// [`SkipList::insert`] goes: the bottom of the arena's free span (a tall node) and its
    /// top (a node of height 1 with its value, or a tall node's value). Takes the arena's
    /// lock only if it is free at once.
    pub fn prefetch_next_node(&self) {
        if let Some((start, len)) = self.arena.free_span() {
            prefetch_for_write(start as *mut u8);
            if len > 0 {
                let top = start + len;
                for back in [1, 65, 129, 193] {
                    if back <= len {
                        prefetch_for_write(top.wrapping_sub(back) as *mut u8);
                    }
                }
            }
        }
    }

    /// Asks the CPU to start loading the first node a search for `user_key` (or for any key
    /// it is a prefix of, when 8 bytes or longer) loads: with a start index, the links of
    /// the node it starts from; else, going down the head's tower, the first link whose key
    /// bound does not prove its node greater (the top link without bounds). Reads only the
    /// start index or the head's tower, as the search would.
    pub fn prefetch_search_start(&self, user_key: &[u8]) {
        let mut b = [0u8; 8];
        let n = user_key.len().min(8);
        b[..n].copy_from_slice(&user_key[..n]);
        let kp = u64::from_be_bytes(b);
        let idx = self.index.load(MemOrder::Acquire);
        if !idx.is_null() {
            // SAFETY: a published index lives as long as the list (see `StartIndex::_older`).
            let idx = unsafe { &*idx };
            if let Some(x) = idx.start_for(kp) {
                // The search reads the start node's links at the indexed level and below.
                prefetch_at(x.wrapping_sub(idx.level * LINK));
                prefetch_at(x.wrapping_sub(LINK));
                return;
            }
        }
        let head = self.head();
        for level in (0..self.max_height.load(MemOrder::Relaxed)).rev() {
            // SAFETY: the head has MAX_HEIGHT slots, and max_height <= MAX_HEIGHT.
            let next = unsafe { slot(head, level) }.load(MemOrder::Acquire);
            if next.is_null() || self.greater_by_bound(head, level, kp) {
                continue;
            }
            prefetch(next);
            if level > 0 {
                // The node's link at this level, which the search reads next.
                prefetch_at(next.wrapping_sub(level * LINK));
            }
            return;
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

    /// `bytes` zeroed bytes of the list's arena, linked to nothing: storage for the entries
    /// of another representation of the same memtable's points (the vector memtable,
    /// [`super::vector`]), so they are charged and freed with the list. `concurrent`: the
    /// caller is one of several writers at once (memory from the arena while its lock is
    /// free, else from a shard, as [`SkipList::insert_concurrently`]).
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
    /// readers and inserters; the arena's mutex serializes the allocation (for one writer at
    /// a time, which keeps the arena's layout: see [`SkipList::insert_concurrently`]).
    ///
    /// # Panics
    /// If the internal key or the value is 4 GiB or longer (the encoding's length limit).
    pub fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> bool {
        let (height, entry_len) = Self::node_shape(user_key, value);
        let (node, value_at) =
            self.arena.with_main(|a| Self::allocate_node(a, height, entry_len, value.len()));
        self.fill_and_link(node, value_at, height, entry_len, user_key, trailer, value, true)
    }

    /// As [`SkipList::insert`], for writers inserting into the list at the same time
    /// (RocksDB's `InsertConcurrently`): memory comes from the arena itself while its lock is
    /// found free, then (once writers met there) from a shard of the arena, so the writers
    /// share no lock in the common case.
    pub fn insert_concurrently(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> bool {
        let (height, entry_len) = Self::node_shape(user_key, value);
        let vlen = value.len();
        let (node, value_at) = match self.arena.try_main(|a| Self::allocate_node(a, height, entry_len, vlen))
        {
            Some(r) => r,
            None => self.arena.with_shard(|a| Self::allocate_node(a, height, entry_len, vlen)),
        };
        self.fill_and_link(node, value_at, height, entry_len, user_key, trailer, value, false)
    }

    /// A new node's height and encoded entry length.
    fn node_shape(user_key: &[u8], value: &[u8]) -> (usize, usize) {
        let ikey_len = user_key.len() + 8;
        assert!(
            u32::try_from(ikey_len).is_ok() && u32::try_from(value.len()).is_ok(),
            "memtable entry too large: key {} bytes, value {} bytes",
            user_key.len(),
            value.len()
        );
        let inline = value.len() <= INLINE_VALUE;
        let entry_len = varint_length(ikey_len as u64)
            + ikey_len
            + varint_length(value.len() as u64)
            + if inline { value.len() } else { 8 };
        (random_height(), entry_len)
    }

    /// Allocates a node of `height` with an entry of `entry_len` bytes (and room for an
    /// out-of-line value of `vlen` bytes): returns the node pointer and the value's address
    /// (0 when it is inline). See the module comment for where each goes.
    fn allocate_node<B: Bump>(b: &mut B, height: usize, entry_len: usize, vlen: usize) -> (*mut u8, usize) {
        let inline = vlen <= INLINE_VALUE;
        let node_len = (height - 1) * LINK + ENTRY + entry_len;
        let align = if height > 1 { std::mem::align_of::<Link>() } else { SLOT };
        let (base, value_at) = if height == 1 {
            // At the top, the out-of-line value right after the node.
            let out = if inline { 0 } else { vlen };
            let base = b.top(node_len + out, align);
            (base, if inline { 0 } else { base.as_ptr() as usize + node_len })
        } else {
            let value_at = if inline { 0 } else { b.top(vlen, 1).as_ptr() as usize };
            (b.bottom(node_len, align), value_at)
        };
        // SAFETY: the allocation holds `height - 1` links then the rest; the node pointer
        // follows the links.
        (unsafe { base.as_ptr().add((height - 1) * LINK) }, value_at)
    }

    /// Writes the entry (and the out-of-line value) of a freshly allocated node, then links
    /// it into every level below its height with compare-and-swap (RocksDB's
    /// `InlineSkipList::Insert<UseCAS = true>`): a failed swap means another inserter linked
    /// a node at that spot, so the splice of that level is searched again from its
    /// predecessor, which stays before the key (nodes are never removed).
    ///
    /// `use_splice`: start from the splice of the last single-writer insert when it holds
    /// the key's place (see [`Splice`]), and keep it up to date.
    #[allow(clippy::too_many_arguments)]
    fn fill_and_link(
        &self,
        node: *mut u8,
        value_at: usize,
        height: usize,
        entry_len: usize,
        user_key: &[u8],
        trailer: u64,
        value: &[u8],
        use_splice: bool,
    ) -> bool {
        if value.len() > INLINE_VALUE {
            // SAFETY: `value_at` is a fresh arena allocation of `value.len()` bytes that
            // nothing else references; it is published only through the node linked below.
            unsafe { ptr::copy_nonoverlapping(value.as_ptr(), value_at as *mut u8, value.len()) };
        }
        {
            // SAFETY: the entry region lies inside the fresh, zeroed allocation and no other
            // thread can reach it before the node is linked below, so this unique borrow
            // (which ends before linking) aliases nothing.
            let entry = unsafe { std::slice::from_raw_parts_mut(node.add(ENTRY), entry_len) };
            encode_entry(entry, user_key, trailer, value, value_at);
        }
        // SAFETY: the node's entry is fully written and the arena outlives this call.
        let key = unsafe { node_key(node) };
        touch(
            trace_kind::NODE_WRITE,
            node.wrapping_sub((height - 1) * LINK),
            (height - 1) * LINK + ENTRY + entry_len,
        );
        if value.len() > INLINE_VALUE {
            touch(trace_kind::VALUE_WRITE, value_at as *const u8, value.len());
        }

        // Raise the list's height first: readers that see the new height before the head's
        // new links find null there and descend.
        let mut max = self.max_height.load(MemOrder::Relaxed);
        while height > max {
            match self.max_height.compare_exchange_weak(max, height, MemOrder::Relaxed, MemOrder::Relaxed) {
                Ok(_) => break,
                Err(m) => max = m,
            }
        }
        let head = self.head();
        let mut prev = [head; MAX_HEIGHT];
        let mut next = [ptr::null_mut(); MAX_HEIGHT];
        let kp = key_prefix(key);
        let mut splice = if use_splice { self.splice.try_lock() } else { None };
        let from_splice = splice.as_deref().is_some_and(|s| self.splice_holds(s, key, kp, height));
        // The levels of `prev`/`next` that hold the key's splice (at least `height`).
        let filled;
        let found = if from_splice {
            let s = splice.as_deref().map_or(0, |s| {
                for level in 0..s.levels {
                    prev[level] = if s.prev[level].is_null() { head } else { s.prev[level] };
                    next[level] = s.next[level];
                }
                s.levels
            });
            filled = s;
            next[0]
        } else {
            // Levels at or above the height searched keep (head, null).
            let mut searched = 0;
            let found = self.find_greater_or_equal(key, Some((&mut prev, &mut next, &mut searched)), height);
            filled = searched;
            found
        };
        if self.is_equal(found, key) {
            return false; // the allocation is simply left unused
        }
        for level in 0..height {
            loop {
                // SAFETY: `node` is unpublished at this level and has `height` links (and a
                // back link); `prev[level]` is the head or a node reached at `level`, so it has
                // a link there. The Release swap publishes the node's entry, its link at this
                // level and (at level 0) its back link to Acquire readers.
                let linked = unsafe {
                    if level == 0 {
                        // The first node's back link is null, not the head (see `head_tower`).
                        let back = if prev[0] == head { ptr::null_mut() } else { prev[0] };
                        prev_slot(node).store(back, MemOrder::Relaxed);
                    }
                    slot(node, level).store(next[level], MemOrder::Relaxed);
                    if level > 0 && self.bounds {
                        let (own, pred) = (link(node, level), link(prev[level], level));
                        // The predecessor's bound, read after `next[level]` was loaded with
                        // Acquire, is at most that node's prefix (see the module comment): it
                        // becomes ours. Then the predecessor's is lowered to our prefix before
                        // the swap can publish us there.
                        own.bound.store(pred.bound.load(MemOrder::Relaxed), MemOrder::Relaxed);
                        pred.bound.fetch_min(kp, MemOrder::Relaxed);
                    }
                    slot(prev[level], level)
                        .compare_exchange(next[level], node, MemOrder::Release, MemOrder::Relaxed)
                        .is_ok()
                };
                if linked {
                    break;
                }
                let (p, n) = self.find_splice_for_level(key, prev[level], level);
                // Nothing is linked yet at level 0: a key equal to ours that another inserter
                // linked first makes this insert a duplicate.
                if level == 0 && self.is_equal(n, key) {
                    return false;
                }
                prev[level] = p;
                next[level] = n;
            }
        }
        self.fix_back_link(node);
        if let Some(s) = splice.as_deref_mut() {
            // Keep the full splice only for inserts that follow the previous one (see
            // `Splice`): `prev[0]` and `next[0]` are this node's neighbours as linked.
            let descending = !s.last.is_null() && next[0] == s.last;
            let follows = from_splice || descending || (!s.last.is_null() && prev[0] == s.last);
            if follows {
                // The next key is expected on the same side of this node as this one was of
                // the previous: after it (the splice brackets the node and its successor) or,
                // in a descending run, before it (its predecessor and the node).
                for level in 0..filled {
                    let (p, n) = match (level < height, descending) {
                        (true, false) => (node, next[level]),
                        (true, true) => (prev[level], node),
                        (false, _) => (prev[level], next[level]),
                    };
                    s.prev[level] = if p == head { ptr::null_mut() } else { p };
                    s.next[level] = n;
                }
                s.levels = filled;
                if self.bounds {
                    let prefix = |n: *mut u8, none: u64| {
                        if n.is_null() || n == head {
                            none
                        } else {
                            // SAFETY: a non-null link points at a published, fully written node.
                            key_prefix(unsafe { node_key(n) })
                        }
                    };
                    (s.prev_kp, s.next_kp) =
                        if descending { (prefix(prev[0], 0), kp) } else { (kp, prefix(next[0], u64::MAX)) };
                }
            } else {
                s.levels = 0;
            }
            s.last = node;
        }
        if height >= INDEX_MIN_HEIGHT && self.bounds {
            let tall = self.tall.fetch_add(1, MemOrder::Relaxed) + 1;
            if tall >= self.next_index_at.load(MemOrder::Relaxed) {
                self.build_index(tall);
            }
        }
        true
    }

    /// Builds and publishes a start index for a list with `tall` nodes of height
    /// [`INDEX_MIN_HEIGHT`] or more, unless another inserter is building one.
    #[cold]
    fn build_index(&self, tall: usize) {
        if self.building_index.swap(true, MemOrder::Acquire) {
            return;
        }
        if tall >= self.next_index_at.load(MemOrder::Relaxed) {
            self.next_index_at.store(tall * 2, MemOrder::Relaxed);
            // About 2^(h-1) nodes in all per node of height h: index the lowest level with
            // at most about INDEX_TARGET_LEN nodes, and at least INDEX_MIN_HEIGHT - 1.
            let nodes_est = tall << (INDEX_MIN_HEIGHT - 1);
            let mut level = INDEX_MIN_HEIGHT - 1;
            while level < MAX_HEIGHT - 1 && nodes_est >> level > INDEX_TARGET_LEN {
                level += 1;
            }
            let (mut prefixes, mut nodes) = (Vec::new(), Vec::new());
            let mut x = self.head();
            loop {
                // SAFETY: `x` is the head or a node linked at `level`, so it has a slot there;
                // a non-null link points at a published, fully written node.
                let n = unsafe { slot(x, level) }.load(MemOrder::Acquire);
                if n.is_null() {
                    break;
                }
                // SAFETY: as above.
                prefixes.push(key_prefix(unsafe { node_key(n) }));
                nodes.push(n);
                x = n;
            }
            let older = self.index.load(MemOrder::Acquire);
            let idx = Box::new(StartIndex {
                level,
                prefixes: prefixes.into_boxed_slice(),
                nodes: nodes.into_boxed_slice(),
                // SAFETY: `older` came from `Box::into_raw` below (or is null); only this
                // builder (holding `building_index`) replaces it, so ownership moves here once.
                _older: (!older.is_null()).then(|| unsafe { Box::from_raw(older) }),
            });
            self.index.store(Box::into_raw(idx), MemOrder::Release);
        }
        self.building_index.store(false, MemOrder::Release);
    }

    /// True when `splice` holds the place of `key` (prefix `kp`) for a node of `height`:
    /// it has that many levels, `key` is after `prev[0]` and not after `next[0]`, and
    /// `prev[0]` still links to `next[0]` (see [`Splice`]).
    #[inline]
    fn splice_holds(&self, s: &Splice, key: &[u8], kp: u64, height: usize) -> bool {
        if s.levels < height || kp < s.prev_kp || kp > s.next_kp {
            return false;
        }
        let (p, n) = (s.prev[0], s.next[0]);
        let p = if p.is_null() { self.head() } else { p };
        // SAFETY: `p` is the head or a node linked at level 0 of this list; non-null
        // links point at published, fully written nodes of its arena, alive with `&self`.
        unsafe {
            slot(p, 0).load(MemOrder::Acquire) == n
                && (p == self.head() || self.icmp.compare_uncounted(node_key(p), key) == Ordering::Less)
                && (n.is_null() || self.icmp.compare_uncounted(node_key(n), key) != Ordering::Less)
        }
    }

    /// True when the bound of `x`'s link at `level` shows that the node it links (if any)
    /// is greater than a key whose prefix is `kp`; always false at level 0 and when bounds
    /// are not kept. Call it after the `Acquire` load of the next pointer it is about.
    #[inline]
    fn greater_by_bound(&self, x: *mut u8, level: usize, kp: u64) -> bool {
        // SAFETY: `x` is the head or a node reached at a level >= `level` (callers' contract),
        // so it has a link at `level` when `level >= 1`.
        level > 0 && self.bounds && unsafe { link(x, level) }.bound.load(MemOrder::Relaxed) > kp
    }

    /// True when `n` is a node (not null) whose key equals `key`.
    fn is_equal(&self, n: *mut u8, key: &[u8]) -> bool {
        // SAFETY: a non-null link points at a published, fully written node.
        !n.is_null() && self.icmp.compare(unsafe { node_key(n) }, key) == Ordering::Equal
    }

    /// Points the back link of `node`'s successor at `node`, unless a node inserted between
    /// them since has taken that job.
    ///
    /// A back link only ever moves forward, to a later predecessor: it is swapped from the
    /// value read to `node` only while `node` is still the successor's predecessor (checked
    /// after reading it), and a successor's predecessors come one after the other in key
    /// order, as nodes are inserted between the last one and it. So a swap cannot undo a
    /// later one (no ABA), and once every inserter has returned each back link names its
    /// node's predecessor. Until then a back link may be stale: it names an earlier node,
    /// and a reader stepping back skips the nodes in between — nodes still being inserted,
    /// whose sequence numbers are not yet published.
    fn fix_back_link(&self, node: *mut u8) {
        loop {
            // SAFETY: `node` is linked at level 0; a non-null successor is a linked node with
            // a back-link slot.
            unsafe {
                let succ = slot(node, 0).load(MemOrder::Acquire);
                if succ.is_null() {
                    return;
                }
                let back = prev_slot(succ).load(MemOrder::Acquire);
                touch(trace_kind::BACK_LINK, succ.wrapping_add(SLOT), SLOT);
                if back == node || slot(node, 0).load(MemOrder::Acquire) != succ {
                    return;
                }
                if prev_slot(succ).compare_exchange(back, node, MemOrder::Release, MemOrder::Relaxed).is_ok()
                {
                    return;
                }
            }
        }
    }

    /// At `level`, from `start` (the head or a node before `key` linked at `level`): the last
    /// node before `key` and the one after it (null at the end).
    fn find_splice_for_level(&self, key: &[u8], start: *mut u8, level: usize) -> (*mut u8, *mut u8) {
        let mut x = start;
        loop {
            // SAFETY: `x` is the head or a node linked at `level`, so it has a slot there.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            // SAFETY: a non-null link points at a published, fully written node.
            if next.is_null() || self.icmp.compare_uncounted(unsafe { node_key(next) }, key) != Ordering::Less
            {
                return (x, next);
            }
            x = next;
        }
    }

    /// True when an entry with internal key equal to `ikey` is present.
    pub fn contains(&self, ikey: &[u8]) -> bool {
        self.seek_entry(ikey).is_some_and(|(k, _)| self.icmp.compare(k, ikey) == Ordering::Equal)
    }

    /// The (internal key, value) of the first entry with key >= `target`.
    pub fn seek_entry(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = self.find_greater_or_equal(target, None, 0);
        // SAFETY: a non-null result is a linked node; the list (and arena) outlive `&self`.
        (!n.is_null()).then(|| unsafe { (node_key(n), node_value(n)) })
    }

    /// Overwrites, in place, the value of the first entry with key >= `target` with `value`
    /// (RocksDB's `MemTable::Update`): when `value` is no longer than the entry's value and
    /// fits the entry's value slot, and `accept(ikey)` (given the entry's internal key)
    /// returns a guard, the new length and bytes are written while the guard is held.
    /// Returns whether it wrote. The key and links are never touched.
    ///
    /// The slot keeps its shape: an inline value (at most [`INLINE_VALUE`] bytes) is
    /// rewritten inline; an out-of-line value longer than that is rewritten at its
    /// out-of-line address (length and pointer rewritten in the node, the varint possibly
    /// shorter); an out-of-line value replaced by one short enough to be inline is written
    /// inline only when it fits the node's `varint | pointer` bytes, else this returns false
    /// (the caller appends a new entry instead).
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
        let n = self.find_greater_or_equal(target, None, 0);
        if n.is_null() {
            return false;
        }
        // SAFETY: `n` is a linked, written node of this live list. Its value's varint and
        // bytes are only written by this list's single writer (the caller, per the contract).
        unsafe {
            let (klen, p) = read_varint32(n.add(ENTRY));
            let vpos = p.add(klen).cast_mut();
            let (old_len, v) = read_varint32(vpos);
            let varint_bytes = v.offset_from(vpos) as usize;
            let new_len = value.len();
            if new_len > old_len {
                return false;
            }
            let mut varint = [0u8; 5];
            let new_varint = write_varint32(&mut varint, 0, new_len as u32);
            let fits =
                old_len <= INLINE_VALUE || new_len > INLINE_VALUE || new_varint + new_len <= varint_bytes + 8;
            if !fits {
                return false;
            }
            let Some(_guard) = accept(node_key(n)) else { return false };
            if new_len > INLINE_VALUE {
                // Both out of line: new bytes at the old value's address, then the length
                // and the same pointer (the varint may have shrunk, moving the pointer).
                let addr = u64::from_le(ptr::read_unaligned(v.cast::<u64>())) as usize as *mut u8;
                ptr::copy_nonoverlapping(value.as_ptr(), addr, new_len);
                ptr::copy_nonoverlapping(varint.as_ptr(), vpos, new_varint);
                ptr::write_unaligned(vpos.add(new_varint).cast::<u64>(), (addr as u64).to_le());
            } else {
                ptr::copy_nonoverlapping(varint.as_ptr(), vpos, new_varint);
                ptr::copy_nonoverlapping(value.as_ptr(), vpos.add(new_varint), new_len);
            }
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

    /// The first node with key >= `key` (null if none), filling the splice, if asked for:
    /// `prev[level]` the last node before it and `next[level]` the one after at each level
    /// below the current height — or only below `height` (the inserted node's), where the
    /// search starts from the start index: levels from `height` up then keep what the
    /// caller put there. The third member of the splice is set to the number of levels
    /// filled (the level the search started at, plus one).
    #[allow(clippy::type_complexity)]
    fn find_greater_or_equal(
        &self,
        key: &[u8],
        mut splice: Option<(&mut [*mut u8; MAX_HEIGHT], &mut [*mut u8; MAX_HEIGHT], &mut usize)>,
        height: usize,
    ) -> *mut u8 {
        let mut x = self.head();
        let mut level = self.max_height.load(MemOrder::Relaxed) - 1;
        let kp = key_prefix(key);
        let idx = self.index.load(MemOrder::Acquire);
        if !idx.is_null() {
            // SAFETY: a published index lives as long as the list (see `StartIndex::_older`).
            let idx = unsafe { &*idx };
            if height <= idx.level + 1 && level > idx.level {
                // The listed node, if any, is before `key` (its prefix is smaller) and linked
                // at `idx.level`; the head is before everything and linked at every level.
                x = idx.start_for(kp).unwrap_or(x);
                level = idx.level;
            }
        }
        if let Some((_, _, filled)) = splice.as_mut() {
            **filled = level + 1;
        }
        // A node already found >= key at a higher level need not be compared again.
        let mut known_bigger: *mut u8 = ptr::null_mut();
        // The perf context's user_key_comparison_count, added once per search.
        let mut comparisons = 0u64;
        loop {
            // SAFETY: `x` is the head (MAX_HEIGHT links) or a node reached through a link
            // at a level >= `level`, so it has a link at `level`.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            touch(trace_kind::LINK + level as u8, slot_addr(x, level), if level > 0 { LINK } else { SLOT });
            if level > 0 {
                // If `next` turns out >= key, the search goes on at `x`'s next node one level
                // down: start loading that node now, so its cache miss overlaps `next`'s
                // (the walk is a chain of dependent misses in a memtable out of cache).
                // SAFETY: `x` has a slot at `level`, so also at `level - 1`.
                let down = unsafe { slot(x, level - 1) }.load(MemOrder::Relaxed);
                if down != next {
                    prefetch(down);
                }
            }
            let mut less = false;
            // A bound above the key's prefix: `next` is greater, decided without loading it.
            if !next.is_null() && next != known_bigger && !self.greater_by_bound(x, level, kp) {
                comparisons += 1;
                // SAFETY: a non-null link points at a published, fully written node.
                let nk = unsafe { node_key(next) };
                touch(trace_kind::KEY + level as u8, next.wrapping_add(ENTRY), nk.len() + 1);
                less = self.icmp.compare_uncounted(nk, key) == Ordering::Less;
            }
            if less {
                x = next;
            } else {
                if let Some((p, n, _)) = splice.as_mut() {
                    p[level] = x;
                    n[level] = next;
                }
                if level == 0 {
                    crate::perf::count(crate::perf::Field::UserKeyComparisonCount, comparisons);
                    return next;
                }
                known_bigger = next;
                level -= 1;
            }
        }
    }

    /// The last node whose key stands in `keep` relation to `key` (every node when `key`
    /// is None), or the head when there is none.
    fn find_last_where(&self, key: Option<&[u8]>, keep: fn(Ordering) -> bool) -> *mut u8 {
        let mut x = self.head();
        let mut level = self.max_height.load(MemOrder::Relaxed) - 1;
        loop {
            // SAFETY: as in `find_greater_or_equal`.
            let next = unsafe { slot(x, level) }.load(MemOrder::Acquire);
            // SAFETY: a non-null link points at a published, fully written node.
            let advance =
                !next.is_null() && key.is_none_or(|k| keep(self.icmp.compare(unsafe { node_key(next) }, k)));
            if advance {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
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
        let n = self.list.find_last_where(None, |_| true);
        self.set_from_search(n);
    }

    fn seek(&mut self, target: &[u8]) {
        self.node = self.list.find_greater_or_equal(target, None, 0);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let n = self.list.find_last_where(Some(target), |o| o != Ordering::Greater);
        self.set_from_search(n);
    }

    #[inline]
    fn next(&mut self) {
        assert!(self.valid(), "next() on an invalid skiplist iterator");
        // SAFETY: a valid iterator is on a linked node of the live list; level 0 exists.
        self.node = unsafe { slot(self.node, 0) }.load(MemOrder::Acquire);
    }

    fn prev(&mut self) {
        assert!(self.valid(), "prev() on an invalid skiplist iterator");
        // SAFETY: a valid iterator is on a linked node of the live list; its back link is the
        // head or a linked node (set before this node was published).
        let n = unsafe { prev_slot(self.node) }.load(MemOrder::Acquire);
        self.set_from_search(if n.is_null() { self.list.head() } else { n });
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

    /// A value lies in the arena (inline in its node or out of line), which is never
    /// freed or rewritten while the list lives, and the iterator holds the list.
    #[inline]
    fn value_pinned(&self) -> bool {
        true
    }
    #[inline]
    fn value_if_pinned(&self) -> Option<&[u8]> {
        Some(self.value())
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

    const TYPES: [ValueType; 4] =
        [ValueType::Value, ValueType::Deletion, ValueType::Merge, ValueType::SingleDeletion];

    fn random_user_key(rng: &mut SmallRng) -> Vec<u8> {
        let len = rng.gen_range(0..5);
        (0..len).map(|_| b"abcd\x00\xff"[rng.gen_range(0..6)]).collect()
    }

    /// User keys that stress the key-prefix bounds: empty keys, keys shorter than, as long
    /// as and longer than the 8-byte prefix, sharing all of it, with 0x00 and 0xff bytes
    /// (a zero byte against the padding of a shorter key, 0xff against the largest prefix).
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

    /// Checks every link's bound against the key it links: at most its prefix (always), and
    /// equal to it when `exact` (a single writer).
    fn check_bounds(list: &SkipList, exact: bool) {
        assert!(list.bounds);
        for level in 1..MAX_HEIGHT {
            let mut x = list.head();
            loop {
                // SAFETY: `x` is the head or a node reached at `level`; the list is alive.
                let l = unsafe { link(x, level) };
                let next = l.next.load(MemOrder::Acquire);
                if next.is_null() {
                    break;
                }
                // SAFETY: a linked node.
                let p = key_prefix(unsafe { node_key(next) });
                let b = l.bound.load(MemOrder::Relaxed);
                assert!(b <= p, "bound {b:#x} above the linked key's prefix {p:#x} at level {level}");
                if exact {
                    assert_eq!(b, p, "single writer: exact bound at level {level}");
                }
                x = next;
            }
        }
    }

    /// The key prefix never contradicts the bytewise internal key order: a greater prefix
    /// means a greater key, a smaller one a smaller key, and equal keys have equal prefixes
    /// (all pairs of random and adversarial keys, with random trailers).
    #[test]
    fn key_prefix_agrees_with_bytewise_order() {
        let mut rng = SmallRng::seed_from_u64(7);
        let icmp = bytewise_internal_comparator();
        let mut keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0; 8],
            vec![0; 9],
            vec![0xff; 7],
            vec![0xff; 8],
            vec![0xff; 9],
            b"abcdefgh".to_vec(),
            b"abcdefgh\x00".to_vec(),
            b"abcdefg".to_vec(),
            b"abcdefg\x00".to_vec(),
            b"abcdefgi".to_vec(),
        ];
        for _ in 0..300 {
            keys.push(adversarial_user_key(&mut rng));
            keys.push(random_user_key(&mut rng));
            let len = rng.gen_range(0..20);
            keys.push((0..len).map(|_| rng.gen()).collect());
        }
        let ikeys: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| {
                [&k[..], &pack_seq_and_type(rng.gen_range(0..3), TYPES[rng.gen_range(0..4)]).to_le_bytes()]
                    .concat()
            })
            .collect();
        let mut decided = 0;
        for a in &ikeys {
            for b in &ikeys {
                let (pa, pb) = (key_prefix(a), key_prefix(b));
                let full = icmp.compare(a, b);
                match pa.cmp(&pb) {
                    Ordering::Equal => {}
                    o => {
                        decided += 1;
                        assert_eq!(o, full, "prefixes {pa:#x} {pb:#x} of {a:?} {b:?}");
                    }
                }
                if full == Ordering::Equal {
                    assert_eq!(pa, pb);
                }
            }
        }
        assert!(decided > ikeys.len() * ikeys.len() / 2, "the prefix decides most pairs: {decided}");
    }

    /// Only the bytewise comparator keeps bounds: a user comparator, even one of the same
    /// order, and the reverse comparator compare every key in full.
    #[test]
    fn bounds_only_for_bytewise() {
        assert!(SkipList::new(bytewise_internal_comparator(), 4096).bounds);
        let rev = InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator));
        assert!(!SkipList::new(rev, 4096).bounds);
        let f =
            crate::comparator::FnComparator::new("same-as-bytewise", Box::new(|a: &[u8], b: &[u8]| a.cmp(b)));
        assert!(!SkipList::new(InternalKeyComparator::new(Arc::new(f)), 4096).bounds);
    }

    /// The start index: built once the list grows, rebuilt as it doubles (keeping the one
    /// it replaced), sorted, with each node's exact prefix, and listing every node linked
    /// at its level when built; none without bounds. Searches through it are checked
    /// against a model in `matches_model_*` (a start past the key fails those).
    #[test]
    fn start_index_lists_a_level_in_order() {
        let list = SkipList::new(bytewise_internal_comparator(), 4096);
        let mut rng = SmallRng::seed_from_u64(9);
        let mut levels = Vec::new();
        for i in 0..20_000u64 {
            let uk = random_user_key(&mut rng);
            list.insert(&uk, pack_seq_and_type(i, ValueType::Value), b"v");
            let idx = list.index.load(MemOrder::Acquire);
            if !idx.is_null() {
                // SAFETY: a published index lives as long as the list.
                let idx = unsafe { &*idx };
                if levels.last().map(|&(_, n)| n) != Some(idx.nodes.len()) {
                    levels.push((idx.level, idx.nodes.len()));
                }
            }
        }
        assert!(levels.len() >= 5, "rebuilt as the list grew: {levels:?}");
        assert!(
            levels.iter().all(|&(l, n)| l + 1 >= INDEX_MIN_HEIGHT && n <= 2 * INDEX_TARGET_LEN),
            "{levels:?}"
        );
        // Each rebuild lists more nodes, unless it moved up a level (heights are random).
        assert!(
            levels.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)),
            "{levels:?}"
        );
        // SAFETY: as above.
        let idx = unsafe { &*list.index.load(MemOrder::Acquire) };
        assert!(idx._older.is_some());
        let mut at_level = Vec::new();
        let mut x = list.head();
        loop {
            // SAFETY: the head or a node linked at `idx.level`.
            let n = unsafe { slot(x, idx.level) }.load(MemOrder::Acquire);
            if n.is_null() {
                break;
            }
            at_level.push(n);
            x = n;
        }
        // Inserts since the last build about double the level at most: every listed node is
        // still there in order, with its own prefix.
        let mut j = 0;
        for (&n, &p) in idx.nodes.iter().zip(idx.prefixes.iter()) {
            // SAFETY: listed nodes are linked nodes of this list.
            assert_eq!(p, key_prefix(unsafe { node_key(n) }));
            while at_level[j] != n {
                j += 1;
            }
        }
        assert!(idx.prefixes.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            at_level.len() < 3 * idx.nodes.len() + 16,
            "{} at the level, {} listed",
            at_level.len(),
            idx.nodes.len()
        );

        let rev = SkipList::new(InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator)), 4096);
        for i in 0..2000u64 {
            rev.insert(&random_user_key(&mut rng), pack_seq_and_type(i, ValueType::Value), b"v");
        }
        assert!(rev.index.load(MemOrder::Acquire).is_null());
    }

    /// Inserts random entries into a list and a BTreeMap keyed by `model_key`, which must
    /// order like `icmp`; then checks iteration and seeks against the model.
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
            // Lengths on both sides of INLINE_VALUE, and some past a quarter block (their
            // own arena block).
            let len = [0, 5, INLINE_VALUE, INLINE_VALUE + 1, 100, 2000][i % 6];
            let value: Vec<u8> = format!("v{i}-").bytes().cycle().take(len).collect();
            let ikey = [&uk[..], &tr.to_le_bytes()].concat();
            let fresh = !model.contains_key(&model_key(&uk, tr));
            assert_eq!(list.insert(&uk, tr, &value), fresh, "duplicate detection");
            if fresh {
                model.insert(model_key(&uk, tr), (ikey, value));
            }
        }
        let entries: Vec<_> = model.values().cloned().collect();
        if list.bounds {
            check_bounds(&list, true);
        }

        // Forward and backward scans.
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

        // Seeks at every key and at random probes between keys.
        let mut probes: Vec<(Vec<u8>, u64)> =
            entries.iter().map(|(k, _)| (k[..k.len() - 8].to_vec(), crate::key::trailer(k))).collect();
        for _ in 0..3000 {
            let seq = [0, 1, 20, 39, 40, 1000, crate::key::MAX_SEQUENCE_NUMBER][rng.gen_range(0..7)];
            probes.push((random_user_key(&mut rng), pack_seq_and_type(seq, ValueType::RangeDeletion)));
            probes.push((random_user_key(&mut rng), pack_seq_and_type(seq, ValueType::Deletion)));
        }
        for (uk, tr) in probes {
            let target = [&uk[..], &tr.to_le_bytes()].concat();
            let mk = model_key(&uk, tr);
            it.seek(&target);
            let want = model.range(mk.clone()..).next().map(|(_, e)| e);
            assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())).as_ref(), want);
            if it.valid() {
                it.prev();
                let before = model.range(..mk.clone()).next_back().map(|(_, e)| e);
                assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())).as_ref(), before);
            }
            it.seek_for_prev(&target);
            let want = model.range(..=mk.clone()).next_back().map(|(_, e)| e);
            assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())).as_ref(), want);
            if it.valid() {
                it.next();
                let after = model.range((std::ops::Bound::Excluded(mk), std::ops::Bound::Unbounded)).next();
                assert_eq!(
                    it.valid().then(|| (it.key().to_vec(), it.value().to_vec())).as_ref(),
                    after.map(|e| e.1)
                );
            }
        }
    }

    #[test]
    fn matches_model_bytewise() {
        check_against_model(bytewise_internal_comparator(), |uk, tr| (uk.to_vec(), Reverse(tr)));
    }

    /// Keys sharing the whole 8-byte prefix, shorter than it, empty, with 0x00 and 0xff:
    /// the bounds must never send a search the wrong way.
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

    /// Many threads insert at once (most through `insert_concurrently`, one through
    /// `insert`), some racing on the same keys; then the list must be in order forwards,
    /// its back links must give the same order backwards, and every entry must be found.
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
        assert!(backward == forward, "back links give the forward order reversed");
        for i in 0..THREADS * PER_THREAD {
            let ikey = make_internal_key(&key(i), i + 1, ValueType::Value);
            let (k, v) = list.seek_entry(&ikey).expect("entry present");
            assert_eq!((k, v), (&ikey[..], &value(i)[..]));
        }
        check_bounds(&list, false);
        let used = list.memory_usage();
        assert!(used > (THREADS * PER_THREAD * 30) as usize && used < 8 << 20, "usage {used}");
    }

    /// The head lives in the list itself: a list filled, then moved (into an `Arc`, as a
    /// memtable is), must keep no pointer to where it was. The first node's back link is
    /// null, so stepping back from it ends the iteration.
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
        assert!(!it.valid(), "the first node's back link ends the iteration");
    }

    /// A set-associative LRU cache of 64-byte lines (16 ways), to replay traces through.
    struct CacheModel {
        sets: usize,
        tags: Vec<usize>,
        stamps: Vec<u64>,
        clock: u64,
    }

    impl CacheModel {
        fn new(bytes: usize) -> CacheModel {
            let sets = bytes / 64 / 16;
            CacheModel { sets, tags: vec![usize::MAX; sets * 16], stamps: vec![0; sets * 16], clock: 0 }
        }

        /// Touches `line`; true on a hit.
        fn access(&mut self, line: usize) -> bool {
            self.clock += 1;
            let set = (line ^ (line >> 13)) % self.sets * 16;
            let ways = set..set + 16;
            if let Some(w) = ways.clone().find(|&w| self.tags[w] == line) {
                self.stamps[w] = self.clock;
                return true;
            }
            let victim = ways.min_by_key(|&w| self.stamps[w]).unwrap_or(set);
            self.tags[victim] = line;
            self.stamps[victim] = self.clock;
            false
        }
    }

    /// With the bounds deciding the node that overshoots each level, an insert loads only the
    /// nodes it moves to, and the start index skips the levels above 3: 4.3 per insert into a
    /// list of 1000 to 2000 db_bench-shaped keys (without the index, from the head: 10.8 with
    /// branching factor 2, 13.8 with 4).
    #[test]
    fn insert_search_loads_few_nodes() {
        let list = SkipList::new(bytewise_internal_comparator(), 128 << 10);
        let mut rng = SmallRng::seed_from_u64(7);
        let (mut nodes, mut counted) = (0usize, 0usize);
        trace::ON.with(|o| o.set(true));
        for i in 0..2000u64 {
            let uk = [rng.gen_range(0..1_000_000u64).to_be_bytes(), *b"00000000"].concat();
            list.insert(&uk, pack_seq_and_type(i + 1, ValueType::Value), b"v");
            let events = trace::EVENTS.with(|e| std::mem::take(&mut *e.borrow_mut()));
            if i >= 1000 {
                nodes +=
                    events.iter().filter(|e| (trace_kind::KEY..trace_kind::PREFETCH).contains(&e.0)).count();
                counted += 1;
            }
        }
        trace::ON.with(|o| o.set(false));
        let per = nodes as f64 / counted as f64;
        assert!((2.0..6.0).contains(&per), "{per} nodes loaded per insert into 1000-2000 entries");
    }

    /// Inserts `keys` (user keys, each at sequence `i + 1`) in the order given with
    /// `insert`, then checks the list against the sorted keys: forwards, backwards (back
    /// links), a seek at each key, and the key bounds.
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
        if list.bounds {
            check_bounds(&list, true);
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
        assert!(backward == forward, "back links give the forward order reversed");
        check_bounds(&list, false);
    }

    /// With the splice of the last insert, keys in increasing or decreasing order are
    /// linked without a search: almost no node is loaded by a search per insert (against
    /// 2 to 6 for random keys, `insert_search_loads_few_nodes`).
    #[test]
    fn sequential_inserts_search_no_nodes() {
        for descending in [false, true] {
            let list = SkipList::new(bytewise_internal_comparator(), 128 << 10);
            let (mut nodes, mut counted) = (0usize, 0usize);
            trace::ON.with(|o| o.set(true));
            for i in 0..4000u64 {
                let k = if descending { 1_000_000 - i } else { i };
                assert!(list.insert(&seq_key(k), pack_seq_and_type(i + 1, ValueType::Value), b"v"));
                let events = trace::EVENTS.with(|e| std::mem::take(&mut *e.borrow_mut()));
                if i >= 1000 {
                    nodes += events
                        .iter()
                        .filter(|e| (trace_kind::KEY..trace_kind::PREFETCH).contains(&e.0))
                        .count();
                    counted += 1;
                }
            }
            trace::ON.with(|o| o.set(false));
            let per = nodes as f64 / counted as f64;
            assert!(per < 0.2, "{per} nodes loaded per insert (descending: {descending})");
        }
    }

    /// The memory an insert touches in a thousand lists filled at random as
    /// `db_bench --num_column_families=1000 --benchmarks=fillrandom` fills them (16-byte
    /// keys: a random big-endian u64 then "00000000"; 100-byte values): cache lines per
    /// insert and their misses in a 2 MiB and a 32 MiB LRU cache model, by level, over the
    /// second half of the inserts. A profile, not a check: run it by hand with
    /// `cargo test --release -p shale --lib cache_profile -- --ignored --nocapture`
    /// (PROFILE_LISTS, PROFILE_PER_LIST: the shape).
    #[test]
    #[ignore]
    fn cache_profile_thousand_lists() {
        let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
        let (n, per) = (env("PROFILE_LISTS", 1000), env("PROFILE_PER_LIST", 1000));
        let lists: Vec<SkipList> =
            (0..n).map(|_| SkipList::new(bytewise_internal_comparator(), 128 << 10)).collect();
        let mut rng = SmallRng::seed_from_u64(7);
        let value = vec![b'v'; 100];
        let (mut l2, mut l3) = (CacheModel::new(2 << 20), CacheModel::new(32 << 20));
        // Per kind: lines touched, L2 misses, L3 misses.
        let mut by_kind = [[0u64; 3]; 64];
        let (mut distinct, mut counted, mut nodes) = (0u64, 0u64, 0u64);
        trace::ON.with(|o| o.set(true));
        let total = n * per;
        for i in 0..total {
            let l = rng.gen_range(0..n);
            let k: u64 = rng.gen_range(0..total as u64);
            let mut uk = k.to_be_bytes().to_vec();
            uk.extend_from_slice(b"00000000");
            lists[l].insert(&uk, pack_seq_and_type(i as u64 + 1, ValueType::Value), &value);
            let events = trace::EVENTS.with(|e| std::mem::take(&mut *e.borrow_mut()));
            let warm = i >= total / 2;
            let mut seen: Vec<usize> = Vec::new();
            for (kind, addr, len) in events {
                if (trace_kind::KEY..trace_kind::KEY + 16).contains(&kind) && warm {
                    nodes += 1;
                }
                for line in addr / 64..=(addr + len.max(1) - 1) / 64 {
                    let (h2, h3) = (l2.access(line), l3.access(line));
                    if !warm {
                        continue;
                    }
                    if kind < trace_kind::PREFETCH && !seen.contains(&line) {
                        seen.push(line);
                    }
                    let row = &mut by_kind[kind as usize];
                    row[0] += 1;
                    row[1] += u64::from(!h2);
                    row[2] += u64::from(!h3);
                }
            }
            if warm {
                distinct += seen.len() as u64;
                counted += 1;
            }
        }
        trace::ON.with(|o| o.set(false));
        let per_op = |x: u64| x as f64 / counted as f64;
        println!(
            "{n} lists x {per}: per insert {:.2} distinct search lines, {:.2} nodes compared",
            per_op(distinct),
            per_op(nodes)
        );
        println!("kind                lines   L2miss  L3miss (per insert)");
        let mut sums = [0u64; 3];
        for (kind, row) in by_kind.iter().enumerate() {
            if row[0] == 0 {
                continue;
            }
            let name = match kind as u8 {
                k if k < trace_kind::KEY => format!("link level {k}"),
                k if k < trace_kind::PREFETCH => format!("key level {}", k - trace_kind::KEY),
                trace_kind::PREFETCH => "prefetch".into(),
                trace_kind::NODE_WRITE => "node write".into(),
                trace_kind::VALUE_WRITE => "value write".into(),
                _ => "back link".into(),
            };
            if kind as u8 != trace_kind::PREFETCH {
                for j in 0..3 {
                    sums[j] += row[j];
                }
            }
            println!("{name:18} {:7.2} {:7.2} {:7.2}", per_op(row[0]), per_op(row[1]), per_op(row[2]));
        }
        println!(
            "all but prefetch   {:7.2} {:7.2} {:7.2}",
            per_op(sums[0]),
            per_op(sums[1]),
            per_op(sums[2])
        );
        // A rough latency model of the search alone (writes and prefetches overlap): an L2
        // miss that hits the large cache ~20 ns, a miss in both ~90 ns.
        let (mut m2, mut m3) = (0u64, 0u64);
        for (kind, row) in by_kind.iter().enumerate() {
            if (kind as u8) < trace_kind::PREFETCH || kind as u8 == trace_kind::BACK_LINK {
                m2 += row[1];
                m3 += row[2];
            }
        }
        println!(
            "search: {:.2} L2 misses, {:.2} L3 misses, model {:.0} ns per insert",
            per_op(m2),
            per_op(m3),
            per_op((m2 - m3) * 20 + m3 * 90)
        );
    }

    /// Heights follow branching factor 2: about half the nodes of each height reach the next
    /// level, and none exceeds MAX_HEIGHT.
    #[test]
    fn heights_halve_per_level() {
        const N: u64 = 200_000;
        let mut at_least = [0u64; MAX_HEIGHT + 1];
        for _ in 0..N {
            let h = random_height();
            assert!((1..=MAX_HEIGHT).contains(&h), "height {h}");
            for c in &mut at_least[1..=h] {
                *c += 1;
            }
        }
        assert_eq!(at_least[1], N);
        for level in 2..=7 {
            let ratio = at_least[level] as f64 / at_least[level - 1] as f64;
            assert!((0.45..0.55).contains(&ratio), "level {level}: {ratio} of the level below");
        }
    }

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
}
