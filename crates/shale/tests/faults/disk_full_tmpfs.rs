//! A real full disk: the database runs on the POSIX file system in a small tmpfs (mounted
//! by the test; it needs root, and is skipped with a printed reason otherwise). Synced
//! writes go on until one fails with no space — wherever it hits: WAL append, flush,
//! compaction, MANIFEST. Then reads must return every acknowledged write; after a filler
//! file made beforehand in the same tmpfs is deleted, `resume()` brings writes back; and
//! after close and reopen every acknowledged write is there. The tmpfs is unmounted at the
//! end, also when the test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Command;
use util::{check_model, value, Model};

/// Poorly compressible values, so the disk fills at the pace of the writes.
const VALUE_LEN: usize = 1000;

use shale::{Options, WriteOptions, DB};

/// Unmounts the tmpfs when dropped (test success or panic).
struct Mount {
    dir: PathBuf,
}

impl Mount {
    fn new(dir: &Path, size: &str) -> Result<Mount, String> {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("running mount: {e}"))?;
        if !out.status.success() {
            return Err(format!("mount failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(Mount { dir: dir.to_path_buf() })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(&self.dir).status().is_ok_and(|s| s.success());
        if !ok {
            // Still busy (a panic left files open): detach it lazily.
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}

#[test]
fn writes_stop_on_a_full_tmpfs_and_resume_after_space_is_freed() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: mounting a tmpfs needs root");
        return;
    }
    // Small memtables: a flush (or compaction) meets the full disk first.
    scenario(256 << 10, 2 << 20);
    // One big memtable: the WAL append meets it first (a torn record on a real file).
    scenario(64 << 20, 5 << 20);
}

fn scenario(write_buffer_size: usize, filler_size: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let mount = match Mount::new(tmp.path(), "8m") {
        Ok(m) => m,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let filler = mount.dir.join("filler");
    std::fs::write(&filler, vec![0xa5u8; filler_size]).unwrap();
    let path = mount.dir.join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(write_buffer_size);
    o.set_target_file_size_base(512 << 10);
    o.set_bgerror_resume_retry_interval(50_000);
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    let mut model = Model::new();
    let db = DB::open(&o, &path).unwrap();
    let mut i = 0;
    let err = loop {
        assert!(i < 100_000, "an 8 MiB tmpfs never filled up");
        let k = format!("k{i:06}").into_bytes();
        match db.put_opt(&k, value(i as u64, VALUE_LEN), &sync) {
            Ok(()) => {
                model.insert(k, value(i as u64, VALUE_LEN));
            }
            Err(e) => break e,
        }
        i += 1;
    };
    assert!(err.is_no_space(), "the write failed with {err}, not no-space");
    println!("disk full after {} acknowledged writes: {err}", model.len());
    // Reads go on. A write either fails with no space or — when recovery found room (the
    // failed table was removed) — is acknowledged like any other.
    match db.put_opt(b"more", b"x", &sync) {
        Ok(()) => {
            model.insert(b"more".to_vec(), b"x".to_vec());
        }
        Err(e) => assert!(e.is_no_space(), "{e}"),
    }
    check_model(&db, &model, "on the full disk");
    if let Err(e) = db.resume() {
        assert!(e.is_no_space(), "resume on the full disk: {e}");
    }
    // Free space, then resume (an automatic attempt may get there first: then Ok too).
    std::fs::remove_file(&filler).unwrap();
    db.resume().unwrap_or_else(|e| panic!("resume after freeing space: {e}"));
    for j in 0..200 {
        let k = format!("r{j:04}").into_bytes();
        db.put_opt(&k, b"after", &sync).unwrap_or_else(|e| panic!("write {j} after resume: {e}"));
        model.insert(k, b"after".to_vec());
    }
    check_model(&db, &model, "after resume");
    drop(db);
    let db = DB::open(&o, &path).unwrap();
    check_model(&db, &model, "after reopening");
    drop(db);
    drop(mount);
}
