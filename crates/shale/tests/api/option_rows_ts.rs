//! `persist_user_defined_timestamps` (an immutable column-family option, default true), as
//! RocksDB 11.8.1's: with false, a family with a `.u64ts` comparator flushes its keys with
//! the minimum timestamp and writes them without it (the table property
//! "rocksdb.user.defined.timestamps.persisted" is 0, the MANIFEST's file records say so),
//! `full_history_ts_low` rises above the flushed timestamps and holds back background
//! flushes while memtables hold newer ones; reads of flushed data see the minimum
//! timestamp. RocksDB's refusals (ValidateOptions) and its rules for changing the
//! comparator or the flag of an existing family (udt_util's
//! `ValidateUserDefinedTimestampsOptions`) come with RocksDB's texts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::Arc;

use shale::table::reader::{Table, TableReaderOptions};
use shale::{ColumnFamilyDescriptor, ErrorKind, Options, ReadOptions, U64TsComparator, DB};

use crate::util;

pub(crate) fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

pub(crate) fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

/// Options from a string (rust-rocksdb 0.25 has no setter), then the rest (shared by the
/// `option_rows_ts_*` files).
pub(crate) fn opts(persist: bool, with_ts: bool) -> Options {
    let mut o = Options::default()
        .get_options_from_string(format!("persist_user_defined_timestamps={persist}"))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_allow_concurrent_memtable_write(false);
    if with_ts {
        o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    }
    o
}

/// A table's entries (key bytes as stored, value) and its properties.
type RawTable = (Vec<(Vec<u8>, Vec<u8>)>, shale::table::properties::TableProperties);

/// Every live table, read as stored (no timestamp handling), with the family's comparator.
fn raw_tables(db: &DB, dir: &Path, with_ts: bool) -> Vec<RawTable> {
    let icmp = if with_ts {
        shale::key::InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise()))
    } else {
        shale::key::bytewise_internal_comparator()
    };
    let mut out = Vec::new();
    for lf in db.live_files().unwrap() {
        let f = dir.join(lf.name.trim_start_matches('/'));
        let size = std::fs::metadata(&f).unwrap().len();
        let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
        let opts = TableReaderOptions::standalone(icmp.clone(), f.display().to_string());
        let t = Table::open(file, size, opts).unwrap();
        let mut it = t.iter(true);
        it.seek_to_first();
        let mut entries = Vec::new();
        while it.valid() {
            entries.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap();
        out.push((entries, t.properties().clone()));
    }
    out
}

fn persisted_prop(p: &shale::table::properties::TableProperties) -> Option<u64> {
    p.raw_u64("rocksdb.user.defined.timestamps.persisted")
}

#[test]
fn row_parses_writes_the_options_file_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(false, true);
    let db = DB::open(&o, dir.path()).unwrap();
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  persist_user_defined_timestamps=false\n"), "{text}");
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("              Options.persist_user_defined_timestamps: false"), "{log}");
    // Immutable: set_options refuses it as RocksDB does.
    let e = db.set_options(&[("persist_user_defined_timestamps", "true")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);
    // The OPTIONS file reads back with the flag.
    let (_, cfs) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    let mut back = cfs.into_iter().find(|d| d.name() == "default").unwrap().options().clone();
    back.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    back.set_allow_concurrent_memtable_write(false);
    let db = DB::open(&back, dir.path()).unwrap();
    drop(db);
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  persist_user_defined_timestamps=false\n"), "{text}");
    // Without timestamps the LOG has no such line (RocksDB prints it only with them), and a
    // bad value is refused.
    let dir2 = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(false, false), dir2.path()).unwrap();
    drop(db);
    let log = std::fs::read_to_string(dir2.path().join("LOG")).unwrap();
    assert!(!log.contains("Options.persist_user_defined_timestamps"), "{log}");
    assert!(Options::default().get_options_from_string("persist_user_defined_timestamps=maybe").is_err());
}

#[test]
fn refusals_carry_rocksdb_texts() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(false, true);
    o.set_allow_concurrent_memtable_write(true);
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert_eq!(
        e.to_string(),
        "Not implemented: Not persisting user-defined timestamps feature is not supported in \
         combination with concurrent memtable write."
    );
    let mut o = opts(false, true);
    o.set_atomic_flush(true);
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Not implemented: Not persisting user-defined timestamps feature is not supportedin \
         combination with atomic flush."
    );
    // A comparator with timestamps whose name does not end in ".u64ts".
    let mut o = opts(false, false);
    o.set_comparator_with_ts(
        "my.ts.comparator",
        8,
        Box::new(|a: &[u8], b: &[u8]| a.cmp(b)),
        Box::new(|a: &[u8], b: &[u8]| a.cmp(b)),
        Box::new(|a: &[u8], _: bool, b: &[u8], _: bool| a.cmp(b)),
    );
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Not implemented: Not persisting user-defined timestampsfeature only support \
         user-defined timestamps formatted as uint64_t."
    );
    // A new family is checked against the database's options the same way.
    let mut db_opts = opts(true, false);
    db_opts.set_allow_concurrent_memtable_write(true);
    let mut db = DB::open(&db_opts, dir.path()).unwrap();
    let e = db.create_cf("t", &opts(false, true)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    // Without timestamps the flag is allowed whatever the rest.
    db.create_cf("plain", &opts(false, false)).unwrap();
}

#[test]
fn flush_writes_keys_without_timestamps_and_reads_see_the_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(false, true);
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 1..=3u64 {
        db.put_with_ts(b"a", ts(t), format!("a{t}")).unwrap();
    }
    db.put_with_ts(b"b", ts(2), b"b2").unwrap();
    // In the memtable every version is there.
    assert_eq!(db.get_opt(b"a", &read_at(1)).unwrap().as_deref(), Some(&b"a1"[..]));
    assert!(db.get_full_history_ts_low(&db.cf_handle("default").unwrap()).unwrap().is_empty());
    db.flush().unwrap();

    let tables = raw_tables(&db, dir.path(), true);
    assert_eq!(tables.len(), 1);
    let (entries, props) = &tables[0];
    // Keys as stored: user key, no timestamp, then the 8-byte trailer.
    let users: Vec<&[u8]> = entries.iter().map(|(k, _)| &k[..k.len() - 8]).collect();
    assert!(users.iter().all(|u| *u == b"a" || *u == b"b"), "{users:?}");
    assert_eq!(persisted_prop(props), Some(0));
    assert!(!props.user_collected.contains_key("rocksdb.timestamp_min"));
    assert_eq!(props.comparator_name, "leveldb.BytewiseComparator.u64ts");
    // raw_key_size counts keys without their timestamps.
    let raw: u64 = entries.iter().map(|(k, _)| k.len() as u64).sum();
    assert_eq!(props.raw_key_size, raw);

    // The flush collapsed the history: full_history_ts_low is just above the newest
    // timestamp flushed, reads below it are refused, reads at or above see the newest.
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), ts(4).to_vec());
    let e = db.get_opt(b"a", &read_at(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(db.get_opt(b"a", &read_at(4)).unwrap().as_deref(), Some(&b"a3"[..]));
    assert_eq!(db.get_opt(b"b", &read_at(9)).unwrap().as_deref(), Some(&b"b2"[..]));
    // An iterator sees the minimum timestamp on flushed keys.
    let mut it = db.raw_iterator_opt(read_at(9));
    it.seek_to_first();
    assert_eq!(it.key(), Some(&b"a"[..]));
    assert_eq!(it.timestamp(), Some(&ts(0)[..]));
    it.seek(b"b");
    assert_eq!(it.value(), Some(&b"b2"[..]));
    drop(it);

    // Newer writes stay with their timestamps in the memtable; after a reopen (WAL
    // replayed) and another flush everything is still read.
    db.put_with_ts(b"c", ts(7), b"c7").unwrap();
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    // The open flushed the WAL's data (RocksDB's WriteLevel0TableForRecovery strips the
    // timestamps too, and leaves full_history_ts_low as it was).
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), ts(4).to_vec());
    assert_eq!(db.get_opt(b"c", &read_at(7)).unwrap().as_deref(), Some(&b"c7"[..]));
    assert_eq!(db.get_opt(b"c", &read_at(4)).unwrap().as_deref(), Some(&b"c7"[..]));
    assert_eq!(db.get_opt(b"a", &read_at(9)).unwrap().as_deref(), Some(&b"a3"[..]));
    db.put_with_ts(b"d", ts(9), b"d9").unwrap();
    assert_eq!(db.get_opt(b"d", &read_at(8)).unwrap(), None);
    db.flush().unwrap();
    assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), ts(10).to_vec());
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let tables = raw_tables(&db, dir.path(), true);
    assert!(tables.iter().all(|(_, p)| persisted_prop(p) == Some(0)));
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    for (k, v) in [(&b"a"[..], &b"a3"[..]), (b"b", b"b2"), (b"c", b"c7"), (b"d", b"d9")] {
        assert_eq!(db.get_opt(k, &read_at(10)).unwrap().as_deref(), Some(v));
    }
    assert_eq!(db.get_opt(b"zz", &read_at(10)).unwrap(), None);
}

#[test]
fn background_flush_waits_for_full_history_ts_low() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(false, true);
    o.set_write_buffer_size(64 << 10);
    o.set_max_write_buffer_number(8);
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.increase_full_history_ts_low(&cf, ts(5)).unwrap();
    // Timestamps 10 and above: a full memtable is switched but not flushed.
    let value = vec![b'v'; 1000];
    let mut i = 0u32;
    while util::int_prop(&db, "rocksdb.num-immutable-mem-table") == 0 {
        db.put_with_ts(format!("k{i:06}"), ts(10), &value).unwrap();
        i += 1;
        assert!(i < 10_000, "no memtable was switched");
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 0);
    assert!(util::int_prop(&db, "rocksdb.num-immutable-mem-table") >= 1);
    // Raising the bound above the memtable's timestamps lets it go.
    db.increase_full_history_ts_low(&cf, ts(11)).unwrap();
    util::wait_until(20, "the held-back flush", || util::int_prop(&db, "rocksdb.num-files-at-level0") >= 1);
    assert_eq!(db.get_opt(b"k000000", &read_at(11)).unwrap().as_deref(), Some(&value[..]));
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("is re-scheduled to retain user-defined timestamps."), "{log}");
}

#[test]
fn toggling_follows_rocksdbs_rules() {
    // Enabling timestamps on a family without them: only with the flag false; the old
    // tables are then read with the minimum timestamp.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(true, false), dir.path()).unwrap();
    db.put(b"old", b"v0").unwrap();
    db.flush().unwrap();
    drop(db);
    let e = DB::open(&opts(true, true), dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot open a column family and enable user-defined timestamps \
         feature without setting persist_user_defined_timestamps flag to false."
    );
    let db = DB::open(&opts(false, true), dir.path()).unwrap();
    assert_eq!(db.get_opt(b"old", &read_at(0)).unwrap().as_deref(), Some(&b"v0"[..]));
    let mut it = db.raw_iterator_opt(read_at(3));
    it.seek_to_first();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"old"[..]), Some(&ts(0)[..])));
    drop(it);
    db.put_with_ts(b"new", ts(2), b"v2").unwrap();
    db.flush().unwrap();
    // The flag cannot change while the family has timestamps.
    drop(db);
    let e = DB::open(&opts(true, true), dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot toggle the persist_user_defined_timestamps flag for a column \
         family with user-defined timestamps feature enabled."
    );
    // Disabling them again: allowed, the flag having been false.
    let db = DB::open(&opts(true, false), dir.path()).unwrap();
    assert_eq!(db.get(b"old").unwrap().as_deref(), Some(&b"v0"[..]));
    assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"v2"[..]));
    drop(db);

    // Disabling timestamps whose flag was true: refused.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(true, true), dir.path()).unwrap();
    drop(db);
    let e = DB::open(&opts(true, false), dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot open a column family and disable user-defined timestamps \
         feature if its existing persist_user_defined_timestamps flag is not false."
    );
    // Another comparator altogether: RocksDB's text.
    let mut o = opts(true, false);
    o.set_comparator_object(Arc::new(U64TsComparator::reverse_bytewise()));
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "Invalid argument: rocksdb.ReverseBytewiseComparator.u64ts: does not match existing \
         comparator leveldb.BytewiseComparator.u64ts"
    );

    // Without timestamps the flag may change, and the tables say what it was.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(true, false), dir.path()).unwrap();
    db.put(b"k", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&opts(false, false), dir.path()).unwrap();
    db.put(b"k", b"2").unwrap();
    db.flush().unwrap();
    let props: Vec<Option<u64>> =
        raw_tables(&db, dir.path(), false).iter().map(|(_, p)| persisted_prop(p)).collect();
    assert_eq!(props.iter().filter(|p| **p == Some(0)).count(), 1, "{props:?}");
    assert_eq!(props.iter().filter(|p| p.is_none()).count(), 1, "{props:?}");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn families_keep_their_own_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut db_opts = opts(true, false);
    db_opts.create_missing_column_families(true);
    let descs = vec![
        ColumnFamilyDescriptor::new("default", opts(true, false)),
        ColumnFamilyDescriptor::new("ts", opts(false, true)),
    ];
    let db = DB::open_cf_descriptors(&db_opts, dir.path(), descs).unwrap();
    let cf = db.cf_handle("ts").unwrap();
    db.put_cf_with_ts(&cf, b"x", ts(3), b"x3").unwrap();
    db.flush_cf(&cf).unwrap();
    let mut ro = read_at(5);
    ro.set_timestamp(ts(5));
    assert_eq!(db.get_cf_opt(&cf, b"x", &ro).unwrap().as_deref(), Some(&b"x3"[..]));
    let text = util::latest_options_text(dir.path());
    let ts_section = text.split("[CFOptions \"ts\"]").nth(1).unwrap();
    assert!(ts_section.contains("  persist_user_defined_timestamps=false\n"));
    let default_section =
        text.split("[CFOptions \"default\"]").nth(1).unwrap().split("[CFOptions").next().unwrap();
    assert!(default_section.contains("  persist_user_defined_timestamps=true\n"));
}

#[test]
fn repair_keeps_tables_without_timestamps_readable() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(false, true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put_with_ts(b"r1", ts(3), b"x").unwrap();
    db.put_with_ts(b"r2", ts(4), b"y").unwrap();
    db.flush().unwrap();
    drop(db);
    // RocksDB's repairer takes the flag from the table's property.
    DB::repair(&o, dir.path()).unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get_opt(b"r1", &read_at(9)).unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(db.get_opt(b"r2", &read_at(9)).unwrap().as_deref(), Some(&b"y"[..]));
    let mut it = db.raw_iterator_opt(read_at(9));
    it.seek_to_last();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"r2"[..]), Some(&ts(0)[..])));
}
