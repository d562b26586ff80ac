//! `CompactOptions::set_exclusive_manual_compaction` acts as RocksDB 11.8.1's
//! `exclusive_manual_compaction` (issue 33; `DBImpl::RunManualCompaction`,
//! `HasExclusiveManualCompaction`, `ShouldntRunManualCompaction`): true (the default) holds
//! back every family's automatic compactions while the manual one runs and waits for every
//! running compaction of the database before it starts; false lets automatic compactions
//! run beside it. A compaction filter that holds its compaction until the test lets it go
//! keeps one compaction running while the test looks at the other family.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use shale::{ColumnFamilyDescriptor, CompactOptions, CompactionDecision, Options, DB};

/// Holds the compaction filter's first call until `open` (at most 30 s, so that a failing
/// test does not hang); `entered` says the compaction is under way.
#[derive(Default)]
struct Gate {
    state: Mutex<(bool, bool)>, // (entered, open)
    cv: Condvar,
}

impl Gate {
    fn hold(&self) {
        let mut s = self.state.lock().unwrap();
        s.0 = true;
        self.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !s.1 && Instant::now() < deadline {
            s = self.cv.wait_timeout(s, Duration::from_millis(50)).unwrap().0;
        }
    }

    fn entered(&self) -> bool {
        self.state.lock().unwrap().0
    }

    fn wait_entered(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while !self.entered() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.entered()
    }

    fn open(&self) {
        self.state.lock().unwrap().1 = true;
        self.cv.notify_all();
    }
}

/// A family whose compactions run `gate` (held by its first entry); `auto`: compacts
/// automatically from two level-0 files, which with `level0_slowdown_writes_trigger` 4 is
/// also compaction pressure, so that compactions may run in parallel (RocksDB's
/// `GetBGJobLimits`; without it one compaction runs at a time, manual ones counted).
fn family(gate: Option<Arc<Gate>>, auto: bool) -> Options {
    let mut o = Options::default();
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_level_zero_slowdown_writes_trigger(4);
    o.set_disable_auto_compactions(!auto);
    if let Some(g) = gate {
        o.set_compaction_filter("gate", move |_level: u32, _k: &[u8], _v: &[u8]| {
            g.hold();
            CompactionDecision::Keep
        });
    }
    o
}

fn open(dir: &std::path::Path, a: Options, b: Options) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_max_background_jobs(4);
    DB::open_cf_descriptors(
        &o,
        dir,
        vec![ColumnFamilyDescriptor::new("a", a), ColumnFamilyDescriptor::new("b", b)],
    )
    .unwrap()
}

/// Two level-0 tables in family `name`.
fn two_tables(db: &DB, name: &str) {
    let cf = db.cf_handle(name).unwrap();
    for round in 0..2 {
        for i in 0..50 {
            db.put_cf(cf, format!("{name}{i:03}"), format!("v{round}")).unwrap();
        }
        db.flush_cf(cf).unwrap();
    }
}

fn l0_files(db: &DB, name: &str) -> u64 {
    let cf = db.cf_handle(name).unwrap();
    db.property_int_value_cf(cf, "rocksdb.num-files-at-level0").unwrap().unwrap()
}

fn running(db: &DB) -> u64 {
    db.property_int_value("rocksdb.num-running-compactions").unwrap().unwrap()
}

/// Polls `f` for `within`; whether it became true.
fn becomes(within: Duration, f: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

fn opts(exclusive: bool) -> CompactOptions {
    let mut c = CompactOptions::default();
    c.set_exclusive_manual_compaction(exclusive);
    c
}

/// A manual compaction of family "a" is held in its compaction filter while family "b"
/// gets two level-0 tables (its automatic compaction trigger); whether b's compaction ran
/// while a's manual one was still held.
fn other_family_compacts_beside_manual(exclusive: bool) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let db = open(dir.path(), family(Some(gate.clone()), false), family(None, true));
    two_tables(&db, "a");
    std::thread::scope(|s| {
        let manual = s.spawn(|| {
            let cf = db.cf_handle("a").unwrap();
            db.try_compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &opts(exclusive))
        });
        assert!(gate.wait_entered(Duration::from_secs(20)), "the manual compaction started");
        two_tables(&db, "b");
        let compacted =
            becomes(Duration::from_secs(if exclusive { 2 } else { 20 }), || l0_files(&db, "b") == 0);
        assert!(!manual.is_finished(), "the manual compaction is still held");
        if exclusive {
            assert_eq!(running(&db), 1, "only the manual compaction runs");
        }
        gate.open();
        manual.join().unwrap().unwrap();
        // Held back or not, family b's compaction runs once the manual one has ended.
        assert!(becomes(Duration::from_secs(20), || l0_files(&db, "b") == 0), "b compacted afterwards");
        assert_eq!(l0_files(&db, "a"), 0);
        compacted
    })
}

#[test]
fn exclusive_manual_compaction_holds_back_other_families() {
    assert!(!other_family_compacts_beside_manual(true), "exclusive: b waits for the manual compaction of a");
}

#[test]
fn non_exclusive_manual_compaction_lets_automatic_ones_run() {
    assert!(other_family_compacts_beside_manual(false), "not exclusive: b compacts beside it");
}

/// An automatic compaction of family "b" is held in its compaction filter; a manual
/// compaction of family "a" then starts. Whether a's manual compaction finished while b's
/// was still held.
fn manual_runs_beside_automatic(exclusive: bool) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let db = open(dir.path(), family(None, false), family(Some(gate.clone()), true));
    two_tables(&db, "a");
    two_tables(&db, "b");
    assert!(gate.wait_entered(Duration::from_secs(20)), "b's automatic compaction started");
    std::thread::scope(|s| {
        let manual = s.spawn(|| {
            let cf = db.cf_handle("a").unwrap();
            db.try_compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &opts(exclusive))
        });
        let done = becomes(Duration::from_secs(if exclusive { 2 } else { 20 }), || manual.is_finished());
        if exclusive {
            // Registered and waiting: a's tables are untouched.
            assert_eq!(l0_files(&db, "a"), 2);
        }
        gate.open();
        manual.join().unwrap().unwrap();
        assert_eq!(l0_files(&db, "a"), 0);
        assert!(becomes(Duration::from_secs(20), || l0_files(&db, "b") == 0), "b compacted");
        // RocksDB's LOG line of an exclusive step that waits.
        let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        let waited = "[a] Manual compaction waiting for all other scheduled background compactions to finish";
        assert_eq!(log.contains(waited), exclusive, "{waited}");
        assert!(log.contains("[a] Manual compaction starting"));
        done
    })
}

#[test]
fn exclusive_manual_compaction_waits_for_running_automatic_ones() {
    assert!(!manual_runs_beside_automatic(true), "exclusive: a waits for b's running compaction");
}

#[test]
fn non_exclusive_manual_compaction_does_not_wait_for_other_families() {
    assert!(manual_runs_beside_automatic(false), "not exclusive: a compacts while b's runs");
}

/// Not exclusive, in one family: an automatic compaction of the family's level 0 is held;
/// a manual compaction of the family's level-0 tables conflicts with it (RocksDB's
/// `manual_conflict`: one level-0 compaction at a time) and waits for it, then runs.
#[test]
fn non_exclusive_manual_compaction_waits_for_a_conflicting_one() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let db = open(dir.path(), family(None, false), family(Some(gate.clone()), true));
    two_tables(&db, "b");
    assert!(gate.wait_entered(Duration::from_secs(20)), "b's automatic compaction started");
    std::thread::scope(|s| {
        let manual = s.spawn(|| {
            let cf = db.cf_handle("b").unwrap();
            db.try_compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &opts(false))
        });
        assert!(!becomes(Duration::from_secs(1), || manual.is_finished()), "the manual compaction waits");
        gate.open();
        manual.join().unwrap().unwrap();
    });
    assert_eq!(l0_files(&db, "b"), 0);
    let cf = db.cf_handle("b").unwrap();
    assert_eq!(db.get_cf(cf, "b007").unwrap().as_deref(), Some(&b"v1"[..]));
}

/// RocksDB's CompactRange refuses `full_history_ts_low` with a range (InvalidArgument).
#[test]
fn full_history_ts_low_with_a_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), family(None, false), family(None, false));
    let mut c = CompactOptions::default();
    c.set_full_history_ts_low(vec![0u8; 8]);
    let cf = db.cf_handle("a").unwrap();
    let e = db.try_compact_range_cf_opt(cf, Some(b"a"), None::<&[u8]>, &c).unwrap_err();
    assert!(e.to_string().contains("Cannot specify compaction range with full_history_ts_low"), "{e}");
}

/// Family "b" holds one table in level 1 (keys `x…`); a manual compaction of that range
/// (its bottommost-level pass, the family having a compaction filter) is held while two
/// level-0 tables of other keys arrive. Whether the family's own automatic compaction of
/// those started meanwhile (`rocksdb.num-running-compactions` 2).
fn same_family_compacts_beside_manual(exclusive: bool) -> bool {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let armed = Arc::new(AtomicBool::new(false));
    let mut b = family(None, true);
    let (g, on) = (gate.clone(), armed.clone());
    b.set_compaction_filter("gate", move |_level: u32, k: &[u8], _v: &[u8]| {
        if on.load(Ordering::SeqCst) && k.starts_with(b"x") {
            g.hold();
        }
        CompactionDecision::Keep
    });
    let db = open(dir.path(), family(None, false), b);
    let cf = db.cf_handle("b").unwrap();
    for i in 0..50 {
        db.put_cf(cf, format!("x{i:03}"), "v").unwrap();
    }
    db.flush_cf(cf).unwrap();
    db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
    assert_eq!(l0_files(&db, "b"), 0);
    armed.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let manual = s.spawn(|| {
            let cf = db.cf_handle("b").unwrap();
            db.try_compact_range_cf_opt(cf, Some(b"x000"), Some(b"x049"), &opts(exclusive))
        });
        assert!(gate.wait_entered(Duration::from_secs(20)), "the manual compaction started");
        two_tables(&db, "b");
        // The family's automatic compaction starts beside the held manual one (it then
        // waits for the family's one compaction filter, which the manual one holds).
        let compacted = becomes(Duration::from_secs(if exclusive { 2 } else { 20 }), || running(&db) == 2);
        assert!(!manual.is_finished(), "the manual compaction is still held");
        gate.open();
        manual.join().unwrap().unwrap();
        assert!(becomes(Duration::from_secs(20), || l0_files(&db, "b") == 0), "b compacted afterwards");
        assert_eq!(db.get_cf(cf, "x007").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get_cf(cf, "b007").unwrap().as_deref(), Some(&b"v1"[..]));
        compacted
    })
}

#[test]
fn non_exclusive_manual_compaction_lets_its_familys_automatic_ones_run() {
    assert!(
        same_family_compacts_beside_manual(false),
        "not exclusive: the family's level 0 compaction starts"
    );
    assert!(!same_family_compacts_beside_manual(true), "exclusive: the family's level 0 waits");
}
