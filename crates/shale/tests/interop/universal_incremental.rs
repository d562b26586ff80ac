//! Universal compaction's `incremental=true` against RocksDB 11.8.1 (skipped with a printed
//! reason when its tools are absent, see tools/mod.rs): on one database holding runs in
//! levels 5 and 6 (written by Shale, its files cut at `target_file_size_base`), with size
//! amplification due, RocksDB's `db_bench --universal_incremental=1` and Shale open copies
//! and run the same first compaction: the same files of levels 5 and 6 (the LOG's
//! `compaction_started` events). RocksDB's LOG reports the option read from Shale's OPTIONS
//! file (`ldb --try_load_options`), and Shale loads it from a database db_bench wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Cache, DBCompactionStyle, DBCompressionType, Env, Options, WaitForCompactOptions, DB};
use tools::*;

const MAX_COMPACTION_BYTES: u64 = 128 << 10;

fn options(incremental: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_level_zero_file_num_compaction_trigger(4);
    o.set_target_file_size_base(8 << 10);
    o.set_max_compaction_bytes(MAX_COMPACTION_BYTES);
    if incremental {
        o = o.get_options_from_string("compaction_options_universal={incremental=true}").unwrap();
    }
    o
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

/// The input file lists of the LOG's first `compaction_started` event, by level.
fn first_compaction(dir: &Path) -> Vec<(u32, Vec<u64>)> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let line = log.lines().find(|l| l.contains("\"compaction_started\"")).expect("a compaction");
    line.split("\"files_L")
        .skip(1)
        .map(|part| {
            let level: u32 = part[..part.find('"').unwrap()].parse().unwrap();
            let list = &part[part.find('[').unwrap() + 1..part.find(']').unwrap()];
            let files =
                list.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
            (level, files)
        })
        .collect()
}

/// The name of the newest OPTIONS file of `dir`.
fn latest_options_file(dir: &Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("OPTIONS-"))
        .max_by_key(|n| n["OPTIONS-".len()..].parse::<u64>().unwrap_or(0))
        .unwrap()
}

/// The `compaction_options_universal` row of the newest OPTIONS file of `dir`.
fn universal_row(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join(latest_options_file(dir))).unwrap();
    text.lines()
        .find(|l| l.trim_start().starts_with("compaction_options_universal="))
        .unwrap()
        .trim()
        .to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        // Not the LOG: each engine's own LOG then holds only what it did.
        if e.file_name() != "LOCK" && !e.file_name().to_string_lossy().starts_with("LOG") {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn rocksdb_and_shale_pick_the_same_incremental_compaction() {
    let test = "rocksdb_and_shale_pick_the_same_incremental_compaction";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let l6 = {
        let db = DB::open(&options(false), &base).unwrap();
        for t in 0..7u32 {
            for i in 0..1000u32 {
                let k = format!("k{:06}", (i * 7919 + t * 131) % 50_000);
                db.put(&k, format!("{t:04}-{i:04}-{}", "x".repeat(90))).unwrap();
            }
            db.flush().unwrap();
            wait(&db);
        }
        let levels: Vec<i32> = db.live_files().unwrap().iter().map(|f| f.level).collect();
        assert!(
            levels.iter().all(|&l| l == 5 || l == 6) && levels.iter().filter(|&&l| l == 5).count() > 4,
            "{test}: runs in levels 5 and 6: {levels:?}"
        );
        levels.iter().filter(|&&l| l == 6).count()
    };
    let rocks = tmp.path().join("rocksdb");
    let shale_dir = tmp.path().join("shale");
    copy_dir(&base, &rocks);
    copy_dir(&base, &shale_dir);

    let d = format!("--db={}", rocks.display());
    run_tool(
        "db_bench",
        &args(&[
            &d,
            "--use_existing_db=1",
            "--benchmarks=waitforcompaction",
            "--compaction_style=1",
            "--universal_incremental=1",
            "--universal_max_size_amplification_percent=50",
            "--level0_file_num_compaction_trigger=2",
            &format!("--max_compaction_bytes={MAX_COMPACTION_BYTES}"),
            "--target_file_size_base=8192",
            "--compression_type=none",
        ]),
    );
    assert!(universal_row(&rocks).contains("incremental=true"), "{test}: db_bench ran with incremental");
    let rocks_pick = first_compaction(&rocks);

    {
        let mut o = options(true);
        o = o
            .get_options_from_string(
                "level0_file_num_compaction_trigger=2;compaction_options_universal={max_size_amplification_percent=50}",
            )
            .unwrap();
        let db = DB::open(&o, &shale_dir).unwrap();
        wait(&db);
    }
    let shale_pick = first_compaction(&shale_dir);
    assert_eq!(shale_pick, rocks_pick, "{test}: the first compaction's inputs (Shale, RocksDB)");
    assert!(
        shale_pick.iter().any(|(l, f)| *l == 6 && f.len() < l6) && shale_pick.iter().any(|(l, _)| *l == 5),
        "{test}: a part of levels 5 and 6: {shale_pick:?}"
    );
}

#[test]
fn incremental_crosses_the_options_file_both_ways() {
    let test = "incremental_crosses_the_options_file_both_ways";
    if !use_rocksdb_11(test) {
        return;
    }
    // Shale -> RocksDB: ldb reopens with Shale's OPTIONS file and reports the option.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shale");
    {
        let db = DB::open(&options(true), &dir).unwrap();
        for i in 0..500u32 {
            db.put(format!("k{i:05}"), "v").unwrap();
        }
        db.flush().unwrap();
    }
    let before = latest_options_file(&dir);
    let d = format!("--db={}", dir.display());
    run_tool("ldb", &args(&[&d, "--try_load_options", "compact"]));
    // RocksDB writes the options it opened with into a new OPTIONS file.
    assert_ne!(latest_options_file(&dir), before, "{test}: RocksDB wrote its OPTIONS file");
    assert!(
        universal_row(&dir).contains("incremental=true"),
        "{test}: RocksDB read incremental=true from Shale's OPTIONS file"
    );
    // RocksDB -> Shale: a database db_bench wrote with --universal_incremental=1.
    let rocks = tmp.path().join("rocksdb");
    db_bench_fill(&rocks, 2000, &["--compaction_style=1", "--universal_incremental=1"]);
    let (mut loaded, _) =
        Options::load_latest(&rocks, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    loaded.create_if_missing(true);
    let copy = tmp.path().join("copy");
    drop(DB::open(&loaded, &copy).unwrap());
    let line = universal_row(&copy);
    assert!(line.contains("incremental=true"), "{test}: {line}");
    let pairs = ldb_scan(&rocks, None);
    assert!(pairs.len() > 1000, "{test}: ldb saw {} pairs", pairs.len());
    let db = DB::open(&loaded, &rocks).unwrap();
    assert_same_pairs(
        &shale_scan(&db, "default"),
        &pairs,
        &format!("{test}: Shale reads db_bench's database"),
    );
}
