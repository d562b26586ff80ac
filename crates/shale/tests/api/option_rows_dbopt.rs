//! DB options RocksDB 11.8.1 registers that rust-rocksdb has no setter for, set by their
//! names (options strings, OPTIONS files) and acting as RocksDB's (`options_dbopt.rs`):
//! `enforce_single_del_contracts` (a SingleDelete meeting a Delete fails a flush or a
//! compaction with RocksDB's Corruption; off, the SingleDelete goes), `read_io_executor_threads`
//! (RocksDB's open-time check), `rate_limiter_bytes_per_sec` (a generic rate limiter),
//! the kept-and-written ones (`lowest_used_cache_tier`, the follower options, the write
//! temperatures) and the deprecated names (any value, never written).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::Path;
use std::time::{Duration, Instant};

use shale::{ColumnFamilyDescriptor, Env, ErrorKind, Options, DB};

use util::create_options as base;

fn with(s: &str) -> Options {
    base().get_options_from_string(s).unwrap()
}

use util::expect_err as err;

const SD_MESSAGE: &str = "Found SD and type: 0 on the same key, violating the contract of SingleDelete";

#[test]
fn single_delete_over_delete_fails_the_flush_unless_contracts_are_off() {
    // RocksDB 11's default: enforced.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.delete(b"k").unwrap();
    db.single_delete(b"k").unwrap();
    let e = err(db.flush());
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(SD_MESSAGE), "{e}");
    assert!(util::files_ending(dir.path(), ".sst").is_empty(), "no table installed");
    drop(db);

    // Off: the flush goes through; the SingleDelete is dropped and the Delete hides "k".
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("enforce_single_del_contracts=false"), dir.path()).unwrap();
    db.put(b"k", b"old").unwrap();
    db.flush().unwrap();
    db.delete(b"k").unwrap();
    db.single_delete(b"k").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
    assert!(util::latest_options_text(dir.path()).contains("enforce_single_del_contracts=false"));
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    // RocksDB 11.8.1's DBOptions::Dump prints this flag as true/false.
    assert!(log.contains("Options.enforce_single_del_contracts: false"), "the LOG shows it");
    drop(db);
    // It reaches the same state through the OPTIONS file.
    let (loaded, _) =
        Options::load_latest(dir.path(), Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, dir.path()).unwrap();
    db.delete(b"k2").unwrap();
    db.single_delete(b"k2").unwrap();
    db.flush().unwrap();
}

#[test]
fn single_delete_over_delete_fails_a_compaction_of_their_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = base();
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.delete(b"k").unwrap();
    db.flush().unwrap();
    db.single_delete(b"k").unwrap();
    db.flush().unwrap();
    let before = util::files_ending(dir.path(), ".sst");
    assert_eq!(before.len(), 3);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // The compaction failed: the three tables are still the live ones, and the failure is
    // the database's background error, in RocksDB's words.
    let live: Vec<String> =
        db.live_files().unwrap().into_iter().map(|f| f.name.trim_start_matches('/').to_string()).collect();
    let mut live_sorted = live.clone();
    live_sorted.sort();
    let mut before_sorted = before.clone();
    before_sorted.sort();
    assert_eq!(live_sorted, before_sorted);
    let e = err(db.put(b"x", b"y"));
    assert!(e.to_string().contains(SD_MESSAGE), "{e}");
    drop(db);

    // Off: the same compaction goes through and leaves "k" deleted.
    let dir = tempfile::tempdir().unwrap();
    let mut o = with("enforce_single_del_contracts=false");
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.delete(b"k").unwrap();
    db.flush().unwrap();
    db.single_delete(b"k").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.put(b"x", b"y").unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
    assert!(db.live_files().unwrap().len() <= 1, "compacted into at most one table");
}

#[test]
fn read_io_executor_threads_below_one_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let e = err(DB::open(&with("read_io_executor_threads=0"), dir.path()));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("read_io_executor_threads must be greater than zero"), "{e}");
    let db = DB::open(&with("read_io_executor_threads=4"), dir.path()).unwrap();
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("read_io_executor_threads=4"));
}

#[test]
fn kept_options_are_written_logged_and_loaded_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = "lowest_used_cache_tier=kVolatileTier;follower_refresh_catchup_period_ms=777;\
             follower_catchup_retry_count=3;follower_catchup_retry_wait_ms=55;\
             metadata_write_temperature=kWarm;wal_write_temperature=kCold";
    let db = DB::open(&with(s), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    drop(db);
    let want = [
        "lowest_used_cache_tier=kVolatileTier",
        "follower_refresh_catchup_period_ms=777",
        "follower_catchup_retry_count=3",
        "follower_catchup_retry_wait_ms=55",
        "metadata_write_temperature=kWarm",
        "wal_write_temperature=kCold",
    ];
    let text = util::latest_options_text(dir.path());
    for w in want {
        assert!(text.contains(w), "{w} in\n{text}");
    }
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    // RocksDB 11.8.1's DBOptions::Dump prints the temperatures (not the follower options).
    assert!(log.contains("Options.metadata_write_temperature: kWarm"), "the LOG shows it");
    assert!(log.contains("Options.wal_write_temperature: kCold"), "the LOG shows it");
    assert!(!log.contains("Options.follower_catchup_retry_count"), "RocksDB's LOG has no such line");
    // Loaded from the file and written again by the next open: the same values.
    let (loaded, _) =
        Options::load_latest(dir.path(), Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, dir.path()).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    drop(db);
    let text = util::latest_options_text(dir.path());
    for w in want {
        assert!(text.contains(w), "{w} after reloading in\n{text}");
    }
    // Values outside RocksDB's enums are InvalidArgument naming the option.
    for bad in ["lowest_used_cache_tier=kFast", "wal_write_temperature=kHotter"] {
        let e = err(base().get_options_from_string(bad));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}");
        assert!(e.to_string().contains(bad.split('=').next().unwrap()), "{e}");
    }
}

#[test]
fn deprecated_names_take_any_value_and_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let o = with(
        "disable_data_sync=true;concurrent_prepare=true;access_hint_on_compaction_start=SEQUENTIAL;\
         rate_limiter=anything",
    );
    let cfs = vec![ColumnFamilyDescriptor::new("default", o.clone())];
    let db = DB::open_cf_descriptors(&o, dir.path(), cfs).unwrap();
    db.put(b"a", b"1").unwrap();
    drop(db);
    let text = util::latest_options_text(dir.path());
    for name in
        ["disable_data_sync", "concurrent_prepare", "access_hint_on_compaction_start", "rate_limiter="]
    {
        assert!(!text.contains(name), "{name} is not written:\n{text}");
    }
}

/// Values of `len` bytes that do not compress.
fn noise(i: u32, len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9u32.wrapping_mul(i + 1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn rate_limiter_bytes_per_sec_throttles_flushes_as_a_generic_rate_limiter() {
    const RATE: u64 = 512 << 10;
    let dir = tempfile::tempdir().unwrap();
    let mut o = with(&format!("rate_limiter_bytes_per_sec={RATE}"));
    o.set_compression_type(shale::DBCompressionType::None);
    o.set_write_buffer_size(64 << 20);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..5000u32 {
        db.put(format!("key{i:06}"), noise(i, 400)).unwrap();
    }
    let t = Instant::now();
    db.flush().unwrap();
    let took = t.elapsed();
    let written: u64 = db.live_files().unwrap().iter().map(|f| f.size as u64).sum();
    assert!(written > 2_000_000, "flushed {written} bytes");
    // A generic limiter lets one 100 ms refill's bytes through at once; the rest waits.
    let floor = Duration::from_secs_f64((written - RATE / 10) as f64 / RATE as f64);
    assert!(
        took >= floor.mul_f64(0.9),
        "flush of {written} bytes at {RATE} B/s took {took:?}, floor {floor:?}"
    );
    // Never written (RocksDB's kDontSerialize).
    assert!(!util::latest_options_text(dir.path()).contains("rate_limiter_bytes_per_sec"));
}

/// Tables of `dir`, ascending by number.
fn tables(dir: &Path) -> Vec<String> {
    let mut t = util::files_ending(dir, ".sst");
    t.sort();
    t
}

/// A database with two flushed tables ("a" keys, then "b" keys) and "c" in the WAL only.
fn two_tables_and_a_wal(dir: &Path) {
    let mut o = base();
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.put(b"b", b"2").unwrap();
    db.flush().unwrap();
    db.put(b"c", b"3").unwrap();
    drop(db);
    assert_eq!(tables(dir).len(), 2);
}

#[test]
fn best_efforts_recovery_rolls_back_to_the_last_complete_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    two_tables_and_a_wal(path);
    let newest = tables(path).pop().unwrap();
    std::fs::remove_file(path.join(&newest)).unwrap();

    // Without it the open fails on the missing table.
    let mut plain = base();
    plain.set_disable_auto_compactions(true);
    assert!(DB::open(&plain, path).is_err(), "a missing table fails a plain open");

    // With it: the version before the second flush, and no WAL replayed.
    let mut ber = with("best_efforts_recovery=true");
    ber.set_disable_auto_compactions(true);
    let db = DB::open(&ber, path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap(), None, "the missing table's data is gone");
    assert_eq!(db.get(b"c").unwrap(), None, "WALs are not recovered");
    db.put(b"d", b"4").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(util::latest_options_text(path).contains("best_efforts_recovery=true"));

    // The recovered state is the database's now: a plain open sees it, and the old WAL
    // does not come back.
    let db = DB::open(&plain, path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get(b"c").unwrap(), None);
    assert_eq!(db.get(b"d").unwrap().unwrap(), b"4");
}

#[test]
fn best_efforts_recovery_treats_a_truncated_table_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    two_tables_and_a_wal(path);
    let cut = tables(path).pop().unwrap();
    let newest = path.join(&cut);
    let len = std::fs::metadata(&newest).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&newest).unwrap().set_len(len / 2).unwrap();
    let db = DB::open(&with("best_efforts_recovery=true"), path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap(), None);
    // The new files are numbered above everything in the directory: the cut table is not
    // overwritten by this open's files.
    db.put(b"e", b"5").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"e").unwrap().unwrap(), b"5");
    let live: Vec<String> =
        db.live_files().unwrap().into_iter().map(|f| f.name.trim_start_matches('/').to_string()).collect();
    assert_eq!(live.len(), 2, "{live:?}");
    assert!(!live.contains(&cut), "{live:?} reuses {cut}");
}

#[test]
fn best_efforts_recovery_with_every_file_present_is_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    two_tables_and_a_wal(path);
    // CURRENT is not read: the newest MANIFEST is.
    std::fs::remove_file(path.join("CURRENT")).unwrap();
    let db = DB::open(&with("best_efforts_recovery=true"), path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap().unwrap(), b"2");
    drop(db);
    // An empty directory is a new database, with create_if_missing only.
    let empty = tempfile::tempdir().unwrap();
    let mut no_create = with("best_efforts_recovery=true");
    no_create.create_if_missing(false);
    let e = err(DB::open(&no_create, empty.path()));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("does not exist (create_if_missing is false)"), "{e}");
    let db = DB::open(&with("best_efforts_recovery=true"), empty.path()).unwrap();
    db.put(b"x", b"y").unwrap();
}

#[test]
fn best_efforts_recovery_in_a_read_only_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    two_tables_and_a_wal(path);
    std::fs::remove_file(path.join(tables(path).pop().unwrap())).unwrap();
    assert!(
        DB::open_for_read_only(&base(), path, false).is_err(),
        "a missing table fails a plain read-only open"
    );
    let db = DB::open_for_read_only(&with("best_efforts_recovery=true"), path, false).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get(b"c").unwrap(), None, "WALs are not recovered");
}

/// The data blocks a seek to an absent prefix reads, and whether it ends valid, with the
/// default ReadOptions (legacy prefix seek unless `prefix_seek_opt_in_only`).
fn absent_prefix_seek(o: &Options) -> (u64, bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(o, dir.path()).unwrap();
    // Two tables holding prefixes "p0" and "p2"; "p1" lies between them, in neither.
    for p in ["p0", "p2"] {
        for j in 0..50 {
            db.put(format!("{p}-{j:03}"), format!("value-{j:03}")).unwrap();
        }
        db.flush().unwrap();
    }
    let reads = || db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property");
    let before = reads();
    let mut it = db.raw_iterator_opt(shale::ReadOptions::default());
    it.seek(b"p1");
    it.status().unwrap();
    (reads() - before, it.valid())
}

#[test]
fn prefix_seek_opt_in_only_makes_every_iterator_total_order() {
    let opts = |s: &str| {
        let mut t = shale::BlockBasedOptions::default();
        t.set_bloom_filter(20.0, false);
        t.set_whole_key_filtering(false);
        t.disable_cache();
        t.set_block_size(256);
        let mut o = with(s);
        o.set_disable_auto_compactions(true);
        o.set_prefix_extractor(shale::SliceTransform::create_fixed_prefix(2));
        o.set_block_based_table_factory(&t);
        o
    };
    // Legacy prefix seek: the tables' prefix filters rule "p1" out; no data block is read.
    let (read, _) = absent_prefix_seek(&opts("prefix_seek_opt_in_only=false"));
    assert_eq!(read, 0, "legacy prefix seek consults the prefix filters");
    // Opted in only: the same ReadOptions seek in total order and land on "p2-000".
    let (read, valid) = absent_prefix_seek(&opts("prefix_seek_opt_in_only=true"));
    assert!(read > 0 && valid, "a total-order seek reads the tables ({read} blocks, valid {valid})");
}

/// Range syncs (plain, strict) of a database on a fault-counting file system writing ~4 MB
/// of values to its WAL and a table, with `bytes_per_sync` and `wal_bytes_per_sync` 256 KiB.
fn range_syncs(strict: bool) -> (u64, u64) {
    use shale::fs::{FaultInjectionFs, MemFileSystem, OpKind};
    let fs = std::sync::Arc::new(FaultInjectionFs::new(std::sync::Arc::new(MemFileSystem::new())));
    let mut o = with(&format!("strict_bytes_per_sync={strict}"));
    o.set_file_system(fs.clone());
    o.set_compression_type(shale::DBCompressionType::None);
    o.set_write_buffer_size(64 << 20);
    o.set_bytes_per_sync(256 << 10);
    o.set_wal_bytes_per_sync(256 << 10);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..4096u32 {
        db.put(format!("key{i:06}"), noise(i, 1024)).unwrap();
    }
    db.flush().unwrap();
    (fs.count(OpKind::RangeSync), fs.count(OpKind::RangeSyncStrict))
}

#[test]
fn strict_bytes_per_sync_asks_every_write_back_in_the_strict_form() {
    let (plain, strict) = range_syncs(false);
    assert!(plain >= 20 && strict == 0, "plain: {plain} range syncs, {strict} strict");
    // The same requests (the table's and the WAL's), each in the waiting form.
    let (plain2, strict2) = range_syncs(true);
    assert_eq!((plain2, strict2), (0, plain), "strict: {plain2} plain, {strict2} strict");
}

#[test]
fn flushes_with_every_entry_kind_pass_the_memtable_count_check() {
    // Puts, deletes, single deletes, merges-free range deletions and a cuckoo-free table:
    // the counts RocksDB compares agree, so the verified flush (the default) succeeds, and
    // the row is written and read back.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}"), b"v").unwrap();
    }
    db.delete(b"k001").unwrap();
    db.single_delete(b"k002").unwrap();
    db.delete_range(b"k010", b"k020").unwrap();
    db.put(b"k050", b"again").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"k015").unwrap(), None);
    assert_eq!(db.get(b"k050").unwrap().unwrap(), b"again");
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("flush_verify_memtable_count=true"));
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&with("flush_verify_memtable_count=false"), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("flush_verify_memtable_count=false"));
}

#[test]
fn compactions_with_every_entry_kind_pass_the_record_count_check() {
    // Overwrites, deletes, a range deletion across tables, in several level-0 tables and a
    // lower level: the point entries each compaction reads match its inputs' counts, so the
    // verified compaction (the default) goes through; the row is written and read back.
    for s in ["compaction_verify_record_count=true", "compaction_verify_record_count=false"] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = with(s);
        o.set_disable_auto_compactions(true);
        let db = DB::open(&o, dir.path()).unwrap();
        for round in 0..3u32 {
            for i in 0..200u32 {
                db.put(format!("k{i:04}"), format!("v{round}-{i}")).unwrap();
            }
            db.delete(format!("k{:04}", round)).unwrap();
            if round == 2 {
                db.delete_range(b"k0100", b"k0150").unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        db.put(b"after", b"1").unwrap();
        assert_eq!(db.get(b"k0120").unwrap(), None);
        assert_eq!(db.get(b"k0199").unwrap().unwrap(), b"v2-199");
        assert_eq!(db.live_files().unwrap().len(), 1, "{s}: compacted into one table");
        drop(db);
        assert!(util::latest_options_text(dir.path()).contains(s));
    }
}
