//! `allow_ingest_behind` (and `cf_allow_ingest_behind`) with `IngestExternalFileOptions::
//! set_ingest_behind` act as RocksDB 11.8.1's (issue 33): universal compaction keeps the last
//! level free, its compactions keep tombstones, and files ingested behind go to the last level
//! with sequence number 0, under every write (a key deleted before still reads as deleted).
//! RocksDB 11.8.1's `ldb scan` reads the result as Shale does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use crate::tools::*;
use shale::{DBCompactionStyle, ErrorKind, IngestExternalFileOptions, Options, SstFileWriter, DB};

fn write_sst(path: &Path, keys: impl IntoIterator<Item = u32>, tag: &str) -> PathBuf {
    let o = Options::default();
    let mut w = SstFileWriter::create(&o);
    w.open(path).unwrap();
    for k in keys {
        w.put(format!("key{k:05}"), format!("{tag}{k}")).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

fn get(db: &DB, k: u32) -> Option<String> {
    db.get(format!("key{k:05}")).unwrap().map(|v| String::from_utf8(v).unwrap())
}

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().iter().map(|f| f.level).collect();
    l.sort();
    l
}

fn behind() -> IngestExternalFileOptions {
    let mut io = IngestExternalFileOptions::default();
    io.set_ingest_behind(true);
    io
}

fn universal(allow: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_allow_ingest_behind(allow);
    o
}

#[test]
fn files_ingested_behind_sit_under_every_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&universal(true), &dir).unwrap();
    for k in 0..50 {
        db.put(format!("key{k:05}"), format!("new{k}")).unwrap();
    }
    db.delete("key00010").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // The universal compaction of everything ends one level above the last.
    assert_eq!(levels(&db), vec![5]);
    let old = write_sst(&tmp.path().join("old.sst"), 0..100, "old");
    db.ingest_external_file_opts(&behind(), vec![&old]).unwrap();
    assert_eq!(levels(&db), vec![5, 6]);
    assert_eq!(get(&db, 3).as_deref(), Some("new3"));
    assert_eq!(get(&db, 70).as_deref(), Some("old70"));
    // The tombstone survived the compaction and hides the ingested value.
    assert_eq!(get(&db, 10), None);
    // A second file ingested behind must fit beside the last level's.
    let again = write_sst(&tmp.path().join("again.sst"), 90..120, "again");
    let e = db.ingest_external_file_opts(&behind(), vec![&again]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Can't ingest_behind file as it doesn't fit at the last level!"), "{e}");
    let after = write_sst(&tmp.path().join("after.sst"), 200..210, "after");
    db.ingest_external_file_opts(&behind(), vec![&after]).unwrap();
    assert_eq!(get(&db, 205).as_deref(), Some("after205"));
    // Compactions leave the last level alone.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels(&db), vec![5, 6, 6]);
    assert_eq!(get(&db, 10), None);
    let pairs = shale_scan_default(&db);
    assert_eq!(pairs.len(), 49 + 50 + 10);
    drop(db);
    let text = latest_options_text(&dir);
    assert!(text.contains("allow_ingest_behind=true"), "{text}");
    // Reopened with the OPTIONS file's own options, the reservation holds.
    let db = DB::open(&universal(true), &dir).unwrap();
    assert_eq!(get(&db, 70).as_deref(), Some("old70"));
    drop(db);
    if use_rocksdb_11("files_ingested_behind_sit_under_every_write") {
        assert_same_pairs(&ldb_scan(&dir, None), &pairs, "ldb reads the files ingested behind");
    }
}

#[test]
fn ingest_behind_needs_the_option_and_apart_files() {
    let tmp = tempfile::tempdir().unwrap();
    let db = DB::open(&universal(false), tmp.path().join("db")).unwrap();
    let f = write_sst(&tmp.path().join("f.sst"), 0..10, "f");
    let e = db.ingest_external_file_opts(&behind(), vec![&f]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("with cf_allow_ingest_behind=false"), "{e}");
    drop(db);

    // The family option alone is enough; universal compaction gets at least 3 levels.
    let mut o = universal(false);
    o.set_num_levels(2);
    o.set_cf_allow_ingest_behind(true);
    let dir = tmp.path().join("cf");
    let db = DB::open(&o, &dir).unwrap();
    let a = write_sst(&tmp.path().join("a.sst"), 0..10, "a");
    let b = write_sst(&tmp.path().join("b.sst"), 5..15, "b");
    let e = db.ingest_external_file_opts(&behind(), vec![&a, &b]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e
        .to_string()
        .contains("Files with overlapping ranges cannot be ingested with ingestion behind mode."));
    db.ingest_external_file_opts(&behind(), vec![&a]).unwrap();
    assert_eq!(levels(&db), vec![2]);
    drop(db);
    let text = latest_options_text(&dir);
    assert!(text.contains("cf_allow_ingest_behind=true") && text.contains("num_levels=3"), "{text}");

    // A file at sequence number 0 above the last level (a level-style bottommost
    // compaction before the option was set) refuses ingestion behind.
    let mut lo = Options::default();
    lo.create_if_missing(true);
    lo.set_num_levels(3);
    let dir = tmp.path().join("level");
    let db = DB::open(&lo, &dir).unwrap();
    db.put("key00500", "x").unwrap();
    db.flush().unwrap();
    let mut co = shale::CompactOptions::default();
    co.set_bottommost_level_compaction(shale::BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    drop(db);
    lo.set_allow_ingest_behind(true);
    lo.set_num_levels(4);
    let db = DB::open(&lo, &dir).unwrap();
    assert_eq!(levels(&db), vec![2]);
    let e = db.ingest_external_file_opts(&behind(), vec![&a]).unwrap_err();
    assert!(e.to_string().contains("there are files with 0 seqno in database at upper levels!"), "{e}");
}
