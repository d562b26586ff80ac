//! One shard of the LRU cache (RocksDB's `LRUCacheShard`), with its three pools.
//!
//! ```text
//!   high-pri pool:   head (newest) <-> ... <-> tail  (<= capacity x high_pri_pool_ratio)
//!                                                |  overflow: the pool's oldest entry moves
//!                                                v            to the head of the low pool
//!   low-pri pool:    head (newest) <-> ... <-> tail  (<= capacity x low_pri_pool_ratio)
//!                                                |  overflow: to the head of the bottom pool
//!                                                v
//!   bottom-pri pool: head (newest) <-> ... <-> tail  -> evicted first
//! ```
//!
//! The pools are one LRU list in RocksDB (`lru_low_pri_` and `lru_bottom_pri_` point at the
//! newest entry of the low and bottom pools); three lists are the same order. Where an entry
//! goes when it is inserted or hit is RocksDB's `LRU_Insert`:
//! - high priority, or hit before: the head of the high pool if `high_pri_pool_ratio > 0`;
//! - else (or low priority): the head of the low pool if `low_pri_pool_ratio > 0`;
//! - else (or bottom priority): the head of the bottom pool.
//!
//! After an entry joins the high or the low pool, `MaintainPoolSize` moves the oldest entries
//! of an overflowing pool down one pool. Eviction takes the tail of the bottom pool, then of
//! the low pool, then of the high pool.
//!
//! An entry is pinned while someone besides the cache holds its value (the `Arc`'s count is
//! above one): a reader using a block, a table reader holding its index, a reservation's
//! owner. Pinned entries are charged to the usage and never evicted, as RocksDB's referenced
//! handles; eviction passes them by. (They stay in their pool's list and count in its usage,
//! where RocksDB takes a referenced entry out of its list until it is released: a pool full
//! of pinned entries demotes its unpinned ones sooner than RocksDB's would.) When nothing more
//! can be evicted and the entry does not fit, the insert fails if `strict_capacity_limit` is
//! set, else the cache goes over its capacity (RocksDB's `LRUCacheShard::InsertItem`).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::block_cache::{FxBuild, Insert, Key, Priority, Shard, Value};

const NIL: u32 = u32::MAX;

/// The pools, as indexes into `Inner::pools`.
const HIGH: usize = 0;
const LOW: usize = 1;
const BOTTOM: usize = 2;

struct Node {
    key: Key,
    value: Value,
    charge: usize,
    role: u8,
    pool: u8,
    prev: u32,
    next: u32,
}

#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    usage: usize,
}

const EMPTY: List = List { head: NIL, tail: NIL, usage: 0 };

struct Inner {
    map: HashMap<Key, u32, FxBuild>,
    nodes: Vec<Option<Node>>,
    free: Vec<u32>,
    /// High, low and bottom pool.
    pools: [List; 3],
    usage: usize,
    capacity: usize,
    high_pri_pool_ratio: f64,
    low_pri_pool_ratio: f64,
    strict: bool,
}

pub struct LruShard {
    inner: Mutex<Inner>,
}

impl LruShard {
    /// A shard of `capacity` bytes; the ratios are checked by the caller (each in [0, 1],
    /// their sum at most 1).
    pub fn new(capacity: usize, high_pri_pool_ratio: f64, low_pri_pool_ratio: f64, strict: bool) -> LruShard {
        LruShard {
            inner: Mutex::new(Inner {
                map: HashMap::with_hasher(FxBuild),
                nodes: Vec::new(),
                free: Vec::new(),
                pools: [EMPTY; 3],
                usage: 0,
                capacity,
                high_pri_pool_ratio,
                low_pri_pool_ratio,
                strict,
            }),
        }
    }
}

impl Inner {
    fn node(&mut self, i: u32) -> &mut Node {
        match self.nodes.get_mut(i as usize) {
            Some(Some(n)) => n,
            _ => unreachable!("LRU link to a free slot"),
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next, pool, charge) = {
            let n = self.node(i);
            (n.prev, n.next, n.pool as usize, n.charge)
        };
        if prev != NIL {
            self.node(prev).next = next;
        }
        if next != NIL {
            self.node(next).prev = prev;
        }
        let list = &mut self.pools[pool];
        if list.head == i {
            list.head = next;
        }
        if list.tail == i {
            list.tail = prev;
        }
        list.usage -= charge;
    }

    fn link_head(&mut self, i: u32, pool: usize) {
        let list = self.pools[pool];
        let charge = {
            let n = self.node(i);
            n.pool = pool as u8;
            n.prev = NIL;
            n.next = list.head;
            n.charge
        };
        if list.head != NIL {
            self.node(list.head).prev = i;
        }
        let list = &mut self.pools[pool];
        list.head = i;
        if list.tail == NIL {
            list.tail = i;
        }
        list.usage += charge;
    }

    fn pool_capacity(&self, pool: usize) -> usize {
        let ratio = if pool == HIGH { self.high_pri_pool_ratio } else { self.low_pri_pool_ratio };
        (self.capacity as f64 * ratio) as usize
    }

    /// RocksDB's `LRU_Insert`: the pool an entry of `priority` (`hit`: looked up before)
    /// joins.
    fn pool_for(&self, priority: Priority, hit: bool) -> usize {
        if self.high_pri_pool_ratio > 0.0 && (priority == Priority::High || hit) {
            HIGH
        } else if self.low_pri_pool_ratio > 0.0 && (priority != Priority::Bottom || hit) {
            LOW
        } else {
            BOTTOM
        }
    }

    /// Links `i` at the head of `pool` and keeps the pools within their capacities.
    fn place(&mut self, i: u32, pool: usize) {
        self.link_head(i, pool);
        if pool != BOTTOM {
            self.maintain_pools();
        }
    }

    /// RocksDB's `MaintainPoolSize`: the high pool's overflow moves to the low pool, the low
    /// pool's to the bottom pool, oldest first.
    fn maintain_pools(&mut self) {
        for (from, to) in [(HIGH, LOW), (LOW, BOTTOM)] {
            let cap = self.pool_capacity(from);
            while self.pools[from].usage > cap && self.pools[from].tail != NIL {
                let t = self.pools[from].tail;
                self.unlink(t);
                self.link_head(t, to);
            }
        }
    }

    fn remove(&mut self, i: u32) -> Option<Node> {
        self.unlink(i);
        let n = self.nodes.get_mut(i as usize)?.take()?;
        self.free.push(i);
        self.map.remove(&n.key);
        self.usage -= n.charge;
        Some(n)
    }

    /// Evicts unpinned entries, oldest first (the bottom pool from its tail, then the low
    /// pool, then the high pool), until `charge` more bytes fit or nothing more can go.
    /// Evicted values are pushed to `out` (dropped outside the lock).
    fn evict_for(&mut self, charge: usize, out: &mut Vec<Value>) {
        for pool in [BOTTOM, LOW, HIGH] {
            let mut cur = self.pools[pool].tail;
            while self.usage + charge > self.capacity && cur != NIL {
                let (prev, pinned) = {
                    let n = self.node(cur);
                    (n.prev, Arc::strong_count(&n.value) > 1)
                };
                if !pinned {
                    if let Some(node) = self.remove(cur) {
                        out.push(node.value);
                    }
                }
                cur = prev;
            }
        }
    }
}

impl Shard for LruShard {
    fn lookup(&self, key: &Key) -> Option<Value> {
        let mut g = self.inner.lock();
        let i = *g.map.get(key)?;
        // A hit entry goes back as RocksDB's `LRU_Insert` puts an entry with `HasHit`.
        let pool = g.pool_for(Priority::Bottom, true);
        g.unlink(i);
        let v = g.node(i).value.clone();
        g.place(i, pool);
        Some(v)
    }

    fn insert(&self, key: Key, value: Value, charge: usize, role: u8, high_pri: bool) -> Insert {
        self.insert_with_priority(key, value, charge, role, Priority::of(high_pri))
    }

    fn insert_with_priority(
        &self,
        key: Key,
        value: Value,
        charge: usize,
        role: u8,
        priority: Priority,
    ) -> Insert {
        let mut dropped = Vec::new();
        let mut g = self.inner.lock();
        if let Some(&old) = g.map.get(&key) {
            if let Some(n) = g.remove(old) {
                dropped.push(n.value);
            }
        }
        g.evict_for(charge, &mut dropped);
        if g.usage + charge > g.capacity && g.strict {
            drop(g);
            return Insert::NoRoom;
        }
        let pool = g.pool_for(priority, false);
        let node = Node { key: key.clone(), value, charge, role, pool: BOTTOM as u8, prev: NIL, next: NIL };
        let i = match g.free.pop() {
            Some(i) => {
                g.nodes[i as usize] = Some(node);
                i
            }
            None => {
                g.nodes.push(Some(node));
                (g.nodes.len() - 1) as u32
            }
        };
        g.map.insert(key, i);
        g.usage += charge;
        g.place(i, pool);
        drop(g);
        drop(dropped);
        Insert::Kept
    }

    fn erase(&self, key: &Key) -> bool {
        let mut g = self.inner.lock();
        let removed = g.map.get(key).copied().and_then(|i| g.remove(i));
        drop(g);
        removed.is_some()
    }

    fn usage(&self) -> usize {
        self.inner.lock().usage
    }

    fn set_capacity(&self, capacity: usize) {
        let mut dropped = Vec::new();
        let mut g = self.inner.lock();
        g.capacity = capacity;
        g.evict_for(0, &mut dropped);
        g.maintain_pools();
        drop(g);
        drop(dropped);
    }

    fn set_strict_capacity_limit(&self, strict: bool) {
        self.inner.lock().strict = strict;
    }

    fn for_each(&self, f: &mut dyn FnMut(u8, usize, bool)) {
        let g = self.inner.lock();
        for n in g.nodes.iter().flatten() {
            // The cache's own reference is one; the walk adds none.
            f(n.role, n.charge, Arc::strong_count(&n.value) > 1);
        }
    }

    #[cfg(test)]
    fn in_high_pool(&self, key: &Key) -> Option<bool> {
        self.pool_of(key).map(|p| p == Priority::High)
    }

    #[cfg(test)]
    fn pool_of(&self, key: &Key) -> Option<Priority> {
        let g = self.inner.lock();
        let i = *g.map.get(key)?;
        g.nodes.get(i as usize)?.as_ref().map(|n| match n.pool as usize {
            HIGH => Priority::High,
            LOW => Priority::Low,
            _ => Priority::Bottom,
        })
    }

    #[cfg(test)]
    fn pool_usages(&self) -> Option<[usize; 3]> {
        let g = self.inner.lock();
        Some([g.pools[HIGH].usage, g.pools[LOW].usage, g.pools[BOTTOM].usage])
    }
}
