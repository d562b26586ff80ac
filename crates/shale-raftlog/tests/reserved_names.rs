//! Reserved (recycled) files are numbered on a counter of their own: a purge never renames
//! a log file over a reserved file already in the directory. raft-engine numbers its
//! reserved files on its own counter, independent of the log files' sequence numbers, so
//! a directory it wrote can hold `0000000000000002.raftlog.reserved` beside
//! `0000000000000002.raftlog`; purging file 2 must keep that reserved file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::Path;

use shale_raftlog::{Config, Engine, LogBatch, LogQueue, ReadableSize};

fn reserved(dir: &Path) -> BTreeMap<u64, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(n) = name.strip_suffix(".raftlog.reserved") {
            out.insert(n.parse::<u64>().unwrap(), std::fs::read(dir.join(&name)).unwrap());
        }
    }
    out
}

#[test]
fn purge_does_not_rename_over_a_reserved_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        dir: dir.path().to_str().unwrap().to_owned(),
        target_file_size: ReadableSize::kb(4),
        purge_threshold: ReadableSize::kb(64),
        ..Config::default()
    };
    let region = 1;
    let mut next = 1u64;
    {
        let e = Engine::open(cfg.clone()).unwrap();
        // Files 1..=5 of the append queue, then a clean close.
        while e.file_span(LogQueue::Append).1 < 5 {
            let mut b = LogBatch::default();
            b.add_raw_entries(region, next, &[vec![7u8; 1000]]).unwrap();
            e.write(&mut b, true).unwrap();
            next += 1;
        }
    }
    // Reserved files as raft-engine numbers them (1, 2, 3 here), beside log files 1..=5.
    for n in 1..=3u64 {
        let marker = format!("raft-engine's reserved file {n}").into_bytes();
        std::fs::write(dir.path().join(format!("{n:016}.raftlog.reserved")), marker).unwrap();
    }
    let before = reserved(dir.path());
    let e = Engine::open(cfg.clone()).unwrap();
    assert_eq!(e.recycled_files(), 3);
    // Everything compacted away: files below the active one are purged (and recycled).
    e.compact_to(region, next);
    e.purge_expired_files().unwrap();
    let first = e.file_span(LogQueue::Append).0;
    // The reopen started file 6; files 1..=5 are purged.
    assert_eq!(first, 6, "files 1..=5 purged");
    let purged = 5;
    assert_eq!(e.recycled_files(), 3 + purged);
    drop(e);
    let after = reserved(dir.path());
    // raft-engine's reserved files are still there, each as it was.
    for (n, content) in &before {
        // (Not assert_eq: a failure would print whole files.)
        assert!(after.get(n) == Some(content), "reserved file {n} overwritten or removed by a purge");
    }
    // The purged files went to numbers of their own, after raft-engine's.
    assert_eq!(after.len(), before.len() + purged, "reserved files: {:?}", after.keys().collect::<Vec<_>>());
    assert_eq!(after.keys().copied().collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());

    // And a reopen (which lists them all) followed by more purges keeps numbering past them.
    let e = Engine::open(cfg).unwrap();
    assert_eq!(e.recycled_files(), 8);
    drop(e);
}
