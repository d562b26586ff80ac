//! `CompactOptions::set_bottommost_level_compaction`: after CompactRange has moved the range
//! down to the last level, that level is compacted into itself as RocksDB 11.8.1's
//! CompactRangeInternal does — `Skip` and `IfHaveCompactionFilter` (without a filter) never,
//! `Force` and `ForceOptimized` always, both over the tables that were there before the call
//! only (RocksDB 11 passes both the same `max_file_num_to_ignore`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeSet;

use shale::{BottommostLevelCompaction, CompactOptions, Options, DB};

fn number(name: &str) -> u64 {
    name.trim_start_matches('/').trim_end_matches(".sst").parse().unwrap()
}

/// The table numbers of the last level (6).
fn last_level(db: &DB) -> BTreeSet<u64> {
    db.live_files().unwrap().iter().filter(|f| f.level == 6).map(|f| number(&f.name)).collect()
}

fn all_tables(db: &DB) -> BTreeSet<u64> {
    db.live_files().unwrap().iter().map(|f| number(&f.name)).collect()
}

/// Writes `a000..a099` and compacts them to the last level, then writes `second` keys
/// (`b...`: beside them; `a...`: over half of them) and flushes them to level 0, then
/// compacts everything with `policy`. Returns (last level before the call, every table
/// before it, last level after it).
fn scenario(
    policy: BottommostLevelCompaction,
    overlapping: bool,
) -> (BTreeSet<u64>, BTreeSet<u64>, BTreeSet<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..100 {
        db.put(format!("a{i:03}"), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let first = last_level(&db);
    assert!(!first.is_empty(), "the first compaction reaches the last level");
    for i in 0..100 {
        let k = if overlapping { format!("a{:03}", i + 50) } else { format!("b{i:03}") };
        db.put(k, format!("w{i}")).unwrap();
    }
    db.flush().unwrap();
    let before = all_tables(&db);
    let mut co = CompactOptions::default();
    co.set_bottommost_level_compaction(policy);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    let after = last_level(&db);
    // Whatever the policy, every key reads as written, all of it in the last level.
    assert_eq!(all_tables(&db), after, "{policy:?}: everything ends in the last level");
    for i in 0..100 {
        let want = if overlapping && i >= 50 { format!("w{}", i - 50) } else { format!("v{i}") };
        assert_eq!(db.get(format!("a{i:03}")).unwrap().unwrap(), want.as_bytes(), "{policy:?}");
    }
    (first, before, after)
}

#[test]
fn skip_and_default_leave_the_last_level_tables_the_range_did_not_move_into() {
    for policy in [BottommostLevelCompaction::Skip, BottommostLevelCompaction::IfHaveCompactionFilter] {
        let (first, _, after) = scenario(policy, false);
        assert!(first.is_subset(&after), "{policy:?}: {first:?} rewritten, last level now {after:?}");
    }
}

#[test]
fn force_and_force_optimized_rewrite_the_tables_that_were_there_before() {
    for policy in [BottommostLevelCompaction::Force, BottommostLevelCompaction::ForceOptimized] {
        let (first, before, after) = scenario(policy, false);
        assert!(first.is_disjoint(&after), "{policy:?} kept {first:?}: last level {after:?}");
        // The level-0 table moved down unchanged is one of them too (it was there before).
        let newest_before = *before.iter().max().unwrap();
        assert!(after.iter().all(|n| *n > newest_before), "{policy:?}: {before:?} -> {after:?}");
    }
}

#[test]
fn force_and_force_optimized_skip_what_the_call_wrote() {
    // The overlapping level-0 table is merged with the last level's table by the step down,
    // so everything in the last level afterwards was written by the call: the bottommost
    // compaction finds nothing of its own to do, and both policies end where Skip ends.
    let (_, _, skipped) = scenario(BottommostLevelCompaction::Skip, true);
    for policy in [BottommostLevelCompaction::Force, BottommostLevelCompaction::ForceOptimized] {
        let (_, before, after) = scenario(policy, true);
        let newest_before = *before.iter().max().unwrap();
        assert!(after.iter().all(|n| *n > newest_before), "the step down rewrote the overlap");
        assert_eq!(after, skipped, "{policy:?} compacted the call's own output again");
    }
}
