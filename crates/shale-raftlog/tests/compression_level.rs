//! `compression_level` (raft-engine's LZ4 acceleration): an engine opened with it writes
//! compressed batches that read back, after a reopen too, and with another level or none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale_raftlog::{Config, Engine, LogBatch, ReadableSize};

fn entry(i: u64) -> Vec<u8> {
    format!("entry {i}: ")
        .into_bytes()
        .into_iter()
        .chain((0..600u64).map(|j| b'a' + ((i + j / 9) % 26) as u8))
        .collect()
}

#[test]
fn batches_written_at_each_level_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_owned();
    let cfg = |level: Option<usize>| Config {
        dir: path.clone(),
        batch_compression_threshold: ReadableSize(1024),
        compression_level: level,
        ..Config::default()
    };
    let levels = [Some(3), None, Some(1), Some(65537), Some(0), Some(200_000)];
    let mut next = 1u64;
    for (round, level) in levels.iter().enumerate() {
        let e = Engine::open(cfg(*level)).unwrap();
        for _ in 0..5 {
            let mut b = LogBatch::default();
            let entries: Vec<Vec<u8>> = (next..next + 8).map(entry).collect();
            b.add_raw_entries(1, next, &entries).unwrap();
            // Above the threshold: this batch's entries go LZ4-compressed.
            assert!(e.write(&mut b, false).unwrap() > 0);
            next += 8;
        }
        for i in 1..next {
            assert_eq!(
                e.get_raw_entry(1, i).unwrap(),
                Some(entry(i)),
                "round {round} level {level:?} entry {i}"
            );
        }
        drop(e);
    }
    // The entries went in compressed: the log files hold far fewer bytes than the entries.
    let raw: usize = (1..next).map(|i| entry(i).len()).sum();
    let on_disk: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "raftlog"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(on_disk < raw as u64 / 2, "{on_disk} bytes of log files for {raw} bytes of entries");
    let e = Engine::open(cfg(None)).unwrap();
    assert_eq!(e.last_index(1), Some(next - 1));
    for i in 1..next {
        assert_eq!(e.get_raw_entry(1, i).unwrap(), Some(entry(i)), "after reopen, entry {i}");
    }
}
