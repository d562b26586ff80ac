//! `manual_wal_flush` (RocksDB's): a write without sync leaves its WAL record in the WAL
//! writer's buffer, so the file on disk does not grow until `flush_wal`; `flush_wal(true)`
//! also syncs every WAL still alive; a sync write writes its record out and syncs. Without
//! the option every write reaches the file at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale::{Options, WriteOptions, DB};

fn wal(dir: &Path) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v.pop().expect("a WAL")
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

fn open(dir: &Path, manual: bool) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_manual_wal_flush(manual);
    DB::open(&o, dir).unwrap()
}

#[test]
fn records_wait_in_the_buffer_until_flush_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = open(&dir, true);
    let w = wal(&dir);
    let before = size(&w);
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    assert_eq!(size(&w), before, "a write reached the WAL file without flush_wal");
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    db.flush_wal(false).unwrap();
    let flushed = size(&w);
    assert!(flushed > before);
    db.put(b"c", b"3").unwrap();
    assert_eq!(size(&w), flushed);
    db.flush_wal(true).unwrap();
    assert!(size(&w) > flushed);
    // A sync write writes its record out (and syncs) at once.
    let synced = size(&w);
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.put_opt(b"d", b"4", &wo).unwrap();
    assert!(size(&w) > synced);
    drop(db);
    let options = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("OPTIONS-"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>();
    assert!(options.iter().any(|t| t.contains("manual_wal_flush=true")), "OPTIONS does not record it");
    let db = open(&dir, true);
    for (k, v) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")] {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_bytes()), "{k}");
    }
}

#[test]
fn without_the_option_a_write_reaches_the_file_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = open(&dir, false);
    let w = wal(&dir);
    let before = size(&w);
    db.put(b"a", b"1").unwrap();
    assert!(size(&w) > before);
}
