//! One shard of the HyperClockCache (RocksDB's `ClockCacheShard`, `cache/clock_cache.cc`):
//! CLOCK eviction, where a hit changes no list, only a counter.
//!
//! ```text
//!   slots:  [ e0 | e1 | -- | e3 | e4 | ... ]      map: key -> slot
//!                  ^ hand: sweeps the slots when room is needed
//!   each entry: countdown 0..=3 (atomic), its charge, its role
//!     insert: countdown = 3 (high priority), 2 (low) or 1 (bottom), as RocksDB's
//!             kHighCountdown / kLowCountdown / kBottomCountdown
//!     hit:    countdown + 1, at most 3 (RocksDB raises it from the acquire counter)
//!     sweep:  pinned (held outside the cache): passed by, untouched
//!             countdown > 0: countdown - 1;  countdown == 0: evicted
//! ```
//!
//! **Stripes.** A shard's entries are split over 2^k stripes by bits of the key's hash
//! (bits 40.., which neither the shard's top bits nor a stripe map's bucket index use), each
//! stripe a map, a slot table and a hand of its own behind its own lock. Lookups take their
//! stripe's lock shared and bump the entry's countdown atomically; inserts and evictions take
//! it exclusively. The shard's usage is one atomic counter over every stripe, so the capacity
//! bounds the shard as a whole: an insert sweeps its own stripe's hand first and, when that
//! freed too little, the other stripes' in turn (one lock held at a time), then charges its
//! entry (with `strict_capacity_limit`, only if it fits: a compare-and-swap on the usage, as
//! RocksDB's `ChargeUsageMaybeEvictStrict`).
//!
//! Why stripes and a std lock, where RocksDB has one lock-free table per shard: db_bench's
//! default HyperClock cache of 32 MiB is one shard (shards of at least 32 MiB), and with one
//! parking_lot lock per shard every reader's miss took the cache's only lock exclusively.
//! With more threads than processors a holder is often preempted, and parking_lot made it
//! worse twice over: a waiter spins a few dozen cycles and then calls `sched_yield`, which
//! hands the rest of its time slice to other threads, and an unlock now and then hands the
//! lock to a parked thread that is not running yet (eventual fairness). 70% of the context
//! switches of `readwhilewriting --threads=16` were those yields in this shard's lookup and
//! insert (`perf record -e context-switches --call-graph dwarf`), and the time given up went
//! to the writer and the background jobs instead of the readers (the writer thread had 6x a
//! reader's cycles, RocksDB's 2x). Stripes of at least 256 KiB (at most 128) spread the
//! lock; `std::sync::RwLock` waits on a futex without yielding and without handing off.
//! Interleaved A/B of that benchmark (8 pairs, loaded machine): readers' ops/s median +13%,
//! every quantile higher. A cache of less than 512 KiB a shard keeps one stripe, so its
//! eviction order is one CLOCK over every entry.
//!
//! What a stripe's lock guards is changed only by this module's own bookkeeping (map and
//! slot updates, counters; values are dropped after the lock is released), which runs no
//! user code. Should a panic poison a stripe anyway, its state is not trusted: the stripe is
//! bypassed from then on (lookups miss, inserts are refused, so reads go to the table file
//! and stay right), never read as if nothing had happened.
//!
//! A sweep gives up after four turns of its hand over the stripe's slots (a countdown of 3
//! reaches 0 in three), so an entry that does not fit because everything left is pinned
//! fails with `strict_capacity_limit`, or else goes over the capacity, as RocksDB's clock
//! cache does.
//!
//! **Readers never sleep on a stripe.** A lookup, and the insert a read makes to keep the
//! block it read ([`Shard::insert_nowait`]), try the stripe's lock a bounded number of times
//! ([`TRY_LOCK_SPINS`]) and give up when it stays taken: the lookup misses (the block is read
//! from its file), the insert keeps nothing and says so ([`Insert::Busy`]: no error, the read
//! goes on, and its caller counts an add failure, as RocksDB counts an `Insert` that did not
//! take place: `BLOCK_CACHE_ADD_FAILURES`, `BLOB_DB_CACHE_ADD_FAILURES`). RocksDB's HyperClockCache looks up and inserts with no lock at all
//! (an atomic meta word per slot), so none of its readers waits for another thread. With a
//! lock, a holder the scheduler preempted made every reader of its stripe sleep until it ran
//! again, a whole time slice: of the readers' 248 sleeps in `readrandom --threads=4` on two
//! cores, 152 were in these locks (`perf record -e sched:sched_switch`, prev_state S), each
//! a latency of milliseconds, where that benchmark's P99.9 lies. A lock a running thread
//! holds is free again within a microsecond, which the retries wait out. A read that may not
//! do I/O ([`Shard::lookup_wait`], where a miss is `Incomplete`), every other insert
//! (reservations, rows, warming, a user's `Cache` calls), erases, and an insert that must
//! sweep the other stripes still wait for the lock.
//!
//! **Fixed and automatic tables.** RocksDB 11.8.1 builds two HyperClockCaches
//! (`HyperClockCacheOptions::MakeSharedCache`): with `estimated_entry_charge` 0 an
//! AutoHyperClockCache, whose slot table grows as it fills (Shale's stripes grow their maps
//! the same way: no bound on the number of entries), and with an estimate a
//! FixedHyperClockCache, whose table has a fixed number of slots sized from the shard's
//! capacity and the estimate ([`FixedTable`], `FixedHyperClockTable::CalcHashBits`). A fixed
//! table holds at most its occupancy limit of entries (84% of its slots): an insert into a
//! full table must evict at least one entry even when the capacity has room, and when none
//! can be evicted (all pinned) the insert fails with `strict_capacity_limit` ("... table
//! occupancy limit"), or else the entry is not kept and the insert succeeds, as RocksDB's
//! insert without a handle (RocksDB keeps an entry a reader holds outside the table,
//! charged while held; Shale's reader holds its block either way, uncharged). Each of a
//! fixed table's slots is charged to the shard's usage from the start (64 bytes, RocksDB's
//! `kFullChargeCacheMetadata` with `sizeof(HandleImpl)`), and its entries carry no metadata
//! charge of their own.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use std::sync::{RwLock, TryLockError};

use super::block_cache::{FxBuild, Insert, Key, Priority, Shard, Value};

const HIGH_COUNTDOWN: u8 = 3;
const LOW_COUNTDOWN: u8 = 2;
const BOTTOM_COUNTDOWN: u8 = 1;
const MAX_COUNTDOWN: u8 = 3;

/// RocksDB's `GetInitialCountdown`: an entry's countdown when it enters the cache.
fn initial_countdown(priority: Priority) -> u8 {
    match priority {
        Priority::High => HIGH_COUNTDOWN,
        Priority::Low => LOW_COUNTDOWN,
        Priority::Bottom => BOTTOM_COUNTDOWN,
    }
}

/// How many times a lookup or a read's insert tries a taken stripe lock before giving up
/// (a pause between tries: about a microsecond or a few in all, longer than a running
/// holder keeps the lock, far shorter than a preempted holder's time slice).
const TRY_LOCK_SPINS: u32 = 64;

/// The smallest stripe (bytes of capacity), and the most stripes a shard has.
const MIN_STRIPE_BYTES: usize = 256 << 10;
const MAX_STRIPES: usize = 128;

/// Bytes charged per slot of a fixed table (RocksDB's `sizeof(HandleImpl)`).
pub const SLOT_BYTES: usize = 64;

/// The slot table of one shard of a FixedHyperClockCache (RocksDB's `FixedHyperClockTable`):
/// 2^hash_bits slots, of which at most `occupancy_limit` hold entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedTable {
    pub hash_bits: u32,
    pub occupancy_limit: usize,
}

impl FixedTable {
    /// RocksDB's `kLoadFactor`: the share of slots the estimate plans to fill.
    const LOAD_FACTOR: f64 = 0.7;
    /// RocksDB's `kStrictLoadFactor`: the share of slots that may ever be filled.
    const STRICT_LOAD_FACTOR: f64 = 0.84;

    /// The table of a shard of `capacity` bytes whose entries are estimated at
    /// `estimated_entry_charge` bytes (> 0), as RocksDB's `CalcHashBits` with
    /// `kFullChargeCacheMetadata`: enough slots for the estimated entries at the load factor,
    /// rounded up to a power of two, but never slots whose own charge exceeds the capacity.
    pub fn new(capacity: usize, estimated_entry_charge: usize) -> FixedTable {
        let average_slot_charge = estimated_entry_charge as f64 * Self::LOAD_FACTOR + SLOT_BYTES as f64;
        let num_slots = (capacity as f64 / average_slot_charge + 0.999999) as u64;
        // FloorLog2((num_slots << 1) - 1), with RocksDB's wrap when num_slots is 0.
        let mut hash_bits = 63 - (num_slots << 1).wrapping_sub(1).max(1).leading_zeros();
        while hash_bits > 0 && (SLOT_BYTES as u128) << hash_bits > capacity as u128 {
            hash_bits -= 1;
        }
        let slots = 1u64 << hash_bits;
        FixedTable { hash_bits, occupancy_limit: (slots as f64 * Self::STRICT_LOAD_FACTOR) as usize }
    }

    pub fn slots(&self) -> usize {
        1usize << self.hash_bits
    }

    /// The table's own charge: every slot's.
    pub fn charge(&self) -> usize {
        self.slots() * SLOT_BYTES
    }
}

struct Slot {
    key: Key,
    value: Value,
    charge: usize,
    role: u8,
    countdown: AtomicU8,
}

struct Inner {
    map: HashMap<Key, u32, FxBuild>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    hand: usize,
}

/// One stripe, on a cache line of its own so that stripes' locks do not share one.
#[repr(align(128))]
struct Stripe(RwLock<Inner>);

impl Stripe {
    /// The stripe's lock shared; None once a panic poisoned it (see the module comment).
    #[inline]
    fn read(&self) -> Option<std::sync::RwLockReadGuard<'_, Inner>> {
        self.0.read().ok()
    }

    /// The stripe's lock exclusive; None once a panic poisoned it.
    #[inline]
    fn write(&self) -> Option<std::sync::RwLockWriteGuard<'_, Inner>> {
        self.0.write().ok()
    }

    /// The stripe's lock shared without sleeping: `Busy` when another thread kept it
    /// exclusive (or waited for it so) through [`TRY_LOCK_SPINS`] tries.
    #[inline]
    fn read_nowait(&self) -> Tried<std::sync::RwLockReadGuard<'_, Inner>> {
        spin_for(|| self.0.try_read())
    }

    /// The stripe's lock exclusive without sleeping, as [`Stripe::read_nowait`].
    #[inline]
    fn write_nowait(&self) -> Tried<std::sync::RwLockWriteGuard<'_, Inner>> {
        spin_for(|| self.0.try_write())
    }
}

/// Up to [`TRY_LOCK_SPINS`] tries of `attempt` (a `try_read` or `try_write`), a spin-loop
/// hint between them.
#[inline]
fn spin_for<G>(mut attempt: impl FnMut() -> Result<G, TryLockError<G>>) -> Tried<G> {
    for _ in 0..TRY_LOCK_SPINS {
        match attempt() {
            Ok(g) => return Tried::Got(g),
            Err(TryLockError::Poisoned(_)) => return Tried::Poisoned,
            Err(TryLockError::WouldBlock) => std::hint::spin_loop(),
        }
    }
    Tried::Busy
}

/// What a bounded try of a stripe's lock got.
enum Tried<G> {
    Got(G),
    /// Another thread held the lock through every try.
    Busy,
    /// A panic poisoned the stripe (see the module comment).
    Poisoned,
}

pub struct ClockShard {
    stripes: Box<[Stripe]>,
    /// Charges of every entry of every stripe (and of a fixed table's slots).
    usage: AtomicUsize,
    capacity: AtomicUsize,
    strict: AtomicBool,
    /// Entries in every stripe (RocksDB's `occupancy_`).
    occupancy: AtomicUsize,
    /// The most entries the shard holds: a fixed table's occupancy limit, else unbounded.
    occupancy_limit: usize,
}

/// How many stripes a shard of `capacity` bytes gets (a power of two).
fn stripes_for(capacity: usize) -> usize {
    let mut n = 1;
    while n < MAX_STRIPES && capacity / (n * 2) >= MIN_STRIPE_BYTES {
        n *= 2;
    }
    n
}

impl ClockShard {
    /// A shard of `capacity` bytes; with `fixed`, of a FixedHyperClockCache (its table's
    /// slots charged from the start, at most its occupancy limit of entries).
    pub fn new(capacity: usize, strict: bool, fixed: Option<FixedTable>) -> ClockShard {
        let stripes = (0..stripes_for(capacity))
            .map(|_| {
                Stripe(RwLock::new(Inner {
                    map: HashMap::with_hasher(FxBuild),
                    slots: Vec::new(),
                    free: Vec::new(),
                    hand: 0,
                }))
            })
            .collect();
        ClockShard {
            stripes,
            usage: AtomicUsize::new(fixed.map_or(0, |t| t.charge())),
            capacity: AtomicUsize::new(capacity),
            strict: AtomicBool::new(strict),
            occupancy: AtomicUsize::new(0),
            occupancy_limit: fixed.map_or(usize::MAX, |t| t.occupancy_limit),
        }
    }

    fn stripe_of(&self, key: &Key) -> usize {
        if self.stripes.len() == 1 {
            return 0;
        }
        ((FxBuild.hash_one(key) >> 40) as usize) & (self.stripes.len() - 1)
    }

    fn fits(&self, charge: usize) -> bool {
        self.usage.load(Ordering::Relaxed) + charge <= self.capacity.load(Ordering::Relaxed)
    }

    /// Sweeps the stripes other than `own`, one lock at a time, until `charge` more bytes fit
    /// and `need` entries (with those `freed` already) were evicted; returns `freed` then.
    fn evict_others(
        &self,
        own: usize,
        charge: usize,
        need: usize,
        mut freed: usize,
        out: &mut Vec<Value>,
    ) -> usize {
        let n = self.stripes.len();
        for k in 1..n {
            if self.fits(charge) && freed >= need {
                break;
            }
            if let Some(mut g) = self.stripes[(own + k) % n].write() {
                freed += g.evict_for(self, charge, need.saturating_sub(freed), out);
            }
        }
        freed
    }
}

impl Inner {
    fn remove(&mut self, i: usize, usage: &AtomicUsize, occupancy: &AtomicUsize) -> Option<Slot> {
        let s = self.slots.get_mut(i)?.take()?;
        self.free.push(i as u32);
        self.map.remove(&s.key);
        usage.fetch_sub(s.charge, Ordering::Relaxed);
        occupancy.fetch_sub(1, Ordering::Relaxed);
        Some(s)
    }

    /// Sweeps the hand until `charge` more bytes fit in the shard and at least `need` entries
    /// were evicted, or four turns found nothing to evict; returns how many it evicted.
    fn evict_for(&mut self, shard: &ClockShard, charge: usize, need: usize, out: &mut Vec<Value>) -> usize {
        let n = self.slots.len();
        let mut steps = 0;
        let mut freed = 0;
        while (!shard.fits(charge) || freed < need) && steps < n * (MAX_COUNTDOWN as usize + 1) {
            steps += 1;
            let i = self.hand % n.max(1);
            self.hand = i + 1;
            let Some(s) = self.slots.get(i).and_then(|s| s.as_ref()) else { continue };
            if Arc::strong_count(&s.value) > 1 {
                continue;
            }
            let c = s.countdown.load(Ordering::Relaxed);
            if c > 0 {
                s.countdown.store(c - 1, Ordering::Relaxed);
                continue;
            }
            if let Some(s) = self.remove(i, &shard.usage, &shard.occupancy) {
                out.push(s.value);
                freed += 1;
            }
        }
        if steps > 0 {
            self.prefetch_ahead();
        }
        freed
    }

    /// Asks the processor to load what the next sweep reads first: the slots after the
    /// hand and the reference counts of their values (read to pass pinned entries by).
    /// An entry's value was last touched when it was inserted or hit, long before its turn
    /// comes, so each slot the hand reached stalled the sweep on a cache miss or two (a
    /// profile of readrandom with an 8 MiB cache: 4% of the cycles in this sweep, nine
    /// tenths of them at the count's load). The next sweep comes an insert later; the
    /// loads, made now together, overlap one another instead.
    #[inline]
    fn prefetch_ahead(&self) {
        let n = self.slots.len();
        if n == 0 {
            return;
        }
        for k in 0..PREFETCH_SLOTS {
            let i = (self.hand + k) % n;
            // Reading the slot loads its line; the count is in the header before the value.
            if let Some(Some(s)) = self.slots.get(i) {
                shale_base::sys::prefetch(
                    (Arc::as_ptr(&s.value) as *const u8).wrapping_sub(ARC_HEADER_BYTES),
                );
            }
            if let Some(next) = self.slots.get((i + PREFETCH_SLOTS) % n) {
                shale_base::sys::prefetch((next as *const Option<Slot>).cast());
            }
        }
    }
}

/// How many slots after the hand `prefetch_ahead` loads (a sweep passes about three per
/// entry it evicts: a data block enters with a countdown of 2).
const PREFETCH_SLOTS: usize = 4;

/// Where an `Arc`'s counts lie before its value (two words; only a hint's address: a wrong
/// guess costs one useless load).
const ARC_HEADER_BYTES: usize = 2 * std::mem::size_of::<usize>();

impl ClockShard {
    /// A hit in a stripe held shared: the entry's value, its countdown raised by one.
    #[inline]
    fn hit(g: &Inner, key: &Key) -> Option<Value> {
        let i = *g.map.get(key)?;
        let s = g.slots.get(i as usize)?.as_ref()?;
        let c = s.countdown.load(Ordering::Relaxed);
        if c < MAX_COUNTDOWN {
            // A lost race between two hits only loses one step: no CAS loop needed.
            s.countdown.store(c + 1, Ordering::Relaxed);
        }
        Some(s.value.clone())
    }

    /// An insert with `priority`'s initial countdown; with `nowait`, an insert a read makes
    /// to keep what it read, which gives up when its stripe stays busy (the module comment).
    fn insert_impl(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
        nowait: bool,
    ) -> Insert {
        let mut dropped = Vec::new();
        let own = self.stripe_of(&key);
        let stripe = &self.stripes[own];
        let got =
            if nowait { stripe.write_nowait() } else { stripe.write().map_or(Tried::Poisoned, Tried::Got) };
        let mut g = match got {
            Tried::Got(g) => g,
            Tried::Busy => return Insert::Busy,
            Tried::Poisoned => return Insert::NoRoom,
        };
        if let Some(&old) = g.map.get(&key) {
            if let Some(s) = g.remove(old as usize, &self.usage, &self.occupancy) {
                dropped.push(s.value);
            }
        }
        // Take a slot optimistically, as RocksDB's `occupancy_.FetchAdd(1)`: over the limit,
        // the insert must evict an entry to keep it.
        let old_occupancy = self.occupancy.fetch_add(1, Ordering::Relaxed);
        let need = usize::from(old_occupancy >= self.occupancy_limit);
        let mut freed = g.evict_for(self, charge, need, &mut dropped);
        if (!self.fits(charge) || freed < need) && self.stripes.len() > 1 {
            // Never two stripe locks at once: this one is taken again after the others.
            drop(g);
            freed = self.evict_others(own, charge, need, freed, &mut dropped);
            g = match stripe.write() {
                Some(g) => g,
                None => {
                    self.occupancy.fetch_sub(1, Ordering::Relaxed);
                    return Insert::NoRoom;
                }
            };
            // Another insert of the same key may have come in meanwhile.
            if let Some(&old) = g.map.get(&key) {
                if let Some(s) = g.remove(old as usize, &self.usage, &self.occupancy) {
                    dropped.push(s.value);
                }
            }
        }
        let strict = self.strict.load(Ordering::Relaxed);
        if freed < need {
            // No slot: every entry is pinned (RocksDB's "unable to evict entries to stay
            // within table occupancy limit"); without the strict limit the entry is simply
            // not kept.
            self.occupancy.fetch_sub(1, Ordering::Relaxed);
            drop(g);
            return if strict { Insert::NoSlot } else { Insert::Dropped };
        }
        if strict {
            let cap = self.capacity.load(Ordering::Relaxed);
            let charged = self.usage.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                (u + charge <= cap).then_some(u + charge)
            });
            if charged.is_err() {
                self.occupancy.fetch_sub(1, Ordering::Relaxed);
                drop(g);
                return Insert::NoRoom;
            }
        } else {
            self.usage.fetch_add(charge, Ordering::Relaxed);
        }
        let countdown = AtomicU8::new(initial_countdown(priority));
        let slot = Slot { key: key.clone(), value, charge, role, countdown };
        let i = match g.free.pop() {
            Some(i) => {
                g.slots[i as usize] = Some(slot);
                i
            }
            None => {
                g.slots.push(Some(slot));
                (g.slots.len() - 1) as u32
            }
        };
        g.map.insert(key, i);
        drop(g);
        drop(dropped);
        Insert::Kept
    }
}

impl Shard for ClockShard {
    fn lookup(&self, key: &Key) -> Option<Value> {
        // A stripe another thread keeps busy is a miss (see the module comment).
        let Tried::Got(g) = self.stripes[self.stripe_of(key)].read_nowait() else { return None };
        Self::hit(&g, key)
    }

    fn lookup_wait(&self, key: &Key) -> Option<Value> {
        let g = self.stripes[self.stripe_of(key)].read()?;
        Self::hit(&g, key)
    }

    fn insert(&self, key: Key, value: Value, charge: usize, role: u8, high_pri: bool) -> Insert {
        self.insert_impl(key, value, charge, role, Priority::of(high_pri), false)
    }

    fn insert_with_priority(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
    ) -> Insert {
        self.insert_impl(key, value, charge, role, priority, false)
    }

    fn insert_nowait(&self, key: Key, value: Value, charge: usize, role: u8, priority: Priority) -> Insert {
        self.insert_impl(key, value, charge, role, priority, true)
    }

    #[cfg(test)]
    fn hold_all(&self) -> Vec<Box<dyn super::block_cache::Held + '_>> {
        self.stripes
            .iter()
            .filter_map(|s| s.write())
            .map(|g| Box::new(g) as Box<dyn super::block_cache::Held + '_>)
            .collect()
    }

    fn erase(&self, key: &Key) -> bool {
        let Some(mut g) = self.stripes[self.stripe_of(key)].write() else { return false };
        let removed =
            g.map.get(key).copied().and_then(|i| g.remove(i as usize, &self.usage, &self.occupancy));
        drop(g);
        removed.is_some()
    }

    fn usage(&self) -> usize {
        self.usage.load(Ordering::Relaxed)
    }

    fn set_capacity(&self, capacity: usize) {
        let mut dropped = Vec::new();
        self.capacity.store(capacity, Ordering::Relaxed);
        for s in self.stripes.iter() {
            if self.fits(0) {
                break;
            }
            if let Some(mut g) = s.write() {
                g.evict_for(self, 0, 0, &mut dropped);
            }
        }
        drop(dropped);
    }

    fn set_strict_capacity_limit(&self, strict: bool) {
        self.strict.store(strict, Ordering::Relaxed);
    }

    fn for_each(&self, f: &mut dyn FnMut(u8, usize, bool)) {
        for stripe in self.stripes.iter() {
            let Some(g) = stripe.read() else { continue };
            for s in g.slots.iter().flatten() {
                f(s.role, s.charge, Arc::strong_count(&s.value) > 1);
            }
        }
    }

    #[cfg(test)]
    fn in_high_pool(&self, _key: &Key) -> Option<bool> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::block_cache::OffsetableCacheKey;

    #[test]
    fn stripes_follow_the_capacity() {
        assert_eq!(stripes_for(0), 1);
        assert_eq!(stripes_for((512 << 10) - 1), 1);
        assert_eq!(stripes_for(512 << 10), 2);
        assert_eq!(stripes_for(8 << 20), 32);
        assert_eq!(stripes_for(32 << 20), 128);
        assert_eq!(stripes_for(1 << 30), 128);
    }

    /// The capacity bounds the shard as a whole: a stripe whose own entries are all pinned
    /// makes room by evicting from the others, and the strict limit holds across stripes.
    #[test]
    fn capacity_is_shared_by_the_stripes() {
        let cap = 1 << 20;
        let shard = ClockShard::new(cap, true, None);
        assert_eq!(shard.stripes.len(), 4);
        let f = OffsetableCacheKey::unique();
        let entry = 16 * 1024;
        let mut i = 0u64;
        // Fill the shard, then keep inserting: usage never goes over the strict capacity.
        while i < 200 {
            assert_eq!(
                shard.insert(Key::Block(f.with_offset(i)), Arc::new(()), entry, 0, false),
                Insert::Kept
            );
            assert!(shard.usage() <= cap, "{} > {cap}", shard.usage());
            i += 1;
        }
        let mut n = 0;
        let mut per_stripe = vec![0; shard.stripes.len()];
        for (j, s) in shard.stripes.iter().enumerate() {
            per_stripe[j] = s.read().unwrap().map.len();
            n += per_stripe[j];
        }
        assert_eq!(n * entry, shard.usage());
        assert!(per_stripe.iter().all(|&c| c > 0), "keys spread over every stripe: {per_stripe:?}");
        // Pin every entry of one stripe: an insert landing there evicts from the others.
        let pinned_stripe = shard.stripe_of(&Key::Block(f.with_offset(0)));
        let held: Vec<Value> = (0..i)
            .map(|k| Key::Block(f.with_offset(k)))
            .filter(|k| shard.stripe_of(k) == pinned_stripe)
            .filter_map(|k| shard.lookup(&k))
            .collect();
        assert!(!held.is_empty());
        let next = (1000u64..)
            .map(|k| Key::Block(f.with_offset(k)))
            .find(|k| shard.stripe_of(k) == pinned_stripe)
            .unwrap();
        assert_eq!(shard.insert(next.clone(), Arc::new(()), entry, 0, false), Insert::Kept);
        assert!(shard.lookup(&next).is_some());
        assert!(shard.usage() <= cap);
        // Everything pinned: the strict limit refuses.
        let all: Vec<Value> =
            (0..2000u64).filter_map(|k| shard.lookup(&Key::Block(f.with_offset(k)))).collect();
        let extra = Key::Block(f.with_offset(5000));
        assert_eq!(shard.usage(), cap, "full: every entry is the same size");
        assert_eq!(shard.insert(extra.clone(), Arc::new(()), entry, 0, false), Insert::NoRoom);
        assert!(shard.lookup(&extra).is_none());
        drop(all);
        drop(held);
        shard.set_capacity(cap / 4);
        assert!(shard.usage() <= cap / 4);
    }

    /// RocksDB 11.8.1's `FixedHyperClockTable::CalcHashBits` and occupancy limit, worked by
    /// hand: slots = ceil(capacity / (estimate * 0.7 + 64)), rounded up to a power of two,
    /// limit = floor(slots * 0.84).
    #[test]
    fn fixed_table_size_is_rocksdb_11s() {
        // 1 MiB / 45939.2 = 22.8 -> 23 slots -> 32; 26 entries at most.
        let t = FixedTable::new(1 << 20, 64 << 10);
        assert_eq!((t.hash_bits, t.slots(), t.occupancy_limit, t.charge()), (5, 32, 26, 2048));
        // db_bench's fixed_hyper_clock_cache: 32 MiB, block size 4096 -> 11448 -> 16384 slots.
        let t = FixedTable::new(32 << 20, 4096);
        assert_eq!((t.slots(), t.occupancy_limit), (16384, 13762));
        // Slots whose own charge would exceed the capacity are cut: 100 bytes, 1 slot.
        assert_eq!(FixedTable::new(100, 1), FixedTable { hash_bits: 0, occupancy_limit: 0 });
        assert_eq!(FixedTable::new(0, 4096), FixedTable { hash_bits: 0, occupancy_limit: 0 });
        // An exact power of two: 10 slots' worth -> (20 - 1) -> 16.
        assert_eq!(FixedTable::new(10 * (700 + 64), 1000).slots(), 16);
    }

    /// A fixed table holds at most its occupancy limit of entries though the capacity has
    /// room for many more; with every entry pinned, an insert is dropped (not strict) or
    /// refused for want of a slot (strict). An automatic table of the same capacity keeps all.
    #[test]
    fn a_fixed_table_bounds_the_entries() {
        let f = OffsetableCacheKey::unique();
        let key = |i: u64| Key::Block(f.with_offset(i));
        let count = |shard: &ClockShard| {
            let mut n = 0;
            shard.for_each(&mut |_, _, _| n += 1);
            n
        };
        let table = FixedTable::new(1 << 20, 64 << 10);
        for strict in [false, true] {
            let shard = ClockShard::new(1 << 20, strict, Some(table));
            assert_eq!(shard.usage(), 2048, "the table's slots are charged up front");
            for i in 0..100 {
                assert_eq!(shard.insert(key(i), Arc::new(()), 100, 0, false), Insert::Kept);
                assert!(count(&shard) <= 26);
            }
            assert_eq!(count(&shard), 26);
            assert_eq!(shard.usage(), 2048 + 26 * 100);
            assert!(shard.lookup(&key(99)).is_some(), "the newest entry is kept");
            let held: Vec<Value> = (0..100).filter_map(|i| shard.lookup(&key(i))).collect();
            assert_eq!(held.len(), 26);
            let want = if strict { Insert::NoSlot } else { Insert::Dropped };
            assert_eq!(shard.insert(key(1000), Arc::new(()), 100, 0, false), want);
            assert!(shard.lookup(&key(1000)).is_none());
            assert_eq!((count(&shard), shard.usage()), (26, 2048 + 26 * 100));
            drop(held);
            assert_eq!(shard.insert(key(1000), Arc::new(()), 100, 0, false), Insert::Kept);
            assert_eq!(count(&shard), 26);
            shard.erase(&key(1000));
            assert_eq!(count(&shard), 25);
            assert_eq!(shard.occupancy.load(Ordering::Relaxed), 25);
        }
        let auto = ClockShard::new(1 << 20, false, None);
        for i in 0..100 {
            assert_eq!(auto.insert(key(i), Arc::new(()), 100, 0, false), Insert::Kept);
        }
        assert_eq!(count(&auto), 100);
        assert_eq!(auto.usage(), 100 * 100);
    }

    /// RocksDB's initial countdowns (`GetInitialCountdown`: high 3, low 2, bottom 1): of
    /// entries that came in together, the sweep evicts the bottom one first, then the low
    /// ones, the high one last.
    #[test]
    fn a_bottom_entry_is_evicted_first() {
        let f = OffsetableCacheKey::unique();
        let key = |i: u64| Key::Block(f.with_offset(i));
        let present = |shard: &ClockShard, i: u64| shard.stripes[0].read().unwrap().map.contains_key(&key(i));
        // Room for three entries, one stripe (one hand over every entry).
        let shard = ClockShard::new(300, false, None);
        assert_eq!(shard.stripes.len(), 1);
        assert_eq!(shard.insert_with_priority(key(0), Arc::new(()), 100, 0, Priority::Low), Insert::Kept);
        assert_eq!(shard.insert_with_priority(key(1), Arc::new(()), 100, 0, Priority::Bottom), Insert::Kept);
        assert_eq!(shard.insert_with_priority(key(2), Arc::new(()), 100, 0, Priority::High), Insert::Kept);
        // The sweep passes 0 (2 -> 1), 1 (1 -> 0), 2 (3 -> 2), 0 (1 -> 0), then evicts 1.
        assert_eq!(shard.insert_with_priority(key(3), Arc::new(()), 100, 0, Priority::Low), Insert::Kept);
        assert!(!present(&shard, 1), "the bottom entry went first");
        assert!(present(&shard, 0) && present(&shard, 2) && present(&shard, 3));
        // Next the low entry that came in with it (0, now at 0), the high one (2) stays.
        assert_eq!(shard.insert_with_priority(key(4), Arc::new(()), 100, 0, Priority::Low), Insert::Kept);
        assert!(!present(&shard, 0));
        assert!(present(&shard, 2) && present(&shard, 3) && present(&shard, 4));
        // `insert` without a priority: high or low, as before.
        let shard = ClockShard::new(300, false, None);
        assert_eq!(shard.insert(key(0), Arc::new(()), 100, 0, false), Insert::Kept);
        let countdown = |shard: &ClockShard, i: u64| {
            let g = shard.stripes[0].read().unwrap();
            let slot = g.map[&key(i)] as usize;
            g.slots[slot].as_ref().unwrap().countdown.load(Ordering::Relaxed)
        };
        assert_eq!(countdown(&shard, 0), LOW_COUNTDOWN);
        assert_eq!(shard.insert(key(1), Arc::new(()), 100, 0, true), Insert::Kept);
        assert_eq!(countdown(&shard, 1), HIGH_COUNTDOWN);
        assert_eq!(shard.insert_nowait(key(2), Arc::new(()), 100, 0, Priority::Bottom), Insert::Kept);
        assert_eq!(countdown(&shard, 2), BOTTOM_COUNTDOWN);
    }

    /// A lookup never sleeps on a stripe another thread holds: it misses; a read's insert
    /// keeps nothing and says so without an error; every other insert waits for the lock.
    #[test]
    fn readers_do_not_wait_for_a_held_stripe() {
        let shard = Arc::new(ClockShard::new(1 << 20, false, None));
        let f = OffsetableCacheKey::unique();
        let k = Key::Block(f.with_offset(7));
        let other = Key::Block(f.with_offset(8));
        assert_eq!(shard.insert(k.clone(), Arc::new(()), 100, 0, false), Insert::Kept);
        let s = shard.stripe_of(&k);
        let held = shard.stripes[s].0.write().unwrap();
        assert!(shard.lookup(&k).is_none(), "a held stripe is a miss");
        let same_stripe =
            (100u64..).map(|i| Key::Block(f.with_offset(i))).find(|x| shard.stripe_of(x) == s).unwrap();
        assert_eq!(
            shard.insert_nowait(same_stripe.clone(), Arc::new(()), 100, 0, Priority::Low),
            Insert::Busy
        );
        // A waiting insert finishes once the holder lets go.
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let shard = Arc::clone(&shard);
            let key = same_stripe.clone();
            std::thread::spawn(move || {
                let r = shard.insert(key, Arc::new(()), 100, 0, false);
                tx.send(()).unwrap();
                r
            })
        };
        assert!(rx.recv_timeout(std::time::Duration::from_millis(100)).is_err(), "the insert waits");
        drop(held);
        assert_eq!(waiter.join().unwrap(), Insert::Kept);
        assert!(shard.lookup(&k).is_some());
        assert!(shard.lookup(&same_stripe).is_some());
        // A read that may not do I/O waits too, and finds the entry.
        let held = shard.stripes[s].0.write().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let shard = Arc::clone(&shard);
            let key = k.clone();
            std::thread::spawn(move || {
                let r = shard.lookup_wait(&key).is_some();
                tx.send(()).unwrap();
                r
            })
        };
        assert!(rx.recv_timeout(std::time::Duration::from_millis(100)).is_err(), "the lookup waits");
        drop(held);
        assert!(waiter.join().unwrap(), "and finds the entry");
        // Free stripes are not affected by a held one.
        if shard.stripe_of(&other) != s {
            let _held = shard.stripes[s].0.write().unwrap();
            assert_eq!(shard.insert_nowait(other.clone(), Arc::new(()), 100, 0, Priority::Low), Insert::Kept);
            assert!(shard.lookup(&other).is_some());
        }
        let mut n = 0;
        shard.for_each(&mut |_, _, _| n += 1);
        assert_eq!(n * 100, shard.usage(), "a dropped insert charged nothing");
    }

    /// A stripe a panic poisoned is bypassed: its keys miss and are not inserted again,
    /// while the other stripes serve on.
    #[test]
    fn a_poisoned_stripe_is_bypassed() {
        let shard = ClockShard::new(1 << 20, false, None);
        let f = OffsetableCacheKey::unique();
        let keys: Vec<Key> = (0..64u64).map(|k| Key::Block(f.with_offset(k))).collect();
        for k in &keys {
            assert_eq!(shard.insert(k.clone(), Arc::new(()), 100, 0, false), Insert::Kept);
        }
        let bad = shard.stripe_of(&keys[0]);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = shard.stripes[bad].0.write().unwrap();
            panic!("a panic holding a stripe (on purpose)");
        }));
        assert!(r.is_err());
        for k in &keys {
            if shard.stripe_of(k) == bad {
                assert!(shard.lookup(k).is_none());
                assert_eq!(shard.insert(k.clone(), Arc::new(()), 100, 0, false), Insert::NoRoom);
            } else {
                assert!(shard.lookup(k).is_some());
            }
        }
        shard.erase(&keys[0]);
        shard.set_capacity(0);
        let mut seen = 0;
        shard.for_each(&mut |_, _, _| seen += 1);
        assert_eq!(seen, 0, "the healthy stripes were emptied; the poisoned one is not read");
    }
}
