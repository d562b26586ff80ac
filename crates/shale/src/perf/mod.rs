//! rust-rocksdb's `perf` module: perf levels and the `PerfContext` metrics (the per-thread
//! counters live in `shale_format::perf`, beside the table and key code that counts them),
//! and the memory-usage reports (`MemoryUsageBuilder`, `get_memory_usage_stats`: RocksDB's
//! `MemoryUtil`), which read the databases.

use crate::db::thread_mode::ThreadMode;
use crate::db::{DBCommon, DBInner, DbInner};
use crate::error::Result;
use crate::options::Cache;
use crate::transactions::TransactionDB;
use crate::DB;

pub use shale_format::perf::*;

/// Memory use of databases and caches, as rust-rocksdb's `MemoryUsageStats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsageStats {
    pub mem_table_total: u64,
    pub mem_table_unflushed: u64,
    pub mem_table_readers_total: u64,
    pub cache_total: u64,
}

/// A memory-usage report, as rust-rocksdb's `MemoryUsage` (RocksDB's
/// `MemoryUtil::GetApproximateMemoryUsageByType`): memtables of every family of the databases
/// (`rocksdb.size-all-mem-tables`), those not yet flushed (`rocksdb.cur-size-all-mem-tables`),
/// table readers (`rocksdb.estimate-table-readers-mem`), and the usage of each distinct cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsage {
    mem_table_total: u64,
    mem_table_unflushed: u64,
    mem_table_readers_total: u64,
    cache_total: u64,
}

impl MemoryUsage {
    pub fn approximate_mem_table_total(&self) -> u64 {
        self.mem_table_total
    }

    pub fn approximate_mem_table_unflushed(&self) -> u64 {
        self.mem_table_unflushed
    }

    pub fn approximate_mem_table_readers_total(&self) -> u64 {
        self.mem_table_readers_total
    }

    pub fn approximate_cache_total(&self) -> u64 {
        self.cache_total
    }
}

/// Collects databases and caches for a memory report, as rust-rocksdb's
/// `MemoryUsageBuilder`; it borrows what it is given.
pub struct MemoryUsageBuilder<'a> {
    dbs: Vec<&'a DbInner>,
    caches: Vec<&'a Cache>,
}

impl<'a> MemoryUsageBuilder<'a> {
    pub fn new() -> Result<Self> {
        Ok(MemoryUsageBuilder { dbs: Vec::new(), caches: Vec::new() })
    }

    pub fn add_tx_db<T: ThreadMode>(&mut self, db: &'a TransactionDB<T>) {
        self.dbs.push(&db.db.inner);
    }

    pub fn add_db<T: ThreadMode, D: DBInner>(&mut self, db: &'a DBCommon<T, D>) {
        self.dbs.push(&db.inner);
    }

    pub fn add_cache(&mut self, cache: &'a Cache) {
        self.caches.push(cache);
    }

    pub fn build(&self) -> Result<MemoryUsage> {
        let mut mu = MemoryUsage {
            mem_table_total: 0,
            mem_table_unflushed: 0,
            mem_table_readers_total: 0,
            cache_total: 0,
        };
        for db in &self.dbs {
            let handles: Vec<_> = db.handles.read().iter().flatten().cloned().collect();
            for h in handles.iter().filter(|h| !h.is_dropped()) {
                let p = |name: &str| db.int_property(h, name).unwrap_or(0);
                mu.mem_table_total += p("rocksdb.size-all-mem-tables");
                mu.mem_table_unflushed += p("rocksdb.cur-size-all-mem-tables");
                mu.mem_table_readers_total += p("rocksdb.estimate-table-readers-mem");
            }
        }
        // Each cache once, however many times it was added.
        let mut seen: Vec<*const crate::cache::BlockCache> = Vec::new();
        for c in &self.caches {
            let ptr = std::sync::Arc::as_ptr(&c.0);
            if !seen.contains(&ptr) {
                seen.push(ptr);
                mu.cache_total += c.0.usage() as u64;
            }
        }
        Ok(mu)
    }
}

/// Memory use of the given databases and caches (rust-rocksdb's `get_memory_usage_stats`).
pub fn get_memory_usage_stats(dbs: Option<&[&DB]>, caches: Option<&[&Cache]>) -> Result<MemoryUsageStats> {
    let mut builder = MemoryUsageBuilder::new()?;
    for db in dbs.unwrap_or_default() {
        builder.add_db(db);
    }
    for cache in caches.unwrap_or_default() {
        builder.add_cache(cache);
    }
    let mu = builder.build()?;
    Ok(MemoryUsageStats {
        mem_table_total: mu.approximate_mem_table_total(),
        mem_table_unflushed: mu.approximate_mem_table_unflushed(),
        mem_table_readers_total: mu.approximate_mem_table_readers_total(),
        cache_total: mu.approximate_cache_total(),
    })
}
