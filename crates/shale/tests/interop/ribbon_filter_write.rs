//! Shale writes RocksDB's Ribbon filters (`set_ribbon_filter(10.0)`, bloom_before_level 0):
//! the flushed table gets a Bloom filter ("level -1"), the table compacted below level 0 a
//! Ribbon filter about 30% smaller; RocksDB 11.8.1's `sst_dump --command=check` and `ldb`
//! read the database (its OPTIONS file included), and Shale's absent-key lookups inside the
//! table's key range read (almost) no data block. Data-block reads are counted by the
//! `rocksdb.shale.data-blocks-read` property with the block cache disabled; compactions
//! run only when asked, so the files listed are stable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{BlockBasedOptions, Options, DB};
use tools::*;

const KEYS: u64 = 6000;

fn key(i: u64) -> Vec<u8> {
    format!("key{:08}", i * 2).into_bytes()
}

fn absent_key(i: u64) -> Vec<u8> {
    format!("key{:08}", i * 2 + 1).into_bytes()
}

fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_disable_auto_compactions(true);
    let mut t = BlockBasedOptions::default();
    t.set_ribbon_filter(10.0);
    t.disable_cache();
    opts.set_block_based_table_factory(&t);
    opts
}

/// (filter policy name, filter block size) of one table, as 11.8.1's sst_dump shows them.
fn filter_of(table: &Path) -> (String, usize) {
    let out = run_tool("sst_dump", &args(&[&format!("--file={}", table.display()), "--show_properties"]));
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in sst_dump output:\n{out}"))
    };
    (field("filter policy name:"), field("filter block size:").parse().unwrap())
}

#[test]
fn shale_ribbon_filters_are_read_by_rocksdb_11_and_spare_data_block_reads() {
    let test = "shale_ribbon_filters_are_read_by_rocksdb_11_and_spare_data_block_reads";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let bloom_bytes = (KEYS * 10 / 8) as usize;
    {
        let db = DB::open(&options(), &dir).unwrap();
        // Two flushes over one key range, so the compaction rewrites them (no trivial move).
        for half in 0..2 {
            for i in (half..KEYS).step_by(2) {
                db.put(key(i), format!("value{i}")).unwrap();
            }
            db.flush().unwrap();
        }
        let flushed = sst_files(&dir);
        assert_eq!(flushed.len(), 2);
        for table in &flushed {
            let (policy, size) = filter_of(table);
            assert_eq!(policy, "ribbonfilter");
            assert!(size >= bloom_bytes / 2, "a flushed table's filter is Bloom: {size} bytes");
        }

        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let compacted = sst_files(&dir);
        assert_eq!(compacted.len(), 1);
        assert!(!flushed.contains(&compacted[0]), "the tables were compacted below level 0");
        let (policy, size) = filter_of(&compacted[0]);
        assert_eq!(policy, "ribbonfilter");
        assert!(size < bloom_bytes * 8 / 10, "a Ribbon filter is smaller than Bloom: {size} bytes");
    }
    let text = latest_options_text(&dir);
    assert!(text.contains("filter_policy={id=ribbonfilter:10:0;bloom_before_level=0;}"), "{text}");

    // RocksDB 11.8.1 checks every table (filters included) and reads the database.
    run_tool("sst_dump", &args(&[&format!("--file={}", dir.display()), "--command=check"]));
    let pairs = ldb_scan(&dir, None);
    assert_eq!(pairs.len(), KEYS as usize);
    assert_eq!(pairs[7], (key(7), b"value7".to_vec()));
    assert_eq!(ldb_get(&dir, None, &key(7)), Some(b"value7".to_vec()));
    assert_eq!(ldb_get(&dir, None, &absent_key(7)), None);

    // Shale reopens with the policy read back; absent keys are answered by the filter.
    let db = DB::open(&options(), &dir).unwrap();
    let reads = || db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property");
    let before = reads();
    let n = 1000;
    for i in 0..n {
        assert_eq!(db.get(absent_key(i * 5)).unwrap(), None);
    }
    let absent_reads = reads() - before;
    let before = reads();
    for i in 0..100 {
        assert_eq!(db.get(key(i * 7)).unwrap(), Some(format!("value{}", i * 7).into_bytes()));
    }
    let present_reads = reads() - before;
    assert!(present_reads >= 100, "present-key lookups read data blocks ({present_reads})");
    // About 1% false positives.
    assert!(absent_reads * 20 <= n, "{n} absent-key lookups read {absent_reads} data blocks");
}
