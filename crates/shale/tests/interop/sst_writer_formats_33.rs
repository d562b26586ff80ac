//! `SstFileWriter` writes in the format of the options' table factory, as RocksDB 11.8.1's
//! (issue 33):
//! - PlainTable: a plain table (its magic number) with the external-file properties, which
//!   Shale ingests into a PlainTable family, and RocksDB 11.8.1's `sst_dump` scans and its
//!   `ldb ingest_extern_sst` ingests into the same database;
//! - CuckooTable: a cuckoo table without them (RocksDB's cuckoo builder runs no property
//!   collector), which RocksDB's `sst_dump` scans and ingestion refuses, in Shale as in
//!   RocksDB ("External file version not found").
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{
    CuckooTableOptions, ErrorKind, KeyEncodingType, Options, PlainTableFactoryOptions, SliceTransform,
    SstFileWriter, DB,
};
use tools::*;

const LEGACY_PLAIN_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
const CUCKOO_MAGIC: u64 = 0x9267_89d0_c5f1_7873;

fn magic(f: &Path) -> u64 {
    let b = std::fs::read(f).unwrap();
    u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap())
}

fn sst_dump_entries(f: &Path) -> usize {
    let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=scan"]));
    out.lines().filter(|l| l.contains(" => ")).count()
}

fn plain_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(8));
    o.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 3,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    o
}

#[test]
fn sst_file_writer_writes_plain_tables_that_ingest() {
    let test = "sst_file_writer_writes_plain_tables_that_ingest";
    let dir = tempfile::tempdir().unwrap();
    let o = plain_options();
    let file = dir.path().join("plain.sst");
    let mut keys: Vec<String> = (0..500u32).map(|i| format!("prefix{:02}-{i:05}", i % 7)).collect();
    keys.sort();
    let mut w = SstFileWriter::create(&o);
    w.open(&file).unwrap();
    for k in &keys {
        w.put(k, format!("v-{k}")).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(magic(&file), LEGACY_PLAIN_MAGIC);
    let db_path = dir.path().join("db");
    let db = DB::open(&o, &db_path).unwrap();
    db.put(b"other000-x", b"y").unwrap();
    db.ingest_external_file(vec![&file]).unwrap();
    for k in keys.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap(), Some(format!("v-{k}").into_bytes()), "{k}");
    }
    assert_eq!(shale_scan(&db, "default").len(), 501);
    drop(db);
    if !use_rocksdb_11(test) {
        return;
    }
    assert_eq!(sst_dump_entries(&file), 500);
    // RocksDB 11.8.1 ingests a second file Shale wrote into the database (with the OPTIONS
    // file Shale wrote: the PlainTable factory and the prefix extractor).
    let second = dir.path().join("second.sst");
    let mut w = SstFileWriter::create(&o);
    w.open(&second).unwrap();
    for i in 0..50u32 {
        w.put(format!("zzzzzzzz-{i:03}"), format!("late{i}")).unwrap();
    }
    w.finish().unwrap();
    let (ok, out, err) = try_tool(
        "ldb",
        &args(&[
            &format!("--db={}", db_path.display()),
            "--try_load_options",
            "ingest_extern_sst",
            &second.display().to_string(),
            "--allow_global_seqno",
        ]),
    );
    assert!(ok, "ldb ingest_extern_sst: {out}{err}");
    let scanned = ldb_scan(&db_path, None);
    assert_eq!(scanned.len(), 551, "{test}");
    let db = DB::open(&o, &db_path).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &scanned, test);
}

#[test]
fn sst_file_writer_writes_cuckoo_tables_without_the_external_properties() {
    let test = "sst_file_writer_writes_cuckoo_tables_without_the_external_properties";
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_cuckoo_table_factory(&CuckooTableOptions::default());
    let file = dir.path().join("cuckoo.sst");
    let mut w = SstFileWriter::create(&o);
    w.open(&file).unwrap();
    for i in 0..300u32 {
        w.put(format!("key{i:05}"), format!("val{i:05}")).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(magic(&file), CUCKOO_MAGIC);
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    let e = db.ingest_external_file(vec![&file]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("External file version not found"), "{e}");
    if !use_rocksdb_11(test) {
        return;
    }
    assert_eq!(sst_dump_entries(&file), 300);
}
