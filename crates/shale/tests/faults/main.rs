//! Faults: I/O errors, full disks, corruption, crashes and kills, panics, background errors and
//! recovery, and the locking rules that keep file I/O off the DB mutex.
//!
//! One test binary (each file under `tests/` is one more binary linking the whole engine);
//! each file of this folder is a module of it, named as the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

#[path = "../common/mod.rs"]
mod common;
#[path = "../families/mod.rs"]
mod families;
#[path = "../tools/mod.rs"]
mod tools;
#[path = "../util/mod.rs"]
mod util;

mod avoid_blocking_io_purge;
mod bg_error_compaction_nospace;
mod bg_error_flush_auto_recovery;
mod bg_error_flush_manual_resume;
mod bg_error_wal_nospace;
mod blob_recovery_flush;
mod block_cache_entry_stats_no_db_mutex;
mod block_cache_entry_stats_slow_scan;
mod close_stops_compaction;
mod corruption_blob;
mod corruption_matrix;
mod crash_sweep;
mod crash_sweep_ingest_backup;
mod disk_full_tmpfs;
mod info_log_unlocked;
mod io_error_loop;
mod manual_wal_flush;
mod panic_halts;
mod pipelined_write;
mod repair_blob;
mod resume;
mod ribbon_filter_recovery;
mod two_write_queues;
mod unordered_write;
mod wal_lazy_sync;
mod wal_recovery_readonly_secondary;
mod wal_recycle_kill;
mod wal_sync_unlocked;
mod wal_torn_older_wal;
mod write_stall;
