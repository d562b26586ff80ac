//! `set_options(&[("table_factory", ..)])`: RocksDB 11.8.1's `TableFactoryParseFn` replaces a
//! live family's table factory by a new one of the name given (RocksDB's defaults, with the
//! fields of `{id=..;..}`). Flushes and compactions from then on write tables of the new
//! format; the tables already written keep being read; the OPTIONS file written after names
//! the new factory. As RocksDB's SetOptions, the sanitized `ttl` stays: a block-based family
//! (30 days) is refused PlainTable unless `ttl` goes to 0 with it, a PlainTable family keeps 0.

use std::path::Path;

use shale::{Cache, Env, ErrorKind, IteratorMode, Options, PlainTableFactoryOptions, SliceTransform, DB};

use crate::util;

/// RocksDB's table magic numbers (last 8 bytes of a table file).
const BLOCK_BASED: u64 = 0x88e2_41b7_85f4_cff7;
/// What RocksDB's PlainTableBuilder writes (`kLegacyPlainTableMagicNumber`).
const PLAIN: u64 = 0x4f34_18eb_7a8f_13b8;

/// The magic number of each live table, in file-number order.
fn magics(path: &Path) -> Vec<u64> {
    let mut names = util::files_ending(path, ".sst");
    names.sort();
    names
        .iter()
        .map(|n| {
            let b = std::fs::read(path.join(n)).unwrap();
            u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap())
        })
        .collect()
}

fn write(db: &DB, tag: &str) {
    for i in 0..300u32 {
        db.put(format!("{tag}{i:06}"), format!("value-{tag}-{i}")).unwrap();
    }
    db.flush().unwrap();
}

fn check(db: &DB, tags: &[&str]) {
    for tag in tags {
        for i in (0..300u32).step_by(37) {
            assert_eq!(
                db.get(format!("{tag}{i:06}")).unwrap(),
                Some(format!("value-{tag}-{i}").into_bytes()),
                "{tag}{i:06}"
            );
        }
    }
    let mut n = 0;
    for r in db.iterator(IteratorMode::Start) {
        let (k, v) = r.unwrap();
        let k = String::from_utf8(k.to_vec()).unwrap();
        let (tag, i) = k.split_at(4);
        assert_eq!(v.as_ref(), format!("value-{tag}-{}", i.parse::<u32>().unwrap()).as_bytes(), "{k}");
        n += 1;
    }
    assert_eq!(n, 300 * tags.len());
}

fn base() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    o
}

fn plain() -> PlainTableFactoryOptions {
    PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: shale::KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    }
}

/// The options of the latest OPTIONS file, with the prefix extractor (function-valued: the
/// caller's) set again.
fn loaded(path: &Path) -> Options {
    let (mut o, _) =
        Options::load_latest(path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    o
}

/// After a switch from the `old` format to the `new` one (table "aaaa" written before it):
/// the next flush writes `new` beside the `old` table, a compaction reads both and writes
/// `new`, and the database reopened with the options its OPTIONS file holds still writes
/// `new` (tables "bbbb", then "cccc"). Returns the reopened database.
fn write_compact_reopen(db: DB, path: &Path, old: u64, new: u64) -> DB {
    write(&db, "bbbb");
    assert_eq!(magics(path), [old, new]);
    check(&db, &["aaaa", "bbbb"]);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(magics(path).iter().all(|m| *m == new), "{:x?}", magics(path));
    check(&db, &["aaaa", "bbbb"]);
    drop(db);
    let db = DB::open(&loaded(path), path).unwrap();
    check(&db, &["aaaa", "bbbb"]);
    write(&db, "cccc");
    assert!(magics(path).iter().all(|m| *m == new), "{:x?}", magics(path));
    db
}

#[test]
fn block_based_family_switches_to_plain_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let db = DB::open(&base(), path).unwrap();
    write(&db, "aaaa");
    assert_eq!(magics(path), [BLOCK_BASED]);
    // The family's ttl was sanitized to 30 days for block-based tables: RocksDB's
    // ValidateOptions refuses it on a plain table, and nothing changes.
    let e = db.set_options(&[("table_factory", "PlainTable")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("TTL is only supported in Block-Based Table format."), "{e}");
    assert!(util::latest_options_text(path).contains("table_factory=BlockBasedTable"));
    db.set_options(&[("table_factory", "PlainTable"), ("ttl", "0")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("table_factory=PlainTable"), "{text}");
    assert!(text.contains("[TableOptions/PlainTable \"default\"]"), "{text}");
    assert!(text.contains("  ttl=0\n"), "{text}");
    let db = write_compact_reopen(db, path, BLOCK_BASED, PLAIN);
    check(&db, &["aaaa", "bbbb", "cccc"]);
}

#[test]
fn plain_table_family_switches_to_block_based_with_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_plain_table_factory(&plain());
    let db = DB::open(&o, path).unwrap();
    write(&db, "aaaa");
    assert_eq!(magics(path), [PLAIN]);
    // RocksDB's sanitized ttl of a plain-table family is 0, and stays 0 after the switch.
    db.set_options(&[("table_factory", "{id=BlockBasedTable;block_size=16384;}")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("table_factory=BlockBasedTable"), "{text}");
    assert!(text.contains("[TableOptions/BlockBasedTable \"default\"]"), "{text}");
    assert!(text.contains("  block_size=16384\n"), "{text}");
    assert!(text.contains("  ttl=0\n"), "{text}");
    let db = write_compact_reopen(db, path, PLAIN, BLOCK_BASED);
    // The factory named anew has RocksDB's defaults, not the fields set before.
    db.set_options(&[("table_factory", "BlockBasedTable")]).unwrap();
    assert!(util::latest_options_text(path).contains("  block_size=4096\n"));
    check(&db, &["aaaa", "bbbb", "cccc"]);
}

#[test]
fn table_factory_values_rocksdb_does_not_take() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    let before = util::latest_options_text(dir.path());
    let e = db.set_options(&[("table_factory", "NoSuchTable")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Fields without an id: RocksDB's NewSharedObject "Cannot reset object".
    let e = db.set_options(&[("table_factory", "{block_size=8192}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    let e = db.set_options(&[("table_factory", "{id=BlockBasedTable;no_such_field=1}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(util::latest_options_text(dir.path()), before);
    // get_options_from_string takes it too (GetColumnFamilyOptionsFromString).
    let o = base().get_options_from_string("table_factory=PlainTable").unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = DB::open(&o, dir2.path()).unwrap();
    write(&db2, "aaaa");
    assert_eq!(magics(dir2.path()), [PLAIN]);
}

/// CuckooTable too (RocksDB's registry's third factory): the next flush writes a cuckoo
/// table, the block-based one is still read, and the OPTIONS file names CuckooTable.
#[test]
fn block_based_family_switches_to_cuckoo_table() {
    const CUCKOO: u64 = 0x9267_89d0_c5f1_7873;
    // A cuckoo table holds keys and values of one size each.
    let put = |db: &DB, tag: &str| {
        for i in 0..300u32 {
            db.put(format!("{tag}{i:06}"), format!("v{i:06}")).unwrap();
        }
        db.flush().unwrap();
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let db = DB::open(&base(), path).unwrap();
    put(&db, "aaaa");
    db.set_options(&[("table_factory", "{id=CuckooTable;max_search_depth=50;}"), ("ttl", "0")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("table_factory=CuckooTable"), "{text}");
    assert!(text.contains("  max_search_depth=50\n"), "{text}");
    put(&db, "bbbb");
    assert_eq!(magics(path), [BLOCK_BASED, CUCKOO]);
    for tag in ["aaaa", "bbbb"] {
        for i in (0..300u32).step_by(23) {
            assert_eq!(db.get(format!("{tag}{i:06}")).unwrap(), Some(format!("v{i:06}").into_bytes()));
        }
    }
    assert_eq!(db.iterator(IteratorMode::Start).filter(|r| r.is_ok()).count(), 600);
}

/// RocksDB's ColumnFamilyData::ValidateOptions at DB::Open and CreateColumnFamily: an
/// explicit `ttl` or `periodic_compaction_seconds` on a plain-table family is NotSupported;
/// their defaults (sanitized to 0 for a plain table) and 0 open.
#[test]
fn open_refuses_ages_on_a_plain_table_family() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = base();
    o.set_plain_table_factory(&plain());
    o.set_ttl(3600);
    let Err(e) = DB::open(&o, dir.path()) else { panic!("ttl on a plain table opened") };
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("TTL is only supported in Block-Based Table format."), "{e}");
    o.set_ttl(0);
    o.set_periodic_compaction_seconds(3600);
    let Err(e) = DB::open(&o, dir.path()) else { panic!("periodic compaction on a plain table opened") };
    assert!(
        e.to_string().contains("Periodic Compaction is only supported in Block-Based Table format."),
        "{e}"
    );
    o.set_periodic_compaction_seconds(0);
    let mut db = DB::open(&o, dir.path()).unwrap();
    // A new family is checked the same way.
    let mut cf = base();
    cf.set_plain_table_factory(&plain());
    cf.set_ttl(60);
    let Err(e) = db.create_cf("p", &cf) else { panic!("create_cf with ttl on a plain table") };
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    cf.set_ttl(0);
    db.create_cf("p", &cf).unwrap();
}
