//! A column family's SuperVersion cached per thread (RocksDB's `ColumnFamilyData::local_sv_`,
//! `GetThreadLocalSuperVersion` / `ReturnThreadLocalSuperVersion`).
//!
//! A point read needs the family's current SuperVersion for the length of one call. Taken
//! from `CfHandle::super_version` it costs a shared lock and a reference count, four atomic
//! read-modify-writes on two cache lines every reader thread shares, which bounce between
//! cores at every Get. Here each thread keeps, per family, a slot holding one reference to
//! the SuperVersion it read last; a read borrows it with two atomic operations on the
//! thread's own slot:
//!
//! ```text
//!   slot: EMPTY (null) | IN_USE | ptr (Arc::into_raw of the SuperVersion, one reference)
//!
//!   acquire:  p = swap(slot, IN_USE)           p == EMPTY: take the current one (lock, clone)
//!   release:  cas(slot, IN_USE -> p)           failed (scraped meanwhile): drop p's reference
//!   install:  new SuperVersion stored, then every thread's slot swapped to EMPTY and the
//!             references found there dropped ("scraped"); a slot IN_USE is left EMPTY, so
//!             its thread's release fails and drops its reference itself
//! ```
//!
//! Only a slot's own thread ever stores IN_USE or a pointer in it; other threads only swap
//! it to EMPTY (the installer, a family going away, the thread's exit). So a reference is
//! owned by exactly one party at a time: the slot, or the reader between its swap and its
//! release. A read therefore sees a SuperVersion no older than the last one whose install
//! had finished when the read began, as with the lock (the installer scrapes before
//! `install` returns, and so before a write may go into a memtable it installed).
//!
//! A thread that reads the same family again while a read of it is under way (a merge
//! operator or comparator calling back into the database) finds its slot IN_USE and takes
//! a plain reference for the inner read, leaving the slot alone.
//!
//! Slots are found by index: each family's cache draws an index from a process-wide pool
//! (given back when the family's handle goes), and each thread keeps a vector of slots by
//! that index. A slot names the cache it belongs to (a number never reused), so a thread's
//! slot left from a family that went away is replaced, not reused, when its index returns.
//! When a thread exits, its slots are emptied and their references dropped.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::cf::SuperVersion;

/// A slot's marker while its thread reads through the reference it held. Not a pointer
/// `Arc::into_raw` can return (those are aligned, non-null, past the counts).
fn in_use() -> *mut SuperVersion {
    std::ptr::dangling_mut::<SuperVersion>()
}

/// One thread's cached reference for one family.
pub struct Slot {
    /// EMPTY (null), IN_USE, or a reference made by `Arc::into_raw`.
    ptr: AtomicPtr<SuperVersion>,
    /// The `LocalSv::id` of the cache the slot belongs to.
    owner: u64,
    /// The thread is gone: the cache forgets the slot at its next scrape.
    dead: AtomicBool,
}

impl Slot {
    /// Swaps the slot to EMPTY and drops the reference it held, if any.
    fn scrape(&self) {
        let p = self.ptr.swap(std::ptr::null_mut(), Ordering::AcqRel);
        release_raw(p);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.scrape();
    }
}

/// Drops the reference `p` stands for, if it is one (not EMPTY or IN_USE).
fn release_raw(p: *mut SuperVersion) {
    if !p.is_null() && p != in_use() {
        // SAFETY: every pointer other than EMPTY and IN_USE stored in a slot or held by a
        // guard came from `Arc::into_raw` and stands for one reference, owned by whoever
        // took it out of the slot (by swap), which is the caller here: dropped once.
        drop(unsafe { Arc::from_raw(p as *const SuperVersion) });
    }
}

/// Indices handed to caches, and those given back.
struct IndexPool {
    next: usize,
    free: Vec<usize>,
}

static POOL: Mutex<IndexPool> = Mutex::new(IndexPool { next: 0, free: Vec::new() });
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// This thread's slots, by cache index; emptied when the thread exits.
struct ThreadSlots(Vec<Option<Arc<Slot>>>);

impl Drop for ThreadSlots {
    fn drop(&mut self) {
        for s in self.0.iter().flatten() {
            s.dead.store(true, Ordering::Release);
            s.scrape();
        }
    }
}

thread_local! {
    static SLOTS: RefCell<ThreadSlots> = const { RefCell::new(ThreadSlots(Vec::new())) };
}

/// One family's per-thread SuperVersion cache.
pub struct LocalSv {
    index: usize,
    id: u64,
    /// Every live thread's slot of this cache (to scrape them at an install).
    slots: Mutex<Vec<Arc<Slot>>>,
}

impl Default for LocalSv {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalSv {
    pub fn new() -> LocalSv {
        let index = {
            let mut pool = POOL.lock();
            match pool.free.pop() {
                Some(i) => i,
                None => {
                    pool.next += 1;
                    pool.next - 1
                }
            }
        };
        LocalSv { index, id: NEXT_ID.fetch_add(1, Ordering::Relaxed), slots: Mutex::new(Vec::new()) }
    }

    /// Empties every thread's slot, dropping the references they held (call after a new
    /// SuperVersion is in place, before anyone may rely on reading it).
    pub fn scrape(&self) {
        let mut slots = self.slots.lock();
        slots.retain(|s| !s.dead.load(Ordering::Acquire));
        for s in slots.iter() {
            s.scrape();
        }
    }

    /// This thread's slot, made (and registered) at its first use; None while the thread is
    /// exiting (its slots are gone).
    fn slot(&self) -> Option<Arc<Slot>> {
        SLOTS
            .try_with(|t| {
                let mut t = t.try_borrow_mut().ok()?;
                let v = &mut t.0;
                if let Some(Some(s)) = v.get(self.index) {
                    if s.owner == self.id {
                        return Some(s.clone());
                    }
                }
                if v.len() <= self.index {
                    v.resize(self.index + 1, None);
                }
                let s = Arc::new(Slot {
                    ptr: AtomicPtr::new(std::ptr::null_mut()),
                    owner: self.id,
                    dead: AtomicBool::new(false),
                });
                // A slot of a family gone before (same index): emptied, then forgotten.
                if let Some(old) = v[self.index].replace(s.clone()) {
                    old.dead.store(true, Ordering::Release);
                    old.scrape();
                }
                self.slots.lock().push(s.clone());
                Some(s)
            })
            .ok()
            .flatten()
    }

    /// The SuperVersion for one read on this thread: the one its slot holds, or `current()`
    /// when the slot is empty (and then kept in it).
    #[inline]
    pub fn acquire(&self, current: impl FnOnce() -> Arc<SuperVersion>) -> SvRef {
        let Some(slot) = self.slot() else { return SvRef::Owned(current()) };
        // Only this thread stores IN_USE: seeing it, this is a read within a read.
        if slot.ptr.load(Ordering::Acquire) == in_use() {
            return SvRef::Owned(current());
        }
        let mut p = slot.ptr.swap(in_use(), Ordering::AcqRel);
        if p.is_null() {
            p = Arc::into_raw(current()) as *mut SuperVersion;
        }
        SvRef::Slot { slot, ptr: p }
    }
}

impl Drop for LocalSv {
    fn drop(&mut self) {
        for s in self.slots.get_mut().drain(..) {
            s.dead.store(true, Ordering::Release);
            s.scrape();
        }
        POOL.lock().free.push(self.index);
    }
}

/// A SuperVersion borrowed for one read (see the module comment).
pub enum SvRef {
    /// Taken from this thread's slot, returned to it on drop.
    Slot { slot: Arc<Slot>, ptr: *mut SuperVersion },
    /// A reference of its own (a read within a read, or a thread exiting).
    Owned(Arc<SuperVersion>),
}

impl std::ops::Deref for SvRef {
    type Target = SuperVersion;
    #[inline]
    fn deref(&self) -> &SuperVersion {
        match self {
            // SAFETY: `ptr` came from `Arc::into_raw` and this guard owns the reference it
            // stands for until drop (the slot is IN_USE meanwhile: no one else drops it).
            SvRef::Slot { ptr, .. } => unsafe { &**ptr },
            SvRef::Owned(a) => a,
        }
    }
}

impl SvRef {
    /// A reference of the caller's own to the same SuperVersion (for a reader that
    /// outlives the call, such as an iterator).
    pub fn to_arc(&self) -> Arc<SuperVersion> {
        match self {
            SvRef::Slot { ptr, .. } => {
                // SAFETY: `ptr` came from `Arc::into_raw` and the guard holds its reference,
                // so the count is at least one while it is raised.
                unsafe { Arc::increment_strong_count(*ptr as *const SuperVersion) };
                // SAFETY: the count was raised just above for this new owner.
                unsafe { Arc::from_raw(*ptr as *const SuperVersion) }
            }
            SvRef::Owned(a) => a.clone(),
        }
    }
}

impl Drop for SvRef {
    fn drop(&mut self) {
        if let SvRef::Slot { slot, ptr } = self {
            // Back into the slot, unless an install emptied it meanwhile: then this
            // reference is stale and dropped here.
            if slot.ptr.compare_exchange(in_use(), *ptr, Ordering::AcqRel, Ordering::Acquire).is_err() {
                release_raw(*ptr);
            }
        }
    }
}
