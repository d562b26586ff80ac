//! `DB::set_db_options` (RocksDB's `SetDBOptions`): the mutable DB options it changes act on
//! the open database from then on, the OPTIONS file records the values in force, and a call
//! with one bad value changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use shale::statistics::Histogram;
use shale::{ColumnFamilyDescriptor, DBCompressionType, ErrorKind, WriteOptions, DB};

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
