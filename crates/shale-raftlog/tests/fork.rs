//! `Engine::fork`, as raft-engine's: refused with log recycling on or with
//! TolerateAnyCorruption; otherwise the target holds symlinks to every file but the newest
//! of each queue, a copy of the newest, and opens with the same content.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale_raftlog::env::DefaultFileSystem;
use shale_raftlog::{Config, Engine, LogBatch, ReadableSize, RecoveryMode};

#[test]
fn fork_refuses_recycling_and_copies_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let target = dir.path().join("target");
    let refused = Config { dir: source.to_str().unwrap().to_owned(), ..Config::default() };
    let e = Engine::<_, _>::fork(&refused, Arc::new(DefaultFileSystem), &target).unwrap_err();
    assert_eq!(e, "enable_log_recycle should be false");
    let any = Config {
        enable_log_recycle: false,
        recovery_mode: RecoveryMode::TolerateAnyCorruption,
        ..refused.clone()
    };
    assert!(Engine::<_, _>::fork(&any, Arc::new(DefaultFileSystem), &target).is_err());

    let cfg = Config { target_file_size: ReadableSize(1024), enable_log_recycle: false, ..refused };
    {
        let e = Engine::open(cfg.clone()).unwrap();
        for i in 0..8u64 {
            let mut b = LogBatch::default();
            b.put(1, format!("k{i}").into_bytes(), vec![b'v'; 400]).unwrap();
            b.add_raw_entries(2, i + 1, &[vec![i as u8; 300]]).unwrap();
            e.write(&mut b, true).unwrap();
        }
    }
    let details = Engine::<_, _>::fork(&cfg, Arc::new(DefaultFileSystem), &target).unwrap();
    assert!(details.symlinked.len() >= 2, "{details:?}");
    assert_eq!(details.copied.len(), 2, "newest append and rewrite file copied: {details:?}");
    let forked = Engine::open(Config { dir: target.to_str().unwrap().to_owned(), ..cfg.clone() }).unwrap();
    for i in 0..8u64 {
        assert_eq!(forked.get(1, format!("k{i}").as_bytes()), Some(vec![b'v'; 400]));
        assert_eq!(forked.get_raw_entry(2, i + 1).unwrap(), Some(vec![i as u8; 300]));
    }
}
