//! Column-family options that had no row, or a row `set_options` refused (helper cfopt,
//! issue 33), each shown acting as RocksDB 11.8.1's:
//! - `memtable_protection_bytes_per_key`: parsed, written to the OPTIONS file and read back,
//!   changed by `set_options`; 0, 1, 2, 4, 8 only (open and set_options answer RocksDB's
//!   NotSupported otherwise); reads, merges and flushes of a protected memtable give the data
//!   back unchanged (the checksum's detection of a corrupted entry is shown beside the
//!   memtable, `shale-engine/src/memtable/protection_tests.rs`);
//! - `paranoid_memory_checks`: the same rows (its detection: the same engine tests);
//! - `memtable_prefix_bloom_size_ratio`, `memtable_whole_key_filtering`: `set_options` gives
//!   the next memtable a Bloom filter of the new size;
//! - `compression_opts`: `set_options` changes the fields named, keeps the others, and the
//!   next table is compressed with them (its `rocksdb.compression_options` property).

use std::path::Path;

use shale::table::reader::Table;
use shale::{Cache, DBCompressionType, ErrorKind, Options, DB};

use crate::util;

use util::create_options as base;

#[test]
fn memtable_protection_and_paranoid_checks_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base()
        .get_options_from_string("memtable_protection_bytes_per_key=8;paranoid_memory_checks=true")
        .unwrap();
    o.create_if_missing(true);
    o.set_merge_operator_associative("concat", |_, existing, ops| {
        let mut v = existing.map(|e| e.to_vec()).unwrap_or_default();
        for op in ops {
            v.extend_from_slice(op);
        }
        Some(v)
    });
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  memtable_protection_bytes_per_key=8\n"), "{text}");
    assert!(text.contains("  paranoid_memory_checks=true\n"), "{text}");
    // Protected memtables read back what was written: gets, merges, iterators, a flush.
    for i in 0..500u32 {
        db.put(format!("k{i:04}"), util::value(u64::from(i), (i % 50) as usize)).unwrap();
    }
    db.merge("m", "a").unwrap();
    db.merge("m", "b").unwrap();
    db.delete("k0007").unwrap();
    let check = |db: &DB| {
        assert_eq!(db.get("k0003").unwrap(), Some(util::value(3, 3)));
        assert_eq!(db.get("k0007").unwrap(), None);
        assert_eq!(db.get("m").unwrap(), Some(b"ab".to_vec()));
        let all: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 500, "499 keys and m");
        assert_eq!(&*all[3].1, &util::value(3, 3)[..]);
        assert_eq!(&*all[499].1, b"ab");
    };
    check(&db);
    // set_options: RocksDB's validation, then the next memtable takes the new value.
    let e = db.set_options(&[("memtable_protection_bytes_per_key", "3")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("only supports 0, 1, 2, 4 or 8 bytes per key"), "{e}");
    db.set_options(&[("memtable_protection_bytes_per_key", "2"), ("paranoid_memory_checks", "false")])
        .unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  memtable_protection_bytes_per_key=2\n"), "{text}");
    assert!(text.contains("  paranoid_memory_checks=false\n"), "{text}");
    db.flush().unwrap();
    db.put("k0003", "after").unwrap();
    assert_eq!(db.get("k0003").unwrap(), Some(b"after".to_vec()));
    db.put("k0003", util::value(3, 3)).unwrap();
    check(&db);
    drop(db);
    // The OPTIONS file's values come back through load_latest.
    let (mut again, _) =
        Options::load_latest(path, shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    again.create_if_missing(false);
    again.set_merge_operator_associative("concat", |_, existing, ops| {
        let mut v = existing.map(|e| e.to_vec()).unwrap_or_default();
        for op in ops {
            v.extend_from_slice(op);
        }
        Some(v)
    });
    let db = DB::open(&again, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  memtable_protection_bytes_per_key=2\n"), "kept through load_latest: {text}");
    check(&db);
    drop(db);
    // An unsupported width is refused at open, as RocksDB's ValidateOptions does.
    let mut bad = base().get_options_from_string("memtable_protection_bytes_per_key=3").unwrap();
    bad.create_if_missing(true);
    let e = DB::open(&bad, tempfile::tempdir().unwrap().path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    let e = base().get_options_from_string("paranoid_memory_checks=maybe").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn set_options_gives_the_next_memtable_its_bloom() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = base();
    o.set_write_buffer_size(4 << 20);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("a", "1").unwrap();
    let before = util::int_prop(&db, "rocksdb.cur-size-active-mem-table");
    assert!(before < 1 << 20, "no Bloom yet: {before}");
    db.set_options(&[("memtable_prefix_bloom_size_ratio", "0.25"), ("memtable_whole_key_filtering", "true")])
        .unwrap();
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  memtable_prefix_bloom_size_ratio=0.250000\n"), "{text}");
    assert!(text.contains("  memtable_whole_key_filtering=true\n"), "{text}");
    // The memtable in use keeps its shape; the one the flush switches to has a 1 MiB Bloom.
    assert!(util::int_prop(&db, "rocksdb.cur-size-active-mem-table") < 1 << 20);
    db.flush().unwrap();
    db.put("b", "2").unwrap();
    let after = util::int_prop(&db, "rocksdb.cur-size-active-mem-table");
    assert!(after >= 1 << 20, "the new memtable's Bloom: {after}");
    assert_eq!(db.get("b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get("zz").unwrap(), None);
}

/// The `rocksdb.compression_options` of every live table.
fn compression_options(db: &DB, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for lf in db.live_files().unwrap() {
        let f = dir.join(lf.name.trim_start_matches('/'));
        let size = std::fs::metadata(&f).unwrap().len();
        let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
        let opts = shale::table::reader::TableReaderOptions::standalone(
            shale::key::bytewise_internal_comparator(),
            f.display().to_string(),
        );
        out.push(Table::open(file, size, opts).unwrap().properties().compression_options.clone());
    }
    out
}

#[test]
fn set_options_changes_compression_opts_of_the_next_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_compression_type(DBCompressionType::Zstd);
    o.set_compression_options(-14, 3, 0, 0);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    let first = compression_options(&db, path);
    assert!(first[0].contains("level=3;"), "{first:?}");
    db.set_options(&[("compression_opts", "{level=9;}")]).unwrap();
    let text = util::latest_options_text(path);
    let line = text.lines().find(|l| l.trim_start().starts_with("compression_opts=")).unwrap();
    assert!(line.contains("level=9;"), "{line}");
    assert!(line.contains("window_bits=-14;"), "fields not named keep their values: {line}");
    db.put("b", "2").unwrap();
    db.flush().unwrap();
    let both = compression_options(&db, path);
    assert_eq!(both.len(), 2);
    assert!(both.iter().any(|c| c.contains("level=9;")), "the next table: {both:?}");
    assert!(both.iter().any(|c| c.contains("level=3;")), "the first table unchanged: {both:?}");
    let e = db.set_options(&[("compression_opts", "{no_such_field=1;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// The default family's one table: (name, entries, deletions).
fn only_table(db: &DB) -> (String, u64, u64) {
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1, "{:?}", files.iter().map(|f| &f.name).collect::<Vec<_>>());
    (files[0].name.clone(), files[0].num_entries, files[0].num_deletions)
}

/// RocksDB's bottommost-files compaction (leveled style, reason "BottommostFiles"), which
/// releasing a snapshot sets off, and `bottommost_file_compaction_delay` holding it back.
#[test]
fn bottommost_files_compact_when_their_snapshot_goes_after_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base().get_options_from_string("bottommost_file_compaction_delay=3600").unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, path).unwrap();
    assert!(util::latest_options_text(path).contains("  bottommost_file_compaction_delay=3600\n"));
    db.put("a", "1").unwrap();
    db.put("d", "old").unwrap();
    db.put("k", "v1").unwrap();
    let snap = db.snapshot();
    db.put("k", "v2").unwrap();
    db.delete("d").unwrap();
    db.flush().unwrap();
    let (before, entries, deletions) = only_table(&db);
    assert_eq!((entries, deletions), (5, 1), "the snapshot keeps k's and d's older versions");
    let pending = || util::int_prop(&db, "rocksdb.compaction-pending");
    assert_eq!(pending(), 0, "held by the snapshot");
    // RocksDB frees a table whose largest sequence is below the oldest snapshot left (the
    // last sequence when none is): one more write, kept in the memtable.
    db.put("z", "memtable").unwrap();
    drop(snap);
    // The table is free now, but a day younger than the delay: the picker leaves it.
    assert_eq!(pending(), 0, "the delay holds the table back");
    db.set_options(&[("bottommost_file_compaction_delay", "3600")]).unwrap();
    util::wait_for_background(&db);
    assert_eq!(only_table(&db).0, before, "not compacted within the delay");
    // Without the delay the next pick compacts it in place: the older versions go, and the
    // deletion, which no snapshot needs at the bottom, too.
    db.set_options(&[("bottommost_file_compaction_delay", "0")]).unwrap();
    util::wait_until(60, "the bottommost-files compaction", || only_table(&db).0 != before);
    let (_, entries, deletions) = only_table(&db);
    assert_eq!((entries, deletions), (2, 0));
    assert_eq!(db.get("k").unwrap(), Some(b"v2".to_vec()));
    assert_eq!(db.get("d").unwrap(), None);
    let log = std::fs::read_to_string(path.join("LOG")).unwrap();
    assert!(log.contains("\"compaction_reason\": \"BottommostFiles\""), "{log}");
    // Its output has every sequence zeroed: nothing left to pick.
    util::wait_for_background(&db);
    assert_eq!(pending(), 0);
}

#[test]
fn releasing_a_snapshot_sets_off_the_bottommost_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    db.put("k", "v1").unwrap();
    let snap = db.snapshot();
    db.put("k", "v2").unwrap();
    db.flush().unwrap();
    let (before, entries, _) = only_table(&db);
    assert_eq!(entries, 2);
    util::wait_for_background(&db);
    assert_eq!(only_table(&db).0, before, "held by the snapshot");
    db.put("z", "memtable").unwrap();
    // No write, flush or option change after this: the release alone asks for the pass.
    drop(snap);
    util::wait_until(60, "the bottommost-files compaction", || only_table(&db).1 == 1);
    assert_eq!(db.get("k").unwrap(), Some(b"v2".to_vec()));
}

/// The sizes of the live tables of a database filled with 20,000 small entries (many keys per
/// byte: a large filter and index) and compacted out of level 0 (to the last level, with
/// dynamic level sizes) with a 64 KiB target on every level.
fn compacted_table_sizes(upper_bound: bool) -> Vec<usize> {
    const TARGET: u64 = 64 << 10;
    let dir = tempfile::tempdir().unwrap();
    let text = format!("target_file_size_is_upper_bound={upper_bound}");
    let mut o = base().get_options_from_string(&text).unwrap();
    o.create_if_missing(true);
    o.set_target_file_size_base(TARGET);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(DBCompressionType::None);
    let mut t = shale::BlockBasedOptions::default();
    t.set_bloom_filter(20.0, false);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(util::latest_options_text(dir.path()).contains(&format!("  {text}\n")));
    // Two overlapping level-0 tables (even keys, then odd ones): the compaction rewrites them.
    for parity in 0..2 {
        for i in (parity..20_000u32).step_by(2) {
            db.put(format!("k{i:010}"), i.to_le_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range::<&[u8], &[u8]>(None, None);
    let files = db.live_files().unwrap();
    assert!(files.iter().all(|f| f.level > 0), "{:?}", files.iter().map(|f| f.level).collect::<Vec<_>>());
    assert_eq!(db.get(b"k0000012345").unwrap(), Some(12345u32.to_le_bytes().to_vec()));
    files.iter().map(|f| f.size).collect()
}

#[test]
fn target_file_size_is_upper_bound_counts_the_tail() {
    const TARGET: usize = 64 << 10;
    // Cut by data bytes alone: every full output passes the target by its tail.
    let plain = compacted_table_sizes(false);
    assert!(plain.len() > 2, "{plain:?}");
    assert!(plain.iter().max().unwrap() > &TARGET, "{plain:?}");
    // Counting the estimated tail: no output passes the target by more than the data
    // written between two cut checks and the block still open (4 KiB blocks).
    let bounded = compacted_table_sizes(true);
    assert!(bounded.iter().all(|&s| s <= TARGET + 9 * 1024), "{bounded:?}");
    assert!(bounded.len() >= plain.len(), "smaller outputs, so as many or more: {plain:?} {bounded:?}");
    let sum = |v: &[usize]| v.iter().sum::<usize>();
    assert!(sum(&bounded) >= sum(&plain) * 9 / 10, "the same data: {plain:?} {bounded:?}");
}

/// `default_temperature`: table files recorded with no temperature are read as this one
/// (RocksDB's `rocksdb.<temperature>.file.read.*` tickers), files with their own keep theirs;
/// reads count as last-level or not by where the file was opened.
#[test]
fn default_temperature_counts_reads_of_unknown_temperature_files() {
    use shale::statistics::Ticker;
    let dir = tempfile::tempdir().unwrap();
    let mut o = base().get_options_from_string("default_temperature=kWarm").unwrap();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(util::latest_options_text(dir.path()).contains("  default_temperature=kWarm\n"));
    let e = db.set_options(&[("default_temperature", "kCold")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "immutable, as RocksDB's: {e}");
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    drop(db);
    // Reopened, the table is read through the table cache.
    let db = DB::open(&o, dir.path()).unwrap();
    let before = o.get_ticker_count(Ticker::WarmFileReadBytes);
    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
    let t = |k| o.get_ticker_count(k);
    assert!(t(Ticker::WarmFileReadBytes) > before, "the kUnknown table read as kWarm");
    assert!(t(Ticker::WarmFileReadCount) > 0);
    assert_eq!(t(Ticker::HotFileReadBytes) + t(Ticker::ColdFileReadBytes), 0);
    assert!(t(Ticker::NonLastLevelReadBytes) > 0, "a level-0 table");
    // Two overlapping tables compacted to the last level (dynamic level sizes), reopened:
    // its reads count as last-level ones.
    db.put("b", "2").unwrap();
    db.put("a", "3").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert!(db.live_files().unwrap().iter().all(|f| f.level == 6));
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    let before = t(Ticker::LastLevelReadBytes);
    assert_eq!(db.get("a").unwrap(), Some(b"3".to_vec()));
    assert!(t(Ticker::LastLevelReadBytes) > before && t(Ticker::LastLevelReadCount) > 0);
    drop(db);
    // A table written with a temperature of its own is counted at it.
    let dir = tempfile::tempdir().unwrap();
    let mut o =
        base().get_options_from_string("default_temperature=kWarm;default_write_temperature=kHot").unwrap();
    o.create_if_missing(true);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
    assert!(o.get_ticker_count(Ticker::HotFileReadBytes) > 0);
    assert_eq!(o.get_ticker_count(Ticker::WarmFileReadBytes), 0);
}

/// `memtable=<id>`: RocksDB's alias of `memtable_factory`, read the same way and never
/// written; the OPTIONS file names the factory it chose.
#[test]
fn memtable_alias_chooses_the_factory() {
    for (text, factory) in
        [("memtable=vector", "VectorRepFactory"), ("memtable=skip_list", "SkipListFactory")]
    {
        let dir = tempfile::tempdir().unwrap();
        let mut o = base().get_options_from_string(text).unwrap();
        o.create_if_missing(true);
        o.set_allow_concurrent_memtable_write(false);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put("b", "2").unwrap();
        db.put("a", "1").unwrap();
        let keys: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap().0).collect();
        assert_eq!(keys, vec![b"a".to_vec().into_boxed_slice(), b"b".to_vec().into_boxed_slice()]);
        let options = util::latest_options_text(dir.path());
        let line = options.lines().find(|l| l.trim_start().starts_with("memtable_factory=")).unwrap();
        assert!(line.contains(factory), "{text}: {line}");
        assert!(!options.lines().any(|l| l.trim_start().starts_with("memtable=")), "an alias is not written");
    }
    let e = db_set_memtable_error();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// `set_options(memtable=..)`: immutable, as RocksDB's.
fn db_set_memtable_error() -> shale::Error {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    db.set_options(&[("memtable", "vector")]).unwrap_err()
}
