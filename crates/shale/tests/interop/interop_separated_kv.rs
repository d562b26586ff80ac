//! RocksDB 11's `separate_key_value_in_data_block` (data blocks with their keys first, then
//! their values): the tables 11.8.1's db_bench writes with it, uncompressed and with snappy,
//! open in Shale, answer every point lookup with `ldb scan`'s value, and scan forward and
//! backward to `ldb scan`'s pairs. Each table is checked to carry the layout (its property
//! `rocksdb.separate.key.value.in.data.block` is 1), so the test reads what it claims to.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};
use tools::*;

/// Whether the table's properties block says its data blocks store keys and values apart.
/// The properties block is stored uncompressed and prefix-compressed: the name's tail after
/// `rocksdb.` (shared with the key before) is stored whole, and the value (a varint) follows.
fn table_is_separated(sst: &Path) -> bool {
    let bytes = std::fs::read(sst).unwrap();
    let mut name = b"separate.key.value.in.data.block".to_vec();
    name.push(1);
    bytes.windows(name.len()).any(|w| w == name.as_slice())
}

#[test]
fn rocksdb_11_separated_kv_tables_read_in_shale() {
    let test = "rocksdb_11_separated_kv_tables_read_in_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    for compression in ["none", "snappy"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let c = format!("--compression_type={compression}");
        db_bench_run(
            &dir,
            "fillrandom",
            20000,
            &["--separate_key_value_in_data_block=1", "--write_buffer_size=262144", &c],
        );
        let ssts = sst_files(&dir);
        assert!(!ssts.is_empty(), "{compression}: db_bench wrote no table");
        for sst in &ssts {
            assert!(table_is_separated(sst), "{compression}: {} lacks the layout", sst.display());
        }
        let want = ldb_scan(&dir, None);
        assert!(want.len() > 10000, "{compression}: ldb saw {} pairs", want.len());
        let mut o = Options::default();
        o.create_if_missing(false);
        let db = DB::open(&o, &dir).unwrap_or_else(|e| panic!("{compression}: Shale cannot open: {e}"));
        for (k, v) in &want {
            let got = db.get(k).unwrap();
            assert_eq!(got.as_deref(), Some(v.as_slice()), "{compression}: get {}", encode_hex(k));
        }
        assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{compression}: forward scan"));
        let mut back = shale_scan_reverse(&db, "default");
        back.reverse();
        assert_same_pairs(&back, &want, &format!("{compression}: backward scan"));
    }
}
