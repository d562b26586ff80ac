//! max_subcompactions: a compaction split into up to four key ranges compacted on threads
//! of their own writes what one range writes. Random puts, merges, deletions and range
//! deletions over six flushed level-0 files with snapshots held, then compact_range (and the
//! bottommost rewrite a compaction filter brings): with 4 the entries visible at the latest
//! sequence and at every snapshot, and the drops by reason, equal those with 1; histogram
//! `rocksdb.num.subcompactions.scheduled` shows the split happened (none with 1). An
//! automatic compaction from level 0 is split too, and reads find every key's newest value.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;
use crate::util;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::statistics::{Histogram, Ticker};
use shale::{CompactionDecision, DBCompressionType, IteratorMode, Options, ReadOptions, DB};

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn options(max_subcompactions: u32, universal: bool) -> Options {
    let mut o = tools::concat_merge_options();
    if universal {
        o.set_compaction_style(shale::DBCompactionStyle::Universal);
    }
    o.set_compression_type(DBCompressionType::None);
    o.set_target_file_size_base(32 << 10);
    o.set_max_subcompactions(max_subcompactions);
    o.enable_statistics();
    // Puts whose value starts with 'x' are removed (when no snapshot sees them).
    o.set_compaction_filter("drop-x", |_level: u32, _k: &[u8], v: &[u8]| {
        if v.starts_with(b"x") {
            CompactionDecision::Remove
        } else {
            CompactionDecision::Keep
        }
    });
    o
}

struct Outcome {
    /// What an iterator sees at the latest sequence, then at each snapshot.
    views: Vec<Pairs>,
    drops: Vec<u64>,
    scheduled: (u64, u64),
    files: u64,
    /// Entries and deletions in the table files (`live_files`), all levels.
    entries: (u64, u64),
}

fn key(i: u32) -> String {
    format!("key{i:05}")
}

fn scenario(max_subcompactions: u32, universal: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let o = options(max_subcompactions, universal);
    let db = DB::open(&o, dir.path()).unwrap();
    let mut rng = SmallRng::seed_from_u64(20261124);
    let mut snapshots = Vec::new();
    for round in 0..6 {
        for _ in 0..1500 {
            let i = rng.gen_range(0..4000u32);
            match rng.gen_range(0..20) {
                0..=9 => {
                    let len = rng.gen_range(40..200);
                    let first = if rng.gen_range(0..10) == 0 { b'x' } else { b'v' };
                    let mut v = vec![first];
                    v.extend((1..len).map(|_| rng.gen_range(b'a'..=b'z')));
                    db.put(key(i), v).unwrap();
                }
                10..=14 => db.merge(key(i), format!("+{round}")).unwrap(),
                15..=18 => db.delete(key(i)).unwrap(),
                _ => db.delete_range(key(i), key(i + rng.gen_range(1..40))).unwrap(),
            }
        }
        // After rounds 0, 2 and 4: the last round's entries no snapshot sees (the filter's).
        if round % 2 == 0 {
            snapshots.push(db.snapshot());
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let scan = |it: shale::DBIterator<'_>| -> Pairs {
        it.map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
    };
    let mut views = vec![scan(db.iterator(IteratorMode::Start))];
    for s in &snapshots {
        views.push(scan(s.iterator(IteratorMode::Start)));
    }
    // Reads through the snapshots also go by the table files the compaction wrote.
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snapshots[0]);
    assert_eq!(scan(db.iterator_opt(IteratorMode::Start, ro)), views[1]);
    let files = (0..7)
        .map(|l| db.property_int_value(format!("rocksdb.num-files-at-level{l}")).unwrap().unwrap_or(0))
        .sum();
    drop(snapshots);
    // The outputs of one level never overlap (the ranges are disjoint; a file whose range
    // tombstone ends at a boundary may end on the next one's first key, its exclusive end, as
    // in RocksDB) and hold what one range's outputs hold.
    let mut live = db.live_files().unwrap();
    live.sort_by(|a, b| (a.level, &a.start_key).cmp(&(b.level, &b.start_key)));
    for w in live.windows(2) {
        if w[0].level == w[1].level && w[0].level > 0 {
            assert!(w[0].end_key <= w[1].start_key, "{} and {} overlap", w[0].name, w[1].name);
        }
    }
    let entries = live.iter().fold((0, 0), |(e, d), f| (e + f.num_entries, d + f.num_deletions));
    let drops = [
        Ticker::CompactionKeyDropNewerEntry,
        Ticker::CompactionKeyDropObsolete,
        Ticker::CompactionKeyDropRangeDel,
        Ticker::CompactionKeyDropUser,
    ]
    .iter()
    .map(|t| o.get_ticker_count(*t))
    .collect();
    let h = o.get_histogram_data(Histogram::NumSubcompactionsScheduled);
    Outcome { views, drops, scheduled: (h.count(), h.sum()), files, entries }
}

#[test]
fn four_subcompactions_write_what_one_writes() {
    same_outcome(false);
}

/// Universal compaction's manual compaction (every file into the last level) likewise.
#[test]
fn universal_subcompactions_write_what_one_writes() {
    same_outcome(true);
}

fn same_outcome(universal: bool) {
    let one = scenario(1, universal);
    let four = scenario(4, universal);
    assert_eq!(one.scheduled, (0, 0), "one subcompaction is not a split");
    let (count, sum) = four.scheduled;
    assert!(count >= 1 && sum > count, "no compaction was split: {count} splits, {sum} ranges");
    assert!(sum <= 4 * count, "more than max_subcompactions ranges: {count} splits, {sum} ranges");
    assert!(four.files >= 4, "{} files", four.files);
    assert_eq!(one.views.len(), four.views.len());
    for (i, (a, b)) in one.views.iter().zip(&four.views).enumerate() {
        assert!(!a.is_empty());
        assert_eq!(a.len(), b.len(), "view {i}: entry counts differ");
        assert!(a == b, "view {i} differs");
    }
    // Puts and merge operands are the same; a range tombstone crossing a range boundary is
    // written to the files on both sides (clipped), as at any file cut: one deletion more.
    let (e1, d1) = one.entries;
    let (e4, d4) = four.entries;
    assert_eq!(e1 - d1, e4 - d4, "entries other than deletions in the table files");
    assert!(d4 >= d1 && d4 - d1 <= 3 * 40, "deletions: {d1} with one range, {d4} with four");
    assert_eq!(one.drops, four.drops, "drops by reason (newer entry, obsolete, range deletion, filter)");
    assert!(one.drops.iter().all(|d| *d > 0), "every drop reason exercised: {:?}", one.drops);
}

#[test]
fn automatic_level0_compactions_are_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(256 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(32 << 10);
    o.set_max_subcompactions(4);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    let mut model = std::collections::BTreeMap::new();
    for i in 0..8000u64 {
        let k = key(((i * 7919) % 5000) as u32).into_bytes();
        let v = format!("{i:0>100}").into_bytes();
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    util::wait_for_background(&db);
    let got: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = db
        .iterator(IteratorMode::Start)
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect();
    assert!(got == model, "{} keys read, {} written", got.len(), model.len());
    let h = o.get_histogram_data(Histogram::NumSubcompactionsScheduled);
    assert!(h.count() >= 1 && h.sum() > h.count(), "no split: {} {}", h.count(), h.sum());
}
