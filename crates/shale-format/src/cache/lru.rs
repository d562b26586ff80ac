//! One shard of the LRU cache (RocksDB's `LRUCacheShard`), with its high-priority pool.
//!
//! ```text
//!   high-pri pool:  head (newest) <-> ... <-> tail   (<= capacity x high_pri_pool_ratio)
//!                                               | overflow: the pool's oldest entry moves
//!                                               v           to the head of the low pool
//!   low-pri pool:   head (newest) <-> ... <-> tail   -> evicted first
//! ```
//!
//! Both pools are one LRU list in RocksDB (the pool boundary is a pointer into it); two lists
//! are the same order. An entry inserted with high priority goes to the head of the high
//! pool, others to the head of the low pool; an entry looked up (a hit) goes to the head of
//! the high pool, as RocksDB's `LRU_Insert` puts entries that have been hit there too, when
//! the pool has room (`high_pri_pool_ratio > 0`). Eviction takes the tail of the low pool,
//! then of the high pool.
//!
//! An entry is pinned while someone besides the cache holds its value (the `Arc`'s count is
//! above one): a reader using a block, a table reader holding its index, a reservation's
//! owner. Pinned entries are charged to the usage and never evicted, as RocksDB's referenced
//! handles; eviction passes them by. (They stay in their pool's list and count in its usage,
//! where RocksDB takes a referenced entry out of its list until it is released: a pool full
//! of pinned entries demotes its unpinned ones sooner than RocksDB's would.) When nothing more can be evicted and the entry does
//! not fit, the insert fails if `strict_capacity_limit` is set, else the cache goes over its
//! capacity (RocksDB's `LRUCacheShard::InsertItem`).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::block_cache::{FxBuild, Insert, Key, Shard, Value};

const NIL: u32 = u32::MAX;

struct Node {
    key: Key,
    value: Value,
    charge: usize,
    role: u8,
    in_high: bool,
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
    high: List,
    low: List,
    usage: usize,
    capacity: usize,
    high_pri_pool_ratio: f64,
    strict: bool,
}

pub struct LruShard {
    inner: Mutex<Inner>,
}

impl LruShard {
    pub fn new(capacity: usize, high_pri_pool_ratio: f64, strict: bool) -> LruShard {
        LruShard {
            inner: Mutex::new(Inner {
                map: HashMap::with_hasher(FxBuild),
                nodes: Vec::new(),
                free: Vec::new(),
                high: EMPTY,
                low: EMPTY,
                usage: 0,
                capacity,
                high_pri_pool_ratio,
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
        let (prev, next, in_high, charge) = {
            let n = self.node(i);
            (n.prev, n.next, n.in_high, n.charge)
        };
        if prev != NIL {
            self.node(prev).next = next;
        }
        if next != NIL {
            self.node(next).prev = prev;
        }
        let list = if in_high { &mut self.high } else { &mut self.low };
        if list.head == i {
            list.head = next;
        }
        if list.tail == i {
            list.tail = prev;
        }
        list.usage -= charge;
    }

    fn link_head(&mut self, i: u32, high: bool) {
        let list = if high { self.high } else { self.low };
        let charge = {
            let n = self.node(i);
            n.in_high = high;
            n.prev = NIL;
            n.next = list.head;
            n.charge
        };
        if list.head != NIL {
            self.node(list.head).prev = i;
        }
        let list = if high { &mut self.high } else { &mut self.low };
        list.head = i;
        if list.tail == NIL {
            list.tail = i;
        }
        list.usage += charge;
    }

    fn high_capacity(&self) -> usize {
        (self.capacity as f64 * self.high_pri_pool_ratio) as usize
    }

    /// RocksDB's `MaintainPoolSize`: the high pool's overflow moves to the low pool.
    fn maintain_pool(&mut self) {
        let cap = self.high_capacity();
        while self.high.usage > cap && self.high.tail != NIL {
            let t = self.high.tail;
            self.unlink(t);
            self.link_head(t, false);
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

    /// Evicts unpinned entries, oldest first (the low pool from its tail, then the high
    /// pool), until `charge` more bytes fit or nothing more can go. Evicted values are pushed
    /// to `out` (dropped outside the lock).
    fn evict_for(&mut self, charge: usize, out: &mut Vec<Value>) {
        for high in [false, true] {
            let mut cur = if high { self.high.tail } else { self.low.tail };
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
        let use_high = g.high_pri_pool_ratio > 0.0;
        g.unlink(i);
        let v = g.node(i).value.clone();
        g.link_head(i, use_high);
        if use_high {
            g.maintain_pool();
        }
        Some(v)
    }

    fn insert(&self, key: Key, value: Value, charge: usize, role: u8, high_pri: bool) -> Insert {
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
        let use_high = high_pri && g.high_pri_pool_ratio > 0.0;
        let node = Node { key: key.clone(), value, charge, role, in_high: false, prev: NIL, next: NIL };
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
        g.link_head(i, use_high);
        if use_high {
            g.maintain_pool();
        }
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
        g.maintain_pool();
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
        let g = self.inner.lock();
        let i = *g.map.get(key)?;
        g.nodes.get(i as usize)?.as_ref().map(|n| n.in_high)
    }
}
