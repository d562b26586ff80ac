//! `index_type=kBinarySearchWithFirstKey` (reached through options strings and OPTIONS
//! files: rust-rocksdb's `BlockBasedIndexType` has no such value): Shale's tables carry each
//! data block's first internal key after its handle in the index (RocksDB 11.8.1's
//! `IndexValue::EncodeTo` with `have_first_key`, full or delta-encoded handles), read back by
//! Shale (gets, scans both ways, seeks) and by RocksDB 11.8.1's `sst_dump --command=verify`
//! and `ldb scan`. The index grows by about one first key per data block, which shows the
//! keys are there, and the OPTIONS file names the index type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools::*;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{IteratorMode, Options, DB};

fn write(dir: &Path, table: &str, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> DB {
    let mut o = Options::default()
        .get_options_from_string(format!("compression=kNoCompression;block_based_table_factory={{{table}}}"))
        .unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, dir).unwrap();
    for (k, v) in model {
        db.put(k, v).unwrap();
    }
    db.flush().unwrap();
    db
}

fn table_bytes(dir: &Path) -> u64 {
    sst_files(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum()
}

#[test]
fn tables_with_first_keys_read_in_shale_and_rocksdb_11() {
    let model: BTreeMap<Vec<u8>, Vec<u8>> = (0..3000u32)
        .map(|i| {
            (
                format!("key-{i:06}").into_bytes(),
                format!("value-{i}-{}", "x".repeat((i % 40) as usize)).into_bytes(),
            )
        })
        .collect();
    let want: Pairs = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let tools = use_rocksdb_11("tables_with_first_keys_read_in_shale_and_rocksdb_11");
    // Delta-encoded index values (format_version 4+), whole handles (format_version 3), and
    // restart points every 4 index entries.
    for extra in ["", "format_version=3;", "index_block_restart_interval=4;"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let plain_dir = tmp.path().join("plain");
        let table = format!("block_size=512;{extra}");
        let plain = write(&plain_dir, &table, &model);
        drop(plain);
        let db = write(&dir, &format!("index_type=kBinarySearchWithFirstKey;{table}"), &model);
        for (k, v) in &model {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{extra} get {}", encode_hex(k));
        }
        assert_eq!(db.get(b"key-0015005").unwrap(), None);
        assert_eq!(db.get(b"a").unwrap(), None);
        assert_same_pairs(&shale_scan_default(&db), &want, extra);
        let mut rev = shale_scan_reverse(&db, "default");
        rev.reverse();
        assert_same_pairs(&rev, &want, extra);
        for probe in ["key-001234", "key-0012345", "key-002999", "a", "key-003"] {
            let got = db
                .iterator(IteratorMode::From(probe.as_bytes(), shale::Direction::Forward))
                .next()
                .map(|r| r.unwrap().0.to_vec());
            let expect = model.range(probe.as_bytes().to_vec()..).next().map(|(k, _)| k.clone());
            assert_eq!(got, expect, "{extra} seek {probe}");
        }
        drop(db);
        let text = latest_options_text(&dir);
        assert!(text.lines().any(|l| l.trim() == "index_type=kBinarySearchWithFirstKey"), "{text}");
        // About 6000 data blocks' worth of entries over 512 bytes: each index entry carries a
        // first key of 18 bytes plus its length.
        let (with, without) = (table_bytes(&dir), table_bytes(&plain_dir));
        let blocks = without / 512;
        assert!(with > without + blocks * 15, "{extra}: {with} vs {without} bytes ({blocks} blocks)");
        // Reopened (as from the OPTIONS file), the tables read the same.
        let (mut loaded, _) = Options::load_latest(
            &dir,
            shale::Env::new().unwrap(),
            false,
            shale::Cache::new_lru_cache(1 << 20),
        )
        .unwrap();
        loaded.create_if_missing(false);
        let db = DB::open(&loaded, &dir).unwrap();
        assert_same_pairs(&shale_scan_default(&db), &want, extra);
        drop(db);
        if !tools {
            continue;
        }
        for sst in sst_files(&dir) {
            run_tool("sst_dump", &[format!("--file={}", sst.display()), "--command=verify".into()]);
            let props =
                run_tool("sst_dump", &[format!("--file={}", sst.display()), "--show_properties".into()]);
            assert!(props.contains("rocksdb.block.based.table.index.type: 0x03000000"), "{props}");
        }
        assert_same_pairs(&ldb_scan(&dir, None), &want, &format!("ldb scan {extra}"));
    }
}
