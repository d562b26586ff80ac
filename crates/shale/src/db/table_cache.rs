//! Open table readers, by file number (RocksDB's TableCache), with their range tombstones
//! fragmented once at open.
//!
//! `max_open_files = -1` keeps every table open; otherwise the least recently used reader is
//! closed when the cache is over its size. Guarded by one Mutex (`map`); a reader is opened
//! outside it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::cf::CfHandle;
use super::filename;
use crate::cache::{new_cache_session, BlockCache, OffsetableCacheKey};
use crate::error::Result;
use crate::fs::FileSystemRef;
use crate::iter::range_del::{self, FragmentedTombstones};
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use crate::table::reader::{Table, TableReaderOptions};
use crate::version::edit::FileMetaData;

pub(crate) struct TableEntry {
    pub table: Arc<Table>,
    pub tombstones: Arc<FragmentedTombstones>,
}

pub(crate) struct TableCache {
    fs: FileSystemRef,
    dir: PathBuf,
    capacity: Option<usize>,
    pub default_block_cache: Arc<BlockCache>,
    /// This database open's cache session: with a file number, the key base of the file's
    /// blocks in a block cache that other databases (or an earlier incarnation of this one)
    /// may share. Drawn fresh at every open, so no two opens share keys.
    cache_session: u64,
    /// The database's statistics (`Options::enable_statistics`), handed to every reader.
    statistics: Option<Arc<Statistics>>,
    /// file number -> (entry, last use tick)
    map: Mutex<HashMap<u64, (Arc<TableEntry>, u64)>>,
    tick: AtomicU64,
}

impl TableCache {
    pub fn new(
        fs: FileSystemRef,
        dir: PathBuf,
        max_open_files: i32,
        default_block_cache: Arc<BlockCache>,
        statistics: Option<Arc<Statistics>>,
    ) -> Self {
        let capacity = if max_open_files < 0 {
            None
        } else {
            Some((max_open_files as usize).saturating_sub(10).max(16))
        };
        TableCache {
            fs,
            dir,
            capacity,
            default_block_cache,
            cache_session: new_cache_session(),
            statistics,
            map: Mutex::new(HashMap::new()),
            tick: AtomicU64::new(0),
        }
    }

    /// The reader of `file`, opening it if needed.
    pub fn get(&self, cf: &CfHandle, file: &FileMetaData) -> Result<Arc<TableEntry>> {
        // RocksDB's TableCache::FindTable time.
        let _p = crate::perf::PerfTimer::new(crate::perf::Field::FindTableNanos);
        let tick = self.tick.fetch_add(1, Ordering::Relaxed);
        if let Some((e, t)) = self.map.lock().get_mut(&file.number) {
            *t = tick;
            return Ok(e.clone());
        }
        let stats = self.statistics.as_deref();
        let name = filename::table_file_name(file.number);
        let opened = {
            let _t = StopWatch::new(stats, Histogram::TableOpenIoMicros);
            record_tick(stats, Ticker::NoFileOpens, 1);
            self.fs.new_random_access_file(&self.dir.join(&name)).and_then(|f| {
                let opts = TableReaderOptions {
                    icmp: cf.icmp.clone(),
                    block_cache: cf.block_cache.clone(),
                    verify_checksums: true,
                    file_name: name,
                    cache_key: OffsetableCacheKey::new(self.cache_session, file.number),
                    statistics: self.statistics.clone(),
                };
                let pe = cf.opts.prefix_extractor.clone();
                Table::open_for_cf(f, file.file_size, opts, file.largest_seqno, pe)
            })
        };
        let table = opened.inspect_err(|_| record_tick(stats, Ticker::NoFileErrors, 1))?;
        let tombstones = range_del::from_table_entries(table.range_tombstones())?;
        let entry = Arc::new(TableEntry {
            tombstones: Arc::new(FragmentedTombstones::new(cf.opts.comparator.clone(), tombstones)),
            table,
        });
        let mut map = self.map.lock();
        map.insert(file.number, (entry.clone(), tick));
        if let Some(cap) = self.capacity {
            while map.len() > cap {
                let Some(oldest) = map.iter().min_by_key(|(_, (_, t))| *t).map(|(n, _)| *n) else { break };
                map.remove(&oldest);
            }
        }
        Ok(entry)
    }

    /// The memory table `number`'s reader holds, if it is open (0 if not: nothing is opened).
    pub fn reader_memory(&self, number: u64) -> u64 {
        self.map.lock().get(&number).map_or(0, |(e, _)| e.table.approximate_memory_usage() as u64)
    }

    pub fn evict(&self, number: u64) {
        self.map.lock().remove(&number);
    }
}
