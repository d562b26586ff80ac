use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::fs::{read_file, write_file_synced, MemFileSystem};
use crate::ErrorKind;

fn setup() -> FaultInjectionFs {
    let base = MemFileSystem::new();
    base.create_dir_all(Path::new("/db")).unwrap();
    FaultInjectionFs::new(Arc::new(base))
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

fn contents(fs: &FaultInjectionFs, path: &str) -> Option<Vec<u8>> {
    fs.file_exists(p(path)).then(|| read_file(fs, p(path)).unwrap())
}

#[test]
fn crash_drops_unsynced_tail_and_undurable_creations() {
    let fs = setup();
    let mut a = fs.new_writable_file(p("/db/a")).unwrap();
    a.append(b"synced").unwrap();
    a.sync().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    a.append(b"+lost").unwrap();
    let mut b = fs.new_writable_file(p("/db/b")).unwrap(); // never dir-synced
    b.append(b"bbb").unwrap();
    b.sync().unwrap();
    assert_eq!(contents(&fs, "/db/a").unwrap(), b"synced+lost");
    fs.crash(true);
    assert_eq!(contents(&fs, "/db/a").unwrap(), b"synced");
    assert_eq!(contents(&fs, "/db/b"), None);
    // Old handles are dead.
    let e = a.append(b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IOError);
    assert!(b.sync().is_err());
}

#[test]
fn crash_without_dropping_keeps_unsynced_data_but_not_entries() {
    let fs = setup();
    let mut a = fs.new_writable_file(p("/db/a")).unwrap();
    a.append(b"one").unwrap();
    fs.sync_dir(p("/db")).unwrap();
    a.append(b"two").unwrap();
    drop(fs.new_writable_file(p("/db/c")).unwrap());
    fs.crash(false);
    assert_eq!(contents(&fs, "/db/a").unwrap(), b"onetwo");
    assert_eq!(contents(&fs, "/db/c"), None);
}

#[test]
fn unsynced_rename_and_remove_are_undone() {
    let fs = setup();
    write_file_synced(&fs, p("/db/CURRENT"), b"old\n").unwrap();
    write_file_synced(&fs, p("/db/gone"), b"keep me").unwrap();
    fs.sync_dir(p("/db")).unwrap();
    write_file_synced(&fs, p("/db/tmp"), b"new\n").unwrap();
    fs.rename(p("/db/tmp"), p("/db/CURRENT")).unwrap();
    fs.remove_file(p("/db/gone")).unwrap();
    assert_eq!(contents(&fs, "/db/CURRENT").unwrap(), b"new\n");
    fs.crash(true);
    assert_eq!(contents(&fs, "/db/CURRENT").unwrap(), b"old\n");
    assert_eq!(contents(&fs, "/db/gone").unwrap(), b"keep me");
    assert_eq!(contents(&fs, "/db/tmp"), None);

    // The same, dir-synced: the changes stick.
    write_file_synced(&fs, p("/db/tmp"), b"new\n").unwrap();
    fs.rename(p("/db/tmp"), p("/db/CURRENT")).unwrap();
    fs.remove_file(p("/db/gone")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    fs.crash(true);
    assert_eq!(contents(&fs, "/db/CURRENT").unwrap(), b"new\n");
    assert_eq!(contents(&fs, "/db/gone"), None);
    assert_eq!(contents(&fs, "/db/tmp"), None);
}

#[test]
fn rename_moves_sync_tracking_with_the_file() {
    let fs = setup();
    let mut w = fs.new_writable_file(p("/db/tmp")).unwrap();
    w.append(b"abc").unwrap();
    w.sync().unwrap();
    w.append(b"def").unwrap();
    fs.rename(p("/db/tmp"), p("/db/final")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    fs.crash(true);
    assert_eq!(contents(&fs, "/db/final").unwrap(), b"abc");
}

#[test]
fn nth_operation_fails_once_or_persistently() {
    let fs = setup();
    let mut w = fs.new_writable_file(p("/db/f")).unwrap();
    fs.fail_nth(OpKind::Write, 2, FaultMode::Once, libc::ENOSPC);
    w.append(b"1").unwrap();
    let e = w.append(b"2").unwrap_err();
    assert!(e.is_no_space(), "{e}");
    w.append(b"3").unwrap();
    assert_eq!(fs.faults_fired(), 1);
    assert_eq!(contents(&fs, "/db/f").unwrap(), b"13");

    fs.fail_nth(OpKind::Sync, 1, FaultMode::Persistent, libc::EIO);
    for _ in 0..3 {
        assert_eq!(w.sync().unwrap_err().os_code(), Some(libc::EIO));
    }
    fs.clear_faults();
    w.sync().unwrap();
    assert_eq!(fs.count(OpKind::Write), 3);
    assert_eq!(fs.count(OpKind::Sync), 4);

    for kind in [OpKind::Rename, OpKind::Create, OpKind::Read, OpKind::Remove, OpKind::DirSync] {
        fs.fail_nth(kind, 1, FaultMode::Once, libc::EIO);
        let r = match kind {
            OpKind::Rename => fs.rename(p("/db/f"), p("/db/g")),
            OpKind::Create => fs.new_writable_file(p("/db/h")).map(|_| ()),
            OpKind::Read => fs.new_random_access_file(p("/db/f")).map(|_| ()),
            OpKind::Remove => fs.remove_file(p("/db/f")),
            _ => fs.sync_dir(p("/db")),
        };
        assert_eq!(r.unwrap_err().os_code(), Some(libc::EIO), "{kind:?}");
    }
    fs.clear_faults();
    let r = fs.new_random_access_file(p("/db/f")).unwrap();
    fs.fail_nth(OpKind::Read, 1, FaultMode::Once, libc::EIO);
    assert!(r.read_at(0, &mut [0u8; 2]).is_err());
    assert_eq!(r.read_at(0, &mut [0u8; 2]).unwrap(), 2);
}

#[test]
fn crash_point_stops_everything_until_crash() {
    let fs = setup();
    let kinds = [OpKind::Sync, OpKind::DirSync, OpKind::Rename];
    fs.crash_at(&kinds, 2);
    let mut w = fs.new_writable_file(p("/db/f")).unwrap();
    w.append(b"a").unwrap();
    w.sync().unwrap(); // point 1
    w.append(b"b").unwrap();
    assert!(fs.sync_dir(p("/db")).is_err()); // point 2: the crash
    assert!(fs.is_stopped());
    assert!(w.append(b"c").is_err());
    assert!(fs.children(p("/db")).is_err());
    assert!(fs.new_writable_file(p("/db/g")).is_err());
    fs.crash(true);
    assert!(!fs.is_stopped());
    // The directory sync never happened, so the file is gone.
    assert_eq!(contents(&fs, "/db/f"), None);
    write_file_synced(&fs, p("/db/g"), b"ok").unwrap();
    assert_eq!(fs.count_of(&kinds), 3);
}

#[test]
fn matching_faults_hit_only_files_with_the_suffix() {
    let fs = setup();
    let mut log = fs.new_writable_file(p("/db/000004.log")).unwrap();
    let mut sst = fs.new_writable_file(p("/db/000005.sst")).unwrap();
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Persistent, libc::ENOSPC);
    log.append(b"wal").unwrap();
    assert!(sst.append(b"x").unwrap_err().is_no_space());
    assert!(sst.append(b"y").unwrap_err().is_no_space(), "persistent");
    log.append(b"more").unwrap();
    assert_eq!(fs.faults_fired(), 2);
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Once, libc::EIO);
    log.append(b"!").unwrap();
    assert_eq!(sst.append(b"z").unwrap_err().os_code(), Some(libc::EIO));
    sst.append(b"z").unwrap();
    fs.clear_faults();
    sst.append(b"w").unwrap();
}
