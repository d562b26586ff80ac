//! Crash-point sweep over ingestion, checkpoint, backup and restore: on a fault-injecting
//! in-memory file system that "loses power" at its K-th sync, directory sync or rename (for
//! every K, with and without losing unsynced data), a database ingests two external files
//! (one overlapping its memtable, so a flush runs first), makes a checkpoint, a backup, and
//! restores the backup. After the crash:
//! - the database opens and holds either everything before the ingest or everything after
//!   it (both files, never one), and after it whenever the ingest was acknowledged;
//! - a checkpoint directory that exists opens with the data at the checkpoint (and it
//!   exists whenever the checkpoint was acknowledged);
//! - the backup engine opens; an acknowledged backup verifies and restores with the data;
//!   a backup it lists is always complete;
//! - an acknowledged restore opens with the data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::new_fault_fs;
use shale::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use shale::checkpoint::Checkpoint;
use shale::fs::{FaultInjectionFs, FileSystem, OpKind};
use shale::{Env, IteratorMode, Options, SstFileWriter, WriteOptions, DB};

const KINDS: [OpKind; 3] = [OpKind::Sync, OpKind::DirSync, OpKind::Rename];
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts(fs: &Arc<FaultInjectionFs>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_file_system(fs.clone() as Arc<dyn FileSystem>);
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn scan(db: &DB) -> Model {
    db.iterator(IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterate"))
        .collect()
}

fn open_scan(fs: &Arc<FaultInjectionFs>, dir: &str) -> Model {
    let db = DB::open(&opts(fs), dir).unwrap_or_else(|e| panic!("{dir} does not open: {e}"));
    scan(&db)
}

fn backup_engine(fs: &Arc<FaultInjectionFs>) -> shale::Result<BackupEngine> {
    BackupEngine::open(
        &BackupEngineOptions::new("/bk")?,
        &Env::with_file_system(fs.clone() as Arc<dyn FileSystem>),
    )
}

/// The models before and after the ingest.
struct Models {
    before: Model,
    after: Model,
}

/// Sets the database and the external files up, without faults.
fn setup(fs: &Arc<FaultInjectionFs>) -> Models {
    let db = DB::open(&opts(fs), "/db").expect("open");
    let mut m = Model::new();
    for i in 0..200 {
        db.put(key(i), b"base").expect("put");
        m.insert(key(i), b"base".to_vec());
    }
    db.flush().expect("flush");
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    for i in (0..300).step_by(7) {
        db.put_opt(key(i), b"mem", &wo).expect("put");
        m.insert(key(i), b"mem".to_vec());
    }
    let before = m.clone();
    fs.create_dir_all(Path::new("/ext")).expect("mkdir");
    let o = opts(fs);
    for (name, range, tag) in [("/ext/a.sst", 100..150, "a"), ("/ext/b.sst", 400..450, "b")] {
        let mut w = SstFileWriter::create(&o);
        w.open(name).expect("open sst");
        for i in range {
            w.put(key(i), tag).expect("sst put");
            m.insert(key(i), tag.as_bytes().to_vec());
        }
        w.finish().expect("finish");
    }
    fs.sync_dir(Path::new("/ext")).expect("sync");
    Models { before, after: m }
}

/// What the run acknowledged.
#[derive(Default, Debug)]
struct Done {
    ingest: bool,
    checkpoint: bool,
    backup: bool,
    restore: bool,
}

fn run(fs: &Arc<FaultInjectionFs>) -> Done {
    let mut done = Done::default();
    let Ok(db) = DB::open(&opts(fs), "/db") else { return done };
    if db.ingest_external_file(vec!["/ext/a.sst", "/ext/b.sst"]).is_err() {
        return done;
    }
    done.ingest = true;
    let Ok(cp) = Checkpoint::new(&db) else { return done };
    if cp.create_checkpoint_with_log_size("/cp", u64::MAX).is_err() {
        return done;
    }
    done.checkpoint = true;
    let Ok(mut be) = backup_engine(fs) else { return done };
    if be.create_new_backup(&db).is_err() {
        return done;
    }
    done.backup = true;
    drop(db);
    if be.restore_from_latest_backup("/restored", "/restored", &RestoreOptions::default()).is_err() {
        return done;
    }
    done.restore = true;
    done
}

fn check(fs: &Arc<FaultInjectionFs>, m: &Models, done: &Done, ctx: &str) {
    let got = open_scan(fs, "/db");
    if done.ingest {
        assert!(got == m.after, "{ctx}: an acknowledged ingest is lost");
    } else {
        assert!(got == m.before || got == m.after, "{ctx}: the ingest is partial ({} keys)", got.len());
    }
    if fs.file_exists(Path::new("/cp/CURRENT")) {
        assert!(open_scan(fs, "/cp") == m.after, "{ctx}: the checkpoint holds the wrong data");
    } else {
        assert!(!done.checkpoint, "{ctx}: an acknowledged checkpoint is missing");
    }
    let mut be = backup_engine(fs).unwrap_or_else(|e| panic!("{ctx}: the backup engine does not open: {e}"));
    let info = be.get_backup_info();
    assert!(info.len() <= 1, "{ctx}");
    if let Some(i) = info.first() {
        be.verify_backup(i.backup_id)
            .unwrap_or_else(|e| panic!("{ctx}: a listed backup does not verify: {e}"));
        be.restore_from_backup("/check", "/check", &RestoreOptions::default(), i.backup_id)
            .unwrap_or_else(|e| panic!("{ctx}: a listed backup does not restore: {e}"));
        assert!(open_scan(fs, "/check") == m.after, "{ctx}: the backup holds the wrong data");
    } else {
        assert!(!done.backup, "{ctx}: an acknowledged backup is missing");
    }
    if done.restore {
        assert!(open_scan(fs, "/restored") == m.after, "{ctx}: the restore holds the wrong data");
    }
}

#[test]
fn every_crash_point_leaves_done_or_not_done() {
    for drop_unsynced in [false, true] {
        let mut k = 1;
        loop {
            let fs = new_fault_fs();
            let m = setup(&fs);
            fs.crash_at(&KINDS, k);
            let done = run(&fs);
            let crashed = fs.is_stopped();
            fs.crash(drop_unsynced);
            let ctx = format!("crash point {k} (drop unsynced: {drop_unsynced}), acknowledged {done:?}");
            check(&fs, &m, &done, &ctx);
            if !crashed {
                assert!(done.restore, "{ctx}: the run finished without the crash point but failed");
                assert!(k > 10, "the sweep covered too few crash points ({k})");
                break;
            }
            k += 1;
            assert!(k < 2000, "the sweep does not end");
        }
    }
}
