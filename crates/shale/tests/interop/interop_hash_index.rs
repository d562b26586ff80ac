//! The hash index (`BlockBasedIndexType::HashSearch`, RocksDB's kHashSearch) both ways with
//! RocksDB 11.8.1.
//!
//! RocksDB -> Shale: `db_bench --use_hash_search=true --prefix_size=9 --keys_per_prefix=10`
//! writes tables with the two hash-index meta blocks. Shale decodes them, and they equal,
//! record for record, what Shale's builder computes from each table's data blocks (so the
//! tables Shale writes carry the same records RocksDB's builder would); every key reads back.
//!
//! Shale -> RocksDB: with a 9-byte prefix extractor and the hash index, Shale's tables
//! record every prefix; a prefix-mode seek or a point lookup whose prefix a table lacks
//! reads no data block (the same lookups in tables with a binary index do); the OPTIONS file
//! says `index_type=kHashSearch` with `index_block_restart_interval=1`; RocksDB 11.8.1's
//! `sst_dump --command=verify`, `ldb scan` and `ldb get` (which loads the OPTIONS file, so
//! its lookups go through RocksDB's prefix index and land by the recorded block runs) read
//! the data. Without a prefix extractor the open fails with RocksDB's InvalidArgument.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::table::Table;
use shale::{BlockBasedIndexType, BlockBasedOptions, ErrorKind, Options, ReadOptions, SliceTransform, DB};
use tools::*;

const PREFIX_LEN: usize = 9;

fn options(hash: bool) -> Options {
    let mut t = BlockBasedOptions::default();
    t.disable_cache();
    t.set_block_size(512);
    t.set_index_block_restart_interval(16);
    if hash {
        t.set_index_type(BlockBasedIndexType::HashSearch);
    }
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(shale::DBCompressionType::None);
    o.set_block_based_table_factory(&t);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(PREFIX_LEN));
    o
}

/// db_bench's layout with `--prefix_size=9 --key_size=17`: `BE64(p) '0' BE64(v)`.
fn key(p: u64, v: u64) -> Vec<u8> {
    let mut k = p.to_be_bytes().to_vec();
    k.push(b'0');
    k.extend_from_slice(&v.to_be_bytes());
    k
}

fn reads(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

fn open_table(f: &Path) -> Arc<Table> {
    let (file, size, opts) = table_file(f);
    let extractor = Arc::new(SliceTransform::create_fixed_prefix(PREFIX_LEN));
    Table::open_for_cf(file, size, opts, shale::key::MAX_SEQUENCE_NUMBER, Some(extractor)).unwrap()
}

/// Each table's stored hash-index records equal the ones computed from its keys; returns
/// how many prefixes the tables record in all.
fn check_records(dir: &Path, ctx: &str) -> usize {
    let extractor = SliceTransform::create_fixed_prefix(PREFIX_LEN);
    let mut prefixes = 0;
    let files = sst_files(dir);
    assert!(!files.is_empty(), "{ctx}: no table");
    for f in files {
        let t = open_table(&f);
        let index_type = t.properties().user_collected.get("rocksdb.block.based.table.index.type").cloned();
        assert_eq!(index_type, Some(vec![1, 0, 0, 0]), "{ctx}: {} is not a kHashSearch table", f.display());
        let stored = t.hash_index_runs().unwrap().expect("the hash index blocks");
        let rebuilt = t.rebuild_hash_index_runs(&extractor).unwrap();
        assert_eq!(stored, rebuilt, "{ctx}: {}", f.display());
        assert!(
            stored.iter().any(|r| r.num_blocks > 1),
            "{ctx}: {}: no prefix spans two blocks; the test needs smaller blocks",
            f.display()
        );
        prefixes += stored.len();
    }
    prefixes
}

#[test]
fn hash_index_needs_a_prefix_extractor() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(true);
    o.set_prefix_extractor(SliceTransform::create_noop());
    let mut o2 = Options::default();
    o2.create_if_missing(true);
    let mut t = BlockBasedOptions::default();
    t.set_index_type(BlockBasedIndexType::HashSearch);
    o2.set_block_based_table_factory(&t);
    let Err(e) = DB::open(&o2, dir.path()) else { panic!("kHashSearch without a prefix extractor opened") };
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string()
            .contains("Hash index is specified for block-based table, but prefix_extractor is not given"),
        "{e}"
    );
    // With one, it opens (a noop extractor: every key its own prefix).
    DB::open(&o, dir.path()).unwrap();
}

#[test]
fn rocksdb_11_hash_index_tables_read_in_shale() {
    let test = "rocksdb_11_hash_index_tables_read_in_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(
        &dir,
        6000,
        &[
            "--use_hash_search=true",
            "--prefix_size=9",
            "--keys_per_prefix=10",
            "--key_size=17",
            "--block_size=512",
            "--compression_type=none",
            "--write_buffer_size=131072",
            "--target_file_size_base=262144",
        ],
    );
    let prefixes = check_records(&dir, test);
    assert!(prefixes >= 100, "{test}: {prefixes} prefixes recorded");
    let want = ldb_scan(&dir, None);
    assert!(want.len() > 1000, "ldb saw {} pairs", want.len());
    let mut o = options(true);
    o.create_if_missing(false);
    let db = DB::open(&o, &dir).unwrap();
    for (k, v) in &want {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "get {}", encode_hex(k));
    }
    assert_same_pairs(&shale_scan_default(&db), &want, test);
}

#[test]
fn shale_hash_index_tables_read_in_rocksdb_11() {
    let test = "shale_hash_index_tables_read_in_rocksdb_11";
    let tmp = tempfile::tempdir().unwrap();
    // The same data with a hash index and with a binary one: even prefixes only, 12 keys each
    // (several 512-byte blocks a prefix).
    let write = |hash: bool| {
        let dir = tmp.path().join(if hash { "hash" } else { "binary" });
        let db = DB::open(&options(hash), &dir).unwrap();
        for p in (0..200u64).step_by(2) {
            for v in 0..12u64 {
                db.put(key(p, v), vec![b'a' + (v % 26) as u8; 60]).unwrap();
            }
        }
        db.flush().unwrap();
        drop(db);
        dir
    };
    let (dir, binary_dir) = (write(true), write(false));
    assert_eq!(check_records(&dir, test), 100);
    let options_file = latest_options_text(&dir);
    assert!(options_file.contains("index_type=kHashSearch"), "{options_file}");
    assert!(options_file.contains("index_block_restart_interval=1\n"), "{options_file}");

    // Absent prefixes inside the tables' key range: looked up and seeked in prefix mode.
    let absent = |db: &DB| {
        let before = reads(db);
        for p in (1..200u64).step_by(2) {
            assert_eq!(db.get(key(p, 3)).unwrap(), None);
            let mut ro = ReadOptions::default();
            ro.set_prefix_same_as_start(true);
            let mut it = db.raw_iterator_opt(ro);
            it.seek(key(p, 0));
            it.status().unwrap();
            assert!(!it.valid(), "prefix {p} is absent");
        }
        reads(db) - before
    };
    let mut o = options(true);
    o.create_if_missing(false);
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(absent(&db), 0, "{test}: the hash index spares every data block read");
    // Present prefixes still read and seek as before, in both modes.
    for p in (0..200u64).step_by(2) {
        assert!(db.get(key(p, 11)).unwrap().is_some());
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        assert_eq!(
            db.iterator_opt(shale::IteratorMode::From(&key(p, 0), shale::Direction::Forward), ro).count(),
            12
        );
    }
    drop(db);
    let db = DB::open(&options(false), &binary_dir).unwrap();
    assert!(absent(&db) >= 100, "{test}: a binary index reads a block for each absent lookup");
    drop(db);

    if !use_rocksdb_11(test) {
        return;
    }
    for f in sst_files(&dir) {
        run_tool("sst_dump", &[format!("--file={}", f.display()), "--command=verify".to_string()]);
    }
    let pairs = ldb_scan(&dir, None);
    assert_eq!(pairs.len(), 1200);
    for p in (0..200u64).step_by(20) {
        for v in [0, 5, 11] {
            assert!(ldb_get(&dir, None, &key(p, v)).is_some(), "{test}: ldb get {p}/{v}");
        }
        assert_eq!(ldb_get(&dir, None, &key(p + 1, 0)), None, "{test}: ldb get absent {}", p + 1);
    }
}
