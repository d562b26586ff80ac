//! User-defined timestamps with blob files (issue 33), both ways with RocksDB 11.8.1:
//! - RocksDB -> Shale: `db_bench --user_timestamp_size=8 --enable_blob_files=1` writes a
//!   database whose values are in blob files; Shale's gets and scans at several read
//!   timestamps return what `ldb scan --read_timestamp` prints, before and after Shale's own
//!   compaction (which rewrites the blob files with garbage collection);
//! - Shale -> RocksDB: the database Shale compacted is read back by `ldb scan`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::{Options, ReadOptions, U64TsComparator, DB};
use tools::*;

type Versions = Vec<(Vec<u8>, u64, Vec<u8>)>;

fn ldb_scan_at(dir: &Path, t: u64) -> Versions {
    let a = args(&[&format!("--db={}", dir.display()), "scan", "--hex", &format!("--read_timestamp={t}")]);
    run_tool("ldb", &a)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" ==> ").unwrap();
            let (k, ts) = k.split_once("|timestamp:").unwrap();
            (decode_hex(k), ts.trim().parse().unwrap(), decode_hex(v))
        })
        .collect()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(t.to_le_bytes());
    ro
}

fn shale_scan_at(db: &DB, t: u64) -> Versions {
    let mut it = db.raw_iterator_opt(read_at(t));
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        let ts = u64::from_le_bytes(it.timestamp().unwrap().try_into().unwrap());
        out.push((it.key().unwrap().to_vec(), ts, it.value().unwrap().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

#[test]
fn timestamps_with_blob_files_both_ways() {
    let test = "timestamps_with_blob_files_both_ways";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    db_bench_run(
        dir.path(),
        "fillrandom,overwrite",
        3000,
        &[
            "--user_timestamp_size=8",
            "--key_size=16",
            "--value_size=100",
            "--enable_blob_files=1",
            "--min_blob_size=32",
            "--compression_type=none",
            "--write_buffer_size=65536",
            "--disable_auto_compactions=1",
        ],
    );
    assert!(!files_with_suffix(dir.path(), ".blob").is_empty(), "db_bench wrote blob files");
    let newest = ldb_scan_at(dir.path(), u64::MAX);
    let max_ts = newest.iter().map(|v| v.1).max().unwrap();
    let points = [max_ts / 3, max_ts * 2 / 3, u64::MAX];
    let wants: Vec<(u64, Versions)> = points.iter().map(|&t| (t, ldb_scan_at(dir.path(), t))).collect();
    assert!(wants.iter().all(|(_, w)| !w.is_empty()));
    let mut o = Options::default();
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o.set_enable_blob_files(true);
    o.set_min_blob_size(32);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for (t, want) in &wants {
        assert_eq!(&shale_scan_at(&db, *t), want, "{test}: scan at {t}");
        for (k, _, v) in want.iter().step_by(17) {
            assert_eq!(db.get_opt(k, &read_at(*t)).unwrap().as_ref(), Some(v), "{test}: get at {t}");
        }
    }
    let before: Vec<_> = files_with_suffix(dir.path(), ".blob");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let after: Vec<_> = files_with_suffix(dir.path(), ".blob");
    assert!(!after.is_empty() && after.iter().all(|f| !before.contains(f)), "{before:?} -> {after:?}");
    for (t, want) in &wants {
        assert_eq!(&shale_scan_at(&db, *t), want, "{test}: scan at {t} after compaction");
        for (k, _, v) in want.iter().step_by(17) {
            assert_eq!(db.get_opt(k, &read_at(*t)).unwrap().as_ref(), Some(v), "{test}: get at {t}");
        }
    }
    drop(db);
    for (t, want) in &wants {
        assert_eq!(&ldb_scan_at(dir.path(), *t), want, "{test}: ldb at {t} after Shale's compaction");
    }
}
