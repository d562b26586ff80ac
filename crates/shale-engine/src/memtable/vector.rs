//! The vector memtable representation (`MemtableFactory::Vector`, RocksDB's `VectorRep`).
//!
//! Point entries are appended, in arrival order, to a vector of entry references; nothing
//! is sorted when written. Reads sort:
//! - a mutable memtable's `get` and iterators take a copy of the vector (under the read
//!   lock) and sort the copy;
//! - once the memtable is immutable, the first read sorts the vector itself, in place and
//!   once (under the write lock), and every later reader shares it.
//!
//! So writes cost one append (a bulk load's pattern), and reads of a mutable memtable cost
//! a copy and a sort: RocksDB's trade, kept as it is.
//!
//! ```text
//!   entries: RwLock<Arc<Vec<Entry>>>   [e7, e2, e9, e1, ...]   arrival order (until sorted)
//!                                        |
//!   arena (the memtable's point list's; no node is linked in it)
//!   +--------------------------------------------------------------------+
//!   | varint32 ikey_len | ikey = user_key | fixed64 LE (seq << 8 | type) |
//!   | varint32 value_len | value                                         |
//!   +--------------------------------------------------------------------+
//! ```
//! Each entry is RocksDB's memtable entry encoding, one allocation in the memtable's arena
//! (the arena of its point skip list, which stays empty), so the write buffer manager
//! charges it as any entry; the vector holds one pointer per entry. Memory usage is the
//! arena's plus 8 bytes per entry (RocksDB's `VectorRep::ApproximateMemoryUsage`:
//! the entry count times the pointer size).
//!
//! Concurrency: inserts, concurrent ones included (RocksDB's `VectorRepFactory` reports
//! `IsInsertConcurrentlySupported`), allocate from the arena (a per-thread shard for
//! concurrent writers) and then append under the write lock. An entry's bytes are written
//! before it is appended, and readers copy the vector under the read lock, so a reader sees
//! every entry it finds whole. Unlike RocksDB's, an equal internal key is not looked for
//! (RocksDB's `VectorRep` does not check either: `InsertKey` returns true).

use std::cmp::Ordering;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering as MemOrder};
use std::sync::Arc;

use parking_lot::RwLock;

use super::skiplist::{read_varint32, write_varint32, SkipList};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::InternalKeyComparator;

/// A reference to one encoded entry in the arena.
#[derive(Clone, Copy)]
struct Entry(NonNull<u8>);

// SAFETY: an entry points into an arena its representation owns (through the point list's
// Arc) and frees only on drop; its bytes are written before the entry is shared, and only
// rewritten by in-place updates, whose readers and writer exclude each other by lock
// stripes (see `VectorRep::overwrite_value`).
unsafe impl Send for Entry {}
// SAFETY: see the Send impl above.
unsafe impl Sync for Entry {}

fn varint_len(v: usize) -> usize {
    crate::coding::varint_length(v as u64)
}

impl Entry {
    /// The internal key.
    ///
    /// # Safety
    /// The entry's arena is alive for `'a`.
    #[inline]
    unsafe fn key<'a>(self) -> &'a [u8] {
        // SAFETY: a written entry starts with the key's varint length and bytes.
        unsafe {
            let (len, p) = read_varint32(self.0.as_ptr());
            std::slice::from_raw_parts(p, len)
        }
    }

    /// The value.
    ///
    /// # Safety
    /// As for [`Entry::key`]; no in-place update of this entry runs meanwhile.
    #[inline]
    unsafe fn value<'a>(self) -> &'a [u8] {
        // SAFETY: the value's varint length follows the key, the value bytes follow it.
        unsafe {
            let (klen, p) = read_varint32(self.0.as_ptr());
            let (vlen, v) = read_varint32(p.add(klen));
            std::slice::from_raw_parts(v, vlen)
        }
    }
}

/// The vector and its state, behind the representation's lock.
struct State {
    /// The entries: in arrival order until sorted. Shared (read-only) with readers only
    /// once the memtable is immutable and the vector sorted.
    entries: Arc<Vec<Entry>>,
    immutable: bool,
    sorted: bool,
}

/// A memtable's point entries as a vector (see the module comment). Share it through `Arc`.
pub struct VectorRep {
    /// The arena's owner: the memtable's point skip list, of which no node is linked.
    store: Arc<SkipList>,
    icmp: InternalKeyComparator,
    state: RwLock<State>,
    /// Entries appended (read without the lock: memory usage, emptiness).
    len: AtomicUsize,
}

impl VectorRep {
    /// An empty vector whose entries go into `store`'s arena, with room for `reserve`
    /// entries before it grows (RocksDB's `VectorRepFactory` `count`).
    pub fn new(store: Arc<SkipList>, reserve: usize) -> VectorRep {
        VectorRep {
            icmp: store.comparator().clone(),
            store,
            state: RwLock::new(State {
                entries: Arc::new(Vec::with_capacity(reserve)),
                immutable: false,
                sorted: false,
            }),
            len: AtomicUsize::new(0),
        }
    }

    /// Appends the entry `user_key | trailer -> value` (`concurrent`: other writers insert
    /// at the same time, so the arena's memory comes from a shard). Always true: equal keys
    /// are not looked for (as RocksDB's `VectorRep`).
    ///
    /// # Panics
    /// If the internal key or the value is 4 GiB or longer (the encoding's length limit).
    pub fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8], concurrent: bool) -> bool {
        let klen = user_key.len() + 8;
        let (Ok(k32), Ok(v32)) = (u32::try_from(klen), u32::try_from(value.len())) else {
            panic!("memtable entry too large: key {} bytes, value {} bytes", klen, value.len());
        };
        let total = varint_len(klen) + klen + varint_len(value.len()) + value.len();
        let p = self.store.allocate_unlinked(total, concurrent);
        // SAFETY: `p` is `total` fresh bytes of the arena, written by this thread alone
        // until the entry is appended below (under the lock readers copy under).
        let dst = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), total) };
        let mut pos = write_varint32(dst, 0, k32);
        dst[pos..pos + user_key.len()].copy_from_slice(user_key);
        pos += user_key.len();
        dst[pos..pos + 8].copy_from_slice(&trailer.to_le_bytes());
        pos += 8;
        pos = write_varint32(dst, pos, v32);
        dst[pos..].copy_from_slice(value);
        let mut s = self.state.write();
        // Inserts come before the memtable turns immutable; one after (none is made) would
        // leave the vector to be sorted again.
        s.sorted = false;
        Arc::make_mut(&mut s.entries).push(Entry(p));
        self.len.fetch_add(1, MemOrder::Relaxed);
        true
    }

    /// The memtable became immutable (RocksDB's `MarkReadOnly`): the next read sorts the
    /// vector itself, once.
    pub fn mark_immutable(&self) {
        self.state.write().immutable = true;
    }

    /// Entries appended.
    pub fn len(&self) -> usize {
        self.len.load(MemOrder::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// RocksDB's `VectorRep::ApproximateMemoryUsage`: a pointer per entry (the entries'
    /// bytes are the arena's, counted by the memtable).
    pub fn memory_usage(&self) -> usize {
        self.len() * std::mem::size_of::<Entry>()
    }

    /// Whether the vector itself is sorted now (an immutable memtable after its first read).
    pub fn is_sorted_in_place(&self) -> bool {
        self.state.read().sorted
    }

    /// The internal keys in the vector's own order (arrival order until an immutable
    /// memtable's first read sorts it).
    pub fn keys_in_vector_order(&self) -> Vec<Vec<u8>> {
        let s = self.state.read();
        // SAFETY: the arena lives as long as `self`.
        s.entries.iter().map(|e| unsafe { e.key() }.to_vec()).collect()
    }

    fn sort(&self, v: &mut [Entry]) {
        let icmp = &self.icmp;
        // SAFETY: the entries' arena lives as long as `self`.
        v.sort_unstable_by(|a, b| icmp.compare_uncounted(unsafe { a.key() }, unsafe { b.key() }));
    }

    /// The entries in order: an immutable memtable's vector, sorted in place by the first
    /// read and shared after; a mutable one's copy, sorted (RocksDB's `VectorRep::Get` and
    /// `GetIterator`).
    fn sorted(&self) -> Arc<Vec<Entry>> {
        {
            let s = self.state.read();
            if s.immutable && s.sorted {
                return Arc::clone(&s.entries);
            }
            if !s.immutable {
                let mut copy = Vec::clone(&s.entries);
                drop(s);
                self.sort(&mut copy);
                return Arc::new(copy);
            }
        }
        let mut s = self.state.write();
        if !s.sorted {
            // Nobody shares the unsorted vector (readers get it only once sorted), so this
            // sorts it where it is.
            let mut v = std::mem::take(Arc::make_mut(&mut s.entries));
            self.sort(&mut v);
            s.entries = Arc::new(v);
            s.sorted = true;
        }
        Arc::clone(&s.entries)
    }

    /// The (internal key, value) of the first entry with key >= `target`.
    pub fn seek_entry(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let v = self.sorted();
        let i = lower_bound(&self.icmp, &v, target);
        // SAFETY: the arena lives as long as `&self`; the vector only held the references.
        v.get(i).map(|e| unsafe { (e.key(), e.value()) })
    }

    /// As [`super::skiplist::SkipList::overwrite_value`], for the first entry with key >=
    /// `target`: its value is rewritten in place (length and bytes; the new value is no
    /// longer, so it fits) while the guard `accept` returns is held.
    ///
    /// # Safety
    /// The caller is the only thread adding to or overwriting in this memtable while this
    /// runs, and every reader of an entry's value excludes the guard `accept` returns for
    /// that entry for as long as it reads or holds the value.
    pub unsafe fn overwrite_value<G>(
        &self,
        target: &[u8],
        value: &[u8],
        accept: impl FnOnce(&[u8]) -> Option<G>,
    ) -> bool {
        let v = self.sorted();
        let Some(e) = v.get(lower_bound(&self.icmp, &v, target)).copied() else { return false };
        // SAFETY: a written entry of the live arena; per the contract no other writer.
        unsafe {
            let (klen, p) = read_varint32(e.0.as_ptr());
            let vpos = p.add(klen).cast_mut();
            let (old_len, _) = read_varint32(vpos);
            let Ok(new32) = u32::try_from(value.len()) else { return false };
            if value.len() > old_len {
                return false;
            }
            let Some(_guard) = accept(e.key()) else { return false };
            let mut varint = [0u8; 5];
            let n = write_varint32(&mut varint, 0, new32);
            // The new varint is no longer than the old one, the value no longer than the
            // old value: both fit the entry's bytes.
            std::ptr::copy_nonoverlapping(varint.as_ptr(), vpos, n);
            std::ptr::copy_nonoverlapping(value.as_ptr(), vpos.add(n), value.len());
        }
        true
    }

    /// A cursor over the entries in order. It takes its sorted view at its first
    /// positioning, and again at a later one when entries were appended since (so it sees
    /// them, as a skip list iterator would).
    pub fn iter(self: &Arc<Self>) -> VectorIter {
        VectorIter { rep: Arc::clone(self), entries: None, pos: 0 }
    }
}

/// The index of the first entry of `v` with key >= `target`.
fn lower_bound(icmp: &InternalKeyComparator, v: &[Entry], target: &[u8]) -> usize {
    // SAFETY: callers hold the representation, so the arena is alive.
    v.partition_point(|e| icmp.compare(unsafe { e.key() }, target) == Ordering::Less)
}

/// An [`InternalIterator`] over a sorted view of a [`VectorRep`]; holds the representation
/// (and so its arena) alive.
pub struct VectorIter {
    rep: Arc<VectorRep>,
    /// The sorted view (None before the first positioning).
    entries: Option<Arc<Vec<Entry>>>,
    /// The current entry; `entries.len()` (or no view) when not valid.
    pos: usize,
}

impl VectorIter {
    /// Takes a sorted view when there is none yet or entries were appended since.
    fn refresh(&mut self) -> &[Entry] {
        let stale = self.entries.as_ref().is_none_or(|v| v.len() != self.rep.len());
        if stale {
            self.entries = Some(self.rep.sorted());
        }
        self.entries.as_deref().map_or(&[], |v| v.as_slice())
    }

    fn view(&self) -> &[Entry] {
        self.entries.as_deref().map_or(&[], |v| v.as_slice())
    }

    fn current(&self) -> Entry {
        let v = self.view();
        assert!(self.pos < v.len(), "vector memtable iterator used while not valid");
        v[self.pos]
    }
}

impl InternalIterator for VectorIter {
    #[inline]
    fn valid(&self) -> bool {
        self.pos < self.view().len()
    }

    fn seek_to_first(&mut self) {
        self.refresh();
        self.pos = 0;
    }

    fn seek_to_last(&mut self) {
        let n = self.refresh().len();
        // Empty: 0 == len, not valid.
        self.pos = n.saturating_sub(1);
    }

    fn seek(&mut self, target: &[u8]) {
        self.refresh();
        self.pos = lower_bound(&self.rep.icmp, self.view(), target);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.refresh();
        let v = self.view();
        let icmp = &self.rep.icmp;
        // SAFETY: the iterator holds the representation, so the arena is alive.
        let after = v.partition_point(|e| icmp.compare(unsafe { e.key() }, target) != Ordering::Greater);
        self.pos = after.checked_sub(1).unwrap_or(v.len());
    }

    fn next(&mut self) {
        assert!(self.valid(), "next() on an invalid vector memtable iterator");
        self.pos += 1;
    }

    fn prev(&mut self) {
        assert!(self.valid(), "prev() on an invalid vector memtable iterator");
        self.pos = self.pos.checked_sub(1).unwrap_or(self.view().len());
    }

    fn key(&self) -> &[u8] {
        // SAFETY: the iterator holds the representation, so the arena is alive.
        unsafe { self.current().key() }
    }

    fn value(&self) -> &[u8] {
        // SAFETY: as in `key`; with in-place updates the memtable's iterator copies values
        // under their lock stripes.
        unsafe { self.current().value() }
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }

    /// Values lie in the arena, which the iterator keeps alive.
    fn value_pinned(&self) -> bool {
        true
    }
}
