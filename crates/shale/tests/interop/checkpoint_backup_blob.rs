//! Checkpoints and backups of a database holding blob files (integrated BlobDB), as RocksDB
//! makes them: a checkpoint hard-links the live blob files beside the tables and opens with
//! exactly the data at the checkpoint while the source's GC deletes those blob files; a
//! backup shares blob files in `shared_checksum/<n>_<crc32c>_<size>.blob`, copies each once
//! over incremental backups, restores them, purges the ones no backup holds, and a damaged
//! blob file is found by `verify_backup` and refused by restore. Both ways with RocksDB
//! 7.8.3's and 11.8.1's `ldb checkpoint` / `backup` / `restore`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use shale::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use shale::checkpoint::Checkpoint;
use shale::{Env, ErrorKind, Options, DB};
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
    o.set_blob_gc_age_cutoff(1.0);
    o
}

/// [`opts`] for a source database whose blob and table files the test lists and stats while
/// it is open: no automatic compaction (with GC it deletes blob files at any moment); the
/// tests compact by hand.
fn source_opts() -> Options {
    let mut o = opts();
    o.set_disable_auto_compactions(true);
    o
}

/// Values of 400+ bytes (blob files) for even keys, 20-byte ones (inline) for odd keys.
fn fill(db: &DB, round: u32, range: std::ops::Range<u32>) {
    for i in range {
        let v = if i % 2 == 0 { format!("r{round}-{i}-").repeat(50) } else { format!("s{round}-{i}") };
        db.put(format!("key{i:05}"), v).expect("put");
    }
}

fn blob_files(dir: &Path) -> Vec<PathBuf> {
    files_with_suffix(dir, ".blob")
}

fn engine(dir: &Path) -> BackupEngine {
    let mut o = BackupEngineOptions::new(dir).expect("options");
    o.set_max_background_operations(2);
    BackupEngine::open(&o, &Env::new().expect("env")).expect("open engine")
}

fn restore(be: &mut BackupEngine, id: Option<u32>, to: &Path) -> shale::Result<()> {
    let o = RestoreOptions::default();
    match id {
        Some(id) => be.restore_from_backup(to, to, &o, id),
        None => be.restore_from_latest_backup(to, to, &o),
    }
}

#[test]
fn checkpoint_links_blob_files_and_outlives_their_deletion() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let db = DB::open(&source_opts(), &src).expect("open");
    fill(&db, 1, 0..600);
    db.flush().expect("flush");
    fill(&db, 2, 300..700); // in the memtable: flushed by the checkpoint
    let want = shale_scan_default(&db);
    let cp = tmp.path().join("cp");
    Checkpoint::new(&db).expect("cp").create_checkpoint(&cp).expect("create");
    let cp_blobs = blob_files(&cp);
    assert!(cp_blobs.len() >= 2, "the checkpoint holds the blob files: {cp_blobs:?}");
    for b in &cp_blobs {
        let orig = src.join(b.file_name().expect("name"));
        assert_eq!(
            std::fs::metadata(b).expect("meta").ino(),
            std::fs::metadata(&orig).expect("meta").ino(),
            "{b:?} is a hard link"
        );
    }
    // The source overwrites everything and compacts with GC: its old blob files go.
    fill(&db, 3, 0..700);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for b in &cp_blobs {
        assert!(!src.join(b.file_name().expect("name")).exists(), "{b:?} left the source");
    }
    let c = DB::open(&opts(), &cp).expect("open checkpoint");
    assert_same_pairs(&shale_scan_default(&c), &want, "checkpoint");
    assert_eq!(c.get("key00400").expect("get").expect("found"), "r2-400-".repeat(50).into_bytes());
}

#[test]
fn backups_share_blob_files_restore_them_and_find_damage() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bdir = tmp.path().join("backups");
    let shared = bdir.join("shared_checksum");
    let db = DB::open(&source_opts(), tmp.path().join("db")).expect("open");
    fill(&db, 1, 0..600);
    db.flush().expect("flush");
    fill(&db, 1, 600..650); // left in the WAL, copied with the backup
    let want1 = shale_scan_default(&db);
    let mut be = engine(&bdir);
    be.create_new_backup(&db).expect("backup 1");
    let first = blob_files(&shared);
    assert_eq!(first.len(), blob_files(&tmp.path().join("db")).len(), "every blob file backed up");
    for p in &first {
        // <number>_<crc32c>_<size>.blob, the size the file's.
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        let parts: Vec<&str> = name.trim_end_matches(".blob").split('_').collect();
        assert_eq!(parts.len(), 3, "{name}");
        assert_eq!(
            parts[2].parse::<u64>().expect("size"),
            std::fs::metadata(p).expect("meta").len(),
            "{name}"
        );
        parts[1].parse::<u32>().expect("crc32c");
    }
    let mtimes: Vec<_> =
        first.iter().map(|p| std::fs::metadata(p).expect("meta").modified().expect("mtime")).collect();
    fill(&db, 2, 0..100);
    db.flush().expect("flush");
    let want2 = shale_scan_default(&db);
    be.create_new_backup_flush(&db, true).expect("backup 2");
    for (p, t) in first.iter().zip(&mtimes) {
        assert_eq!(
            std::fs::metadata(p).expect("kept").modified().expect("mtime"),
            *t,
            "{p:?} not copied again"
        );
    }
    assert!(blob_files(&shared).len() > first.len(), "the new blob file is added");
    // Overwrite and compact with GC: backup 3 holds new blob files only.
    fill(&db, 3, 0..650);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let want3 = shale_scan_default(&db);
    be.create_new_backup_flush(&db, true).expect("backup 3");
    drop(db);
    for (id, want) in [(1, &want1), (2, &want2), (3, &want3)] {
        be.verify_backup(id).expect("verify");
        let to = tmp.path().join(format!("restored{id}"));
        restore(&mut be, Some(id), &to).expect("restore");
        assert!(!blob_files(&to).is_empty(), "backup {id} restores blob files");
        assert_same_pairs(
            &shale_scan_default(&DB::open(&opts(), &to).expect("open restore")),
            want,
            &format!("backup {id}"),
        );
    }
    // Purging backups 1 and 2 removes the blob files only they held.
    be.purge_old_backups(1).expect("purge");
    for p in &first {
        assert!(!p.exists(), "{p:?} purged");
    }
    // A damaged blob file: verify and restore say Corruption.
    let b = blob_files(&shared).into_iter().next().expect("a blob file");
    let mut bytes = std::fs::read(&b).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&b, &bytes).expect("write");
    assert_eq!(be.verify_backup(3).expect_err("damaged").kind(), ErrorKind::Corruption);
    let to = tmp.path().join("damaged");
    assert_eq!(restore(&mut be, None, &to).expect_err("damaged").kind(), ErrorKind::Corruption);
    assert!(!to.join("CURRENT").exists(), "a failed restore leaves no CURRENT");
}

#[test]
fn blob_checkpoints_and_backups_cross_over_with_ldb() {
    if !tools_available("blob checkpoint/backup interop", &["ldb"]) {
        return;
    }
    interop("RocksDB 7.8.3");
}

#[test]
fn blob_checkpoints_and_backups_cross_over_with_ldb_11() {
    if !use_rocksdb_11("blob checkpoint/backup interop (11.8.1)") {
        return;
    }
    interop("RocksDB 11.8.1");
}

fn interop(rocksdb: &str) {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let want;
    // RocksDB 7.8.3 reads format_version 5 tables, not Shale's default 7 (11.x's).
    let mut o = opts();
    if rocksdb.contains("7.8.3") {
        for_rocksdb7(&mut o);
    }
    {
        let db = DB::open(&o, &src).expect("open");
        fill(&db, 1, 0..500);
        db.flush().expect("flush");
        fill(&db, 2, 0..200);
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        fill(&db, 3, 450..550);
        db.flush().expect("flush");
        want = shale_scan_default(&db);
        assert!(!blob_files(&src).is_empty());
        let cp = tmp.path().join("cp");
        Checkpoint::new(&db).expect("cp").create_checkpoint(&cp).expect("create");
        assert_same_pairs(&ldb_scan(&cp, None), &want, &format!("{rocksdb} ldb scan of Shale's checkpoint"));
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
    assert!(!blob_files(&rocks_restored).is_empty(), "{rocksdb} restored the blob files");
    assert_same_pairs(
        &ldb_scan(&rocks_restored, None),
        &want,
        &format!("{rocksdb} ldb restore of Shale's backup"),
    );

    // `ldb checkpoint` of the Shale database opens in Shale.
    let ldb_cp = tmp.path().join("ldb_cp");
    run_tool(
        "ldb",
        &[
            format!("--db={}", src.display()),
            "checkpoint".into(),
            format!("--checkpoint_dir={}", ldb_cp.display()),
        ],
    );
    assert!(!blob_files(&ldb_cp).is_empty(), "{rocksdb}'s checkpoint holds the blob files");
    let c = DB::open(&opts(), &ldb_cp).expect("open ldb checkpoint");
    assert_same_pairs(&shale_scan_default(&c), &want, &format!("Shale reading {rocksdb} ldb's checkpoint"));
    drop(c);

    // `ldb backup` of the Shale database restores with Shale's BackupEngine.
    let ldb_backups = tmp.path().join("ldb_backups");
    run_tool(
        "ldb",
        &[
            format!("--db={}", src.display()),
            "backup".into(),
            format!("--backup_dir={}", ldb_backups.display()),
        ],
    );
    assert!(!blob_files(&ldb_backups.join("shared_checksum")).is_empty(), "{rocksdb} shares blob files");
    let mut be = engine(&ldb_backups);
    let id = be.get_backup_info()[0].backup_id;
    be.verify_backup(id).unwrap_or_else(|e| panic!("verify {rocksdb} ldb's backup: {e}"));
    let restored = tmp.path().join("shale_restored");
    restore(&mut be, None, &restored).unwrap_or_else(|e| panic!("restore {rocksdb} ldb's backup: {e}"));
    assert_same_pairs(
        &shale_scan_default(&DB::open(&opts(), &restored).expect("open")),
        &want,
        &format!("Shale restore of {rocksdb} ldb's backup"),
    );
    assert_same_pairs(&ldb_scan(&restored, None), &want, &format!("{rocksdb} ldb scan of the restore"));
}
