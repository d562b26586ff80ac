//! A bump allocator for memtable entries: one heap allocation per large block, many
//! entries per block, everything freed at once when the arena drops.
//!
//! ```text
//! block (block_size bytes, zeroed, 16-aligned)
//! +--------+--------+--------+----------------------+---------+---------+
//! | node 1 | node 2 | node 3 | free (remaining) ... | value 2 | value 1 |
//! +--------+--------+--------+----------------------+---------+---------+
//!                            ^ ptr                  ^ ptr + remaining
//! ```
//! [`Arena::allocate_aligned`] takes from the bottom of the free span and
//! [`Arena::allocate_top`] from its top, so a caller can keep two kinds of allocation apart
//! (the skiplist takes all its nodes from the bottom, each node one allocation, as RocksDB's
//! InlineSkipList). A request larger than a quarter of the block size gets a block of its own, so a huge
//! entry does not waste the tail of the current block. Memory usage counts every block
//! minus the unused tail of the current one. A [`ConcurrentArena`] keeps that figure in an
//! atomic of its own (not behind a pointer), which other threads may read while writers
//! allocate: with a thousand memtables written at random, every pointer chased per write
//! is a cache miss.
//!
//! Where blocks come from decides the memory the process holds. A block of
//! [`LAZY_BLOCK_MIN`] (64 KiB) or more (the configured block size, 1 MiB by default) is an
//! anonymous mapping of its own on Linux, zero and faulted in page by page as entries
//! reach it, as RocksDB's blocks from `new char[]` are: a memtable holds resident only the
//! pages its entries touched, not
//! its whole last block, and a dropped memtable's blocks go back to the system at once.
//! No block is faulted in whole when mapped (an earlier `MAP_POPULATE` from an arena's
//! third block on made the write that needed the block wait for the kernel to zero a MiB,
//! 0.4 ms at the median: BlobDB's P99.9 was 4 to 7 times RocksDB's); the page faults are
//! spread over the writes that reach the pages, as with RocksDB's `new char[]`. From the
//! third block on (a memtable growing large), the bottom of the block, where entries go, is
//! faulted in [`POPULATE_AHEAD`] (64 KiB) at a time ahead of the allocations
//! (`MADV_POPULATE_WRITE`): a write waits for 16 pages at most, and the kernel faults them
//! in one call, cheaper than a fault per page (in a VM, about a third of a page fault's
//! cost). Where the system allows transparent huge pages (its policy `always` or
//! `madvise`), those blocks are instead carved from 2 MiB-aligned regions advised
//! `MADV_HUGEPAGE` ([`HUGE_REGION`]; two 1 MiB blocks to a region) and not populated ahead:
//! a random insert into a large memtable is a chain of cache misses, and on 4 KiB pages
//! each is a TLB miss as well (see `Arena::region_block`). The kernel faults a region in a
//! huge page at a time at its first touch, about one of db_bench's writes in 14,000 (2 MiB
//! of 150-byte entries), where the 64 KiB window made one in 430 wait for a system call.
//! With a thousand families, each memtable a few hundred KiB, that is the difference
//! between the entries' size and a MiB per family: the seed experiment held 1,066 MiB
//! where RocksDB held 389, when blocks were slots of a process-wide pool of 2 MiB chunks
//! faulted in whole on huge pages (RocksDB uses huge pages only when
//! `memtable_huge_page_size` is set; so does Shale: [`Arena::set_huge_page_size`]). Smaller blocks (the 4 KiB first
//! block, small configured sizes) and a huge entry's own block come from the global
//! allocator.
//!
//! A dropped arena's huge page regions are not unmapped at once: they go to a process-wide
//! pool ([`region_pool`]) that the next large arena takes its regions from before mapping new
//! ones. A fresh mapping is zero, so the kernel clears each of its pages at the first touch
//! (a 64 MiB memtable: 64 MiB of `clear_page`, 12 to 17% of the CPU samples of BlobDB's
//! fillrandom), where RocksDB's blocks come from glibc's heap and are reused without clearing
//! once freed. So
//! arena memory is **not zeroed**: a recycled region holds the entries of an earlier memtable,
//! and every user writes what it reads (the skiplist stores each of a node's links before it
//! publishes the node; the vector memtable writes its whole entry). The pool holds at most what
//! the largest arena that gave to it held in regions (a flushed memtable's worth: the next
//! memtable of that size takes it all back), no more than its write buffer manager's room
//! left when that has a limit, and nothing once no live arena holds a region (no memtable is
//! growing large: after a recovery's flush, or with the writes over, the memory goes back to
//! the system, where readers need it for their caches) or none is alive at all.
//! The peak does not rise: the pool fills when a flushed memtable drops, and the memtable
//! that grew beside it during the flush goes on from the pool; what is left there is about
//! what that memtable grew during the flush, and the next memtable takes it first while it
//! grows during the next flush. So each flush's peak is the flushed memtable plus the larger
//! of the growth during that flush and during the one before: no more than without the pool
//! over a run of flushes.
//! Memory in the pool is charged to no write buffer manager: it is no memtable's.
//!
//! An arena may be charged to a write buffer manager
//! ([`super::write_buffer_manager`]): each block is reserved when allocated, given up from
//! the active count by [`Arena::done_allocating`] (the memtable became immutable), and freed
//! when the arena drops.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::write_buffer_manager::WriteBufferManagerState;

/// The default block size: 1 MiB.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Alignment of every block; the largest alignment `allocate_aligned` accepts.
const BLOCK_ALIGN: usize = 16;

/// The smallest block size accepted (smaller requests are raised to it).
const MIN_BLOCK_SIZE: usize = 4096;

/// The size of an arena's first block (at most its block size).
const FIRST_BLOCK_SIZE: usize = 4096;

/// Regular blocks of at least this size are mappings of their own, faulted in lazily.
pub const LAZY_BLOCK_MIN: usize = 64 << 10;

/// How far ahead of the bottom allocations a large arena's block is faulted in.
pub const POPULATE_AHEAD: usize = 64 << 10;

/// The size and alignment of a transparent huge page (x86-64's and arm64's 2 MiB PMD): the
/// regions a large arena's blocks are carved from (see `Arena::region_block`).
pub const HUGE_REGION: usize = 2 << 20;

/// A bump allocator. Allocation takes `&mut self`; for several writers at once see
/// [`ConcurrentArena`]. Memory handed out stays valid, at a fixed address, until the arena drops.
pub struct Arena {
    block_size: usize,
    /// The free span of the current block (empty when there is no block yet).
    span: Span,
    blocks: Vec<Block>,
    /// Sum of the sizes of all blocks.
    allocated: usize,
    /// The budget charged for every block, if any.
    tracker: Option<Arc<WriteBufferManagerState>>,
    /// Set by `done_allocating`: the blocks no longer count as active memory.
    done: bool,
    /// `memtable_huge_page_size` rounded up to hold a block (RocksDB's `hugetlb_size_`): the
    /// size of a regular block taken from huge pages; 0: none.
    hugetlb_size: usize,
    /// The current block's bottom is faulted in up to this address, and is to be as far as
    /// `populate_end` ahead of the allocations (see [`POPULATE_AHEAD`]); both 0 when the
    /// current block is not populated ahead.
    populated_to: usize,
    populate_end: usize,
    /// The rest of the current huge-page region (see `Arena::region_block`): the address of
    /// its next unused block and how many blocks of `block_size` are left there.
    region_next: usize,
    region_left: usize,
    /// Whether a large arena's blocks come from transparent huge page regions (tests turn
    /// it off to look at the page-by-page policy alone).
    thp: bool,
    /// Where freed regions go and new ones are taken from first (tests give an arena a pool
    /// of its own).
    pool: &'static region_pool::RegionPool,
}

// SAFETY: the arena exclusively owns its blocks (raw pointers from the global allocator or
// its own mappings, never shared with another arena); moving it to another thread
// moves that ownership.
unsafe impl Send for Arena {}

impl Arena {
    /// An arena that allocates blocks of `block_size` bytes (at least 4 KiB, rounded up to
    /// a multiple of 16). No memory is allocated until the first request.
    pub fn new(block_size: usize) -> Arena {
        Arena::unregistered(block_size).registered()
    }

    /// An arena of the global pool, not yet counted among its live arenas.
    fn unregistered(block_size: usize) -> Arena {
        let block_size = block_size.max(MIN_BLOCK_SIZE).next_multiple_of(BLOCK_ALIGN);
        Arena {
            block_size,
            span: Span::EMPTY,
            blocks: Vec::new(),
            allocated: 0,
            tracker: None,
            done: false,
            hugetlb_size: 0,
            populated_to: 0,
            populate_end: 0,
            region_next: 0,
            region_left: 0,
            thp: lazy_block::thp_enabled(),
            pool: region_pool::global(),
        }
    }

    /// Counts the arena among the live ones of its pool (see [`region_pool`]).
    fn registered(self) -> Arena {
        self.pool.arena_created();
        self
    }

    /// An arena whose blocks are charged to `tracker`.
    pub fn with_tracker(block_size: usize, tracker: Option<Arc<WriteBufferManagerState>>) -> Arena {
        let mut a = Arena::new(block_size);
        a.tracker = tracker;
        a
    }

    /// RocksDB's `memtable_huge_page_size` (its `Arena` constructor): when not 0, each regular
    /// block is a mapping of huge pages (`MAP_HUGETLB`) of that size, rounded up to a
    /// multiple of it that holds a block; when the system has none to give, the block comes
    /// from ordinary memory, as RocksDB falls back to `new char[]`. Huge entries' own blocks
    /// stay ordinary, as in RocksDB. Call before the first allocation.
    pub fn set_huge_page_size(&mut self, huge_page_size: usize) {
        self.hugetlb_size = if huge_page_size == 0 || !lazy_block::HUGE_PAGES_SUPPORTED {
            0
        } else {
            self.block_size.div_ceil(huge_page_size).saturating_mul(huge_page_size)
        };
    }

    /// How many of the arena's blocks are huge-page mappings.
    pub fn huge_blocks(&self) -> usize {
        self.blocks.iter().filter(|b| matches!(b, Block::Huge(..))).count()
    }

    /// A regular block of `size` bytes, or of the huge-page block size when huge pages are
    /// asked for and available: the block and its size.
    fn regular_block(&mut self, size: usize) -> (*mut u8, usize) {
        if self.hugetlb_size > 0 {
            let huge = self.hugetlb_size;
            if let Some(p) = lazy_block::map_huge(huge) {
                self.blocks.push(Block::Huge(p, huge));
                (self.populated_to, self.populate_end) = (0, 0);
                return (self.account(p, huge), huge);
            }
        }
        (self.new_block(size, true), size)
    }

    /// Counts a new block of `size` bytes (and charges the tracker).
    fn account(&mut self, p: NonNull<u8>, size: usize) -> *mut u8 {
        self.allocated += size;
        if let Some(t) = &self.tracker {
            t.reserve(size);
            if self.done {
                t.schedule_free(size);
            }
        }
        p.as_ptr()
    }

    /// The owner will take no more writes (RocksDB's `AllocTracker::DoneAllocating`): the
    /// blocks stop counting as active memory of the tracker.
    pub fn done_allocating(&mut self) {
        if !self.done {
            self.done = true;
            if let Some(t) = &self.tracker {
                t.schedule_free(self.allocated);
            }
        }
    }

    /// Returns `bytes` bytes aligned to `align` (a power of two, at most 16), of unspecified
    /// contents (zero, or an earlier memtable's entries: see the module comment). The memory
    /// stays valid and unmoved until the arena is dropped.
    ///
    /// # Panics
    /// If `align` is not a power of two or exceeds 16.
    pub fn allocate_aligned(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        assert!(align.is_power_of_two() && align <= BLOCK_ALIGN, "bad arena alignment {align}");
        let bytes = bytes.max(1);
        let result = if let Some(p) = self.span.take_bottom(bytes, align) {
            p
        } else if bytes > self.block_size / 4 {
            // A block of its own; the current block keeps its tail for later requests.
            self.new_block(bytes, false)
        } else {
            // The first block is small, so that an arena that stays nearly empty (the
            // memtable of an idle column family among thousands) costs little.
            let size = if self.blocks.is_empty() && bytes <= FIRST_BLOCK_SIZE / 4 && self.hugetlb_size == 0 {
                FIRST_BLOCK_SIZE.min(self.block_size)
            } else {
                self.block_size
            };
            let (p, size) = self.regular_block(size);
            // SAFETY: `bytes <= size / 4` (a quarter of the block size, or of the first
            // block), so `p + bytes` is inside the fresh block, which is 16-aligned and so
            // satisfies `align`.
            self.span = Span { ptr: unsafe { p.add(bytes) }, remaining: size - bytes };
            p
        };
        // Within the current block (not a huge entry's own block) and past what is faulted in.
        let end = result as usize + bytes;
        if end > self.populated_to && end <= self.populate_end {
            self.populate_ahead(end);
        }
        // SAFETY: blocks come from the global allocator, never null.
        unsafe { NonNull::new_unchecked(result) }
    }

    /// Faults in the current block's pages from `populated_to` to [`POPULATE_AHEAD`] past
    /// `end` (the end of the allocation just made; at most the block's end). Where the
    /// kernel cannot (before Linux 5.14), the block stays faulted in page by page.
    #[cold]
    fn populate_ahead(&mut self, end: usize) {
        let from = self.populated_to;
        let to = end.next_multiple_of(4096).saturating_add(POPULATE_AHEAD).min(self.populate_end);
        // SAFETY: `[from, to)` lies inside the current block, a live mapping of this arena
        // (`populate_end` is its end); populating it only faults its zero pages in.
        if unsafe { lazy_block::populate(from, to - from) } {
            self.populated_to = to;
        } else {
            (self.populated_to, self.populate_end) = (0, 0);
        }
    }

    /// Returns `bytes` bytes aligned to `align` (a power of two, at most 16), of unspecified
    /// contents, from the top of the free span, so they do not sit between the allocations of
    /// [`Arena::allocate_aligned`]. Valid and unmoved until the arena is dropped.
    ///
    /// # Panics
    /// If `align` is not a power of two or exceeds 16.
    pub fn allocate_top(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        assert!(align.is_power_of_two() && align <= BLOCK_ALIGN, "bad arena alignment {align}");
        let bytes = bytes.max(1);
        let result = match self.span.take_top(bytes, align) {
            Some(p) => p,
            None if bytes > self.block_size / 4 => self.new_block(bytes, false),
            None => {
                let (p, size) = self.regular_block(self.block_size);
                // Blocks are 16-aligned with a size a multiple of 16, so rounding the start
                // down to `align` stays inside the block (bytes <= block_size / 4).
                let remaining = (size - bytes) & !(align - 1);
                self.span = Span { ptr: p, remaining };
                // SAFETY: the top `block_size - remaining` bytes of the new block are the
                // result; the rest is the new free span.
                unsafe { p.add(remaining) }
            }
        };
        // SAFETY: `result` points into a live block (non-null).
        unsafe { NonNull::new_unchecked(result) }
    }

    /// A new block of `size` bytes (zero, unless a recycled region's); `regular`: one of the
    /// arena's own block sizes (the first or the configured one), a lazily faulted mapping when of
    /// [`LAZY_BLOCK_MIN`] or more; a huge entry's block (any size) and small blocks come
    /// from the global allocator.
    fn new_block(&mut self, size: usize, regular: bool) -> *mut u8 {
        let size = size.next_multiple_of(BLOCK_ALIGN);
        // From the third block on, a memtable is growing large (see `populate_ahead` and
        // `region_block`).
        let large = regular && self.blocks.len() >= 2;
        let mut in_region = false;
        let lazy = if regular && size >= LAZY_BLOCK_MIN {
            let from_region = if large && self.thp { self.region_block(size) } else { None };
            in_region = from_region.is_some();
            from_region.or_else(|| {
                let p = lazy_block::map(size)?;
                self.blocks.push(Block::Mapped(p, size));
                Some(p)
            })
        } else {
            None
        };
        // Only a regular block becomes the current one (a huge entry's block does not). A
        // block of a huge page region is not populated ahead: its first touch faults the
        // whole region in (a madvise every 64 KiB would only add system calls).
        if regular {
            (self.populated_to, self.populate_end) = match lazy {
                Some(p) if large && !in_region => (p.as_ptr() as usize, p.as_ptr() as usize + size),
                _ => (0, 0),
            };
        }
        let nn = match lazy {
            Some(p) => p,
            None => {
                let layout = match Layout::from_size_align(size, BLOCK_ALIGN) {
                    Ok(l) => l,
                    Err(_) => panic!("arena request of {size} bytes is too large"),
                };
                // SAFETY: the layout has a non-zero size (requests are at least 1 byte).
                let p = unsafe { alloc_zeroed(layout) };
                let Some(nn) = NonNull::new(p) else { handle_alloc_error(layout) };
                self.blocks.push(Block::Heap(nn, layout));
                nn
            }
        };
        self.account(nn, size)
    }

    /// A regular block of a large arena (its third on) from a transparent huge page region:
    /// a mapping of [`HUGE_REGION`] (2 MiB), or of the block size when that is a multiple of
    /// it, aligned to 2 MiB and advised `MADV_HUGEPAGE`, which holds whole blocks one after
    /// the other. A skiplist insert into a memtable of tens of MiB is a chain of cache misses
    /// at random addresses, and with 4 KiB pages each is a TLB miss too (the TLB covers a
    /// few MiB; in a virtual machine a TLB miss walks two page tables): on 2 MiB pages the
    /// walk hits the TLB. The kernel faults a huge page in whole at the first touch of its
    /// region (one fault of about 0.1 ms for 2 MiB instead of 512 faults), falling back to
    /// 4 KiB pages when it has none (THP disabled, or no free huge page). None for block
    /// sizes that neither divide nor are multiples of 2 MiB (the caller maps the block alone).
    fn region_block(&mut self, size: usize) -> Option<NonNull<u8>> {
        if size != self.block_size {
            return None;
        }
        if self.region_left > 0 {
            let p = self.region_next;
            self.region_next += size;
            self.region_left -= 1;
            return NonNull::new(p as *mut u8);
        }
        let region = if HUGE_REGION.is_multiple_of(size) {
            HUGE_REGION
        } else if size.is_multiple_of(HUGE_REGION) {
            size
        } else {
            return None;
        };
        let p = match self.pool.take(region) {
            Some(p) => p,
            None => lazy_block::map_thp(region)?,
        };
        if !self.blocks.iter().any(|b| matches!(b, Block::Region(..))) {
            // This arena's first region: a memtable growing large, which the pool serves.
            self.pool.holder_added();
        }
        // Debug builds scribble over every region, fresh or recycled, so that a test of code
        // that counts on zeroed arena memory fails rather than passes by luck.
        #[cfg(debug_assertions)]
        // SAFETY: the region is `region` bytes of a live mapping now this arena's alone.
        unsafe {
            std::ptr::write_bytes(p.as_ptr(), 0xA5, region)
        };
        self.blocks.push(Block::Region(p, region));
        self.region_next = p.as_ptr() as usize + size;
        self.region_left = region / size - 1;
        Some(p)
    }

    /// Bytes in use: all blocks minus the unused tail of the current block.
    pub fn memory_usage(&self) -> usize {
        self.allocated - self.span.remaining
    }

    /// The block size in use (after rounding).
    pub fn block_size(&self) -> usize {
        self.block_size
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        self.done_allocating();
        if let Some(t) = &self.tracker {
            t.free(self.allocated);
        }
        let mut regions = Vec::new();
        for b in self.blocks.drain(..) {
            match b {
                // SAFETY: the block was allocated by `alloc_zeroed` with exactly this
                // layout and is freed once, here.
                Block::Heap(p, layout) => unsafe { dealloc(p.as_ptr(), layout) },
                // SAFETY: the block came from `lazy_block::map(size)` and is unmapped once,
                // here; the arena hands out no pointer into it after dropping.
                Block::Mapped(p, size) => unsafe { lazy_block::unmap(p, size) },
                // SAFETY: as above, from `lazy_block::map_huge(size)`.
                Block::Huge(p, size) => unsafe { lazy_block::unmap(p, size) },
                Block::Region(p, size) => regions.push((p, size)),
            }
        }
        // The room the write buffer manager has left, when it has a limit: the pool does
        // not hold memory the memtables of that budget will need.
        let room = self
            .tracker
            .as_ref()
            .filter(|t| t.enabled())
            .map_or(usize::MAX, |t| t.buffer_size().saturating_sub(t.memory_usage()));
        // SAFETY: the regions came from `lazy_block::map_thp` or the pool, belong to this
        // arena alone, and the arena hands out no pointer into them after dropping.
        unsafe { self.pool.arena_dropped(regions, room) };
    }
}

/// One block of an arena and where it came from.
enum Block {
    /// From the global allocator with this layout.
    Heap(NonNull<u8>, Layout),
    /// From [`lazy_block::map`] with this size.
    Mapped(NonNull<u8>, usize),
    /// From [`lazy_block::map_huge`] with this size (`memtable_huge_page_size`).
    Huge(NonNull<u8>, usize),
    /// A transparent huge page region from [`lazy_block::map_thp`] (or recycled through
    /// [`region_pool`]) with this size: given to the pool when the arena drops.
    Region(NonNull<u8>, usize),
}

/// Freed huge page regions kept for the next large arena (see the module comment).
///
/// ```text
/// arena drops --regions--> pool (<= the dropping arena's regions, <= its budget's room)
///                            |--take(size)--> the next large arena's `region_block`
///                            '--last live arena dropped--> unmapped
/// ```
pub mod region_pool {
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use parking_lot::Mutex;

    /// Regions free for reuse and the count of live arenas.
    pub struct RegionPool {
        /// (address, size) of each free region; the newest last (taken first: still in cache).
        free: Mutex<Free>,
        live: AtomicUsize,
        /// Live arenas holding at least one region (memtables grown large).
        holders: AtomicUsize,
    }

    struct Free {
        regions: Vec<(usize, usize)>,
        bytes: usize,
    }

    /// The process's pool, shared by every arena of every database.
    pub fn global() -> &'static RegionPool {
        static POOL: RegionPool = RegionPool::new();
        &POOL
    }

    impl RegionPool {
        pub const fn new() -> RegionPool {
            RegionPool {
                free: Mutex::new(Free { regions: Vec::new(), bytes: 0 }),
                live: AtomicUsize::new(0),
                holders: AtomicUsize::new(0),
            }
        }

        /// Bytes of the regions held.
        pub fn bytes(&self) -> usize {
            self.free.lock().bytes
        }

        pub(super) fn arena_created(&self) {
            self.live.fetch_add(1, Ordering::SeqCst);
        }

        /// An arena took its first region.
        pub(super) fn holder_added(&self) {
            self.holders.fetch_add(1, Ordering::SeqCst);
        }

        /// A free region of exactly `size` bytes, if the pool holds one. Its contents are
        /// an earlier arena's.
        pub(super) fn take(&self, size: usize) -> Option<NonNull<u8>> {
            let mut f = self.free.lock();
            let i = f.regions.iter().rposition(|&(_, s)| s == size)?;
            let (p, s) = f.regions.swap_remove(i);
            f.bytes -= s;
            NonNull::new(p as *mut u8)
        }

        /// An arena dropped, giving back `regions`: the pool keeps as many as fit under
        /// both the regions' own total and `room`, and unmaps the rest; when no arena is
        /// alive any more, or no live arena holds a region (none is growing large to take
        /// them), it unmaps everything it holds.
        ///
        /// # Safety
        /// Each region is a live mapping from `map_thp` of that size, owned by the caller
        /// and used by nobody after this call.
        pub(super) unsafe fn arena_dropped(&self, regions: Vec<(NonNull<u8>, usize)>, room: usize) {
            let left = self.live.fetch_sub(1, Ordering::SeqCst) - 1;
            if regions.is_empty() && left > 0 {
                return;
            }
            // With regions, the arena was a holder; is any other left?
            let holders = if regions.is_empty() {
                self.holders.load(Ordering::SeqCst)
            } else {
                self.holders.fetch_sub(1, Ordering::SeqCst) - 1
            };
            let limit = regions.iter().map(|&(_, s)| s).sum::<usize>().min(room);
            let mut unmap = Vec::new();
            {
                let mut f = self.free.lock();
                // Read under the lock: an arena that drops last takes the lock after this
                // one's decrement, so it sees and unmaps what this one keeps.
                let keep = holders > 0 && self.live.load(Ordering::SeqCst) > 0;
                if !keep {
                    unmap.append(&mut f.regions);
                    f.bytes = 0;
                }
                for (p, s) in regions {
                    if left > 0 && keep && f.bytes + s <= limit {
                        f.regions.push((p.as_ptr() as usize, s));
                        f.bytes += s;
                    } else {
                        unmap.push((p.as_ptr() as usize, s));
                    }
                }
            }
            // Outside the lock: munmap of a large region takes a while.
            for (p, s) in unmap {
                // SAFETY: per the contract (regions given now) or the pool's own (regions
                // it kept from earlier arenas, handed to nobody since): live mappings of
                // `s` bytes that nothing points into.
                unsafe { super::lazy_block::unmap(NonNull::new_unchecked(p as *mut u8), s) };
            }
        }
    }

    impl Default for RegionPool {
        fn default() -> RegionPool {
            RegionPool::new()
        }
    }
}

/// Blocks that are mappings of their own, zero and faulted in only where written (see the
/// module comment). Elsewhere than Linux, none: the caller falls back to the global
/// allocator.
mod lazy_block {
    use std::ptr::NonNull;

    /// A zeroed, page-aligned block of `size` bytes whose pages are faulted in on first
    /// touch; None when the mapping fails.
    #[cfg(target_os = "linux")]
    pub(super) fn map(size: usize) -> Option<NonNull<u8>> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: an anonymous private mapping at an address the kernel picks; no existing
        // memory is affected.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        NonNull::new(p.cast::<u8>())
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn map(_size: usize) -> Option<NonNull<u8>> {
        None
    }

    /// Whether transparent huge page regions are asked for here: on Linux unless the
    /// system's policy (`/sys/kernel/mm/transparent_hugepage/enabled`) is `never` or
    /// unknown; then a large arena's blocks are mapped alone and populated ahead.
    #[cfg(target_os = "linux")]
    pub(super) fn thp_enabled() -> bool {
        static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ENABLED.get_or_init(|| {
            std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
                .is_ok_and(|policy| policy.contains("[always]") || policy.contains("[madvise]"))
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn thp_enabled() -> bool {
        false
    }

    /// A zeroed block of `size` bytes (a multiple of [`super::HUGE_REGION`]) aligned to
    /// `HUGE_REGION` and advised `MADV_HUGEPAGE`, faulted in on first touch (a huge page at
    /// a time where the kernel has them); None when the mapping fails.
    #[cfg(target_os = "linux")]
    pub(super) fn map_thp(size: usize) -> Option<NonNull<u8>> {
        let align = super::HUGE_REGION;
        let span = size.checked_add(align)?;
        let raw = map(span)?.as_ptr() as usize;
        let start = raw.next_multiple_of(align);
        let (head, tail) = (start - raw, raw + span - (start + size));
        // SAFETY: `[raw, raw + span)` is the mapping just made and nothing points into it;
        // its unaligned head and tail are unmapped, which leaves `[start, start + size)`
        // mapped, inside it. The advice changes only how its pages are backed.
        unsafe {
            if head > 0 {
                libc::munmap(raw as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((start + size) as *mut libc::c_void, tail);
            }
            // Refused (THP not built in): the region stays on 4 KiB pages.
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        }
        NonNull::new(start as *mut u8)
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn map_thp(_size: usize) -> Option<NonNull<u8>> {
        None
    }

    /// Faults in `len` bytes at `addr` for writing (`MADV_POPULATE_WRITE`); false when the
    /// kernel refuses (older than 5.14), and the caller stops asking.
    ///
    /// # Safety
    /// `[addr, addr + len)` lies inside a live mapping from [`map`].
    #[cfg(target_os = "linux")]
    pub(super) unsafe fn populate(addr: usize, len: usize) -> bool {
        // SAFETY: per the contract, the range is part of one anonymous private mapping of
        // the caller's; the advice faults its pages in without changing their contents.
        unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) == 0 }
    }

    /// # Safety
    /// Never called with a block: `map` returns none elsewhere than Linux.
    #[cfg(not(target_os = "linux"))]
    pub(super) unsafe fn populate(_addr: usize, _len: usize) -> bool {
        false
    }

    /// Whether huge-page mappings exist here (RocksDB's `MemMapping::kHugePageSupported`).
    pub(super) const HUGE_PAGES_SUPPORTED: bool = cfg!(target_os = "linux");

    /// A zeroed block of `size` bytes (a multiple of the huge page size) on huge pages
    /// (RocksDB's `MemMapping::AllocateHuge`: an anonymous `MAP_HUGETLB` mapping); None when
    /// the system has no huge pages to give (none reserved, or all in use).
    #[cfg(target_os = "linux")]
    pub(super) fn map_huge(size: usize) -> Option<NonNull<u8>> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB;
        // SAFETY: an anonymous private mapping at an address the kernel picks; no existing
        // memory is affected.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        NonNull::new(p.cast::<u8>())
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn map_huge(_size: usize) -> Option<NonNull<u8>> {
        None
    }

    /// Unmaps a block from [`map`].
    ///
    /// # Safety
    /// `p` came from `map(size)`, is unmapped once, and nothing points into it afterwards.
    #[cfg(target_os = "linux")]
    pub(super) unsafe fn unmap(p: NonNull<u8>, size: usize) {
        // SAFETY: per the contract, the range is exactly one mapping made by `map`.
        unsafe { libc::munmap(p.as_ptr().cast(), size) };
    }

    /// # Safety
    /// Never called: `map` returns no block elsewhere than Linux.
    #[cfg(not(target_os = "linux"))]
    pub(super) unsafe fn unmap(_p: NonNull<u8>, _size: usize) {}
}

/// A free span `[ptr, ptr + remaining)` of a block: allocations come off its bottom or its top.
#[derive(Clone, Copy)]
struct Span {
    ptr: *mut u8,
    remaining: usize,
}

// SAFETY: a span only names bytes of blocks owned by one arena; whoever holds the span
// (the arena, or a shard behind its mutex) is the only one handing those bytes out.
unsafe impl Send for Span {}

impl Span {
    const EMPTY: Span = Span { ptr: std::ptr::dangling_mut(), remaining: 0 };

    /// `bytes` (>= 1) aligned to `align` from the bottom, if they fit.
    #[inline]
    fn take_bottom(&mut self, bytes: usize, align: usize) -> Option<*mut u8> {
        let pad = (self.ptr as usize).wrapping_neg() & (align - 1);
        if pad + bytes > self.remaining {
            return None;
        }
        // SAFETY: `pad + bytes <= remaining`, so the result and its `bytes` bytes lie
        // inside the span's block.
        let p = unsafe { self.ptr.add(pad) };
        // SAFETY: as above; the new `ptr` is at most one past the end of the span.
        self.ptr = unsafe { p.add(bytes) };
        self.remaining -= pad + bytes;
        Some(p)
    }

    /// `bytes` (>= 1) aligned to `align` from the top, if they fit.
    #[inline]
    fn take_top(&mut self, bytes: usize, align: usize) -> Option<*mut u8> {
        let base = self.ptr as usize;
        let start = (base + self.remaining).checked_sub(bytes)? & !(align - 1);
        if start < base {
            return None;
        }
        self.remaining = start - base;
        // SAFETY: `start` lies inside the span, `bytes` before its old top.
        Some(unsafe { self.ptr.add(self.remaining) })
    }
}

/// Where the skiplist takes a node's memory from: the arena itself (one writer at a time,
/// behind the arena's mutex) or a shard of a [`ConcurrentArena`].
pub trait Bump {
    /// As [`Arena::allocate_aligned`].
    fn bottom(&mut self, bytes: usize, align: usize) -> NonNull<u8>;
    /// As [`Arena::allocate_top`].
    fn top(&mut self, bytes: usize, align: usize) -> NonNull<u8>;
}

impl Bump for Arena {
    #[inline]
    fn bottom(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        self.allocate_aligned(bytes, align)
    }
    #[inline]
    fn top(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        self.allocate_top(bytes, align)
    }
}

/// The most bytes a shard takes from the arena at once (RocksDB's `kMaxShardBlockSize`).
const MAX_SHARD_CHUNK: usize = 128 << 10;

/// One shard of a [`ConcurrentArena`], on a cache line of its own.
#[repr(align(64))]
struct ArenaShard {
    span: Mutex<Span>,
    /// Free bytes of `span`, readable without the lock (memory usage).
    free: AtomicUsize,
}

/// An [`Arena`] that several threads allocate from at once (RocksDB's `ConcurrentArena`).
///
/// ```text
///   main: Mutex<Arena>  --chunks of min(128 KiB, block/8)-->  shards[0..n] (one per core)
///   one writer (`with_main`)                                  concurrent writers (`with_shard`)
/// ```
/// A concurrent writer takes the shard its thread was given, or any shard whose lock is free
/// (a try-lock per shard), and bumps from its chunk: bottom for nodes, top for values, as the
/// arena's own blocks. A chunk that runs out is left (its tail unused) for a fresh one from
/// the main arena; a request above a quarter of a chunk goes to the main arena directly.
/// Shards take chunks only when a concurrent writer first uses them, so a list filled by
/// one writer at a time never has any. Memory usage is the main arena's minus the free bytes
/// the shards hold, so a chunk counts only as far as it is used; until a shard takes a
/// chunk it is the main arena's figure alone, read from this struct without touching the
/// shards (the per-write full-memtable check stays on the memtable's own cache lines).
pub struct ConcurrentArena {
    main: Mutex<Arena>,
    /// The main arena's memory usage, stored under its lock after every allocation.
    usage: AtomicUsize,
    /// Set when a shard first takes a chunk: from then on usage subtracts the shards' free
    /// bytes.
    shards_used: AtomicBool,
    shards: Box<[ArenaShard]>,
    chunk: usize,
}

/// The number of shards: the machine's processors, rounded up to a power of two, at most 64.
fn shard_count() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism().map_or(4, |n| n.get()).clamp(1, 64).next_power_of_two()
    })
}

thread_local! {
    /// The shard this thread tries first (RocksDB picks by CPU; a thread keeps its pick
    /// until it finds that shard busy).
    static SHARD_HINT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Hands out shard hints round-robin to threads as they first allocate.
static NEXT_HINT: AtomicUsize = AtomicUsize::new(0);

impl ConcurrentArena {
    /// An arena with blocks of `block_size` bytes, charged to `tracker`.
    pub fn new(block_size: usize, tracker: Option<Arc<WriteBufferManagerState>>) -> ConcurrentArena {
        let main = Arena::with_tracker(block_size, tracker);
        let chunk = (main.block_size() / 8).clamp(1024, MAX_SHARD_CHUNK);
        let shards = (0..shard_count())
            .map(|_| ArenaShard { span: Mutex::new(Span::EMPTY), free: AtomicUsize::new(0) })
            .collect();
        ConcurrentArena {
            main: Mutex::new(main),
            usage: AtomicUsize::new(0),
            shards_used: AtomicBool::new(false),
            shards,
            chunk,
        }
    }

    /// Runs `f` on the arena itself, behind its mutex (one writer at a time).
    #[inline]
    pub fn with_main<R>(&self, f: impl FnOnce(&mut Arena) -> R) -> R {
        main_alloc(&self.main, &self.usage, f)
    }

    /// Runs `f` on the arena itself when its lock is free at once and no writer of this
    /// arena has met a busy lock yet (no shard holds memory); else None, and the caller takes
    /// a shard ([`ConcurrentArena::with_shard`]). As RocksDB's `ConcurrentArena`, which
    /// allocates from the arena directly until contention sends a thread to its shard: a
    /// memtable whose writers seldom meet (a thousand families written by a few threads)
    /// keeps one block's free span instead of one per shard, each with its own partly used
    /// pages at both ends.
    #[inline]
    pub fn try_main<R>(&self, f: impl FnOnce(&mut Arena) -> R) -> Option<R> {
        if self.shards_used.load(Ordering::Relaxed) {
            return None;
        }
        let mut a = self.main.try_lock()?;
        let r = f(&mut a);
        self.usage.store(a.memory_usage(), Ordering::Relaxed);
        Some(r)
    }

    /// Runs `f` on a shard (for writers that insert concurrently).
    pub fn with_shard<R>(&self, f: impl FnOnce(&mut ShardAlloc<'_>) -> R) -> R {
        let n = self.shards.len();
        let mut hint = SHARD_HINT.with(|h| h.get());
        if hint == usize::MAX {
            hint = NEXT_HINT.fetch_add(1, Ordering::Relaxed);
            SHARD_HINT.with(|h| h.set(hint));
        }
        let first = hint & (n - 1);
        let mut picked = None;
        for i in 0..n {
            let idx = (first + i) & (n - 1);
            if let Some(g) = self.shards[idx].span.try_lock() {
                if i > 0 {
                    SHARD_HINT.with(|h| h.set(idx));
                }
                picked = Some((idx, g));
                break;
            }
        }
        let (idx, span) = match picked {
            Some(p) => p,
            None => (first, self.shards[first].span.lock()),
        };
        let mut alloc = ShardAlloc {
            span,
            free: &self.shards[idx].free,
            main: &self.main,
            usage: &self.usage,
            shards_used: &self.shards_used,
            chunk: self.chunk,
        };
        let r = f(&mut alloc);
        alloc.free.store(alloc.span.remaining, Ordering::Relaxed);
        r
    }

    /// Bytes in use: the main arena's, less what the shards hold unused.
    #[inline]
    pub fn memory_usage(&self) -> usize {
        let used = self.usage.load(Ordering::Relaxed);
        if !self.shards_used.load(Ordering::Relaxed) {
            return used;
        }
        let unused: usize = self.shards.iter().map(|s| s.free.load(Ordering::Relaxed)).sum();
        used.saturating_sub(unused)
    }

    /// The main arena's free span as (start address, bytes), when its lock is free at once
    /// (None otherwise): where the next single-writer allocations go, for prefetching.
    pub fn free_span(&self) -> Option<(usize, usize)> {
        self.main.try_lock().map(|a| (a.span.ptr as usize, a.span.remaining))
    }

    /// See [`Arena::done_allocating`].
    pub fn done_allocating(&self) {
        self.main.lock().done_allocating();
    }
}

/// Runs `f` on the main arena behind its lock, then stores its memory usage in `usage`.
#[inline]
fn main_alloc<R>(main: &Mutex<Arena>, usage: &AtomicUsize, f: impl FnOnce(&mut Arena) -> R) -> R {
    let mut a = main.lock();
    let r = f(&mut a);
    usage.store(a.memory_usage(), Ordering::Relaxed);
    r
}

/// A locked shard of a [`ConcurrentArena`], refilled from the main arena when it runs out.
pub struct ShardAlloc<'a> {
    span: parking_lot::MutexGuard<'a, Span>,
    free: &'a AtomicUsize,
    main: &'a Mutex<Arena>,
    usage: &'a AtomicUsize,
    shards_used: &'a AtomicBool,
    chunk: usize,
}

impl ShardAlloc<'_> {
    /// Replaces the span by a fresh chunk of the main arena.
    fn refill(&mut self) {
        if !self.shards_used.load(Ordering::Relaxed) {
            self.shards_used.store(true, Ordering::Relaxed);
        }
        let chunk = self.chunk;
        let p = self.main_bottom(chunk, BLOCK_ALIGN);
        *self.span = Span { ptr: p.as_ptr(), remaining: chunk };
    }

    fn main_bottom(&self, bytes: usize, align: usize) -> NonNull<u8> {
        main_alloc(self.main, self.usage, |a| a.allocate_aligned(bytes, align))
    }

    fn main_top(&self, bytes: usize, align: usize) -> NonNull<u8> {
        main_alloc(self.main, self.usage, |a| a.allocate_top(bytes, align))
    }
}

impl Bump for ShardAlloc<'_> {
    fn bottom(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        assert!(align.is_power_of_two() && align <= BLOCK_ALIGN, "bad arena alignment {align}");
        let bytes = bytes.max(1);
        if let Some(p) = self.span.take_bottom(bytes, align) {
            // SAFETY: spans lie inside live blocks (non-null).
            return unsafe { NonNull::new_unchecked(p) };
        }
        if bytes > self.chunk / 4 {
            return self.main_bottom(bytes, align);
        }
        self.refill();
        match self.span.take_bottom(bytes, align) {
            // SAFETY: as above.
            Some(p) => unsafe { NonNull::new_unchecked(p) },
            // A quarter chunk always fits a fresh, 16-aligned chunk.
            None => self.main_bottom(bytes, align),
        }
    }

    fn top(&mut self, bytes: usize, align: usize) -> NonNull<u8> {
        assert!(align.is_power_of_two() && align <= BLOCK_ALIGN, "bad arena alignment {align}");
        let bytes = bytes.max(1);
        if let Some(p) = self.span.take_top(bytes, align) {
            // SAFETY: spans lie inside live blocks (non-null).
            return unsafe { NonNull::new_unchecked(p) };
        }
        if bytes > self.chunk / 4 {
            return self.main_top(bytes, align);
        }
        self.refill();
        match self.span.take_top(bytes, align) {
            // SAFETY: as above.
            Some(p) => unsafe { NonNull::new_unchecked(p) },
            None => self.main_top(bytes, align),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_zeroed() {
        let mut a = Arena::new(4096);
        let mut spans = Vec::new();
        for i in 0..2000usize {
            let size = 1 + (i * 37) % 300;
            let align = 1 << (i % 5);
            let p = a.allocate_aligned(size, align);
            assert_eq!(p.as_ptr() as usize % align, 0);
            // SAFETY: the arena handed out `size` bytes at `p`.
            let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
            assert!(s.iter().all(|&b| b == 0), "arena memory must start zeroed");
            s.fill((i % 251) as u8);
            spans.push((p.as_ptr() as usize, size, (i % 251) as u8));
        }
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlapping allocations");
        }
        for &(p, size, fill) in &spans {
            // SAFETY: still owned by the live arena.
            let s = unsafe { std::slice::from_raw_parts(p as *const u8, size) };
            assert!(s.iter().all(|&b| b == fill), "allocation was overwritten");
        }
    }

    #[test]
    fn usage_tracks_blocks_and_huge_requests() {
        let mut a = Arena::new(1 << 16);
        assert_eq!(a.memory_usage(), 0);
        a.allocate_aligned(100, 8);
        assert_eq!(a.memory_usage(), 100);
        a.allocate_aligned(3, 1);
        a.allocate_aligned(8, 8); // 1 byte of padding: 103 -> 104
        assert_eq!(a.memory_usage(), 112);
        // A huge request gets its own block and leaves the current tail for later.
        let before = a.memory_usage();
        a.allocate_aligned(100_000, 8);
        assert_eq!(a.memory_usage(), before + 100_000u64.next_multiple_of(16) as usize);
        let p = a.allocate_aligned(8, 8).as_ptr() as usize;
        let q = a.allocate_aligned(8, 8).as_ptr() as usize;
        assert_eq!(q, p + 8, "small requests continue in the current block");
        // Filling past the block starts a new one.
        for _ in 0..100 {
            a.allocate_aligned(1000, 8);
        }
        assert!(a.memory_usage() >= before + 100_000 + 100 * 1000);
        assert!(a.blocks.len() >= 3);
    }

    /// `memtable_huge_page_size`: the huge block size is the page size rounded up to hold a
    /// block (RocksDB's `hugetlb_size_`); regular blocks come from huge pages when the
    /// system has free ones (`HugePages_Free` in /proc/meminfo), else from ordinary memory
    /// (RocksDB's fallback), and the memory handed out works either way.
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_page_blocks_or_fallback() {
        let huge = 2 << 20;
        let mut a = Arena::new(1 << 20);
        a.set_huge_page_size(huge);
        assert_eq!(a.hugetlb_size, huge, "a 1 MiB block fits one 2 MiB page");
        let mut b = Arena::new(5 << 20);
        b.set_huge_page_size(huge);
        assert_eq!(b.hugetlb_size, 6 << 20, "a 5 MiB block takes three pages");
        let free_huge_pages = std::fs::read_to_string("/proc/meminfo")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("HugePages_Free:").map(|v| v.trim().parse::<u64>().unwrap()))
            .unwrap_or(0);
        let mut ptrs = Vec::new();
        for i in 0..2000u32 {
            let p = a.allocate_aligned(1000, 8);
            // SAFETY: 1000 bytes were just handed out at `p`.
            unsafe { std::ptr::write_bytes(p.as_ptr(), (i % 251) as u8, 1000) };
            ptrs.push(p);
        }
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: each pointer names 1000 bytes of a live block of `a`.
            let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), 1000) };
            assert!(bytes.iter().all(|&x| x == (i as u32 % 251) as u8), "allocation {i} intact");
        }
        if free_huge_pages == 0 {
            assert_eq!(a.huge_blocks(), 0, "no huge pages here: ordinary blocks");
            assert!(a.blocks.len() >= 2);
        } else {
            assert!(a.huge_blocks() >= 1, "{free_huge_pages} huge pages free: blocks use them");
        }
        assert!(a.memory_usage() >= 2000 * 1000);
    }

    /// A block of 64 KiB or more is a mapping of its own whose pages become resident only
    /// as entries reach them (RocksDB's memory figure with many small memtables): after a
    /// few entries at its bottom and top, most of a 1 MiB block is not resident.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_mapped_and_faulted_in_lazily() {
        let mut a = Arena::new(1 << 20);
        a.allocate_aligned(100, 8); // the 4 KiB first block
        a.allocate_aligned(2000, 8); // does not fit: a 1 MiB block
        for _ in 0..10 {
            a.allocate_aligned(100, 8);
            a.allocate_top(100, 1);
        }
        assert!(matches!(a.blocks[0], Block::Heap(..)), "the 4 KiB first block, from the heap");
        let Block::Mapped(p, size) = a.blocks[1] else { panic!("a 1 MiB block is mapped") };
        assert_eq!(size, 1 << 20);
        let pages = size / 4096;
        let mut vec = vec![0u8; pages];
        // SAFETY: `p` is a live mapping of `size` bytes; `vec` has a byte per page.
        let r = unsafe { libc::mincore(p.as_ptr().cast(), size, vec.as_mut_ptr()) };
        assert_eq!(r, 0);
        let resident = vec.iter().filter(|&&b| b & 1 != 0).count();
        assert!(resident <= 4, "{resident} of {pages} pages resident");
        // The bytes handed out are zero and writable.
        let q = a.allocate_aligned(64, 8);
        // SAFETY: 64 fresh bytes of the arena.
        assert!(unsafe { std::slice::from_raw_parts(q.as_ptr(), 64) }.iter().all(|&b| b == 0));

        // A third block (a memtable growing large) is not faulted in whole either: the write
        // that maps it waits for at most POPULATE_AHEAD of it, and its bottom stays faulted
        // in that far ahead of the allocations.
        // (This policy alone: without the huge page regions, see `large_blocks_share_huge_page_regions`.)
        let mut b = Arena::new(1 << 20);
        b.thp = false;
        b.allocate_aligned(100, 8); // the 4 KiB first block
        b.allocate_aligned(2000, 8); // the second block (1 MiB, lazy)
        while b.blocks.len() < 3 {
            b.allocate_aligned(100_000, 8);
        }
        let Block::Mapped(p, size) = b.blocks[2] else { panic!("a 1 MiB block is mapped") };
        let resident = |vec: &mut Vec<u8>| {
            // SAFETY: `p` is a live mapping of `size` bytes; `vec` has a byte per page.
            assert_eq!(unsafe { libc::mincore(p.as_ptr().cast(), size, vec.as_mut_ptr()) }, 0);
            vec.iter().map(|&b| usize::from(b & 1 != 0)).collect::<Vec<_>>()
        };
        let mut vec = vec![0u8; size / 4096];
        let r = resident(&mut vec);
        let ahead = (100_000usize.next_multiple_of(4096) + POPULATE_AHEAD) / 4096;
        assert_eq!(r.iter().sum::<usize>(), ahead, "the first allocation and {POPULATE_AHEAD} beyond");
        assert!(r[..ahead].iter().all(|&x| x == 1), "the bottom of the block");
        // More allocations keep the window ahead of them.
        for _ in 0..4 {
            b.allocate_aligned(100_000, 8);
        }
        let r = resident(&mut vec);
        let ahead = (500_000usize.next_multiple_of(4096) + POPULATE_AHEAD) / 4096;
        assert_eq!(r.iter().sum::<usize>(), ahead);
        assert!(r[..ahead].iter().all(|&x| x == 1));
        // A huge entry's own block (more than the 548,576 bytes left, and than a quarter
        // block) does not move the window.
        b.allocate_aligned(600_000, 8);
        assert_eq!(b.blocks.len(), 4);
        assert_eq!(resident(&mut vec).iter().sum::<usize>(), ahead);
        // The memory handed out is zero and writable.
        let q = b.allocate_aligned(4096, 8);
        // SAFETY: 4096 fresh bytes of the arena.
        let fresh = unsafe { std::slice::from_raw_parts_mut(q.as_ptr(), 4096) };
        assert!(fresh.iter().all(|&x| x == 0));
        fresh.fill(7);
    }

    /// From the third block on, 1 MiB blocks are carved two by two from 2 MiB-aligned regions
    /// advised for transparent huge pages; 64 KiB blocks 32 to a region; blocks of a multiple
    /// of 2 MiB are a region each. Memory usage and the tracker count blocks, not regions,
    /// and every block is zero and writable.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_share_huge_page_regions() {
        if !lazy_block::thp_enabled() {
            // The system's THP policy is `never`: blocks are mapped alone (the lazy test).
            let mut a = Arena::new(1 << 20);
            for _ in 0..4 * 6 {
                a.allocate_aligned((1 << 20) / 4, 16);
            }
            assert!(a.blocks.iter().all(|b| matches!(b, Block::Mapped(_, s) if *s == 1 << 20)));
            return;
        }
        let t = Arc::new(WriteBufferManagerState::new(64 << 20, false));
        let mut a = Arena::with_tracker(1 << 20, Some(t.clone()));
        // Quarter blocks (the largest request a block is shared for): four fill a block.
        let quarter = (1 << 20) / 4;
        let mut starts = Vec::new();
        for _ in 0..4 * 6 {
            let before = a.allocated;
            let p = a.allocate_aligned(quarter, 16).as_ptr() as usize;
            if a.allocated != before {
                starts.push(p); // the request started a block
            }
        }
        assert_eq!(starts.len(), 6, "six blocks");
        let region = |b: &Block| match b {
            Block::Mapped(p, size) | Block::Region(p, size) => (p.as_ptr() as usize, *size),
            _ => panic!("blocks of 1 MiB are mappings"),
        };
        // Blocks 1 and 2 are mappings of their own; blocks 3 to 6 fill two regions.
        assert_eq!(a.blocks.len(), 4);
        assert_eq!(region(&a.blocks[0]), (starts[0], 1 << 20));
        assert_eq!(region(&a.blocks[1]), (starts[1], 1 << 20));
        for (i, r) in [(2, region(&a.blocks[2])), (4, region(&a.blocks[3]))] {
            assert_eq!(r, (starts[i], HUGE_REGION));
            assert_eq!(starts[i] % HUGE_REGION, 0, "a region is 2 MiB-aligned");
            assert_eq!(starts[i + 1], starts[i] + (1 << 20), "two blocks to a region");
        }
        assert_eq!(a.allocated, 6 << 20, "blocks counted, not regions");
        assert_eq!((a.populated_to, a.populate_end), (0, 0), "a region's block is not populated ahead");
        assert_eq!(t.memory_usage(), 6 << 20, "the tracker is charged per block");
        let q = a.allocate_aligned(4096, 8);
        // SAFETY: 4096 fresh bytes of the arena (a region may be recycled: not zero-checked).
        let fresh = unsafe { std::slice::from_raw_parts_mut(q.as_ptr(), 4096) };
        fresh.fill(7);
        assert!(fresh.iter().all(|&x| x == 7));
        drop(a);
        assert_eq!(t.memory_usage(), 0);

        let mut b = Arena::new(64 << 10);
        for _ in 0..40 * 4 {
            b.allocate_aligned((64 << 10) / 4, 16);
        }
        // The first block (4 KiB), the second (64 KiB alone), then one region for 32 blocks
        // and a second one.
        assert_eq!(b.blocks.len(), 4);
        assert!(
            matches!(b.blocks[2], Block::Region(p, HUGE_REGION) if (p.as_ptr() as usize).is_multiple_of(HUGE_REGION))
        );

        let mut c = Arena::new(4 << 20);
        for _ in 0..3 * 4 {
            c.allocate_aligned((4 << 20) / 4, 16);
        }
        assert!(
            matches!(c.blocks[2], Block::Region(p, s) if s == 4 << 20 && (p.as_ptr() as usize).is_multiple_of(HUGE_REGION))
        );
    }

    /// An arena of `pool` (a pool of the test's own, so that other tests' arenas do not take
    /// its regions), charged to `tracker`.
    fn pooled(
        pool: &'static region_pool::RegionPool,
        tracker: Option<Arc<WriteBufferManagerState>>,
    ) -> Arena {
        let mut a = Arena::unregistered(1 << 20);
        a.pool = pool;
        a.tracker = tracker;
        // Regions whatever the system's THP policy (they are plain mappings where the kernel
        // has none), so the test checks the pool on every Linux machine.
        a.thp = true;
        a.registered()
    }

    /// Fills six 1 MiB blocks (the last four from two regions); returns the regions' addresses.
    fn fill_six_blocks(a: &mut Arena, byte: u8) -> Vec<usize> {
        for _ in 0..4 * 6 {
            let p = a.allocate_aligned((1 << 20) / 4, 16);
            // SAFETY: a quarter MiB just handed out at `p`.
            unsafe { std::ptr::write_bytes(p.as_ptr(), byte, (1 << 20) / 4) };
        }
        regions_of(a)
    }

    /// The addresses of `a`'s regions, in the order it took them.
    fn regions_of(a: &Arena) -> Vec<usize> {
        a.blocks
            .iter()
            .filter_map(|b| if let Block::Region(p, _) = b { Some(p.as_ptr() as usize) } else { None })
            .collect()
    }

    /// A dropped arena's regions go to the pool, as many as the arena itself held and its
    /// budget has room for; the next large arena takes them instead of mapping new ones, and
    /// gets their old bytes (not zero); the pool is emptied when its last arena drops; memory
    /// held by the pool is charged to no budget.
    #[cfg(target_os = "linux")]
    #[test]
    fn dropped_regions_are_recycled_within_bounds() {
        let pool: &'static region_pool::RegionPool = Box::leak(Box::new(region_pool::RegionPool::new()));
        // A database stays open, its memtable grown large (an arena holding regions).
        let mut keeper = pooled(pool, None);
        fill_six_blocks(&mut keeper, 1);
        let t = Arc::new(WriteBufferManagerState::new(64 << 20, false));
        let mut a = pooled(pool, Some(t.clone()));
        let first = fill_six_blocks(&mut a, 0x5A);
        assert_eq!(first.len(), 2);
        drop(a);
        assert_eq!(pool.bytes(), 2 * HUGE_REGION, "both regions kept");
        assert_eq!(t.memory_usage(), 0, "the pool's memory is no memtable's");

        let mut b = pooled(pool, Some(t.clone()));
        {
            for _ in 0..4 * 2 {
                b.allocate_aligned((1 << 20) / 4, 16); // blocks 1 and 2: mappings of their own
            }
            let p = b.allocate_aligned(64, 16).as_ptr() as usize;
            assert!(first.contains(&p), "the third block is a recycled region");
            // SAFETY: 64 bytes just handed out.
            let old = unsafe { std::slice::from_raw_parts(p as *const u8, 64) };
            if !cfg!(debug_assertions) {
                assert!(old.iter().all(|&x| x == 0x5A), "recycled memory is not cleared");
            } else {
                assert!(old.iter().all(|&x| x == 0xA5), "debug builds scribble over regions");
            }
            for _ in 0..4 * 4 - 1 {
                b.allocate_aligned((1 << 20) / 4, 16); // the rest of six blocks
            }
        }
        let mut taken = regions_of(&b);
        taken.sort();
        let mut given = first.clone();
        given.sort();
        assert_eq!(taken, given, "both regions taken back");
        assert_eq!(pool.bytes(), 0);
        assert_eq!(t.memory_usage(), 6 << 20);
        drop(b);
        assert_eq!(pool.bytes(), 2 * HUGE_REGION);

        // An arena with fewer regions gives none beyond its own: the pool already holds more.
        let mut c = pooled(pool, None);
        for _ in 0..4 * 2 {
            c.allocate_aligned((1 << 20) / 4, 16);
        }
        drop(c);
        assert_eq!(pool.bytes(), 2 * HUGE_REGION);

        // A budget with 3 MiB: the pool keeps one 2 MiB region of the four an arena gives.
        let small = Arc::new(WriteBufferManagerState::new(3 << 20, false));
        let mut d = pooled(pool, Some(small.clone()));
        let mut e = pooled(pool, Some(small.clone()));
        fill_six_blocks(&mut d, 2);
        fill_six_blocks(&mut e, 3);
        assert_eq!(pool.bytes(), 0, "d took both regions, e mapped its own");
        drop(d);
        assert_eq!(pool.bytes(), 0, "e still holds 6 MiB of a 3 MiB budget: no room");
        let mut h = pooled(pool, None);
        fill_six_blocks(&mut h, 5);
        drop(e);
        assert_eq!(pool.bytes(), HUGE_REGION, "3 MiB of room: one region kept");

        // A memtable turning immutable leaves the pool alone (the next memtable takes from
        // it); its regions come back when it drops.
        h.done_allocating();
        assert_eq!(pool.bytes(), HUGE_REGION);
        drop(h);
        assert_eq!(pool.bytes(), 2 * HUGE_REGION, "the pool keeps at most what h held in regions");

        // The last arena holding regions drops while another (a small memtable) lives: no
        // memtable grows large to take them, so the pool is emptied.
        let small_one = pooled(pool, None);
        drop(keeper);
        assert_eq!(pool.bytes(), 0, "no arena holds a region: the pool is emptied");
        let mut g = pooled(pool, None);
        fill_six_blocks(&mut g, 6);
        drop(g);
        assert_eq!(pool.bytes(), 0, "g was the only holder: nothing kept");
        drop(small_one);
        assert_eq!(pool.bytes(), 0);
        let mut f = pooled(pool, None);
        fill_six_blocks(&mut f, 4);
        drop(f);
        assert_eq!(pool.bytes(), 0, "no arena alive: nothing kept");
    }

    #[test]
    fn small_and_huge_blocks_come_from_the_heap() {
        let mut a = Arena::new(32 << 10);
        a.allocate_aligned(100, 8); // the 4 KiB first block
        a.allocate_aligned(4000, 8); // a 32 KiB block
        a.allocate_top(31_000, 8); // more than is left, and huge: a block of its own
        let sizes: Vec<usize> =
            a.blocks.iter().map(|b| if let Block::Heap(_, l) = b { l.size() } else { 0 }).collect();
        assert_eq!(sizes, [4096, 32 << 10, 31_008]);
        // An odd block size.
        let mut b = Arena::new(5000);
        for _ in 0..5 {
            b.allocate_aligned(1000, 8); // four fill the first block, the fifth starts one
        }
        assert_eq!(b.blocks.len(), 2);
        assert!(matches!(b.blocks[1], Block::Heap(_, l) if l.size() == 5008), "5008-byte blocks");
    }

    #[test]
    fn top_and_bottom_allocations_share_a_block_without_overlap() {
        let mut a = Arena::new(4096);
        let low = a.allocate_aligned(100, 8).as_ptr() as usize;
        let high = a.allocate_top(50, 1).as_ptr() as usize;
        assert!(high >= low + 100, "a top allocation lies above the bottom ones");
        let low2 = a.allocate_aligned(100, 8).as_ptr() as usize;
        assert_eq!(low2, (low + 100).next_multiple_of(8), "bottom allocations stay packed");
        let high2 = a.allocate_top(30, 1).as_ptr() as usize;
        assert_eq!(high2 + 30, high, "top allocations grow downwards, packed");
        assert_eq!(a.memory_usage(), 104 + 100 + 50 + 30);
        // Filling the block moves both kinds to a new one; no byte is handed out twice.
        let mut spans = vec![(low, 100), (high, 50), (low2, 100), (high2, 30)];
        for i in 0..400usize {
            let (p, n) = if i % 2 == 0 {
                {
                    let p = a.allocate_top(1 + i % 90, 1 << (i % 5)).as_ptr() as usize;
                    assert_eq!(p % (1 << (i % 5)), 0);
                    (p, 1 + i % 90)
                }
            } else {
                (a.allocate_aligned(1 + i % 70, 8).as_ptr() as usize, 1 + i % 70)
            };
            // SAFETY: the arena handed out these `n` bytes at `p` to this caller alone, and it
            // lives (with its blocks) until the end of the test.
            let s = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, n) };
            assert!(s.iter().all(|&b| b == 0), "arena memory must start zeroed");
            s.fill(0xAB);
            spans.push((p, n));
        }
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlapping allocations");
        }
        let big = a.allocate_top(10_000, 8).as_ptr() as usize;
        assert!(spans.iter().all(|&(p, n)| p + n <= big || p >= big + 10_000));
    }

    #[test]
    fn tracker_is_charged_per_block_and_freed_on_drop() {
        let t = Arc::new(WriteBufferManagerState::new(1 << 20, false));
        let mut a = Arena::with_tracker(1 << 16, Some(t.clone()));
        a.allocate_aligned(100, 8); // the 4 KiB first block
        assert_eq!(t.memory_usage(), 4096);
        assert_eq!(t.mutable_memtable_memory_usage(), 4096);
        a.allocate_aligned(4000, 8); // past the first block: a 64 KiB block
        assert_eq!(t.memory_usage(), 4096 + (1 << 16));
        a.done_allocating();
        assert_eq!(t.mutable_memtable_memory_usage(), 0);
        assert_eq!(t.memory_usage(), 4096 + (1 << 16));
        a.allocate_aligned(100_000, 8); // after done: used, never active
        assert_eq!(t.mutable_memtable_memory_usage(), 0);
        drop(a);
        assert_eq!(t.memory_usage(), 0);
        let b = Arena::with_tracker(1 << 16, Some(t.clone()));
        drop(b);
        assert_eq!(t.memory_usage(), 0);
    }
}
