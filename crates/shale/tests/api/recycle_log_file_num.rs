//! `recycle_log_file_num`: an obsolete WAL is kept and reused as a later WAL (renamed, the
//! same inode, overwritten from its start in the recyclable record format), recovery of a
//! reused file reads none of its stale records (after a clean close, from a crash image,
//! and with a torn last record), and RocksDB 11.8.1's sanitizing and refusals hold: off
//! with the WAL archive and with the strict recovery modes (the OPTIONS file says 0), and
//! `disable_wal` writes refused while it is on.
//! The kill -9 case is `faults/wal_recycle_kill.rs`; RocksDB reading such a WAL is
//! `interop/wal_recycle.rs`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use shale::{DBRecoveryMode, ErrorKind, Options, WriteOptions, DB};

use crate::util::{self, FsHooks, HookedFs};

/// Records every reuse: (new WAL path, old WAL path).
#[derive(Default, Clone)]
struct Reuses(Arc<Mutex<Vec<(PathBuf, PathBuf)>>>);

impl FsHooks for Reuses {
    fn before_reuse(&self, path: &Path, old: &Path) {
        self.0.lock().unwrap().push((path.to_path_buf(), old.to_path_buf()));
    }
}

fn options(fs: Option<Arc<dyn shale::fs::FileSystem>>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_recycle_log_file_num(2);
    if let Some(fs) = fs {
        o.set_file_system(fs);
    }
    o
}

fn wal_number(p: &Path) -> u64 {
    p.file_name().unwrap().to_str().unwrap().trim_end_matches(".log").parse().unwrap()
}

fn sync_opts() -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_sync(true);
    w
}

/// The recyclable record types (RocksDB's kRecyclableFullType..kRecyclableLastType).
fn is_recyclable(t: u8) -> bool {
    (5..=8).contains(&t)
}

/// A database whose third WAL reuses the first: WAL 1 holds 500 puts of `old`, flushed;
/// WAL 2 one put, flushed; the reused file then gets `fresh` puts. Returns the old file's
/// bytes before the reuse, the reused file's path and the model.
fn reused_wal_db(dir: &Path, fresh: u32) -> (DB, Vec<u8>, PathBuf, util::Model, Reuses) {
    let reuses = Reuses::default();
    let fs = HookedFs::new(shale::fs::default_fs(), reuses.clone());
    let db = DB::open(&options(Some(fs)), dir).unwrap();
    let mut model = util::Model::new();
    for i in 0..500u32 {
        let (k, v) = (format!("key{i:04}").into_bytes(), format!("old value {i}").repeat(5).into_bytes());
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    let first = util::files_ending(dir, ".log");
    assert_eq!(first.len(), 1, "{first:?}");
    let first = dir.join(&first[0]);
    let ino = std::fs::metadata(&first).unwrap().ino();
    let records = std::fs::read(&first).unwrap();
    assert!(is_recyclable(records[6]), "WAL records in the recyclable format: type {}", records[6]);
    db.flush().unwrap();
    db.put(b"middle", b"m").unwrap();
    model.insert(b"middle".to_vec(), b"m".to_vec());
    assert!(reuses.0.lock().unwrap().is_empty(), "nothing reused before the second switch");
    let stale = std::fs::read(&first).unwrap();
    db.flush().unwrap();
    let got = reuses.0.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    let (reused, old) = got[0].clone();
    assert_eq!(old, first, "the first WAL is the one reused");
    assert!(wal_number(&reused) > wal_number(&first));
    assert!(!first.exists(), "the old name is gone");
    assert_eq!(std::fs::metadata(&reused).unwrap().ino(), ino, "the same file, renamed");
    for i in 0..fresh {
        let (k, v) = (format!("key{:04}", i * 7).into_bytes(), format!("new {i}").into_bytes());
        db.put_opt(&k, &v, &sync_opts()).unwrap();
        model.insert(k, v);
    }
    (db, stale, reused, model, reuses)
}

/// Where the records of log `number` end in `wal` (recyclable headers, one block: each is
/// crc(4) len(2) type(1) log number(4) payload).
fn new_records_end(wal: &[u8], number: u64) -> usize {
    let mut at = 0;
    while at + 11 <= wal.len() {
        let len = u16::from_le_bytes([wal[at + 4], wal[at + 5]]) as usize;
        let log = u32::from_le_bytes(wal[at + 7..at + 11].try_into().unwrap());
        if !is_recyclable(wal[at + 6]) || u64::from(log) != number {
            break;
        }
        at += 11 + len;
    }
    assert!(at > 0 && at < 32 * 1024, "new records end at {at}");
    at
}

#[test]
fn an_obsolete_wal_is_reused_in_place_and_its_stale_records_never_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (db, stale, reused, model, _) = reused_wal_db(&dir, 10);
    util::check_model(&db, &model, "before close");
    let open_bytes = std::fs::read(&reused).unwrap();
    assert_eq!(
        open_bytes.len(),
        stale.len(),
        "while open the reused file keeps its old length (its old tail)"
    );
    let written = new_records_end(&open_bytes, wal_number(&reused));
    drop(db);
    // Closed: cut to its new records, as RocksDB's PosixWritableFile::Close truncates a file
    // that had a preallocation block (every WAL) to the bytes written.
    let bytes = std::fs::read(&reused).unwrap();
    assert_eq!(bytes.len(), written, "the reused file ends at its new records after close");
    assert!(is_recyclable(bytes[6]));
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("to recycle list"), "LOG says a WAL was kept");
    assert!(log.contains("from recycle list"), "LOG says a WAL was reused");
    // A clean reopen replays the ten new records and none of the 500 stale ones. Recovery
    // flushes them, and the reused WAL ends as an obsolete file.
    let db = DB::open(&options(None), &dir).unwrap();
    util::check_model(&db, &model, "after reopen");
    drop(db);
    // SkipAnyCorruptedRecord keeps recycling on; it steps over the stale records.
    let mut o = options(None);
    o.set_wal_recovery_mode(DBRecoveryMode::SkipAnyCorruptedRecord);
    let db = DB::open(&o, &dir).unwrap();
    util::check_model(&db, &model, "skip-any reopen");
}

/// A crash image taken after synced writes into the reused file (the directory copied while
/// the database is open), then the same image with its last record torn: its second half
/// still the stale bytes the file held before. Recovery keeps every record before the torn
/// one and none of the stale ones.
#[test]
fn crash_images_of_a_reused_wal_recover_without_stale_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (db, stale, reused, mut model, _) = reused_wal_db(&dir, 20);
    let written = new_records_end(&std::fs::read(&reused).unwrap(), wal_number(&reused));
    let image = tmp.path().join("image");
    std::fs::create_dir(&image).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), image.join(e.file_name())).unwrap();
        }
    }
    drop(db);
    let torn = tmp.path().join("torn");
    std::fs::create_dir(&torn).unwrap();
    for e in std::fs::read_dir(&image).unwrap().flatten() {
        std::fs::copy(e.path(), torn.join(e.file_name())).unwrap();
    }
    let image_wal = std::fs::read(image.join(reused.file_name().unwrap())).unwrap();
    assert!(written > 0 && written < image_wal.len(), "{written} of {}", image_wal.len());
    assert_eq!(&image_wal[written..], &stale[written..], "past the new records: the stale bytes");
    let db = DB::open(&options(None), &image).unwrap();
    util::check_model(&db, &model, "crash image");
    drop(db);
    // Tear the last record: its last 5 bytes back to what the file held before.
    let mut t = image_wal.clone();
    t[written - 5..written].copy_from_slice(&stale[written - 5..written]);
    assert_ne!(t, image_wal, "the stale bytes differ from the record's");
    std::fs::write(torn.join(reused.file_name().unwrap()), &t).unwrap();
    model.insert(
        format!("key{:04}", 19 * 7).into_bytes(),
        format!("old value {}", 19 * 7).repeat(5).into_bytes(),
    );
    let db = DB::open(&options(None), &torn).unwrap();
    util::check_model(&db, &model, "torn last record");
}

#[test]
fn sanitized_off_as_rocksdb_and_disable_wal_refused_while_on() {
    let tmp = tempfile::tempdir().unwrap();
    let text = |dir: &Path| {
        let name =
            util::files_ending(dir, "").into_iter().filter(|n| n.starts_with("OPTIONS-")).max().unwrap();
        std::fs::read_to_string(dir.join(name)).unwrap()
    };
    // On: the OPTIONS file says so; a write without WAL is refused with RocksDB's message.
    let on = tmp.path().join("on");
    {
        let db = DB::open(&options(None), &on).unwrap();
        assert!(text(&on).contains("recycle_log_file_num=2"), "{}", text(&on));
        let mut w = WriteOptions::default();
        w.disable_wal(true);
        let e = db.put_opt(b"k", b"v", &w).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(
            e.to_string().contains(
                "WriteOptions::disableWAL option is not supported if DBOptions::recycle_log_file_num > 0"
            ),
            "{e}"
        );
    }
    // Off, as RocksDB's SanitizeOptions: with the archive, and with the two strict modes.
    type Set = fn(&mut Options);
    let cases: [(&str, Set); 4] = [
        ("ttl", |o| o.set_wal_ttl_seconds(1000)),
        ("size", |o| o.set_wal_size_limit_mb(10)),
        ("tolerate", |o| o.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords)),
        ("absolute", |o| o.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency)),
    ];
    for (name, set) in cases {
        let dir = tmp.path().join(name);
        let mut o = options(None);
        set(&mut o);
        let db = DB::open(&o, &dir).unwrap();
        assert!(text(&dir).contains("recycle_log_file_num=0"), "{name}");
        let mut w = WriteOptions::default();
        w.disable_wal(true);
        db.put_opt(b"k", b"v", &w).unwrap();
        db.put(b"a", b"b").unwrap();
        db.flush().unwrap();
        db.put(b"c", b"d").unwrap();
        db.flush().unwrap();
        db.put(b"e", b"f").unwrap();
        // Read while open: the close flushes (a write without WAL left unpersisted data).
        let newest = util::files_ending(&dir, ".log").into_iter().max().unwrap();
        let wal = std::fs::read(dir.join(newest)).unwrap();
        assert_eq!(wal[6], 1, "{name}: a legacy FULL record");
        drop(db);
        let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
        assert!(!log.contains("recycle list"), "{name}: nothing recycled");
    }
}
