//! PlainTable and CuckooTable interop with RocksDB 11.8.1's tools (see tools/mod.rs; skipped
//! with a printed reason when they are absent or cannot run here):
//! - RocksDB -> Shale: databases `db_bench --use_plain_table=1 --prefix_size=8` and
//!   `db_bench --use_cuckoo_table=1 --mmap_read=1` write open in Shale (with default options:
//!   the table cache picks the reader by footer magic number) with exactly the pairs
//!   `ldb scan` prints, forward and reverse, and point reads agree;
//! - Shale -> RocksDB: databases Shale writes with `set_plain_table_factory` (a prefix
//!   extractor, both key encodings) and `set_cuckoo_table_factory` (fixed-size keys and
//!   values) are read by 11.8.1's `ldb scan` (it loads Shale's OPTIONS file) with Shale's
//!   pairs, and `sst_dump --command=scan` reads every table file. RocksDB's cuckoo reader
//!   needs `allow_mmap_reads`, which ldb takes only from the OPTIONS file: the test adds it
//!   there for ldb (Shale itself does not need it).
//! - `store_index_in_file` both ways: RocksDB reads Shale's stored hash index and Bloom
//!   (`ldb get`, and no index rebuilt in db_bench's LOG), Shale reads db_bench's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{CuckooTableOptions, KeyEncodingType, Options, PlainTableFactoryOptions, SliceTransform, DB};
use tools::*;

const LEGACY_PLAIN_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
const CUCKOO_MAGIC: u64 = 0x9267_89d0_c5f1_7873;

/// The magic numbers (last 8 bytes) of the database's table files.
fn table_magics(dir: &Path) -> Vec<u64> {
    sst_files(dir)
        .iter()
        .map(|f| {
            let b = std::fs::read(f).unwrap();
            u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap())
        })
        .collect()
}

fn rocksdb_to_shale(test: &str, flags: &[&str], magic: u64) {
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    db_bench_run(&db, "fillrandom,overwrite", 20_000, flags);
    let want = ldb_scan(&db, None);
    assert!(want.len() > 1000, "{test}: db_bench wrote {} pairs", want.len());
    let magics = table_magics(&db);
    // One table or several: db_bench's compactions decide (on a loaded machine its cuckoo
    // run can end with a single table); every one must be of the format asked for.
    assert!(!magics.is_empty() && magics.iter().all(|&m| m == magic), "{test}: table magics {magics:x?}");
    let shale_db =
        DB::open(&Options::default(), &db).unwrap_or_else(|e| panic!("{test}: Shale cannot open: {e}"));
    let got = shale_scan(&shale_db, "default");
    assert_same_pairs(&got, &want, test);
    let mut rev = shale_scan_reverse(&shale_db, "default");
    rev.reverse();
    assert_same_pairs(&rev, &want, &format!("{test} (reverse)"));
    for (k, v) in want.iter().step_by(97) {
        assert_eq!(shale_db.get(k).unwrap().as_deref(), Some(&v[..]), "{test}: get");
    }
}

#[test]
fn rocksdb_11_plain_tables_read_as_ldb_reads_them() {
    rocksdb_to_shale(
        "rocksdb_11_plain_tables_read_as_ldb_reads_them",
        &[
            "--use_plain_table=1",
            "--prefix_size=8",
            "--key_size=16",
            "--value_size=50",
            "--write_buffer_size=200000",
            "--target_file_size_base=400000",
            "--compression_type=none",
        ],
        LEGACY_PLAIN_MAGIC,
    );
}

#[test]
fn rocksdb_11_cuckoo_tables_read_as_ldb_reads_them() {
    rocksdb_to_shale(
        "rocksdb_11_cuckoo_tables_read_as_ldb_reads_them",
        &[
            "--use_cuckoo_table=1",
            "--mmap_read=1",
            "--key_size=16",
            "--value_size=50",
            "--write_buffer_size=200000",
            "--compression_type=none",
        ],
        CUCKOO_MAGIC,
    );
}

/// Writes `n` fixed-size pairs in several flushes, deletes some, compacts; returns the view.
fn shale_writes(dir: &Path, opts: &Options, n: usize, compact: bool) -> Pairs {
    let db = DB::open(opts, dir).unwrap();
    for round in 0..4 {
        for i in (round..n).step_by(4) {
            let k = format!("key{:05}-{:04}", i % 50, i);
            let v = format!("value-{round}-{i:08}");
            db.put(k.as_bytes(), v.as_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    if compact {
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
    let got = shale_scan(&db, "default");
    assert_eq!(got.len(), n);
    for (k, v) in got.iter().step_by(13) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
    got
}

fn sst_dump_reads_every_table(dir: &Path, want_entries: Option<usize>, ctx: &str) {
    let mut total = 0;
    for f in sst_files(dir) {
        let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=scan"]));
        total += out.lines().filter(|l| l.contains(" => ")).count();
    }
    if let Some(n) = want_entries {
        assert_eq!(total, n, "{ctx}: sst_dump scan entries");
    }
}

#[test]
fn shale_plain_tables_read_by_rocksdb_11() {
    let test = "shale_plain_tables_read_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    for (encoding, key_len) in
        [(KeyEncodingType::Plain, 0), (KeyEncodingType::Plain, 13), (KeyEncodingType::Prefix, 0)]
    {
        let ctx = format!("{test} {encoding:?} user_key_len {key_len}");
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(8));
        opts.set_plain_table_factory(&PlainTableFactoryOptions {
            user_key_length: key_len,
            bloom_bits_per_key: 10,
            hash_table_ratio: 0.75,
            index_sparseness: 3,
            huge_page_tlb_size: 0,
            encoding_type: encoding,
            full_scan_mode: false,
            store_index_in_file: false,
        });
        let want = shale_writes(&db, &opts, 2000, true);
        let magics = table_magics(&db);
        assert!(!magics.is_empty() && magics.iter().all(|&m| m == LEGACY_PLAIN_MAGIC), "{ctx}: {magics:x?}");
        let got = ldb_scan(&db, None);
        assert_same_pairs(&got, &want, &ctx);
        sst_dump_reads_every_table(&db, Some(2000), &ctx);
        // Shale reopens what it wrote.
        let d = DB::open(&opts, &db).unwrap();
        assert_same_pairs(&shale_scan(&d, "default"), &want, &ctx);
    }
}

#[test]
fn shale_cuckoo_tables_read_by_rocksdb_11() {
    let test = "shale_cuckoo_tables_read_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    for (identity, module, block) in [(false, true, 5), (true, false, 10)] {
        let ctx = format!("{test} identity {identity} module {module} block {block}");
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let mut c = CuckooTableOptions::default();
        c.set_hash_ratio(0.8);
        c.set_max_search_depth(50);
        c.set_cuckoo_block_size(block);
        c.set_identity_as_first_hash(identity);
        c.set_use_module_hash(module);
        opts.set_cuckoo_table_factory(&c);
        // Four flushes (the fourth triggers a level-0 compaction into one cuckoo table).
        let want = shale_writes(&db, &opts, 1200, false);
        let magics = table_magics(&db);
        assert!(!magics.is_empty() && magics.iter().all(|&m| m == CUCKOO_MAGIC), "{ctx}: {magics:x?}");
        sst_dump_reads_every_table(&db, Some(1200), &ctx);
        // RocksDB's cuckoo reader needs allow_mmap_reads; ldb takes it from OPTIONS only.
        for f in files_with_suffix(&db, "") {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("OPTIONS-") {
                let s = std::fs::read_to_string(&f).unwrap();
                let s = s.replacen("[DBOptions]\n", "[DBOptions]\n  allow_mmap_reads=true\n", 1);
                std::fs::write(&f, s).unwrap();
            }
        }
        let got = ldb_scan(&db, None);
        assert_same_pairs(&got, &want, &ctx);
    }
}

#[test]
fn plain_table_without_prefix_extractor_needs_total_order_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut p = PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    };
    opts.set_plain_table_factory(&p);
    let Err(e) = DB::open(&opts, dir.path().join("a")) else { panic!("open accepted it") };
    assert!(e.to_string().contains("PlainTable requires a prefix extractor"), "{e}");
    // Total-order mode: hash_table_ratio 0.
    p.hash_table_ratio = 0.0;
    opts.set_plain_table_factory(&p);
    let want = shale_writes(&dir.path().join("b"), &opts, 400, true);
    let d = DB::open(&opts, dir.path().join("b")).unwrap();
    assert_same_pairs(&shale_scan(&d, "default"), &want, "total order");
}

/// kPrefix encoding without a prefix extractor (issue 33, docs/refusals.md): RocksDB 11.8.1
/// encodes kPlain records then (its `PlainTableKeyEncoder`), and Shale does the same
/// instead of refusing the options; RocksDB's `sst_dump` and `ldb` read the tables, whose
/// encoding property is kPlain (0), as RocksDB's builder writes it.
#[test]
fn kprefix_without_prefix_extractor_writes_plain_records_rocksdb_reads() {
    let test = "kprefix_without_prefix_extractor_writes_plain_records_rocksdb_reads";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.0,
        index_sparseness: 3,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Prefix,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    let want = shale_writes(&db, &opts, 600, true);
    let magics = table_magics(&db);
    assert!(!magics.is_empty() && magics.iter().all(|&m| m == LEGACY_PLAIN_MAGIC), "{test}: {magics:x?}");
    assert_same_pairs(&ldb_scan(&db, None), &want, test);
    sst_dump_reads_every_table(&db, Some(600), test);
    for f in sst_files(&db) {
        let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--show_properties"]));
        assert!(
            out.lines().any(|l| l.contains("rocksdb.plain.table.encoding.type") && l.contains("0x00000000")),
            "{test}: {out}"
        );
    }
    let d = DB::open(&opts, &db).unwrap();
    assert_same_pairs(&shale_scan(&d, "default"), &want, test);
}

/// `store_index_in_file` (helper tbl3, issue 33): Shale's plain tables carry RocksDB's hash
/// index and Bloom blocks, and RocksDB 11.8.1's reader, which takes them instead of building
/// its own (ldb loads `store_index_in_file=true` from Shale's OPTIONS file), finds every key
/// `ldb get` asks for through them and none that is absent; `ldb scan` and `sst_dump` read
/// every pair. Prefix mode (both encodings) and total order (no extractor, ratio 0).
#[test]
fn shale_plain_tables_with_stored_index_read_by_rocksdb_11() {
    let test = "shale_plain_tables_with_stored_index_read_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    for (encoding, key_len, prefix, locality) in [
        (KeyEncodingType::Plain, 13, true, 0),
        (KeyEncodingType::Prefix, 0, true, 1),
        (KeyEncodingType::Plain, 0, false, 0),
        (KeyEncodingType::Plain, 0, false, 1),
    ] {
        let ctx =
            format!("{test} {encoding:?} user_key_len {key_len} prefix {prefix} bloom_locality {locality}");
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        if prefix {
            opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(8));
        }
        opts.set_bloom_locality(locality);
        opts.set_plain_table_factory(&PlainTableFactoryOptions {
            user_key_length: key_len,
            bloom_bits_per_key: 10,
            hash_table_ratio: if prefix { 0.75 } else { 0.0 },
            index_sparseness: 3,
            huge_page_tlb_size: 0,
            encoding_type: encoding,
            full_scan_mode: false,
            store_index_in_file: true,
        });
        let want = shale_writes(&db, &opts, 2000, true);
        assert!(latest_options_text(&db).contains("store_index_in_file=true"), "{ctx}");
        for f in sst_files(&db) {
            let b = std::fs::read(&f).unwrap();
            // The metaindex stores its keys whole (restart interval 1).
            for name in ["PlainTableIndexBlock", "kBloomBlock"] {
                assert!(b.windows(name.len()).any(|w| w == name.as_bytes()), "{ctx}: {name} in {f:?}");
            }
        }
        sst_dump_reads_every_table(&db, Some(2000), &ctx);
        for f in sst_files(&db) {
            let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--show_properties"]));
            assert!(out.contains("rocksdb.plain.table.bloom.version: 0x31"), "{ctx}: {out}");
        }
        assert_same_pairs(&ldb_scan(&db, None), &want, &ctx);
        for (k, v) in want.iter().step_by(151) {
            assert_eq!(ldb_get(&db, None, k).as_deref(), Some(&v[..]), "{ctx}: ldb get {k:?}");
        }
        for absent in [&b"key00003-9999"[..], b"key00049-0000", b"zzz00000-0000"] {
            assert_eq!(ldb_get(&db, None, absent), None, "{ctx}: ldb get {absent:?}");
        }
        // RocksDB logs "Number of Keys per prefix Histogram" when it builds a hash index (its
        // reader does without a stored one): a db_bench scan with Shale's OPTIONS file (ldb
        // writes no LOG) opens the tables and logs none.
        let options_file = files_with_suffix(&db, "")
            .into_iter()
            .filter(|f| f.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
            .max()
            .unwrap();
        db_bench_run(
            &db,
            "readseq",
            2000,
            &["--use_existing_db=1", &format!("--options_file={}", options_file.display())],
        );
        let log = std::fs::read_to_string(db.join("LOG")).unwrap();
        assert!(
            log.contains("RocksDB version: 11.8.1") && log.contains("PlainTable"),
            "{ctx}: db_bench's LOG"
        );
        assert!(!log.contains("Number of Keys per prefix Histogram"), "{ctx}: RocksDB rebuilt the index");
        // Shale reopens what it wrote and reads it through the stored Bloom.
        let d = DB::open(&opts, &db).unwrap();
        assert_same_pairs(&shale_scan(&d, "default"), &want, &ctx);
        for (k, v) in want.iter().step_by(7) {
            assert_eq!(d.get(k).unwrap().as_deref(), Some(&v[..]), "{ctx}: get");
        }
        assert_eq!(d.get(b"zzz00000-0000").unwrap(), None, "{ctx}");
    }
}

/// RocksDB 11.8.1 writes plain tables with `store_index_in_file` too when its OPTIONS say so
/// (db_bench has no flag for it; `--options_file` with Shale's OPTIONS file does it): Shale
/// reads them, checks their stored index and uses their stored Bloom on point reads, with
/// the pairs `ldb scan` prints.
#[test]
fn rocksdb_11_plain_tables_with_stored_index_read_by_shale() {
    let test = "rocksdb_11_plain_tables_with_stored_index_read_by_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    for (encoding, prefix, locality) in [
        (KeyEncodingType::Prefix, true, 0),
        (KeyEncodingType::Plain, true, 1),
        (KeyEncodingType::Plain, false, 0),
        (KeyEncodingType::Plain, false, 1),
    ] {
        let ctx = format!("{test} {encoding:?} prefix {prefix} bloom_locality {locality}");
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        if prefix {
            opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(8));
        }
        opts.set_bloom_locality(locality);
        opts.set_plain_table_factory(&PlainTableFactoryOptions {
            user_key_length: 0,
            bloom_bits_per_key: 10,
            hash_table_ratio: if prefix { 0.75 } else { 0.0 },
            index_sparseness: 4,
            huge_page_tlb_size: 0,
            encoding_type: encoding,
            full_scan_mode: false,
            store_index_in_file: true,
        });
        // Shale's OPTIONS file, for db_bench (which then takes no table or buffer flags: it
        // flushes where asked).
        let seed = dir.path().join("seed");
        drop(DB::open(&opts, &seed).unwrap());
        let options_file = files_with_suffix(&seed, "")
            .into_iter()
            .filter(|f| f.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
            .max()
            .unwrap();
        let db = dir.path().join("db");
        db_bench_run(
            &db,
            "fillrandom,flush,overwrite,flush",
            20_000,
            &[&format!("--options_file={}", options_file.display()), "--key_size=16", "--value_size=50"],
        );
        let tables = sst_files(&db);
        assert!(!tables.is_empty(), "{ctx}");
        for f in &tables {
            let b = std::fs::read(f).unwrap();
            assert!(b.windows(20).any(|w| w == b"PlainTableIndexBlock"), "{ctx}: no stored index in {f:?}");
        }
        let want = ldb_scan(&db, None);
        assert!(want.len() > 1000, "{ctx}: db_bench wrote {} pairs", want.len());
        let d = DB::open(&opts, &db).unwrap_or_else(|e| panic!("{ctx}: Shale cannot open: {e}"));
        assert_same_pairs(&shale_scan(&d, "default"), &want, &ctx);
        // The stored Bloom is asked on each point read (the perf context's SST Bloom hits);
        // in total order it holds whole keys and turns away most absent ones within the
        // tables' key ranges (db_bench's keys all share their first 8 bytes, so a prefix
        // Bloom cannot).
        shale::perf::set_perf_stats(shale::perf::PerfStatsLevel::EnableCount);
        let mut perf = shale::perf::PerfContext::default();
        perf.reset();
        for (k, v) in want.iter().step_by(37) {
            assert_eq!(d.get(k).unwrap().as_deref(), Some(&v[..]), "{ctx}: get");
        }
        let hits = perf.metric(shale::perf::PerfMetric::BloomSstHitCount);
        perf.reset();
        let mut absent = 0;
        for (k, _) in want.iter().step_by(37) {
            let mut k = k.clone();
            *k.last_mut().unwrap() = b'x';
            if d.get(&k).unwrap().is_none() {
                absent += 1;
            }
        }
        let misses = perf.metric(shale::perf::PerfMetric::BloomSstMissCount);
        shale::perf::set_perf_stats(shale::perf::PerfStatsLevel::Disable);
        assert!(hits >= (want.len() / 37) as u64, "{ctx}: {hits} Bloom hits");
        if !prefix {
            assert!(misses * 10 > absent * 8, "{ctx}: {misses} Bloom misses for {absent} absent keys");
        }
    }
}
