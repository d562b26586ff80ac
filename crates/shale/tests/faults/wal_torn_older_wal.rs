//! Recovery with a damaged older WAL followed by newer ones (what a power loss can leave
//! now that WALs are closed without a sync), as RocksDB 11.8.1's RecoverLogFiles treats it:
//! point-in-time recovery stops at the damage and drops the later WALs, unless a later WAL
//! begins exactly at the next sequence number; a family whose tables are newer than the
//! damaged WAL fails the open ("Column family inconsistency"); SkipAnyCorruptedRecord skips
//! the damaged record; the other two modes fail with Corruption. With `paranoid_checks` off
//! every mode skips the damaged record and replays the rest (RocksDB's InitializeLogReader
//! then gives the reader no status to report into).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale::{DBRecoveryMode, ErrorKind, Options, DB};

fn opts(mode: DBRecoveryMode) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true);
    // Each 70 KiB value fills a memtable; the next write switches it (a WAL roll); no flush
    // runs before ten are full, so every WAL stays.
    o.set_write_buffer_size(64 << 10);
    o.set_min_write_buffer_number_to_merge(10);
    o.set_max_write_buffer_number(16);
    o.set_wal_recovery_mode(mode);
    o
}

fn wals(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

fn big(i: u32) -> Vec<u8> {
    vec![b'a' + i as u8; 70 << 10]
}

/// k0, k1, k2 in WALs 1, 2, 3 (one each), "tail" in WAL 4; closed without a flush.
fn four_wals(dir: &Path) -> Vec<PathBuf> {
    let db = DB::open(&opts(DBRecoveryMode::PointInTime), dir).unwrap();
    for i in 0..3 {
        db.put(format!("k{i}"), big(i)).unwrap();
    }
    db.put(b"tail", b"t").unwrap();
    drop(db);
    let w = wals(dir);
    assert_eq!(w.len(), 4, "{w:?}");
    w
}

/// Flips a byte inside the first record's payload: a checksum mismatch.
fn damage(wal: &Path) {
    let mut b = std::fs::read(wal).unwrap();
    b[7 + 100] ^= 0x5a;
    std::fs::write(wal, b).unwrap();
}

fn get(db: &DB, k: &str) -> Option<Vec<u8>> {
    db.get(k).unwrap()
}

#[test]
fn point_in_time_stops_at_a_damaged_older_wal_and_drops_the_newer_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = four_wals(&dir);
    damage(&w[1]);
    let db = DB::open(&opts(DBRecoveryMode::PointInTime), &dir).unwrap();
    assert_eq!(get(&db, "k0"), Some(big(0)));
    // k1 is lost; k2 and "tail" lie after the hole: dropped, not replayed.
    assert_eq!((get(&db, "k1"), get(&db, "k2"), get(&db, "tail")), (None, None, None));
    drop(db);
    // The recovery is final: a second open sees the same.
    let db = DB::open(&opts(DBRecoveryMode::PointInTime), &dir).unwrap();
    assert_eq!((get(&db, "k0"), get(&db, "k2")), (Some(big(0)), None));
}

#[test]
fn skip_any_corrupted_record_replays_around_the_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = four_wals(&dir);
    damage(&w[1]);
    let db = DB::open(&opts(DBRecoveryMode::SkipAnyCorruptedRecord), &dir).unwrap();
    assert_eq!((get(&db, "k0"), get(&db, "k1")), (Some(big(0)), None));
    assert_eq!((get(&db, "k2"), get(&db, "tail").as_deref()), (Some(big(2)), Some(&b"t"[..])));
}

#[test]
fn without_paranoid_checks_every_mode_replays_around_the_damage() {
    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::TolerateCorruptedTailRecords,
        DBRecoveryMode::PointInTime,
        DBRecoveryMode::SkipAnyCorruptedRecord,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let w = four_wals(&dir);
        damage(&w[1]);
        let mut o = opts(mode);
        o.set_paranoid_checks(false);
        let db = DB::open(&o, &dir).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!((get(&db, "k0"), get(&db, "k1")), (Some(big(0)), None), "{mode:?}");
        assert_eq!(
            (get(&db, "k2"), get(&db, "tail").as_deref()),
            (Some(big(2)), Some(&b"t"[..])),
            "{mode:?}"
        );
    }
}

#[test]
fn the_strict_modes_refuse_a_damaged_older_wal() {
    for mode in [DBRecoveryMode::AbsoluteConsistency, DBRecoveryMode::TolerateCorruptedTailRecords] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let w = four_wals(&dir);
        damage(&w[1]);
        let e = DB::open(&opts(mode), &dir).expect_err("open must fail");
        assert_eq!(e.kind(), ErrorKind::Corruption, "{mode:?}: {e}");
    }
}

#[test]
fn a_newer_wal_continuing_the_sequence_is_replayed_after_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = four_wals(&dir);
    // A few bytes of a record that never completed, after k1's whole record: point-in-time
    // stops there, but WAL 3 begins at the next sequence number, so replay goes on
    // (RocksDB's MaybeReviseStopReplayForCorruption).
    let mut f = std::fs::OpenOptions::new().append(true).open(&w[1]).unwrap();
    std::io::Write::write_all(&mut f, &[0x12, 0x34, 0x56]).unwrap();
    drop(f);
    let db = DB::open(&opts(DBRecoveryMode::PointInTime), &dir).unwrap();
    for i in 0..3 {
        assert_eq!(get(&db, &format!("k{i}")), Some(big(i)), "k{i}");
    }
    assert_eq!(get(&db, "tail").as_deref(), Some(&b"t"[..]));
}

#[test]
fn a_family_flushed_past_the_damage_fails_the_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts(DBRecoveryMode::PointInTime);
    {
        let db = DB::open_cf(&o, &dir, ["b"]).unwrap();
        db.put_cf(db.cf_handle("b").unwrap(), b"b0", vec![b'b'; 500]).unwrap();
        db.put(b"d0", b"d").unwrap();
        // The default family's table holds d0; its log number moves past the first WAL,
        // which family b still needs.
        db.flush().unwrap();
        db.put_cf(db.cf_handle("b").unwrap(), b"b1", b"x").unwrap();
    }
    let w = wals(&dir);
    assert_eq!(w.len(), 2, "{w:?}");
    damage(&w[0]);
    let e = DB::open_cf(&o, &dir, ["b"]).expect_err("open must fail");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(
        e.to_string().contains("Column family inconsistency: SST file contains data beyond the point of corruption in CF default."),
        "{e}"
    );
}
