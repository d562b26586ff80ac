//! Block-based table options built by helper `tbl` (issue 33), against RocksDB 11.8.1:
//! - `uniform_cv_threshold`: Shale's index blocks over evenly spread keys carry 11.8.1's
//!   uniform-keys footer flag; 11.8.1's `sst_dump --command=verify` and `ldb scan` read the
//!   tables, and `ldb --try_load_options` loads the OPTIONS file naming it (with
//!   `prepopulate_block_cache` and `detect_filter_construct_corruption`).
//! - 11.8.1's db_bench writes tables with `--uniform_cv_threshold` (its index blocks then
//!   flagged): Shale reads every key of them.
//!
//! Skipped (with the reason) where 11.8.1's tools cannot run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{IteratorMode, Options, DB};

#[test]
fn uniform_index_blocks_are_read_by_rocksdb_11() {
    if !tools::use_rocksdb_11("uniform_index_blocks_are_read_by_rocksdb_11") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let o = o
        .get_options_from_string(
            "block_based_table_factory={uniform_cv_threshold=0.5;prepopulate_block_cache=kFlushOnly;\
             detect_filter_construct_corruption=true;filter_policy=bloomfilter:10:false;}",
        )
        .unwrap();
    let db = DB::open(&o, &dir).unwrap();
    for (round, table) in
        ["{index_type=kBinarySearch;}", "{index_type=kTwoLevelIndexSearch;metadata_block_size=256;}"]
            .iter()
            .enumerate()
    {
        db.set_options(&[("block_based_table_factory", table)]).unwrap();
        for i in 0..4000u64 {
            let mut k = vec![round as u8];
            k.extend_from_slice(&(i * 4096).to_be_bytes());
            db.put(&k, format!("value {i}")).unwrap();
        }
        db.flush().unwrap();
    }
    let ours = tools::shale_scan_default(&db);
    drop(db);
    assert_eq!(ours.len(), 8000);
    for sst in tools::sst_files(&dir) {
        let (ok, out, err) = tools::try_tool(
            "sst_dump",
            &tools::args(&[&format!("--file={}", sst.display()), "--command=verify"]),
        );
        assert!(
            ok && !out.contains("Corruption") && !err.contains("Corruption"),
            "{}: {out}{err}",
            sst.display()
        );
    }
    tools::assert_same_pairs(&tools::ldb_scan(&dir, None), &ours, "ldb scan");
    let text = tools::latest_options_text(&dir);
    for want in [
        "uniform_cv_threshold=0.500000",
        "prepopulate_block_cache=kFlushOnly",
        "detect_filter_construct_corruption=true",
    ] {
        assert!(text.contains(&format!("  {want}\n")), "{want} missing:\n{text}");
    }
    let out = tools::run_tool(
        "ldb",
        &tools::args(&[
            &format!("--db={}", dir.display()),
            "--try_load_options",
            "--hex",
            "scan",
            "--max_keys=3",
        ]),
    );
    assert_eq!(out.lines().filter(|l| l.contains("==>") || l.contains(" : ")).count(), 3, "{out}");
}

#[test]
fn rocksdb_11_uniform_index_blocks_are_read_by_shale() {
    if !tools::use_rocksdb_11("rocksdb_11_uniform_index_blocks_are_read_by_shale") {
        return;
    }
    let rocks = tempfile::tempdir().unwrap();
    tools::db_bench_run(
        rocks.path(),
        "fillseq,flush",
        5000,
        &[
            // A threshold no spread reaches: every index block is flagged (db_bench's
            // shortened separators are far from even, and 0.5 flags none of them).
            "--uniform_cv_threshold=1000",
            "--index_block_search_type=auto_search",
            "--compression_type=none",
            "--disable_auto_compactions=1",
        ],
    );
    let db = DB::open_for_read_only(&Options::default(), rocks.path(), false).unwrap();
    let pairs: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(pairs.len(), 5000);
    // Point reads go through the flagged index blocks too.
    let first = db.iterator(IteratorMode::Start).next().unwrap().unwrap();
    assert_eq!(db.get(&first.0).unwrap().as_deref(), Some(&first.1[..]));
    drop(db);
    // Searched by interpolation (kAuto on the flagged blocks, kInterpolation on all), every
    // key RocksDB wrote is found by a point read and a seek.
    for search in ["kAuto", "kInterpolation"] {
        let o = Options::default()
            .get_options_from_string(format!(
                "block_based_table_factory={{index_block_search_type={search}}}"
            ))
            .unwrap();
        let db = DB::open_for_read_only(&o, rocks.path(), false).unwrap();
        let mut it = db.raw_iterator();
        for (k, v) in &pairs {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]), "{search}");
            it.seek(k);
            assert_eq!(it.key(), Some(&k[..]), "{search}");
        }
    }
}
