//! `DB::set_db_options` (RocksDB's `SetDBOptions`): the mutable DB options it changes act on
//! the open database from then on, the OPTIONS file records the values in force, and a call
//! with one bad value changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shale::fs::{FaultInjectionFs, FileSystem, MemFileSystem, OpKind, WritableFile};
use shale::statistics::{Histogram, Ticker};
use shale::{
    ColumnFamilyDescriptor, CompactionDecision, DBCompressionType, ErrorKind, Options, WriteOptions, DB,
};

fn cf_files(db: &DB, cf: &str) -> u64 {
    let h = db.cf_handle(cf).unwrap();
    db.property_int_value_cf(&h, "rocksdb.num-files-at-level0").unwrap().unwrap()
}

fn current_manifest(dir: &Path) -> (u64, PathBuf) {
    let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap().trim().to_string();
    (name.trim_start_matches("MANIFEST-").parse().unwrap(), dir.join(name))
}

/// `max_total_wal_size` set on the open database: the next writes past it flush the family
/// whose single key holds the oldest WAL, which the open's default limit (four times the
/// families' memtable memory) never did.
#[test]
fn max_total_wal_size_flushes_the_oldest_wals_families_once_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.create_missing_column_families(true);
    o.set_write_buffer_size(64 << 20);
    let cfs = ["default", "cold"].map(|n| ColumnFamilyDescriptor::new(n, o.clone()));
    let db = DB::open_cf_descriptors(&o, dir.path(), cfs).unwrap();
    let cold = db.cf_handle("cold").unwrap();
    db.put_cf(&cold, "cold-key", "cold-value").unwrap();
    for i in 0..1024u64 {
        db.put(format!("k{i:06}"), util::value(i, 1024)).unwrap();
    }
    assert_eq!(cf_files(&db, "cold"), 0, "under the open's limit nothing is flushed");
    db.set_db_options(&[("max_total_wal_size", "262144")]).unwrap();
    let mut i = 0u64;
    util::wait_until(60, "family cold flushed", || {
        i += 1;
        db.put(format!("more{i:08}"), "x").unwrap();
        cf_files(&db, "cold") == 1
    });
    assert_eq!(db.get_cf(&cold, "cold-key").unwrap().unwrap(), b"cold-value");
    assert!(util::latest_options_text(dir.path()).contains("  max_total_wal_size=262144\n"));
}

/// `avoid_flush_during_shutdown` set either way on the open database decides what the close
/// does with writes made without the WAL.
#[test]
fn avoid_flush_during_shutdown_changed_live_decides_the_close() {
    let mut no_wal = WriteOptions::default();
    no_wal.disable_wal(true);
    for (at_open, live) in [(false, true), (true, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = util::create_options();
        o.set_avoid_flush_during_shutdown(at_open);
        {
            let db = DB::open(&o, dir.path()).unwrap();
            db.put_opt(b"unlogged", b"v", &no_wal).unwrap();
            db.set_db_options(&[("avoid_flush_during_shutdown", if live { "true" } else { "false" })])
                .unwrap();
        }
        let db = DB::open(&o, dir.path()).unwrap();
        let expected = if live { None } else { Some(b"v".to_vec()) };
        assert_eq!(db.get(b"unlogged").unwrap(), expected, "set to {live} after opening with {at_open}");
    }
}

/// `verify_manifest_content_on_close` turned on live: the close finds the damaged MANIFEST
/// and writes a new one from memory, so the next open succeeds.
#[test]
fn verify_manifest_content_on_close_turned_on_live_repairs_at_close() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&util::create_options(), &dir).unwrap();
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    let (before, path) = current_manifest(&dir);
    // One byte of the first record's payload flipped in place: its checksum fails.
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(9)).unwrap();
    std::io::Read::read_exact(&mut f, &mut b).unwrap();
    f.seek(SeekFrom::Start(9)).unwrap();
    f.write_all(&[b[0] ^ 0x40]).unwrap();
    f.sync_all().unwrap();
    db.set_db_options(&[("verify_manifest_content_on_close", "true")]).unwrap();
    db.put("b", "2").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(current_manifest(&dir).0 > before, "the close wrote a new MANIFEST");
    let db = DB::open(&util::create_options(), &dir).unwrap();
    assert_eq!(db.get("a").unwrap().unwrap(), b"1");
    assert_eq!(db.get("b").unwrap().unwrap(), b"2");
}

/// `max_manifest_file_size` and `max_manifest_space_amp_pct` lowered live: the next changes
/// start new MANIFESTs once the current one passes the new size.
#[test]
fn manifest_limits_lowered_live_roll_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&util::create_options(), dir.path()).unwrap();
    let flush_some = |n: u32| {
        for r in 0..n {
            db.put(format!("k{r}"), "v").unwrap();
            db.flush().unwrap();
        }
    };
    let (first, _) = current_manifest(dir.path());
    flush_some(5);
    assert_eq!(current_manifest(dir.path()).0, first, "1 GiB by default: no roll");
    db.set_db_options(&[("max_manifest_file_size", "64"), ("max_manifest_space_amp_pct", "0")]).unwrap();
    flush_some(3);
    assert!(current_manifest(dir.path()).0 > first, "a new MANIFEST past 64 bytes");
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  max_manifest_file_size=64\n"), "{text}");
    assert!(text.contains("  max_manifest_space_amp_pct=0\n"), "{text}");
}

/// `max_subcompactions` raised live: the next manual compaction is cut into several
/// subcompactions (RocksDB's `num_subcompactions_scheduled` histogram).
#[test]
fn max_subcompactions_raised_live_splits_the_next_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.set_compression_type(DBCompressionType::None);
    o.set_target_file_size_base(32 << 10);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    for round in 0..4u64 {
        for i in 0..2000u64 {
            let k = (i * 7919 + round * 31) % 4000;
            db.put(format!("key{k:05}"), util::value(k + round, 120)).unwrap();
        }
        db.flush().unwrap();
    }
    db.set_db_options(&[("max_subcompactions", "4")]).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let h = o.get_histogram_data(Histogram::NumSubcompactionsScheduled);
    assert!(h.count() >= 1 && h.sum() > h.count(), "subcompactions scheduled: {} in {}", h.sum(), h.count());
    assert!(util::latest_options_text(dir.path()).contains("  max_subcompactions=4\n"));
}

/// The other values set are those the OPTIONS file records; deprecated options are accepted;
/// a call with one bad value changes none of them.
#[test]
fn values_in_force_reach_the_options_file_and_a_bad_call_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&util::create_options(), dir.path()).unwrap();
    db.set_db_options(&[
        ("delayed_write_rate", "1048576"),
        ("compaction_readahead_size", "1048576"),
        ("stats_history_buffer_size", "2048"),
        ("optimize_manifest_for_recovery", "true"),
        ("allow_os_buffer", "false"),
    ])
    .unwrap();
    let text = util::latest_options_text(dir.path());
    for line in [
        "  delayed_write_rate=1048576\n",
        "  compaction_readahead_size=1048576\n",
        "  stats_history_buffer_size=2048\n",
        "  optimize_manifest_for_recovery=true\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text}");
    }
    let e = db.set_db_options(&[("max_subcompactions", "4"), ("max_total_wal_size", "x")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(util::latest_options_text(dir.path()).contains("  max_subcompactions=1\n"));
    let e = db.set_db_options(&[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = db.set_db_options(&[("create_if_missing", "true")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// `daily_offpeak_time_utc` set live to a window holding the current minute: the table a
/// periodic compaction of 11 hours would take only later is compacted at once (each
/// family's picker takes the new window); a bad window is refused as RocksDB's
/// ValidateOptions does, and nothing changes.
#[test]
fn daily_offpeak_time_utc_set_live_brings_periodic_compactions_forward() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let minute = |s: u64| {
        let m = s % 86_400 / 60;
        format!("{:02}:{:02}", m / 60, m % 60)
    };
    let window = format!("{}-{}", minute(now - 60), minute(now + 600));
    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_periodic_compaction_seconds(11 * 3600);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    util::wait_for_background(&db);
    let levels = |db: &DB| db.live_files().unwrap().into_iter().map(|f| f.level).collect::<Vec<_>>();
    assert_eq!(levels(&db), vec![0], "not due for 11 hours");
    let e = db.set_db_options(&[("daily_offpeak_time_utc", "05:00-05:00")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("start_time and end_time cannot be the same"), "{e}");
    db.set_db_options(&[("daily_offpeak_time_utc", window.as_str()), ("fast_sst_open", "true")]).unwrap();
    util::wait_until(60, "a periodic compaction in the off-peak window", || {
        levels(&db).iter().all(|l| *l > 0)
    });
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    let text = util::latest_options_text(dir.path());
    // The OPTIONS file escapes ':' as RocksDB's `EscapeOptionString` does.
    let escaped = window.replace(':', "\\:");
    assert!(text.contains(&format!("  daily_offpeak_time_utc={escaped}\n")), "{text}");
    assert!(text.contains("  fast_sst_open=true\n"), "{text}");
}

/// The stats periods set live: a period above 0 runs its task at once and then every
/// period (RocksDB's Register with `run_immediately`), 0 stops it; the compaction trigger's
/// period follows `max_compaction_trigger_wakeup_seconds` from its next look.
#[test]
fn stats_periods_and_the_compaction_trigger_follow_values_set_live() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.set_stats_dump_period_sec(0);
    o.set_stats_persist_period_sec(0);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    let log = || std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    let count = |what: &str| log().matches(what).count();
    const DUMP: &str = "------- DUMPING STATS -------";
    const PERSIST: &str = "stats with timestamp";
    const TRIGGER: &str = "Running the periodic task to trigger compactions.";
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!((count(DUMP), count(PERSIST)), (0, 0), "both periods 0 at open");
    let triggers_before = count(TRIGGER);
    db.set_db_options(&[
        ("stats_dump_period_sec", "1"),
        ("stats_persist_period_sec", "1"),
        ("max_compaction_trigger_wakeup_seconds", "1"),
    ])
    .unwrap();
    util::wait_until(30, "two stats dumps", || count(DUMP) >= 2);
    util::wait_until(30, "two stats snapshots", || count(PERSIST) >= 1);
    util::wait_until(30, "the compaction trigger every second", || count(TRIGGER) >= triggers_before + 2);
    db.set_db_options(&[("stats_dump_period_sec", "0")]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let dumps = count(DUMP);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert_eq!(count(DUMP), dumps, "period 0: no more dumps");
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  stats_persist_period_sec=1\n"), "{text}");
    assert!(text.contains("  max_compaction_trigger_wakeup_seconds=1\n"), "{text}");
}

/// `max_background_jobs` changed live (RocksDB's SetDBOptions recomputing `GetBGJobLimits`,
/// growing the LOW pool and scheduling): four families' compactions, each held in a
/// compaction filter, run one at a time under the open's 2 jobs (1 compaction), all four at
/// once after raising it to 8 (6 compactions: the pool grows), and one at a time again after
/// lowering it to 2 (the pool keeps its threads; the limit holds them back).
#[test]
fn background_job_limits_set_live_change_how_many_compactions_run() {
    let dir = tempfile::tempdir().unwrap();
    let open = Arc::new(AtomicBool::new(false));
    let family = || {
        let mut o = Options::default();
        o.set_level_zero_file_num_compaction_trigger(2);
        o.set_compression_type(DBCompressionType::None);
        let gate = open.clone();
        o.set_compaction_filter("gate", move |_level: u32, _k: &[u8], _v: &[u8]| {
            // Held at most 60 s, so that a failing test does not hang.
            let deadline = Instant::now() + Duration::from_secs(60);
            while !gate.load(Ordering::Acquire) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            CompactionDecision::Keep
        });
        o
    };
    let mut o = util::create_options();
    o.create_missing_column_families(true);
    o.set_max_background_jobs(2);
    let names = ["a", "b", "c", "d"];
    let db = DB::open_cf_descriptors(&o, dir.path(), names.map(|n| ColumnFamilyDescriptor::new(n, family())))
        .unwrap();
    let running = || db.property_int_value("rocksdb.num-running-compactions").unwrap().unwrap();
    // Four overlapping level-0 tables in each family: a compaction is due in each, under
    // compaction pressure (4 files reach RocksDB's speedup threshold for trigger 2).
    let fill = |round: u64| {
        for n in names {
            let cf = db.cf_handle(n).unwrap();
            for t in 0..4u64 {
                for i in 0..200u64 {
                    db.put_cf(&cf, format!("key{i:04}"), format!("{n}-{round}-{t}")).unwrap();
                }
                db.flush_cf(&cf).unwrap();
            }
        }
    };
    let at_most_one_for = |what: &str| {
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until {
            assert!(running() <= 1, "{what}: {} compactions at once", running());
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(running(), 1, "{what}: one compaction held");
    };
    fill(0);
    util::wait_until(30, "a compaction held", || running() == 1);
    at_most_one_for("max_background_jobs 2 at open");
    db.set_db_options(&[("max_background_jobs", "8")]).unwrap();
    util::wait_until(30, "all four families' compactions at once", || running() >= 4);
    open.store(true, Ordering::Release);
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    db.set_db_options(&[("max_background_jobs", "2")]).unwrap();
    open.store(false, Ordering::Release);
    fill(1);
    util::wait_until(30, "a compaction held", || running() == 1);
    at_most_one_for("max_background_jobs lowered to 2");
    open.store(true, Ordering::Release);
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    for n in names {
        let cf = db.cf_handle(n).unwrap();
        assert_eq!(db.get_cf(&cf, "key0007").unwrap().unwrap(), format!("{n}-1-3").as_bytes());
    }
    assert!(util::latest_options_text(dir.path()).contains("  max_background_jobs=2\n"));
}

/// `max_open_files` lowered live: the table cache's capacity becomes `max_open_files - 10`
/// and the readers past it are closed, so reading forty tables again opens them again
/// (RocksDB's `TableCache::SetCapacity`); raised to -1, every reader stays open.
#[test]
fn max_open_files_lowered_live_closes_table_readers() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.set_max_open_files(100);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..40u32 {
        db.put(format!("key{t:03}"), format!("v{t}")).unwrap();
        db.flush().unwrap();
    }
    let opens = || o.get_ticker_count(Ticker::NoFileOpens);
    let read_all = || {
        for t in 0..40u32 {
            assert_eq!(db.get(format!("key{t:03}")).unwrap().unwrap(), format!("v{t}").as_bytes());
        }
    };
    read_all();
    let before = opens();
    read_all();
    assert_eq!(opens(), before, "90 readers fit: none opened again");
    db.set_db_options(&[("max_open_files", "20")]).unwrap();
    read_all();
    let reopened = opens() - before;
    assert!(reopened >= 30, "10 readers kept: {reopened} tables opened again");
    db.set_db_options(&[("max_open_files", "-1")]).unwrap();
    read_all();
    let before = opens();
    read_all();
    assert_eq!(opens(), before, "unbounded: every reader stays open");
    assert!(util::latest_options_text(dir.path()).contains("  max_open_files=-1\n"));
}

/// A database on a fault-injecting in-memory file system counting range syncs.
fn counted_db(fs: &Arc<FaultInjectionFs>) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(64 << 20);
    DB::open(&o, "/db").unwrap()
}

/// About 4 MiB of poorly compressing values.
fn put_4mib(db: &DB, round: u64) {
    for i in 0..4096u64 {
        db.put(format!("key{i:06}"), util::value(i + round, 1024)).unwrap();
    }
}

/// `bytes_per_sync` and `strict_bytes_per_sync` set live: the tables written from then on
/// ask for write-back every that many bytes (RocksDB rebuilds `file_options_for_compaction_`),
/// strict requests once strict is set; before, none.
#[test]
fn bytes_per_sync_set_live_reaches_the_next_tables() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let db = counted_db(&fs);
    put_4mib(&db, 0);
    db.flush().unwrap();
    assert_eq!(fs.count_of(&[OpKind::RangeSync, OpKind::RangeSyncStrict]), 0, "bytes_per_sync 0 at open");
    db.set_db_options(&[("bytes_per_sync", "262144")]).unwrap();
    put_4mib(&db, 1);
    db.flush().unwrap();
    // The ~4.2 MB table's first ~3.2 MB (all but the last MiB) in 256 KiB steps.
    let n = fs.count(OpKind::RangeSync);
    assert!((10..=14).contains(&n), "expected about 12 range syncs of the table, got {n}");
    assert_eq!(fs.count(OpKind::RangeSyncStrict), 0);
    db.set_db_options(&[("strict_bytes_per_sync", "true")]).unwrap();
    put_4mib(&db, 2);
    db.flush().unwrap();
    assert_eq!(fs.count(OpKind::RangeSync), n, "strict: no plain range sync");
    let strict = fs.count(OpKind::RangeSyncStrict);
    assert!((10..=14).contains(&strict), "expected about 12 strict range syncs, got {strict}");
}

/// `wal_bytes_per_sync` set live: as RocksDB's SetDBOptions, the database switches to a new
/// WAL at once (the memtable holding the old one is flushed), and that WAL asks for
/// write-back every that many bytes; the old one never did.
#[test]
fn wal_bytes_per_sync_set_live_switches_to_a_new_wal() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let db = counted_db(&fs);
    let wals = || {
        let mut w: Vec<String> =
            fs.children(Path::new("/db")).unwrap().into_iter().filter(|n| n.ends_with(".log")).collect();
        w.sort();
        w
    };
    put_4mib(&db, 0);
    assert_eq!(fs.count_of(&[OpKind::RangeSync, OpKind::RangeSyncStrict]), 0, "wal_bytes_per_sync 0");
    let first = wals();
    db.set_db_options(&[("wal_bytes_per_sync", "262144")]).unwrap();
    util::wait_for_background(&db);
    assert_eq!(
        db.property_int_value("rocksdb.num-files-at-level0").unwrap(),
        Some(1),
        "the old WAL's data flushed"
    );
    let second = wals();
    assert!(second.last() > first.last(), "a new WAL: {first:?} then {second:?}");
    // Counted from here: only the new WAL is written (the memtable holds 64 MiB).
    let before = fs.count(OpKind::RangeSync);
    put_4mib(&db, 1);
    let n = fs.count(OpKind::RangeSync) - before;
    assert!((10..=14).contains(&n), "expected about 12 range syncs of the new WAL, got {n}");
    assert_eq!(wals().last(), second.last());
}

/// What the file system saw: each file's write buffer, and the first block reserved in each
/// MANIFEST.
#[derive(Default)]
struct Seen {
    buffers: Mutex<Vec<(String, usize)>>,
    manifest_blocks: Arc<Mutex<Vec<(String, u64)>>>,
}

/// Records the first `allocate` of a MANIFEST.
struct FirstAllocate {
    inner: Box<dyn WritableFile>,
    name: String,
    seen: Arc<Mutex<Vec<(String, u64)>>>,
}

impl WritableFile for FirstAllocate {
    shale_base::forward_writable!(inner: append, flush, sync, size, range_sync, range_sync_strict, sync_handle);
    fn allocate(&mut self, offset: u64, len: u64, reserve: bool) -> shale::Result<()> {
        let mut s = self.seen.lock().unwrap();
        if !s.iter().any(|(n, _)| *n == self.name) {
            s.push((self.name.clone(), len));
        }
        drop(s);
        self.inner.allocate(offset, len, reserve)
    }
}

impl util::FsHooks for Seen {
    fn before_buffered(&self, path: &Path, max: usize) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        self.buffers.lock().unwrap().push((name, max));
    }
    fn writable(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("MANIFEST-") {
            return file;
        }
        Box::new(FirstAllocate { inner: file, name, seen: self.manifest_blocks.clone() })
    }
}

/// `writable_file_max_buffer_size` and `manifest_preallocation_size` set live: the files
/// created from then on (the next table, the next MANIFEST) take them; the OPTIONS file
/// records them.
#[test]
fn buffer_size_and_manifest_preallocation_set_live_reach_the_next_files() {
    let fs = util::HookedFs::new(Arc::new(MemFileSystem::new()), Seen::default());
    let mut o = util::create_options();
    o.set_file_system(fs.clone());
    let db = DB::open(&o, "/db").unwrap();
    let table_buffers = || -> Vec<usize> {
        fs.hooks
            .buffers
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, _)| n.ends_with(".sst"))
            .map(|(_, m)| *m)
            .collect()
    };
    let manifest_blocks =
        || -> Vec<u64> { fs.hooks.manifest_blocks.lock().unwrap().iter().map(|(_, b)| *b).collect() };
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    assert_eq!(table_buffers(), vec![1 << 20], "RocksDB's default: 1 MiB");
    let at_open = manifest_blocks();
    assert!(
        !at_open.is_empty() && at_open.iter().all(|b| *b == 4 << 20),
        "RocksDB's default 4 MiB: {at_open:?}"
    );
    db.set_db_options(&[
        ("writable_file_max_buffer_size", "65536"),
        ("manifest_preallocation_size", "131072"),
        // The next change starts a new MANIFEST.
        ("max_manifest_file_size", "64"),
        ("max_manifest_space_amp_pct", "0"),
    ])
    .unwrap();
    db.put("b", "2").unwrap();
    db.flush().unwrap();
    assert_eq!(table_buffers(), vec![1 << 20, 65536]);
    let blocks = manifest_blocks();
    let after = &blocks[at_open.len()..];
    assert!(!after.is_empty() && after.iter().all(|b| *b == 131072), "{blocks:?}");
    assert_eq!(db.get("a").unwrap().unwrap(), b"1");
}

/// Every mutable DB option of RocksDB 11.8.1 that issue 33 listed is accepted and recorded
/// in the OPTIONS file with the value set (`bytes_per_sync` 0 becomes 1 MiB at any call, as
/// RocksDB's SetDBOptions); a FIFO family with a ttl refuses a bounded `max_open_files`
/// as RocksDB's ColumnFamilyData::ValidateOptions does.
#[test]
fn the_last_nine_options_reach_the_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&util::create_options(), dir.path()).unwrap();
    db.set_db_options(&[("max_total_wal_size", "1048576")]).unwrap();
    assert!(util::latest_options_text(dir.path()).contains("  bytes_per_sync=1048576\n"));
    db.set_db_options(&[
        ("max_background_jobs", "6"),
        ("max_background_compactions", "3"),
        ("max_background_flushes", "2"),
        ("max_open_files", "500"),
        ("bytes_per_sync", "65536"),
        ("wal_bytes_per_sync", "131072"),
        ("strict_bytes_per_sync", "true"),
        ("writable_file_max_buffer_size", "32768"),
        ("manifest_preallocation_size", "8192"),
    ])
    .unwrap();
    let text = util::latest_options_text(dir.path());
    for line in [
        "  max_background_jobs=6\n",
        "  max_background_compactions=3\n",
        "  max_background_flushes=2\n",
        "  max_open_files=500\n",
        "  bytes_per_sync=65536\n",
        "  wal_bytes_per_sync=131072\n",
        "  strict_bytes_per_sync=true\n",
        "  writable_file_max_buffer_size=32768\n",
        "  manifest_preallocation_size=8192\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text}");
    }
    db.put("k", "v").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&util::create_options(), dir.path()).unwrap();
    assert_eq!(db.get("k").unwrap().unwrap(), b"v");
    drop(db);

    let dir = tempfile::tempdir().unwrap();
    let mut o = util::create_options();
    o.set_compaction_style(shale::DBCompactionStyle::Fifo);
    o.set_max_open_files(-1);
    o.set_ttl(3600);
    let db = DB::open(&o, dir.path()).unwrap();
    let e = db.set_db_options(&[("max_open_files", "100")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(util::latest_options_text(dir.path()).contains("  max_open_files=-1\n"));
}
