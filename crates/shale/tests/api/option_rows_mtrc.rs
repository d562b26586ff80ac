//! `min_tombstones_for_range_conversion` (a mutable column-family option, default 0: off),
//! acting as RocksDB 11.8.1's read-path range conversion (`DBIter::MaybeInsertRangeTombstone`):
//! a step (forward or backward) that passes at least that many point tombstones in a row, with no live key
//! between them, adds one range tombstone over them to the active memtable at the read's
//! sequence (`rocksdb.read.path.range.tombstones.inserted`); later scans do not count the
//! covered tombstones again, and what every read returns never changes. A run RocksDB would add
//! but cannot (the read's snapshot predates the memtable, a tombstone already covers the
//! range) counts as `...discarded`; read-only databases, tailing iterators and legacy prefix
//! seeks convert nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::statistics::Ticker;
use shale::{Cache, ErrorKind, IteratorMode, Options, ReadOptions, SliceTransform, DB};

fn opts(min: u32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    if min > 0 {
        o = o.get_options_from_string(format!("min_tombstones_for_range_conversion={min}")).unwrap();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
    }
    o
}

fn inserted(o: &Options) -> u64 {
    o.get_ticker_count(Ticker::ReadPathRangeTombstonesInserted)
}

fn discarded(o: &Options) -> u64 {
    o.get_ticker_count(Ticker::ReadPathRangeTombstonesDiscarded)
}

fn active_entries(db: &DB) -> u64 {
    util::int_prop(db, "rocksdb.num-entries-active-mem-table")
}

/// `a` live, `n` deleted keys `k0000..` (each put, then deleted), `z` live.
fn fill(db: &DB, n: u32) {
    db.put("a", "A").unwrap();
    for i in 0..n {
        db.put(format!("k{i:04}"), "v").unwrap();
    }
    for i in 0..n {
        db.delete(format!("k{i:04}")).unwrap();
    }
    db.put("z", "Z").unwrap();
}

fn scan(db: &DB, ro: ReadOptions) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iterator_opt(IteratorMode::Start, ro)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect()
}

fn live() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![(b"a".to_vec(), b"A".to_vec()), (b"z".to_vec(), b"Z".to_vec())]
}

#[test]
fn a_long_run_of_tombstones_becomes_one_range_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!(inserted(&o), 1);
    assert_eq!(discarded(&o), 0);
    assert_eq!(active_entries(&db), before + 1, "one range tombstone added to the active memtable");
    // Later scans: same results, the covered tombstones are not counted again, nothing added.
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!((inserted(&o), discarded(&o)), (1, 0));
    assert_eq!(active_entries(&db), before + 1);
    // The tombstone ends at the live key that ended the run, and sits at the read's
    // sequence: later writes into its range are seen.
    assert_eq!(db.get("z").unwrap(), Some(b"Z".to_vec()));
    assert_eq!(db.get("k0050").unwrap(), None);
    db.put("k0050", "again").unwrap();
    assert_eq!(db.get("k0050").unwrap(), Some(b"again".to_vec()));
    let got = scan(&db, ReadOptions::default());
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[1], (b"k0050".to_vec(), b"again".to_vec()));
    // Flushed and reopened: the data is the same.
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&opts(0), dir.path()).unwrap();
    assert_eq!(scan(&db, ReadOptions::default()).len(), 3);
    assert_eq!(db.get("k0050").unwrap(), Some(b"again".to_vec()));
    assert_eq!(db.get("k0049").unwrap(), None);
}

#[test]
fn nothing_happens_when_off_or_the_run_is_short() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(0);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!((inserted(&o), discarded(&o)), (0, 0));
    assert_eq!(active_entries(&db), before);
    drop(db);

    let dir = tempfile::tempdir().unwrap();
    let o = opts(101);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!((inserted(&o), discarded(&o)), (0, 0), "100 tombstones, 101 needed");
    assert_eq!(active_entries(&db), before);
    // A live key in the middle splits the run in two of 50: neither is long enough for 51.
    db.set_options(&[("min_tombstones_for_range_conversion", "51")]).unwrap();
    db.put("k0050", "mid").unwrap();
    assert_eq!(scan(&db, ReadOptions::default()).len(), 3);
    assert_eq!((inserted(&o), discarded(&o)), (0, 0));
    // 49 is enough: both runs convert (the first ends at k0050, the second at z).
    db.set_options(&[("min_tombstones_for_range_conversion", "49")]).unwrap();
    let before = active_entries(&db);
    assert_eq!(scan(&db, ReadOptions::default()).len(), 3);
    assert_eq!(inserted(&o), 2);
    assert_eq!(active_entries(&db), before + 2);
}

#[test]
fn set_options_turns_it_on_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(0);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    db.set_options(&[("min_tombstones_for_range_conversion", "10")]).unwrap();
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!(inserted(&o), 1);
    // Off again: a new run elsewhere is left alone.
    db.set_options(&[("min_tombstones_for_range_conversion", "0")]).unwrap();
    for i in 0..50u32 {
        db.delete(format!("m{i:04}")).unwrap();
    }
    let before = active_entries(&db);
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!((inserted(&o), discarded(&o)), (1, 0));
    assert_eq!(active_entries(&db), before);
    let e = db.set_options(&[("min_tombstones_for_range_conversion", "x")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn a_run_at_the_upper_bound_ends_at_its_last_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let mut ro = ReadOptions::default();
    ro.set_iterate_upper_bound("k0050");
    assert_eq!(scan(&db, ro), vec![(b"a".to_vec(), b"A".to_vec())]);
    assert_eq!(inserted(&o), 1);
    // [k0000, k0049) is covered now; k0049 still has its own tombstone: a scan of the rest
    // converts k0049..z (a new range, not covered by the first).
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!(inserted(&o), 2);
    assert_eq!(db.get("k0049").unwrap(), None);
}

#[test]
fn an_older_snapshot_than_the_memtable_discards_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let snap = db.snapshot();
    db.put("b", "B").unwrap();
    db.flush().unwrap();
    db.put("c", "C").unwrap();
    let before = active_entries(&db);
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    assert_eq!(scan(&db, ro), live());
    assert_eq!((inserted(&o), discarded(&o)), (0, 1));
    assert_eq!(active_entries(&db), before);
    // The latest state converts (the run is in the table, the tombstone goes to the memtable).
    assert_eq!(scan(&db, ReadOptions::default()).len(), 4);
    assert_eq!(inserted(&o), 1);
    assert_eq!(active_entries(&db), before + 1);
}

#[test]
fn read_only_tailing_and_legacy_prefix_reads_convert_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        fill(&db, 100);
        // Tailing.
        let mut ro = ReadOptions::default();
        ro.set_tailing(true);
        let before = active_entries(&db);
        assert_eq!(scan(&db, ro), live());
        assert_eq!((inserted(&o), discarded(&o)), (0, 0));
        assert_eq!(active_entries(&db), before);
        db.flush().unwrap();
    }
    let ro_opts = opts(10);
    let db = DB::open_for_read_only(&ro_opts, dir.path(), false).unwrap();
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!((inserted(&ro_opts), discarded(&ro_opts)), (0, 0));
    drop(db);

    // A legacy prefix seek (an extractor, no total_order_seek nor prefix_same_as_start).
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(10);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    let mut it = db.raw_iterator_opt(ReadOptions::default());
    it.seek("k");
    while it.valid() {
        it.next();
    }
    assert!(it.status().is_ok());
    drop(it);
    assert_eq!((inserted(&o), discarded(&o)), (0, 0));
    assert_eq!(active_entries(&db), before);
    // With prefix_same_as_start it converts, within the prefix (the run ends at its last
    // tombstone, as at a bound).
    let mut ro = ReadOptions::default();
    ro.set_prefix_same_as_start(true);
    let mut it = db.raw_iterator_opt(ro);
    it.seek("k");
    assert!(!it.valid());
    drop(it);
    assert_eq!(inserted(&o), 1);
    assert_eq!(active_entries(&db), before + 1);
}

#[test]
fn mtrc_row_round_trips_through_the_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let o = opts(33);
    drop(DB::open(&o, path).unwrap());
    let text = util::latest_options_text(path);
    assert!(text.contains("  min_tombstones_for_range_conversion=33\n"), "{text}");
    let (mut again, _) =
        Options::load_latest(path, shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    again.enable_statistics();
    let db = DB::open(&again, path).unwrap();
    fill(&db, 40);
    assert_eq!(scan(&db, ReadOptions::default()), live());
    assert_eq!(inserted(&again), 1, "33 read back from the OPTIONS file");
    drop(db);
    let e =
        Options::default().get_options_from_string("min_tombstones_for_range_conversion=-1").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn a_range_already_covered_in_the_memtable_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    // Both made before either scans: the second does not see the first's tombstone among
    // its own, meets the same run, and finds it covered in the memtable.
    let first = db.iterator(IteratorMode::Start);
    let second = db.iterator(IteratorMode::Start);
    let before = active_entries(&db);
    assert_eq!(first.map(|r| r.unwrap().0.to_vec()).collect::<Vec<_>>(), vec![b"a".to_vec(), b"z".to_vec()]);
    assert_eq!((inserted(&o), discarded(&o)), (1, 0));
    assert_eq!(second.map(|r| r.unwrap().0.to_vec()).collect::<Vec<_>>(), vec![b"a".to_vec(), b"z".to_vec()]);
    assert_eq!((inserted(&o), discarded(&o)), (1, 1));
    assert_eq!(active_entries(&db), before + 1);
}

#[test]
fn an_ingestion_after_the_iterator_was_made_discards_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    fill(&db, 100);
    // A held snapshot makes the ingestion take a new sequence, above the iterator's.
    let snap = db.snapshot();
    let it = db.iterator(IteratorMode::Start);
    let sst = dir.path().join("in.sst");
    let wo = Options::default();
    let mut w = shale::SstFileWriter::create(&wo);
    w.open(&sst).unwrap();
    w.put(b"zz", b"ingested").unwrap();
    w.finish().unwrap();
    db.ingest_external_file(vec![&sst]).unwrap();
    let before = active_entries(&db);
    assert_eq!(it.map(|r| r.unwrap().0.to_vec()).collect::<Vec<_>>(), vec![b"a".to_vec(), b"z".to_vec()]);
    assert_eq!((inserted(&o), discarded(&o)), (0, 1));
    assert_eq!(active_entries(&db), before);
    // A new iterator reads at or above the ingested sequence: it converts.
    assert_eq!(scan(&db, ReadOptions::default()).len(), 3);
    assert_eq!(inserted(&o), 1);
    drop(snap);
}

#[test]
fn a_reverse_scan_converts_the_run_below_a_live_key() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    let back: Vec<_> = db.iterator(IteratorMode::End).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(back, vec![b"z".to_vec(), b"a".to_vec()]);
    assert_eq!((inserted(&o), discarded(&o)), (1, 0));
    assert_eq!(active_entries(&db), before + 1);
    // Covered now: neither direction counts the run again.
    assert_eq!(scan(&db, ReadOptions::default()), live());
    let back: Vec<_> = db.iterator(IteratorMode::End).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(back.len(), 2);
    assert_eq!((inserted(&o), discarded(&o)), (1, 0));
    assert_eq!(db.get("z").unwrap(), Some(b"Z".to_vec()));
    assert_eq!(db.get("a").unwrap(), Some(b"A".to_vec()));
}

#[test]
fn a_reverse_run_needs_a_key_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("a", "A").unwrap();
    for i in 0..100u32 {
        db.delete(format!("k{i:04}")).unwrap();
    }
    let before = active_entries(&db);
    // seek_to_last without a bound: the run has no key above it.
    let mut it = db.raw_iterator();
    it.seek_to_last();
    assert_eq!(it.key(), Some(&b"a"[..]));
    drop(it);
    assert_eq!((inserted(&o), discarded(&o)), (0, 0));
    assert_eq!(active_entries(&db), before);
    // seek_for_prev's target is one: [k0000, k0100) is added.
    let mut it = db.raw_iterator();
    it.seek_for_prev("k0100");
    assert_eq!(it.key(), Some(&b"a"[..]));
    drop(it);
    assert_eq!(inserted(&o), 1);
    assert_eq!(active_entries(&db), before + 1);
    db.put("k0100", "x").unwrap();
    assert_eq!(db.get("k0100").unwrap(), Some(b"x".to_vec()), "the end is exclusive");
}

/// One database with the option (3) and one without, given the same writes (puts, deletes,
/// range deletions, flushes) and the same random iterator moves in both
/// directions, with and without bounds and snapshots: every position and value is the
/// same, and the converting one did add range tombstones.
#[test]
fn results_never_change() {
    let tmp = tempfile::tempdir().unwrap();
    let on_opts = opts(3);
    let off_opts = opts(0);
    let on = DB::open(&on_opts, tmp.path().join("on")).unwrap();
    let off = DB::open(&off_opts, tmp.path().join("off")).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let key = |i: u64| format!("k{i:03}");
    for round in 0..6u64 {
        for _ in 0..300 {
            let k = key(rnd(200));
            match rnd(10) {
                0..=3 => {
                    let v = format!("v{round}-{}", rnd(1000));
                    on.put(&k, &v).unwrap();
                    off.put(&k, &v).unwrap();
                }
                4..=8 => {
                    on.delete(&k).unwrap();
                    off.delete(&k).unwrap();
                }
                _ => {
                    let end = key(rnd(200));
                    on.delete_range(&k, &end).unwrap();
                    off.delete_range(&k, &end).unwrap();
                }
            }
        }
        if round % 2 == 1 {
            on.flush().unwrap();
            off.flush().unwrap();
        }
        let (snap_on, snap_off) = (on.snapshot(), off.snapshot());
        for _ in 0..40 {
            let mut ro = (ReadOptions::default(), ReadOptions::default());
            if rnd(3) == 0 {
                let up = key(rnd(220));
                ro.0.set_iterate_upper_bound(up.clone());
                ro.1.set_iterate_upper_bound(up);
            }
            if rnd(3) == 0 {
                let lo = key(rnd(200));
                ro.0.set_iterate_lower_bound(lo.clone());
                ro.1.set_iterate_lower_bound(lo);
            }
            if rnd(4) == 0 {
                ro.0.set_snapshot(&snap_on);
                ro.1.set_snapshot(&snap_off);
            }
            let mut a = on.raw_iterator_opt(ro.0);
            let mut b = off.raw_iterator_opt(ro.1);
            for _ in 0..30 {
                match rnd(6) {
                    0 => {
                        let t = key(rnd(210));
                        a.seek(&t);
                        b.seek(&t);
                    }
                    1 => {
                        let t = key(rnd(210));
                        a.seek_for_prev(&t);
                        b.seek_for_prev(&t);
                    }
                    2 => {
                        a.seek_to_first();
                        b.seek_to_first();
                    }
                    3 => {
                        a.seek_to_last();
                        b.seek_to_last();
                    }
                    4 if a.valid() => {
                        a.next();
                        b.next();
                    }
                    _ if a.valid() => {
                        a.prev();
                        b.prev();
                    }
                    _ => {}
                }
                assert_eq!(a.valid(), b.valid());
                assert_eq!(a.key(), b.key());
                assert_eq!(a.value(), b.value());
                assert!(a.status().is_ok() && b.status().is_ok());
            }
        }
        drop((snap_on, snap_off));
        let all = |db: &DB| db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect::<Vec<_>>();
        assert_eq!(all(&on), all(&off));
        for i in 0..200 {
            assert_eq!(on.get(key(i)).unwrap(), off.get(key(i)).unwrap());
        }
    }
    assert!(inserted(&on_opts) > 0);
    assert_eq!(inserted(&off_opts), 0);
}
