//! Atomic flush: families flushed together are installed by one MANIFEST atomic group, so a
//! MANIFEST cut inside the group (a crash in the middle of its write) keeps none of them,
//! and a whole group keeps all of them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use std::path::{Path, PathBuf};

use shale::{FlushOptions, Options, WriteOptions};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_atomic_flush(true);
    o
}

fn manifest(dir: &Path) -> PathBuf {
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(current.trim())
}

/// Start offsets of the MANIFEST's log records (all within its first 32 KiB block here).
fn record_offsets(data: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 7 <= data.len().min(32768) {
        let len = u16::from_le_bytes([data[off + 4], data[off + 5]]) as usize;
        if len == 0 && data[off + 6] == 0 {
            break;
        }
        out.push(off);
        off += 7 + len;
    }
    out
}

/// Writes k1 to cf1 and k2 to cf2 without the WAL and flushes both together.
fn write_and_flush(path: &Path) {
    let db = open_cf_all(&opts(), path, ["cf1", "cf2"]).unwrap();
    let cf1 = db.cf_handle("cf1").unwrap();
    let cf2 = db.cf_handle("cf2").unwrap();
    let mut wo = WriteOptions::default();
    wo.disable_wal(true);
    db.put_cf_opt(cf1, b"k1", b"v1", &wo).unwrap();
    db.put_cf_opt(cf2, b"k2", b"v2", &wo).unwrap();
    let mut fo = FlushOptions::default();
    fo.set_wait(true);
    db.flush_cfs_opt(&[cf1, cf2], &fo).unwrap();
    assert_eq!(db.live_files().unwrap().len(), 2);
}

fn read_both(path: &Path) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let db = open_cf_all(&opts(), path, ["cf1", "cf2"]).unwrap();
    let a = db.get_cf(db.cf_handle("cf1").unwrap(), b"k1").unwrap();
    let b = db.get_cf(db.cf_handle("cf2").unwrap(), b"k2").unwrap();
    (a, b)
}

#[test]
fn a_whole_group_keeps_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    write_and_flush(&path);
    assert_eq!(read_both(&path), (Some(b"v1".to_vec()), Some(b"v2".to_vec())));
}

#[test]
fn a_group_cut_short_keeps_no_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    write_and_flush(&path);
    let m = manifest(&path);
    let data = std::fs::read(&m).unwrap();
    let offsets = record_offsets(&data);
    // The group is the last two records: keep the first of them only.
    let cut = offsets[offsets.len() - 1];
    let first_of_group = &data[offsets[offsets.len() - 2]..cut];
    // Its edit carries the InAtomicGroup tag (300 = varint 0xac 0x02) with one record after.
    assert!(first_of_group.windows(3).any(|w| w == [0xac, 0x02, 0x01]), "{first_of_group:?}");
    std::fs::write(&m, &data[..cut]).unwrap();
    assert_eq!(read_both(&path), (None, None));
}

#[test]
fn a_full_memtable_switches_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = opts();
    o.set_write_buffer_size(64 << 10);
    let db = open_cf_all(&o, &path, ["cf1", "cf2"]).unwrap();
    let cf1 = db.cf_handle("cf1").unwrap();
    let cf2 = db.cf_handle("cf2").unwrap();
    db.put_cf(cf2, b"small", b"x").unwrap();
    let v = vec![7u8; 1024];
    for i in 0..200 {
        db.put_cf(cf1, format!("k{i:04}"), &v).unwrap();
    }
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    // cf2's one small write was flushed along with cf1's full memtable.
    assert!(db.live_files().unwrap().iter().any(|f| f.column_family_name == "cf2"));
}
