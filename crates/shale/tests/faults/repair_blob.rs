//! `DB::repair` of a database holding blob files (integrated BlobDB) whose MANIFEST is lost:
//! the rebuilt MANIFEST adds the blob files back (RocksDB's repair leaves them out), so every
//! key reads back its value, through Shale and RocksDB 11.8.1's `ldb scan`; a damaged blob
//! file is moved to `lost/` and the values it held read as Corruption naming it, never as a
//! wrong value.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::{ErrorKind, Options, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(128 << 10);
    o.set_target_file_size_base(128 << 10);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(256);
    o.set_blob_file_size(64 << 10);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(0.5);
    o
}

/// A database with blob files from flushes and GC compactions, small values inline, and
/// some writes left in the WAL; returns what it holds.
fn build(dir: &Path) -> Pairs {
    let db = DB::open(&opts(), dir).expect("open");
    for round in 0..3u32 {
        for i in (round * 100)..(600 + round * 50) {
            let v = if i % 3 == 0 { format!("s{round}-{i}") } else { format!("r{round}-{i}-").repeat(40) };
            db.put(format!("key{i:05}"), v).expect("put");
        }
        db.flush().expect("flush");
        if round == 1 {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
    }
    db.delete("key00300").expect("delete");
    db.put("key00301", "x".repeat(500)).expect("put"); // in the WAL only
    let want = shale_scan_default(&db);
    assert!(files_with_suffix(dir, ".blob").len() >= 3);
    want
}

fn lose_manifest(dir: &Path) {
    for m in files_with_suffix(dir, "").into_iter().filter(|p| name(p).starts_with("MANIFEST-")) {
        std::fs::remove_file(m).expect("remove MANIFEST");
    }
    std::fs::remove_file(dir.join("CURRENT")).expect("remove CURRENT");
}

fn name(p: &Path) -> String {
    p.file_name().expect("name").to_string_lossy().into_owned()
}

#[test]
fn repair_adds_blob_files_back() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let want = build(&dir);
    let blobs_before = files_with_suffix(&dir, ".blob");
    lose_manifest(&dir);
    DB::repair(&opts(), &dir).expect("repair");
    for b in &blobs_before {
        assert!(b.exists(), "{b:?} kept");
    }
    {
        let db = DB::open(&opts(), &dir).expect("open repaired");
        assert_same_pairs(&shale_scan_default(&db), &want, "Shale after repair");
        assert!(db.property_int_value("rocksdb.num-blob-files").expect("prop").expect("value") >= 3);
        // Compactions with GC keep working over the repaired blob files.
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        assert_same_pairs(&shale_scan_default(&db), &want, "Shale after repair and compaction");
    }
    if use_rocksdb_11("repair of a BlobDB database, read by ldb 11.8.1") {
        assert_same_pairs(&ldb_scan(&dir, None), &want, "RocksDB 11.8.1 ldb scan after repair");
    }
}

#[test]
fn damaged_blob_file_goes_to_lost_and_its_values_read_as_corruption() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let want = build(&dir);
    lose_manifest(&dir);
    // Damage one blob record of the newest blob file, which the tables still reference.
    let victim: PathBuf = files_with_suffix(&dir, ".blob").pop().expect("a blob file");
    let mut bytes = std::fs::read(&victim).expect("read");
    let at = 30 + 32 + 20; // in the first record's key or value
    bytes[at] ^= 0x01;
    std::fs::write(&victim, &bytes).expect("write");
    DB::repair(&opts(), &dir).expect("repair");
    assert!(!victim.exists() && dir.join("lost").join(name(&victim)).exists(), "archived to lost/");
    let db = DB::open(&opts(), &dir).expect("open repaired");
    let (mut ok, mut corrupt) = (0, 0);
    for (k, v) in &want {
        match db.get(k) {
            Ok(Some(got)) => {
                assert_eq!(&got, v, "key {}", String::from_utf8_lossy(k));
                ok += 1;
            }
            Ok(None) => panic!("key {} lost without an error", String::from_utf8_lossy(k)),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                assert!(e.to_string().contains(&name(&victim)), "{e}");
                corrupt += 1;
            }
        }
    }
    assert!(ok > 0 && corrupt > 0, "{ok} read, {corrupt} corrupt");
}
