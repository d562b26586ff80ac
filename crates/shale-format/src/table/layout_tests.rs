//! The block-based table options that change a table's layout (RocksDB 11.8.1's
//! `block_size_deviation`, `use_delta_encoding`, `enable_index_compression`,
//! `verify_compression`, `block_align`, `super_block_alignment_*`): each one's effect in the
//! written file, the table read back whole, and RocksDB 7.8.3's `sst_dump --command=verify`
//! accepting it when the tool is installed (11.8.1's reads them in the `shale` crate's
//! interop tests).

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::coding::decode_varint32;
use crate::fs::default_fs;
use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
use crate::table::format::{read_block_with, BlockHandle, BLOCK_TRAILER_SIZE};
use crate::table::reader::{Table, TableReaderOptions};

fn data(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            (
                make_internal_key(format!("user-key-{i:08}").as_bytes(), 100 + i as u64, ValueType::Value),
                format!("value {i} ").repeat(1 + i % 13).into_bytes(),
            )
        })
        .collect()
}

fn build(path: &Path, o: TableBuilderOptions, d: &[(Vec<u8>, Vec<u8>)]) -> TableBuildResult {
    let mut b = TableBuilder::new(o, default_fs().new_writable_file(path).unwrap());
    for (k, v) in d {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap()
}

fn open(path: &Path) -> Arc<Table> {
    let fs = default_fs();
    Table::open(
        fs.new_random_access_file(path).unwrap(),
        fs.file_size(path).unwrap(),
        TableReaderOptions::standalone(bytewise_internal_comparator(), path.display().to_string()),
    )
    .unwrap()
}

/// The table reads back exactly `d`, forward, and by a seek to each 50th key.
fn check(t: &Arc<Table>, d: &[(Vec<u8>, Vec<u8>)]) {
    let mut it = t.iter(true);
    it.seek_to_first();
    for (k, v) in d {
        assert!(it.valid(), "{:?}", it.status());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
    for (k, v) in d.iter().step_by(50) {
        it.seek(k);
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
    }
}

/// The data blocks' handles, in order, from the (flat) index.
fn data_handles(path: &Path) -> Vec<BlockHandle> {
    let t = open(path);
    let file = default_fs().new_random_access_file(path).unwrap();
    let index =
        read_block_with(file.as_ref(), t.footer().index_handle, t.footer().block_checksum(), true, "t")
            .unwrap();
    let format = crate::table::block::IndexFormat {
        key_is_user_key: t.properties().index_key_is_user_key != 0,
        value_delta_encoded: t.properties().index_value_is_delta_encoded != 0,
        has_first_key: false,
        ..Default::default()
    };
    let mut it = Arc::new(crate::table::block::Block::new(index).unwrap())
        .index_iter(&bytewise_internal_comparator(), format);
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push(it.handle());
        it.next();
    }
    out
}

/// The `shared` count of every entry of a raw (uncompressed) data block.
fn shared_counts(raw: &[u8]) -> Vec<u32> {
    let num_restarts = u32::from_le_bytes(raw[raw.len() - 4..].try_into().unwrap()) & 0x7fff_ffff;
    let end = raw.len() - 4 - 4 * num_restarts as usize;
    let mut p = 0;
    let mut out = Vec::new();
    while p < end {
        let (shared, n) = decode_varint32(&raw[p..]).unwrap();
        p += n;
        let (unshared, n) = decode_varint32(&raw[p..]).unwrap();
        p += n;
        let (vlen, n) = decode_varint32(&raw[p..]).unwrap();
        p += n + unshared as usize + vlen as usize;
        out.push(shared);
    }
    out
}

fn opts() -> TableBuilderOptions {
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    o.orig_file_number = 9;
    o
}

/// RocksDB 7.8.3's `sst_dump --command=verify` accepts the table (skipped without the tool,
/// a failure under CI: `shale_base::oracle`).
fn rocksdb_verifies(path: &Path) {
    let Some(sst_dump) = shale_base::oracle::rocksdb_7_tool("table::layout_tests", "sst_dump") else {
        return;
    };
    let out = std::process::Command::new(sst_dump)
        .args([&format!("--file={}", path.display()), "--command=verify"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !text.contains("Corruption"), "{}: {text}", path.display());
}

#[test]
fn block_size_deviation_cuts_blocks_early_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(3000);
    let sizes = |dev: u32| {
        let path = dir.path().join(format!("dev{dev}.sst"));
        let mut o = opts();
        o.block_size_deviation = dev;
        build(&path, o, &d);
        check(&open(&path), &d);
        rocksdb_verifies(&path);
        data_handles(&path).iter().map(|h| h.size as usize).collect::<Vec<_>>()
    };
    let default = sizes(10);
    let none = sizes(0);
    // With no deviation a block is cut only once it reached block_size (the last excepted).
    assert!(none[..none.len() - 1].iter().all(|s| *s >= 4096), "{none:?}");
    // RocksDB's default 10: blocks are cut early, between 90% and 100% of block_size.
    assert!(default.iter().any(|s| *s < 4096), "{default:?}");
    assert!(default[..default.len() - 1].iter().all(|s| *s > 4096 * 9 / 10), "{default:?}");
    // A deviation of 100 leaves no limit to cut early at (RocksDB's limit 0): as 0.
    assert_eq!(sizes(100), none);
    // 50: blocks may close from half the size on.
    let half = sizes(50);
    assert!(half.iter().any(|s| *s < 4096 * 9 / 10), "{half:?}");
}

#[test]
fn use_delta_encoding_off_stores_whole_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(2000);
    let mut sizes = Vec::new();
    for delta in [true, false] {
        let path = dir.path().join(format!("delta{delta}.sst"));
        let mut o = opts();
        o.use_delta_encoding = delta;
        let r = build(&path, o, &d);
        let t = open(&path);
        check(&t, &d);
        rocksdb_verifies(&path);
        let file = default_fs().new_random_access_file(&path).unwrap();
        let mut shared = Vec::new();
        for h in data_handles(&path) {
            let raw = read_block_with(file.as_ref(), h, t.footer().block_checksum(), true, "t").unwrap();
            shared.extend(shared_counts(&raw));
        }
        assert_eq!(shared.len(), d.len());
        if delta {
            assert!(shared.iter().filter(|s| **s > 0).count() > d.len() / 2, "keys share prefixes");
        } else {
            assert!(shared.iter().all(|s| *s == 0), "every key whole");
        }
        sizes.push(r.properties.data_size);
    }
    assert!(sizes[1] > sizes[0], "{sizes:?}");
}

#[test]
fn enable_index_compression_off_leaves_the_index_uncompressed() {
    let dir = tempfile::tempdir().unwrap();
    // Long, similar keys: an index Snappy shrinks.
    let d: Vec<_> = (0..3000)
        .map(|i| {
            (
                make_internal_key(
                    format!("{}-{i:08}", "common-prefix".repeat(8)).as_bytes(),
                    5,
                    ValueType::Value,
                ),
                vec![b'v'; 300],
            )
        })
        .collect();
    for (enabled, partitioned) in [(true, false), (false, false), (true, true), (false, true)] {
        let path = dir.path().join(format!("index{enabled}{partitioned}.sst"));
        let mut o = opts();
        o.compression = CompressionType::Snappy;
        o.index_shortening = IndexShorteningMode::NoShortening;
        o.enable_index_compression = enabled;
        o.partitioned_index = partitioned;
        o.metadata_block_size = 1024;
        build(&path, o, &d);
        let t = open(&path);
        check(&t, &d);
        rocksdb_verifies(&path);
        let file = default_fs().new_random_access_file(&path).unwrap();
        // The footer's index block (the top level when partitioned): its trailer's type.
        let h = t.footer().index_handle;
        let mut trailer = [0u8; BLOCK_TRAILER_SIZE];
        file.read_at(h.offset + h.size, &mut trailer).unwrap();
        let want = if enabled { CompressionType::Snappy as u8 } else { 0 };
        assert_eq!(trailer[0], want, "enabled {enabled}, partitioned {partitioned}");
    }
}

#[test]
fn verify_compression_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(2000);
    for c in [CompressionType::Snappy, CompressionType::Zstd, CompressionType::Lz4, CompressionType::Zlib] {
        let mut files = Vec::new();
        for verify in [false, true] {
            let path = dir.path().join(format!("verify{}{verify}.sst", c as u8));
            let mut o = opts();
            o.compression = c;
            o.verify_compression = verify;
            build(&path, o, &d);
            check(&open(&path), &d);
            files.push(std::fs::read(&path).unwrap());
        }
        assert_eq!(files[0], files[1], "{c:?}");
    }
    // Checked blocks of a dictionary table too (the dictionary takes part in the check).
    let path = dir.path().join("verify-dict.sst");
    let mut o = opts();
    o.compression = CompressionType::Zstd;
    o.compression_opts.max_dict_bytes = 4096;
    o.verify_compression = true;
    build(&path, o, &d);
    check(&open(&path), &d);
}

#[test]
fn block_align_pads_data_blocks_to_the_alignment() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(3000);
    for block_size in [4096usize, 1024, 16384] {
        let path = dir.path().join(format!("align{block_size}.sst"));
        let mut o = opts();
        o.block_size = block_size;
        o.block_align = true;
        o.format_version = 5;
        let r = build(&path, o, &d);
        let t = open(&path);
        check(&t, &d);
        rocksdb_verifies(&path);
        assert_eq!(t.properties().index_value_is_delta_encoded, 0, "padded blocks: whole handles");
        let align = block_size.min(4096) as u64;
        let hs = data_handles(&path);
        assert!(hs.len() > 10);
        for h in &hs {
            assert_eq!(h.offset % align, 0, "block at {} (block_size {block_size})", h.offset);
            // A block with its trailer fits the block size (RocksDB's aligned flush policy),
            // unless a single entry is larger.
            assert!(h.size as usize + BLOCK_TRAILER_SIZE <= block_size, "{h:?}");
        }
        // The data ends on the alignment too (the last block is padded).
        assert_eq!(r.properties.data_size % align, 0);
    }
}

#[test]
fn super_block_alignment_keeps_blocks_inside_super_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(6000);
    for partitioned in [false, true] {
        let path = dir.path().join(format!("super{partitioned}.sst"));
        let mut o = opts();
        o.super_block_alignment_size = 32 << 10;
        // Padding up to 8 KiB allowed: every block (about 4 KiB) that would straddle moves.
        o.super_block_alignment_space_overhead_ratio = 4;
        o.partitioned_index = partitioned;
        o.metadata_block_size = 512;
        build(&path, o, &d);
        let t = open(&path);
        // Index entries after a padding store whole handles (the reader follows them).
        check(&t, &d);
        rocksdb_verifies(&path);
        if partitioned {
            continue;
        }
        let hs = data_handles(&path);
        let mask = !((32u64 << 10) - 1);
        let mut gaps = 0;
        for (i, h) in hs.iter().enumerate() {
            assert_eq!(h.offset & mask, (h.offset + h.size) & mask, "block {i} straddles: {h:?}");
            if i > 0 && hs[i - 1].offset + hs[i - 1].size + BLOCK_TRAILER_SIZE as u64 != h.offset {
                gaps += 1;
                assert_eq!(h.offset % (32 << 10), 0, "padding ends on a super block");
            }
        }
        assert!(gaps >= 2, "{gaps} paddings in {} blocks", hs.len());
    }
    // Padding over the allowed overhead is not written: a ratio of 64 allows 512 bytes.
    let path = dir.path().join("super-small.sst");
    let mut o = opts();
    o.super_block_alignment_size = 32 << 10;
    o.super_block_alignment_space_overhead_ratio = 64;
    build(&path, o, &d);
    check(&open(&path), &d);
    let hs = data_handles(&path);
    for w in hs.windows(2) {
        let gap = w[1].offset - (w[0].offset + w[0].size + BLOCK_TRAILER_SIZE as u64);
        assert!(gap < 512, "{w:?}");
    }
}

#[test]
fn sample_for_compression_records_estimated_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(3000);
    // Every block sampled: the estimates are the blocks' LZ4 and ZSTD sizes plus trailers.
    let path = dir.path().join("sample1.sst");
    let mut o = opts();
    o.sample_for_compression = 1;
    let r = build(&path, o, &d);
    let t = open(&path);
    check(&t, &d);
    rocksdb_verifies(&path);
    let file = default_fs().new_random_access_file(&path).unwrap();
    let (mut slow, mut fast) = (0u64, 0u64);
    let hs = data_handles(&path);
    for h in &hs {
        let raw = read_block_with(file.as_ref(), *h, t.footer().block_checksum(), true, "t").unwrap();
        let size = |c: CompressionType| {
            let z = super::super::compression::compress(c, None, &raw).unwrap();
            z.len().min(raw.len()) as u64
        };
        slow += size(CompressionType::Zstd) + BLOCK_TRAILER_SIZE as u64;
        fast += size(CompressionType::Lz4) + BLOCK_TRAILER_SIZE as u64;
    }
    let p = &r.properties;
    assert!(
        p.slow_compression_estimated_data_size.abs_diff(slow) <= 1,
        "{} vs {slow}",
        p.slow_compression_estimated_data_size
    );
    assert!(
        p.fast_compression_estimated_data_size.abs_diff(fast) <= 1,
        "{} vs {fast}",
        p.fast_compression_estimated_data_size
    );
    assert!(slow < p.data_size && fast < p.data_size, "the values compress");
    // The properties are in the file, as RocksDB names them.
    assert_eq!(t.properties().slow_compression_estimated_data_size, p.slow_compression_estimated_data_size);

    // Sampling on, no block drawn: the data's own size (RocksDB's worst case).
    let path = dir.path().join("sample-rare.sst");
    let mut o = opts();
    o.sample_for_compression = u64::MAX;
    let r = build(&path, o, &d);
    assert_eq!(r.properties.slow_compression_estimated_data_size, r.properties.data_size);
    assert_eq!(r.properties.fast_compression_estimated_data_size, r.properties.data_size);

    // Off: not recorded.
    let path = dir.path().join("sample0.sst");
    let r = build(&path, opts(), &d);
    assert_eq!(r.properties.slow_compression_estimated_data_size, 0);
    assert_eq!(r.properties.fast_compression_estimated_data_size, 0);
}

/// `detect_filter_construct_corruption`: a table whose filter came out wrong fails to build
/// with RocksDB's Corruption; without the option the same filter is written. Whole and
/// partitioned filters alike.
#[test]
fn detect_filter_construct_corruption_fails_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(2000);
    for partitioned in [false, true] {
        let mut o = opts();
        o.filter_bits_per_key = Some(10.0);
        o.partitioned_index = partitioned;
        o.partition_filters = partitioned;
        o.detect_filter_construct_corruption = true;
        let path = dir.path().join(format!("ok-{partitioned}.sst"));
        let t = build(&path, o.clone(), &d);
        assert!(t.properties.filter_size > 0);
        check(&open(&path), &d);

        crate::table::filter::tamper::next_filter();
        let mut b = TableBuilder::new(
            o.clone(),
            default_fs().new_writable_file(&dir.path().join("bad.sst")).unwrap(),
        );
        for (k, v) in &d {
            b.add(k, v).unwrap();
        }
        let e = b.finish().unwrap_err();
        assert_eq!(e.to_string(), "Corruption: Corrupted filter content", "partitioned {partitioned}");

        o.detect_filter_construct_corruption = false;
        crate::table::filter::tamper::next_filter();
        build(&dir.path().join(format!("unchecked-{partitioned}.sst")), o, &d);
    }
}

/// `prepopulate_block_cache`: every data block the builder writes is in the cache, under
/// the key its reader looks it up by, uncompressed; a reader with that cache reads no
/// data block from the file.
#[test]
fn warm_cache_puts_each_data_block_in_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(3000);
    let cache = Arc::new(crate::cache::BlockCache::new(64 << 20));
    let key = crate::cache::OffsetableCacheKey::unique();
    let mut o = opts();
    o.compression = crate::table::CompressionType::Snappy;
    o.warm_cache = Some(WarmCache {
        cache: cache.clone(),
        key,
        statistics: None,
        read_amp_bytes_per_bit: 0,
        block_protection_bytes_per_key: 0,
        priority: crate::cache::Priority::Low,
    });
    let path = dir.path().join("warm.sst");
    let r = build(&path, o, &d);
    let handles = data_handles(&path);
    assert_eq!(handles.len() as u64, r.properties.num_data_blocks);
    assert!(handles.len() > 10);
    let checksum = open(&path).footer().block_checksum();
    let file = default_fs().new_random_access_file(&path).unwrap();
    for h in &handles {
        let b = cache.get(&key.with_offset(h.offset)).expect("each data block is cached");
        let uncompressed = read_block_with(file.as_ref(), *h, checksum, true, "t").unwrap();
        assert_eq!(b.data(), &uncompressed[..], "block at {}", h.offset);
    }
    let fs = default_fs();
    let t = Table::open(
        fs.new_random_access_file(&path).unwrap(),
        fs.file_size(&path).unwrap(),
        TableReaderOptions {
            timestamps_persisted: true,
            icmp: bytewise_internal_comparator(),
            block_cache: Some(cache.clone()),
            verify_checksums: true,
            file_name: path.display().to_string(),
            cache_key: key,
            statistics: None,
            block_protection_bytes_per_key: 0,
        },
    )
    .unwrap();
    check(&t, &d);
    assert_eq!(t.data_blocks_read(), 0, "every data block came from the cache");
}

/// The footer word of the table's (flat) index block.
fn index_footer(path: &Path) -> u32 {
    let t = open(path);
    let file = default_fs().new_random_access_file(path).unwrap();
    let index =
        read_block_with(file.as_ref(), t.footer().index_handle, t.footer().block_checksum(), true, "t")
            .unwrap();
    crate::coding::decode_fixed32(&index[index.len() - 4..])
}

/// `uniform_cv_threshold`: an index block over evenly spread keys gets RocksDB 11's
/// uniform-keys flag (bit 29), one over skewed keys or with the option off does not; the
/// flagged table reads back whole (RocksDB 11.8.1's tools read it in the `shale` crate's
/// `interop_table_tbl`).
#[test]
fn uniform_cv_threshold_flags_evenly_spread_index_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let even: Vec<(Vec<u8>, Vec<u8>)> = (0..3000u64)
        .map(|i| (make_internal_key(&(i * 1000).to_be_bytes(), 7, ValueType::Value), vec![b'x'; 100]))
        .collect();
    let skewed: Vec<(Vec<u8>, Vec<u8>)> = (0..3000u64)
        .map(|i| (make_internal_key(&(i * i * i).to_be_bytes(), 7, ValueType::Value), vec![b'x'; 100]))
        .collect();
    for (name, d, threshold, flagged) in
        [("even", &even, 0.2, true), ("skewed", &skewed, 0.2, false), ("off", &even, -1.0, false)]
    {
        let mut o = opts();
        o.uniform_cv_threshold = threshold;
        let path = dir.path().join(format!("{name}.sst"));
        build(&path, o, d);
        assert_eq!(index_footer(&path) & (1 << 29) != 0, flagged, "{name}");
        check(&open(&path), d);
    }
}
