//! The WAL and file options of RocksDB's DBOptions acting as RocksDB's (issue 33): `wal_dir`,
//! the WAL archive (`WAL_ttl_seconds`, `WAL_size_limit_MB`) with `get_updates_since`,
//! `recycle_log_file_num`, and how files are opened (`use_direct_io_for_flush_and_compaction`,
//! `allow_mmap_writes`, `is_fd_close_on_exec`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shale::{Options, DB};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn logs(dir: &Path) -> Vec<String> {
    names(dir).into_iter().filter(|n| n.ends_with(".log")).collect()
}

/// Waits (generous deadline: the machine is loaded) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// WALs are created in `wal_dir` and never in the database directory; a reopen replays the
/// unflushed writes from there; flushed WALs are deleted there; a checkpoint holds the WAL;
/// `DB::destroy` removes the WAL directory too.
#[test]
fn wal_dir_holds_the_wals() {
    let root = tempfile::tempdir().unwrap();
    let db_dir = root.path().join("db");
    let wal_dir = root.path().join("wals");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_wal_dir(&wal_dir);
    {
        let db = DB::open(&o, &db_dir).unwrap();
        db.put(b"a", b"1").unwrap();
        db.put(b"b", b"2").unwrap();
        assert!(logs(&db_dir).is_empty(), "{:?}", names(&db_dir));
        assert_eq!(logs(&wal_dir).len(), 1, "{:?}", names(&wal_dir));
        let cp = root.path().join("cp");
        shale::checkpoint::Checkpoint::new(&db).unwrap().create_checkpoint(&cp).unwrap();
        assert_eq!(logs(&cp).len(), 1, "{:?}", names(&cp));
        // The checkpoint's WAL is replayed from its own directory (RocksDB's checkpoint
        // copies the WALs there).
        let c = DB::open(&Options::default(), &cp).unwrap();
        assert_eq!(c.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    }
    // Unflushed writes come back from wal_dir.
    {
        let db = DB::open(&o, &db_dir).unwrap();
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
        db.put(b"c", b"3").unwrap();
        let before = logs(&wal_dir);
        db.flush().unwrap();
        // The flushed WAL goes; the new one is in wal_dir.
        wait_for("the flushed WAL deleted", || logs(&wal_dir).iter().all(|n| !before.contains(n)));
        assert_eq!(logs(&wal_dir).len(), 1);
        assert!(logs(&db_dir).is_empty());
    }
    // The flushed key is read back after another reopen.
    {
        let db = DB::open(&o, &db_dir).unwrap();
        assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    }
    DB::destroy(&o, &db_dir).unwrap();
    assert!(!wal_dir.exists(), "{:?}", names(&wal_dir));
    assert!(!db_dir.exists(), "{:?}", names(&db_dir));
}

/// A `wal_dir` naming the database directory (with a trailing slash) is the database
/// directory, as RocksDB's SanitizeOptions makes it; `DB::destroy` then removes it whole.
#[test]
fn wal_dir_equal_to_the_database_directory() {
    let root = tempfile::tempdir().unwrap();
    let db_dir = root.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_wal_dir(format!("{}/", db_dir.display()));
    let db = DB::open(&o, &db_dir).unwrap();
    db.put(b"a", b"1").unwrap();
    assert_eq!(logs(&db_dir).len(), 1);
    drop(db);
    let db = DB::open(&o, &db_dir).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    drop(db);
    DB::destroy(&o, &db_dir).unwrap();
    assert!(!db_dir.exists(), "{:?}", names(&db_dir));
}

fn archive(dir: &Path) -> PathBuf {
    dir.join("archive")
}

/// With `WAL_ttl_seconds`, a flushed WAL moves to `archive/` and `get_updates_since` still
/// serves its batches from there; once older than the TTL, a purge deletes it.
#[test]
fn archived_wals_serve_updates_then_expire() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_wal_ttl_seconds(3600);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        assert!(archive(dir.path()).is_dir());
        for i in 0..10u32 {
            db.put(format!("k{i}"), format!("v{i}")).unwrap();
        }
        let first = logs(dir.path());
        db.flush().unwrap();
        wait_for("the flushed WAL archived", || logs(&archive(dir.path())) == first);
        assert!(logs(dir.path()).iter().all(|n| !first.contains(n)));
        db.put(b"k10", b"v10").unwrap();
        // Every update since sequence 0 (the batch holding sequence 1 onwards), although
        // the WAL holding them is no longer live.
        let got: Vec<u64> = db.get_updates_since(0).unwrap().map(|r| r.unwrap().0).collect();
        assert_eq!(got, (1..=11).collect::<Vec<u64>>());
        let got: Vec<u64> = db.get_updates_since(5).unwrap().map(|r| r.unwrap().0).collect();
        assert_eq!(got, (6..=11).collect::<Vec<u64>>());
    }
    // Without an archive the same request after a flush is NotFound.
    let dir2 = tempfile::tempdir().unwrap();
    let mut plain = Options::default();
    plain.create_if_missing(true);
    let db = DB::open(&plain, dir2.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    let first = logs(dir2.path());
    db.flush().unwrap();
    wait_for("the flushed WAL deleted", || logs(dir2.path()).iter().all(|n| !first.contains(n)));
    db.put(b"b", b"2").unwrap();
    let e = db.get_updates_since(0).err().expect("the WAL is gone");
    assert_eq!(e.kind(), shale::ErrorKind::NotFound, "{e}");
    drop(db);

    // A TTL of 1 second: the purge after a later flush deletes the archived WALs once they
    // are more than a second old (checked at most every second).
    let mut o = Options::default();
    o.set_wal_ttl_seconds(1);
    let db = DB::open(&o, dir.path()).unwrap();
    let old = logs(&archive(dir.path()));
    assert!(!old.is_empty());
    let mut i = 0u32;
    wait_for("the archive purged by TTL", || {
        i += 1;
        db.put(format!("x{i}"), b"y").unwrap();
        db.flush().unwrap();
        // Each flush archives one WAL and purges; the old ones go once two seconds old.
        logs(&archive(dir.path())).iter().all(|n| !old.contains(n))
    });
    // The newest archived WAL is younger than the TTL: kept.
    assert!(!logs(&archive(dir.path())).is_empty());
    drop(db);
    DB::destroy(&o, dir.path()).unwrap();
    assert!(!dir.path().join("archive").exists());
}

/// With `WAL_size_limit_MB` 1, the archive keeps `1 MiB / largest archived WAL` files: at a
/// reopen (the purge runs at open, as RocksDB's DeleteObsoleteFiles) three archived WALs of
/// 600 KB each are cut to the newest one; empty archived WALs are deleted.
#[test]
fn archive_size_limit_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_wal_size_limit_mb(1);
    let value = vec![7u8; 600_000];
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in 0..3 {
            db.put(format!("k{i}"), &value).unwrap();
            db.flush().unwrap();
        }
        wait_for("three WALs archived", || logs(&archive(dir.path())).len() >= 2);
    }
    let before = logs(&archive(dir.path()));
    assert!(before.len() >= 2, "{before:?}");
    let db = DB::open(&o, dir.path()).unwrap();
    let after = logs(&archive(dir.path()));
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after.last(), before.last());
    for i in 0..3 {
        assert_eq!(db.get(format!("k{i}")).unwrap().map(|v| v.len()), Some(600_000));
    }
}

/// The descriptor flags of the open files of this process whose path ends with `suffix`:
/// true for each that has FD_CLOEXEC.
fn cloexec_of_open(suffix: &str) -> Vec<bool> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/fd").unwrap() {
        let e = e.unwrap();
        let Ok(target) = std::fs::read_link(e.path()) else { continue };
        if !target.to_string_lossy().ends_with(suffix) {
            continue;
        }
        let fd: i32 = e.file_name().to_string_lossy().parse().unwrap();
        // SAFETY: F_GETFD reads a descriptor's flags; no memory is passed.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags != -1 {
            out.push(flags & libc::FD_CLOEXEC != 0);
        }
    }
    out
}

/// `is_fd_close_on_exec` (default true): the WAL's and tables' descriptors have
/// FD_CLOEXEC; with false they have not (RocksDB opens them without O_CLOEXEC).
#[test]
fn fd_close_on_exec() {
    for on in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_is_fd_close_on_exec(on);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
        // The table is opened for reads (table cache) by the get.
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        let wal = logs(dir.path()).pop().unwrap();
        let table = names(dir.path()).into_iter().find(|n| n.ends_with(".sst")).unwrap();
        let prefix = dir.path().display().to_string();
        let wal_flags = cloexec_of_open(&format!("{prefix}/{wal}"));
        let table_flags = cloexec_of_open(&format!("{prefix}/{table}"));
        assert!(!wal_flags.is_empty() && !table_flags.is_empty(), "{wal_flags:?} {table_flags:?}");
        assert!(
            wal_flags.iter().chain(&table_flags).all(|&c| c == on),
            "{on}: {wal_flags:?} {table_flags:?}"
        );
        assert!(tools::latest_options_text(dir.path()).contains(&format!("is_fd_close_on_exec={on}")));
    }
}
