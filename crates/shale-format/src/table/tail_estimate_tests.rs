//! `TableBuilder::estimated_tail_size` (RocksDB's `EstimatedTailSize`, which compaction adds
//! with `target_file_size_is_upper_bound`): at least the tail `finish` writes after the last
//! data block, and not far above it (helper cfopt, issue 33).

use super::*;
use crate::fs::default_fs;
use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};

fn options() -> TableBuilderOptions {
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    o.compression = CompressionType::None;
    o
}

/// (estimated tail before `finish`, tail `finish` wrote).
fn tails(o: TableBuilderOptions, n: u64, range_deletions: bool) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut b = TableBuilder::new(o, default_fs().new_writable_file(&path).unwrap());
    if range_deletions {
        for i in 0..50u64 {
            let start =
                make_internal_key(format!("r{i:04}").as_bytes(), 1_000_000 + i, ValueType::RangeDeletion);
            b.add(&start, format!("r{i:04}z").as_bytes()).unwrap();
        }
    }
    for i in 0..n {
        b.add(&make_internal_key(format!("key{i:010}").as_bytes(), i + 1, ValueType::Value), b"v").unwrap();
    }
    let estimate = b.estimated_tail_size();
    let data_end = b.file_size()
        + if b.data_block.is_empty() {
            0
        } else {
            (b.data_block.current_size_estimate() + BLOCK_TRAILER_SIZE) as u64
        };
    let built = b.finish().unwrap();
    (estimate, built.file_size - data_end)
}

#[test]
fn the_estimate_covers_the_tail() {
    let mut bloom = options();
    bloom.filter_bits_per_key = Some(20.0);
    let mut partitioned = options();
    partitioned.filter_bits_per_key = Some(10.0);
    partitioned.partitioned_index = true;
    partitioned.partition_filters = true;
    partitioned.metadata_block_size = 1024;
    let mut legacy = options();
    legacy.filter_bits_per_key = Some(10.0);
    legacy.format_version = 4;
    let cases =
        [("no filter", options()), ("bloom", bloom), ("partitioned", partitioned), ("legacy", legacy)];
    for (name, o) in cases {
        for (n, dels) in [(10u64, false), (3000, false), (3000, true)] {
            let (estimate, tail) = tails(o.clone(), n, dels);
            assert!(tail <= estimate, "{name} n={n} deletions={dels}: tail {tail} > estimate {estimate}");
            assert!(estimate <= tail + 8 * 1024, "{name} n={n}: estimate {estimate} far above tail {tail}");
        }
    }
}
