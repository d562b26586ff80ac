//! Table readers pinned in the files' metadata (RocksDB's `FileDescriptor::pinned_reader`,
//! with `max_open_files = -1`): point reads find them without the table cache, and a table
//! that compaction removed closes its reader once no version holds it, as a bounded cache
//! closes it at eviction.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale::{Options, DB};

use crate::util;

/// The paths of `dir`'s tables this process holds open (from /proc/self/fd; a deleted
/// file's link ends in " (deleted)").
fn open_tables(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(target) = std::fs::read_link(e.path()) {
            let s = target.to_string_lossy().replace(" (deleted)", "");
            let p = PathBuf::from(s);
            if p.starts_with(dir) && p.extension().is_some_and(|x| x == "sst") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn check(max_open_files: i32) {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().canonicalize().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_max_open_files(max_open_files);
    let db = DB::open(&o, &dir_path).unwrap();
    for round in 0..3 {
        for i in (round..300).step_by(2) {
            db.put(format!("k{i:04}"), format!("v{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    let before = util::files_ending(&dir_path, ".sst");
    assert_eq!(before.len(), 3, "{before:?}");
    // Every key from the newest table that has it; every table read (and its reader opened).
    let expect = |i: usize| if i >= 2 { format!("v{}-{i}", 2 - (i % 2)) } else { format!("v{}-{i}", i % 2) };
    for i in 0..300 {
        assert_eq!(
            db.get(format!("k{i:04}")).unwrap(),
            Some(expect(i).into_bytes()),
            "key {i} before compaction"
        );
    }
    assert_eq!(db.get(b"k9999").unwrap(), None);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for i in 0..300 {
        assert_eq!(
            db.get(format!("k{i:04}")).unwrap(),
            Some(expect(i).into_bytes()),
            "key {i} after compaction"
        );
    }
    // The inputs leave the disk, and no reader keeps one of them open.
    let old: Vec<PathBuf> = before.iter().map(|t| dir_path.join(t)).collect();
    util::wait_until(60, "the compacted tables to be deleted", || old.iter().all(|p| !p.exists()));
    util::wait_until(60, "the readers of the compacted tables to close", || {
        let open = open_tables(&dir_path);
        !open.iter().any(|p| old.contains(p))
    });
    let now = util::files_ending(&dir_path, ".sst");
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(db.get(b"k0150").unwrap(), Some(expect(150).into_bytes()));
}

#[test]
fn unbounded_table_cache_pins_readers_and_closes_removed_tables() {
    check(-1);
}

#[test]
fn bounded_table_cache_reads_the_same() {
    check(50);
}
