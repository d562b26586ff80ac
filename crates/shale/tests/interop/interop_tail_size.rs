//! Every table Shale adds to the MANIFEST carries its tail size, as RocksDB 8+ records it
//! (`FileMetaData::CalculateTailSize`: file size minus the table's
//! `rocksdb.tail.start.offset`), so RocksDB 11.8.1 prefetches exactly the tail when it opens
//! the table instead of guessing ("Tail prefetch size ... is calculated based on
//! heuristics" in its LOG). Tables from a flush, a compaction and an ingestion are checked
//! with 11.8.1's `manifest_dump --verbose` against its `sst_dump --show_properties`; each
//! fails on a build that records no tail size.
//! Skipped (with the reason) where 11.8.1's tools cannot run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{Options, SstFileWriter, DB};

/// Table number -> tail size, from the MANIFEST's last record of each live file.
fn manifest_tail_sizes(dir: &Path) -> BTreeMap<u64, u64> {
    let out = tools::run_tool(
        "ldb",
        &tools::args(&[&format!("--db={}", dir.display()), "manifest_dump", "--verbose"]),
    );
    let mut m = BTreeMap::new();
    for line in out.lines() {
        let Some(t) = line.find(" tail size: ") else { continue };
        let tail: u64 = line[t + " tail size: ".len()..].split_whitespace().next().unwrap().parse().unwrap();
        // "AddFile: <level> <number> <size> '<smallest>' ...": the second number.
        let number = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        m.insert(number, tail);
    }
    m
}

/// Where a table's tail starts: its data blocks come first, so the end of the last one is
/// their total size ("data block size" in 11.8.1's sst_dump; it does not print
/// `rocksdb.tail.start.offset` itself).
fn tail_start(sst: &Path) -> u64 {
    let out = tools::run_tool(
        "sst_dump",
        &tools::args(&[&format!("--file={}", sst.display()), "--show_properties"]),
    );
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("data block size:"))
        .unwrap_or_else(|| panic!("{out}"));
    line.rsplit(' ').next().unwrap().trim().parse().unwrap()
}

#[test]
fn tables_shale_writes_record_their_tail_size() {
    if !tools::use_rocksdb_11("tables_shale_writes_record_their_tail_size") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    {
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..2 {
            for i in 0..2000 {
                db.put(format!("key{i:06}"), format!("value{round}-{i}")).unwrap();
            }
            db.flush().unwrap();
        }
        // Two tables, rewritten by a compaction into one.
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        // A flush after it, and an ingested table.
        db.put("zz-flushed", "v").unwrap();
        db.flush().unwrap();
        let ext = tmp.path().join("ext.sst");
        let mut w = SstFileWriter::create(&o);
        w.open(&ext).unwrap();
        for i in 0..100 {
            w.put(format!("zzz{i:03}"), "x").unwrap();
        }
        w.finish().unwrap();
        db.ingest_external_file(vec![&ext]).unwrap();
    }
    let tails = manifest_tail_sizes(&dir);
    let ssts = tools::sst_files(&dir);
    assert_eq!(ssts.len(), 3, "{ssts:?}");
    for sst in &ssts {
        let number: u64 = sst.file_stem().unwrap().to_string_lossy().parse().unwrap();
        let size = std::fs::metadata(sst).unwrap().len();
        let want = size - tail_start(sst);
        assert!(want > 0 && want < size);
        assert_eq!(tails.get(&number), Some(&want), "table {number}: {tails:?}");
    }
}
