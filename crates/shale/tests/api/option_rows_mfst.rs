//! DB options RocksDB 11.8.1 registers about the MANIFEST at open and close that rust-rocksdb
//! has no setter for, set by name and acting as RocksDB's (`options_mfst.rs`).
//!
//! `verify_manifest_content_on_close`: a MANIFEST damaged while the database is open is found
//! at close and replaced by a new one written from memory, which CURRENT names and the next
//! open reads whole (without the option the damage is found only by that open, which fails).
//!
//! `reuse_manifest_on_open`: each open appends to the MANIFEST it recovered from (CURRENT keeps
//! naming it, it only grows, the data is all there); a torn tail, or a MANIFEST already at
//! `max_manifest_file_size`, makes the open write a new one as without the option.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use shale::{ErrorKind, Options, DB};

fn opts(rows: &str) -> Options {
    let mut o = Options::default().get_options_from_string(rows).unwrap();
    o.create_if_missing(true);
    o
}

/// The MANIFEST CURRENT names: its number and path.
fn current_manifest(dir: &Path) -> (u64, PathBuf) {
    let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let name = name.trim_end();
    (name.strip_prefix("MANIFEST-").unwrap().parse().unwrap(), dir.join(name))
}

fn manifests(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect();
    v.sort();
    v
}

/// Flips one byte of the first record's payload (its checksum then fails), in place, as a
/// disk fault would; the file keeps its size.
fn damage_first_record(manifest: &Path) {
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(manifest).unwrap();
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(9)).unwrap();
    std::io::Read::read_exact(&mut f, &mut b).unwrap();
    f.seek(SeekFrom::Start(9)).unwrap();
    f.write_all(&[b[0] ^ 0x40]).unwrap();
    f.sync_all().unwrap();
}

fn write_and_flush(db: &DB, round: u32) {
    for i in 0..20u32 {
        db.put(format!("k{round}-{i:02}"), format!("v{round}")).unwrap();
    }
    db.flush().unwrap();
}

fn has_all(db: &DB, rounds: u32) {
    for round in 0..rounds {
        for i in 0..20u32 {
            assert_eq!(db.get(format!("k{round}-{i:02}")).unwrap(), Some(format!("v{round}").into_bytes()));
        }
    }
}

#[test]
fn verify_manifest_content_on_close_rewrites_a_damaged_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("verify_manifest_content_on_close=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    let (before, path) = current_manifest(&dir);
    damage_first_record(&path);
    write_and_flush(&db, 1);
    drop(db);
    // The close found the damage and wrote a new MANIFEST from memory; CURRENT names it.
    let (after, _) = current_manifest(&dir);
    assert!(after > before, "CURRENT still names MANIFEST-{after:06}");
    assert_eq!(manifests(&dir), vec![format!("MANIFEST-{after:06}")]);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("MANIFEST content verification on Close failed"), "{log}");
    // The next open (without the option) reads it whole: every table is there.
    let db = DB::open(&opts(""), &dir).unwrap();
    has_all(&db, 2);
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 2);
}

#[test]
fn without_verify_manifest_content_on_close_the_damage_fails_the_next_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&opts(""), &dir).unwrap();
    write_and_flush(&db, 0);
    let (before, path) = current_manifest(&dir);
    damage_first_record(&path);
    drop(db);
    assert_eq!(current_manifest(&dir).0, before);
    let Err(e) = DB::open(&opts(""), &dir) else { panic!("the open must fail") };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
}

#[test]
fn verify_manifest_content_on_close_keeps_a_healthy_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("verify_manifest_content_on_close=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    let (before, path) = current_manifest(&dir);
    let size = std::fs::metadata(&path).unwrap().len();
    drop(db);
    assert_eq!(current_manifest(&dir).0, before);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(!log.contains("MANIFEST content verification"), "{log}");
}

#[test]
fn reuse_manifest_on_open_appends_to_the_recovered_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("reuse_manifest_on_open=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    let (first, path) = current_manifest(&dir);
    let mut size = std::fs::metadata(&path).unwrap().len();
    for round in 1..4u32 {
        let db = DB::open(&o, &dir).unwrap();
        // The open appended its edits to the same MANIFEST.
        assert_eq!(current_manifest(&dir).0, first, "round {round}");
        let grown = std::fs::metadata(&path).unwrap().len();
        assert!(grown > size, "round {round}: {grown} <= {size}");
        size = grown;
        has_all(&db, round);
        // Unflushed writes come back through the WAL, flushed ones through the MANIFEST.
        write_and_flush(&db, round);
        db.put(format!("unflushed{round}"), b"u").unwrap();
        drop(db);
        assert_eq!(manifests(&dir), vec![format!("MANIFEST-{first:06}")]);
    }
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("Reusing existing MANIFEST file"), "{log}");
    // A plain open reads the appended MANIFEST and writes a new one.
    let db = DB::open(&opts(""), &dir).unwrap();
    has_all(&db, 4);
    for round in 1..4u32 {
        assert_eq!(db.get(format!("unflushed{round}")).unwrap(), Some(b"u".to_vec()));
    }
    assert!(current_manifest(&dir).0 > first);
}

#[test]
fn without_reuse_manifest_on_open_each_open_writes_a_new_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("");
    drop(DB::open(&o, &dir).unwrap());
    let (mut last, _) = current_manifest(&dir);
    for _ in 0..2 {
        drop(DB::open(&o, &dir).unwrap());
        let (n, _) = current_manifest(&dir);
        assert!(n > last);
        last = n;
    }
}

#[test]
fn reuse_manifest_on_open_falls_back_on_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("reuse_manifest_on_open=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    let (first, path) = current_manifest(&dir);
    // A record header cut short, as a crash mid-append leaves it: recovery ignores it, but
    // appending after it would misframe the file.
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&[0x12, 0x34, 0x56]).unwrap();
    drop(f);
    let db = DB::open(&o, &dir).unwrap();
    assert!(current_manifest(&dir).0 > first);
    has_all(&db, 1);
    write_and_flush(&db, 1);
    drop(db);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("reuse_manifest_on_open: physical size"), "{log}");
    let db = DB::open(&o, &dir).unwrap();
    has_all(&db, 2);
}

#[test]
fn reuse_manifest_on_open_rolls_a_manifest_at_max_manifest_file_size() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = opts("reuse_manifest_on_open=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    let (first, path) = current_manifest(&dir);
    let size = std::fs::metadata(&path).unwrap().len();
    // At or over the limit the open's own write starts a new MANIFEST (RocksDB's
    // `ProcessManifestWrites` compares the reused file's size with the limit).
    o.set_max_manifest_file_size(size as usize);
    let db = DB::open(&o, &dir).unwrap();
    let (second, path2) = current_manifest(&dir);
    assert!(second > first);
    has_all(&db, 1);
    drop(db);
    // Under the limit it is reused, and it rolls once a change finds it at the limit
    // (no compacted size is known for a reused MANIFEST, so the limit is
    // max_manifest_file_size itself).
    let size2 = std::fs::metadata(&path2).unwrap().len();
    o.set_max_manifest_file_size((size2 + 200) as usize);
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(current_manifest(&dir).0, second);
    let mut rolled = false;
    for round in 1..20u32 {
        write_and_flush(&db, round);
        if current_manifest(&dir).0 != second {
            rolled = true;
            break;
        }
    }
    assert!(rolled, "the reused MANIFEST never rolled");
}

/// The WAL numbers in `dir` with their sizes, ascending. A WAL the background purge deletes
/// between the listing and its size is left out (it was leaving).
fn wals(dir: &Path) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = util::files_ending(dir, ".log")
        .into_iter()
        .filter_map(|n| {
            let size = std::fs::metadata(dir.join(&n)).ok()?.len();
            Some((n.trim_end_matches(".log").parse().unwrap(), size))
        })
        .collect();
    v.sort_unstable();
    v
}

/// Waits until `dir` holds `count` WALs; returns them.
fn wait_for_wals(dir: &Path, count: usize) -> Vec<(u64, u64)> {
    util::wait_until(10, "the precreated WAL", || wals(dir).len() == count);
    wals(dir)
}

#[test]
fn async_wal_precreate_makes_the_next_wal_ahead() {
    use shale::statistics::Ticker;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = opts("async_wal_precreate=true");
    o.enable_statistics();
    let db = DB::open(&o, &dir).unwrap();
    // After the open: the current WAL and, made in the background, an empty one numbered
    // above it.
    let w = wait_for_wals(&dir, 2);
    let (current, ahead) = (w[0].0, w[1].0);
    assert!(ahead > current, "{w:?}");
    assert_eq!(w[1].1, 0, "the precreated WAL holds nothing: {w:?}");
    write_and_flush(&db, 0);
    assert_eq!(o.get_ticker_count(Ticker::WalPrecreateHit), 1);
    assert_eq!(o.get_ticker_count(Ticker::WalPrecreateMiss), 0);
    // The flush's switch took the precreated file as its new WAL; the next is made ahead.
    db.put(b"after", b"switch").unwrap();
    util::wait_until(10, "the next precreated WAL", || {
        let w = wals(&dir);
        w.len() == 2 && w[0].0 == ahead
    });
    let w = wals(&dir);
    assert!(w[0].1 > 0, "the writes after the switch are in the precreated WAL: {w:?}");
    assert!(w[1].0 > ahead && w[1].1 == 0, "{w:?}");
    write_and_flush(&db, 1);
    assert_eq!(o.get_ticker_count(Ticker::WalPrecreateHit), 2);
    drop(db);
    // The file made ahead and never used stays, empty; the next open replays it (nothing)
    // and removes it with the other old WALs.
    let left = wals(&dir);
    assert_eq!(left.last().unwrap().1, 0, "{left:?}");
    let db = DB::open(&opts(""), &dir).unwrap();
    has_all(&db, 2);
    assert_eq!(db.get(b"after").unwrap(), Some(b"switch".to_vec()));
    assert_eq!(wals(&dir).len(), 1);
    assert!(wals(&dir)[0].0 > left.last().unwrap().0);
}

#[test]
fn without_async_wal_precreate_a_switch_makes_its_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&opts(""), &dir).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(wals(&dir).len(), 1);
    write_and_flush(&db, 0);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(wals(&dir).len(), 1);
}

#[test]
fn async_wal_precreate_is_off_with_wal_recycling() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = opts("async_wal_precreate=true");
    o.set_recycle_log_file_num(2);
    let db = DB::open(&o, &dir).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(wals(&dir).len(), 1);
    drop(db);
    let text = util::latest_options_text(&dir);
    assert!(text.lines().any(|l| l.trim() == "async_wal_precreate=false"), "{text}");
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("async_wal_precreate is disabled since recycle_log_file_num is non-zero"), "{log}");
}

/// How many of this process's descriptors are open on `path` (Linux's /proc/self/fd).
fn open_fds(path: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return usize::MAX };
    entries.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok()).filter(|p| p == path).count()
}

/// An inactive WAL found synced whole: by the switch (after a sync write) or by the sync a
/// flush of several families makes first. File deletions are held so that no purge runs
/// after the flush. Returns the descriptors left open on that WAL then, and after the hold
/// ends (a purge runs).
fn inactive_wal_fds(background_close: bool, synced_by_write: bool) -> (usize, usize) {
    if !Path::new("/proc/self/fd").exists() {
        return (usize::from(background_close), 0);
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = opts(&format!("background_close_inactive_wals={background_close}"));
    o.create_missing_column_families(true);
    let db = DB::open_cf(&o, &dir, ["a", "b"]).unwrap();
    let mut w = shale::WriteOptions::default();
    w.set_sync(synced_by_write);
    db.put_cf_opt(db.cf_handle("a").unwrap(), b"ka", b"va", &w).unwrap();
    db.put_cf_opt(db.cf_handle("b").unwrap(), b"kb", b"vb", &w).unwrap();
    let wal = std::fs::canonicalize(dir.join(format!("{:06}.log", wals(&dir)[0].0))).unwrap();
    assert_eq!(open_fds(&wal), 1, "the current WAL is open");
    db.disable_file_deletions().unwrap();
    db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
    let held = open_fds(&wal);
    db.enable_file_deletions().unwrap();
    db.flush_cf(db.cf_handle("b").unwrap()).unwrap();
    let after = open_fds(&wal);
    (held, after)
}

#[test]
fn background_close_inactive_wals_leaves_a_synced_wal_open_until_a_purge() {
    for synced_by_write in [true, false] {
        // Off (RocksDB's default): the switch or the sync that finds it synced closes it.
        assert_eq!(inactive_wal_fds(false, synced_by_write), (0, 0), "synced by write: {synced_by_write}");
        // On: it stays open until the purge once deletions are allowed again.
        assert_eq!(inactive_wal_fds(true, synced_by_write), (1, 0), "synced by write: {synced_by_write}");
    }
}

#[test]
fn optimize_manifest_for_recovery_writes_no_manifest_at_a_warm_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("optimize_manifest_for_recovery=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    // The close recorded that no WAL holds anything unflushed: the open after it has nothing
    // to record and writes no MANIFEST; CURRENT keeps naming the one the close wrote.
    let (closed_with, path) = current_manifest(&dir);
    let size = std::fs::metadata(&path).unwrap().len();
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(current_manifest(&dir).0, closed_with);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    has_all(&db, 1);
    // The first change writes a new MANIFEST (RocksDB's LogAndApply with no writer).
    write_and_flush(&db, 1);
    let (after_flush, _) = current_manifest(&dir);
    assert!(after_flush > closed_with);
    assert_eq!(manifests(&dir), vec![format!("MANIFEST-{after_flush:06}")]);
    drop(db);
    let db = DB::open(&o, &dir).unwrap();
    has_all(&db, 2);
    // Unflushed writes at close: their family's log number stays, the next open replays the
    // WAL and records the table it writes (a new MANIFEST).
    db.put(b"unflushed", b"u").unwrap();
    drop(db);
    let (before, _) = current_manifest(&dir);
    let db = DB::open(&o, &dir).unwrap();
    assert!(current_manifest(&dir).0 > before);
    assert_eq!(db.get(b"unflushed").unwrap(), Some(b"u".to_vec()));
    has_all(&db, 2);
}

#[test]
fn without_optimize_manifest_for_recovery_every_open_writes_a_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&opts(""), &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    let (before, _) = current_manifest(&dir);
    let db = DB::open(&opts(""), &dir).unwrap();
    assert!(current_manifest(&dir).0 > before);
    has_all(&db, 1);
}

#[test]
fn optimize_manifest_for_recovery_with_reuse_appends_only_at_close() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("optimize_manifest_for_recovery=true;reuse_manifest_on_open=true");
    let db = DB::open(&o, &dir).unwrap();
    write_and_flush(&db, 0);
    drop(db);
    let (first, path) = current_manifest(&dir);
    for _ in 0..3 {
        let size = std::fs::metadata(&path).unwrap().len();
        let db = DB::open(&o, &dir).unwrap();
        // Nothing appended by the open, one record of markers by the close.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        has_all(&db, 1);
        drop(db);
        assert_eq!(current_manifest(&dir).0, first);
        assert!(std::fs::metadata(&path).unwrap().len() > size);
    }
    // A plain open reads it whole.
    let db = DB::open(&opts(""), &dir).unwrap();
    has_all(&db, 1);
}
