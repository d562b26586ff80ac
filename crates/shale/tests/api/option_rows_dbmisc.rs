//! DB options RocksDB 11.8.1 registers that rust-rocksdb has no setter for, set by name and
//! acting as RocksDB's (`options_dbmisc.rs`, helper dbmisc, issue 33).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::{ErrorKind, IteratorMode, Options, DB};

use util::create_options as base;

fn with(s: &str) -> Options {
    base().get_options_from_string(s).unwrap()
}

use util::expect_err as err;

/// A merge operator that fails every full merge.
fn failing(mut o: Options) -> Options {
    o.set_merge_operator_associative("fails", |_, _, _| None);
    o.set_disable_auto_compactions(true);
    o
}

/// "secret" in RocksDB's upper-case hex.
const SECRET_HEX: &str = "736563726574";

/// RocksDB 11.8.1's failed merge is `Status::Corruption(kMergeOperatorFailed)`, which never
/// names the key, whatever `allow_data_in_errors` says (that option adds data to the
/// messages of damaged internal keys and memtable checks only).
#[test]
fn a_failed_merge_never_names_its_key_whatever_allow_data_in_errors() {
    for allow in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let o = failing(with(&format!("allow_data_in_errors={allow}")));
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"secret", b"base").unwrap();
        db.merge(b"secret", b"op").unwrap();
        let named = |e: &shale::Error| {
            assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
            assert!(e.to_string().starts_with("Corruption: Merge operator failed"), "{e}");
            assert!(!e.to_string().contains("secret"), "{e}");
            e.to_string().contains(SECRET_HEX)
        };
        // A point read, from the memtable and then from a table.
        assert!(!named(&err(db.get(b"secret"))), "get, allow={allow}");
        // An iterator.
        let mut it = db.iterator(IteratorMode::Start);
        let e = it.find_map(|r| r.err()).expect("the iterator fails");
        assert!(!named(&e), "iterator, allow={allow}");
        drop(it);
        // A flush: the merge is resolved into a Put, and fails.
        let e = err(db.flush());
        assert!(!named(&e), "flush, allow={allow}");
        drop(db);
        let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        assert!(
            log.contains(&format!("Options.allow_data_in_errors: {}", u8::from(allow))),
            "the LOG shows it"
        );
        assert!(util::latest_options_text(dir.path()).contains(&format!("allow_data_in_errors={allow}")));
    }
}

#[test]
fn a_failed_merge_in_a_compaction_never_names_its_key() {
    for allow in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        // The merge reaches a table unresolved: no base, so the flush keeps the operand.
        let mut o = with(&format!("allow_data_in_errors={allow}"));
        o.set_merge_operator_associative(
            "fails",
            |_, _, ops| if ops.len() > 1 { None } else { Some(Vec::new()) },
        );
        o.set_disable_auto_compactions(true);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"secret", b"base").unwrap();
        db.flush().unwrap();
        db.merge(b"secret", b"a").unwrap();
        db.flush().unwrap();
        db.merge(b"secret", b"b").unwrap();
        db.flush().unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        // The compaction's failure is the database's background error.
        let e = err(db.put(b"x", b"y"));
        assert!(e.to_string().contains("Merge operator failed"), "{e}");
        assert!(
            !e.to_string().contains(SECRET_HEX) && !e.to_string().contains("secret"),
            "allow={allow}: {e}"
        );
    }
}

#[test]
fn allow_data_in_errors_is_read_from_the_options_file_and_fixed_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("allow_data_in_errors=true"), dir.path()).unwrap();
    let e = err(db.set_options(&[("allow_data_in_errors", "false")]));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);
    let (loaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    // The loaded value is the one in force: the reopen logs it and writes it back.
    let log_before = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log_before.contains("Options.allow_data_in_errors: 1"), "the first open");
    let db = DB::open(&loaded, dir.path()).unwrap();
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Options.allow_data_in_errors: 1"), "the reopen logs it");
    assert!(util::latest_options_text(dir.path()).contains("allow_data_in_errors=true"));
    drop(db);
    assert!(base().get_options_from_string("allow_data_in_errors=maybe").is_err());
}

/// The levels of the live tables.
fn levels(db: &DB) -> Vec<i32> {
    db.live_files().unwrap().into_iter().map(|f| f.level).collect()
}

/// An off-peak window of UTC time holding the current minute: from a minute ago to ten
/// minutes on (over midnight when it falls so, which RocksDB's window allows).
fn window_around_now() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let minute = |s: u64| {
        let m = s % 86_400 / 60;
        format!("{:02}:{:02}", m / 60, m % 60)
    };
    format!("{}-{}", minute(now - 60), minute(now + 600))
}

#[test]
fn in_the_offpeak_window_periodic_compaction_takes_tables_due_by_the_next_window() {
    // periodic_compaction_seconds of 11 hours: a table written now is due in 11 hours, before
    // the next window starts (about 24 hours on), so in the window it is compacted at once.
    for offpeak in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut o =
            if offpeak { with(&format!("daily_offpeak_time_utc={}", window_around_now())) } else { base() };
        o.set_level_compaction_dynamic_level_bytes(false);
        o.set_periodic_compaction_seconds(11 * 3600);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
        if offpeak {
            // The level-0 table goes down: no level is over its target, only its age (brought
            // forward) makes it due.
            util::wait_until(60, "a periodic compaction in the off-peak window", || {
                levels(&db).iter().all(|l| *l > 0)
            });
        } else {
            util::wait_for_background(&db);
            assert_eq!(levels(&db), vec![0], "not due for 11 hours");
        }
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        drop(db);
        let text = util::latest_options_text(dir.path());
        assert_eq!(text.contains("daily_offpeak_time_utc="), offpeak, "written when set");
    }
}

#[test]
fn daily_offpeak_time_utc_is_checked_at_open_as_rocksdb_11s() {
    let dir = tempfile::tempdir().unwrap();
    // Any text is an option string's value; the open checks it.
    for (bad, message) in [
        ("4:30", "daily_offpeak_time_utc should be set in the format HH:mm-HH:mm (e.g. 04:30-07:30)"),
        ("04:30-24:00", "daily_offpeak_time_utc should be set in the format HH:mm-HH:mm (e.g. 04:30-07:30)"),
        ("05:00-05:00", "start_time and end_time cannot be the same"),
    ] {
        let e = err(DB::open(&with(&format!("daily_offpeak_time_utc={bad}")), dir.path()));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains(message), "{bad}: {e}");
    }
    let db = DB::open(&with("daily_offpeak_time_utc=23:30-04:00"), dir.path()).unwrap();
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("daily_offpeak_time_utc=23\\:30-04\\:00"));
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Options.daily_offpeak_time_utc: 23:30-04:00"), "the LOG shows it");
}

#[test]
fn statistics_from_an_options_string_or_file_are_rocksdb_11s_basic_statistics() {
    for v in ["BasicStatistics", "{id=BasicStatistics}", ""] {
        let o = with(&format!("statistics={v}"));
        assert!(o.get_statistics().is_some(), "statistics={v} makes a statistics object");
    }
    // An id nothing registered is skipped (RocksDB's ignore_unsupported_options): unchanged.
    assert!(with("statistics=NoSuchStatistics").get_statistics().is_none());
    let mut on = base();
    on.enable_statistics();
    assert!(on
        .clone()
        .get_options_from_string("statistics=NoSuchStatistics")
        .unwrap()
        .get_statistics()
        .is_some());
    assert!(on.get_options_from_string("statistics=nullptr").unwrap().get_statistics().is_none());

    // A database opened with it counts: keys written show in its tickers.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("statistics=BasicStatistics"), dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    // The option is never written (RocksDB's kDontSerialize) ...
    let text = util::latest_options_text(dir.path());
    assert!(!text.lines().any(|l| l.trim_start().starts_with("statistics=")), "{text}");
    // ... but an OPTIONS file naming it is read as RocksDB reads it.
    let path = dir.path().join("OPTIONS-999999");
    std::fs::write(&path, text.replace("[DBOptions]\n", "[DBOptions]\n  statistics=BasicStatistics\n"))
        .unwrap();
    let (loaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    assert!(loaded.get_statistics().is_some());
    let db = DB::open(&loaded, dir.path()).unwrap();
    db.put(b"k2", b"v").unwrap();
    assert!(loaded.get_statistics().unwrap().contains("rocksdb.number.keys.written COUNT : 1"));
}

#[test]
fn env_listeners_and_wal_filter_read_as_rocksdb_11_reads_them() {
    // The default Env's names and unregistered ids leave the default Env.
    for v in ["", "PosixEnv", "NoSuchEnv", "{id=NoSuchEnv}"] {
        base().get_options_from_string(format!("env={v}")).unwrap();
    }
    // RocksDB's registered Envs are owned objects the option cannot hold.
    for id in ["MockEnv", "CompositeEnv", "{id=MockEnv}"] {
        let e = err(base().get_options_from_string(format!("env={id}")));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let name = id.trim_start_matches("{id=").trim_end_matches('}');
        assert!(
            e.to_string().contains(&format!("Cannot make a static Environment from a guarded one : {name}")),
            "{e}"
        );
    }
    // No listener or WAL filter is registered: every id is skipped.
    for s in [
        "listeners=MyListener",
        "listeners={A:{id=B;timeout=60}}",
        "wal_filter=MyFilter",
        "wal_filter=nullptr",
    ] {
        base().get_options_from_string(s).unwrap();
    }
    assert!(base().get_options_from_string("listeners={A:{id=B").is_err(), "mismatched braces");
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("env=PosixEnv;listeners=MyListener;wal_filter=MyFilter"), dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("wal_filter=nullptr"), "{text}");
    assert!(
        !text.contains("listeners=") && !text.lines().any(|l| l.trim_start().starts_with("env=")),
        "{text}"
    );
}

/// A database with one table, whose file is then cut short: opening that table fails.
fn with_broken_table() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    let sst = util::files_ending(dir.path(), ".sst");
    assert_eq!(sst.len(), 1);
    let path = dir.path().join(&sst[0]);
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
    dir
}

#[test]
fn open_files_async_opens_tables_after_the_open_and_reports_failures_as_background_errors() {
    // Opening the tables at open: the broken one fails it.
    let dir = with_broken_table();
    let e = err(DB::open(&base(), dir.path()));
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    // Asynchronously: the open succeeds, the failure becomes the background error.
    let db = DB::open(&with("open_files_async=true;skip_stats_update_on_db_open=true"), dir.path()).unwrap();
    util::wait_until(60, "the background error of the table-opening thread", || db.put(b"x", b"y").is_err());
    let e = err(db.put(b"x", b"y"));
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(
        log.contains("BGWorkAsyncFileOpen: LoadTableHandlers failed for CF default: Corruption"),
        "{log}"
    );
    assert!(util::latest_options_text(dir.path()).contains("open_files_async=true"));

    // A healthy database opened so reads its tables as usual.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&with("open_files_async=true;skip_stats_update_on_db_open=true"), dir.path()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.put(b"k2", b"v2").unwrap();
}

#[test]
fn open_files_async_has_rocksdb_11s_checks() {
    let dir = tempfile::tempdir().unwrap();
    let e = err(DB::open(&with("open_files_async=true"), dir.path()));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("open_files_async requires skip_stats_update_on_db_open = true."), "{e}");
    let mut fifo = with("open_files_async=true;skip_stats_update_on_db_open=true");
    fifo.set_compaction_style(shale::DBCompactionStyle::Fifo);
    let e = err(DB::open(&fifo, dir.path()));
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("FIFO compaction is not supported with open_files_async = true."), "{e}");
    // A FIFO family created later is refused the same way.
    let mut db =
        DB::open(&with("open_files_async=true;skip_stats_update_on_db_open=true"), dir.path()).unwrap();
    let mut cf = Options::default();
    cf.set_compaction_style(shale::DBCompactionStyle::Fifo);
    assert_eq!(err(db.create_cf("fifo", &cf)).kind(), ErrorKind::NotSupported);
    drop(db);
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("skip_stats_update_on_db_open=true"), "{text}");
}

#[test]
fn fast_sst_open_is_kept_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("fast_sst_open=true"), dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("fast_sst_open=true"));
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Options.fast_sst_open: 1"), "the LOG shows it");
    // No file system metadata to record: tables open and read the same.
    let db = DB::open(&with("fast_sst_open=true"), dir.path()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// An off-peak window starting at the next minute of UTC time, ten minutes long.
fn window_from_next_minute() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let minute = |s: u64| {
        let m = s % 86_400 / 60;
        format!("{:02}:{:02}", m / 60, m % 60)
    };
    format!("{}-{}", minute(now + 60), minute(now + 660))
}

#[test]
fn a_quiet_database_looks_at_aged_tables_every_max_compaction_trigger_wakeup_seconds() {
    // A table becomes due on a quiet database when the off-peak window opens (at the next
    // minute): only the periodic trigger finds it. With the stats periods off and
    // periodic_compaction_seconds of 11 hours, RocksDB's period is
    // min(max_compaction_trigger_wakeup_seconds, 11 h / 5): one second here.
    let dir = tempfile::tempdir().unwrap();
    let mut o = with(&format!(
        "daily_offpeak_time_utc={};max_compaction_trigger_wakeup_seconds=1;stats_dump_period_sec=0;\
         stats_persist_period_sec=0",
        window_from_next_minute()
    ));
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_periodic_compaction_seconds(11 * 3600);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    util::wait_until(150, "the trigger to find the table due in the window", || {
        levels(&db).iter().all(|l| *l > 0)
    });
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Running the periodic task to trigger compactions."), "RocksDB's INFO line");
    assert!(log.contains("Options.max_compaction_trigger_wakeup_seconds: 1"));
    assert!(util::latest_options_text(dir.path()).contains("max_compaction_trigger_wakeup_seconds=1"));
}
