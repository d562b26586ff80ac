//! One shard of the HyperClockCache (RocksDB's `ClockCacheShard`, `cache/clock_cache.cc`):
//! CLOCK eviction, where a hit changes no list, only a counter.
//!
//! ```text
//!   slots:  [ e0 | e1 | -- | e3 | e4 | ... ]      map: key -> slot
//!                  ^ hand: sweeps the slots when room is needed
//!   each entry: countdown 0..=3 (atomic), its charge, its role
//!     insert: countdown = 3 (high priority) or 2 (low), as kHighCountdown / kLowCountdown
//!     hit:    countdown + 1, at most 3 (RocksDB raises it from the acquire counter)
//!     sweep:  pinned (held outside the cache): passed by, untouched
//!             countdown > 0: countdown - 1;  countdown == 0: evicted
//! ```
//!
//! Lookups take the shard's lock shared (many readers at once, as RocksDB's lock-free
//! lookups allow many) and bump the entry's countdown atomically; inserts and evictions take
//! it exclusively. A sweep gives up after four turns of the hand over the slots (a countdown
//! of 3 reaches 0 in three), so an entry that does not fit because everything left is pinned
//! fails with `strict_capacity_limit`, or else goes over the capacity, as RocksDB's clock
//! cache does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::block_cache::{FxBuild, Key, Shard, Value};

const HIGH_COUNTDOWN: u8 = 3;
const LOW_COUNTDOWN: u8 = 2;
const MAX_COUNTDOWN: u8 = 3;

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
    usage: usize,
    capacity: usize,
    strict: bool,
}

pub struct ClockShard {
    inner: RwLock<Inner>,
}

impl ClockShard {
    pub fn new(capacity: usize, strict: bool) -> ClockShard {
        ClockShard {
            inner: RwLock::new(Inner {
                map: HashMap::with_hasher(FxBuild),
                slots: Vec::new(),
                free: Vec::new(),
                hand: 0,
                usage: 0,
                capacity,
                strict,
            }),
        }
    }
}

impl Inner {
    fn remove(&mut self, i: usize) -> Option<Slot> {
        let s = self.slots.get_mut(i)?.take()?;
        self.free.push(i as u32);
        self.map.remove(&s.key);
        self.usage -= s.charge;
        Some(s)
    }

    /// Sweeps the hand until `charge` more bytes fit, or four turns found nothing to evict.
    fn evict_for(&mut self, charge: usize, out: &mut Vec<Value>) {
        let n = self.slots.len();
        let mut steps = 0;
        while self.usage + charge > self.capacity && steps < n * (MAX_COUNTDOWN as usize + 1) {
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
            if let Some(s) = self.remove(i) {
                out.push(s.value);
            }
        }
    }
}

impl Shard for ClockShard {
    fn lookup(&self, key: &Key) -> Option<Value> {
        let g = self.inner.read();
        let i = *g.map.get(key)?;
        let s = g.slots.get(i as usize)?.as_ref()?;
        let c = s.countdown.load(Ordering::Relaxed);
        if c < MAX_COUNTDOWN {
            // A lost race between two hits only loses one step: no CAS loop needed.
            s.countdown.store(c + 1, Ordering::Relaxed);
        }
        Some(s.value.clone())
    }

    fn insert(&self, key: Key, value: Value, charge: usize, role: u8, high_pri: bool) -> bool {
        let mut dropped = Vec::new();
        let mut g = self.inner.write();
        if let Some(&old) = g.map.get(&key) {
            if let Some(s) = g.remove(old as usize) {
                dropped.push(s.value);
            }
        }
        g.evict_for(charge, &mut dropped);
        if g.usage + charge > g.capacity && g.strict {
            drop(g);
            return false;
        }
        let countdown = AtomicU8::new(if high_pri { HIGH_COUNTDOWN } else { LOW_COUNTDOWN });
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
        g.usage += charge;
        drop(g);
        drop(dropped);
        true
    }

    fn erase(&self, key: &Key) {
        let mut g = self.inner.write();
        let removed = g.map.get(key).copied().and_then(|i| g.remove(i as usize));
        drop(g);
        drop(removed);
    }

    fn usage(&self) -> usize {
        self.inner.read().usage
    }

    fn set_capacity(&self, capacity: usize) {
        let mut dropped = Vec::new();
        let mut g = self.inner.write();
        g.capacity = capacity;
        g.evict_for(0, &mut dropped);
        drop(g);
        drop(dropped);
    }

    fn set_strict_capacity_limit(&self, strict: bool) {
        self.inner.write().strict = strict;
    }

    fn for_each(&self, f: &mut dyn FnMut(u8, usize, bool)) {
        let g = self.inner.read();
        for s in g.slots.iter().flatten() {
            f(s.role, s.charge, Arc::strong_count(&s.value) > 1);
        }
    }

    #[cfg(test)]
    fn in_high_pool(&self, _key: &Key) -> Option<bool> {
        None
    }
}
