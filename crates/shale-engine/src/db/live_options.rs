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
//!   trigger (`compaction/trigger.rs`), from its next look.
//!
//! As RocksDB's `SetDBOptions`, the facade checks every value before any is applied, and
//! writes a new OPTIONS file after.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::DbInner;
use crate::config::DbConfig;

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
}

impl LiveDbOptions {
    pub fn new(c: &DbConfig) -> LiveDbOptions {
        LiveDbOptions {
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
}

impl DbInner {
    /// Applies `u` (RocksDB's `SetDBOptions` once the values were checked).
    pub fn set_db_options(&self, u: &DbOptionsUpdate) {
        let live = &self.live_options;
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
    }
}
