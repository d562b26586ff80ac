//! The bottommost-files pick (`picker::pick_bottommost_files`, helper cfopt, issue 33).

use std::sync::Arc;

use super::picker::*;
use super::test_files::table;
use crate::config::CfConfig;
use crate::key::bytewise_internal_comparator;
use crate::version::edit::FileMetaData;
use crate::version::Version;

fn file(number: u64, lo: &str, hi: &str, seq: u64, created: u64) -> Arc<FileMetaData> {
    Arc::new(FileMetaData { file_creation_time: created, ..table(number, lo, hi, seq, 100) })
}

fn version(files: Vec<(u32, Arc<FileMetaData>)>) -> Version {
    Version::new(bytewise_internal_comparator(), 4, files)
}

fn busy(oldest_snapshot: u64) -> Busy<'static> {
    Busy { oldest_snapshot, ..Default::default() }
}

#[test]
fn only_files_below_the_oldest_snapshot_with_nothing_under_them() {
    let opts = CfConfig::default();
    // #7 at L1 overlaps #9 at L3: not bottommost. #8 at L1 is alone over its range; #9 is
    // at the bottom. #10 has sequence 0 (already compacted at the bottom).
    let v = version(vec![
        (1, file(7, "a", "c", 70, 0)),
        (1, file(8, "m", "p", 80, 0)),
        (3, file(9, "b", "d", 90, 0)),
        (3, file(10, "x", "z", 0, 0)),
    ]);
    assert!(pick_bottommost_files(&v, &opts, busy(0), 1000).is_none(), "no snapshot released yet");
    assert!(pick_bottommost_files(&v, &opts, busy(80), 1000).is_none(), "80 is not below 80");
    let p = pick_bottommost_files(&v, &opts, busy(85), 1000).unwrap();
    assert_eq!((p.level, p.output_level, p.inputs[0].number), (1, 1, 8));
    assert!(p.bottommost && p.rewrite && p.next_inputs.is_empty());
    let p = pick_bottommost_files(&v, &opts, busy(1000), 1000).unwrap();
    assert_eq!(p.inputs[0].number, 8, "by level first; #7 is never bottommost");
    assert_eq!(bottommost_mark_threshold(&v, &opts, 85), 90, "#9 waits for a snapshot past 90");
    assert_eq!(bottommost_mark_threshold(&v, &opts, 1000), u64::MAX);
    // The whole pick, when nothing else is due, names its reason as RocksDB's.
    let p = pick(&v, &opts, busy(1000)).unwrap();
    assert_eq!(p.reason, Some("BottommostFiles"));
    // allow_ingest_behind: RocksDB marks nothing.
    let behind = CfConfig { ingest_behind: true, ..CfConfig::default() };
    assert!(pick_bottommost_files(&v, &behind, busy(1000), 1000).is_none());
}

#[test]
fn level0_files_need_no_older_overlapping_level0_file() {
    let opts = CfConfig::default();
    // Level 0 is newest first: #6 (newer) overlaps the older #5, which overlaps nothing.
    let v = version(vec![(0, file(6, "a", "c", 60, 0)), (0, file(5, "b", "d", 50, 0))]);
    let p = pick_bottommost_files(&v, &opts, busy(100), 1000).unwrap();
    assert_eq!((p.level, p.output_level, p.inputs[0].number), (0, 0, 5));
}

#[test]
fn the_delay_waits_for_the_file_to_age() {
    let v = version(vec![(1, file(8, "m", "p", 80, 10_000))]);
    let delayed = CfConfig { bottommost_file_compaction_delay: 600, ..CfConfig::default() };
    assert!(pick_bottommost_files(&v, &delayed, busy(100), 10_599).is_none(), "599 s old");
    assert!(pick_bottommost_files(&v, &delayed, busy(100), 10_600).is_some(), "600 s old");
    // A clock at or before the delay: every file too new, as RocksDB's.
    assert!(pick_bottommost_files(&v, &delayed, busy(100), 600).is_none());
    // An unknown creation time qualifies.
    let unknown = version(vec![(1, file(8, "m", "p", 80, 0))]);
    assert!(pick_bottommost_files(&unknown, &delayed, busy(100), 10_000).is_some());
    // A busy file is skipped.
    let files = std::collections::HashSet::from([8u64]);
    let b = Busy { files: Some(&files), oldest_snapshot: 100, ..Default::default() };
    assert!(pick_bottommost_files(&unknown, &CfConfig::default(), b, 10_000).is_none());
}
