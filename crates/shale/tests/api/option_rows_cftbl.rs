//! Column-family options that had no row (helper cftbl, issue 33), each shown acting as
//! RocksDB 11.8.1's:
//! - `sst_partitioner_factory` (RocksDB's `SstPartitionerFixedPrefixFactory`): after a
//!   compaction no output table spans two prefixes, where the same data without it is one
//!   table; a flushed table spanning prefixes is rewritten, not moved down, and one within a
//!   prefix is moved unchanged;
//! - `table_properties_collectors`: the option by name drives the same CompactOnDeletion
//!   collector `add_compact_on_deletion_collector_factory` adds (a run of deletions marks the
//!   table and the picker compacts it), round-trips through the OPTIONS file in RocksDB's
//!   spelling, and names the factories in each table's `rocksdb.property.collectors`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::{ErrorKind, Options, SstPartitionerFactory, WaitForCompactOptions, DB};

use crate::util;

fn base() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

/// (level, smallest, largest) of each live table.
fn tables(db: &DB) -> Vec<(i32, Vec<u8>, Vec<u8>)> {
    let mut t: Vec<_> = db
        .live_files()
        .unwrap()
        .into_iter()
        .map(|f| (f.level, f.start_key.unwrap(), f.end_key.unwrap()))
        .collect();
    t.sort();
    t
}

/// Keys of four 3-byte prefixes, interleaved across two flushes.
fn fill(db: &DB) {
    for round in 0..2u32 {
        for p in ["aa1", "aa2", "ab1", "zz9"] {
            for i in 0..50u32 {
                db.put(format!("{p}-{:03}", i * 2 + round), format!("value {p} {i}")).unwrap();
            }
        }
        db.flush().unwrap();
    }
}

#[test]
fn sst_partitioner_cuts_compaction_outputs_at_prefix_boundaries() {
    // Without a partitioner: the compaction writes one table.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    fill(&db);
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(tables(&db).len(), 1, "{:?}", tables(&db));
    drop(db);

    // By options string, as RocksDB's: one table per 3-byte prefix.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base()
        .get_options_from_string("sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=3}")
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    assert!(
        util::latest_options_text(path)
            .contains("  sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=3;}\n"),
        "{}",
        util::latest_options_text(path)
    );
    fill(&db);
    db.compact_range::<&[u8], &[u8]>(None, None);
    let t = tables(&db);
    assert_eq!(t.len(), 4, "{t:?}");
    for (level, lo, hi) in &t {
        assert!(*level > 0);
        assert_eq!(lo[..3], hi[..3], "a table spans two prefixes: {t:?}");
    }
    let firsts: Vec<&[u8]> = t.iter().map(|(_, lo, _)| &lo[..]).collect();
    assert_eq!(firsts, [&b"aa1-000"[..], b"aa2-000", b"ab1-000", b"zz9-000"]);
    // Every key is still there.
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 400);
    assert_eq!(db.get("ab1-077").unwrap(), Some(b"value ab1 38".to_vec()));
    drop(db);

    // A shorter length groups more: "aa" and "ab" and "zz".
    let dir = tempfile::tempdir().unwrap();
    let mut o = base();
    o.set_sst_partitioner_factory(SstPartitionerFactory::FixedPrefix { length: 2 });
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db);
    db.compact_range::<&[u8], &[u8]>(None, None);
    let t = tables(&db);
    assert_eq!(t.len(), 3, "{t:?}");
    assert!(t.iter().all(|(_, lo, hi)| lo[..2] == hi[..2]), "{t:?}");
}

#[test]
fn sst_partitioner_refuses_moving_a_table_that_spans_prefixes() {
    // One flushed table holding two prefixes, compacted by the background picker into
    // level 1 (not the last): rewritten as two tables (RocksDB's IsTrivialMove asks
    // CanDoTrivialMove).
    let two_prefixes = |o: &Options| {
        let dir = tempfile::tempdir().unwrap();
        let db = DB::open(o, dir.path()).unwrap();
        for i in 0..100u32 {
            db.put(format!("a{i:03}"), "x").unwrap();
            db.put(format!("b{i:03}"), "y").unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
        assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 0);
        tables(&db)
    };
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_level_zero_file_num_compaction_trigger(1);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_sst_partitioner_factory(SstPartitionerFactory::FixedPrefix { length: 1 });
    let t = two_prefixes(&o);
    assert_eq!(t.len(), 2, "{t:?}");
    assert!(t.iter().all(|(l, lo, hi)| *l == 1 && lo[0] == hi[0]), "{t:?}");
    // Without the partitioner the table moves down whole.
    let mut plain = Options::default();
    plain.create_if_missing(true);
    plain.set_level_zero_file_num_compaction_trigger(1);
    plain.set_level_compaction_dynamic_level_bytes(false);
    assert_eq!(two_prefixes(&plain).len(), 1);
    // Into the last level (dynamic level bytes: level 0 compacts into level 6) RocksDB does
    // not ask the partitioner: the table moves whole.
    let mut last = Options::default();
    last.create_if_missing(true);
    last.set_level_zero_file_num_compaction_trigger(1);
    last.set_sst_partitioner_factory(SstPartitionerFactory::FixedPrefix { length: 1 });
    let t = two_prefixes(&last);
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].0, 6);

    // A table within one prefix moves down unchanged (its file keeps its number).
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..100u32 {
        db.put(format!("c{i:03}"), "z").unwrap();
    }
    db.flush().unwrap();
    let before: Vec<String> = db.live_files().unwrap().into_iter().map(|f| f.name).collect();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    let after = db.live_files().unwrap();
    assert_eq!(after.len(), 1);
    assert!(after[0].level > 0);
    assert_eq!(before, [after[0].name.clone()], "moved, not rewritten");
}

#[test]
fn sst_partitioner_cuts_at_a_range_tombstone_start_above_the_last_level() {
    // RocksDB's compaction iterator hands each range tombstone's start to the output cutter
    // (a range-deletion sentinel key) above the bottommost level, so with a partitioner a
    // tombstone of its own prefix gets a table of its own instead of widening its
    // neighbour's range across a partition boundary.
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_sst_partitioner_factory(SstPartitionerFactory::FixedPrefix { length: 3 });
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    // Older data on level 6, under everything the tombstone covers, so the next compaction
    // (level 0 into level 1) is not the bottommost and keeps the tombstone.
    for k in ["aa0-000", "aa2-500", "zz9-999"] {
        db.put(k, "old").unwrap();
    }
    db.flush().unwrap();
    let mut co = shale::CompactOptions::default();
    co.set_change_level(true);
    co.set_target_level(6);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    assert!(tables(&db).iter().all(|(l, _, _)| *l == 6), "{:?}", tables(&db));
    db.put("aa1-000", "new").unwrap();
    db.delete_range("aa2-000", "aa2-999").unwrap();
    db.put("ab1-000", "new").unwrap();
    db.flush().unwrap();
    db.set_options(&[("disable_auto_compactions", "false"), ("level0_file_num_compaction_trigger", "1")])
        .unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    let upper: Vec<_> = tables(&db).into_iter().filter(|(l, _, _)| *l < 6).collect();
    assert!(upper.iter().all(|(l, _, _)| *l == 1), "{upper:?}");
    // The tombstone's own table, between the two prefixes' point keys.
    assert_eq!(
        upper.iter().map(|(_, lo, hi)| (lo.clone(), hi.clone())).collect::<Vec<_>>(),
        [
            (b"aa1-000".to_vec(), b"aa1-000".to_vec()),
            (b"aa2-000".to_vec(), b"aa2-999".to_vec()),
            (b"ab1-000".to_vec(), b"ab1-000".to_vec()),
        ],
        "{upper:?}"
    );
    // The tombstone still deletes what it covers on level 6.
    assert_eq!(db.get("aa2-500").unwrap(), None);
    assert_eq!(db.get("aa0-000").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(db.get("ab1-000").unwrap().as_deref(), Some(&b"new"[..]));
}

#[test]
fn sst_partitioner_option_text() {
    let o = |s: &str| Options::default().get_options_from_string(s);
    // A bare id: RocksDB's registry makes the factory with length 0 (never cuts).
    assert!(o("sst_partitioner_factory=SstPartitionerFixedPrefixFactory").is_ok());
    assert!(o("sst_partitioner_factory=nullptr").is_ok());
    let e =
        o("sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=x}").err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e =
        o("sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;width=2}").err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Immutable, as RocksDB's.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    let e = db.set_options(&[("sst_partitioner_factory", "{id=SstPartitionerFixedPrefixFactory;length=2}")]);
    assert!(e.is_err());
}

/// The `rocksdb.property.collectors` of every live table, in file-number order.
fn collectors_of_tables(db: &DB, dir: &Path) -> Vec<String> {
    let mut files: Vec<_> = db.live_files().unwrap().into_iter().map(|lf| lf.name).collect();
    files.sort();
    files
        .into_iter()
        .map(|name| {
            let f = dir.join(name.trim_start_matches('/'));
            let size = std::fs::metadata(&f).unwrap().len();
            let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
            let opts = shale::table::reader::TableReaderOptions::standalone(
                shale::key::bytewise_internal_comparator(),
                f.display().to_string(),
            );
            shale::table::reader::Table::open(file, size, opts)
                .unwrap()
                .properties()
                .property_collectors_names
                .clone()
        })
        .collect()
}

/// 1000 puts flushed, then 300 deletions in a row flushed: (L0 tables after background
/// work, the tables' collector names).
fn deletion_scenario(opts: &str) -> (u64, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default().get_options_from_string(opts).unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..1000u32 {
        db.put(format!("key{i:05}"), format!("value {i}")).unwrap();
    }
    db.flush().unwrap();
    let names = collectors_of_tables(&db, dir.path());
    for i in 100..400u32 {
        db.delete(format!("key{i:05}")).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 700);
    let text = util::latest_options_text(dir.path());
    (util::int_prop(&db, "rocksdb.num-files-at-level0"), names, text)
}

#[test]
fn table_properties_collectors_by_name_drive_the_deletion_collector() {
    // None: two tables stay in level 0 (trigger 4); not written to the OPTIONS file.
    let (l0, names, text) = deletion_scenario("");
    assert_eq!(l0, 2);
    assert_eq!(names, ["[]"]);
    assert!(!text.contains("table_properties_collectors"), "{text}");

    // The collector by name: the deletions' table is marked and compacted.
    let (l0, names, text) = deletion_scenario(
        "table_properties_collectors={id=CompactOnDeletionCollector;window_size=128;deletion_trigger=100}",
    );
    assert_eq!(l0, 0, "the marked table was not compacted");
    assert_eq!(names, ["[CompactOnDeletionCollector]"]);
    // RocksDB 11.8.1's spelling and place (after memtable_factory).
    let want =
        "  memtable_factory=SkipListFactory\n  table_properties_collectors={{id=CompactOnDeletionCollector;\
                min_file_size=0;deletion_ratio=0.000000;deletion_trigger=100;window_size=128;}}\n";
    assert!(text.contains(want), "{text}");

    // A trigger above the run: not marked. Two factories: both named in the tables.
    let (l0, names, _) = deletion_scenario(
        "table_properties_collectors={{id=CompactOnDeletionCollector;window_size=1000;deletion_trigger=301}:\
         {id=CompactForTieringCollector;compaction_trigger_ratio=0.5}}",
    );
    assert_eq!(l0, 2);
    assert_eq!(names, ["[CompactOnDeletionCollector,CompactForTieringCollector]"]);

    // The ratio alone (300 of 300 entries in the second table are deletions).
    let (l0, _, _) = deletion_scenario(
        "table_properties_collectors={{id=CompactOnDeletionCollector;deletion_ratio=0.9;}}",
    );
    assert_eq!(l0, 0);
}

#[test]
fn table_properties_collectors_round_trip_and_refusals() {
    // The setter and the option write the same text; load_latest reads it back.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.add_compact_on_deletion_collector_factory(64, 20, 0.25);
    let db = DB::open(&o, path).unwrap();
    db.put("k", "v").unwrap();
    drop(db);
    let line = "  table_properties_collectors={{id=CompactOnDeletionCollector;min_file_size=0;deletion_ratio=0.250000;\
                deletion_trigger=20;window_size=64;}}\n";
    assert!(util::latest_options_text(path).contains(line), "{}", util::latest_options_text(path));
    let (loaded, _) =
        Options::load_latest(path, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, path).unwrap();
    drop(db);
    assert!(util::latest_options_text(path).contains(line), "{}", util::latest_options_text(path));
    let log = std::fs::read_to_string(path.join("LOG")).unwrap();
    assert!(log.contains(
        "Options.table_properties_collectors: CompactOnDeletionCollector (Sliding window size = 64 Deletion trigger = 20 Deletion ratio = 0.25);"
    ));

    let parse = |s: &str| Options::default().get_options_from_string(s);
    // An id RocksDB 11.8.1 does not register is left out (ignore_unsupported_options).
    assert!(parse("table_properties_collectors={{id=MyCollector;x=1}}").is_ok());
    let e = parse("table_properties_collectors={{id=CompactOnDeletionCollector;window=1}}")
        .err()
        .expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = parse("table_properties_collectors={{id=CompactOnDeletionCollector;window_size=-}}")
        .err()
        .expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = parse("table_properties_collectors={{window_size=1}}").err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}
