//! Column families: handles, descriptors, the per-family read view (SuperVersion), and
//! creating and dropping families.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

// These locks guard an Arc swapped or cloned, or a Vec pushed to: no code that can panic
// runs under them, so they are parking_lot locks, which have no poisoned state
// (`halt.rs`: a poisoned engine lock halts the database).
use parking_lot::{Mutex, RwLock};

use super::write_controller::StallCondition;
use super::DbInner;
use crate::cache::BlockCache;
use crate::compaction::picker::RunningCompaction;
use crate::config::CfConfig;
use crate::error::{Error, Result};
use crate::key::InternalKeyComparator;
use crate::memtable::MemTable;
use crate::version::edit::VersionEdit;
use crate::version::Version;

pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

/// What is fixed about an open column family, plus its current read view.
pub struct CfHandle {
    pub id: u32,
    pub name: String,
    /// The family's configuration and the layer above's record of its options; the
    /// facade's `set_options` replaces both (`cf_settings.rs`, `dyn_options.rs`).
    pub settings: super::cf_settings::CfSettings,
    pub icmp: InternalKeyComparator,
    /// The block cache of tables read without one named in the configuration (the
    /// database's 32 MiB default, as RocksDB's default table factory's).
    default_cache: Arc<BlockCache>,
    /// Replaced (under the DB mutex) on every memtable switch, flush and compaction.
    pub super_version: RwLock<Arc<SuperVersion>>,
    /// `super_version` cached per reader thread, emptied at every install (`local_sv.rs`).
    local_sv: super::local_sv::LocalSv,
    /// The number of the installed SuperVersion (`rocksdb.current-super-version-number`);
    /// readers may compare it with a relaxed load.
    pub super_version_number: AtomicU64,
    /// How many times an auto-refreshing or tailing iterator moved onto a newer
    /// SuperVersion of this family (`rocksdb.shale.iterator-auto-refreshes`).
    pub iterator_refreshes: AtomicU64,
    pub dropped: AtomicBool,
    /// Every memtable some SuperVersion of this family has held and that is still alive:
    /// the active one, the immutable ones, and flushed ones an iterator still pins
    /// (`rocksdb.size-all-mem-tables` counts all three, as RocksDB's). A leaf lock.
    live_mems: Mutex<Vec<Weak<MemTable>>>,
    /// User-defined timestamps: reads below this timestamp are refused and compaction may
    /// collect versions older than it (empty: none set). Persisted in the MANIFEST.
    pub full_history_ts_low: Mutex<Vec<u8>>,
    /// The database's sequence-number-to-time mapping as this family last got it (RocksDB
    /// keeps it in the SuperVersion; None while the family's `preserve_internal_time_seconds`
    /// is 0): what a flush of the family stores (`seqno_time.rs`). A leaf lock.
    pub seqno_time: Mutex<Option<Arc<crate::table::seqno_time::SeqnoToTimeMapping>>>,
    /// The family's table directories with target sizes (`paths.rs`); path ids index it.
    pub table_dirs: Vec<(std::path::PathBuf, u64)>,
    /// The block cache's entry-statistics collector entry, held while the family is open
    /// (RocksDB's `InternalStats` holds it the same way; `BlockCache::stats_collector_entry`).
    _cache_stats_entry: Option<Arc<crate::cache::CacheReservation>>,
    /// Compaction and flush figures, stall counts (`rocksdb.cfstats`; a leaf lock).
    pub internal_stats: super::internal_stats::CfInternalStats,
    /// `enable_blob_direct_write` (with blob files, as sanitized): the family's write-path
    /// blob files, made when the family is opened (`blob_direct.rs`).
    pub direct_write: Option<Arc<crate::blob_direct::DirectBlobWriter>>,
    /// RocksDB's `ColumnFamilyData::ingest_sst_lock_`: every ingestion into the family holds
    /// it shared; an iterator's range conversion (`min_tombstones_for_range_conversion`)
    /// tries it exclusively and gives up when it cannot have it. A leaf lock.
    pub ingest_lock: Arc<parking_lot::RwLock<()>>,
}

impl CfHandle {
    /// A family's handle with configuration `config` (and `record`, the layer above's
    /// record of the options it came from, `cf_settings.rs`); its tables use
    /// `default_cache` unless the configuration names a block cache or none.
    pub fn new(
        id: u32,
        name: &str,
        config: CfConfig,
        record: super::cf_settings::LayerRecord,
        default_cache: &Arc<BlockCache>,
        sv: SuperVersion,
    ) -> CfHandle {
        let block_cache = resolve_block_cache(&config, default_cache);
        let _cache_stats_entry = block_cache.as_ref().and_then(|c| c.stats_collector_entry());
        let direct_write = config.blob.direct_write.then(|| {
            Arc::new(crate::blob_direct::DirectBlobWriter::new(
                id,
                config.blob.direct_write_partitions,
                config.blob.blob_file_size,
            ))
        });
        CfHandle {
            direct_write,
            _cache_stats_entry,
            id,
            name: name.to_string(),
            icmp: config.table.icmp.clone(),
            settings: super::cf_settings::CfSettings::new(config, record),
            default_cache: default_cache.clone(),
            super_version_number: AtomicU64::new(sv.number),
            iterator_refreshes: AtomicU64::new(0),
            live_mems: Mutex::new(
                std::iter::once(&sv.mem).chain(sv.imm.iter()).map(Arc::downgrade).collect(),
            ),
            super_version: RwLock::new(Arc::new(sv)),
            local_sv: super::local_sv::LocalSv::new(),
            dropped: AtomicBool::new(false),
            full_history_ts_low: Mutex::new(Vec::new()),
            seqno_time: Mutex::new(None),
            ingest_lock: Arc::new(parking_lot::RwLock::new(())),
            table_dirs: Vec::new(),
            internal_stats: Default::default(),
        }
    }

    /// The block cache of the configuration in force (None with `no_block_cache`): a table
    /// reader takes it when it is opened, so a `set_options` that names another cache acts
    /// on the readers opened from then on, as RocksDB's cloned table factory does.
    pub fn block_cache(&self) -> Option<Arc<BlockCache>> {
        resolve_block_cache(self.config(), &self.default_cache)
    }

    /// Sets the family's table directories (`paths::table_dirs`).
    pub fn with_table_dirs(mut self, dirs: Vec<(std::path::PathBuf, u64)>) -> CfHandle {
        self.table_dirs = dirs;
        self
    }

    /// The directory of path `path_id` (the database directory when none is set).
    pub fn table_dir<'a>(&'a self, db_dir: &'a std::path::Path, path_id: u32) -> &'a std::path::Path {
        if self.table_dirs.is_empty() {
            db_dir
        } else {
            super::paths::dir_of(&self.table_dirs, path_id)
        }
    }

    /// The file of table `f`.
    pub fn table_path(
        &self,
        db_dir: &std::path::Path,
        f: &crate::version::edit::FileMetaData,
    ) -> std::path::PathBuf {
        super::filename::table_file(self.table_dir(db_dir, f.path_id), f.number)
    }

    /// The family's `full_history_ts_low` (empty when none is set).
    pub fn full_history_ts_low(&self) -> Vec<u8> {
        self.full_history_ts_low.lock().clone()
    }

    /// Notes the memtables of a new SuperVersion, forgetting those no one holds any more.
    fn note_mems(&self, mem: &Arc<MemTable>, imm: &[Arc<MemTable>]) {
        let mut live = self.live_mems.lock();
        live.retain(|w| w.strong_count() > 0);
        for m in std::iter::once(mem).chain(imm.iter()) {
            if !live.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(m))) {
                live.push(Arc::downgrade(m));
            }
        }
    }

    /// Bytes of every memtable of this family still alive: active, immutable, and flushed
    /// ones pinned by readers (`rocksdb.size-all-mem-tables`).
    pub fn all_mem_tables_size(&self) -> u64 {
        let live = self.live_mems.lock();
        live.iter().filter_map(Weak::upgrade).map(|m| m.approximate_memory_usage() as u64).sum()
    }

    pub fn super_version(&self) -> Arc<SuperVersion> {
        self.super_version.read().clone()
    }

    /// The current SuperVersion for one read on this thread, through the thread's cached
    /// reference (RocksDB's `GetThreadLocalSuperVersion`; see `local_sv.rs`).
    #[inline]
    pub fn local_super_version(&self) -> super::local_sv::SvRef {
        self.local_sv.acquire(|| self.super_version())
    }

    /// Installs a new read view (DB mutex held by the caller, so numbers only grow).
    pub fn install(&self, mem: Arc<MemTable>, imm: Vec<Arc<MemTable>>, current: Arc<Version>) {
        self.install_with_history(mem, imm, Vec::new(), current);
    }

    /// As `install`, with the flushed memtables kept as history (newest first).
    pub fn install_with_history(
        &self,
        mem: Arc<MemTable>,
        imm: Vec<Arc<MemTable>>,
        history: Vec<Arc<MemTable>>,
        current: Arc<Version>,
    ) {
        let number = self.super_version_number.load(Ordering::Relaxed) + 1;
        self.note_mems(&mem, &imm);
        let mut sv = SuperVersion::new(number, mem, imm, current);
        sv.history = history;
        let sv = Arc::new(sv);
        *self.super_version.write() = sv;
        self.super_version_number.store(number, Ordering::Release);
        // Threads' cached references to older SuperVersions go now, before the caller may
        // write into a memtable this one added or delete files it no longer holds.
        self.local_sv.scrape();
    }

    /// The family's configuration in force (rebuilt at every `set_options`).
    pub fn config(&self) -> &CfConfig {
        self.settings.config()
    }

    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// A fresh, empty memtable for this family (`log_number`: the WAL it starts in).
    pub fn new_memtable(&self, log_number: u64) -> Arc<MemTable> {
        Arc::new(
            MemTable::for_write_buffer(
                self.icmp.clone(),
                log_number,
                self.config().memtable.arena_block_size,
                self.config().memtable.write_buffer_manager.clone(),
            )
            .with_bloom_of(&self.config().memtable),
        )
    }
}

/// A consistent read view of one column family.
pub struct SuperVersion {
    pub number: u64,
    pub mem: Arc<MemTable>,
    /// Immutable memtables, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// Flushed memtables kept for transaction conflict checks
    /// (`max_write_buffer_size_to_maintain`), newest first; reads do not look at them.
    pub history: Vec<Arc<MemTable>>,
    pub current: Arc<Version>,
    /// What iterators need from `current`, computed by the first iterator.
    pub iter_parts: OnceLock<Arc<super::iter_build::IterParts>>,
}

impl SuperVersion {
    pub fn new(
        number: u64,
        mem: Arc<MemTable>,
        imm: Vec<Arc<MemTable>>,
        current: Arc<Version>,
    ) -> SuperVersion {
        SuperVersion { number, mem, imm, history: Vec::new(), current, iter_parts: OnceLock::new() }
    }
}

/// One column family's mutable state, guarded by the DB mutex.
pub struct CfState {
    pub handle: Arc<CfHandle>,
    pub mem: Arc<MemTable>,
    /// Immutable memtables, oldest first, each with the WAL number that began after it.
    pub imm: Vec<(Arc<MemTable>, u64)>,
    /// Flushed memtables kept as history (`max_write_buffer_size_to_maintain`), oldest
    /// first, as RocksDB's `MemTableListVersion::memlist_history_`.
    pub history: Vec<Arc<MemTable>>,
    pub current: Arc<Version>,
    /// WALs below this number hold nothing of this column family that is not in its tables.
    pub log_number: u64,
    /// Versions of this family still held by readers (`rocksdb.num-live-versions`).
    pub live_versions: Vec<Weak<Version>>,
    /// Memtables switched to immutable / flushed so far (manual flushes wait on these).
    pub mems_switched: u64,
    pub mems_flushed: u64,
    /// How many switched memtables the oldest immutable one stands for beyond itself: a
    /// MemPurge merges n of them into one (n - 1 more). Counted in `mems_flushed` when it
    /// is flushed, so a flush waiting for the n reaches its count.
    pub imm_front_merged: u64,
    /// The oldest immutable memtable is a MemPurge's output. RocksDB adds it to the
    /// immutable list without a flush request (`MemTableList::Add`, no
    /// `EnqueuePendingFlush`): it is flushed or purged again only with memtables switched
    /// after it (their request) or by a manual flush, never alone.
    pub imm_front_purged: bool,
    /// In the flush queue / being flushed (one flush per family at a time, so memtables
    /// reach level 0 in order).
    pub flush_queued: bool,
    pub flush_running: bool,
    /// In the compaction queue; compactions running; files they read and the key ranges
    /// they write (the picker keeps parallel compactions apart with these).
    pub compaction_queued: bool,
    pub running: Vec<RunningCompaction>,
    pub being_compacted: HashSet<u64>,
    /// Being dropped: no new job starts.
    pub dropping: bool,
    /// A manual flush (or recovery) wants every immutable memtable flushed, however few
    /// (`Options::flush_merge_min`); cleared once none is left.
    pub force_flush: bool,
    pub stall: StallCondition,
    /// Under compaction pressure (counted in `DbState::speedup_cfs`).
    pub speedup: bool,
}

impl CfState {
    /// Whether the immutable memtables wait for a flush: some are not a MemPurge's output
    /// alone, or a manual flush (recovery) wants them all.
    pub fn imm_wants_flush(&self) -> bool {
        !self.imm.is_empty() && (self.force_flush || !(self.imm_front_purged && self.imm.len() == 1))
    }

    pub fn new(handle: Arc<CfHandle>, mem: Arc<MemTable>, current: Arc<Version>, log_number: u64) -> CfState {
        CfState {
            live_versions: vec![Arc::downgrade(&current)],
            handle,
            mem,
            imm: Vec::new(),
            history: Vec::new(),
            current,
            log_number,
            mems_switched: 0,
            mems_flushed: 0,
            imm_front_merged: 0,
            imm_front_purged: false,
            flush_queued: false,
            flush_running: false,
            compaction_queued: false,
            running: Vec::new(),
            being_compacted: HashSet::new(),
            dropping: false,
            force_flush: false,
            stall: StallCondition::Normal,
            speedup: false,
        }
    }

    /// Publishes the state's memtables and version to readers.
    pub fn install_super_version(&mut self) {
        self.handle.install_with_history(
            self.mem.clone(),
            self.imm.iter().rev().map(|(m, _)| m.clone()).collect(),
            self.history.iter().rev().cloned().collect(),
            self.current.clone(),
        );
    }

    /// Moves flushed memtables (oldest first) into the history when the family keeps one,
    /// then trims it (RocksDB's `MemTableListVersion::Remove` and `TrimHistory`): the
    /// oldest kept memtable goes while the unflushed immutable and the kept memtables,
    /// without that oldest one, plus the active memtable's, reach
    /// `max_write_buffer_size_to_maintain` bytes.
    pub fn retire_flushed(&mut self, flushed: impl IntoIterator<Item = Arc<MemTable>>) {
        let limit = self.handle.config().max_write_buffer_size_to_maintain;
        if limit <= 0 {
            self.history.clear();
            return;
        }
        self.history.extend(flushed);
        self.trim_history(limit as u64);
    }

    fn trim_history(&mut self, limit: u64) {
        let active = self.mem.approximate_memory_usage() as u64;
        let unflushed: u64 = self.imm.iter().map(|(m, _)| m.approximate_memory_usage() as u64).sum();
        let mut kept: u64 = self.history.iter().map(|m| m.approximate_memory_usage() as u64).sum();
        while let Some(oldest) = self.history.first() {
            let oldest_bytes = oldest.approximate_memory_usage() as u64;
            if unflushed + kept - oldest_bytes + active < limit {
                break;
            }
            kept -= oldest_bytes;
            self.history.remove(0);
        }
    }

    /// Makes `v` the current Version.
    pub fn set_current(&mut self, v: Arc<Version>) {
        self.live_versions.retain(|w| w.strong_count() > 0);
        self.live_versions.push(Arc::downgrade(&v));
        self.current = v;
    }
}

impl DbInner {
    /// Publishes family `handle`'s new configuration (and the layer above's record of it):
    /// the write leader's memtable limit, the write-stall condition and the compaction
    /// picker see it at once (RocksDB's `InstallSuperVersionAndScheduleWork` after
    /// SetOptions).
    pub fn publish_cf_settings(
        &self,
        handle: &Arc<CfHandle>,
        config: CfConfig,
        record: super::cf_settings::LayerRecord,
    ) {
        let mut st = self.lock_state();
        handle.settings.set(config, record);
        if let Some(cf) = st.cfs.get(&handle.id) {
            // The write leader reads the memtable size limit from here.
            self.publish_active_memtable(handle.id, Some(cf));
        }
        if st.cfs.contains_key(&handle.id) {
            self.stall_changed(&mut st, handle.id);
            self.schedule_compaction(&mut st, handle.id);
        }
        // RocksDB's `InstallSuperVersionForConfigChange` and `RegisterRecordSeqnoTimeWorker`:
        // the mapping's limits follow the settings, with a sample taken now.
        self.record_seqno_time(super::seqno_time::Sampling::ConfigChange);
        // The flush threads' next sample may be due sooner (notified under the DB mutex).
        self.work_cv.notify_all();
    }
}

/// A family to create: its name, its configuration and the layer above's record of its
/// options (`cf_settings.rs`), and its table directories (`paths::table_dirs`, created).
pub struct NewFamily {
    pub name: String,
    pub config: CfConfig,
    pub record: super::cf_settings::LayerRecord,
    pub table_dirs: Vec<(std::path::PathBuf, u64)>,
}

/// Creates column families: one MANIFEST write and one OPTIONS file (through the layer
/// above's hooks) for the whole batch.
pub fn create_families(inner: &Arc<DbInner>, new: Vec<NewFamily>) -> Result<Vec<Arc<CfHandle>>> {
    inner.check_writable()?;
    inner.check_bg_error()?;
    // Exclusive write leadership: no write group is inserting while families appear.
    let handles = inner.exclusive_write(|| -> Result<Vec<Arc<CfHandle>>> {
        // The WAL is durable before a family change reaches the MANIFEST, so that a crash
        // cannot keep the change yet lose unsynced writes made before it.
        inner.sync_wal()?;
        let mut st = inner.lock_state();
        for (i, f) in new.iter().enumerate() {
            let name = &f.name;
            if st.cfs.values().any(|c| &c.handle.name == name) || new[..i].iter().any(|n| &n.name == name) {
                return Err(Error::invalid_argument(format!("Column family already exists: {name}")));
            }
        }
        // The current WAL is the last alive one (read under the DB mutex, which never takes
        // the WAL lock: `wal_sync.rs`).
        let Some(&wal_number) = st.alive_wals.back() else {
            return Err(Error::corruption("no current WAL in the WAL list"));
        };
        let first_id = st.max_column_family + 1;
        let edits: Vec<VersionEdit> = new
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let id = first_id + i as u32;
                VersionEdit {
                    column_family: id,
                    column_family_add: Some(f.name.clone()),
                    comparator: Some(f.config.table.icmp.user_comparator().name().to_string()),
                    persist_user_defined_timestamps: Some(f.config.persist_user_defined_timestamps),
                    log_number: Some(wal_number),
                    max_column_family: Some(id),
                    ..Default::default()
                }
            })
            .collect();
        let mut created = Vec::new();
        let mut new = new;
        inner.log_and_apply(&mut st, edits, |st| {
            for (i, f) in new.drain(..).enumerate() {
                let id = first_id + i as u32;
                let NewFamily { name, config, record, table_dirs } = f;
                let icmp = config.table.icmp.clone();
                let mem = Arc::new(
                    MemTable::for_write_buffer(
                        icmp.clone(),
                        wal_number,
                        config.memtable.arena_block_size,
                        config.memtable.write_buffer_manager.clone(),
                    )
                    .with_bloom_of(&config.memtable),
                );
                let version = Arc::new(Version::new(icmp, config.num_levels, Vec::new()));
                let sv = SuperVersion::new(1, mem.clone(), Vec::new(), version.clone());
                let handle = Arc::new(
                    CfHandle::new(id, &name, config, record, &inner.table_cache.default_block_cache, sv)
                        .with_table_dirs(table_dirs),
                );
                let cf = CfState::new(handle.clone(), mem, version, wal_number);
                inner.publish_active_memtable(id, Some(&cf));
                inner.set_handle(id, Some(handle.clone()));
                st.cfs.insert(id, cf);
                st.max_column_family = id;
                created.push(handle);
            }
            inner.wal_total.refresh(st);
        })?;
        Ok(created)
    })?;
    inner.hooks.write_options_file(inner)?;
    for h in &handles {
        inner.info_log.log(format_args!("Created column family [{}] (ID {})", h.name, h.id));
        inner.hooks.log_cf_options(inner, h)?;
    }
    // A family created with `preserve_internal_time_seconds` (or
    // `preclude_last_level_data_seconds`) gets the mapping at once (RocksDB's
    // `InstallSuperVersionForConfigChange` at CreateColumnFamily).
    if handles.iter().any(|h| h.config().seqno_time_seconds() > 0) {
        inner.record_seqno_time(super::seqno_time::Sampling::ConfigChange);
        inner.wake_workers();
    }
    Ok(handles)
}

pub fn drop_cf(inner: &Arc<DbInner>, handle: &Arc<CfHandle>) -> Result<()> {
    inner.check_writable()?;
    inner.check_bg_error()?;
    inner.exclusive_write(|| -> Result<()> {
        // The WAL is durable before a family change reaches the MANIFEST, so that a crash
        // cannot keep the change yet lose unsynced writes made before it.
        inner.sync_wal()?;
        let mut st = inner.lock_state();
        match st.cfs.get_mut(&handle.id) {
            Some(cf) => cf.dropping = true,
            None => return Err(Error::invalid_argument(format!("Invalid column family: {}", handle.name))),
        }
        // Wait for the family's running flush and compactions; no new one starts.
        while st.cfs.get(&handle.id).is_some_and(|c| c.flush_running || !c.running.is_empty()) {
            inner.done_cv.wait(&mut st);
        }
        let edit =
            VersionEdit { column_family: handle.id, is_column_family_drop: true, ..Default::default() };
        let r = inner.log_and_apply(&mut st, vec![edit], |st| {
            if let Some(cf) = st.cfs.remove(&handle.id) {
                super::write_controller::forget(st, &cf);
                // Its tables are no longer in any current Version: delete them once readers
                // let go of the Versions that hold them.
                let uncache =
                    if inner.config.allow_mmap_reads { 0 } else { cf.handle.config().uncache_aggressiveness };
                for (_, f) in cf.current.all_files() {
                    inner.table_cache.mark_obsolete(f, uncache);
                    st.obsolete_tables.push((
                        f.number,
                        Arc::downgrade(f),
                        cf.handle.table_path(&inner.path, f),
                    ));
                }
                for (n, b) in cf.current.blob_files() {
                    st.obsolete_blobs.push((*n, Arc::downgrade(&b.shared)));
                }
            }
            st.jobs.forget(handle.id);
        });
        if let Err(e) = r {
            if let Some(cf) = st.cfs.get_mut(&handle.id) {
                cf.dropping = false;
            }
            return Err(e);
        }
        handle.dropped.store(true, Ordering::Release);
        inner.publish_active_memtable(handle.id, None);
        inner.set_handle(handle.id, None);
        // The handle outlives the drop (rust-rocksdb code may still hold it): let go of the
        // family's memtables and Version so its tables can be purged now. Readers that are
        // still open hold their own SuperVersion, which keeps the files they read.
        let empty = Arc::new(Version::new(handle.icmp.clone(), handle.config().num_levels, Vec::new()));
        handle.install(Arc::new(MemTable::new(handle.icmp.clone(), 0)), Vec::new(), empty);
        inner.purge_obsolete_files(&mut st);
        Ok(())
    })?;
    // RocksDB's `DropColumnFamilyImpl` registers the mapping's task again when the family
    // had `preserve_internal_time_seconds`: the limits follow the families left.
    if handle.config().preserve_internal_time_seconds > 0 {
        inner.record_seqno_time(super::seqno_time::Sampling::Register);
        inner.wake_workers();
    }
    inner.hooks.write_options_file(inner)?;
    inner.info_log.log(format_args!("Dropped column family [{}] (ID {})", handle.name, handle.id));
    Ok(())
}

/// The block cache a family with `config` reads through: none with `no_block_cache`, else
/// the one it names, else the database's default.
fn resolve_block_cache(config: &CfConfig, default_cache: &Arc<BlockCache>) -> Option<Arc<BlockCache>> {
    if config.no_block_cache {
        None
    } else {
        Some(config.block_cache.clone().unwrap_or_else(|| default_cache.clone()))
    }
}
