//! `property_value` / `property_int_value` with RocksDB's property names.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::cf::CfHandle;
use super::DbInner;

const PREFIX: &str = "rocksdb.";

impl DbInner {
    pub fn int_property(&self, cf: &CfHandle, name: &str) -> Option<u64> {
        let prop = name.strip_prefix(PREFIX)?;
        // Properties of the read view need no DB mutex.
        match prop {
            "current-super-version-number" => return Some(cf.super_version_number.load(Ordering::Acquire)),
            // Shale's own: moves of auto-refreshing and tailing iterators onto a newer
            // SuperVersion of the family (`db/iterator.rs`).
            "shale.iterator-auto-refreshes" => return Some(cf.iterator_refreshes.load(Ordering::Relaxed)),
            // Shale's own: tries of the adaptive DB mutex's spin that found it held
            // (`use_adaptive_mutex`; always 0 without it).
            "shale.db-mutex-spins" => return Some(self.db_mutex_spins.load(Ordering::Relaxed)),
            // Active, immutable, and flushed memtables readers still pin (RocksDB's meaning).
            "size-all-mem-tables" => return Some(cf.all_mem_tables_size()),
            "actual-delayed-write-rate" => {
                let delayed = self.lock_state().delayed_cfs > 0;
                return Some(if delayed { self.write_control.delayed_write_rate() } else { 0 });
            }
            "estimate-num-keys" => {
                // The memtables' counts under the DB mutex, the tables' outside it (their
                // properties may need a table opened).
                let (mut n, v) = {
                    let st = self.lock_state();
                    let c = st.cfs.get(&cf.id)?;
                    let mems = std::iter::once(&c.mem).chain(c.imm.iter().map(|(m, _)| m));
                    let n: i64 = mems.map(|m| m.num_entries() as i64 - 2 * m.num_deletes() as i64).sum();
                    (n, c.current.clone())
                };
                for (_, f) in v.all_files() {
                    if let Ok(e) = self.table_cache.get(cf, f) {
                        let p = e.table.properties();
                        n += p.num_entries as i64 - 2 * p.num_deletions as i64;
                    }
                }
                return Some(n.max(0) as u64);
            }
            // Shale's own (tests use it to see that filters spare data-block reads): data
            // blocks read from the family's table files, block-cache hits excluded.
            "shale.data-blocks-read" => {
                let v = self.lock_state().cfs.get(&cf.id)?.current.clone();
                return Some(
                    v.all_files()
                        .filter_map(|(_, f)| self.table_cache.get(cf, f).ok())
                        .map(|e| e.table.data_blocks_read())
                        .sum(),
                );
            }
            _ => {}
        }
        let st = self.lock_state();
        let c = st.cfs.get(&cf.id)?;
        let v = &c.current;
        if let Some(level) = prop.strip_prefix("num-files-at-level") {
            let level: usize = level.parse().ok()?;
            return (level < v.num_levels()).then(|| v.num_files(level) as u64);
        }
        let mems = || std::iter::once(&c.mem).chain(c.imm.iter().map(|(m, _)| m));
        let stats = |f: &crate::version::edit::FileMetaData| self.file_stats(cf, f);
        let busy = crate::compaction::picker::Busy {
            files: Some(&c.being_compacted),
            running: &c.running,
            stats: Some(&stats),
            opts: None,
            oldest_snapshot: self.oldest_snapshot_released.load(std::sync::atomic::Ordering::Acquire),
            require_max_output_level: false,
        };
        Some(match prop {
            "num-immutable-mem-table" => c.imm.len() as u64,
            "mem-table-flush-pending" => u64::from(!c.imm.is_empty()),
            // RocksDB's `HandleCompactionPending` (`NeedsCompaction`): due or not whatever
            // `disable_auto_compactions` says.
            "compaction-pending" => {
                u64::from(crate::compaction::picker::pick_due(v, cf.config(), busy).is_some())
            }
            "background-errors" => st.errors.bg_error_count,
            "cur-size-active-mem-table" => c.mem.approximate_memory_usage() as u64,
            "cur-size-all-mem-tables" => mems().map(|m| m.approximate_memory_usage() as u64).sum(),
            "num-entries-active-mem-table" => c.mem.num_entries(),
            // Shale's own: inserts into the active memtable that started from an insert
            // hint (`memtable_insert_with_hint_prefix_extractor`'s per prefix, or
            // `memtable_insert_hint_per_batch`'s per batch).
            "shale.mem-table-hinted-inserts" => c.mem.hinted_inserts(),
            "num-entries-imm-mem-tables" => c.imm.iter().map(|(m, _)| m.num_entries()).sum(),
            "num-deletes-active-mem-table" => c.mem.num_deletes(),
            "total-sst-files-size" | "live-sst-files-size" => v.all_files().map(|(_, f)| f.file_size).sum(),
            "estimate-live-data-size" => v.all_files().map(|(_, f)| f.file_size).sum(),
            // BlobDB (RocksDB's blob properties; sizes as the MANIFEST records them, plus
            // each file's header and footer).
            "num-blob-files" => v.blob_files().len() as u64,
            "total-blob-file-size" | "live-blob-file-size" => v
                .blob_files()
                .values()
                .map(|b| {
                    b.shared.total_blob_bytes
                        + (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64
                })
                .sum(),
            "live-blob-file-garbage-size" => v.blob_files().values().map(|b| b.garbage_blob_bytes).sum(),
            // A poisoned snapshot list halts the database (`halt.rs`); the public property
            // calls then return the halt error.
            "num-snapshots" => {
                self.lock_or_halt(&self.snapshots, "snapshot list").ok()?.values().sum::<usize>() as u64
            }
            "oldest-snapshot-time" => self.oldest_snapshot_time().ok()?,
            "num-live-versions" => c.live_versions.iter().filter(|w| w.strong_count() > 0).count() as u64,
            "is-write-stopped" => u64::from(st.stopped_cfs > 0),
            "base-level" => crate::compaction::picker::level_targets(v, cf.config()).base_level as u64,
            "estimate-pending-compaction-bytes" => {
                crate::compaction::picker::estimated_pending_bytes(v, cf.config())
            }
            "num-running-flushes" => st.jobs.running_flushes as u64,
            "num-running-compactions" => st.jobs.running_compactions as u64,
            "block-cache-capacity" => cf.block_cache().as_ref().map_or(0, |b| b.capacity() as u64),
            "block-cache-usage" => cf.block_cache().as_ref().map_or(0, |b| b.usage() as u64),
            "estimate-table-readers-mem" => {
                v.all_files().map(|(_, f)| self.table_cache.reader_memory(f.number)).sum()
            }
            "min-log-number-to-keep" => st.alive_wals.front().copied().unwrap_or(0),
            // Shale's own: the severity of the current background error (0 none, 1 soft,
            // 2 hard, 3 fatal, 4 unrecoverable; RocksDB's Status::Severity).
            "shale.background-error-severity" => st.errors.severity() as u64,
            _ => return None,
        })
    }

    pub fn string_property(&self, cf: &CfHandle, name: &str) -> Option<String> {
        let prop = name.strip_prefix(PREFIX)?;
        match prop {
            // RocksDB's HandleStats: the family's cfstats, then the DB's.
            "stats" => Some(self.cf_stats_text(cf, false) + &self.db_stats_text()),
            "cfstats" => Some(self.cf_stats_text(cf, false)),
            "cfstats-no-file-histogram" => Some(self.cf_stats_no_file_histogram(cf, false)),
            "cf-file-histogram" => Some(cf_file_histogram(cf)),
            "dbstats" => Some(self.db_stats_text()),
            "sstables" => self.sstables_text(cf),
            // Walked without the DB mutex (see cache/entry_stats.rs); None without a cache.
            "block-cache-entry-stats" => {
                cf.block_cache().as_ref().map(|c| c.collect_entry_stats(true).to_text())
            }
            "fast-block-cache-entry-stats" => {
                cf.block_cache().as_ref().map(|c| c.collect_entry_stats(false).to_text())
            }
            "levelstats" => Some(self.level_stats(cf)),
            "num-files-at-level" => None,
            // RocksDB's HandleLiveSstFilesSizeAtTemperature: the bytes of the live tables
            // whose recorded temperature is the decimal suffix.
            _ if prop.starts_with("live-sst-files-size-at-temperature") => {
                let t: u64 = prop["live-sst-files-size-at-temperature".len()..].parse().ok()?;
                let st = self.lock_state();
                let c = st.cfs.get(&cf.id)?;
                let size: u64 = c
                    .current
                    .all_files()
                    .filter(|(_, f)| u64::from(f.temperature) == t)
                    .map(|(_, f)| f.file_size)
                    .sum();
                Some(size.to_string())
            }
            _ => self.int_property(cf, name).map(|v| v.to_string()),
        }
    }

    /// RocksDB's `HandleLevelStats`.
    fn level_stats(&self, cf: &CfHandle) -> String {
        let st = self.lock_state();
        let mut s = String::from("Level Files Size(MB)\n--------------------\n");
        if let Some(c) = st.cfs.get(&cf.id) {
            for l in 0..c.current.num_levels() {
                let _ = writeln!(
                    s,
                    "{l:>3} {:>8} {:>8.0}",
                    c.current.num_files(l),
                    c.current.level_bytes(l) as f64 / 1048576.0
                );
            }
        }
        s
    }

    /// RocksDB's `Version::DebugString(hex, print_stats)` for `rocksdb.sstables`: each level's
    /// tables as `number:size[smallest_seqno .. largest_seqno]['key' seq:N, type:T .. ...](reads)`.
    /// The version number printed is the family's SuperVersion number (Shale numbers no
    /// Versions apart), and the sampled read count is 0 (Shale samples no reads per file).
    fn sstables_text(&self, cf: &CfHandle) -> Option<String> {
        let st = self.lock_state();
        let c = st.cfs.get(&cf.id)?;
        let number = cf.super_version_number.load(Ordering::Acquire);
        let mut s = String::new();
        for l in 0..c.current.num_levels() {
            let _ = writeln!(s, "--- level {l} --- version# {number} ---");
            for f in c.current.files(l) {
                let _ = writeln!(
                    s,
                    " {}:{}[{} .. {}][{} .. {}](0)",
                    f.number,
                    f.file_size,
                    f.smallest_seqno,
                    f.largest_seqno,
                    internal_key_debug(&f.smallest),
                    internal_key_debug(&f.largest)
                );
            }
        }
        Some(s)
    }

    /// What the compaction table needs of the family's current Version (DB mutex, briefly).
    fn level_shape(&self, cf: &CfHandle) -> super::internal_stats::LevelShape {
        let st = self.lock_state();
        let mut shape = super::internal_stats::LevelShape {
            files: Vec::new(),
            being_compacted: Vec::new(),
            bytes: Vec::new(),
            scores: Vec::new(),
            estimated_pending_compaction_bytes: 0,
            blob_files: 0,
            blob_bytes: 0,
            blob_garbage_bytes: 0,
        };
        if let Some(c) = st.cfs.get(&cf.id) {
            let v = &c.current;
            for l in 0..v.num_levels() {
                shape.files.push(v.num_files(l));
                shape
                    .being_compacted
                    .push(v.files(l).iter().filter(|f| c.being_compacted.contains(&f.number)).count());
                shape.bytes.push(v.level_bytes(l));
            }
            shape.scores = crate::compaction::picker::level_scores(v, cf.config());
            shape.estimated_pending_compaction_bytes =
                crate::compaction::picker::estimated_pending_bytes(v, cf.config());
            let blobs = v.blob_files();
            shape.blob_files = blobs.len();
            for b in blobs.values() {
                shape.blob_bytes += crate::blob::format::HEADER_SIZE as u64
                    + b.shared.total_blob_bytes
                    + crate::blob::format::FOOTER_SIZE as u64;
                shape.blob_garbage_bytes += b.garbage_blob_bytes;
            }
        }
        shape
    }

    /// RocksDB's `DumpCFStatsNoFileHistogram`: the compaction tables and the family's
    /// totals, then the last block-cache entry statistics (never collected here: RocksDB's
    /// rule, as the DB mutex may be held), printed if under a day old.
    pub fn cf_stats_no_file_histogram(&self, cf: &CfHandle, periodic: bool) -> String {
        let shape = self.level_shape(cf);
        let mut s = cf.internal_stats.cf_text(&cf.name, &shape, self.stats.seconds_up(), periodic);
        if let Some(c) = &cf.block_cache() {
            let e = c.last_entry_stats();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64);
            if e.collection_count > 0 && now.saturating_sub(e.last_end_micros) < 86_400_000_000 {
                s.push_str(&e.to_text());
            }
        }
        s
    }

    /// RocksDB's `DumpCFStats`: `cfstats-no-file-histogram` then `cf-file-histogram`.
    pub fn cf_stats_text(&self, cf: &CfHandle, periodic: bool) -> String {
        self.cf_stats_no_file_histogram(cf, periodic) + &cf_file_histogram(cf)
    }

    /// RocksDB's `DBImpl::DumpStats` (run every `stats_dump_period_sec`): the block-cache
    /// entry statistics re-collected by the background rule, without the DB mutex; then into
    /// the info LOG `------- DUMPING STATS -------`, `rocksdb.dbstats` and every family's
    /// periodic cfstats (which move their interval start), and the statistics object's text.
    pub fn dump_stats(&self) {
        let handles: Vec<Arc<CfHandle>> = self.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
        for h in &handles {
            if let Some(c) = &h.block_cache() {
                let _ = c.collect_entry_stats(false);
            }
        }
        let mut text = self.db_stats_text();
        for h in handles.iter().filter(|h| !h.is_dropped()) {
            text.push_str(&self.cf_stats_text(h, true));
        }
        self.info_log.log(format_args!("------- DUMPING STATS -------"));
        self.info_log.log(format_args!("{text}"));
        if let Some(s) = &self.config.statistics {
            self.info_log.log(format_args!("STATISTICS:\n {}", s.to_text()));
        }
        if self.config.dump_malloc_stats {
            if let Some(m) = malloc_stats_text() {
                self.info_log.log(format_args!("------- Malloc STATS -------"));
                self.info_log.log(format_args!("{m}"));
            }
        }
    }

    /// RocksDB's `DumpDBStats`.
    pub fn db_stats_text(&self) -> String {
        super::internal_stats::db_text(
            self.stats.db_counts(),
            self.stats.seconds_up(),
            &self.stats.db_snapshot,
        )
    }
}

// RocksDB's `DumpMallocStats` for the system allocator (glibc's `mallinfo2`).
use shale_base::sys::malloc_stats_text;

/// RocksDB's `DumpCFFileHistogram`: the title, then a histogram per level that has read
/// samples. Shale keeps no per-level read latency histograms yet, so only the title.
fn cf_file_histogram(cf: &CfHandle) -> String {
    format!("\n** File Read Latency Histogram By Level [{}] **\n", cf.name)
}

/// RocksDB's `InternalKey::DebugString(hex = true)`: `'HEX' seq:N, type:T`.
fn internal_key_debug(ikey: &[u8]) -> String {
    match crate::key::parse_internal_key(ikey) {
        Ok(p) => {
            let hex: String = p.user_key.iter().map(|b| format!("{b:02X}")).collect();
            format!("'{hex}' seq:{}, type:{}", p.sequence, p.value_type as u8)
        }
        Err(_) => {
            let hex: String = ikey.iter().map(|b| format!("{b:02X}")).collect();
            format!("{hex}(bad)")
        }
    }
}
