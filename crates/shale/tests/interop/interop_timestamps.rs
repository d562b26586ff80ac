//! User-defined timestamps between RocksDB 11.8.1 and Shale, both ways (docs/timestamps.md;
//! the tools are found as tools/mod.rs says, and the test is skipped with a printed reason
//! when they are absent):
//! - RocksDB -> Shale: `db_bench --user_timestamp_size=8` (fillrandom, overwrite and
//!   deleterandom, so keys have several versions and deletions, over the WAL, level 0 and
//!   deeper levels) reads in Shale, opened with `U64TsComparator::bytewise()`
//!   (`leveldb.BytewiseComparator.u64ts`), exactly as `ldb scan --read_timestamp=T` prints
//!   it, key, timestamp and value, at several read timestamps, forward and backward and
//!   with `get`; then Shale compacts everything and `ldb` reads the same again.
//! - Shale -> RocksDB: versions and deletions Shale writes at increasing timestamps (in
//!   tables, and in the WAL with its timestamp-size record) read in `ldb scan
//!   --read_timestamp=T` as the model says, at several read timestamps; `sst_dump` shows the
//!   deletions in Shale's tables as kTypeDeletionWithTimestamp (type 20), as RocksDB writes them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use shale::{Options, ReadOptions, U64TsComparator, DB};
use tools::*;

/// (key, timestamp, value)
type Versions = Vec<(Vec<u8>, u64, Vec<u8>)>;

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o
}

/// `ldb scan --hex --read_timestamp=t`: lines `0xKEY|timestamp:N ==> 0xVALUE`.
fn ldb_scan_at(dir: &Path, t: u64) -> Versions {
    let a = args(&[&format!("--db={}", dir.display()), "scan", "--hex", &format!("--read_timestamp={t}")]);
    let out = run_tool("ldb", &a);
    out.lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" ==> ").unwrap_or_else(|| panic!("unexpected ldb line {l:?}"));
            let (k, ts) = k.split_once("|timestamp:").unwrap_or_else(|| panic!("no timestamp in {l:?}"));
            (decode_hex(k), ts.trim().parse().unwrap(), decode_hex(v))
        })
        .collect()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(t.to_le_bytes());
    ro
}

fn shale_scan_at(db: &DB, t: u64, reverse: bool) -> Versions {
    let mut it = db.raw_iterator_opt(read_at(t));
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    let mut out = Vec::new();
    while it.valid() {
        let ts = u64::from_le_bytes(it.timestamp().unwrap().try_into().unwrap());
        out.push((it.key().unwrap().to_vec(), ts, it.value().unwrap().to_vec()));
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    if reverse {
        out.reverse();
    }
    out
}

#[test]
fn rocksdb_11_db_bench_with_timestamps_reads_the_same() {
    let test = "rocksdb_11_db_bench_with_timestamps_reads_the_same";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    db_bench_run(
        dir.path(),
        "fillrandom,overwrite,deleterandom",
        4000,
        &[
            "--user_timestamp_size=8",
            "--key_size=16",
            "--value_size=24",
            "--compression_type=none",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
        ],
    );
    assert!(!sst_files(dir.path()).is_empty(), "db_bench wrote tables");
    // The timestamps db_bench gave: read at the newest, and at points inside its history.
    let newest = ldb_scan_at(dir.path(), u64::MAX);
    let max_ts = newest.iter().map(|v| v.1).max().unwrap();
    let points = [max_ts / 5, max_ts / 2, max_ts * 3 / 4, max_ts - 1, u64::MAX];
    let wants: Vec<(u64, Versions)> = points.iter().map(|&t| (t, ldb_scan_at(dir.path(), t))).collect();
    assert!(wants.iter().all(|(_, w)| !w.is_empty()));
    assert_ne!(wants[1].1, wants[4].1, "the history differs between read timestamps");
    let db = DB::open(&options(), dir.path()).unwrap();
    for (t, want) in &wants {
        assert_eq!(&shale_scan_at(&db, *t, false), want, "{test}: scan at {t}");
        assert_eq!(&shale_scan_at(&db, *t, true), want, "{test}: reverse scan at {t}");
        for (k, _, v) in want.iter().step_by(23) {
            assert_eq!(db.get_opt(k, &read_at(*t)).unwrap().as_ref(), Some(v), "{test}: get at {t}");
        }
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for (t, want) in &wants {
        assert_eq!(&shale_scan_at(&db, *t, false), want, "{test}: scan at {t} after Shale's compaction");
    }
    drop(db);
    for (t, want) in &wants {
        assert_eq!(&ldb_scan_at(dir.path(), *t), want, "{test}: ldb at {t} after Shale's compaction");
    }
}

#[test]
fn shale_written_timestamps_read_in_rocksdb_11() {
    let test = "shale_written_timestamps_read_in_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // key -> ts -> value (None: deleted)
    let mut model: BTreeMap<Vec<u8>, BTreeMap<u64, Option<Vec<u8>>>> = BTreeMap::new();
    {
        let mut o = options();
        o.set_write_buffer_size(32 * 1024);
        let db = DB::open(&o, dir.path()).unwrap();
        let mut now = 0u64;
        for round in 0..6u64 {
            for i in 0..400u64 {
                now += 1;
                let k = format!("key{:04}", (i * 7 + round * 13) % 300).into_bytes();
                if (i + round) % 5 == 0 {
                    db.delete_with_ts(&k, now.to_le_bytes()).unwrap();
                    model.entry(k).or_default().insert(now, None);
                } else {
                    let v = format!("value-{round}-{i}-{now}").into_bytes();
                    db.put_with_ts(&k, now.to_le_bytes(), &v).unwrap();
                    model.entry(k).or_default().insert(now, Some(v));
                }
            }
            if round == 2 {
                db.compact_range(None::<&[u8]>, None::<&[u8]>);
            } else if round < 5 {
                db.flush().unwrap();
            }
            // The last round stays in the WAL.
        }
    }
    // Deletions are stored as RocksDB stores them: kTypeDeletionWithTimestamp (type:20).
    let mut types = std::collections::BTreeSet::new();
    for f in sst_files(dir.path()) {
        let a = [format!("--file={}", f.display()), "--command=scan".to_string()];
        for line in run_tool("sst_dump", &a).lines() {
            if let Some((_, rest)) = line.split_once(" type:") {
                types.insert(rest.split(' ').next().unwrap_or("").to_string());
            }
        }
    }
    let want_types: std::collections::BTreeSet<String> = ["1", "20"].iter().map(|s| s.to_string()).collect();
    assert_eq!(types, want_types, "{test}: value types in Shale's tables");
    for t in [150u64, 700, 1200, 2000, 2399, 2400, u64::MAX] {
        let want: Versions = model
            .iter()
            .filter_map(|(k, vs)| {
                let (vt, v) = vs.range(..=t).next_back()?;
                v.clone().map(|v| (k.clone(), *vt, v))
            })
            .collect();
        assert_eq!(ldb_scan_at(dir.path(), t), want, "{test}: ldb scan at {t}");
    }
}
