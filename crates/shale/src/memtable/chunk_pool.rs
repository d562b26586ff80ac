//! A process-wide pool of 2 MiB chunks that small memtable arena blocks (under 64 KiB: the
//! first block of every arena) are carved from, so that memtables spread over many column
//! families share a few huge pages (TLB reach) for their first entries.
//!
//! ```text
//! chunk (CHUNK = 2 MiB, 2 MiB-aligned; on Linux mmap'd and madvise(MADV_HUGEPAGE))
//! +---------+---------+---------+-- ... --+---------+--------------+
//! | slot 0  | slot 1  | slot 2  |         | slot n-1| unused tail  |
//! +---------+---------+---------+-- ... --+---------+--------------+
//!   every slot is one arena block of the chunk's class (its block size); n = CHUNK / class
//! ```
//! With a thousand memtables written at random, each write lands in a different arena:
//! with 4 KiB pages every write also misses the TLB (100 MiB of memtables are 25,000
//! pages), with 2 MiB pages the same memory is about 50 TLB entries. The kernel backs a
//! chunk by one huge page when transparent huge pages are `always`, or `madvise` (the
//! chunk asks for it); otherwise by small pages, as any other memory (nothing fails).
//!
//! A chunk holds blocks of one size only (its class), found in a free bitmap. A block size
//! is served when it is a multiple of 4 KiB, at most a chunk, and leaves at most an eighth
//! of a chunk unused ([`serves`]); other sizes (a huge entry's own block) come from the
//! global allocator. Blocks go back to their chunk when their arena drops; a chunk whose
//! blocks are all free is kept for any class (at most [`KEPT_EMPTY`] of them) or unmapped.
//! Memory is handed out zeroed: a slot never used since its chunk was mapped is zero
//! already, any other is cleared on the way out.
//!
//! The pool is behind one mutex: it is taken once per arena block (at least 4 KiB of
//! entries), never per entry. Memory accounting is the arena's: a block counts as its
//! size, whatever chunk it lies in; the empty chunks kept are not counted, as memory the
//! allocator keeps is not.
//!
//! Faulting a fresh chunk in (the kernel zeroing 2 MiB) is slow: in a VM it runs at about
//! 0.5 GB/s, and with a thousand memtables filling at once every chunk is fresh. So a
//! background thread, the *filler*, keeps a reserve of up to [`RESERVE`] chunks mapped and
//! already faulted in (`MADV_POPULATE_WRITE`, or a write per page where the kernel lacks
//! it); a chunk the pool needs comes from the reserve, and only when the reserve is empty
//! (the filler fell behind, or could not map) is one mapped on the caller's thread, as
//! before. The pool wakes the filler when the reserve drops to [`LOW_WATER`]. Memory held:
//! at most `RESERVE` chunks (4 MiB) beyond what arenas use, besides the `KEPT_EMPTY` empty
//! chunks. The filler starts the first time a chunk is needed while an arena is alive
//! (arenas register as users, [`add_user`] / [`remove_user`]); when the last arena drops it
//! is stopped and joined, and the reserve is unmapped, so neither outlives the last arena.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

/// The chunk size and alignment: one x86-64 / AArch64 (4 KiB granule) huge page.
pub const CHUNK: usize = 2 << 20;
/// Block sizes the pool serves are multiples of this.
const PAGE: usize = 4096;
/// The most slots a chunk has (4 KiB blocks).
const MAX_SLOTS: usize = CHUNK / PAGE;
const WORDS: usize = MAX_SLOTS / 64;
/// Empty chunks kept mapped for reuse.
pub const KEPT_EMPTY: usize = 4;
/// The most chunks the filler keeps faulted in, ready to hand out (2: 4 MiB). The pool
/// serves blocks under 64 KiB only (the arenas' first blocks; larger ones are mapped lazily,
/// see `arena.rs`): a chunk holds 512 first blocks.
pub const RESERVE: usize = 2;
/// The filler is woken when the reserve holds this many chunks or fewer.
pub const LOW_WATER: usize = RESERVE / 2;

/// Whether blocks of `size` bytes come from the pool.
#[inline]
pub fn serves(size: usize) -> bool {
    size >= PAGE && size.is_multiple_of(PAGE) && size <= CHUNK && CHUNK % size <= CHUNK / 8
}

struct Chunk {
    /// Block size of its slots (0: empty and unassigned).
    class: usize,
    slots: usize,
    /// Bit i: slot i is free.
    free: [u64; WORDS],
    nfree: usize,
    /// Bit i: slot i was handed out since the chunk was mapped (must be cleared for reuse).
    dirty: [u64; WORDS],
}

impl Chunk {
    fn assign(&mut self, class: usize) {
        let slots = CHUNK / class;
        self.class = class;
        self.slots = slots;
        self.free = [0; WORDS];
        for i in 0..slots {
            self.free[i / 64] |= 1 << (i % 64);
        }
        self.nfree = slots;
    }

    /// Takes a free slot: its index.
    fn take(&mut self) -> Option<usize> {
        let w = self.free.iter().position(|&w| w != 0)?;
        let bit = self.free[w].trailing_zeros() as usize;
        self.free[w] &= !(1 << bit);
        self.nfree -= 1;
        Some(w * 64 + bit)
    }
}

#[derive(Default)]
struct Pool {
    /// Every mapped chunk, by base address.
    chunks: HashMap<usize, Chunk>,
    /// Per class, the chunks with a free slot (some used, none empty).
    partial: HashMap<usize, Vec<usize>>,
    /// Chunks with no block handed out, not assigned to a class.
    empty: Vec<usize>,
    /// Chunks mapped and faulted in by the filler, zero, not yet in `chunks`.
    ready: Vec<usize>,
    /// Live arenas ([`add_user`]).
    users: usize,
    /// The running filler thread, if any.
    filler: Option<Filler>,
    /// The filler's last map failed: it waits until the pool next needs a chunk.
    map_failed: bool,
}

struct Filler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// A pool and the conditions its filler waits on and signals.
struct PoolCell {
    state: Mutex<Option<Pool>>,
    /// Wakes the filler (reserve low, or stop).
    wake: Condvar,
    /// Signalled by the filler after each chunk it adds (tests wait on it).
    filled: Condvar,
}

impl PoolCell {
    const fn new() -> PoolCell {
        PoolCell { state: Mutex::new(None), wake: Condvar::new(), filled: Condvar::new() }
    }

    fn allocate(&'static self, size: usize) -> Option<NonNull<u8>> {
        debug_assert!(serves(size));
        let (p, zero) = {
            let mut guard = self.state.lock();
            let pool = guard.get_or_insert_with(Pool::default);
            if pool.partial.get(&size).is_none_or(|v| v.is_empty()) && pool.empty.is_empty() {
                self.want_chunk(pool);
            }
            pool.take(size)?
        };
        if zero {
            // SAFETY: `p` starts a slot of `size` bytes inside a mapped chunk, handed to this
            // caller alone (the pool will not hand it out again until it is released).
            unsafe { std::ptr::write_bytes(p.as_ptr(), 0, size) };
        }
        Some(p)
    }

    /// The pool is about to take a fresh chunk: starts the filler if an arena is alive and
    /// none runs, or wakes it when the reserve is low.
    fn want_chunk(&'static self, pool: &mut Pool) {
        if pool.users == 0 {
            return;
        }
        if pool.filler.is_none() {
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let spawned =
                std::thread::Builder::new().name("shale-chunk-fill".into()).spawn(move || self.fill(&flag));
            // On failure there is no filler: chunks are mapped on the caller's thread.
            if let Ok(handle) = spawned {
                pool.filler = Some(Filler { stop, handle });
            }
        } else if pool.ready.len() <= LOW_WATER {
            pool.map_failed = false;
            self.wake.notify_one();
        }
    }

    /// The filler's loop: keeps `ready` at [`RESERVE`] chunks until `stop` is set.
    fn fill(&'static self, stop: &AtomicBool) {
        let mut guard = self.state.lock();
        loop {
            if stop.load(Ordering::Acquire) {
                return;
            }
            let Some(pool) = guard.as_mut() else { return };
            if pool.ready.len() >= RESERVE || pool.map_failed {
                self.wake.wait(&mut guard);
                continue;
            }
            let chunk = parking_lot::MutexGuard::unlocked(&mut guard, || {
                let b = map_chunk()?;
                prefault(b);
                Some(b)
            });
            let Some(pool) = guard.as_mut() else { return };
            match chunk {
                Some(b) if !stop.load(Ordering::Acquire) => pool.ready.push(b),
                Some(b) => {
                    unmap_chunk(b);
                    return;
                }
                None => pool.map_failed = true,
            }
            self.filled.notify_all();
        }
    }

    fn release(&self, p: NonNull<u8>, size: usize) {
        let mut guard = self.state.lock();
        if let Some(pool) = guard.as_mut() {
            pool.give_back(p.as_ptr() as usize, size);
        }
    }

    fn add_user(&self) {
        let mut guard = self.state.lock();
        guard.get_or_insert_with(Pool::default).users += 1;
    }

    fn remove_user(&self) {
        let (filler, reserve) = {
            let mut guard = self.state.lock();
            let Some(pool) = guard.as_mut() else { return };
            pool.users = pool.users.saturating_sub(1);
            if pool.users > 0 {
                return;
            }
            (pool.filler.take(), std::mem::take(&mut pool.ready))
        };
        if let Some(f) = filler {
            f.stop.store(true, Ordering::Release);
            self.wake.notify_all();
            // The filler holds no lock while mapping and returns at its next check; a
            // panic in it (none is expected) leaves nothing to clean up.
            let _ = f.handle.join();
        }
        for b in reserve {
            unmap_chunk(b);
        }
    }
}

static POOL: PoolCell = PoolCell::new();

/// A zeroed block of `size` bytes (for which [`serves`] holds), aligned to 4 KiB; `None`
/// when no chunk can be mapped (the caller then uses the global allocator).
pub fn allocate(size: usize) -> Option<NonNull<u8>> {
    POOL.allocate(size)
}

/// Gives back a block from [`allocate`] with the same `size`.
///
/// # Safety
/// `p` came from `allocate(size)`, is released once, and is not used afterwards.
pub unsafe fn release(p: NonNull<u8>, size: usize) {
    POOL.release(p, size)
}

/// An arena came to life: while any is alive the filler may run.
pub fn add_user() {
    POOL.add_user()
}

/// An arena dropped; the last one stops and joins the filler and unmaps the reserve.
pub fn remove_user() {
    POOL.remove_user()
}

impl Pool {
    /// A free slot of class `size` and whether it must be zeroed.
    fn take(&mut self, size: usize) -> Option<(NonNull<u8>, bool)> {
        let base = match self.partial.get(&size).and_then(|v| v.last().copied()) {
            Some(b) => b,
            None => {
                let b = match self.empty.pop() {
                    Some(b) => b,
                    None => {
                        let b = match self.ready.pop() {
                            Some(b) => b,
                            None => map_chunk()?,
                        };
                        let fresh =
                            Chunk { class: 0, slots: 0, free: [0; WORDS], nfree: 0, dirty: [0; WORDS] };
                        self.chunks.insert(b, fresh);
                        b
                    }
                };
                let c = self.chunks.get_mut(&b)?;
                if c.class != 0 && c.class != size {
                    // Slots of another size: any byte may have been used.
                    c.dirty = [u64::MAX; WORDS];
                }
                c.assign(size);
                self.partial.entry(size).or_default().push(b);
                b
            }
        };
        let c = self.chunks.get_mut(&base)?;
        let slot = c.take()?;
        if c.nfree == 0 {
            if let Some(v) = self.partial.get_mut(&size) {
                v.retain(|&x| x != base);
            }
        }
        let dirty = c.dirty[slot / 64] & (1 << (slot % 64)) != 0;
        c.dirty[slot / 64] |= 1 << (slot % 64);
        NonNull::new((base + slot * size) as *mut u8).map(|p| (p, dirty))
    }

    fn give_back(&mut self, addr: usize, size: usize) {
        let base = addr & !(CHUNK - 1);
        let Some(c) = self.chunks.get_mut(&base) else { return };
        debug_assert_eq!(c.class, size);
        let slot = (addr - base) / size;
        c.free[slot / 64] |= 1 << (slot % 64);
        c.nfree += 1;
        let (nfree, slots) = (c.nfree, c.slots);
        if nfree == 1 && slots > 1 {
            self.partial.entry(size).or_default().push(base);
        }
        if nfree == slots {
            if let Some(v) = self.partial.get_mut(&size) {
                v.retain(|&x| x != base);
            }
            if self.empty.len() < KEPT_EMPTY {
                self.empty.push(base);
            } else {
                self.chunks.remove(&base);
                unmap_chunk(base);
            }
        }
    }
}

/// Maps one zeroed chunk, CHUNK-aligned; its base address.
#[cfg(target_os = "linux")]
fn map_chunk() -> Option<usize> {
    let len = 2 * CHUNK;
    // SAFETY: an anonymous private mapping at an address the kernel picks; no existing
    // memory is affected.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let base = start.next_multiple_of(CHUNK);
    // SAFETY: both ranges lie inside the mapping just made, which nothing else uses; what
    // stays mapped is [base, base + CHUNK).
    unsafe {
        if base > start {
            libc::munmap(p, base - start);
        }
        let tail = start + len - (base + CHUNK);
        if tail > 0 {
            libc::munmap((base + CHUNK) as *mut libc::c_void, tail);
        }
        // A hint: with transparent huge pages `never` (or an old kernel) it fails and the
        // chunk stays on small pages.
        libc::madvise(base as *mut libc::c_void, CHUNK, libc::MADV_HUGEPAGE);
    }
    Some(base)
}

/// Faults a fresh chunk in (the kernel zeroes it), so that its first use costs no page
/// fault; its bytes stay zero.
#[cfg(target_os = "linux")]
fn prefault(base: usize) {
    // SAFETY: `base` is a chunk of CHUNK bytes just mapped by `map_chunk`, used by no one
    // else yet; populating it only faults its pages in.
    let r = unsafe { libc::madvise(base as *mut libc::c_void, CHUNK, libc::MADV_POPULATE_WRITE) };
    if r != 0 {
        touch_pages(base);
    }
}

#[cfg(not(target_os = "linux"))]
fn prefault(base: usize) {
    touch_pages(base);
}

/// Writes a zero to every page of a fresh chunk (faulting each in, keeping it zero).
fn touch_pages(base: usize) {
    for off in (0..CHUNK).step_by(PAGE) {
        // SAFETY: `base + off` lies inside the chunk, which no one else uses yet; the byte
        // was zero and stays zero.
        unsafe { std::ptr::write_volatile((base + off) as *mut u8, 0) };
    }
}

#[cfg(target_os = "linux")]
fn unmap_chunk(base: usize) {
    // SAFETY: `base` is a chunk mapped by `map_chunk` with no block handed out; the pool
    // forgot it before this call.
    unsafe { libc::munmap(base as *mut libc::c_void, CHUNK) };
}

#[cfg(not(target_os = "linux"))]
use heap_chunks::{map_chunk, unmap_chunk};

/// The portable source of chunks: aligned, zeroed memory from the global allocator (used
/// where there is no `mmap` + `madvise`; compiled and tested everywhere).
#[cfg_attr(target_os = "linux", allow(dead_code))]
mod heap_chunks {
    use super::CHUNK;

    fn layout() -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(CHUNK, CHUNK).ok()
    }

    /// One zeroed chunk, CHUNK-aligned; its base address.
    pub(super) fn map_chunk() -> Option<usize> {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout()?) };
        (!p.is_null()).then_some(p as usize)
    }

    pub(super) fn unmap_chunk(base: usize) {
        if let Some(l) = layout() {
            // SAFETY: `base` came from `map_chunk` (the same layout) and is freed once.
            unsafe { std::alloc::dealloc(base as *mut u8, l) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_page_multiples_that_tile_a_chunk() {
        assert!(serves(4096));
        assert!(serves(128 << 10));
        assert!(serves(1 << 20));
        assert!(serves(CHUNK));
        assert!(serves(12 << 10)); // 170 slots, 8 KiB unused
        assert!(!serves(768 << 10)); // two slots leave 512 KiB unused
        assert!(!serves(4096 + 16));
        assert!(!serves(2048));
        assert!(!serves(CHUNK + PAGE));
    }

    #[test]
    fn both_chunk_sources_give_aligned_zeroed_chunks() {
        for (map, unmap) in [
            (map_chunk as fn() -> Option<usize>, unmap_chunk as fn(usize)),
            (heap_chunks::map_chunk, heap_chunks::unmap_chunk),
        ] {
            let base = map().expect("chunk");
            assert_eq!(base % CHUNK, 0);
            // SAFETY: a fresh chunk of CHUNK bytes, ours until unmapped.
            let s = unsafe { std::slice::from_raw_parts_mut(base as *mut u8, CHUNK) };
            assert!(s.iter().all(|&b| b == 0));
            s.fill(1);
            unmap(base);
        }
    }

    /// A pool of its own (the process-wide one is shared by every test running at once).
    fn private_pool() -> &'static PoolCell {
        Box::leak(Box::new(PoolCell::new()))
    }

    /// Waits until the filler has filled the reserve (or failed to map); the reserve.
    fn wait_full(cell: &'static PoolCell) -> Vec<usize> {
        let mut guard = cell.state.lock();
        loop {
            let pool = guard.as_mut().expect("pool");
            assert!(!pool.map_failed, "the filler could not map a chunk");
            if pool.ready.len() >= RESERVE {
                return pool.ready.clone();
            }
            cell.filled.wait(&mut guard);
        }
    }

    #[test]
    fn the_filler_keeps_faulted_chunks_ready_and_stops_with_the_last_user() {
        let cell = private_pool();
        // No user: chunks are mapped on the caller's thread and no filler starts.
        let p = cell.allocate(CHUNK).expect("chunk");
        assert!(cell.state.lock().as_ref().expect("pool").filler.is_none());
        cell.release(p, CHUNK);

        cell.add_user();
        cell.add_user();
        let mut held = Vec::new();
        // Chunk-sized blocks: every allocation past the kept empty chunk needs a fresh one.
        for _ in 0..2 {
            held.push(cell.allocate(CHUNK).expect("chunk"));
        }
        let ready = wait_full(cell);
        assert_eq!(ready.len(), RESERVE);
        // The reserve is full and nothing is free elsewhere: the next chunk is a ready one.
        let p = cell.allocate(CHUNK).expect("chunk");
        assert!(ready.contains(&(p.as_ptr() as usize)), "a fresh chunk comes from the reserve");
        // SAFETY: the pool handed out CHUNK bytes at `p`.
        let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), CHUNK) };
        assert!(s.iter().all(|&b| b == 0), "reserve chunks are zero");
        s.fill(7);
        held.push(p);
        // Taking from the reserve below its low water mark has the filler refill it.
        for _ in 0..RESERVE - LOW_WATER {
            held.push(cell.allocate(CHUNK).expect("chunk"));
        }
        assert_eq!(wait_full(cell).len(), RESERVE);
        for p in held {
            cell.release(p, CHUNK);
        }

        // One user left: the filler keeps running; the last one stops it and unmaps the reserve.
        cell.remove_user();
        assert!(cell.state.lock().as_ref().expect("pool").filler.is_some());
        cell.remove_user();
        let mut guard = cell.state.lock();
        let pool = guard.as_mut().expect("pool");
        assert!(pool.filler.is_none(), "the filler was joined");
        assert!(pool.ready.is_empty(), "the reserve was unmapped");
        assert!(pool.empty.len() <= KEPT_EMPTY);
        for b in pool.empty.drain(..) {
            pool.chunks.remove(&b);
            unmap_chunk(b);
        }
        assert!(pool.chunks.is_empty(), "every block was given back");
    }

    #[test]
    fn blocks_are_zeroed_disjoint_and_reused() {
        let size = 64 << 10;
        let mut blocks = Vec::new();
        for i in 0..40usize {
            let p = allocate(size).expect("chunk");
            assert_eq!(p.as_ptr() as usize % PAGE, 0);
            // SAFETY: the pool handed out `size` bytes at `p`.
            let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
            assert!(s.iter().all(|&b| b == 0), "pool blocks start zeroed");
            s.fill(i as u8 + 1);
            blocks.push(p);
        }
        let mut addrs: Vec<usize> = blocks.iter().map(|p| p.as_ptr() as usize).collect();
        addrs.sort();
        for w in addrs.windows(2) {
            assert!(w[0] + size <= w[1], "overlapping blocks");
        }
        for (i, p) in blocks.iter().enumerate() {
            // SAFETY: still handed out.
            let s = unsafe { std::slice::from_raw_parts(p.as_ptr(), size) };
            assert!(s.iter().all(|&b| b == i as u8 + 1), "block overwritten");
        }
        for p in blocks.drain(..) {
            // SAFETY: from `allocate(size)`, released once.
            unsafe { release(p, size) };
        }
        // Used memory comes back zeroed, in this class and in another.
        for class in [size, 12 << 10, 4096] {
            let mut again = Vec::new();
            for _ in 0..40 {
                let p = allocate(class).expect("chunk");
                // SAFETY: as above.
                let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), class) };
                assert!(s.iter().all(|&b| b == 0), "reused blocks are zeroed");
                s.fill(0xEE);
                again.push(p);
            }
            for p in again {
                // SAFETY: as above.
                unsafe { release(p, class) };
            }
        }
    }
}
