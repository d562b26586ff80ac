//! Issue 33: options that were accepted and ignored now act as RocksDB 11.8.1's:
//! `background_purge_on_iterator_cleanup`, `delete_obsolete_files_period_micros`, universal
//! compaction's `incremental` and `reduce_file_locking`, `memtable_insert_hint_per_batch`,
//! `use_adaptive_mutex`.

use std::path::Path;

use shale::{IteratorMode, Options, ReadOptions, DB};

/// Three flushed tables of `k000..k099`, auto compactions off.
fn three_tables(dir: &Path, o: &Options) -> (DB, Vec<String>) {
    let db = DB::open(o, dir).unwrap();
    for round in 0..3 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    let tables = crate::util::files_ending(dir, ".sst");
    assert_eq!(tables.len(), 3, "{tables:?}");
    (db, tables)
}

/// The thread stamp (second field) of the LOG's first line containing `what`.
fn log_thread_of(log: &str, what: &str) -> Option<String> {
    log.lines().find(|l| l.contains(what)).and_then(|l| l.split_whitespace().nth(1)).map(str::to_string)
}

/// Drops an iterator holding three compacted-away tables; returns whether they were gone
/// when `drop` returned, and whether the LOG's deletion event of the first was stamped by
/// the dropping thread.
fn purge_after_iterator(background: bool) -> (bool, bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let (db, before) = three_tables(dir.path(), &o);
    let mut ro = ReadOptions::default();
    ro.set_background_purge_on_iterator_cleanup(background);
    let mut it = db.iterator_opt(IteratorMode::Start, ro);
    assert!(it.next().is_some());
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for t in &before {
        assert!(dir.path().join(t).exists(), "{t} deleted under a live iterator");
    }
    // A LOG line this thread writes, for its thread stamp.
    db.set_options(&[("disable_auto_compactions", "true")]).unwrap();
    drop(it);
    let gone_at_once = before.iter().all(|t| !dir.path().join(t).exists());
    crate::util::wait_until(60, "the old tables deleted", || {
        before.iter().all(|t| !dir.path().join(t).exists())
    });
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    let me = log_thread_of(&log, "SetOptions() on column family [default]").unwrap();
    let number: u64 = before[0].trim_end_matches(".sst").parse().unwrap();
    let field = format!("\"file_number\": {number}");
    let deleter = log
        .lines()
        .find(|l| {
            l.contains("\"table_file_deletion\"")
                && l.split(&field).nth(1).is_some_and(|rest| rest.starts_with([',', '}']))
        })
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no deletion event of table {number} in LOG:\n{log}"))
        .to_string();
    (gone_at_once, deleter == me)
}

/// `background_purge_on_iterator_cleanup` false (RocksDB's default): the tables an iterator
/// was the last to hold are deleted by the thread dropping it, before `drop` returns; true:
/// by another (a flush-pool) thread.
#[test]
fn iterator_cleanup_purges_on_the_dropping_thread_unless_background() {
    let (gone, by_me) = purge_after_iterator(false);
    assert!(gone, "the old tables still on disk when drop(iter) returned");
    assert!(by_me, "the old tables were deleted by another thread");
    let (_, by_me) = purge_after_iterator(true);
    assert!(!by_me, "background purge: deleted by the dropping thread");
}

/// Writes a table file no Version names (a crash's leftover) into `dir`, numbered below
/// every file the database has made since; returns its path.
fn orphan_table(dir: &Path) -> std::path::PathBuf {
    let live = crate::util::files_ending(dir, ".sst");
    let path = dir.join("000003.sst");
    assert!(!live.iter().any(|t| t == "000003.sst"), "{live:?}");
    std::fs::copy(dir.join(&live[0]), &path).unwrap();
    path
}

fn flush_one(db: &DB, i: u32) {
    db.put(format!("x{i}"), b"v").unwrap();
    db.flush().unwrap();
    crate::util::wait_for_background(db);
}

/// `delete_obsolete_files_period_micros`: the purge after a flush scans the directory for
/// files nothing references only once the period has passed since the last scan (RocksDB's
/// default: 6 hours), so an orphan table stays under the default and goes with a short
/// period; `set_db_options` changes the period of the open database.
#[test]
fn obsolete_files_period_paces_the_full_directory_scan() {
    // The default: no scan within six hours of open.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    flush_one(&db, 0);
    let orphan = orphan_table(dir.path());
    for i in 1..4 {
        flush_one(&db, i);
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    crate::util::wait_for_background(&db);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(orphan.exists(), "the orphan table was deleted under the default period");
    assert!(crate::util::latest_options_text(dir.path())
        .contains("delete_obsolete_files_period_micros=21600000000"));

    // Changed on the open database: the next purge scans.
    db.set_db_options(&[("delete_obsolete_files_period_micros", "1000")]).unwrap();
    assert!(
        crate::util::latest_options_text(dir.path()).contains("delete_obsolete_files_period_micros=1000\n")
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    flush_one(&db, 9);
    crate::util::wait_until(30, "the orphan table deleted", || !orphan.exists());
    let e = db.set_db_options(&[("delete_obsolete_files_period_micros", "x")]).unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument, "{e}");
    let e = db.set_db_options(&[("no_such_option", "1")]).unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument, "{e}");
    let e = db.set_db_options(&[("use_adaptive_mutex", "true")]).unwrap_err();
    assert!(e.to_string().contains("Option not changeable: use_adaptive_mutex"), "{e}");
    drop(db);

    // A short period from open: the first purge after it has passed scans.
    let dir = tempfile::tempdir().unwrap();
    o.set_delete_obsolete_files_period_micros(1000);
    let db = DB::open(&o, dir.path()).unwrap();
    flush_one(&db, 0);
    let orphan = orphan_table(dir.path());
    std::thread::sleep(std::time::Duration::from_millis(5));
    flush_one(&db, 1);
    crate::util::wait_until(30, "the orphan table deleted", || !orphan.exists());
    assert_eq!(db.get(b"x0").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"x1").unwrap().as_deref(), Some(&b"v"[..]));
}

/// `use_adaptive_mutex`: with it, a thread that finds the DB mutex held tries it again
/// (spins) before blocking, which `rocksdb.shale.db-mutex-spins` counts; without it, the
/// thread blocks at once and the count stays 0. Threads reading a property that takes the
/// DB mutex contend for it.
#[test]
fn adaptive_mutex_spins_before_blocking() {
    let spins = |adaptive: bool| {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_use_adaptive_mutex(adaptive);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"k", b"v").unwrap();
        let spun = || db.property_int_value("rocksdb.shale.db-mutex-spins").unwrap().unwrap();
        // Rounds of contention until a spin is seen (a loaded machine may run the threads
        // one at a time for a while), at most 20.
        for _ in 0..20 {
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..20_000 {
                            db.property_int_value("rocksdb.num-files-at-level0").unwrap();
                        }
                    });
                }
            });
            if spun() > 0 {
                break;
            }
        }
        let n = spun();
        drop(db);
        let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        let want = format!("Options.use_adaptive_mutex: {}", u8::from(adaptive));
        assert!(log.contains(&want), "no `{want}` in LOG");
        n
    };
    assert_eq!(spins(false), 0);
    assert!(spins(true) > 0, "an adaptive DB mutex never spun under contention");
}

/// `memtable_insert_hint_per_batch`: a batch inserted concurrently (here `unordered_write`,
/// whose memtable inserts are always concurrent ones) starts each insert from where its
/// previous one into that memtable ended; without it, or written by a lone writer, no
/// insert is hinted. The hints are the batch's, so the memtable's usage does not count
/// them (RocksDB counts only the per-memtable prefix hints).
#[test]
fn insert_hint_per_batch_hints_concurrent_batch_inserts() {
    let run = |unordered: bool, per_batch: bool| {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_unordered_write(unordered);
        let db = DB::open(&o, dir.path()).unwrap();
        let mut wo = shale::WriteOptions::default();
        wo.set_memtable_insert_hint_per_batch(per_batch);
        for b in 0..10 {
            let mut batch = shale::WriteBatch::default();
            for i in 0..100 {
                batch.put(format!("k{b:02}{i:03}"), b"v");
            }
            db.write_opt(batch, &wo).unwrap();
        }
        assert_eq!(db.get(b"k05050").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.iterator(IteratorMode::Start).count(), 1000);
        db.property_int_value("rocksdb.shale.mem-table-hinted-inserts").unwrap().unwrap()
    };
    assert_eq!(run(true, true), 1000);
    assert_eq!(run(true, false), 0);
    // A lone writer's insert is not a concurrent one: ignored, as RocksDB's.
    assert_eq!(run(false, true), 0);
}
