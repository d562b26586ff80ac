//! Age-based compactions (RocksDB's `ttl` and `periodic_compaction_seconds` for leveled
//! style): tables rewrite themselves once old enough, with no other trigger, and keep their
//! data; the values in force are written to LOG.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::time::{Duration, Instant};

use shale::{Options, DB};

fn files(db: &DB) -> Vec<(i32, String)> {
    db.live_files().unwrap().into_iter().map(|f| (f.level, f.name)).collect()
}

fn wait_for(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(secs), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log_text(path: &Path) -> String {
    std::fs::read_to_string(path.join("LOG")).unwrap()
}

#[test]
fn periodic_compaction_rewrites_old_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_level_compaction_dynamic_level_bytes(false);
    opts.set_periodic_compaction_seconds(1);
    let db = DB::open(&opts, &path).unwrap();
    assert!(log_text(&path).contains("Options.periodic_compaction_seconds: 1\n"));
    // RocksDB's ttl default for block-based tables: 30 days.
    assert!(log_text(&path).contains("Options.ttl: 2592000\n"));
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    let first = files(&db);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0, 0);
    // The level-0 table goes down, then the last level's table rewrites itself: no level is
    // over its target, only age triggers these.
    wait_for(60, "a periodic compaction", || files(&db).iter().all(|(l, n)| *l == 1 && *n != first[0].1));
    let second = files(&db);
    wait_for(60, "a second periodic compaction", || {
        let now = files(&db);
        now.len() == 1 && now[0].0 == 1 && now != second
    });
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn ttl_moves_old_data_down_and_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_level_compaction_dynamic_level_bytes(false);
    opts.set_ttl(1);
    let db = DB::open(&opts, &path).unwrap();
    // In level style ttl and periodic compaction are apart (RocksDB's SanitizeCfOptions);
    // periodic compaction's default is off without a compaction filter.
    assert!(log_text(&path).contains("Options.ttl: 1\n"));
    assert!(log_text(&path).contains("Options.periodic_compaction_seconds: 0\n"));
    // A table on level 1 first: RocksDB's TTL compaction leaves the last non-empty level
    // alone (kSkipLastLevel), so an only table on level 0 would stay.
    db.put(b"z", b"0").unwrap();
    db.flush().unwrap();
    let mut co = shale::CompactOptions::default();
    co.set_change_level(true);
    co.set_target_level(1);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    assert!(files(&db).iter().all(|(l, _)| *l == 1), "{:?}", files(&db));
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    wait_for(60, "the level-0 table to move down", || files(&db).iter().all(|(l, _)| *l >= 1));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"z").unwrap().as_deref(), Some(&b"0"[..]));
    drop(db);

    // Off (0), periodic compaction at its default (off without a compaction filter):
    // nothing moves.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_ttl(0);
    let db = DB::open(&opts, &path).unwrap();
    assert!(log_text(&path).contains("Options.ttl: 0\n"));
    assert!(log_text(&path).contains("Options.periodic_compaction_seconds: 0\n"));
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    let before = files(&db);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(files(&db), before);
}
