//! Buffers of uncompressed blocks, handed back when a block is dropped and taken again for
//! the next block this thread uncompresses.
//!
//! ```text
//!   read + uncompress:  take(n)  --> pooled buffer of capacity n..=n + n/8, else a new one
//!   block dropped:      give(v)  --> kept when this thread takes buffers and has room,
//!                                    its first 16 KiB asked of the memory at once
//!   per thread:         at most MAX_KEPT buffers, each at most MAX_BYTES of capacity
//! ```
//!
//! Why: a Get on a database larger than its block cache reads a data block from the file at
//! almost every lookup, and its insert into the cache evicts an older block, cold in the
//! processor's caches. glibc's `free` of that block's buffer (a chunk above its per-thread
//! cache's sizes) reads the chunk's header and its neighbours' to coalesce them, and a
//! profile of readrandom with an 8 MiB cache (2M keys) put that `free` at 6% of the process's
//! cycles. Handing the buffer to the next uncompress of the same thread skips both the free
//! and the malloc. The slack bound keeps a block's memory within 1/8 of the bytes the cache
//! charges for it (its length); a thread that never takes a buffer (one that only drops
//! blocks) keeps none, so no thread holds more than MAX_KEPT idle buffers.

use std::cell::RefCell;

/// The most buffers a thread keeps.
const MAX_KEPT: usize = 8;
/// The largest buffer kept (bytes of capacity): larger blocks are allocated and freed, so a
/// thread keeps at most 256 KiB.
const MAX_BYTES: usize = 32 << 10;
/// The bytes of a buffer given back that are loaded ahead of its next use.
const PREFETCH_BYTES: usize = 16 << 10;
/// The smallest buffer kept: below it glibc's per-thread cache already serves the size.
const MIN_BYTES: usize = 1 << 10;

struct Pool {
    bufs: Vec<Vec<u8>>,
    /// Whether this thread has taken a buffer: only such a thread keeps what it is given.
    taking: bool,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { bufs: Vec::new(), taking: false }) };
}

/// An empty buffer with room for at least `n` bytes (and at most `n + n / 8`): one this
/// thread was given back, else a new one of exactly `n`.
pub fn take(n: usize) -> Vec<u8> {
    if (MIN_BYTES..=MAX_BYTES).contains(&n) {
        let found = POOL
            .try_with(|p| {
                let mut p = p.try_borrow_mut().ok()?;
                p.taking = true;
                let max = n + n / 8;
                let i = p.bufs.iter().position(|b| (n..=max).contains(&b.capacity()))?;
                Some(p.bufs.swap_remove(i))
            })
            .ok()
            .flatten();
        if let Some(b) = found {
            return b;
        }
    }
    Vec::with_capacity(n)
}

/// Hands a block's buffer back for this thread's next `take`; freed when the thread takes
/// no buffers, has MAX_KEPT already, or the buffer is outside the sizes kept.
pub fn give(mut v: Vec<u8>) {
    if !(MIN_BYTES..=MAX_BYTES).contains(&v.capacity()) {
        return;
    }
    v.clear();
    let _ = POOL.try_with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return };
        if p.taking && p.bufs.len() < MAX_KEPT {
            // The buffer comes from a block evicted from the cache, long unread: its lines
            // are asked for now so that the next uncompress, a Get later, writes into
            // cached lines (a profile of readrandom with an 8 MiB cache had the decoder's
            // stores to the reused buffer at more than half of its cycles).
            let base = v.as_ptr();
            for off in (0..v.capacity().min(PREFETCH_BYTES)).step_by(64) {
                crate::sys::prefetch(base.wrapping_add(off));
            }
            p.bufs.push(std::mem::take(&mut v));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_within_the_slack() {
        // A thread of its own: the pool is per thread.
        std::thread::spawn(|| {
            // Given before any take: not kept.
            give(Vec::with_capacity(4096));
            let a = take(4096);
            assert_eq!(a.capacity(), 4096);
            let ptr = a.as_ptr();
            give(a);
            // Within the slack: the same buffer, empty.
            let b = take(4000);
            assert_eq!((b.as_ptr(), b.len()), (ptr, 0));
            give(b);
            // Too small, or more than 1/8 larger than asked: a new buffer.
            let c = take(5000);
            assert_ne!(c.as_ptr(), ptr);
            let d = take(2000);
            assert_ne!(d.as_ptr(), ptr);
            assert_eq!(d.capacity(), 2000);
            // At most MAX_KEPT are kept; sizes outside the bounds are never kept.
            for _ in 0..MAX_KEPT + 4 {
                give(Vec::with_capacity(8192));
            }
            give(Vec::with_capacity(MAX_BYTES + 1));
            POOL.with(|p| {
                let p = p.borrow();
                assert_eq!(p.bufs.len(), MAX_KEPT);
                assert!(p.bufs.iter().all(|b| b.capacity() <= MAX_BYTES && b.is_empty()));
            });
        })
        .join()
        .unwrap();
    }
}
