//! A bottommost compaction writes sequence number 0 for what every snapshot sees, as RocksDB
//! 11.8.1's `CompactionIterator::PrepareOutput` does (`compaction/job.rs`, `zero_sequence`):
//! - a Put, or operands fully merged at the bottom, no snapshot older than them: seq 0; a
//!   version newer than a live snapshot keeps its sequence until the snapshot goes and a
//!   bottommost compaction rewrites it;
//! - a compaction that is not bottommost (a deeper level holds keys of its range) keeps
//!   every sequence number;
//! - the database shape RocksDB 11.8.1's `ldb` leaves (entities in the last level, newer
//!   versions in level-0 tables, the newest in the WAL; its automatic compactions off, so
//!   the shape is always the same): Shale's `compact_range` leaves what 11.8.1's own
//!   `ldb compact` leaves on a copy, to the sequence numbers (`ldb idump`; skipped without
//!   11.8.1's tools). Before the fix this showed `'e00' seq:16` whenever 11.8.1's automatic
//!   compaction had not already rewritten e00 when its ldb closed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::key::parse_internal_key;
use shale::table::reader::{Table, TableReaderOptions};
use shale::{BottommostLevelCompaction, CompactOptions, WaitForCompactOptions, DB};
use tools::*;

/// (level, user key, sequence, type byte) of every entry of every live table.
fn entries(db: &DB, dir: &Path) -> Vec<(i32, String, u64, u8)> {
    let mut files = db.live_files().unwrap();
    files.sort_by(|a, b| (a.level, &a.start_key).cmp(&(b.level, &b.start_key)));
    let mut out = Vec::new();
    for lf in files {
        let f = dir.join(lf.name.trim_start_matches('/'));
        let size = std::fs::metadata(&f).unwrap().len();
        let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
        let opts = TableReaderOptions::standalone(
            shale::key::bytewise_internal_comparator(),
            f.display().to_string(),
        );
        let table = std::sync::Arc::new(Table::open(file, size, opts).unwrap());
        let mut it = table.iter(false);
        it.seek_to_first();
        while it.valid() {
            let p = parse_internal_key(it.key()).unwrap();
            let uk = String::from_utf8(p.user_key.to_vec()).unwrap();
            out.push((lf.level, uk, p.sequence, p.value_type as u8));
            it.next();
        }
        it.status().unwrap();
    }
    out
}

fn e(level: i32, k: &str, seq: u64, t: u8) -> (i32, String, u64, u8) {
    (level, k.to_string(), seq, t)
}

const VALUE: u8 = 1;

#[test]
fn bottommost_compaction_zeroes_what_every_snapshot_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = DB::open(&concat_merge_options(), dir).unwrap();
    db.put(b"a", b"1").unwrap(); // 1
    db.put(b"b", b"1").unwrap(); // 2
    db.merge(b"m", b"x").unwrap(); // 3
    db.merge(b"m", b"y").unwrap(); // 4
    db.put(b"d", b"old").unwrap(); // 5
    db.delete(b"d").unwrap(); // 6
    let snap = db.snapshot();
    db.put(b"a", b"2").unwrap(); // 7
    db.merge(b"n", b"q").unwrap(); // 8
    db.flush().unwrap();
    // Force: the level-0 table moves to the last level unchanged (6: dynamic level sizes
    // send level 0 there; a trivial move, as RocksDB's), then is rewritten there.
    let mut force = CompactOptions::default();
    force.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &force);
    // a@7 is newer than the
    // snapshot: kept as it is; a@1 is what the snapshot sees: 0. m's operands merge onto
    // nothing into a Put (0), n's into a Put newer than the snapshot (8). d's deletion,
    // seen by every snapshot, goes with what it deletes.
    let want = vec![
        e(6, "a", 7, VALUE),
        e(6, "a", 0, VALUE),
        e(6, "b", 0, VALUE),
        e(6, "m", 0, VALUE),
        e(6, "n", 8, VALUE),
    ];
    assert_eq!(entries(&db, dir), want);
    assert_eq!(snap.get(b"a").unwrap(), Some(b"1".to_vec()));
    drop(snap);
    // Without the snapshot a bottommost rewrite zeroes the rest.
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &force);
    let want = vec![e(6, "a", 0, VALUE), e(6, "b", 0, VALUE), e(6, "m", 0, VALUE), e(6, "n", 0, VALUE)];
    assert_eq!(entries(&db, dir), want);
    for (k, v) in [("a", "2"), ("b", "1"), ("m", "xy"), ("n", "q")] {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_bytes()), "{k}");
    }
    assert_eq!(db.get(b"d").unwrap(), None);
}

#[test]
fn a_compaction_with_a_deeper_level_below_keeps_sequence_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = concat_merge_options();
    // Static level sizes: level 0 compacts into level 1, whatever lies below.
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_level_zero_file_num_compaction_trigger(2);
    let db = DB::open(&o, dir).unwrap();
    db.put(b"a", b"1").unwrap(); // 1
    db.put(b"z", b"1").unwrap(); // 2
    db.flush().unwrap();
    // Compacted (moved to level 1, then rewritten there: bottommost, nothing below) and
    // moved to the last level.
    let mut co = CompactOptions::default();
    co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    co.set_change_level(true);
    co.set_target_level(6);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    assert_eq!(entries(&db, dir), vec![e(6, "a", 0, VALUE), e(6, "z", 0, VALUE)]);
    db.put(b"m", b"1").unwrap(); // 3
    db.flush().unwrap();
    db.put(b"b", b"1").unwrap(); // 4
    db.flush().unwrap();
    // The automatic compaction of the two level-0 tables into level 1: level 6 holds keys
    // of its range [b, m], so it is not bottommost and the sequence numbers stay.
    db.set_options(&[("disable_auto_compactions", "false")]).unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    let want = vec![e(1, "b", 4, VALUE), e(1, "m", 3, VALUE), e(6, "a", 0, VALUE), e(6, "z", 0, VALUE)];
    assert_eq!(entries(&db, dir), want);
}

fn ldb(dir: &Path, extra: &[&str]) -> String {
    // 11.8.1's automatic compactions off: each ldb open flushes the WAL it recovers into a
    // level-0 table, and nothing else moves (with them on, a compaction of level 0 may or
    // may not finish before ldb closes).
    let mut a = vec![format!("--db={}", dir.display()), "--auto_compaction=false".to_string()];
    a.extend(extra.iter().map(|s| s.to_string()));
    run_tool("ldb", &a)
}

#[test]
fn shale_compacts_an_rocksdb_11_database_as_rocksdb_11_does() {
    let test = "compaction_bottommost_seqno_zero";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    for i in 0..12 {
        let key = format!("e{i:02}");
        let cols = if i % 2 == 0 { format!("c:{i} :v{i} b:x") } else { format!("only:{i}") };
        let mut args: Vec<&str> = if i == 0 { vec!["--create_if_missing"] } else { Vec::new() };
        args.push("put_entity");
        args.push(&key);
        args.extend(cols.split(' '));
        ldb(&dir, &args);
    }
    ldb(&dir, &["put", "p", "plain"]);
    ldb(&dir, &["put_entity", "gone", ":soon"]);
    ldb(&dir, &["compact"]);
    ldb(&dir, &["delete", "gone"]); // 15
    for i in (0..12).step_by(3) {
        let key = format!("e{i:02}");
        let col = format!(":new{i}");
        ldb(&dir, &["put_entity", &key, &col, "z:1"]); // 16..=19
    }
    ldb(&dir, &["put_entity", "e05", ":wal"]); // 20, left in the WAL
                                               // The shape: the first entities in the last level, zeroed by 11.8.1's compaction; the
                                               // deletion and the newer entities in level-0 tables with their sequence numbers.
    let shape = run_tool("ldb", &["manifest_dump".to_string(), format!("--db={}", dir.display())]);
    assert!(shape.contains("[16 .. 16]['e00' seq:16, type:22 .. 'e00' seq:16, type:22]"), "{shape}");
    // RocksDB 11.8.1 compacts a copy...
    let oracle = tmp.path().join("oracle");
    std::fs::create_dir(&oracle).unwrap();
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), oracle.join(f.file_name())).unwrap();
    }
    ldb(&oracle, &["compact"]);
    let want = ldb(&oracle, &["idump"]);
    assert!(want.contains("'e00' seq:0, type:22 => :new0 z:1\n"), "{want}");
    // ...and Shale the database.
    let mut o = shale::Options::default();
    o.set_disable_auto_compactions(true);
    {
        let db = DB::open(&o, &dir).unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    assert_eq!(ldb(&dir, &["idump"]), want);
}
