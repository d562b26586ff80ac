//! Checkpoints: a checkpoint of a live database (tables on several levels, two families,
//! writes left in the memtable) opens on its own with exactly the data at the checkpoint,
//! while the source keeps changing; tables are hard links, the WAL a copy; an existing
//! directory is refused; file deletions are held off while deletions are disabled; and
//! the checkpoint opens in RocksDB 7.8.3's `ldb`, and `ldb checkpoint` of a Shale database
//! opens in Shale.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use crate::tools;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use shale::checkpoint::Checkpoint;
use shale::{ErrorKind, IteratorMode, Options, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(64 * 1024);
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb opens the checkpoints
    o
}

fn scan(db: &DB, cf: Option<&str>) -> Pairs {
    let it = match cf {
        Some(n) => db.iterator_cf(db.cf_handle(n).expect("cf"), IteratorMode::Start),
        None => db.iterator(IteratorMode::Start),
    };
    it.map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterate")).collect()
}

fn fill(db: &DB, round: u32, n: u32) {
    let cf = db.cf_handle("other").expect("cf");
    for i in 0..n {
        let k = format!("key{i:05}");
        db.put(&k, format!("v{round}-{i}-").repeat(8)).expect("put");
        db.put_cf(cf, &k, format!("o{round}-{i}")).expect("put_cf");
    }
}

#[test]
fn checkpoint_of_live_database_opens_with_the_data_at_the_checkpoint() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let db = open_cf_all(&opts(), &src, ["other"]).expect("open");
    fill(&db, 1, 3000);
    db.flush().expect("flush");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    fill(&db, 2, 1500);
    db.delete("key00007").expect("delete");
    let want_default = scan(&db, None);
    let want_other = scan(&db, Some("other"));

    let cp = Checkpoint::new(&db).expect("checkpoint");
    // Writes stay in the WAL: the checkpoint replays its copy.
    let with_wal = tmp.path().join("cp_wal");
    cp.create_checkpoint_with_log_size(&with_wal, u64::MAX).expect("checkpoint with WAL");
    let flushed = tmp.path().join("cp_flushed");
    cp.create_checkpoint(&flushed).expect("checkpoint with flush");
    assert!(!tmp.path().join("cp_flushed.tmp").exists(), "the staging directory is renamed");

    // The source changes afterwards; the checkpoints do not.
    fill(&db, 3, 3000);
    db.flush().expect("flush");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);

    assert!(!sst_files(&with_wal).is_empty());
    // The flushed checkpoint has one WAL, empty.
    let wals = wal_files(&flushed);
    assert_eq!(wals.len(), 1, "{wals:?}");
    assert_eq!(std::fs::metadata(&wals[0]).expect("stat").len(), 0);

    for dir in [&with_wal, &flushed] {
        let c = open_cf_all(&opts(), dir, ["other"]).expect("open checkpoint");
        assert_same_pairs(&scan(&c, None), &want_default, &format!("{} default", dir.display()));
        assert_same_pairs(&scan(&c, Some("other")), &want_other, &format!("{} other", dir.display()));
    }
    // An existing directory is refused.
    let e = cp.create_checkpoint(&flushed).expect_err("exists");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn checkpoint_tables_are_hard_links() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let db = open_cf_all(&opts(), &src, ["other"]).expect("open");
    fill(&db, 1, 500);
    db.flush().expect("flush");
    let cp = tmp.path().join("cp");
    Checkpoint::new(&db).expect("cp").create_checkpoint(&cp).expect("create");
    let tables = sst_files(&src);
    assert!(!tables.is_empty());
    for t in &tables {
        let name = t.file_name().expect("name");
        let a = std::fs::metadata(t).expect("stat");
        let b = std::fs::metadata(cp.join(name)).expect("table in checkpoint");
        assert_eq!(a.ino(), b.ino(), "{name:?} is a hard link");
    }
    // The MANIFEST, CURRENT and OPTIONS are copies.
    let manifest = current_manifest(&cp);
    assert!(manifest.exists());
    assert!(!files_with_suffix(&cp, "").iter().any(|p| p.ends_with("LOCK")));
    assert!(std::fs::read_dir(&cp).expect("ls").any(|e| e
        .expect("entry")
        .file_name()
        .to_string_lossy()
        .starts_with("OPTIONS-")));
}

#[test]
fn disabled_file_deletions_keep_obsolete_tables_until_enabled() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut o = opts();
    o.set_disable_auto_compactions(true);
    let db = open_cf_all(&o, tmp.path(), ["other"]).expect("open");
    db.disable_file_deletions().expect("disable");
    db.disable_file_deletions().expect("disable twice");
    for round in 0..3 {
        fill(&db, round, 200);
        db.flush().expect("flush");
    }
    assert_eq!(sst_files(tmp.path()).len(), 3);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(sst_files(tmp.path()).len(), 4, "compacted inputs stay while deletions are off");
    db.enable_file_deletions().expect("enable once");
    assert_eq!(sst_files(tmp.path()).len(), 4, "one hold is left");
    db.enable_file_deletions().expect("enable twice");
    assert_eq!(sst_files(tmp.path()).len(), 1, "the inputs go with the last hold");
}

fn ldb_db(dir: &Path) -> String {
    format!("--db={}", dir.display())
}

#[test]
fn shale_checkpoint_opens_in_ldb_and_ldb_checkpoint_opens_in_shale() {
    if !tools_available("checkpoint interop", &["ldb"]) {
        return;
    }
    checkpoint_interop("RocksDB 7.8.3");
}

#[test]
fn shale_checkpoint_opens_in_ldb_11_and_ldb_11_checkpoint_opens_in_shale() {
    if !use_rocksdb_11("checkpoint interop (11.8.1)") {
        return;
    }
    checkpoint_interop("RocksDB 11.8.1");
}

fn checkpoint_interop(rocksdb: &str) {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = tmp.path().join("db");
    let want;
    {
        let db = open_cf_all(&opts(), &src, ["other"]).expect("open");
        fill(&db, 1, 2000);
        db.flush().expect("flush");
        fill(&db, 2, 700);
        want = scan(&db, None);
        let cp = tmp.path().join("cp");
        Checkpoint::new(&db).expect("cp").create_checkpoint_with_log_size(&cp, u64::MAX).expect("create");
        // RocksDB reads the checkpoint (and replays its WAL).
        assert_same_pairs(&ldb_scan(&cp, None), &want, &format!("{rocksdb} ldb scan of Shale's checkpoint"));
    }
    // `ldb checkpoint` of Shale's database opens in Shale.
    let ldb_cp = tmp.path().join("ldb_cp");
    run_tool("ldb", &[ldb_db(&src), "checkpoint".into(), format!("--checkpoint_dir={}", ldb_cp.display())]);
    let c = open_cf_all(&opts(), &ldb_cp, ["other"]).expect("open ldb checkpoint");
    assert_same_pairs(&scan(&c, None), &want, &format!("Shale reading {rocksdb} ldb's checkpoint"));
}
