//! Universal and FIFO compaction against RocksDB 11.8.1's release tools, both ways (skipped
//! with a printed reason when the tools are absent, see tools/mod.rs):
//! - RocksDB -> Shale: a database `db_bench --compaction_style=1` (universal) or `=2` (FIFO)
//!   writes reads in Shale exactly as `ldb scan` prints it; Shale opened with the same style
//!   writes, deletes and compacts over it, and `ldb scan` then shows Shale's result;
//! - Shale -> RocksDB: a database Shale writes under universal (its runs settle in the bottom
//!   levels) or FIFO (everything in level 0, small tables merged with `allow_compaction`) is
//!   read by `ldb scan` as Shale reads it, its tables pass `sst_dump --command=verify`, and
//!   `ldb --try_load_options compact` reopens it in RocksDB with the style Shale's OPTIONS
//!   file records (its LOG says so) and compacts it; Shale then reopens it unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{
    DBCompactionStyle, DBCompressionType, FifoCompactOptions, Options, UniversalCompactOptions,
    WaitForCompactOptions, DB,
};
use tools::*;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn pairs(m: &Model) -> Pairs {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn style_options(style: DBCompactionStyle) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_compaction_style(style);
    match style {
        DBCompactionStyle::Universal => {
            let mut u = UniversalCompactOptions::default();
            u.set_size_ratio(1);
            o.set_universal_compaction_options(&u);
        }
        DBCompactionStyle::Fifo => {
            let mut f = FifoCompactOptions::default();
            f.set_max_table_files_size(1 << 30);
            f.set_allow_compaction(true);
            o.set_fifo_compaction_options(&f);
        }
        DBCompactionStyle::Level => {}
    }
    o
}

fn check_shale(db: &DB, model: &Model, ctx: &str) {
    assert_same_pairs(&shale_scan(db, "default"), &pairs(model), &format!("{ctx}: Shale scan"));
    let mut rev = pairs(model);
    rev.reverse();
    assert_same_pairs(&shale_scan_reverse(db, "default"), &rev, &format!("{ctx}: Shale reverse scan"));
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{ctx}: get {}", encode_hex(k));
    }
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

/// Levels holding tables, from `live_files`.
fn levels_used(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().iter().map(|f| f.level).collect();
    l.sort();
    l.dedup();
    l
}

/// Shale writes `rounds` batches of puts and deletes over `model`, flushing after each.
fn shale_writes(db: &DB, model: &mut Model, seed: u64, rounds: usize) {
    let mut x = seed;
    for r in 0..rounds {
        for i in 0..300u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = format!("shale{:06}", (x >> 33) % 3000).into_bytes();
            if i % 10 == 9 {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("v{r}-{i}-{}", "x".repeat((x % 200) as usize)).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        db.flush().unwrap();
    }
}

fn rocksdb_reopens_with_style(dir: &Path, style_name: &str, model: &Model, ctx: &str) {
    let d = format!("--db={}", dir.display());
    run_tool("ldb", &args(&[&d, "--try_load_options", "compact"]));
    let log = std::fs::read_to_string(dir.join("LOG")).expect("RocksDB's LOG");
    assert!(
        log.contains(&format!("Options.compaction_style: {style_name}")),
        "{ctx}: RocksDB did not reopen with {style_name}"
    );
    assert_same_pairs(
        &ldb_scan(dir, None),
        &pairs(model),
        &format!("{ctx}: ldb scan after RocksDB's compaction"),
    );
}

fn rocksdb_to_shale(style: DBCompactionStyle, bench_style: &str, style_name: &str) {
    let test = format!("rocksdb_to_shale_{bench_style}");
    if !use_rocksdb_11(&test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut extra = vec![
        format!("--compaction_style={bench_style}"),
        "--write_buffer_size=65536".to_string(),
        "--target_file_size_base=131072".to_string(),
        "--value_size=200".to_string(),
    ];
    if style == DBCompactionStyle::Fifo {
        // db_bench's own default (0) would delete every table.
        extra.push("--fifo_compaction_max_table_files_size_mb=1024".to_string());
    }
    let extra: Vec<&str> = extra.iter().map(|s| s.as_str()).collect();
    db_bench_fill(dir.path(), 6000, &extra);
    let mut model: Model = ldb_scan(dir.path(), None).into_iter().collect();
    assert!(model.len() > 1000, "{test}: ldb saw {} pairs", model.len());
    {
        let db = DB::open(&style_options(style), dir.path()).unwrap();
        check_shale(&db, &model, &format!("{test}: first open"));
        shale_writes(&db, &mut model, 7, 6);
        wait(&db);
        check_shale(&db, &model, &format!("{test}: after Shale's writes"));
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check_shale(&db, &model, &format!("{test}: after compact_range"));
        if style == DBCompactionStyle::Fifo {
            assert_eq!(levels_used(&db), vec![0], "{test}: FIFO keeps level 0 only");
        } else {
            assert_eq!(levels_used(&db), vec![6], "{test}: universal compact_range ends in the last level");
        }
    }
    assert_same_pairs(
        &ldb_scan(dir.path(), None),
        &pairs(&model),
        &format!("{test}: ldb scan of Shale's result"),
    );
    rocksdb_reopens_with_style(dir.path(), style_name, &model, &test);
    let db = DB::open(&style_options(style), dir.path()).unwrap();
    check_shale(&db, &model, &format!("{test}: Shale reopens"));
}

fn shale_to_rocksdb(style: DBCompactionStyle, style_name: &str) {
    let test = format!("shale_to_rocksdb_{style_name}");
    if !use_rocksdb_11(&test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::new();
    {
        let mut o = style_options(style);
        o.set_compression_type(DBCompressionType::Snappy);
        o.set_level_zero_file_num_compaction_trigger(3);
        let db = DB::open(&o, dir.path()).unwrap();
        shale_writes(&db, &mut model, 11, 20);
        wait(&db);
        check_shale(&db, &model, &test);
        let used = levels_used(&db);
        if style == DBCompactionStyle::Fifo {
            assert_eq!(used, vec![0], "{test}: FIFO keeps level 0 only");
            let n = db.live_files().unwrap().len();
            assert!(n < 20, "{test}: allow_compaction merged level 0 ({n} tables for 20 flushes)");
        } else {
            assert!(used.contains(&6), "{test}: universal runs settle in the bottom level: {used:?}");
            // Once compactions are done, at most the trigger's number of sorted runs (3) is
            // left: each level-0 table is one, each non-empty level above 0 another; more
            // and RocksDB's picker reduces their number (at the trigger itself it compacts
            // only by size amplification or ratio). Which levels hold them depends on how
            // far compactions lagged the flushes (a loaded machine leaves runs higher up),
            // so only their number is checked.
            let l0 = db.live_files().unwrap().iter().filter(|f| f.level == 0).count();
            let runs = l0 + used.iter().filter(|&&l| l > 0).count();
            assert!(runs <= 3, "{test}: {runs} sorted runs left (levels {used:?}, {l0} level-0 tables)");
        }
    }
    assert_same_pairs(&ldb_scan(dir.path(), None), &pairs(&model), &format!("{test}: ldb scan"));
    for f in sst_files(dir.path()) {
        let (ok, out, err) =
            try_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
        assert!(ok && !out.contains("Corruption"), "{test}: sst_dump verify {}: {out}{err}", f.display());
    }
    rocksdb_reopens_with_style(dir.path(), style_name, &model, &test);
    let db = DB::open(&style_options(style), dir.path()).unwrap();
    check_shale(&db, &model, &format!("{test}: Shale reopens after RocksDB"));
}

#[test]
fn rocksdb_universal_db_reads_in_shale() {
    rocksdb_to_shale(DBCompactionStyle::Universal, "1", "kCompactionStyleUniversal");
}

#[test]
fn rocksdb_fifo_db_reads_in_shale() {
    rocksdb_to_shale(DBCompactionStyle::Fifo, "2", "kCompactionStyleFIFO");
}

#[test]
fn shale_universal_db_reads_in_rocksdb() {
    shale_to_rocksdb(DBCompactionStyle::Universal, "kCompactionStyleUniversal");
}

#[test]
fn shale_fifo_db_reads_in_rocksdb() {
    shale_to_rocksdb(DBCompactionStyle::Fifo, "kCompactionStyleFIFO");
}

/// `compaction_pri` kRoundRobin: level compactions take a level's files from its compact
/// cursor on, and each records the next cursor in the MANIFEST (RocksDB's `kCompactCursor`
/// edit); RocksDB 11.8.1's `ldb manifest_dump` reads it back on its level, the cursor
/// survives Shale's reopen (the new MANIFEST's snapshot carries it), and RocksDB reads the data.
#[test]
fn shale_round_robin_cursors_read_in_rocksdb() {
    let test = "shale_round_robin_cursors_read_in_rocksdb";
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(64 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(16 << 10);
    o.set_max_bytes_for_level_base(64 << 10);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_compaction_pri(shale::CompactionPri::RoundRobin);
    let mut model = Model::new();
    let db = DB::open(&o, dir.path()).unwrap();
    shale_writes(&db, &mut model, 7, 12);
    wait(&db);
    check_shale(&db, &model, test);
    assert!(
        levels_used(&db).iter().any(|&l| l >= 2),
        "{test}: level 1 compacted down: {:?}",
        levels_used(&db)
    );
    drop(db);

    // The MANIFEST replayed holds a cursor for level 1 (and for no level without files).
    let cursors = || {
        let fs = shale::fs::default_fs();
        let m = shale_engine::version::manifest::recover(&*fs, dir.path()).unwrap();
        m.column_families[&0].compact_cursors.clone()
    };
    let before = cursors();
    assert!(before.contains_key(&1), "{test}: no compact cursor for level 1: {before:?}");
    let db = DB::open(&o, dir.path()).unwrap();
    check_shale(&db, &model, &format!("{test}: reopened"));
    drop(db);
    assert_eq!(cursors(), before, "{test}: the new MANIFEST's snapshot carries the cursors");
    if !use_rocksdb_11(test) {
        return;
    }
    let dump = run_tool(
        "ldb",
        &args(&[&format!("--path={}", current_manifest(dir.path()).display()), "manifest_dump"]),
    );
    assert!(
        dump.lines().any(|l| l.starts_with("--- level 1 ") && l.contains("compact_cursor:")),
        "{test}: RocksDB sees no cursor on level 1 after Shale's reopen:\n{dump}"
    );
    assert_same_pairs(&ldb_scan(dir.path(), None), &pairs(&model), &format!("{test}: ldb scan"));
}
