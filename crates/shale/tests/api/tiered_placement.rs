//! `preclude_last_level_data_seconds` (issue 33; mutable CF option, default 0): RocksDB
//! 11.8.1's tiered storage. Data written within that many seconds (by the database's
//! sequence-number-to-time mapping, which the option turns on) stays out of the last level:
//! a compaction into the last level writes those entries to the level above it (the
//! proximal level), older entries to the last level. Time moves by a `MockSystemClock`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::{DBCompactionStyle, MockSystemClock, Options, DB};

const T0: u64 = 1_700_000_000;

fn open(dir: &Path, clock: &Arc<MockSystemClock>, rows: &str, universal: bool) -> DB {
    let mut o = Options::default()
        .get_options_from_string(format!("stats_dump_period_sec=0;stats_persist_period_sec=0;{rows}"))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_stats_history_clock(clock.clone());
    if universal {
        o.set_compaction_style(DBCompactionStyle::Universal);
        o.set_num_levels(7);
    }
    DB::open(&o, dir).unwrap()
}

/// A database in a new directory (see `open`) holding `n` keys starting with `prefix`, written
/// at T0 of its clock; the directory lives as long as the first value.
fn start(
    rows: &str,
    universal: bool,
    prefix: &str,
    n: u32,
) -> (tempfile::TempDir, PathBuf, Arc<MockSystemClock>, DB) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let clock = MockSystemClock::new(T0);
    let db = open(&dir, &clock, rows, universal);
    put_all(&db, prefix, n);
    (tmp, dir, clock, db)
}

/// The level of each live table holding keys starting with `prefix`.
fn levels_of(db: &DB, prefix: &str) -> Vec<i32> {
    let mut l: Vec<i32> = db
        .live_files()
        .unwrap()
        .into_iter()
        .filter(|f| f.start_key.as_deref().is_some_and(|k| k.starts_with(prefix.as_bytes())))
        .map(|f| f.level)
        .collect();
    l.sort();
    l.dedup();
    l
}

fn all_levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().into_iter().map(|f| f.level).collect();
    l.sort();
    l.dedup();
    l
}

fn put_all(db: &DB, prefix: &str, n: u32) {
    for i in 0..n {
        db.put(format!("{prefix}{i:03}"), format!("value-{prefix}{i}")).unwrap();
    }
}

fn check_all(db: &DB, prefix: &str, n: u32) {
    for i in 0..n {
        assert_eq!(
            db.get(format!("{prefix}{i:03}")).unwrap(),
            Some(format!("value-{prefix}{i}").into_bytes()),
            "{prefix}{i:03}"
        );
    }
}

#[test]
fn recent_keys_stay_out_of_the_last_level_after_a_full_compaction() {
    let (_tmp, dir, _, db) = start("preclude_last_level_data_seconds=86400", false, "k", 100);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // Level 0 goes to the base level, the last one (6); every key was written just now, so
    // all of it went to level 5.
    assert_eq!(all_levels(&db), vec![5]);
    check_all(&db, "k", 100);
    let props = db.property_value("rocksdb.num-files-at-level5").unwrap();
    assert_eq!(props.as_deref(), Some("1"));
    // The compaction's event names its proximal output, as RocksDB's.
    drop(db);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("Options.preclude_last_level_data_seconds: 86400\n"), "no LOG option line");
    assert!(log.contains("\"proximal_level_num_output_files\": 1"), "no proximal output in the LOG");
    assert!(log.contains("has Proximal Level output:"), "no proximal LOG line");
    assert!(
        log.contains("\"proximal_output_level\": 5, \"proximal_output_range\": \"NonLastRange\""),
        "{log}"
    );
}

#[test]
fn old_keys_go_to_the_last_level_recent_ones_above_it() {
    let (_tmp, _, clock, db) =
        start("preclude_last_level_data_seconds=1000;last_level_temperature=kCold", false, "a", 50);
    // The newest sample (T0) is older than the period (10 s) plus 3 s: setting the option
    // takes one (the `a` keys' last sequence at T0 + 20).
    clock.sleep_for_seconds(20);
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    clock.sleep_for_seconds(2000);
    put_all(&db, "b", 50);
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // Now minus 1000 s is after the `a` keys' time: they are in the last level (tagged
    // with `last_level_temperature`); the `b` keys, written since, above it.
    assert_eq!(levels_of(&db, "a"), vec![6]);
    assert_eq!(levels_of(&db, "b"), vec![5]);
    check_all(&db, "a", 50);
    check_all(&db, "b", 50);
    let at = |t: u8| -> u64 {
        let p = db.property_value(format!("rocksdb.live-sst-files-size-at-temperature{t}")).unwrap();
        p.unwrap().parse().unwrap()
    };
    // kCold (12): level 6; kUnknown (0): level 5.
    let (cold, unknown) = (at(12), at(0));
    assert!(cold > 0 && unknown > 0, "cold {cold}, unknown {unknown}");
    let files = db.live_files().unwrap();
    let l6: u64 = files.iter().filter(|f| f.level == 6).map(|f| f.size as u64).sum();
    assert_eq!(cold, l6);

    // With the option 0 the next full compaction moves everything into the last level, as
    // without it.
    db.set_options(&[("preclude_last_level_data_seconds", "0")]).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(all_levels(&db), vec![6]);
    check_all(&db, "b", 50);

    // Set again: new keys written now stay above the last level.
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    put_all(&db, "c", 50);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels_of(&db, "c"), vec![5]);
    assert_eq!(levels_of(&db, "a"), vec![6]);
    check_all(&db, "c", 50);
}

#[test]
fn an_overlapping_last_level_keeps_what_it_holds() {
    // Leveled: the proximal output may only take the range of the inputs above the last
    // level, and what is in the last level already stays there (RocksDB's
    // `keep_in_last_level_through_seqno`).
    let (_tmp, _, _, db) = start("", false, "k", 100);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(all_levels(&db), vec![6]);
    db.set_options(&[("preclude_last_level_data_seconds", "86400")]).unwrap();
    // Overwrite every other key (now, so recent): the L0 -> L6 compaction reads both.
    for i in (0..100u32).step_by(2) {
        db.put(format!("k{i:03}"), format!("new-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(all_levels(&db), vec![5, 6]);
    for i in 0..100u32 {
        let want = if i % 2 == 0 { format!("new-{i}") } else { format!("value-k{i}") };
        assert_eq!(db.get(format!("k{i:03}")).unwrap(), Some(want.into_bytes()));
    }
    // Level 5 holds the overwrites only; level 6 the keys not overwritten.
    let files = db.live_files().unwrap();
    let l5: u64 = files.iter().filter(|f| f.level == 5).map(|f| f.num_entries).sum();
    let l6: u64 = files.iter().filter(|f| f.level == 6).map(|f| f.num_entries).sum();
    assert_eq!((l5, l6), (50, 50));
}

#[test]
fn universal_places_recent_keys_above_the_last_level() {
    let (_tmp, _, clock, db) = start("preclude_last_level_data_seconds=1000", true, "a", 50);
    clock.sleep_for_seconds(20);
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    db.flush().unwrap();
    clock.sleep_for_seconds(2000);
    put_all(&db, "b", 50);
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels_of(&db, "a"), vec![6]);
    assert_eq!(levels_of(&db, "b"), vec![5]);
    check_all(&db, "a", 50);
    check_all(&db, "b", 50);
}

#[test]
fn the_option_is_a_row_of_the_options_string_file_and_set_options() {
    let o = Options::default().get_options_from_string("preclude_last_level_data_seconds=3600").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = o;
    o.create_if_missing(true);
    let db = DB::open(&o, &dir).unwrap();
    let text = crate::util::latest_options_text(&dir);
    assert!(text.contains("  preclude_last_level_data_seconds=3600\n"), "{text}");
    db.set_options(&[("preclude_last_level_data_seconds", "7200")]).unwrap();
    let text = crate::util::latest_options_text(&dir);
    assert!(text.contains("  preclude_last_level_data_seconds=7200\n"), "{text}");
    let e = db.set_options(&[("preclude_last_level_data_seconds", "soon")]).unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument, "{e}");
    // The option turns the sequence-number-to-time mapping on, as
    // preserve_internal_time_seconds does: a new database starts at sequence 100.
    assert_eq!(db.latest_sequence_number(), 100);
    drop(db);
    let (loaded, _) =
        Options::load_latest(&dir, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, &dir).unwrap();
    drop(db);
    let text = crate::util::latest_options_text(&dir);
    assert!(text.contains("  preclude_last_level_data_seconds=7200\n"), "{text}");
}

#[test]
fn a_recent_range_deletion_goes_to_the_proximal_level() {
    let (_tmp, _, clock, db) = start("preclude_last_level_data_seconds=1000", false, "a", 50);
    clock.sleep_for_seconds(20);
    db.set_options(&[("preclude_last_level_data_seconds", "1000")]).unwrap();
    db.flush().unwrap();
    clock.sleep_for_seconds(2000);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(all_levels(&db), vec![6]);
    // A snapshot keeps the deleted keys; the tombstone, written now, is recent.
    let snap = db.snapshot();
    db.delete_range(b"a010", b"a020").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let files = db.live_files().unwrap();
    let l5: Vec<_> = files.iter().filter(|f| f.level == 5).collect();
    assert_eq!(l5.len(), 1, "{files:?}");
    // Level 5 holds the tombstone only (counted as an entry and a deletion, as RocksDB's
    // table properties count range deletions); level 6 every `a` key.
    assert_eq!((l5[0].num_entries, l5[0].num_deletions), (1, 1));
    assert_eq!(l5[0].start_key.as_deref(), Some(&b"a010"[..]));
    let l6: u64 = files.iter().filter(|f| f.level == 6).map(|f| f.num_entries).sum();
    assert_eq!(l6, 50);
    assert_eq!(db.get(b"a015").unwrap(), None);
    assert_eq!(db.get(b"a025").unwrap(), Some(b"value-a25".to_vec()));
    assert_eq!(snap.get(b"a015").unwrap(), Some(b"value-a15".to_vec()));
    drop(snap);
}
