//! Where files get deleted: a table that compaction removed stays on disk while an iterator
//! still reads it, keeps its data for that iterator, and is deleted soon after the iterator
//! is dropped (by a flush thread, not at the next flush or compaction).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::time::{Duration, Instant};

use shale::{IteratorMode, Options, DB};

fn tables(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    v.sort();
    v
}

#[test]
fn compacted_tables_live_until_the_last_iterator_goes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for round in 0..3 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    let before = tables(dir.path());
    assert_eq!(before.len(), 3, "{before:?}");

    let mut it = db.iterator(IteratorMode::Start);
    assert_eq!(it.next().unwrap().unwrap().1.as_ref(), b"v2");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let after = tables(dir.path());
    assert_eq!(after.len(), 4, "the compaction's output beside the three inputs: {after:?}");
    // The iterator still holds the three old tables: they are on disk and it reads on.
    for t in &before {
        assert!(dir.path().join(t).exists(), "{t} deleted under a live iterator");
    }
    assert_eq!(it.count(), 99);

    // Dropped (count consumed it): the old tables go, without another flush or compaction.
    let deadline = Instant::now() + Duration::from_secs(60);
    while before.iter().any(|t| dir.path().join(t).exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<&String> = before.iter().filter(|t| dir.path().join(t).exists()).collect();
    assert!(left.is_empty(), "still on disk after the iterator was dropped: {left:?}");
    assert_eq!(tables(dir.path()).len(), 1);
    assert_eq!(db.get(b"k050").unwrap().as_deref(), Some(&b"v2"[..]));
}
