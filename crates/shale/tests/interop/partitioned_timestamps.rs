//! Partitioned index and partitioned Bloom filters with user-defined timestamps
//! (`U64TsComparator`, `metadata_block_size` 128 so every table has many partitions):
//! filter partitions are keyed by their last user key with the minimum timestamp, and the
//! filter holds keys without timestamps. Shale writes versions and deletions at increasing
//! timestamps into flushed and compacted tables; every key's `get` at several read
//! timestamps returns what the model says (so no filter partition wrongly excludes a key),
//! absent keys read almost no data block, and RocksDB 11.8.1's `sst_dump --command=check`
//! checks the tables and `ldb scan --read_timestamp` lists what the model says.
//! Compactions run only when asked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::sync::Arc;

use shale::{BlockBasedIndexType, BlockBasedOptions, Options, ReadOptions, U64TsComparator, DB};
use tools::*;

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let mut t = BlockBasedOptions::default();
    t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    t.set_partition_filters(true);
    t.set_metadata_block_size(128);
    t.set_bloom_filter(10.0, false);
    t.disable_cache();
    o.set_block_based_table_factory(&t);
    o
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(t.to_le_bytes());
    ro
}

fn key(i: u64) -> Vec<u8> {
    format!("key{:05}", i * 2).into_bytes()
}

#[test]
fn partitioned_filters_with_timestamps() {
    let test = "partitioned_filters_with_timestamps";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let n = 1500u64;
    // key -> ts -> value (None: deleted)
    let mut model: BTreeMap<Vec<u8>, BTreeMap<u64, Option<Vec<u8>>>> = BTreeMap::new();
    let db = DB::open(&options(), &dir).unwrap();
    let mut now = 0u64;
    for round in 0..4u64 {
        for i in 0..n {
            now += 1;
            let k = key((i * 7 + round * 13) % n);
            if (i + round) % 5 == 0 {
                db.delete_with_ts(&k, now.to_le_bytes()).unwrap();
                model.entry(k).or_default().insert(now, None);
            } else {
                let v = format!("value-{round}-{i}").into_bytes();
                db.put_with_ts(&k, now.to_le_bytes(), &v).unwrap();
                model.entry(k).or_default().insert(now, Some(v));
            }
        }
        db.flush().unwrap();
        if round == 2 {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
    }
    for t in [n / 2, n + 7, 2 * n + 500, 3 * n, now] {
        for (k, versions) in &model {
            let want = versions.range(..=t).next_back().and_then(|(_, v)| v.clone());
            assert_eq!(
                db.get_opt(k, &read_at(t)).unwrap(),
                want,
                "get {:?} at {t}",
                String::from_utf8_lossy(k)
            );
        }
    }
    let reads = || db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property");
    let before = reads();
    let lookups = 1000u64;
    for i in 0..lookups {
        let absent = format!("key{:05}", (i % n) * 2 + 1).into_bytes();
        assert_eq!(db.get_opt(&absent, &read_at(now)).unwrap(), None);
    }
    let absent = reads() - before;
    assert!(absent * 20 <= lookups, "{lookups} absent-key lookups read {absent} data blocks");
    drop(db);
    // Listed once the database is closed (no background deletion can race the listing).
    for f in sst_files(&dir) {
        let (file, size, mut opts) = table_file(&f);
        opts.icmp = shale::key::InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise()));
        let t = shale::table::Table::open(file, size, opts).unwrap();
        assert!(t.properties().index_partitions >= 2, "{}", f.display());
    }

    run_tool("sst_dump", &args(&[&format!("--file={}", dir.display()), "--command=check"]));
    let a = args(&[&format!("--db={}", dir.display()), "scan", "--hex", &format!("--read_timestamp={now}")]);
    let listed = run_tool("ldb", &a).lines().filter(|l| l.starts_with("0x")).count();
    let live = model.values().filter(|vs| vs.values().next_back().is_some_and(|v| v.is_some())).count();
    assert_eq!(listed, live, "ldb scan at {now}");
}
