//! raft-engine's `prefill_for_recycle` on the real file system: open creates reserved files
//! (a header and zeros, `target_file_size` bytes each) up to raft-engine's count; a rotation
//! takes one in place (the new active file is the target size from its first batch, no
//! zeros written then); sealed files end at their last batch; open with a lower limit
//! removes the extra reserved files. Power loss in the states the files can be left in
//! (a reserved file written in part, one just renamed to the new log file's name, the
//! engine as it runs) loses no acknowledged write in AbsoluteConsistency and leaves no zero
//! tail after the next open.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale_raftlog::{Config, Engine, LogQueue, ReadableSize, RecoveryMode};

mod util;
use util::{check_entries as check, copy_dir, ends_in_zeros, log_files, write_entry as write, HEADER_LEN};

fn reserved_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".raftlog.reserved"))
        .collect();
    v.sort();
    v
}

#[test]
fn reserved_files_prefilled_at_open_and_taken_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let target = 256u64 << 10;
    let cfg = Config {
        dir: db.to_str().unwrap().to_owned(),
        target_file_size: ReadableSize(target),
        purge_threshold: ReadableSize::mb(1),
        prefill_for_recycle: true,
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..Config::default()
    };
    let e = Engine::open(cfg.clone()).unwrap();
    // prefill_limit defaults to purge_threshold: 4 files, x 1.5 = 6 (the recycle capacity
    // allows 6 beside no append file).
    let reserved = reserved_files(&db);
    assert_eq!(reserved.len(), 6, "{reserved:?}");
    assert_eq!(e.recycled_files(), 6);
    let first_header = std::fs::read(&log_files(&db)[0]).unwrap()[..HEADER_LEN].to_vec();
    for r in &reserved {
        let b = std::fs::read(r).unwrap();
        assert_eq!(b.len() as u64, target, "{}", r.display());
        assert_eq!(&b[..HEADER_LEN], &first_header[..], "{}: header", r.display());
        assert!(b[HEADER_LEN..].iter().all(|&x| x == 0), "{}: not zeros", r.display());
    }
    // Batches until three rotations happened: each new active file is a reserved one taken
    // in place, the target size from the first batch on.
    let mut i = 0u64;
    while e.file_span(LogQueue::Append).1 < 4 {
        i += 1;
        write(&e, i);
        let (_, active) = e.file_span(LogQueue::Append);
        if active > 1 {
            let p = log_files(&db).pop().unwrap();
            let len = std::fs::metadata(&p).unwrap().len();
            // The target size from its first batch (one batch may run past it at the end).
            assert!(len >= target, "batch {i}: {} is {len} bytes, not taken in place", p.display());
        }
    }
    let n = i;
    assert_eq!(e.recycled_files(), 3);
    assert_eq!(reserved_files(&db).len(), 3);
    let files = log_files(&db);
    for f in &files[..files.len() - 1] {
        assert!(!ends_in_zeros(f), "sealed {} keeps a zero tail", f.display());
    }
    assert!(ends_in_zeros(files.last().unwrap()), "the active file is not a prefilled one");

    // Crash images, taken while the engine runs (every write acknowledged is synced).
    let image = |name: &str| {
        let p = dir.path().join(name);
        copy_dir(&db, &p);
        p
    };
    let mut zeroed = first_header.clone();
    zeroed.resize(target as usize, 0);
    // a. As it runs: the active file a reserved one taken in place, batches then zeros.
    let a = image("as-is");
    // b. A reserved file just renamed to the next log file's name, no batch in it yet.
    let b = image("renamed");
    let last = files.last().unwrap().file_name().unwrap().to_str().unwrap().to_owned();
    let seq: u64 = last.trim_end_matches(".raftlog").parse().unwrap();
    let taken = reserved_files(&b).remove(0);
    std::fs::remove_file(&taken).unwrap();
    std::fs::write(b.join(format!("{:016}.raftlog", seq + 1)), &zeroed).unwrap();
    // c. A reserved file in part (open was writing it).
    let c = image("reserved-in-part");
    std::fs::write(c.join(format!("{:016}.raftlog.reserved", 99)), &zeroed[..HEADER_LEN + 4096]).unwrap();
    drop(e);
    for f in log_files(&db) {
        assert!(!ends_in_zeros(&f), "{} keeps a zero tail after close", f.display());
    }
    for (p, what) in [(&a, "as is"), (&b, "renamed reserved file"), (&c, "reserved file in part")] {
        check(p, &cfg, n, what);
        // And without the option.
        check(p, &Config { prefill_for_recycle: false, ..cfg.clone() }, n, what);
    }
    check(&db, &cfg, n, "closed cleanly");

    // Open again: reserved files back to raft-engine's count, min(6, recycle capacity 6 -
    // append files found).
    let appends = log_files(&db).len(); // the new active file not created yet
    let e = Engine::open(cfg.clone()).unwrap();
    assert_eq!(e.recycled_files(), 6usize.saturating_sub(appends));
    assert_eq!(reserved_files(&db).len(), 6usize.saturating_sub(appends));
    drop(e);
    check(&db, &cfg, n, "after the reopen");
}

#[test]
fn a_lower_limit_removes_reserved_files_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let target = 64u64 << 10;
    let cfg = Config {
        dir: dir.path().to_str().unwrap().to_owned(),
        target_file_size: ReadableSize(target),
        purge_threshold: ReadableSize(target * 8),
        prefill_for_recycle: true,
        ..Config::default()
    };
    drop(Engine::open(cfg.clone()).unwrap());
    assert_eq!(reserved_files(dir.path()).len(), 12);
    // One file's worth: 1 x 1.5 = 1 kept (beside the 1 append file: capacity 12 - 1).
    let e = Engine::open(Config { prefill_limit: Some(ReadableSize(target)), ..cfg.clone() }).unwrap();
    assert_eq!(e.recycled_files(), 1);
    drop(e);
    let left = reserved_files(dir.path());
    assert_eq!(left.len(), 1, "{left:?}");
    // The oldest kept (raft-engine removes from the newest).
    assert!(left[0].ends_with("0000000000000001.raftlog.reserved"), "{left:?}");
    // Without the option, reserved files are kept as they are.
    let e = Engine::open(Config { prefill_for_recycle: false, ..cfg }).unwrap();
    assert_eq!(e.recycled_files(), 1);
}
