//! RocksDB's mutable DB options (`MutableDBOptions`), the ones `SetDBOptions` changes on an
//! open database (rust-rocksdb's `set_db_options` of later releases; the facade's
//! `DB::set_db_options`).
//!
//! The open reads every option from `DbConfig`; the options below are read from here
//! instead, at the place each acts, so a change reaches the next use:
//! - `max_total_wal_size`: the WAL limit (`wal_limit.rs`) is recomputed at once;
//! - `delayed_write_rate`: the write controller's rate (`write_controller.rs`), at once;
//! - `max_subcompactions`, `compaction_readahead_size`: the next compaction that starts;
//! - `stats_history_buffer_size`: the next stats snapshot kept in memory;
//! - `avoid_flush_during_shutdown`, `verify_manifest_content_on_close`,
//!   `optimize_manifest_for_recovery`: the close;
//! - `max_manifest_file_size`, `max_manifest_space_amp_pct`: the next MANIFEST write's roll
//!   decision (`version/set.rs`);
//! - `delete_obsolete_files_period_micros`: the next purge (`obsolete.rs`);
//! - `stats_dump_period_sec`, `stats_persist_period_sec`: the periodic stats tasks
//!   (`scheduler.rs`): a new period above 0 runs the task at once and then every period, 0
//!   stops it (RocksDB's `PeriodicTaskScheduler::Register(.., run_immediately = true)` and
//!   `Unregister`);
//! - `max_compaction_trigger_wakeup_seconds`: the period of the time-based compaction
//!   trigger (`compaction/trigger.rs`), from its next look;
//! - `max_background_jobs`, `max_background_flushes`, `max_background_compactions`: the
//!   job limits (RocksDB's `GetBGJobLimits`, resolved by the caller) at once; a pool below
//!   its new limit grows to it, pools never shrink, and the pools are woken
//!   (`scheduler.rs::set_background_job_limits`);
//! - `max_open_files`: the table cache's capacity, `max_open_files - 10` (-1: unbounded),
//!   readers past it closed at once (`table_cache.rs::set_capacity`);
//! - `bytes_per_sync`, `strict_bytes_per_sync`, `writable_file_max_buffer_size`,
//!   `manifest_preallocation_size`: every file created from then on
//!   (`buffered_fs.rs::LiveFileWrites`: tables, blob files, the next MANIFEST);
//! - `wal_bytes_per_sync`: the next WAL, and as RocksDB a changed value switches to a new
//!   WAL at once (`SwitchWAL`: the families holding the oldest live WAL switch their
//!   memtables and flush), so the WAL written next uses it.
//!
//! As RocksDB's `SetDBOptions`, the facade checks every value before any is applied, and
//! writes a new OPTIONS file after.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use super::buffered_fs::LiveFileWrites;
use super::DbInner;
use crate::config::DbConfig;
use crate::error::Result;

/// The values in force of the mutable DB options read outside `DbConfig` (see the module
/// comment). Relaxed atomics: each is one independent setting, read where it acts.
pub struct LiveDbOptions {
    pub max_subcompactions: AtomicU32,
    pub compaction_readahead_size: AtomicU64,
    pub stats_history_buffer_size: AtomicU64,
    pub avoid_flush_during_shutdown: AtomicBool,
    pub verify_manifest_content_on_close: AtomicBool,
    pub optimize_manifest_for_recovery: AtomicBool,
    pub stats_dump_period_sec: AtomicU32,
    pub stats_persist_period_sec: AtomicU32,
    pub max_compaction_trigger_wakeup_seconds: AtomicU64,
    /// A new stats period was set: its task runs at once (taken by the task's thread).
    pub stats_dump_now: AtomicBool,
    pub stats_persist_now: AtomicBool,
    /// The file options read where each file is created, shared with the database's file
    /// system (`buffered_fs.rs`).
    pub file_writes: Arc<LiveFileWrites>,
}

impl LiveDbOptions {
    pub fn new(c: &DbConfig, file_writes: Arc<LiveFileWrites>) -> LiveDbOptions {
        LiveDbOptions {
            file_writes,
            max_subcompactions: AtomicU32::new(c.max_subcompactions),
            compaction_readahead_size: AtomicU64::new(c.compaction_readahead_size),
            stats_history_buffer_size: AtomicU64::new(c.stats_history_buffer_size as u64),
            avoid_flush_during_shutdown: AtomicBool::new(c.avoid_flush_during_shutdown),
            verify_manifest_content_on_close: AtomicBool::new(c.verify_manifest_content_on_close),
            optimize_manifest_for_recovery: AtomicBool::new(c.optimize_manifest_for_recovery),
            stats_dump_period_sec: AtomicU32::new(c.stats_dump_period_sec),
            stats_persist_period_sec: AtomicU32::new(c.stats_persist_period_sec),
            max_compaction_trigger_wakeup_seconds: AtomicU64::new(c.max_compaction_trigger_wakeup_seconds),
            stats_dump_now: AtomicBool::new(false),
            stats_persist_now: AtomicBool::new(false),
        }
    }

    pub fn max_subcompactions(&self) -> u32 {
        self.max_subcompactions.load(Ordering::Relaxed)
    }
    pub fn compaction_readahead_size(&self) -> u64 {
        self.compaction_readahead_size.load(Ordering::Relaxed)
    }
    pub fn stats_history_buffer_size(&self) -> u64 {
        self.stats_history_buffer_size.load(Ordering::Relaxed)
    }
    pub fn avoid_flush_during_shutdown(&self) -> bool {
        self.avoid_flush_during_shutdown.load(Ordering::Relaxed)
    }
    pub fn verify_manifest_content_on_close(&self) -> bool {
        self.verify_manifest_content_on_close.load(Ordering::Relaxed)
    }
    pub fn optimize_manifest_for_recovery(&self) -> bool {
        self.optimize_manifest_for_recovery.load(Ordering::Relaxed)
    }
    pub fn stats_dump_period_sec(&self) -> u32 {
        self.stats_dump_period_sec.load(Ordering::Relaxed)
    }
    pub fn stats_persist_period_sec(&self) -> u32 {
        self.stats_persist_period_sec.load(Ordering::Relaxed)
    }
    pub fn max_compaction_trigger_wakeup_seconds(&self) -> u64 {
        self.max_compaction_trigger_wakeup_seconds.load(Ordering::Relaxed)
    }
}

/// One `SetDBOptions` call: the new value of each option named (None: unchanged).
#[derive(Clone, Debug, Default)]
pub struct DbOptionsUpdate {
    pub max_total_wal_size: Option<u64>,
    pub delayed_write_rate: Option<u64>,
    pub max_subcompactions: Option<u32>,
    pub compaction_readahead_size: Option<u64>,
    pub stats_history_buffer_size: Option<u64>,
    pub avoid_flush_during_shutdown: Option<bool>,
    pub verify_manifest_content_on_close: Option<bool>,
    pub optimize_manifest_for_recovery: Option<bool>,
    pub max_manifest_file_size: Option<u64>,
    pub max_manifest_space_amp_pct: Option<i32>,
    pub delete_obsolete_files_period_micros: Option<u64>,
    pub stats_dump_period_sec: Option<u32>,
    pub stats_persist_period_sec: Option<u32>,
    pub max_compaction_trigger_wakeup_seconds: Option<u64>,
    /// `GetBGJobLimits` of the new `max_background_*` values: (flushes, compactions).
    pub background_job_limits: Option<(usize, usize)>,
    pub max_open_files: Option<i32>,
    pub bytes_per_sync: Option<u64>,
    pub wal_bytes_per_sync: Option<u64>,
    pub strict_bytes_per_sync: Option<bool>,
    pub writable_file_max_buffer_size: Option<u64>,
    pub manifest_preallocation_size: Option<u64>,
}

impl DbInner {
    /// Applies `u` (RocksDB's `SetDBOptions` once the values were checked). Fails only when
    /// a pool could not grow (a thread could not be started); a WAL switch that fails is
    /// written to LOG, as RocksDB's "Unable to purge WAL files in SetDBOptions()".
    pub fn set_db_options(self: &Arc<Self>, u: &DbOptionsUpdate) -> Result<()> {
        let live = &self.live_options;
        if let Some((flushes, compactions)) = u.background_job_limits {
            self.set_background_job_limits(flushes, compactions)?;
        }
        if let Some(v) = u.max_open_files {
            self.table_cache.set_capacity(v);
        }
        let files = &live.file_writes;
        if let Some(v) = u.bytes_per_sync {
            files.set_bytes_per_sync(v);
        }
        if let Some(v) = u.strict_bytes_per_sync {
            files.set_strict_bytes_per_sync(v);
        }
        if let Some(v) = u.writable_file_max_buffer_size {
            files.set_max_buffer_size(v);
        }
        if let Some(v) = u.manifest_preallocation_size {
            files.set_manifest_preallocation_size(v);
        }
        let wal_changed = u.wal_bytes_per_sync.is_some_and(|v| files.set_wal_bytes_per_sync(v));
        if let Some(v) = u.max_subcompactions {
            live.max_subcompactions.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.compaction_readahead_size {
            live.compaction_readahead_size.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.stats_history_buffer_size {
            live.stats_history_buffer_size.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.avoid_flush_during_shutdown {
            live.avoid_flush_during_shutdown.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.verify_manifest_content_on_close {
            live.verify_manifest_content_on_close.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.optimize_manifest_for_recovery {
            live.optimize_manifest_for_recovery.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.max_compaction_trigger_wakeup_seconds {
            live.max_compaction_trigger_wakeup_seconds.store(v, Ordering::Relaxed);
        }
        let mut wake = false;
        if let Some(v) = u.stats_dump_period_sec {
            // As RocksDB's Register: an unchanged period keeps its schedule.
            if live.stats_dump_period_sec.swap(v, Ordering::Relaxed) != v && v > 0 {
                live.stats_dump_now.store(true, Ordering::Release);
                wake = true;
            }
        }
        if let Some(v) = u.stats_persist_period_sec {
            if live.stats_persist_period_sec.swap(v, Ordering::Relaxed) != v && v > 0 {
                live.stats_persist_now.store(true, Ordering::Release);
                wake = true;
            }
        }
        if wake {
            let _st = self.lock_state();
            self.work_cv.notify_all();
        }
        if let Some(v) = u.delete_obsolete_files_period_micros {
            self.delete_obsolete_files_period.store(v, Ordering::Relaxed);
        }
        if let Some(v) = u.delayed_write_rate {
            self.write_control.set_delayed_write_rate(v);
        }
        if u.max_manifest_file_size.is_some() || u.max_manifest_space_amp_pct.is_some() {
            self.versions.set_manifest_limits(u.max_manifest_file_size, u.max_manifest_space_amp_pct);
        }
        if let Some(v) = u.max_total_wal_size {
            // As RocksDB: the limit changes at once; the next write past it flushes the
            // families holding the oldest WAL (`wal_limit.rs`).
            let st = self.lock_state();
            self.wal_total.set_configured(v, &st);
        }
        if wal_changed {
            if let Err(e) = self.switch_wal() {
                self.info_log.log_at(
                    crate::config::LogLevel::Warn,
                    format_args!("Unable to purge WAL files in SetDBOptions() -- {e}"),
                );
            }
        }
        Ok(())
    }

    /// RocksDB's `SwitchWAL` as `SetDBOptions` calls it (as the only writer): the families
    /// whose data the oldest live WAL holds switch their memtables, which starts a new WAL
    /// (with the options in force) unless the current one is empty, and are flushed.
    fn switch_wal(&self) -> Result<()> {
        self.exclusive_write(|| {
            let mut st = self.lock_state();
            let Some((oldest, mems, imm_only)) = self.wal_total.families_holding_oldest(&st) else {
                return Ok(());
            };
            self.info_log.buffer_line(format_args!(
                "Flushing all column families with data in WAL number {oldest}. Total log size is {} while max_total_wal_size is {}",
                self.wal_total.last_total(),
                self.wal_total.limit()
            ));
            for &id in mems.iter().chain(&imm_only) {
                if let Some(c) = st.cfs.get_mut(&id) {
                    c.force_flush = true;
                }
            }
            for id in imm_only {
                self.schedule_flush(&mut st, id);
            }
            let mut switch = mems;
            self.widen_for_atomic_flush(&st, &mut switch);
            if !switch.is_empty() {
                self.switch_memtables(&mut st, &switch, false)?;
            }
            Ok(())
        })
    }
}
