//! A process-wide pool of 2 MiB chunks that memtable arena blocks are carved from, so
//! that memtables spread over many column families share a few huge pages (TLB reach).
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

use std::collections::HashMap;
use std::ptr::NonNull;

use parking_lot::Mutex;

/// The chunk size and alignment: one x86-64 / AArch64 (4 KiB granule) huge page.
pub const CHUNK: usize = 2 << 20;
/// Block sizes the pool serves are multiples of this.
const PAGE: usize = 4096;
/// The most slots a chunk has (4 KiB blocks).
const MAX_SLOTS: usize = CHUNK / PAGE;
const WORDS: usize = MAX_SLOTS / 64;
/// Empty chunks kept mapped for reuse.
pub const KEPT_EMPTY: usize = 4;

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
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

/// A zeroed block of `size` bytes (for which [`serves`] holds), aligned to 4 KiB; `None`
/// when no chunk can be mapped (the caller then uses the global allocator).
pub fn allocate(size: usize) -> Option<NonNull<u8>> {
    debug_assert!(serves(size));
    let (p, zero) = {
        let mut guard = POOL.lock();
        let pool = guard.get_or_insert_with(Pool::default);
        pool.take(size)?
    };
    if zero {
        // SAFETY: `p` starts a slot of `size` bytes inside a mapped chunk, handed to this
        // caller alone (the pool will not hand it out again until it is released).
        unsafe { std::ptr::write_bytes(p.as_ptr(), 0, size) };
    }
    Some(p)
}

/// Gives back a block from [`allocate`] with the same `size`.
///
/// # Safety
/// `p` came from `allocate(size)`, is released once, and is not used afterwards.
pub unsafe fn release(p: NonNull<u8>, size: usize) {
    let mut guard = POOL.lock();
    if let Some(pool) = guard.as_mut() {
        pool.give_back(p.as_ptr() as usize, size);
    }
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
                        let b = map_chunk()?;
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
