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

fn base() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

fn latest_options_text(dir: &Path) -> String {
    let name = util::files_ending(dir, "").into_iter().filter(|n| n.starts_with("OPTIONS-")).max().unwrap();
    std::fs::read_to_string(dir.join(name)).unwrap()
}

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
    let text = latest_options_text(path);
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
    let text = latest_options_text(path);
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
    let text = latest_options_text(path);
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
    let text = latest_options_text(dir.path());
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
        let opts = shale::table::reader::TableReaderOptions {
            icmp: shale::key::bytewise_internal_comparator(),
            block_cache: None,
            verify_checksums: true,
            file_name: f.display().to_string(),
            cache_key: shale::cache::OffsetableCacheKey::unique(),
            statistics: None,
        };
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
    let text = latest_options_text(path);
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
