//! `preserve_internal_time_seconds` (issue 33): RocksDB 11.8.1's sequence-number-to-time
//! mapping. A new database with it starts at sequence 100 with pairs for 1..=100; samples
//! are taken as the database's clock moves (a `MockSystemClock` here); each flushed table
//! stores its range's pairs in `rocksdb.seqno.time.map`; a bottommost compaction zeroes the
//! sequence numbers only of entries written before now minus the setting. 11.8.1's
//! `sst_dump --show_properties` prints the pairs Shale wrote, and `ldb scan` reads the db.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::table::reader::Table;
use shale::table::seqno_time::{SeqnoTimePair, SeqnoToTimeMapping};
use shale::{MockSystemClock, Options, DB};

const T0: u64 = 1_700_000_000;

fn open(dir: &Path, clock: &Arc<MockSystemClock>, preserve: u64) -> DB {
    let mut o = Options::default()
        .get_options_from_string(format!("preserve_internal_time_seconds={preserve}"))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_stats_history_clock(clock.clone());
    DB::open(&o, dir).unwrap()
}

/// A live table: its file name, its mapping's pairs, its entries' (user key, sequence).
type TableSeen = (String, Vec<SeqnoTimePair>, Vec<(Vec<u8>, u64)>);

/// Every live table, by file name.
fn tables(db: &DB, dir: &Path) -> Vec<TableSeen> {
    let mut out = Vec::new();
    for lf in db.live_files().unwrap() {
        let path = dir.join(lf.name.trim_start_matches('/'));
        let (file, size, opts) = tools::table_file(&path);
        let t = Table::open(file, size, opts).unwrap();
        let mut m = SeqnoToTimeMapping::new();
        m.decode_from(&t.properties().seqno_to_time_mapping).unwrap();
        let mut entries = Vec::new();
        let mut it = t.iter(false);
        it.seek_to_first();
        while it.valid() {
            let k = it.key();
            let trailer = u64::from_le_bytes(k[k.len() - 8..].try_into().unwrap());
            entries.push((k[..k.len() - 8].to_vec(), trailer >> 8));
            it.next();
        }
        it.status().unwrap();
        out.push((lf.name.clone(), m.pairs().copied().collect(), entries));
    }
    out.sort();
    out
}

fn pair(seqno: u64, time: u64) -> SeqnoTimePair {
    SeqnoTimePair { seqno, time }
}

#[test]
fn preserve_internal_time_maps_sequences_to_times() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let clock = MockSystemClock::new(T0);
    let db = open(&dir, &clock, 1000);
    // Sequence numbers 1..=100 are taken by the mapping's pre-population.
    assert_eq!(db.latest_sequence_number(), 100);
    for i in 0..10u32 {
        db.put(format!("a{i}"), "old").unwrap();
    }
    clock.sleep_for_seconds(5);
    // A change of the sampling period (10 s to 11 s) takes a sample at once (seqno 110 at
    // T0 + 5), as RocksDB's re-registered task runs immediately.
    db.set_options(&[("preserve_internal_time_seconds", "1001")]).unwrap();
    db.flush().unwrap();
    let t = tables(&db, &dir);
    assert_eq!(t.len(), 1);
    // The pair before the table's range (100 at T0, pre-populated) and the one in it.
    assert_eq!(t[0].1, vec![pair(100, T0), pair(110, T0 + 5)]);

    clock.sleep_for_seconds(2000);
    for i in 0..10u32 {
        db.put(format!("b{i}"), "new").unwrap();
    }
    // The newest sample is older than a period (and the period changes back): a sample.
    db.set_options(&[("preserve_internal_time_seconds", "1000")]).unwrap();
    db.flush().unwrap();
    let t = tables(&db, &dir);
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].1, vec![pair(110, T0 + 5), pair(120, T0 + 2005)]);

    // Now minus 1000 s is after seqno 110's time: 101..=110 may be zeroed, 111.. keep theirs.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let t = tables(&db, &dir);
    assert_eq!(t.len(), 1);
    for (k, seq) in &t[0].2 {
        if k.starts_with(b"a") {
            assert_eq!(*seq, 0, "{}", String::from_utf8_lossy(k));
        } else {
            assert!((111..=120).contains(seq), "{} at {seq}", String::from_utf8_lossy(k));
        }
    }
    // The output keeps the pairs its range (0..=120) needs, within the time span.
    assert_eq!(t[0].1, vec![pair(110, T0 + 5), pair(120, T0 + 2005)]);
    assert_eq!(db.get(b"a3").unwrap().as_deref(), Some(&b"old"[..]));

    // Without the option: no mapping, nothing preserved.
    db.set_options(&[("preserve_internal_time_seconds", "0")]).unwrap();
    db.put(b"a55", b"x").unwrap(); // inside the table's range: no trivial move
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let t = tables(&db, &dir);
    assert_eq!(t.len(), 1);
    assert!(t[0].1.is_empty(), "{:?}", t[0].1);
    assert!(t[0].2.iter().all(|(_, s)| *s == 0), "{:?}", t[0].2);
    let text = tools::latest_options_text(&dir);
    assert!(text.contains("  preserve_internal_time_seconds=0\n"), "{text}");
    drop(db);

    // A database made without the option starts at sequence 0 and writes no mapping.
    let plain = tmp.path().join("plain");
    let db = open(&plain, &clock, 0);
    assert_eq!(db.latest_sequence_number(), 0);
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    assert!(tables(&db, &plain)[0].1.is_empty());
}

#[test]
fn rocksdb_11_reads_the_mapping_shale_wrote() {
    let test = "rocksdb_11_reads_the_mapping_shale_wrote";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let clock = MockSystemClock::new(T0);
    let db = open(&dir, &clock, 3600);
    for i in 0..50u32 {
        db.put(format!("key{i:03}"), format!("value{i}")).unwrap();
    }
    clock.sleep_for_seconds(40);
    // The newest sample (T0) is older than the period plus 3 s: the change takes one.
    db.set_options(&[("preserve_internal_time_seconds", "3600")]).unwrap();
    db.flush().unwrap();
    let t = tables(&db, &dir);
    assert_eq!(t[0].1, vec![pair(100, T0), pair(150, T0 + 40)]);
    let text = tools::latest_options_text(&dir);
    assert!(text.contains("  preserve_internal_time_seconds=3600\n"), "{text}");
    let ours = tools::shale_scan_default(&db);
    drop(db);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("Options.preserve_internal_time_seconds: 3600\n"), "no LOG line");
    if !tools::use_rocksdb_11(test) {
        return;
    }
    tools::ldb_keeps_option_rows(&[("preserve_internal_time_seconds", "3600")], true);
    let sst = tools::sst_files(&dir);
    let out = tools::run_tool(
        "sst_dump",
        &tools::args(&[&format!("--file={}", sst[0].display()), "--show_properties"]),
    );
    let want = format!("Sequence number to time mapping: 100->{T0},150->{},", T0 + 40);
    assert!(out.contains(&want), "{want} not in\n{out}");
    tools::assert_same_pairs(&tools::ldb_scan(&dir, None), &ours, "ldb scan");
    let out = tools::run_tool(
        "ldb",
        &tools::args(&[&format!("--db={}", dir.display()), "--try_load_options", "scan", "--max_keys=2"]),
    );
    assert_eq!(out.lines().filter(|l| l.contains("==>")).count(), 2, "{out}");
}

#[test]
fn samples_are_taken_as_the_clock_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let clock = MockSystemClock::new(T0);
    // A sample every ceil(300 / 100) = 3 s of the clock.
    let db = open(&dir, &clock, 300);
    db.put(b"k0", b"v").unwrap();
    clock.sleep_for_seconds(3);
    // The background sampler looks at the clock about every second; each round writes one
    // more key and flushes, until a table holds a sample at T0 + 3 (of the last sequence
    // number when it was taken).
    let mut seen = false;
    for i in 1..100u32 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        db.put(format!("k{i}"), "v").unwrap();
        db.flush().unwrap();
        let at = |p: &SeqnoTimePair| p.time == T0 + 3 && p.seqno > 100;
        if tables(&db, &dir).iter().any(|(_, pairs, _)| pairs.iter().any(at)) {
            seen = true;
            break;
        }
    }
    assert!(seen, "no sample at T0 + 3 reached a table");
}
