//! Tables with a partitioned (two-level) index and partitioned Bloom filters, written by
//! RocksDB 11.8.1's and 7.8.3's `db_bench` (`--partition_index=1
//! --partition_index_and_filters=1 --bloom_bits=10 --metadata_block_size=128`, so every
//! table has several index and filter partitions), are read by Shale in place: every
//! pair equals `ldb scan`, forward and reverse; seeks and seek_for_prev (then a few steps
//! each way, across partitions) land where the scan says; gets return the scanned values;
//! lookups of absent keys read almost no data block (the filter partitions answer);
//! each table's own iterator, key anchors and offsets agree with its properties. Checked
//! with the index and filter held by the tables, and with them in the block cache
//! (`cache_index_and_filter_blocks`) unpinned and pinned. A table whose last index partition is damaged is
//! refused with Corruption naming the file and an offset, not a panic.
//! Shale's compactions are off, so every table read is one RocksDB wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::table::Table;
use shale::{BlockBasedOptions, BlockBasedTablePinningTier, Cache, ErrorKind, Options, DB};
use tools::*;

const NUM: u64 = 8000;

fn db_bench_key(n: u64) -> Vec<u8> {
    let mut k = n.to_be_bytes().to_vec();
    k.resize(16, b'0');
    k
}

fn data_blocks_read(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

fn make_db(dir: &Path) {
    let flags = [
        "--write_buffer_size=65536",
        "--target_file_size_base=131072",
        "--compression_type=none",
        "--partition_index=1",
        "--partition_index_and_filters=1",
        "--bloom_bits=10",
        "--metadata_block_size=128",
    ];
    // Flushed by RocksDB, so every table is RocksDB's (with its partitions).
    db_bench_run(dir, "fillrandom,overwrite,flush", NUM as usize, &flags);
    assert!(sst_files(dir).len() >= 2);
}

fn open_table(f: &Path) -> Result<Arc<Table>, shale::Error> {
    let (file, size, opts) = table_file(f);
    Table::open(file, size, opts)
}

/// Each table by itself: partitioned, scanned whole both ways, anchors and offsets.
fn check_tables(dir: &Path, ctx: &str) {
    let mut multi = 0;
    let files = sst_files(dir);
    for f in &files {
        let t = open_table(f).unwrap_or_else(|e| panic!("{ctx}: {}: {e}", f.display()));
        let p = t.properties().clone();
        let index_type = p.user_collected.get("rocksdb.block.based.table.index.type").cloned();
        assert_eq!(index_type, Some(vec![2, 0, 0, 0]), "{ctx}: {} is not partitioned", f.display());
        multi += usize::from(p.index_partitions >= 2);
        let mut it = t.iter(false);
        let mut keys = Vec::new();
        it.seek_to_first();
        while it.valid() {
            keys.push(it.key().to_vec());
            it.next();
        }
        it.status().unwrap();
        assert_eq!(keys.len() as u64, p.num_entries, "{ctx}: {}", f.display());
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() {
            back.push(it.key().to_vec());
            it.prev();
        }
        it.status().unwrap();
        back.reverse();
        assert_eq!(back, keys, "{ctx}: reverse scan of {}", f.display());

        // Offsets: from 0, never decreasing, the data size past the end.
        let mut last = 0;
        for (i, k) in keys.iter().enumerate() {
            let o = t.approximate_offset_of(k);
            assert!(o >= last && o < p.data_size, "{ctx}: offset {o} of key {i} (previous {last})");
            last = o;
        }
        assert_eq!(t.approximate_offset_of(&keys[0]), 0);
        assert!(last > 0 || p.num_data_blocks == 1, "{ctx}: every key at offset 0 in {}", f.display());
        let past = shale::key::make_internal_key(&[0xff; 20], 1, shale::key::ValueType::Value);
        assert_eq!(t.approximate_offset_of(&past), p.data_size);

        // Key anchors: as many as RocksDB's rule gives, sorted, covering the data blocks.
        let anchors = t.key_anchors().unwrap();
        let n = p.num_data_blocks;
        let per = (n / 128).max(1);
        assert_eq!(anchors.len() as u64, n / per + u64::from(!n.is_multiple_of(per)), "{ctx}: anchors");
        assert!(anchors.windows(2).all(|w| w[0].0 <= w[1].0), "{ctx}: anchors out of order");
        let covered: u64 = anchors.iter().map(|a| a.1).sum();
        assert_eq!(covered + 5, p.data_size, "{ctx}: anchor ranges cover the data blocks");
    }
    assert!(
        multi * 2 >= files.len(),
        "{ctx}: only {multi} of {} tables have several index partitions",
        files.len()
    );
}

/// How index and filter blocks are kept.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Meta {
    /// Held by the tables, no block cache.
    Held,
    /// In the block cache, nothing pinned: every use looks the blocks up.
    Cached,
    /// In the block cache, the top levels (by default) and the partitions pinned.
    Pinned,
}

fn open_db(dir: &Path, meta: Meta) -> DB {
    let mut opts = Options::default();
    let mut t = BlockBasedOptions::default();
    if meta == Meta::Held {
        t.disable_cache();
    } else {
        t.set_block_cache(&Cache::new_lru_cache(8 << 20));
        t.set_cache_index_and_filter_blocks(true);
        if meta == Meta::Cached {
            t.set_pin_top_level_index_and_filter(false);
        } else {
            t.set_partition_pinning_tier(BlockBasedTablePinningTier::All);
        }
    }
    opts.set_block_based_table_factory(&t);
    // No compaction: the tables must stay RocksDB's.
    opts.set_disable_auto_compactions(true);
    let tables_before = sst_files(dir);
    let db = DB::open(&opts, dir).unwrap();
    assert_eq!(sst_files(dir), tables_before, "the WAL was not empty: Shale wrote a table");
    db
}

fn check_db(dir: &Path, ctx: &str) {
    let want = ldb_scan(dir, None);
    assert!(want.len() > 1000, "{ctx}: {} keys", want.len());
    for meta in [Meta::Held, Meta::Cached, Meta::Pinned] {
        let ctx = &format!("{ctx} (index and filters {meta:?})");
        let db = open_db(dir, meta);
        // Absent keys inside the tables' ranges: the filter partitions spare the reads
        // (first, while no data block is cached).
        let absent: Vec<Vec<u8>> = (0..NUM)
            .map(db_bench_key)
            .filter(|k| want.binary_search_by(|(w, _)| w.as_slice().cmp(k)).is_err())
            .take(500)
            .collect();
        assert!(absent.len() >= 100, "{ctx}: too few absent keys: {}", absent.len());
        let before = data_blocks_read(&db);
        for k in &absent {
            assert_eq!(db.get(k).unwrap(), None);
        }
        let absent_reads = data_blocks_read(&db) - before;
        // Each lookup consults the filter of every table whose key range holds the key: one
        // per level, and every overlapping level-0 table. How many tables db_bench leaves in
        // level 0 depends on how far its compactions got (fewer on a loaded machine), so
        // the bound counts filter probes, not lookups: at 10 bits per key a probe is a false
        // positive about 1% of the time, and 10% is the bound (before: one tenth of the
        // lookups, which 9 overlapping level-0 tables on a loaded machine exceeded).
        let files = db.live_files().unwrap();
        let probes: u64 = absent
            .iter()
            .map(|k| {
                files
                    .iter()
                    .filter(|f| {
                        f.start_key.as_deref().is_some_and(|s| s <= k.as_slice())
                            && f.end_key.as_deref().is_some_and(|e| k.as_slice() <= e)
                    })
                    .count() as u64
            })
            .sum();
        eprintln!(
            "{ctx}: {} absent-key lookups ({probes} filter probes) read {absent_reads} data blocks",
            absent.len()
        );
        assert!(
            probes >= absent.len() as u64 / 2,
            "{ctx}: only {probes} filter probes for {} lookups",
            absent.len()
        );
        assert!(
            absent_reads * 10 <= probes,
            "{ctx}: {} absent-key lookups ({probes} filter probes) read {absent_reads} data blocks despite the filters",
            absent.len()
        );
        assert_same_pairs(&shale_scan_default(&db), &want, ctx);
        let mut rev = want.clone();
        rev.reverse();
        assert_same_pairs(&shale_scan_reverse(&db, "default"), &rev, ctx);
        for (k, v) in want.iter().step_by(7) {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{ctx}: get");
        }

        // Seeks to every 11th db_bench key and to keys between, then steps both ways.
        let mut it = db.raw_iterator();
        for n in (0..NUM + 20).step_by(11) {
            for target in [db_bench_key(n), db_bench_key(n)[..9].to_vec()] {
                let i = want.partition_point(|(k, _)| k.as_slice() < target.as_slice());
                it.seek(&target);
                for (d, (k, v)) in want[i..].iter().take(3).enumerate() {
                    assert_eq!(it.key(), Some(k.as_slice()), "{ctx}: seek {target:?} + {d}");
                    assert_eq!(it.value(), Some(v.as_slice()));
                    it.next();
                }
                it.seek(&target);
                // (Past the last key the iterator is invalid: no stepping back.)
                let back = if i < want.len() { i.saturating_sub(3) } else { i };
                for j in (back..i).rev() {
                    it.prev();
                    assert_eq!(it.key(), Some(want[j].0.as_slice()), "{ctx}: seek {target:?} - {}", i - j);
                }
                let i = want.partition_point(|(k, _)| k.as_slice() <= target.as_slice());
                it.seek_for_prev(&target);
                if i == 0 {
                    assert!(!it.valid(), "{ctx}: seek_for_prev {target:?}");
                } else {
                    assert_eq!(it.key(), Some(want[i - 1].0.as_slice()), "{ctx}: seek_for_prev {target:?}");
                }
                it.status().unwrap();
            }
        }
        drop(it);

        if meta == Meta::Held {
            let before = data_blocks_read(&db);
            for (k, _) in want.iter().take(100) {
                assert!(db.get(k).unwrap().is_some());
            }
            let present = data_blocks_read(&db) - before;
            assert!(present >= 100, "{ctx}: present-key lookups read {present} data blocks");
        }
    }
}

/// The last index partition lies just before the top-level index: damage a byte there.
fn check_corrupt_partition(dir: &Path, ctx: &str) {
    let f = &sst_files(dir)[0];
    let t = open_table(f).unwrap();
    let top = t.footer().index_handle;
    drop(t);
    let copy = dir.join("damaged.sst.bad");
    let mut bytes = std::fs::read(f).unwrap();
    bytes[top.offset as usize - 8] ^= 0x55;
    std::fs::write(&copy, &bytes).unwrap();
    let e = match open_table(&copy) {
        Ok(_) => panic!("{ctx}: a damaged index partition was accepted"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{ctx}: {e}");
    let msg = e.to_string();
    assert!(msg.contains("damaged.sst.bad") && msg.contains("offset"), "{ctx}: {msg}");
    std::fs::remove_file(&copy).unwrap();
}

#[test]
fn rocksdb_11_partitioned_index_and_filters() {
    let test = "rocksdb_11_partitioned_index_and_filters";
    if !use_rocksdb_11(test) || !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    make_db(&dir);
    check_tables(&dir, "11.8.1");
    check_db(&dir, "11.8.1");
    check_corrupt_partition(&dir, "11.8.1");
}

#[test]
fn rocksdb_7_partitioned_index_and_filters() {
    let test = "rocksdb_7_partitioned_index_and_filters";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    make_db(&dir);
    check_tables(&dir, "7.8.3");
    check_db(&dir, "7.8.3");
    check_corrupt_partition(&dir, "7.8.3");
}
