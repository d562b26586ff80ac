use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::cache::BlockCache;
use crate::comparator::ReverseBytewiseComparator;
use crate::fs::default_fs;
use crate::iter::InternalIterator;
use crate::key::{
    bytewise_internal_comparator, lookup_key, make_internal_key, parse_internal_key, ValueType,
};
use crate::table::reader::{Table, TableReaderOptions};
use crate::ErrorKind;

fn entries(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let t = match i % 10 {
                3 => ValueType::Deletion,
                7 => ValueType::Merge,
                _ => ValueType::Value,
            };
            let v = if t == ValueType::Deletion {
                Vec::new()
            } else {
                format!("value-{i}-").repeat(1 + i % 5).into_bytes()
            };
            (make_internal_key(format!("key{:08}", i * 2).as_bytes(), 1000 + i as u64, t), v)
        })
        .collect()
}

fn build(path: &Path, opts: TableBuilderOptions, data: &[(Vec<u8>, Vec<u8>)]) -> TableBuildResult {
    let f = default_fs().new_writable_file(path).unwrap();
    let mut b = TableBuilder::new(opts, f);
    for (k, v) in data {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), data.len() as u64);
    b.finish().unwrap()
}

/// The reader options of the tests' tables: checksums verified, a fresh cache key, no statistics.
fn reader_options(
    path: &Path,
    cache: Option<Arc<BlockCache>>,
    icmp: crate::key::InternalKeyComparator,
) -> TableReaderOptions {
    TableReaderOptions {
        timestamps_persisted: true,
        icmp,
        block_cache: cache,
        verify_checksums: true,
        file_name: path.display().to_string(),
        cache_key: crate::cache::OffsetableCacheKey::unique(),
        statistics: None,
        block_protection_bytes_per_key: 0,
    }
}

/// Opens `path` with `options`.
fn open_opts(path: &Path, options: TableReaderOptions) -> crate::Result<Arc<Table>> {
    let fs = default_fs();
    let file = fs.new_random_access_file(path).unwrap();
    let size = fs.file_size(path).unwrap();
    Table::open(file, size, options)
}

fn open_with(
    path: &Path,
    cache: Option<Arc<BlockCache>>,
    icmp: crate::key::InternalKeyComparator,
) -> crate::Result<Arc<Table>> {
    open_opts(path, reader_options(path, cache, icmp))
}

fn open(path: &Path) -> Arc<Table> {
    open_with(path, None, bytewise_internal_comparator()).unwrap()
}

fn check_contents(t: &Arc<Table>, data: &[(Vec<u8>, Vec<u8>)]) {
    let mut it = t.iter(true);
    it.seek_to_first();
    for (k, v) in data {
        assert!(it.valid(), "{:?}", it.status());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
    it.seek_to_last();
    for (k, _) in data.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    assert!(!it.valid());
    for (i, (k, v)) in data.iter().enumerate().step_by(7) {
        let p = parse_internal_key(k).unwrap();
        let got = t.get(&lookup_key(p.user_key, p.sequence), true).unwrap().unwrap();
        assert_eq!((&got.0, &got.1), (k, v));
        it.seek(k);
        assert_eq!(it.key(), &k[..]);
        it.seek_for_prev(k);
        assert_eq!(it.key(), &k[..]);
        if !p.user_key.starts_with(b"key") {
            continue;
        }
        // A key between two user keys is absent.
        let missing = format!("key{:08}", i * 2 + 1);
        assert!(t.get(&lookup_key(missing.as_bytes(), 1 << 50), true).unwrap().is_none());
        it.seek(&lookup_key(missing.as_bytes(), 1 << 50));
        assert_eq!(it.valid(), i + 1 < data.len());
        it.seek_for_prev(&lookup_key(missing.as_bytes(), 1 << 50));
        assert_eq!(it.key(), &k[..]);
    }
}

#[test]
fn round_trip_with_each_compression() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(3000);
    for c in [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Zlib,
        CompressionType::Lz4,
        CompressionType::Lz4hc,
        CompressionType::Zstd,
    ] {
        let path = dir.path().join(format!("{}.sst", c.name()));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = c;
        o.filter_bits_per_key = Some(10.0);
        let r = build(&path, o, &data);
        assert_eq!(r.file_size, std::fs::metadata(&path).unwrap().len());
        let t = open(&path);
        let mut p = t.properties().clone();
        p.user_collected.remove(crate::table::properties::names::DELETED_KEYS);
        p.user_collected.remove(crate::table::properties::names::MERGE_OPERANDS);
        assert_eq!(p, r.properties);
        assert_eq!(p.num_entries, 3000);
        assert_eq!(p.num_deletions, 300);
        assert_eq!(p.num_merge_operands, 300);
        assert_eq!(p.compression_name, c.name());
        assert_eq!(p.index_key_is_user_key, 1);
        assert_eq!(p.index_value_is_delta_encoded, 1);
        assert!(p.num_data_blocks > 10);
        if c != CompressionType::None {
            assert!(
                p.data_size < r.properties.raw_key_size + r.properties.raw_value_size,
                "{c:?} did not compress"
            );
        }
        check_contents(&t, &data);
        let mut last = 0;
        for (k, _) in data.iter().step_by(100) {
            let o = t.approximate_offset_of(k);
            assert!(o >= last);
            last = o;
        }
        assert!(last > 0);
        assert_eq!(t.approximate_offset_of(&make_internal_key(b"a", 1, ValueType::Value)), 0);
        assert_eq!(t.approximate_offset_of(&make_internal_key(b"zzz", 1, ValueType::Value)), p.data_size);
        // A snapshot below the entry's sequence does not see it.
        assert!(t.get(&lookup_key(crate::key::user_key(&data[0].0), 1), true).unwrap().is_none());
    }
}

#[test]
fn same_user_key_across_blocks_keeps_internal_index_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("versions.sst");
    let mut data = Vec::new();
    for u in 0..20u64 {
        for seq in (0..100u64).rev() {
            data.push((
                make_internal_key(format!("user{u:03}").as_bytes(), seq + 1, ValueType::Value),
                vec![b'x'; 50],
            ));
        }
    }
    let r = build(&path, TableBuilderOptions::new(bytewise_internal_comparator()), &data);
    assert_eq!(r.properties.index_key_is_user_key, 0);
    let t = open(&path);
    check_contents(&t, &data);
    // A lookup at a snapshot in the middle of a long version chain.
    let got = t.get(&lookup_key(b"user005", 37), false).unwrap().unwrap();
    assert_eq!(parse_internal_key(&got.0).unwrap().sequence, 37);
}

#[test]
fn range_tombstones_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rd.sst");
    let f = default_fs().new_writable_file(&path).unwrap();
    let mut b = TableBuilder::new(TableBuilderOptions::new(bytewise_internal_comparator()), f);
    b.add_range_tombstone(&make_internal_key(b"m", 9, ValueType::RangeDeletion), b"p").unwrap();
    b.add(&make_internal_key(b"a", 5, ValueType::Value), b"1").unwrap();
    b.add_range_tombstone(&make_internal_key(b"c", 7, ValueType::RangeDeletion), b"f").unwrap();
    b.add(&make_internal_key(b"b", 6, ValueType::Value), b"2").unwrap();
    assert_eq!(b.num_entries(), 4);
    let r = b.finish().unwrap();
    assert_eq!((r.properties.num_range_deletions, r.properties.num_deletions), (2, 2));
    let t = open(&path);
    assert_eq!(
        t.range_tombstones(),
        &[
            (make_internal_key(b"c", 7, ValueType::RangeDeletion), b"f".to_vec()),
            (make_internal_key(b"m", 9, ValueType::RangeDeletion), b"p".to_vec()),
        ]
    );
    let mut it = t.iter(false);
    it.seek_to_first();
    assert_eq!(it.value(), b"1");
    it.next();
    assert_eq!(it.value(), b"2");
    it.next();
    assert!(!it.valid());
    // A table holding only tombstones.
    let path2 = dir.path().join("only.sst");
    let f = default_fs().new_writable_file(&path2).unwrap();
    let mut b = TableBuilder::new(TableBuilderOptions::new(bytewise_internal_comparator()), f);
    b.add_range_tombstone(&make_internal_key(b"x", 1, ValueType::RangeDeletion), b"z").unwrap();
    b.finish().unwrap();
    let t = open(&path2);
    assert_eq!(t.range_tombstones().len(), 1);
    let mut it = t.iter(false);
    it.seek_to_first();
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn filter_skips_data_blocks_and_cache_serves_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.sst");
    let data = entries(2000);
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    o.filter_bits_per_key = Some(10.0);
    let r = build(&path, o, &data);
    assert_eq!(r.properties.filter_policy_name, "bloomfilter");
    assert!(r.properties.filter_size > 0);
    let t = open(&path);
    let mut filtered = 0;
    for i in 0..1000 {
        let before = t.data_blocks_read();
        let k = format!("absent{i}");
        assert!(t.get(&lookup_key(k.as_bytes(), 1 << 40), false).unwrap().is_none());
        if !t.may_contain(k.as_bytes()) {
            assert_eq!(t.data_blocks_read(), before, "filtered lookup read a data block");
            filtered += 1;
        }
    }
    assert!(filtered > 900, "{filtered}");
    assert_eq!(t.data_blocks_read() as usize, 1000 - filtered);

    let cache = Arc::new(BlockCache::new(1 << 20));
    let t = open_with(&path, Some(cache.clone()), bytewise_internal_comparator()).unwrap();
    let k = lookup_key(crate::key::user_key(&data[500].0), 1 << 40);
    t.get(&k, true).unwrap().unwrap();
    assert_eq!(t.data_blocks_read(), 1);
    t.get(&k, true).unwrap().unwrap();
    assert_eq!(t.data_blocks_read(), 1);
    assert!(cache.usage() > 0);
}

/// A read's insert into a HyperClock cache that gives up on a stripe another thread holds
/// did not take place: it counts `rocksdb.block.cache.add.failures` and no add, as RocksDB's
/// `PutDataBlockToCache` counts an `Insert` that returned non-OK, and the read goes on.
#[test]
fn a_fill_insert_that_gives_up_counts_an_add_failure() {
    use crate::statistics::{Statistics, Ticker};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.sst");
    let data = entries(2000);
    build(&path, TableBuilderOptions::new(bytewise_internal_comparator()), &data);
    let cache = Arc::new(BlockCache::new_hyper_clock(1 << 20, 0, false));
    let stats = Arc::new(Statistics::new());
    let options = TableReaderOptions {
        statistics: Some(stats.clone()),
        ..reader_options(&path, Some(cache.clone()), bytewise_internal_comparator())
    };
    let t = open_opts(&path, options).unwrap();
    let count = |t: Ticker| stats.ticker_count(t);
    let (adds, failures) = (count(Ticker::BlockCacheAdd), count(Ticker::BlockCacheAddFailures));
    let k = lookup_key(crate::key::user_key(&data[500].0), 1 << 40);
    {
        let _held = cache.hold_all();
        let got = t.get(&k, true).unwrap().unwrap();
        assert_eq!(got.1, data[500].1, "the read goes on");
    }
    assert_eq!(count(Ticker::BlockCacheAddFailures), failures + 1, "an add failure");
    assert_eq!(count(Ticker::BlockCacheAdd), adds, "no add");
    assert_eq!(count(Ticker::BlockCacheDataAdd), 0);
    assert_eq!(cache.usage(), 0, "nothing kept");
    // Once free, the same read adds its block.
    t.get(&k, true).unwrap().unwrap();
    assert_eq!(count(Ticker::BlockCacheAdd), adds + 1);
    assert_eq!(count(Ticker::BlockCacheAddFailures), failures + 1);
    assert!(cache.usage() > 0);
}

#[test]
fn comparator_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sst");
    build(&path, TableBuilderOptions::new(bytewise_internal_comparator()), &entries(10));
    let rev = crate::key::InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator));
    let e = open_with(&path, None, rev).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let s = e.to_string();
    assert!(
        s.contains("leveldb.BytewiseComparator") && s.contains("rocksdb.ReverseBytewiseComparator"),
        "{s}"
    );
}

#[test]
fn corrupt_files_are_reported_not_panicked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.sst");
    let data = entries(500);
    build(&path, TableBuilderOptions::new(bytewise_internal_comparator()), &data);
    let good = std::fs::read(&path).unwrap();
    // Flip a byte in the first data block: iteration reports Corruption naming the file.
    let mut bytes = good.clone();
    bytes[10] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let t = open(&path);
    let mut it = t.iter(false);
    it.seek_to_first();
    assert!(!it.valid());
    let e = it.status().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("bad.sst") && e.to_string().contains("offset 0"), "{e}");
    let e = t.get(&lookup_key(crate::key::user_key(&data[0].0), 1 << 40), false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    // Truncations and flips anywhere never panic.
    for cut in (0..good.len()).step_by(97) {
        std::fs::write(&path, &good[..cut]).unwrap();
        assert!(open_with(&path, None, bytewise_internal_comparator()).is_err());
    }
    for pos in (good.len() - 300..good.len()).chain((0..good.len()).step_by(53)) {
        let mut bytes = good.clone();
        bytes[pos] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(t) = open_with(&path, None, bytewise_internal_comparator()) {
            let mut it = t.iter(false);
            it.seek_to_first();
            while it.valid() {
                it.next();
            }
        }
    }
}

// ---- Interop with RocksDB 7.8.3's tools ----

/// The tool, or None when it is not installed (a failure under CI: `shale_base::oracle`).
fn tool(name: &str) -> Option<PathBuf> {
    shale_base::oracle::rocksdb_7_tool("table::table_tests", name)
}

fn run(cmd: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(cmd).args(args).output().unwrap();
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), s)
}

#[test]
fn sst_dump_accepts_shale_tables() {
    let Some(sst_dump) = tool("sst_dump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<(Vec<u8>, Vec<u8>)> = (0..10_000)
        .map(|i| {
            (
                make_internal_key(format!("k{i:06}").as_bytes(), i as u64 + 1, ValueType::Value),
                format!("v{i}").into_bytes(),
            )
        })
        .collect();
    for c in [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Zstd,
        CompressionType::Lz4,
        CompressionType::Zlib,
    ] {
        let path = dir.path().join(format!("00001{}.sst", c as u8));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = c;
        o.filter_bits_per_key = Some(10.0);
        o.db_id = "shale-test".into();
        o.orig_file_number = 7;
        build(&path, o, &data);
        let f = format!("--file={}", path.display());
        let (ok, out) = run(&sst_dump, &[&f, "--command=verify"]);
        assert!(ok && !out.contains("Corruption"), "{c:?}: {out}");
        let (ok, out) = run(&sst_dump, &[&f, "--command=scan"]);
        assert!(ok, "{out}");
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('\'')).collect();
        assert_eq!(lines.len(), 10_000, "{c:?}");
        assert_eq!(lines[0], "'k000000' seq:1, type:1 => v0");
        assert_eq!(lines[9999], "'k009999' seq:10000, type:1 => v9999");
        let (ok, out) = run(&sst_dump, &[&f, "--show_properties", "--command=none"]);
        assert!(ok, "{out}");
        assert!(out.contains("# entries: 10000"), "{out}");
        assert!(out.contains("filter policy name: bloomfilter"), "{out}");
        assert!(out.contains(&format!("SST file compression algo: {}", c.name())), "{out}");
        assert!(out.contains("DB identity: shale-test"), "{out}");
    }
}

/// Every entry sst_dump prints for `sst`, as (internal key, value).
fn sst_dump_entries(sst_dump: &Path, sst: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let (ok, out) = run(sst_dump, &[&format!("--file={}", sst.display()), "--command=scan", "--output_hex"]);
    assert!(ok, "{out}");
    let mut expected = Vec::new();
    for l in out.lines().filter(|l| l.starts_with('\'')) {
        // 'HEXKEY' seq:N, type:T => HEXVALUE
        let (k, rest) = l[1..].split_once('\'').unwrap();
        let (meta, v) = rest.split_once(" => ").unwrap();
        let seq: u64 = meta.trim().trim_start_matches("seq:").split(',').next().unwrap().parse().unwrap();
        let ty: u8 = meta.rsplit("type:").next().unwrap().trim().parse().unwrap();
        let mut ik = unhex(k);
        crate::coding::put_fixed64(&mut ik, (seq << 8) | ty as u64);
        expected.push((ik, unhex(v.trim())));
    }
    expected
}

fn scan_all(t: &Arc<Table>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = t.iter(false);
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    got
}

#[test]
fn reads_db_bench_tables_with_range_tombstones() {
    let (Some(db_bench), Some(sst_dump)) = (tool("db_bench"), tool("sst_dump")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("bench").display());
    let (ok, out) = run(
        &db_bench,
        &[
            "--benchmarks=fillrandom",
            "--num=5000",
            &db,
            "--compression_type=snappy",
            "--writes_per_range_tombstone=100",
            "--max_num_range_tombstones=10",
            "--range_tombstone_width=10",
            "--write_buffer_size=65536",
            "--disable_auto_compactions=1",
            "--bloom_bits=10",
        ],
    );
    assert!(ok, "{out}");
    let mut tombstones = 0;
    for e in std::fs::read_dir(dir.path().join("bench")).unwrap() {
        let sst = e.unwrap().path();
        if sst.extension().is_none_or(|x| x != "sst") {
            continue;
        }
        let t = open(&sst);
        let got = scan_all(&t);
        assert_eq!(got, sst_dump_entries(&sst_dump, &sst));
        assert_eq!(t.range_tombstones().len() as u64, t.properties().num_range_deletions);
        for (k, _) in t.range_tombstones() {
            assert_eq!(parse_internal_key(k).unwrap().value_type, ValueType::RangeDeletion);
        }
        tombstones += t.range_tombstones().len();
        for (k, v) in got.iter().step_by(13) {
            let found =
                t.get(&lookup_key(crate::key::user_key(k), crate::key::MAX_SEQUENCE_NUMBER), false).unwrap();
            assert_eq!(found, Some((k.clone(), v.clone())));
        }
    }
    assert!(tombstones > 0);
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

#[test]
fn reads_tables_rocksdb_wrote() {
    let (Some(ldb), Some(sst_dump)) = (tool("ldb"), tool("sst_dump")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for c in ["no", "snappy", "lz4", "zstd", "zlib"] {
        let db = dir.path().join(c);
        let dbarg = format!("--db={}", db.display());
        let comp = format!("--compression_type={c}");
        let input: String = (0..3000).map(|i| format!("key{i:05} ==> value{}\n", i * 7)).collect();
        let mut child = std::process::Command::new(&ldb)
            .args([&dbarg, "--create_if_missing", &comp, "--bloom_bits=10", "load"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success());
        assert!(run(&ldb, &[&dbarg, &comp, "delete", "key00010"]).0);
        assert!(run(&ldb, &[&dbarg, &comp, "deleterange", "key00100", "key00200"]).0);
        assert!(run(&ldb, &[&dbarg, &comp, "--bloom_bits=10", "compact"]).0);
        let mut ssts: Vec<PathBuf> = std::fs::read_dir(&db)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sst"))
            .collect();
        ssts.sort();
        assert!(!ssts.is_empty());
        for sst in ssts {
            let expected = sst_dump_entries(&sst_dump, &sst);
            let t = open(&sst);
            let got = scan_all(&t);
            assert_eq!(got.len(), expected.len(), "{c} {}", sst.display());
            assert_eq!(got, expected, "{c}");
            for (k, v) in got.iter().step_by(11) {
                let found = t
                    .get(&lookup_key(crate::key::user_key(k), crate::key::MAX_SEQUENCE_NUMBER), false)
                    .unwrap();
                assert_eq!(found, Some((k.clone(), v.clone())));
            }
            assert!(got.len() > 2000);
            assert_eq!(t.properties().compression_name.to_lowercase().replace("nocompression", "no"), c);
            assert!(t.properties().filter_size > 0);
            // RocksDB's Bloom filter has no false negatives under Shale's reader.
            assert!(got.iter().all(|(k, _)| t.may_contain(crate::key::user_key(k))));
            let absent = (0..1000).filter(|i| !t.may_contain(format!("nokey{i}").as_bytes())).count();
            assert!(absent > 900, "{absent}");
            checked += 1;
        }
    }
    assert!(checked >= 5);
}

/// Tables of every format_version Shale writes (2..=7) read back whole, with each checksum
/// kind; from version 6 the footer has no index handle and the v7 compression property lists
/// the codecs used.
#[test]
fn every_format_version_and_checksum_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(800);
    for fv in 2..=7u32 {
        for checksum in
            [ChecksumType::Crc32c, ChecksumType::XxHash, ChecksumType::XxHash64, ChecksumType::Xxh3]
        {
            for compression in [CompressionType::None, CompressionType::Zstd] {
                let path = dir.path().join(format!("{fv}-{}-{}.sst", checksum as u8, compression as u8));
                let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
                o.format_version = fv;
                o.checksum = checksum;
                o.compression = compression;
                o.filter_bits_per_key = Some(10.0);
                build(&path, o, &data);
                let t = open(&path);
                check_contents(&t, &data);
                assert_eq!(t.footer().format_version, fv);
                assert_eq!(t.footer().base_context_checksum != 0, fv >= 6);
                let name = &t.properties().compression_name;
                match (fv, compression) {
                    (7, CompressionType::None) => assert_eq!(name, ";;"),
                    (7, _) => assert_eq!(name, "BuiltinV2;07;"),
                    (_, c) => assert_eq!(name, c.name()),
                }
            }
        }
    }
}

/// The format_version 6 promise: a block is checked against its file and its offset. The
/// first data block of a table, read as if it sat at another offset, or checked with another
/// table's base context, fails its checksum; under format_version 5 only the bytes count.
#[test]
fn context_checksums_tie_blocks_to_file_and_offset() {
    use crate::table::format::{read_block_with, BlockChecksum};
    let dir = tempfile::tempdir().unwrap();
    let data = entries(300);
    for fv in [5u32, 6, 7] {
        let path = dir.path().join(format!("ctx{fv}.sst"));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.format_version = fv;
        build(&path, o, &data);
        let t = open(&path);
        let checksum = t.footer().block_checksum();
        let fs = default_fs();
        let file = fs.new_random_access_file(&path).unwrap();
        let index = read_block_with(file.as_ref(), t.footer().index_handle, checksum, true, "t").unwrap();
        let format = crate::table::block::IndexFormat {
            key_is_user_key: t.properties().index_key_is_user_key != 0,
            value_delta_encoded: t.properties().index_value_is_delta_encoded != 0,
            has_first_key: false,
            ..Default::default()
        };
        let mut index = Arc::new(crate::table::block::Block::new(index).unwrap())
            .index_iter(&bytewise_internal_comparator(), format);
        index.seek_to_first();
        let h = index.handle();
        assert_eq!(h.offset, 0, "data blocks come first");
        let bytes = std::fs::read(&path).unwrap();
        let block = &bytes[..h.size as usize + 5];
        let write = |name: &str, b: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, b).unwrap();
            fs.new_random_access_file(&p).unwrap()
        };
        // The block copied 100 bytes further into a file.
        let mut moved = vec![0u8; 100];
        moved.extend_from_slice(block);
        let moved = write("moved", &moved);
        let r = read_block_with(moved.as_ref(), BlockHandle::new(100, h.size), checksum, true, "moved.sst");
        // The block in place, but judged as another table's (another base context).
        let in_place = write("in_place", block);
        let other =
            BlockChecksum { kind: checksum.kind, base_context: checksum.base_context.wrapping_add(1) };
        let r2 = read_block_with(in_place.as_ref(), h, other, true, "other.sst");
        let r3 = read_block_with(in_place.as_ref(), h, checksum, true, "same.sst");
        assert!(r3.is_ok(), "v{fv}: the block in place reads");
        if fv >= 6 {
            assert_eq!(r.unwrap_err().kind(), ErrorKind::Corruption, "v{fv}: moved block");
            assert_eq!(r2.unwrap_err().kind(), ErrorKind::Corruption, "v{fv}: another table's block");
        } else {
            assert!(r.is_ok(), "v5 blocks do not depend on their offset");
            assert_eq!(checksum.base_context, 0, "v5 tables have no base context");
        }
    }
}

#[test]
fn dictionary_samples_follow_rocksdb_order() {
    // Five blocks: start at the middle (2), step 545055921143 % 5 = 3.
    let blocks: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 10]).collect();
    let refs: Vec<&[u8]> = blocks.iter().map(|b| b.as_slice()).collect();
    let (data, lens) = dictionary_samples(&refs, 35);
    assert_eq!(lens, vec![10, 10, 10, 5]);
    let order: Vec<u8> = data.chunks(10).map(|c| c[0]).collect();
    assert_eq!(order, vec![2, 0, 3, 1]);
    assert_eq!(dictionary_samples(&[], 100).0, Vec::<u8>::new());
}

#[test]
fn dictionary_tables_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(5000);
    // (codec, max_dict_bytes, zstd_max_train_bytes, max_dict_buffer_bytes, dictionary kept)
    let cases = [
        (CompressionType::Zstd, 4096, 0, 0, true),
        (CompressionType::Zstd, 4096, 200_000, 0, true),
        (CompressionType::Lz4, 4096, 0, 0, true),
        (CompressionType::Snappy, 4096, 0, 0, true),
        // The buffer fills after a few blocks: the rest are compressed as they come.
        (CompressionType::Zstd, 4096, 0, 20_000, true),
        (CompressionType::None, 4096, 0, 0, false),
    ];
    for (i, (c, max_dict, train, buffer, kept)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("{i}.sst"));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = c;
        o.compression_opts.max_dict_bytes = max_dict;
        o.compression_opts.zstd_max_train_bytes = train;
        o.compression_opts.max_dict_buffer_bytes = buffer;
        let r = build(&path, o, &data);
        assert!(r.properties.compression_options.contains(&format!("max_dict_bytes={max_dict}")));
        let bytes = std::fs::read(&path).unwrap();
        let has = bytes.windows(COMPRESSION_DICT_BLOCK.len()).any(|w| w == COMPRESSION_DICT_BLOCK.as_bytes());
        assert_eq!(has, kept, "case {i}");
        check_contents(&open(&path), &data);
    }
}

/// Every index entry's user key and the last user key of the block it points to.
fn index_keys_and_block_last_keys(path: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    use crate::table::format::read_block_with;
    let t = open(path);
    let fs = default_fs();
    let file = fs.new_random_access_file(path).unwrap();
    let checksum = t.footer().block_checksum();
    let index = read_block_with(file.as_ref(), t.footer().index_handle, checksum, true, "t").unwrap();
    let format = crate::table::block::IndexFormat {
        key_is_user_key: t.properties().index_key_is_user_key != 0,
        value_delta_encoded: t.properties().index_value_is_delta_encoded != 0,
        has_first_key: false,
        ..Default::default()
    };
    let mut index = Arc::new(crate::table::block::Block::new(index).unwrap())
        .index_iter(&bytewise_internal_comparator(), format);
    let mut out = Vec::new();
    index.seek_to_first();
    while index.valid() {
        let raw = read_block_with(file.as_ref(), index.handle(), checksum, true, "t").unwrap();
        let block = Arc::new(crate::table::block::Block::new(raw).unwrap());
        let mut it = block.iter(&bytewise_internal_comparator());
        it.seek_to_last();
        let ik = if format.key_is_user_key { index.key().to_vec() } else { user_key(index.key()).to_vec() };
        out.push((ik, user_key(it.key()).to_vec()));
        index.next();
    }
    out
}

#[test]
fn index_shortening_modes_write_rocksdb_index_keys() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(300);
    let last_user = parse_internal_key(&data[data.len() - 1].0).unwrap().user_key.to_vec();
    for mode in [
        IndexShorteningMode::NoShortening,
        IndexShorteningMode::ShortenSeparators,
        IndexShorteningMode::ShortenSeparatorsAndSuccessor,
    ] {
        let path = dir.path().join(format!("shorten{}.sst", mode as i32));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.block_size = 256;
        o.index_shortening = mode;
        build(&path, o, &data);
        check_contents(&open(&path), &data);
        let keys = index_keys_and_block_last_keys(&path);
        assert!(keys.len() > 10, "{} blocks", keys.len());
        for (i, (ik, bk)) in keys.iter().enumerate() {
            assert!(ik >= bk, "index key {i} below its block's last key");
            if i + 1 == keys.len() {
                continue;
            }
            match mode {
                IndexShorteningMode::NoShortening => assert_eq!(ik, bk),
                // "key00000012" then "key00000014": the separator is "key00000013".
                _ => assert_ne!(ik, bk, "separator {i} not shortened"),
            }
        }
        let (last_index, last_block) = keys.last().unwrap();
        assert_eq!(last_block, &last_user);
        if mode == IndexShorteningMode::ShortenSeparatorsAndSuccessor {
            // Bytewise FindShortSuccessor: the first byte that can grow, grown ("key..." -> "l").
            assert_eq!(last_index, b"l");
        } else {
            assert_eq!(last_index, last_block);
        }
    }
}

/// Partitioned index and filters (`partitioned_builder.rs`): many partitions read back
/// whole and by lookups; a table of range tombstones only has no partition and an empty
/// top level, and reads as empty.
#[test]
fn partitioned_index_and_filters_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(3000);
    for (fv, restart) in [(5, 1), (7, 4), (3, 1)] {
        let path = dir.path().join(format!("p{fv}.sst"));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.format_version = fv;
        o.index_block_restart_interval = restart;
        o.filter_bits_per_key = Some(10.0);
        o.partitioned_index = true;
        o.partition_filters = true;
        o.metadata_block_size = 200;
        let r = build(&path, o, &data);
        assert!(r.properties.index_partitions >= 2, "fv {fv}: {}", r.properties.index_partitions);
        assert!(r.properties.top_level_index_size > 0);
        let t = open(&path);
        assert_eq!(t.properties().index_partitions, r.properties.index_partitions);
        let mut it = t.iter(false);
        it.seek_to_first();
        for (k, _) in &data {
            assert_eq!(it.key(), &k[..], "fv {fv}");
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in data.iter().rev() {
            assert_eq!(it.key(), &k[..], "fv {fv}");
            it.prev();
        }
        assert!(!it.valid());
        for (i, (k, v)) in data.iter().enumerate().step_by(11) {
            let p = parse_internal_key(k).unwrap();
            let got = t.get(&lookup_key(p.user_key, p.sequence), true).unwrap().unwrap();
            assert_eq!((&got.0, &got.1), (k, v));
            let missing = format!("key{:08}", i * 2 + 1);
            assert!(t.get(&lookup_key(missing.as_bytes(), 1 << 50), true).unwrap().is_none());
        }
    }
    let path = dir.path().join("tombstones.sst");
    let f = default_fs().new_writable_file(&path).unwrap();
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    o.filter_bits_per_key = Some(10.0);
    o.partitioned_index = true;
    o.partition_filters = true;
    let mut b = TableBuilder::new(o, f);
    b.add_range_tombstone(&make_internal_key(b"c", 7, ValueType::RangeDeletion), b"f").unwrap();
    let r = b.finish().unwrap();
    assert_eq!((r.properties.index_partitions, r.properties.filter_size), (0, 0));
    let t = open(&path);
    let mut it = t.iter(false);
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(t.range_tombstones().len(), 1);
}

/// The number of partitions of a table's partitioned filter: the entries of its top-level
/// filter index (read raw from the file; one restart per entry at restart interval 1).
fn filter_partitions(path: &Path) -> usize {
    let t = open(path);
    let bytes = std::fs::read(path).unwrap();
    let block_at = |h: crate::table::format::BlockHandle| {
        Arc::new(
            crate::table::block::Block::new(bytes[h.offset as usize..(h.offset + h.size) as usize].to_vec())
                .unwrap(),
        )
    };
    let meta = block_at(t.footer().metaindex_handle);
    let name = format!("{PARTITIONED_FILTER_PREFIX}{BLOOM_POLICY_NAME}");
    let (_, v) = meta.entries().unwrap().into_iter().find(|(k, _)| k == name.as_bytes()).unwrap();
    let h = crate::table::format::BlockHandle::decode(&v).unwrap();
    block_at(h).num_restarts()
}

/// Coupled partitioned filters (`decouple_partitioned_filters` false) with a compression
/// dictionary: the buffered blocks' keys are replayed into the filter as each block's index
/// entry is made, so the filter is cut where the index is (as many filter partitions as
/// index partitions), as without a dictionary; every key passes the filter.
#[test]
fn coupled_partitioned_filters_with_a_dictionary_follow_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(6000);
    for max_dict in [0, 8192] {
        let path = dir.path().join(format!("coupled{max_dict}.sst"));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = CompressionType::Zstd;
        o.compression_opts.max_dict_bytes = max_dict;
        o.filter_bits_per_key = Some(10.0);
        o.partitioned_index = true;
        o.partition_filters = true;
        o.decouple_partitioned_filters = false;
        o.metadata_block_size = 300;
        o.index_block_restart_interval = 1;
        let r = build(&path, o, &data);
        assert!(r.properties.index_partitions >= 4, "{}", r.properties.index_partitions);
        assert_eq!(
            filter_partitions(&path),
            r.properties.index_partitions as usize,
            "max_dict_bytes {max_dict}"
        );
        let t = open(&path);
        check_contents(&t, &data);
        for (k, _) in data.iter().step_by(7) {
            assert!(t.may_contain(parse_internal_key(k).unwrap().user_key));
        }
    }
}

/// RocksDB's `parallel_threads`: the data blocks compressed by worker threads give the
/// bytes of a single-threaded build, whatever the codec, dictionary or index layout.
#[test]
fn parallel_compression_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(20_000);
    // (codec, level, max_dict_bytes, max_dict_buffer_bytes, partitioned, coupled filters, parallel used)
    let cases = [
        (CompressionType::Zstd, 32767, 0, 0, false, false, true),
        (CompressionType::Zlib, 32767, 0, 0, false, false, true),
        (CompressionType::Zlib, 32767, 4096, 0, false, false, true),
        (CompressionType::Zstd, 32767, 4096, 30_000, false, false, true),
        (CompressionType::Lz4hc, 32767, 0, 0, false, false, true),
        (CompressionType::BZip2, 32767, 0, 0, false, false, true),
        (CompressionType::Zstd, 32767, 0, 0, true, false, true),
        // RocksDB's exceptions: coupled partitioned filters, Snappy, LZ4 fast, ZSTD < 0.
        (CompressionType::Zstd, 32767, 0, 0, true, true, false),
        (CompressionType::Snappy, 32767, 0, 0, false, false, false),
        (CompressionType::Lz4, 32767, 0, 0, false, false, false),
        (CompressionType::Zstd, -3, 0, 0, false, false, false),
    ];
    for (i, (c, level, max_dict, buffer, partitioned, coupled, used)) in cases.into_iter().enumerate() {
        let mut files = Vec::new();
        for threads in [1, 4] {
            let path = dir.path().join(format!("{i}-{threads}.sst"));
            let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
            o.compression = c;
            o.compression_opts.level = level;
            o.compression_opts.max_dict_bytes = max_dict;
            o.compression_opts.max_dict_buffer_bytes = buffer;
            o.compression_opts.parallel_threads = threads;
            o.filter_bits_per_key = Some(10.0);
            if partitioned {
                o.partitioned_index = true;
                o.partition_filters = true;
                o.decouple_partitioned_filters = !coupled;
                o.metadata_block_size = 300;
            }
            let f = default_fs().new_writable_file(&path).unwrap();
            let mut b = TableBuilder::new(o, f);
            assert_eq!(b.parallel.is_some(), threads > 1 && used, "case {i}");
            for (k, v) in &data {
                b.add(k, v).unwrap();
                assert!(b.estimated_file_size() >= b.file_size());
            }
            let r = b.finish().unwrap();
            assert!(r.properties.num_data_blocks > 100, "case {i}");
            check_contents(&open(&path), &data);
            files.push(std::fs::read(&path).unwrap());
        }
        assert!(files[0] == files[1], "case {i}: the tables differ");
    }
}

/// A table abandoned half-way (a failed compaction) stops its compression threads.
#[test]
fn parallel_compression_stops_with_an_abandoned_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    o.compression = CompressionType::Zstd;
    o.compression_opts.parallel_threads = 8;
    let f = default_fs().new_writable_file(&dir.path().join("x.sst")).unwrap();
    let mut b = TableBuilder::new(o, f);
    for (k, v) in &entries(5000) {
        b.add(k, v).unwrap();
    }
    drop(b);
}
