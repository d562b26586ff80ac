//! A damaged older or newer WAL opened read-only and as a secondary, in each recovery mode,
//! with the outcome RocksDB 11.8.1 gives on the same directory (its `ldb scan`, which opens
//! read-only, and `ldb --secondary_path=... scan`, checked here when its tools run):
//! - read-only: the read-write open's rules (`DBImpl::Recover` -> `RecoverLogFiles` serves
//!   both in RocksDB; in Shale both go through `db/open.rs` `replay_wals`): point-in-time
//!   stops at the damage and drops the later WALs unless one continues the sequence,
//!   SkipAnyCorruptedRecord skips the damaged record, the two strict modes fail, and a
//!   "log record too small" is a stop in point-in-time mode;
//! - secondary: `DBImplSecondary::RecoverLogFiles` fails on any damage its reader reports,
//!   whatever the mode, and takes a cut-short tail for a record still being written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::{DBRecoveryMode, ErrorKind, IteratorMode, Options, DB};

const MODES: [DBRecoveryMode; 4] = [
    DBRecoveryMode::TolerateCorruptedTailRecords,
    DBRecoveryMode::AbsoluteConsistency,
    DBRecoveryMode::PointInTime,
    DBRecoveryMode::SkipAnyCorruptedRecord,
];

fn opts(mode: DBRecoveryMode) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    // Each 70 KiB value fills a memtable; the next write switches it (a WAL roll); no flush
    // runs before ten are full, so every WAL stays.
    o.set_write_buffer_size(64 << 10);
    o.set_min_write_buffer_number_to_merge(10);
    o.set_max_write_buffer_number(16);
    o.set_wal_recovery_mode(mode);
    o
}

fn big(i: u32) -> Vec<u8> {
    vec![b'a' + i as u8; 70 << 10]
}

/// k0, k1, k2 in WALs 1, 2, 3 (one each), "tail" in WAL 4; closed without a flush. The
/// OPTIONS file names `mode`, so RocksDB's ldb (which loads it) opens with the same mode.
fn four_wals(dir: &Path, mode: DBRecoveryMode) -> Vec<PathBuf> {
    let db = DB::open(&opts(mode), dir).unwrap();
    for i in 0..3 {
        db.put(format!("k{i}"), big(i)).unwrap();
    }
    db.put(b"tail", b"t").unwrap();
    drop(db);
    let w = tools::wal_files(dir);
    assert_eq!(w.len(), 4, "{w:?}");
    w
}

fn flip(wal: &Path, offset: usize) {
    let mut b = std::fs::read(wal).unwrap();
    b[offset] ^= 0x5a;
    std::fs::write(wal, b).unwrap();
}

fn append(wal: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(wal).unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
}

/// Rewrites the newest WAL as: a 5-byte record (shorter than a batch header), then its
/// one batch ("tail").
fn too_small_first(wal: &Path) {
    let b = std::fs::read(wal).unwrap();
    let len = u16::from_le_bytes([b[4], b[5]]) as usize;
    let batch = b[7..7 + len].to_vec();
    let number: u64 = wal.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let file = shale::fs::default_fs().new_writable_file(wal).unwrap();
    let mut w = shale::wal::LogWriter::new(file, number);
    w.add_record(&[1, 2, 3, 4, 5]).unwrap();
    w.add_record(&batch).unwrap();
    w.sync().unwrap();
}

/// What an open gives: Err(kind) or the keys it reads.
type Outcome = Result<Vec<String>, ErrorKind>;

fn keys(names: &[&str]) -> Outcome {
    Ok(names.iter().map(|s| s.to_string()).collect())
}

fn scan(db: &DB) -> Vec<String> {
    db.iterator(IteratorMode::Start).map(|r| String::from_utf8(r.unwrap().0.to_vec()).unwrap()).collect()
}

fn read_only(dir: &Path, mode: DBRecoveryMode) -> Outcome {
    let mut o = opts(mode);
    o.create_if_missing(false);
    DB::open_for_read_only(&o, dir, false).map(|db| scan(&db)).map_err(|e| e.kind())
}

fn secondary(dir: &Path, mode: DBRecoveryMode) -> Outcome {
    let sec = tempfile::tempdir().unwrap();
    let mut o = opts(mode);
    o.create_if_missing(false);
    o.set_max_open_files(-1);
    let db = DB::open_as_secondary(&o, dir, sec.path()).map_err(|e| e.kind())?;
    let first = scan(&db);
    // A catch-up replays the same WALs by the same rules.
    db.try_catch_up_with_primary().map_err(|e| e.kind())?;
    assert_eq!(scan(&db), first, "catch-up changed what a secondary reads");
    Ok(first)
}

/// RocksDB 11.8.1's `ldb scan` of `dir` (read-only, or as a secondary): Err(Corruption)
/// when it fails with a Corruption, else the keys. None when its tools do not run here.
fn ldb(dir: &Path, as_secondary: bool, test: &str) -> Option<Outcome> {
    if !tools::use_rocksdb_11(test) {
        return None;
    }
    let sec = tempfile::tempdir().unwrap();
    let mut a = vec![format!("--db={}", dir.display())];
    if as_secondary {
        a.push(format!("--secondary_path={}", sec.path().display()));
    }
    a.push("scan".to_string());
    a.push("--no_value".to_string());
    let (ok, out, err) = tools::try_tool("ldb", &a);
    if !ok {
        assert!(out.contains("Corruption") || err.contains("Corruption"), "ldb {a:?}: {out}{err}");
        return Some(Err(ErrorKind::Corruption));
    }
    Some(Ok(out.lines().filter(|l| !l.is_empty()).map(|l| l.trim().to_string()).collect()))
}

/// Builds the four WALs in each mode, damages them with `damage`, and checks the read-only
/// and secondary opens against `want_read_only(mode)` and `want_secondary`, and RocksDB's
/// ldb against the same.
fn check(
    test: &str,
    damage: fn(&[PathBuf]),
    want_read_only: fn(DBRecoveryMode) -> Outcome,
    want_secondary: Outcome,
) {
    for mode in MODES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let w = four_wals(&dir, mode);
        damage(&w);
        let ro = want_read_only(mode);
        assert_eq!(read_only(&dir, mode), ro, "{test}: read-only, {mode:?}");
        assert_eq!(secondary(&dir, mode), want_secondary, "{test}: secondary, {mode:?}");
        // The opens changed nothing: RocksDB reads the same damage.
        assert_eq!(tools::wal_files(&dir), w, "{test}: {mode:?}");
        if let Some(got) = ldb(&dir, false, test) {
            assert_eq!(got, ro, "{test}: RocksDB 11.8.1 ldb scan (read-only), {mode:?}");
        }
        if let Some(got) = ldb(&dir, true, test) {
            assert_eq!(got, want_secondary, "{test}: RocksDB 11.8.1 ldb --secondary_path scan, {mode:?}");
        }
    }
}

const ALL: [&str; 4] = ["k0", "k1", "k2", "tail"];

#[test]
fn checksum_mismatch_in_an_older_wal() {
    check(
        "checksum_mismatch_in_an_older_wal",
        |w| flip(&w[1], 7 + 100),
        |mode| match mode {
            DBRecoveryMode::PointInTime => keys(&["k0"]),
            DBRecoveryMode::SkipAnyCorruptedRecord => keys(&["k0", "k2", "tail"]),
            _ => Err(ErrorKind::Corruption),
        },
        Err(ErrorKind::Corruption),
    );
}

#[test]
fn checksum_mismatch_in_the_newest_wal() {
    check(
        "checksum_mismatch_in_the_newest_wal",
        // Inside the key of the newest WAL's one batch.
        |w| flip(&w[3], 7 + 14),
        |mode| match mode {
            DBRecoveryMode::PointInTime | DBRecoveryMode::SkipAnyCorruptedRecord => keys(&["k0", "k1", "k2"]),
            _ => Err(ErrorKind::Corruption),
        },
        Err(ErrorKind::Corruption),
    );
}

#[test]
fn cut_short_tail_of_an_older_wal() {
    // A few bytes of a record that never completed after k1's: point-in-time stops there,
    // and WAL 3 begins at the next sequence number, so replay goes on.
    check(
        "cut_short_tail_of_an_older_wal",
        |w| append(&w[1], &[0x12, 0x34, 0x56]),
        |mode| match mode {
            DBRecoveryMode::AbsoluteConsistency => Err(ErrorKind::Corruption),
            _ => keys(&ALL),
        },
        keys(&ALL),
    );
}

#[test]
fn cut_short_tail_of_the_newest_wal() {
    check(
        "cut_short_tail_of_the_newest_wal",
        |w| append(&w[3], &[0x12, 0x34, 0x56]),
        |mode| match mode {
            DBRecoveryMode::AbsoluteConsistency => Err(ErrorKind::Corruption),
            _ => keys(&ALL),
        },
        keys(&ALL),
    );
}

#[test]
fn log_record_too_small_in_the_newest_wal() {
    check(
        "log_record_too_small_in_the_newest_wal",
        |w| too_small_first(&w[3]),
        |mode| match mode {
            // A stop, not a skip: "tail" after it is not read.
            DBRecoveryMode::PointInTime => keys(&["k0", "k1", "k2"]),
            DBRecoveryMode::SkipAnyCorruptedRecord => keys(&ALL),
            _ => Err(ErrorKind::Corruption),
        },
        Err(ErrorKind::Corruption),
    );
}

#[test]
fn log_record_too_small_in_a_read_write_open() {
    // The read-write open applies the same rule (one replay path).
    for mode in MODES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let w = four_wals(&dir, mode);
        too_small_first(&w[3]);
        let got = DB::open(&opts(mode), &dir).map(|db| scan(&db)).map_err(|e| e.kind());
        let want = match mode {
            DBRecoveryMode::PointInTime => keys(&["k0", "k1", "k2"]),
            DBRecoveryMode::SkipAnyCorruptedRecord => keys(&ALL),
            _ => Err(ErrorKind::Corruption),
        };
        assert_eq!(got, want, "read-write, {mode:?}");
    }
}
