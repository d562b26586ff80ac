//! `CompactOptions::set_change_level` / `set_target_level`: after the manual compaction, the
//! tables of the level it ended on move to the target level by a MANIFEST edit alone, as
//! RocksDB 11.8.1's `DBImpl::ReFitLevel` (`db/compact.rs::refit_level`): down, up, to the
//! smallest fitting empty level for target -1 (with and without dynamic level bytes), one
//! table up to level 0; refused with RocksDB's Status texts when a level between holds
//! tables, when several tables would go up to level 0, when the target is beyond the last
//! level, under FIFO compaction. The moved tables keep their numbers (nothing rewritten),
//! every key reads back after a reopen, and RocksDB 11.8.1's `ldb manifest_dump` shows the
//! tables on the target level.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{CompactOptions, DBCompactionStyle, DBCompressionType, ErrorKind, Options, DB};

/// Table number -> level, from `live_files`.
fn levels(db: &DB) -> BTreeMap<u64, i32> {
    db.live_files()
        .unwrap()
        .iter()
        .map(|f| (f.name.trim_start_matches('/').trim_end_matches(".sst").parse().unwrap(), f.level))
        .collect()
}

/// The levels holding tables.
fn used_levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = levels(db).values().copied().collect();
    l.sort();
    l.dedup();
    l
}

fn options(dynamic: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_level_compaction_dynamic_level_bytes(dynamic);
    // Table sizes as written (the tests count bytes and tables).
    o.set_compression_type(DBCompressionType::None);
    o
}

/// Writes `{prefix}000..` (`n` keys, 100-byte values) and flushes them to one level-0 table.
fn write(db: &DB, prefix: &str, n: usize) {
    for i in 0..n {
        db.put(format!("{prefix}{i:04}"), format!("{prefix}-value-{i:0>94}")).unwrap();
    }
    db.flush().unwrap();
}

fn check(db: &DB, prefix: &str, n: usize) {
    for i in 0..n {
        let got = db.get(format!("{prefix}{i:04}")).unwrap();
        assert_eq!(got.as_deref(), Some(format!("{prefix}-value-{i:0>94}").as_bytes()), "{prefix}{i:04}");
    }
}

fn change_level(target: i32) -> CompactOptions {
    let mut co = CompactOptions::default();
    co.set_change_level(true);
    co.set_target_level(target);
    co
}

fn compact(db: &DB, co: &CompactOptions) -> shale::Result<()> {
    let cf = db.cf_handle("default").unwrap();
    db.try_compact_range_cf_opt(&cf, None::<&[u8]>, None::<&[u8]>, co)
}

#[test]
fn moves_down_without_rewriting_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(false);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        write(&db, "a", 200);
        // Static level sizes: the compaction ends on level 1.
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let before = levels(&db);
        assert!(before.values().all(|l| *l == 1), "{before:?}");
        compact(&db, &change_level(3)).unwrap();
        let after = levels(&db);
        assert_eq!(after.keys().collect::<Vec<_>>(), before.keys().collect::<Vec<_>>(), "tables rewritten");
        assert!(after.values().all(|l| *l == 3), "{after:?}");
        assert_eq!(db.property_int_value("rocksdb.num-files-at-level3").unwrap(), Some(after.len() as u64));
        assert_eq!(db.property_int_value("rocksdb.num-files-at-level1").unwrap(), Some(0));
        check(&db, "a", 200);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(levels(&db).values().all(|l| *l == 3), "after reopen: {:?}", levels(&db));
    check(&db, "a", 200);
    drop(db);
    manifest_shows(dir.path(), 3, 200);
}

#[test]
fn moves_up_from_the_last_level_with_dynamic_level_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(true);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        write(&db, "a", 200);
        // Dynamic level sizes: the compaction ends on the last level.
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let before = levels(&db);
        assert!(before.values().all(|l| *l == 6), "{before:?}");
        compact(&db, &change_level(2)).unwrap();
        let after = levels(&db);
        assert_eq!(after.keys().collect::<Vec<_>>(), before.keys().collect::<Vec<_>>(), "tables rewritten");
        assert_eq!(used_levels(&db), vec![2]);
        check(&db, "a", 200);
        // Written again and compacted with target -1: every empty level above the base
        // level has no target size, so the tables go up to level 1 (the compaction takes
        // the range to the last level first).
        write(&db, "a", 200);
        compact(&db, &change_level(-1)).unwrap();
        assert_eq!(used_levels(&db), vec![1]);
        check(&db, "a", 200);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(used_levels(&db), vec![1]);
    check(&db, "a", 200);
    drop(db);
    manifest_shows(dir.path(), 1, 200);
}

#[test]
fn target_minus_one_stops_at_the_first_level_too_small() {
    // Static level sizes, level 1's target 16 KiB, level 2's 160 KiB: about 40 KB of tables
    // on level 4 fit level 2 and not level 1.
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(false);
    o.set_max_bytes_for_level_base(16 << 10);
    o.set_max_bytes_for_level_multiplier(10.0);
    let db = DB::open(&o, dir.path()).unwrap();
    write(&db, "a", 400);
    compact(&db, &change_level(4)).unwrap();
    assert_eq!(used_levels(&db), vec![4]);
    let bytes: u64 = db.live_files().unwrap().iter().map(|f| f.size as u64).sum();
    assert!(bytes > 16 << 10 && bytes <= 160 << 10, "{bytes} bytes");
    compact(&db, &change_level(-1)).unwrap();
    assert_eq!(used_levels(&db), vec![2]);
    check(&db, "a", 400);
}

#[test]
fn target_minus_one_stays_when_the_level_above_is_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(true), dir.path()).unwrap();
    write(&db, "a", 100);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    compact(&db, &change_level(5)).unwrap();
    // `b` keys beside them: the range b.. goes down to the last level; level 5 holds `a`.
    write(&db, "b", 100);
    let cf = db.cf_handle("default").unwrap();
    db.try_compact_range_cf_opt(&cf, Some(b"b"), None::<&[u8]>, &change_level(-1)).unwrap();
    let l = levels(&db);
    assert_eq!(used_levels(&db), vec![5, 6], "{l:?}");
    check(&db, "a", 100);
    check(&db, "b", 100);
}

#[test]
fn refuses_to_cross_a_level_holding_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(true), dir.path()).unwrap();
    write(&db, "a", 100);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    compact(&db, &change_level(2)).unwrap();
    write(&db, "b", 100);
    let cf = db.cf_handle("default").unwrap();
    let e = db.try_compact_range_cf_opt(&cf, Some(b"b"), None::<&[u8]>, &change_level(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("Levels between source and target are not empty for a move."), "{e}");
    // The compaction itself ran: `b` is on the last level, `a` where it was.
    let l = levels(&db);
    assert_eq!(used_levels(&db), vec![2, 6], "{l:?}");
    check(&db, "a", 100);
    check(&db, "b", 100);
}

#[test]
fn one_table_may_go_up_to_level_0_but_not_several() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(true), dir.path()).unwrap();
    write(&db, "a", 100);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels(&db).len(), 1);
    compact(&db, &change_level(0)).unwrap();
    assert_eq!(used_levels(&db), vec![0]);
    check(&db, "a", 100);

    let dir = tempfile::tempdir().unwrap();
    let mut o = options(true);
    o.set_target_file_size_base(8 << 10);
    let db = DB::open(&o, dir.path()).unwrap();
    // Two overlapping level-0 tables: merged (not moved) into tables of 8 KiB.
    write(&db, "a", 400);
    write(&db, "a", 400);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let before = levels(&db);
    assert!(before.len() > 1, "{before:?}");
    let e = compact(&db, &change_level(0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Aborted, "{e}");
    assert!(
        e.to_string().contains(
            "Moving more than 1 file from non-L0 to L0 is not allowed as it does not bring any benefit to \
             read nor write throughput."
        ),
        "{e}"
    );
    assert_eq!(levels(&db), before);
    check(&db, "a", 400);
}

#[test]
fn refuses_a_target_beyond_the_last_level_after_compacting() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(false), dir.path()).unwrap();
    write(&db, "a", 100);
    let e = compact(&db, &change_level(7)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Target level exceeds number of levels"), "{e}");
    // As in RocksDB the compaction ran before the move was refused.
    assert_eq!(used_levels(&db), vec![1]);
    check(&db, "a", 100);
}

#[test]
fn target_level_without_change_level_moves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(false), dir.path()).unwrap();
    write(&db, "a", 100);
    let mut co = CompactOptions::default();
    co.set_target_level(4);
    compact(&db, &co).unwrap();
    assert_eq!(used_levels(&db), vec![1]);
}

#[test]
fn fifo_refuses_change_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(false);
    o.set_compaction_style(DBCompactionStyle::Fifo);
    let db = DB::open(&o, dir.path()).unwrap();
    write(&db, "a", 10);
    let e = compact(&db, &change_level(-1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("FIFO compaction does not support change_level."), "{e}");
    assert_eq!(used_levels(&db), vec![0]);
}

#[test]
fn universal_moves_the_last_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(false);
    o.set_compaction_style(DBCompactionStyle::Universal);
    let db = DB::open(&o, dir.path()).unwrap();
    write(&db, "a", 100);
    write(&db, "b", 100);
    compact(&db, &change_level(1)).unwrap();
    assert_eq!(used_levels(&db), vec![1]);
    check(&db, "a", 100);
    check(&db, "b", 100);
}

/// RocksDB 11.8.1's `ldb manifest_dump` lists every table under `--- level <level> ---`, and
/// its `ldb scan` reads the `keys` keys.
fn manifest_shows(dir: &Path, level: usize, keys: usize) {
    if !tools::use_rocksdb_11("compact_range_change_level") {
        return;
    }
    let out = tools::run_tool("ldb", &tools::args(&["manifest_dump", &format!("--db={}", dir.display())]));
    let mut current = None;
    let mut tables = 0;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("--- level ") {
            current = rest.split(' ').next().and_then(|n| n.parse::<usize>().ok());
        } else if line.trim_start().starts_with(|c: char| c.is_ascii_digit()) && line.contains(':') {
            // A table line: " 12:4096[1 .. 200]['a0000' ...".
            assert_eq!(current, Some(level), "table outside level {level}:\n{out}");
            tables += 1;
        }
    }
    assert!(tables > 0, "no table in:\n{out}");
    assert_eq!(tools::ldb_scan(dir, None).len(), keys);
}
