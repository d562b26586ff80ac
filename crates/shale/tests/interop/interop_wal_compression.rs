//! WAL compression (`set_wal_compression_type(Zstd)`, RocksDB's `wal_compression=kZSTD`)
//! both ways with RocksDB 11.8.1's tools (skipped with a printed reason when they are absent):
//! - a WAL Shale writes compressed (small records and records over several 32 KiB blocks) is
//!   printed by `ldb dump_wal` record for record, read by `ldb scan`, and replayed by Shale;
//! - a WAL `db_bench --wal_compression=zstd` writes (starting with a SetCompressionType
//!   record) is replayed by Shale to what `ldb scan` prints.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{DBCompressionType, Options, DB};
use tools::*;

fn value(i: u32) -> Vec<u8> {
    // Every 97th value is larger than a log block, so its record is fragmented.
    let len = if i.is_multiple_of(97) { 70_000 } else { 100 };
    format!("value {i} ").repeat(len / 10 + 1).into_bytes()
}

#[test]
fn shale_compressed_wal_read_by_rocksdb_11_and_shale() {
    let test = "Shale's compressed WAL read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_wal_compression_type(DBCompressionType::Zstd);
    let mut model: Pairs = Vec::new();
    let raw_bytes: usize;
    {
        let db = DB::open(&opts, &dir).unwrap();
        for i in 0..1000u32 {
            let k = format!("key{i:05}").into_bytes();
            db.put(&k, value(i)).unwrap();
            model.push((k, value(i)));
        }
        raw_bytes = model.iter().map(|(k, v)| k.len() + v.len()).sum();
    }
    assert!(sst_files(&dir).is_empty(), "{test}: the data should be in the WAL only");
    let wals = wal_files(&dir);
    assert_eq!(wals.len(), 1, "{test}: {wals:?}");
    let wal = std::fs::read(&wals[0]).unwrap();
    assert_eq!(wal[6], 9, "{test}: the first record is SetCompressionType");
    assert!(wal.len() * 5 < raw_bytes, "{test}: {} WAL bytes for {raw_bytes} bytes of data", wal.len());

    // ldb prints every batch of the compressed log.
    let out = run_tool("ldb", &args(&["dump_wal", &format!("--walfile={}", wals[0].display()), "--header"]));
    let batches = out.lines().filter(|l| l.contains("PUT(0)")).count();
    assert_eq!(
        batches,
        1000,
        "{test}: ldb dump_wal printed {batches} puts:\n{}",
        &out[..out.len().min(2000)]
    );
    assert_same_pairs(&ldb_scan(&dir, None), &model, &format!("{test}: ldb scan"));

    // Shale replays its own compressed WAL.
    let db = DB::open(&opts, &dir).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &model, &format!("{test}: Shale reopen"));
}

#[test]
fn rocksdb_11_compressed_wal_read_by_shale() {
    let test = "RocksDB 11.8.1's compressed WAL read by Shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // db_bench's 64 MiB write buffer keeps everything (30 MB) in the WAL; large values make
    // fragmented records.
    db_bench_run(
        &dir,
        "fillrandom",
        1500,
        &["--wal_compression=zstd", "--value_size=20000", "--compression_ratio=0.2"],
    );
    assert!(sst_files(&dir).is_empty(), "{test}: expected no tables yet");
    let wals = wal_files(&dir);
    assert!(!wals.is_empty());
    for w in &wals {
        let bytes = std::fs::read(w).unwrap();
        if !bytes.is_empty() {
            assert_eq!(bytes[6], 9, "{test}: {} starts with SetCompressionType", w.display());
        }
    }
    let want = ldb_scan(&dir, None);
    assert!(want.len() > 500, "{test}: ldb saw {} keys", want.len());
    let mut opts = Options::default();
    opts.set_wal_compression_type(DBCompressionType::Zstd);
    let db = DB::open(&opts, &dir).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{test}: Shale"));
    drop(db);
    // Without WAL compression Shale reads it just the same (the record says how).
    let db = DB::open(&Options::default(), &dir).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{test}: Shale without the option"));
}
