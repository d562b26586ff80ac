//! Prefix Bloom filters in tables: a seek of a prefix no table holds reads no data block
//! (counted by the `rocksdb.shale.data-blocks-read` property, the block cache off so every
//! block access is a read), a total-order seek of the same key does; `get` with a filter of
//! prefixes only; the extractor's name in the table properties; tables written with
//! another extractor treated as RocksDB treats them; `auto_prefix_mode` with an upper bound.
//!
//! Layout: two level-0 tables, prefixes "pNNN" (fixed prefix 4) with NNN % 3 == 0 in one and
//! == 1 in the other, 10 keys each; prefixes with NNN % 3 == 2 are in neither table, but
//! inside both tables' key ranges.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale::statistics::Ticker;
use shale::table::{Table, TableReaderOptions};
use shale::{BlockBasedOptions, IteratorMode, Options, ReadOptions, SliceTransform, DB};

const PREFIXES: u32 = 90;

fn prefix(i: u32) -> String {
    format!("p{i:03}")
}

fn key(i: u32, j: u32) -> String {
    format!("p{i:03}-{j:02}")
}

fn options(extractor: SliceTransform, whole_key_filtering: bool) -> Options {
    let mut t = BlockBasedOptions::default();
    // 20 bits per entry: with these few keys a false positive is unlikely, and the hashes
    // are fixed, so the counts below are exact (a false positive would fail every run).
    t.set_bloom_filter(20.0, false);
    t.set_whole_key_filtering(whole_key_filtering);
    t.disable_cache();
    t.set_block_size(256); // many data blocks per table
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(extractor);
    o.set_block_based_table_factory(&t);
    o.enable_statistics();
    o
}

fn fill(dir: &Path, o: &Options) {
    let db = DB::open(o, dir).unwrap();
    for m in 0..2 {
        for i in (0..PREFIXES).filter(|i| i % 3 == m) {
            for j in 0..10 {
                db.put(key(i, j), format!("v{i}-{j}")).unwrap();
            }
        }
        db.flush().unwrap();
    }
}

fn reads(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

fn open_table(path: &Path) -> std::sync::Arc<Table> {
    let size = std::fs::metadata(path).unwrap().len();
    let file = shale::fs::default_fs().new_random_access_file(path).unwrap();
    let opts = TableReaderOptions::standalone(
        shale::key::bytewise_internal_comparator(),
        path.display().to_string(),
    );
    Table::open(file, size, opts).unwrap()
}

/// Seeks each absent prefix with `ro`; returns the data blocks read and how many seeks
/// ended valid.
fn seek_absent(db: &DB, ro: impl Fn() -> ReadOptions) -> (u64, usize) {
    let before = reads(db);
    let mut valid = 0;
    for i in (0..PREFIXES).filter(|i| i % 3 == 2) {
        let mut it = db.raw_iterator_opt(ro());
        it.seek(prefix(i));
        it.status().unwrap();
        valid += usize::from(it.valid());
    }
    (reads(db) - before, valid)
}

#[test]
fn absent_prefix_seek_reads_no_data_block() {
    let tmp = tempfile::tempdir().unwrap();
    let o = options(SliceTransform::create_fixed_prefix(4), true);
    fill(tmp.path(), &o);
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(tables(tmp.path()).len(), 2);

    // prefix_same_as_start: nothing, and no data block read.
    let (n, valid) = seek_absent(&db, || {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        ro
    });
    assert_eq!((n, valid), (0, 0), "prefix_same_as_start seeks of absent prefixes");
    // Legacy prefix seek (total_order_seek false, the default): the filters exclude the
    // prefix in both tables, so no data block is read either.
    let (n, valid) = seek_absent(&db, ReadOptions::default);
    assert_eq!((n, valid), (0, 0), "prefix seeks of absent prefixes");
    // Total order: the same seeks read blocks and land on the next prefix.
    let (n, valid) = seek_absent(&db, || {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        ro
    });
    assert!(n >= 29, "total-order seeks read {n} blocks");
    assert_eq!(valid, 29);

    // A present prefix: exactly its keys, from whichever table holds it.
    for i in [0, 1, 3, 4, 88] {
        let got: Vec<String> = db
            .prefix_iterator(prefix(i))
            .map(|r| String::from_utf8(r.unwrap().0.to_vec()).unwrap())
            .collect();
        let want: Vec<String> = (0..10).map(|j| key(i, j)).collect();
        assert_eq!(got, want, "prefix {i}");
    }
    // Backward within a prefix stops at its start.
    let mut ro = ReadOptions::default();
    ro.set_prefix_same_as_start(true);
    let mut it = db.raw_iterator_opt(ro);
    it.seek_for_prev(key(4, 99));
    let mut back = Vec::new();
    while it.valid() {
        back.push(String::from_utf8(it.key().unwrap().to_vec()).unwrap());
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(back, (0..10).rev().map(|j| key(4, j)).collect::<Vec<_>>());

    // get: whole keys are in the filter; an absent key of a present prefix is filtered too.
    let before = reads(&db);
    assert_eq!(db.get(key(3, 50)).unwrap(), None);
    assert_eq!(db.get(key(5, 0)).unwrap(), None);
    assert_eq!(reads(&db), before, "whole-key filter spared the reads");
    assert_eq!(db.get(key(3, 5)).unwrap().unwrap(), b"v3-5");
}

#[test]
fn table_properties_name_the_extractor() {
    let tmp = tempfile::tempdir().unwrap();
    fill(tmp.path(), &options(SliceTransform::create_fixed_prefix(4), false));
    for t in tables(tmp.path()) {
        let table = open_table(&t);
        let p = table.properties();
        assert_eq!(p.prefix_extractor_name, "rocksdb.FixedPrefix.4");
        let uc = &p.user_collected;
        assert_eq!(uc.get("rocksdb.block.based.table.prefix.filtering").map(|v| &v[..]), Some(&b"1"[..]));
        assert_eq!(uc.get("rocksdb.block.based.table.whole.key.filtering").map(|v| &v[..]), Some(&b"0"[..]));
        // Only prefixes in the filter: 30 (or 30) prefixes, not 300 keys.
        assert_eq!(p.num_filter_entries, 30, "{}", t.display());
    }
}

#[test]
fn get_uses_the_prefix_filter_without_whole_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let o = options(SliceTransform::create_fixed_prefix(4), false);
    fill(tmp.path(), &o);
    let db = DB::open(&o, tmp.path()).unwrap();
    let before = reads(&db);
    let useful = o.get_ticker_count(Ticker::BloomFilterPrefixUseful);
    for i in (0..PREFIXES).filter(|i| i % 3 == 2) {
        assert_eq!(db.get(key(i, 0)).unwrap(), None);
    }
    assert_eq!(reads(&db), before, "absent prefixes read no block");
    // 30 keys x 2 tables, less p089-00 in both: past either table's largest key, neither
    // table's filter is consulted.
    assert_eq!(o.get_ticker_count(Ticker::BloomFilterPrefixUseful) - useful, 58);
    // Present keys are found (the prefix filter says "maybe").
    for i in 0..PREFIXES {
        if i % 3 != 2 {
            assert_eq!(db.get(key(i, 7)).unwrap().unwrap(), format!("v{i}-7").as_bytes());
        }
    }
    assert_eq!(o.get_ticker_count(Ticker::BloomFilterPrefixTruePositive), 60);
    // Every check is useful, a true positive or a false positive (a table probed for a key
    // of the other table's prefix).
    let checked = o.get_ticker_count(Ticker::BloomFilterPrefixChecked);
    let useful = o.get_ticker_count(Ticker::BloomFilterPrefixUseful);
    assert!(checked >= useful + 60, "{checked} checks, {useful} useful");
}

#[test]
fn tables_of_another_extractor_follow_rocksdb() {
    let tmp = tempfile::tempdir().unwrap();
    fill(tmp.path(), &options(SliceTransform::create_fixed_prefix(4), true));

    // Reopened with another extractor: a prefix seek no longer trusts the table's filter
    // without an upper bound (results in total order, blocks read)...
    let o = options(SliceTransform::create_fixed_prefix(2), true);
    let db = DB::open(&o, tmp.path()).unwrap();
    let (n, valid) = seek_absent(&db, || {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        ro
    });
    assert!(n > 0 && valid == 29, "seeks read {n} blocks, {valid} valid");
    // ...but with an upper bound inside one of the table's own prefixes (rebuilt from the
    // name "rocksdb.FixedPrefix.4") it does, and reads nothing.
    let (n, valid) = seek_absent_bounded(&db);
    assert_eq!((n, valid), (0, 0));
    drop(db);

    // A custom extractor's name cannot be rebuilt: such tables are never prefix-checked.
    let tmp2 = tempfile::tempdir().unwrap();
    fn four(k: &[u8]) -> &[u8] {
        &k[..4]
    }
    fn long(k: &[u8]) -> bool {
        k.len() >= 4
    }
    fill(tmp2.path(), &options(SliceTransform::create("four", four, Some(long)), true));
    let db = DB::open(&options(SliceTransform::create_fixed_prefix(4), true), tmp2.path()).unwrap();
    let (n, valid) = seek_absent_bounded(&db);
    assert!(n > 0, "a custom extractor's filter was used");
    assert_eq!(valid, 0, "the upper bound still ends the seeks");
    drop(db);
    // Reopened with the same custom extractor, its filters serve again.
    let db = DB::open(&options(SliceTransform::create("four", four, Some(long)), true), tmp2.path()).unwrap();
    let (n, _) = seek_absent(&db, ReadOptions::default);
    assert_eq!(n, 0);
}

/// Each absent prefix, seeked in auto-prefix mode with `iterate_upper_bound` = the
/// prefix's same-length successor (its last byte plus one).
fn seek_absent_bounded(db: &DB) -> (u64, usize) {
    let before = reads(db);
    let mut valid = 0;
    for i in (0..PREFIXES).filter(|i| i % 3 == 2) {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        ro.set_auto_prefix_mode(true);
        let mut upper = prefix(i).into_bytes();
        *upper.last_mut().unwrap() += 1;
        ro.set_iterate_upper_bound(upper);
        let mut it = db.raw_iterator_opt(ro);
        it.seek(prefix(i));
        it.status().unwrap();
        valid += usize::from(it.valid());
    }
    (reads(db) - before, valid)
}

#[test]
fn auto_prefix_mode_uses_the_filter_only_within_one_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let o = options(SliceTransform::create_fixed_prefix(4), true);
    fill(tmp.path(), &o);
    let db = DB::open(&o, tmp.path()).unwrap();
    // Upper bound = the prefix's successor: the filter proves the range empty.
    assert_eq!(seek_absent_bounded(&db), (0, 0));
    // Without a bound, auto_prefix_mode gives total-order results.
    let mut ro = ReadOptions::default();
    ro.set_auto_prefix_mode(true);
    let got: Vec<Box<[u8]>> = db
        .iterator_opt(IteratorMode::From(prefix(2).as_bytes(), shale::Direction::Forward), ro)
        .take(2)
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(
        got,
        vec![key(3, 0).into_bytes().into_boxed_slice(), key(3, 1).into_bytes().into_boxed_slice()]
    );
    // A bound past the next prefix: not within one prefix, so no filter; finds p003.
    let mut ro = ReadOptions::default();
    ro.set_auto_prefix_mode(true);
    ro.set_iterate_upper_bound(prefix(9));
    let mut it = db.raw_iterator_opt(ro);
    it.seek(prefix(2));
    assert_eq!(it.key().unwrap(), key(3, 0).as_bytes());
}
