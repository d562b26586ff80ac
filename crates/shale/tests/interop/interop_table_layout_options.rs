//! The block-based table options that change a table's layout, against RocksDB 11.8.1:
//! - `block_align`: 11.8.1's db_bench (`--block_align=1`) and Shale flush the same keys into
//!   tables whose index entries (keys and block handles, `sst_dump --command=raw`) are
//!   identical: the same aligned offsets, the same cuts.
//! - every layout option set through `set_options(block_based_table_factory={...})`: each
//!   table written passes 11.8.1's `sst_dump --command=verify`, `ldb scan` reads what Shale
//!   wrote, and 11.8.1's `ldb --try_load_options` loads the OPTIONS file naming them.
//!
//! Skipped (with the reason) where 11.8.1's tools cannot run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::{DBCompressionType, IteratorMode, Options, DB};

/// A key and its value, as the iterator returns them.
type KeyValue = (Box<[u8]>, Box<[u8]>);

/// The index entries (`  HEX <key>: <handle> offset .. size ..`) of table `sst`.
fn index_entries(sst: &Path) -> Vec<String> {
    tools::run_tool("sst_dump", &tools::args(&[&format!("--file={}", sst.display()), "--command=raw"]));
    let dump = sst.with_extension("").with_extension("");
    let dump = dump.with_file_name(format!("{}_dump.txt", dump.file_name().unwrap().to_string_lossy()));
    let text = String::from_utf8_lossy(&std::fs::read(&dump).unwrap()).into_owned();
    std::fs::remove_file(&dump).unwrap();
    let start = text.find("Index Details:").unwrap_or_else(|| panic!("no index in {}", dump.display()));
    let entries: Vec<String> = text[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.ends_with("Details:") && !l.starts_with("Data Block"))
        .filter(|l| l.trim_start().starts_with("HEX"))
        .map(str::to_string)
        .collect();
    assert!(entries.len() > 10, "too few index entries in {}", dump.display());
    entries
}

#[test]
fn block_align_matches_rocksdb_11() {
    if !tools::use_rocksdb_11("block_align_matches_rocksdb_11") {
        return;
    }
    for block_size in ["4096", "2048"] {
        let rocks = tempfile::tempdir().unwrap();
        tools::db_bench_run(
            rocks.path(),
            "fillseq,flush",
            3000,
            &[
                "--block_align=1",
                "--index_shortening_mode=1",
                &format!("--block_size={block_size}"),
                "--compression_type=none",
                "--bloom_bits=-1",
                "--disable_auto_compactions=1",
            ],
        );
        let pairs: Vec<KeyValue> = {
            let db = DB::open_for_read_only(&Options::default(), rocks.path(), false).unwrap();
            db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect()
        };
        assert_eq!(pairs.len(), 3000);

        let ours = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        o.set_compression_type(DBCompressionType::None);
        let db = DB::open(&o, ours.path()).unwrap();
        db.set_options(&[(
            "block_based_table_factory",
            &format!("{{block_align=true;block_size={block_size};}}"),
        )])
        .unwrap();
        for (k, v) in &pairs {
            db.put(k, v).unwrap();
        }
        db.flush().unwrap();
        drop(db);

        let (r, s) = (tools::sst_files(rocks.path()), tools::sst_files(ours.path()));
        assert_eq!((r.len(), s.len()), (1, 1), "{r:?} {s:?}");
        let (want, got) = (index_entries(&r[0]), index_entries(&s[0]));
        assert_eq!(got, want, "block_size {block_size}");
    }
}

/// The newest table of `dir` passes 11.8.1's verification.
fn verify_newest(dir: &Path, before: &[PathBuf], what: &str) {
    let new: Vec<PathBuf> = tools::sst_files(dir).into_iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "{what}: {new:?}");
    let (ok, out, err) = tools::try_tool(
        "sst_dump",
        &tools::args(&[&format!("--file={}", new[0].display()), "--command=verify"]),
    );
    assert!(ok && !out.contains("Corruption") && !err.contains("Corruption"), "{what}: {out}{err}");
}

#[test]
fn layout_options_are_read_by_rocksdb_11() {
    if !tools::use_rocksdb_11("layout_options_are_read_by_rocksdb_11") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, &dir).unwrap();
    let cases: &[(&str, &str)] = &[
        ("kSnappyCompression", "{use_delta_encoding=false;}"),
        ("kSnappyCompression", "{use_delta_encoding=true;enable_index_compression=false;}"),
        ("kZSTD", "{enable_index_compression=true;verify_compression=true;block_size_deviation=0;}"),
        ("kLZ4Compression", "{block_size_deviation=50;index_type=kTwoLevelIndexSearch;metadata_block_size=512;}"),
        (
            "kNoCompression",
            "{index_type=kBinarySearch;super_block_alignment_size=32768;super_block_alignment_space_overhead_ratio=4;}",
        ),
        ("kNoCompression", "{block_align=true;format_version=5;}"),
        ("kNoCompression", "{block_align=false;max_auto_readahead_size=65536;initial_auto_readahead_size=4096;num_file_reads_for_auto_readahead=1;}"),
    ];
    for (round, (codec, table)) in cases.iter().enumerate() {
        db.set_options(&[("compression", codec), ("block_based_table_factory", table)]).unwrap();
        let before = tools::sst_files(&dir);
        for i in 0..3000 {
            db.put(format!("key-{round}-{i:06}"), format!("value {i} ").repeat(1 + i % 11)).unwrap();
        }
        db.flush().unwrap();
        verify_newest(&dir, &before, table);
    }
    let ours = tools::shale_scan_default(&db);
    drop(db);
    assert_eq!(ours.len(), 3000 * cases.len());
    tools::assert_same_pairs(&tools::ldb_scan(&dir, None), &ours, "ldb scan");
    // 11.8.1 loads the OPTIONS file naming every option set above, strictly.
    let text = tools::latest_options_text(&dir);
    for want in [
        "block_size_deviation=50",
        "use_delta_encoding=true",
        "verify_compression=true",
        "block_align=false",
        "super_block_alignment_size=32768",
        "super_block_alignment_space_overhead_ratio=4",
        "max_auto_readahead_size=65536",
        "initial_auto_readahead_size=4096",
        "num_file_reads_for_auto_readahead=1",
    ] {
        assert!(text.contains(&format!("  {want}\n")), "{want} missing:\n{text}");
    }
    let out = tools::run_tool(
        "ldb",
        &tools::args(&[&format!("--db={}", dir.display()), "--try_load_options", "scan", "--max_keys=3"]),
    );
    assert_eq!(out.lines().filter(|l| l.contains("==>") || l.contains(" : ")).count(), 3, "{out}");
}
