//! `read_amp_bytes_per_bit` (helper `tbl3`, issue 33): as RocksDB 11.8.1's
//! `BlockReadAmpBitmap`, each data block read from a table file (with statistics on) counts
//! its entries' bytes in `rocksdb.read.amp.total.read.bytes`, and each entry whose value a
//! read hands out counts in `rocksdb.read.amp.estimate.useful.bytes`, once per block.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Cache, Options, DB};

use crate::util;

const KEYS: u32 = 2000;

fn open(tmp: &std::path::Path, bytes_per_bit: Option<u32>, statistics: bool) -> (Options, DB) {
    let mut o = Options::default();
    o.create_if_missing(true);
    if statistics {
        o.enable_statistics();
    }
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&Cache::new_lru_cache(64 << 20));
    if let Some(b) = bytes_per_bit {
        t.set_read_amp_bytes_per_bit(b);
    }
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp).unwrap();
    (o, db)
}

fn fill(db: &DB) {
    for i in 0..KEYS {
        db.put(format!("key{i:06}"), util::value(i as u64, 100)).unwrap();
    }
    db.flush().unwrap();
}

fn counts(o: &Options) -> (u64, u64) {
    (
        o.get_ticker_count(Ticker::ReadAmpTotalReadBytes),
        o.get_ticker_count(Ticker::ReadAmpEstimateUsefulBytes),
    )
}

#[test]
fn point_reads_count_part_of_each_block_and_a_scan_all_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, db) = open(tmp.path(), Some(1), true);
    fill(&db);
    // Reopened: the table is read from its file, none of its blocks in the cache.
    drop(db);
    let (o2, db) = open(tmp.path(), Some(1), true);
    assert_eq!(counts(&o2), (0, 0));
    for i in (0..KEYS).step_by(97) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap().unwrap(), util::value(i as u64, 100));
    }
    let (total, useful) = counts(&o2);
    assert!(total > 0, "blocks read count their bytes");
    // One entry of ~120 bytes read per block of ~4 KiB.
    assert!(useful > 0 && useful * 10 < total, "useful {useful} of {total}");
    // A scan reads every value: at one byte a bit, every byte of every block is useful.
    let mut it = db.raw_iterator();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert!(!it.value().unwrap().is_empty());
        n += 1;
        it.next();
    }
    assert_eq!(n, KEYS);
    let (total, useful) = counts(&o2);
    assert_eq!(useful, total, "every entry of every block read");
    // Read again from the cache: no block read, nothing new.
    for i in 0..KEYS {
        db.get(format!("key{i:06}")).unwrap().unwrap();
    }
    assert_eq!(counts(&o2), (total, useful));
}

#[test]
fn nothing_counted_when_off() {
    for (bytes_per_bit, statistics) in [(None, true), (Some(0), true)] {
        let tmp = tempfile::tempdir().unwrap();
        let (_, db) = open(tmp.path(), bytes_per_bit, statistics);
        fill(&db);
        drop(db);
        let (o, db) = open(tmp.path(), bytes_per_bit, statistics);
        for i in 0..KEYS {
            db.get(format!("key{i:06}")).unwrap().unwrap();
        }
        assert!(o.get_ticker_count(Ticker::BlockCacheDataMiss) > 0);
        assert_eq!(counts(&o), (0, 0));
    }
}

/// The option by RocksDB's name: in option strings (a u64 whose low 32 bits count, as
/// RocksDB's parser), the OPTIONS file, the LOG's table options dump and set_options (for
/// table readers opened afterwards).
#[test]
fn option_text_options_file_log_and_set_options() {
    let tmp = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    base.enable_statistics();
    let o = base.get_options_from_string("block_based_table_factory={read_amp_bytes_per_bit=16}").unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("read_amp_bytes_per_bit=16\n"));
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    assert!(log.contains("read_amp_bytes_per_bit: 16"), "LOG dumps the table option");
    fill(&db);
    db.set_options(&[("block_based_table_factory", "{read_amp_bytes_per_bit=4}")]).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("read_amp_bytes_per_bit=4\n"));
    drop(db);
    // Loaded back from the OPTIONS file, as RocksDB's LoadLatestOptions.
    let (loaded, _) =
        Options::load_latest(tmp.path(), shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, tmp.path()).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("read_amp_bytes_per_bit=4\n"));
    drop(db);
    // RocksDB's fix for 6.10-6.14's OPTIONS files: the low 32 bits of a u64.
    let o = base
        .get_options_from_string(format!(
            "block_based_table_factory={{read_amp_bytes_per_bit={}}}",
            (7u64 << 32) | 8
        ))
        .unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("read_amp_bytes_per_bit=8\n"));
    for i in 0..10 {
        db.get(format!("key{i:06}")).unwrap().unwrap();
    }
    assert!(o.get_ticker_count(Ticker::ReadAmpTotalReadBytes) > 0);
    assert!(o.get_ticker_count(Ticker::ReadAmpEstimateUsefulBytes) > 0);
}
