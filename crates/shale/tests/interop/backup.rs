//! BackupEngine: backups in RocksDB's directory layout (meta/, private/<id>/,
//! shared_checksum/<n>_<crc32c>_<size>.sst) restore with exactly the data backed up; a
//! second backup copies only new tables; purge removes old backups and unshared tables;
//! a damaged file is found by `verify_backup` and refused by restore with Corruption; and
//! backups cross over with RocksDB 7.8.3's `ldb backup` / `ldb restore`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use shale::{Env, ErrorKind, IteratorMode, Options, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 * 1024);
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb opens the backups
    o
}

fn scan(db: &DB) -> Pairs {
    db.iterator(IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iter"))
        .collect()
}

fn fill(db: &DB, round: u32, range: std::ops::Range<u32>) {
    for i in range {
        db.put(format!("key{i:05}"), format!("r{round}-{i}-").repeat(6)).expect("put");
    }
}

fn engine(dir: &Path) -> BackupEngine {
    let mut o = BackupEngineOptions::new(dir).expect("options");
    o.set_max_background_operations(2);
    BackupEngine::open(&o, &Env::new().expect("env")).expect("open engine")
}

fn shared_files(backup_dir: &Path) -> Vec<PathBuf> {
    files_with_suffix(&backup_dir.join("shared_checksum"), ".sst")
}

fn restore(be: &mut BackupEngine, id: Option<u32>, to: &Path) -> shale::Result<()> {
    let o = RestoreOptions::default();
    match id {
        Some(id) => be.restore_from_backup(to, to, &o, id),
        None => be.restore_from_latest_backup(to, to, &o),
    }
}

#[test]
fn incremental_backups_restore_exactly_what_was_backed_up() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bdir = tmp.path().join("backups");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    fill(&db, 1, 0..2000);
    db.flush().expect("flush");
    fill(&db, 1, 2000..2100); // left in the WAL
    let first = scan(&db);
    let mut be = engine(&bdir);
    be.create_new_backup(&db).expect("backup 1");
    let tables_after_first = shared_files(&bdir);
    assert!(!tables_after_first.is_empty());
    // The layout RocksDB reads.
    let meta = std::fs::read_to_string(bdir.join("meta/1")).expect("meta");
    let lines: Vec<&str> = meta.lines().collect();
    assert!(lines[0].parse::<i64>().is_ok() && lines[1].parse::<u64>().is_ok(), "{meta}");
    assert_eq!(lines[2].parse::<usize>().expect("count"), lines.len() - 3, "{meta}");
    assert!(lines[3..].iter().all(|l| l.contains(" crc32 ")), "{meta}");
    assert!(bdir.join("private/1/CURRENT").exists());
    for t in &tables_after_first {
        let n = t.file_name().expect("name").to_string_lossy().into_owned();
        let parts: Vec<&str> = n.trim_end_matches(".sst").split('_').collect();
        assert_eq!(parts.len(), 3, "{n}: <number>_<crc32c>_<size>.sst");
        assert_eq!(parts[2].parse::<u64>().expect("size"), std::fs::metadata(t).expect("stat").len());
    }

    // A second backup after more writes copies only the new tables.
    let before: Vec<(PathBuf, std::time::SystemTime)> = tables_after_first
        .iter()
        .map(|p| (p.clone(), std::fs::metadata(p).expect("stat").modified().expect("mtime")))
        .collect();
    fill(&db, 2, 500..900);
    be.create_new_backup_flush(&db, true).expect("backup 2");
    let second = scan(&db);
    for (p, m) in &before {
        assert_eq!(
            &std::fs::metadata(p).expect("still there").modified().expect("mtime"),
            m,
            "not copied again"
        );
    }
    assert!(shared_files(&bdir).len() > tables_after_first.len());
    let info = be.get_backup_info();
    assert_eq!(info.iter().map(|i| i.backup_id).collect::<Vec<_>>(), vec![1, 2]);
    assert!(info.iter().all(|i| i.size > 0 && i.num_files >= 3));
    be.verify_backup(1).expect("verify 1");
    be.verify_backup(2).expect("verify 2");
    drop(db);

    // Restores, also from a freshly opened engine.
    let mut be = engine(&bdir);
    let r1 = tmp.path().join("r1");
    restore(&mut be, Some(1), &r1).expect("restore 1");
    assert_same_pairs(&scan(&DB::open(&opts(), &r1).expect("open r1")), &first, "backup 1");
    let r2 = tmp.path().join("r2");
    restore(&mut be, None, &r2).expect("restore latest");
    assert_same_pairs(&scan(&DB::open(&opts(), &r2).expect("open r2")), &second, "backup 2");
    // Restoring over an existing database replaces it.
    restore(&mut be, Some(1), &r2).expect("restore 1 over 2");
    assert_same_pairs(&scan(&DB::open(&opts(), &r2).expect("open r2")), &first, "backup 1 over 2");

    // Purge keeps the newest; tables only the purged backup held go.
    be.purge_old_backups(1).expect("purge");
    assert_eq!(be.get_backup_info().len(), 1);
    assert!(!bdir.join("meta/1").exists() && !bdir.join("private/1").exists());
    let e = be.verify_backup(1).expect_err("gone");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let r3 = tmp.path().join("r3");
    restore(&mut be, None, &r3).expect("restore after purge");
    assert_same_pairs(&scan(&DB::open(&opts(), &r3).expect("open r3")), &second, "after purge");
}

#[test]
fn damaged_backup_is_found_and_never_restored() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bdir = tmp.path().join("backups");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    fill(&db, 1, 0..1000);
    let mut be = engine(&bdir);
    be.create_new_backup_flush(&db, true).expect("backup");
    drop(db);
    // Flip one byte in the middle of a shared table (same size).
    let t = shared_files(&bdir).pop().expect("table");
    let mut bytes = std::fs::read(&t).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&t, &bytes).expect("write");
    let e = be.verify_backup(1).expect_err("damage found");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let to = tmp.path().join("restored");
    let e = restore(&mut be, Some(1), &to).expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(!to.join("CURRENT").exists(), "no half-restored database");
    // A missing file too.
    std::fs::remove_file(&t).expect("rm");
    assert!(be.verify_backup(1).is_err());
    assert!(restore(&mut be, Some(1), &to).is_err());
}

#[test]
fn leftovers_of_an_interrupted_backup_are_cleaned_at_open() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bdir = tmp.path().join("backups");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    fill(&db, 1, 0..100);
    let mut be = engine(&bdir);
    be.create_new_backup(&db).expect("backup");
    drop(be);
    std::fs::create_dir_all(bdir.join("private/2.tmp")).expect("mkdir");
    std::fs::write(bdir.join("private/2.tmp/CURRENT"), b"x").expect("write");
    std::fs::write(bdir.join("shared_checksum/000099_1_2.sst.tmp"), b"x").expect("write");
    std::fs::write(bdir.join("meta/.2.tmp"), b"x").expect("write");
    let mut be = engine(&bdir);
    assert_eq!(be.get_backup_info().len(), 1);
    assert!(!bdir.join("private/2.tmp").exists());
    assert!(!bdir.join("shared_checksum/000099_1_2.sst.tmp").exists());
    be.create_new_backup(&db).expect("backup 2");
    assert_eq!(be.get_backup_info().len(), 2);
}

#[test]
fn backups_cross_over_with_ldb() {
    if !tools_available("backup interop", &["ldb"]) {
        return;
    }
    backup_interop("RocksDB 7.8.3");
}

#[test]
fn backups_cross_over_with_ldb_11() {
    if !use_rocksdb_11("backup interop (11.8.1)") {
        return;
    }
    backup_interop("RocksDB 11.8.1");
}

fn backup_interop(rocksdb: &str) {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let want;
    {
        let db = DB::open(&opts(), &src).expect("open");
        fill(&db, 1, 0..1500);
        db.flush().expect("flush");
        fill(&db, 2, 1000..1200);
        want = scan(&db);
        let mut be = engine(&tmp.path().join("shale_backups"));
        be.create_new_backup(&db).expect("backup");
    }
    // Shale's backup restores with `ldb restore`.
    let rocks_restored = tmp.path().join("rocks_restored");
    run_tool(
        "ldb",
        &[
            format!("--db={}", rocks_restored.display()),
            "restore".into(),
            format!("--backup_dir={}", tmp.path().join("shale_backups").display()),
        ],
    );
    assert_same_pairs(
        &ldb_scan(&rocks_restored, None),
        &want,
        &format!("{rocksdb} ldb restore of Shale's backup"),
    );

    // `ldb backup` of the (Shale) database restores with Shale's BackupEngine.
    let ldb_backups = tmp.path().join("ldb_backups");
    run_tool(
        "ldb",
        &[
            format!("--db={}", src.display()),
            "backup".into(),
            format!("--backup_dir={}", ldb_backups.display()),
        ],
    );
    let mut be = engine(&ldb_backups);
    assert_eq!(be.get_backup_info().len(), 1);
    be.verify_backup(be.get_backup_info()[0].backup_id)
        .unwrap_or_else(|e| panic!("verify {rocksdb} ldb's backup: {e}"));
    let restored = tmp.path().join("shale_restored");
    restore(&mut be, None, &restored).unwrap_or_else(|e| panic!("restore {rocksdb} ldb's backup: {e}"));
    assert_same_pairs(
        &scan(&DB::open(&opts(), &restored).expect("open")),
        &want,
        &format!("Shale restore of {rocksdb} ldb's backup"),
    );
    assert_same_pairs(&ldb_scan(&restored, None), &want, &format!("{rocksdb} ldb scan of the restore"));
}

#[test]
fn tables_with_a_session_id_are_named_by_it_as_rocksdb_does() {
    if !tools_available("backup session naming", &["ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let d = format!("--db={}", src.display());
    let mut kv = vec![d.clone(), "--create_if_missing".into(), "batchput".into()];
    for i in 0..300 {
        kv.push(format!("key{i:05}"));
        kv.push(format!("value{i}"));
    }
    run_tool("ldb", &kv);
    run_tool("ldb", &[d.clone(), "compact".into()]);
    let bdir = tmp.path().join("backups");
    let db = DB::open(&opts(), &src).expect("open RocksDB's database");
    let want = scan(&db);
    let mut be = engine(&bdir);
    be.create_new_backup_flush(&db, true).expect("backup 1");
    let shared = shared_files(&bdir);
    let named: Vec<String> =
        shared.iter().map(|p| p.file_name().expect("name").to_string_lossy().into_owned()).collect();
    assert!(named.iter().any(|n| n.contains("_s")), "RocksDB's tables carry session ids: {named:?}");
    db.put("extra", "x").expect("put");
    be.create_new_backup_flush(&db, true).expect("backup 2");
    for p in &shared {
        assert!(p.exists(), "{p:?} kept");
    }
    be.verify_backup(2).expect("verify");
    drop(db);
    let to = tmp.path().join("restored");
    restore(&mut be, Some(1), &to).expect("restore 1");
    assert_same_pairs(&scan(&DB::open(&opts(), &to).expect("open")), &want, "backup 1");
    // Damage in a session-named table is found too.
    let t = shared.iter().find(|p| p.to_string_lossy().contains("_s")).expect("session-named table");
    let mut bytes = std::fs::read(t).expect("read");
    let last = bytes.len() - 100;
    bytes[last] ^= 1;
    std::fs::write(t, &bytes).expect("write");
    assert_eq!(be.verify_backup(1).expect_err("damaged").kind(), ErrorKind::Corruption);
}
