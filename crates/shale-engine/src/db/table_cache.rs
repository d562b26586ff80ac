//! Open table readers, by file number (RocksDB's TableCache), with their range tombstones
//! fragmented once at open. A file's reader is chosen by its footer magic number
//! (block-based, plain or cuckoo: `table/any.rs`).
//!
//! `max_open_files = -1` keeps every table open; otherwise the least recently used reader is
//! closed when the cache is over its size. Guarded by one RwLock (`map`): a lookup takes it
//! shared, so concurrent readers never wait on each other (with more reader threads than
//! cores, a preempted holder of an exclusive lock stalls every other reader); only opening
//! and closing take it exclusively, and a reader is opened outside it. The last use of an
//! entry (for closing the least recently used) is counted only when the cache is bounded.
//!
//! With `max_open_files = -1` every reader opened is also pinned in its file's metadata
//! (`FileMetaData::pinned_reader`, RocksDB's `FileDescriptor::pinned_reader`): a point read
//! (`get_for_point_read`) borrows it from the Version it reads, with no lock, hash lookup or
//! reference count shared with other reader threads. The pin goes with the metadata, when
//! no Version holds the file any more.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::cf::CfHandle;
use super::filename;
use crate::cache::{new_cache_session, role, BlockCache, OffsetableCacheKey};
use crate::error::Result;
use crate::fs::FileSystemRef;
use crate::iter::range_del::{self, FragmentedTombstones};
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use crate::table::any::AnyTable;
use crate::table::reader::TableReaderOptions;
use crate::version::edit::FileMetaData;

pub struct TableEntry {
    pub table: AnyTable,
    pub tombstones: Arc<FragmentedTombstones>,
}

/// A table's reader for one read: borrowed from the file's metadata where the reader is
/// pinned (`max_open_files = -1`), else a reference from the cache.
pub enum TableRef<'a> {
    Pinned(&'a TableEntry),
    Cached(Arc<TableEntry>),
}

impl std::ops::Deref for TableRef<'_> {
    type Target = TableEntry;
    #[inline]
    fn deref(&self) -> &TableEntry {
        match self {
            TableRef::Pinned(e) => e,
            TableRef::Cached(e) => e,
        }
    }
}

/// `TableCache::capacity` of an unbounded cache (`max_open_files = -1`).
const UNBOUNDED: usize = usize::MAX;

/// A row cache entry: the internal key and value a table's `get` found.
struct RowEntry(Vec<u8>, Vec<u8>);

pub struct TableCache {
    fs: FileSystemRef,
    dir: PathBuf,
    /// How many readers the cache keeps (`max_open_files - 10`; `UNBOUNDED` for -1, RocksDB's
    /// `kInfiniteCapacity`); `set_db_options` changes it (`set_capacity`).
    capacity: AtomicUsize,
    pub default_block_cache: Arc<BlockCache>,
    /// This database open's cache session: with a file number, the key base of the file's
    /// blocks in a block cache that other databases (or an earlier incarnation of this one)
    /// may share. Drawn fresh at every open, so no two opens share keys.
    cache_session: u64,
    /// The database's statistics (`Options::enable_statistics`), handed to every reader.
    statistics: Option<Arc<Statistics>>,
    /// `Options::set_row_cache`: point lookups' results per table file (see `row_get`).
    row_cache: Option<Arc<BlockCache>>,
    /// file number -> (entry, last use tick; the tick stays 0 when `capacity` is None)
    map: RwLock<HashMap<u64, (Arc<TableEntry>, AtomicU64)>>,
    tick: AtomicU64,
    /// `verify_sst_unique_id_in_manifest` (see [`TableCache::with_unique_id_check`]).
    verify_unique_id: bool,
    /// The database's threads for `async_io`'s background reads, handed to every reader
    /// it opens (`table/read_pool.rs`); shut down (joined) when the database closes.
    pub read_pool: Arc<shale_format::table::read_pool::ReadPool>,
}

impl TableCache {
    pub fn new(
        fs: FileSystemRef,
        dir: PathBuf,
        max_open_files: i32,
        default_block_cache: Arc<BlockCache>,
        statistics: Option<Arc<Statistics>>,
        row_cache: Option<Arc<BlockCache>>,
    ) -> Self {
        let capacity =
            if max_open_files < 0 { UNBOUNDED } else { (max_open_files as usize).saturating_sub(10).max(16) };
        TableCache {
            fs,
            dir,
            capacity: AtomicUsize::new(capacity),
            default_block_cache,
            cache_session: new_cache_session(),
            statistics,
            row_cache,
            map: RwLock::new(HashMap::new()),
            tick: AtomicU64::new(0),
            verify_unique_id: false,
            read_pool: shale_format::table::read_pool::ReadPool::new(),
        }
    }

    /// Whether the cache keeps every table open (`max_open_files = -1`, RocksDB's
    /// `kInfiniteCapacity`).
    pub fn is_unbounded(&self) -> bool {
        self.capacity().is_none()
    }

    /// The most readers kept, None when unbounded.
    #[inline]
    fn capacity(&self) -> Option<usize> {
        Some(self.capacity.load(Ordering::Relaxed)).filter(|&c| c != UNBOUNDED)
    }

    /// RocksDB's `SetDBOptions` with `max_open_files`: the cache's capacity becomes
    /// `max_open_files - 10` (-1: unbounded, `kInfiniteCapacity`) and the least recently used
    /// readers past it are closed at once, as `LRUCache::SetCapacity` evicts. Whether readers
    /// opened from then on are pinned in their files' metadata follows the new capacity
    /// (`UpdateShouldPinTableHandles`); readers already pinned stay with their files until no
    /// Version holds them, as RocksDB's pinned table handles do.
    pub fn set_capacity(&self, max_open_files: i32) {
        // RocksDB passes `max_open_files - 10` unchecked: below 10 the size_t wraps to a
        // capacity past `kInfiniteCapacity`, which RocksDB then treats as unbounded (readers
        // pinned) as it does -1.
        let capacity = usize::try_from(max_open_files.saturating_sub(10)).unwrap_or(UNBOUNDED);
        let was = self.capacity.swap(capacity, Ordering::Relaxed);
        if was == UNBOUNDED && capacity != UNBOUNDED {
            // Entries of an unbounded cache carry no last use: start the clock past them.
            self.tick.fetch_add(1, Ordering::Relaxed);
        }
        if capacity != UNBOUNDED {
            let mut map = self.map.write();
            Self::evict_to(&mut map, capacity);
        }
    }

    /// Closes the least recently used readers until `map` holds at most `cap`.
    fn evict_to(map: &mut HashMap<u64, (Arc<TableEntry>, AtomicU64)>, cap: usize) {
        while map.len() > cap {
            let Some(oldest) =
                map.iter().min_by_key(|(_, (_, t))| t.load(Ordering::Relaxed)).map(|(n, _)| *n)
            else {
                break;
            };
            map.remove(&oldest);
        }
    }

    /// RocksDB's `verify_sst_unique_id_in_manifest`: a block-based table opened whose
    /// MANIFEST entry records a unique id must give the same one from its properties
    /// (`BlockBasedTable::Open` with `expected_unique_id`), else Corruption.
    pub fn with_unique_id_check(mut self, on: bool) -> Self {
        self.verify_unique_id = on;
        self
    }

    /// `prepopulate_block_cache` for table `number` of `cf` that a flush (`compaction`
    /// false) or a compaction writes: the family's block cache and the key base its reader
    /// will look the blocks up by, when the family's mode covers this writer (RocksDB's
    /// `WarmCacheConfig::Compute`: kFlushOnly flushes, kFlushAndCompaction both).
    pub fn warm_cache(
        &self,
        cf: &CfHandle,
        number: u64,
        compaction: bool,
    ) -> Option<crate::table::builder::WarmCache> {
        let mode = cf.config().prepopulate_block_cache;
        if !(if compaction { mode.compactions } else { mode.flushes }) {
            return None;
        }
        Some(crate::table::builder::WarmCache {
            cache: cf.block_cache()?,
            key: OffsetableCacheKey::new(self.cache_session, number),
            statistics: self.statistics.clone(),
            read_amp_bytes_per_bit: cf.config().read_amp_bytes_per_bit,
            block_protection_bytes_per_key: cf.config().block_protection_bytes_per_key,
            priority: if compaction { crate::cache::Priority::Bottom } else { crate::cache::Priority::Low },
        })
    }

    /// The reader of `file`, opening it if needed.
    pub fn get(&self, cf: &CfHandle, file: &FileMetaData) -> Result<Arc<TableEntry>> {
        self.get_at(cf, file, None)
    }

    /// `get_at` for a read with `reads`: under RocksDB's `kBlockCacheTier` (`no_io`) a table
    /// not open already is not opened: Incomplete, as RocksDB's `TableCache::FindTable`.
    pub fn get_for_read(
        &self,
        cf: &CfHandle,
        file: &FileMetaData,
        level: Option<usize>,
        reads: &crate::table::reader::BlockReads,
    ) -> Result<Arc<TableEntry>> {
        {
            // RocksDB's TableCache::FindTable time (get_at counts its own on a miss).
            let _p = shale_format::perf::PerfTimer::new(shale_format::perf::Field::FindTableNanos);
            if let Some(e) = self.lookup(file.number) {
                self.maybe_pin(file, &e);
                return Ok(e);
            }
        }
        if reads.no_io {
            return Err(crate::error::Error::new(
                crate::ErrorKind::Incomplete,
                "Table not found in table_cache, no_io is set",
            ));
        }
        reads.before_io()?;
        self.get_at(cf, file, level)
    }

    /// `get_for_read` for a point read: with an unbounded cache the reader pinned in `file`
    /// (RocksDB's `FindTable` fast path: no lookup, no reference count touched); the first
    /// read of a file pins it.
    pub fn get_for_point_read<'a>(
        &self,
        cf: &CfHandle,
        file: &'a FileMetaData,
        level: Option<usize>,
        reads: &crate::table::reader::BlockReads,
    ) -> Result<TableRef<'a>> {
        if let Some(e) = file.pinned_reader.get::<TableEntry>() {
            return Ok(TableRef::Pinned(e));
        }
        self.get_for_read(cf, file, level, reads).map(TableRef::Cached)
    }

    /// Pins `entry` in `file` when the cache is unbounded (RocksDB pins table handles when
    /// `max_open_files = -1`; a bounded cache must be able to close readers).
    fn maybe_pin(&self, file: &FileMetaData, entry: &Arc<TableEntry>) {
        // Checked first: once pinned, every later lookup would clone the Arc only to drop it.
        if self.capacity().is_none() && !file.pinned_reader.is_pinned() {
            file.pinned_reader.pin(entry.clone());
        }
    }

    /// The open reader of table `number`, under the shared lock; its use is counted when
    /// the cache is bounded.
    #[inline]
    fn lookup(&self, number: u64) -> Option<Arc<TableEntry>> {
        let map = self.map.read();
        let (e, t) = map.get(&number)?;
        if self.capacity().is_some() {
            t.store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        }
        Some(e.clone())
    }

    /// `get` for a file of `level` (None: not known), which decides whether a reader opened
    /// now pins its index and filter in the block cache (see `BlockBasedOptions::meta_cache_policy`).
    pub fn get_at(
        &self,
        cf: &CfHandle,
        file: &FileMetaData,
        level: Option<usize>,
    ) -> Result<Arc<TableEntry>> {
        // RocksDB's TableCache::FindTable time.
        let _p = shale_format::perf::PerfTimer::new(shale_format::perf::Field::FindTableNanos);
        if let Some(e) = self.lookup(file.number) {
            self.maybe_pin(file, &e);
            return Ok(e);
        }
        let entry = self.open_entry(cf, file, level, None)?;
        let tick = if self.capacity().is_some() { self.tick.fetch_add(1, Ordering::Relaxed) } else { 0 };
        self.maybe_pin(file, &entry);
        let mut map = self.map.write();
        map.insert(file.number, (entry.clone(), AtomicU64::new(tick)));
        if let Some(cap) = self.capacity() {
            Self::evict_to(&mut map, cap);
        }
        Ok(entry)
    }

    /// A reader of table `file` of its own, opened with `reads` and kept out of the cache
    /// (RocksDB's ephemeral table reader of a compaction with
    /// `use_direct_io_for_compaction_reads`): counted as any open, dropped with its user.
    pub fn open_ephemeral(
        &self,
        cf: &CfHandle,
        file: &FileMetaData,
        level: Option<usize>,
        reads: crate::fs::ReadFileOptions,
    ) -> Result<Arc<TableEntry>> {
        self.open_entry(cf, file, level, Some(reads))
    }

    /// Opens table `file` (`reads`: with these file options, else as the file system
    /// opens tables) and checks it as [`Self::get_at`] does.
    fn open_entry(
        &self,
        cf: &CfHandle,
        file: &FileMetaData,
        level: Option<usize>,
        reads: Option<crate::fs::ReadFileOptions>,
    ) -> Result<Arc<TableEntry>> {
        let stats = self.statistics.as_deref();
        let name = filename::table_file_name(file.number);
        // No file I/O under the DB mutex: what the picker and the properties need from a
        // table is loaded when its Version is built (`file_stats.rs`).
        shale_base::fs::db_mutex_check::assert_not_held_opening(&name);
        let opened = {
            let _t = StopWatch::new(stats, Histogram::TableOpenIoMicros);
            record_tick(stats, Ticker::NoFileOpens, 1);
            self.open_file(cf, file, reads).and_then(|f| {
                // RocksDB's RandomAccessFileReader counts each read by the file's temperature
                // (`default_temperature` for kUnknown) and by the last level.
                let f = match &self.statistics {
                    Some(s) => {
                        let temperature = match file.temperature {
                            0 => cf.config().default_temperature,
                            t => t,
                        };
                        let last = level.is_some_and(|l| l + 1 == cf.config().num_levels);
                        shale_format::io_stats::CountedReads::wrap(f, s.clone(), temperature, last)
                    }
                    None => f,
                };
                let opts = TableReaderOptions {
                    timestamps_persisted: file.user_defined_timestamps_persisted,
                    icmp: cf.icmp.clone(),
                    block_cache: cf.block_cache(),
                    verify_checksums: true,
                    file_name: name,
                    cache_key: OffsetableCacheKey::new(self.cache_session, file.number),
                    statistics: self.statistics.clone(),
                    // As RocksDB's `TableCache::GetTableReader`: the family's value when
                    // the reader is opened (a later SetOptions reaches readers opened after).
                    block_protection_bytes_per_key: cf.config().block_protection_bytes_per_key,
                };
                let pe = cf.config().prefix_extractor.clone();
                let meta =
                    cf.config().meta_pinning.policy(level, file.file_size, cf.config().write_buffer_size);
                AnyTable::open_for_cf(
                    f,
                    file.file_size,
                    opts,
                    file.largest_seqno,
                    pe,
                    &cf.config().table_format,
                    meta,
                )
            })
        };
        let mut table = opened.inspect_err(|_| record_tick(stats, Ticker::NoFileErrors, 1))?;
        if let shale_format::table::AnyTable::Block(t) = &table {
            t.set_read_pool(self.read_pool.clone());
        }
        if let (true, shale_format::table::AnyTable::Block(t), Some(expected)) =
            (self.verify_unique_id, &table, file.unique_id.filter(|u| *u != [0, 0]))
        {
            let p = t.properties();
            let actual = shale_format::table::unique_id::internal_unique_id(
                &p.db_id,
                &p.db_session_id,
                p.orig_file_number,
                true,
            );
            if actual != Some(expected) {
                record_tick(stats, Ticker::NoFileErrors, 1);
                let human = shale_format::table::unique_id::human_string;
                return Err(crate::Error::corruption(format!(
                    "Mismatch in unique ID on table file {}. Expected: {} Actual: {}",
                    file.number,
                    human(&expected),
                    actual.as_ref().map_or_else(|| "{0,0}".to_string(), human)
                )));
            }
        }
        if let shale_format::table::AnyTable::Block(t) = &mut table {
            // The reader was just opened: nothing else holds it yet.
            let t = Arc::get_mut(t).ok_or_else(|| {
                crate::Error::new(crate::ErrorKind::Unknown, "a table reader just opened is already shared")
            })?;
            t.set_index_block_search(cf.config().index_block_search);
            t.set_read_amp_bytes_per_bit(cf.config().read_amp_bytes_per_bit);
        }
        let tombstones = range_del::from_table_entries(table.range_tombstones())?;
        Ok(Arc::new(TableEntry {
            tombstones: Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), tombstones)),
            table,
        }))
    }

    /// Opens table `file` of `cf` under its path id; not found there, in the family's other
    /// table paths (paths given in another order than when it was written).
    fn open_file(
        &self,
        cf: &CfHandle,
        file: &FileMetaData,
        reads: Option<crate::fs::ReadFileOptions>,
    ) -> Result<Arc<dyn crate::fs::RandomAccessFile>> {
        let open = |p: &std::path::Path| match reads {
            Some(o) => self.fs.new_random_access_file_with(p, o),
            None => self.fs.new_random_access_file(p),
        };
        let first = open(&cf.table_path(&self.dir, file));
        match first {
            Err(e) if e.os_code() == Some(libc::ENOENT) && cf.table_dirs.len() > 1 => {
                for (dir, _) in &cf.table_dirs {
                    let p = filename::table_file(dir, file.number);
                    if self.fs.file_exists(&p) {
                        return open(&p);
                    }
                }
                Err(e)
            }
            r => r,
        }
    }

    /// `entry.table.get(lookup, fill_cache)` through the row cache, if the database has one:
    /// RocksDB's `TableCache::Get` with `row_cache`. The key is the file's cache key, the
    /// user key and 0 when the lookup sees every entry of the file (its snapshot is at or
    /// past the file's largest seqno), else 1 + the snapshot; only found entries are cached.
    pub fn row_get(
        &self,
        file: &FileMetaData,
        entry: &TableEntry,
        lookup: &[u8],
        reads: impl Into<crate::table::reader::BlockReads>,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let reads: crate::table::reader::BlockReads = reads.into();
        let fill_cache = reads.fill_cache;
        let Some(rc) = &self.row_cache else { return entry.table.get(lookup, reads) };
        let stats = self.statistics.as_deref();
        let snapshot = crate::key::trailer(lookup) >> 8;
        let seq = if snapshot >= file.largest_seqno { 0 } else { snapshot + 1 };
        let key = OffsetableCacheKey::new(self.cache_session, file.number)
            .row_key(seq, crate::key::user_key(lookup));
        if let Some(row) = rc.lookup(&key).and_then(|v| v.downcast::<RowEntry>().ok()) {
            record_tick(stats, Ticker::RowCacheHit, 1);
            return Ok(Some((row.0.clone(), row.1.clone())));
        }
        record_tick(stats, Ticker::RowCacheMiss, 1);
        let found = entry.table.get(lookup, reads)?;
        if let Some((k, v)) = &found {
            if fill_cache && !reads.no_io {
                let charge = k.len() + v.len() + std::mem::size_of::<RowEntry>();
                // A full strict cache only loses the caching, not the read (RocksDB ignores it).
                let _ =
                    rc.insert_entry(key, Arc::new(RowEntry(k.clone(), v.clone())), charge, role::MISC, false);
            }
        }
        Ok(found)
    }

    /// The memory table `number`'s reader holds, if it is open (0 if not: nothing is opened).
    pub fn reader_memory(&self, number: u64) -> u64 {
        self.map.read().get(&number).map_or(0, |(e, _)| e.table.approximate_memory_usage() as u64)
    }

    /// RocksDB's `TableCache::ReleaseObsolete`: table `file` left the database; its open
    /// readers (pinned in `file`, or in the cache) erase their cached blocks with effort
    /// `uncache_aggressiveness` when the last user drops them.
    pub fn mark_obsolete(&self, file: &FileMetaData, uncache_aggressiveness: u32) {
        if uncache_aggressiveness == 0 {
            return;
        }
        if let Some(e) = file.pinned_reader.get::<TableEntry>() {
            e.table.mark_obsolete(uncache_aggressiveness);
        }
        if let Some((e, _)) = self.map.read().get(&file.number) {
            e.table.mark_obsolete(uncache_aggressiveness);
        }
    }

    pub fn evict(&self, number: u64) {
        self.map.write().remove(&number);
    }
}
